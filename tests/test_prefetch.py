"""Reading ahead (numbacast.engine.prefetch) and the runs the cast kernels
take it by: prefetches of any part of an array (past its end too) change
nothing, and a cast cut into runs writes every element once and right, at
lengths around the run boundaries and both sides of the parallel threshold,
against ml_dtypes (an independent rounding: non-saturating, nearest even)."""

import ml_dtypes
import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

import numbacast
from numbacast.engine.kernels import PARALLEL_MIN
from numbacast.engine.prefetch import RUN_BYTES, RUN_ELEMENTS, read_ahead


@njit
def _read_ahead_sum(values, first, end):
    read_ahead(values, first, end)
    return values.sum()


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64])
def test_read_ahead_anywhere_leaves_the_values(dtype):
    values = np.arange(5000).astype(dtype)
    before = values.copy()
    bounds = [(0, 10), (0, values.size), (values.size - 1, values.size), (values.size, 10 * values.size)]
    for first, end in bounds:  # lines past the end are left out; a prefetch never faults anyway
        assert _read_ahead_sum(values, first, end) == before.sum()
        assert _read_ahead_sum(values.reshape(50, 100), first, end) == before.sum()  # flat indices
    assert np.array_equal(values, before)


def test_read_ahead_refuses_other_arguments():
    with pytest.raises(TypingError, match="C-contiguous"):
        _read_ahead_sum(np.zeros((2, 4))[:, ::2], 0, 1)
    with pytest.raises(TypingError, match="integer bounds"):
        _read_ahead_sum(np.zeros(4), 0.5, 2)


def _lengths(itemsize):
    run = RUN_BYTES // itemsize if itemsize < 4 else RUN_ELEMENTS  # as the parallel kernel takes them
    small = [0, 1, run - 1, run, run + 1, 3 * run + 7]
    large = [PARALLEL_MIN, PARALLEL_MIN + 1, PARALLEL_MIN + run - 1, 5 * PARALLEL_MIN + 3 * run + 5]
    return small + large


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cast_by_runs_writes_every_element_once(dtype):
    rng = np.random.default_rng(7)
    for n in _lengths(np.dtype(dtype).itemsize):
        x = (rng.standard_normal(n) * 2.0 ** rng.integers(-12, 10, n)).astype(dtype)
        out = np.full(n + 16, 0xA5, np.uint8)  # a guard beyond the end
        numbacast.cast(x, "float8e4m3fn", saturate=False, out=out[:n].view(ml_dtypes.float8_e4m3fn))
        expected = x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        assert np.array_equal(out[:n], expected), n
        assert (out[n:] == 0xA5).all(), n


def test_decode_by_runs_of_byte_sources():
    codes = np.arange(PARALLEL_MIN + 3 * RUN_BYTES + 11, dtype=np.uint32).astype(np.uint8)
    codes[codes == 0x7F] = 0  # NaN: compared apart below
    codes[codes == 0xFF] = 0
    x = codes.view(ml_dtypes.float8_e4m3fn)
    assert np.array_equal(numbacast.cast(x, "float"), x.astype(np.float32))
