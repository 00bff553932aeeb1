"""Acceptance of numbacast.cast in @njit code: for every ml_dtypes type T, every
numeric type S and every option, the round trip S -> T -> S in @njit code equals
the Python round trip bit for bit (NaN payloads as the Python call gives them).
FLOAT to FLOAT8E4M3FN runs a sample large enough for the parallel loop.

Each case compiles two casts into a new function (about two seconds), so by
default the matrix runs every T from FLOAT with the default options and with
each other value of every option (``saturate=False``, each ``round_mode``:
an option reaches the kernel the same way whatever the target), and every S
through FLOAT8E4M3FN; ``NUMBACAST_FULL_NJIT_MATRIX=1`` runs all of it (about
550 cases).
"""

import functools
import os

import numpy as np
import pytest
from conftest import options_for, variant_id, variants
from numba import njit

import numbacast
from numbacast.engine.kernels import PARALLEL_MIN
from numbacast.integrations.numba_types import ELEMENT_TYPES

FULL = os.environ.get("NUMBACAST_FULL_NJIT_MATRIX") == "1"
#: Every numeric type but FLOAT16, which Numba has no arrays of in CPU code.
SOURCES = [t.name for t in numbacast.TYPES if t is not numbacast.FLOAT16]
TARGET_VARIANTS = variants([t.name for t in ELEMENT_TYPES])
#: From FLOAT, besides each target's default options, one case of each other value of each option.
OTHER_OPTIONS = [
    ("float8e5m2", dict(saturate=False)),
    ("float8e8m0", dict(saturate=False, round_mode="down")),
    ("float8e8m0", dict(saturate=True, round_mode="nearest")),
]
CASES = [
    (source, variant)
    for source in SOURCES
    for variant in TARGET_VARIANTS
    if FULL
    or (source == "float" and (variant[1] == options_for(variant[0])[0] or variant in OTHER_OPTIONS))
    or variant == ("float8e4m3fn", dict(saturate=True))
]


@functools.cache
def njit_round_trip(target, saturate=True, round_mode="up"):
    @njit
    def round_trip(x):
        return numbacast.cast(numbacast.cast(x, target, saturate=saturate, round_mode=round_mode), x.dtype)

    return round_trip


@functools.cache
def sample(name, parallel=False):
    """Every code of a source of at most 16 bits; for the wider ones, the float32 special and
    boundary values, every bfloat16 value (so every float8 value) and random bits.  Unless
    ``parallel``, a sample below PARALLEL_MIN (every third code and the last ones; every fifth
    bfloat16 value), so that the calls from Python compile the serial loop only (@njit code
    compiles both loops whatever the size)."""
    t = numbacast.resolve(name)
    if t.storage.itemsize <= 2:
        codes = np.arange(1 << (8 * t.storage.itemsize), dtype=f"u{t.storage.itemsize}")
        codes = codes if parallel else np.concatenate([codes[::3], codes[-3:]])
        return codes.view(t.storage)
    with np.errstate(all="ignore"):
        x = _wide_sample(t, 1 if parallel else 5)
    assert parallel == (x.size >= PARALLEL_MIN)
    return x


def _wide_sample(t, stride):
    rng = np.random.default_rng(t.id)
    values = np.concatenate(
        [
            np.arange(0, 1 << 16, stride, dtype=np.uint32) << np.uint32(16),  # bfloat16 values as float32
            np.array([0x7FC00001, 0xFFA00000, 0x7F7FFFFF, 0x00000001, 0x33800000, 0x4F000000], np.uint32),
        ]
    ).view(np.float32)
    if t.is_float:
        wide = values.astype(t.storage)
        noise = rng.integers(0, 1 << 63, 20_000 // stride, dtype=np.uint64).view(np.float64).astype(t.storage)
        return np.concatenate([wide, noise, (wide * 1.0000001).astype(t.storage)])
    info = np.iinfo(t.storage)
    extremes = np.array([info.min, info.max, info.min + 1, info.max - 1, 0, 1], t.storage)
    noise = rng.integers(info.min, info.max, 20_000 // stride, dtype=t.storage, endpoint=True)
    return np.concatenate([extremes, noise, np.arange(-300, 300).astype(t.storage)])


@pytest.mark.parametrize("source, variant", CASES, ids=[f"{s}-{variant_id(v)}" for s, v in CASES])
def test_round_trip_in_njit_equals_python(source, variant):
    target, options = variant
    x = sample(source, parallel=(source, target) == ("float", "float8e4m3fn"))
    want = numbacast.cast(numbacast.cast(x, target, **options), x.dtype)
    got = njit_round_trip(target, **options)(x)
    assert got.dtype == want.dtype == x.dtype
    assert np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))
