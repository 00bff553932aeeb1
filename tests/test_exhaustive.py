"""Every code of every source of at most 16 bits, into every target with every
option, against the exact reference.  The sweeps cast pieces below
PARALLEL_MIN, so that each pair compiles its serial loop only; the parallel
loop, the same converter in a prange loop, sweeps the 16-bit float sources into
a few targets."""

import numpy as np
import pytest
from conftest import TYPE_NAMES, cast_in_serial_pieces, check_against_reference, variant_id, variants

import numbacast
from numbacast.engine.kernels import PARALLEL_MIN

SMALL_SOURCES = [t.name for t in numbacast.TYPES if t.storage.itemsize <= 2]


@pytest.mark.parametrize("source", SMALL_SOURCES)
@pytest.mark.parametrize("variant", variants(TYPE_NAMES), ids=variant_id)
def test_every_code(source, variant):
    target, options = variant
    storage = numbacast.resolve(source).storage
    codes = np.arange(1 << (8 * storage.itemsize), dtype=f"u{storage.itemsize}")
    out = cast_in_serial_pieces(codes.view(storage), target, **options)
    check_against_reference(source, codes, target, options, out)


@pytest.mark.parametrize("source", ["float16", "bfloat16"])
@pytest.mark.parametrize("variant", [("float8e4m3fn", dict(saturate=False)), ("int8", {})], ids=variant_id)
def test_every_code_in_the_parallel_loop(source, variant):
    target, options = variant
    codes = np.arange(1 << 16, dtype=np.uint16)
    assert codes.size >= PARALLEL_MIN
    out = numbacast.cast(codes.view(numbacast.resolve(source).storage), target, **options)
    check_against_reference(source, codes, target, options, out)
