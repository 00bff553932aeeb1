"""``smaller`` and ``larger`` (numbacast.engine.bits), the kernels' min and max
of two integers: the values and the result types of Python's ``min`` and
``max`` in ``@njit`` code, for every integer width and signedness, at the
ends of each range; and a typing error for what is not an integer.  And
``multiply_add`` where its product is exact: NumPy's product and sum; and
``odd_float32``: the exact float32 truncation of a float64 with its last bit
set when inexact, computed in fractions."""

import math
from fractions import Fraction

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from numbacast.engine.bits import choose, larger, multiply_add, odd_float32, smaller

INTEGER_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@njit
def _ours(a, b):
    return smaller(a, b), larger(a, b)


@njit
def _numbas(a, b):
    return min(a, b), max(a, b)


@njit
def _with_literals(a):
    return smaller(a, 3), larger(a, 3), smaller(-1, a), larger(a, -1)


@njit
def _numbas_with_literals(a):
    return min(a, 3), max(a, 3), min(-1, a), max(a, -1)


def _edges(dtype):
    info = np.iinfo(dtype)
    return [dtype(v) for v in {info.min, info.min + 1, 0, 1, 3, info.max - 1, info.max}]


@pytest.mark.parametrize("dtype", INTEGER_TYPES, ids=lambda t: np.dtype(t).name)
def test_two_integers_of_one_type(dtype):
    for a in _edges(dtype):
        for b in _edges(dtype):
            got, expected = _ours(a, b), _numbas(a, b)
            assert got == expected == (min(a, b), max(a, b)), (a, b)
            assert [type(v) for v in got] == [type(v) for v in expected], (a, b)


@pytest.mark.parametrize("pair", [(np.uint8, np.int32), (np.int8, np.uint16), (np.uint32, np.int64)], ids=str)
def test_two_integer_types_unify_as_numba_does(pair):
    first, second = pair
    for a in _edges(first):
        for b in _edges(second):
            got, expected = _ours(a, b), _numbas(a, b)
            assert got == expected, (a, b)
            assert [type(v) for v in got] == [type(v) for v in expected], (a, b)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8], ids=lambda t: np.dtype(t).name)
def test_literal_constants(dtype):
    for a in _edges(dtype):
        assert _with_literals(a) == _numbas_with_literals(a), a


def test_floats_are_a_typing_error():
    with pytest.raises(TypingError, match="smaller takes two integers"):
        _ours(np.float32(1.0), np.float32(2.0))


@njit
def _multiply_add(a, b, c):
    return multiply_add(a, b, c)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda t: np.dtype(t).name)
def test_multiply_add_of_an_exact_product(dtype):
    rng = np.random.default_rng(7)
    info = np.finfo(dtype)
    a = np.concatenate([rng.standard_normal(300), [0.0, -0.0, info.tiny * 4, info.max / 2, np.inf, np.nan]]).astype(
        dtype
    )
    c = np.concatenate([rng.standard_normal(300) * 2.0 ** rng.integers(-30, 30, 300), [1, 1, 1, 1, 1, 1]]).astype(dtype)
    half = dtype(0.5)
    for x, y in zip(a, c):
        got, expected = _multiply_add(x, half, y), x * half + y  # the product by 0.5 is exact
        assert got == expected or (np.isnan(got) and np.isnan(expected)), (x, y, got)


def test_multiply_add_takes_floats_of_one_type():
    with pytest.raises(TypingError, match="multiply_add takes three float32 or three float64"):
        _multiply_add(np.float32(1.0), np.float64(2.0), np.float32(0.0))


@njit
def _choose(condition, a, b):
    return choose(condition, a, b)


@njit
def _conditional(condition, a, b):
    return a if condition else b


@njit
def _choose_literal(a):
    return choose(a > 0, a, np.uint32(7)), choose(a == 0, np.float32(np.nan), np.float32(-0.0))


@pytest.mark.parametrize("dtype", [np.uint32, np.int64, np.float32, np.float64], ids=lambda t: np.dtype(t).name)
def test_choose_is_a_conditional_expression(dtype):
    values = [dtype(0), dtype(1), dtype(np.iinfo(dtype).max if np.dtype(dtype).kind in "iu" else np.inf)]
    for a in values:
        for b in values[::-1]:
            for condition in (True, False):
                got, expected = _choose(condition, a, b), _conditional(condition, a, b)
                assert got == expected == (a if condition else b) and type(got) is type(expected), (condition, a, b)


def test_choose_of_literal_values_and_nan():
    assert _choose_literal(np.uint32(3)) == (3, np.float32(-0.0))
    first, second = _choose_literal(np.uint32(0))
    assert first == 7 and np.isnan(second)


def test_choose_takes_two_values_of_one_type():
    with pytest.raises(TypingError, match="choose takes a bool and two values of one type"):
        _choose(True, np.float32(1.0), np.float64(2.0))


@njit
def _odd_float32(x):
    return odd_float32(x)


_FLOAT32_MAX = Fraction(float(np.finfo(np.float32).max))


def _rounded_to_odd(x):
    """The bits of float64 ``x`` rounded to float32 to odd, from its exact value:
    the float32 of largest magnitude not above ``|x|`` (float32's largest beyond
    it), its last bit set when that is not ``x``."""
    if math.isnan(x) or math.isinf(x):
        return np.float32(x).view(np.uint32)
    magnitude = abs(Fraction(x))
    if magnitude > _FLOAT32_MAX:
        cut = _FLOAT32_MAX
    else:
        exponent = max(math.frexp(abs(x))[1] - 1, -126) if x else -126
        step = Fraction(2) ** (exponent - 23)  # float32's step at this magnitude (subnormals: 2**-149)
        cut = magnitude // step * step
    bits = np.float32(float(cut)).view(np.uint32) | np.uint32(cut != magnitude)  # cut is a float32: exact
    return bits | np.uint32(0x80000000) if math.copysign(1.0, x) < 0 else bits


def test_odd_float32_is_the_truncation_with_a_sticky_last_bit():
    rng = np.random.default_rng(11)
    f32 = np.finfo(np.float32)
    exact = rng.standard_normal(200).astype(np.float32).astype(np.float64)
    values = np.concatenate(
        [
            np.ldexp(1 + rng.random(2000), rng.integers(-160, 140, 2000)) * rng.choice([-1.0, 1.0], 2000),
            exact,
            exact + np.spacing(exact.astype(np.float32)).astype(np.float64) / 2,  # float32 midpoints
            [0.0, -0.0, float(f32.max), np.nextafter(float(f32.max), np.inf), 1e300, -1e300, float(f32.tiny)],
            [float(f32.smallest_subnormal), float(f32.smallest_subnormal) / 3, 1e-300, np.inf, -np.inf],
        ]
    )
    for x in values:
        got = np.float32(_odd_float32(float(x))).view(np.uint32)
        assert got == _rounded_to_odd(float(x)), (x, hex(got), hex(_rounded_to_odd(float(x))))
    assert np.isnan(_odd_float32(np.nan))


def test_odd_float32_takes_a_float64():
    with pytest.raises(TypingError, match="odd_float32 takes a float64"):
        _odd_float32(np.float32(1.0))
