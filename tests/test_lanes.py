"""The fixed-width block helpers of the quantise task (numbacast.engine.lanes),
against NumPy: the largest magnitude of 32 or 16 values (NaN when one is NaN),
that of 32 blocks of 32 or 16 of 16 side by side, and a fill of 32 or 16
values, at every offset, in float32 and float64."""

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from numbacast.engine.lanes import fill, largest_magnitude, largest_magnitudes


@njit
def _largest(values, start):
    return largest_magnitude(values, start, 32)


@njit
def _largest16(values, start):
    return largest_magnitude(values, start, 16)


@njit
def _group(values, start, out, out_start):
    largest_magnitudes(values, start, 32, out, out_start)


@njit
def _group16(values, start, out, out_start):
    largest_magnitudes(values, start, 16, out, out_start)


@njit
def _fill(values, start, value):
    fill(values, start, 32, value)


@njit
def _fill16(values, start, value):
    fill(values, start, 16, value)


def _samples(dtype, rng):
    x = (rng.standard_normal(100) * np.exp2(rng.integers(-60, 60, 100))).astype(dtype)
    x[::7] = -x[::7]
    x[3], x[40], x[41] = -0.0, np.finfo(dtype).smallest_subnormal, -np.finfo(dtype).max
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_largest_magnitude_of_32_values_at_every_offset(dtype):
    x = _samples(dtype, np.random.default_rng(5))
    for start in range(x.size - 32 + 1):
        assert _largest(x, start) == np.abs(x[start : start + 32]).max(), start
        assert _largest16(x, start) == np.abs(x[start : start + 16]).max(), start


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_nan_or_an_infinity_is_the_largest(dtype):
    x = _samples(dtype, np.random.default_rng(6))
    y = x.copy()
    y[50] = -np.inf
    assert _largest(y, 40) == np.inf
    y[45] = -np.nan
    assert np.isnan(_largest(y, 40)) and np.isnan(_largest(y, 14))
    assert _largest(y, 46) == np.inf and not np.isnan(_largest(y, 0))
    assert np.isnan(_largest16(y, 30)) and _largest16(y, 46) == np.inf


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lanes", [32, 16])
def test_largest_magnitudes_of_blocks_side_by_side_in_order_and_nothing_else_written(dtype, lanes):
    rng = np.random.default_rng(lanes)
    x = (rng.standard_normal(1100) * np.exp2(rng.integers(-60, 60, 1100))).astype(dtype)
    x[::7] = -x[::7]
    x[lanes + 3], x[5 * lanes + 1], x[3 * lanes] = np.nan, -np.inf, -np.finfo(dtype).max
    group = _group if lanes == 32 else _group16
    for start in (0, 1, 3, 17, x.size - lanes * lanes):
        out = np.full(lanes + 5, 7.0, dtype)
        group(x, start, out, 2)
        expected = np.abs(x[start : start + lanes * lanes].reshape(lanes, lanes)).max(axis=1)
        assert np.array_equal(out[2 : 2 + lanes], expected, equal_nan=True), start
        assert (out[:2] == 7).all() and (out[2 + lanes :] == 7).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fill_writes_the_32_values_and_nothing_else(dtype):
    x = np.arange(100, dtype=dtype)
    _fill(x, 37, -2.5)
    expected = np.arange(100, dtype=dtype)
    expected[37:69] = -2.5
    assert np.array_equal(x, expected)
    _fill16(x, 3, 7.0)
    expected[3:19] = 7.0
    assert np.array_equal(x, expected)


def test_lanes_must_be_16_or_32_and_the_values_floats():
    @njit
    def other(values):
        return largest_magnitude(values, 0, 8)

    with pytest.raises(TypingError, match="lanes must be a literal of"):
        other(np.zeros(32, np.float32))
    with pytest.raises(TypingError, match="float32 or float64"):
        _largest(np.zeros(32, np.int32), 0)
    with pytest.raises(TypingError, match="C-contiguous float64 array for the maxima"):
        _group(np.zeros(1024), 0, np.zeros(32, np.float32), 0)
