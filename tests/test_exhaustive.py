"""Every code of every source of at most 16 bits, into every target with every
option, against the exact reference."""

import numpy as np
import pytest
from conftest import TYPE_NAMES, check_against_reference, variant_id, variants

import numbacast

SMALL_SOURCES = [t.name for t in numbacast.TYPES if t.storage.itemsize <= 2]


@pytest.mark.parametrize("source", SMALL_SOURCES)
@pytest.mark.parametrize("variant", variants(TYPE_NAMES), ids=variant_id)
def test_every_code(source, variant):
    target, options = variant
    storage = numbacast.resolve(source).storage
    codes = np.arange(1 << (8 * storage.itemsize), dtype=f"u{storage.itemsize}")
    out = numbacast.cast(codes.view(storage), target, **options)
    check_against_reference(source, codes, target, options, out)
