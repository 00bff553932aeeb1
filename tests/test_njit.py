"""numbacast.cast called from a user's own @njit code."""

import numpy as np
import pytest
from numba import njit, prange
from numba.core.errors import TypingError

import numbacast

X = np.array([[0.1, 464.0, 465.0, -1e9], [np.nan, 2.5, -0.0, 7.25]], np.float32)


@njit
def _to_float8(a):
    return numbacast.cast(a, "float8e4m3fn")


@njit
def _many(a):
    return (
        numbacast.cast(a, 23),
        numbacast.cast(a, "INT4"),
        numbacast.cast(a, "int32"),
        numbacast.cast(a, "float8e4m3fn", saturate=False),
        numbacast.cast(a, 24, saturate=False, round_mode="nearest"),
    )


@njit(parallel=True)
def _rows_to_float4(a):
    out = np.empty(a.shape, np.uint8)
    for i in prange(a.shape[0]):
        out[i] = numbacast.cast(a[i], "float4e2m1")
    return out


@njit
def _from_int8(a):
    return numbacast.cast(a, "bfloat16")


def python_codes(x, to, **options):
    out = numbacast.cast(x, to, **options)
    return out.view(f"u{out.dtype.itemsize}") if out.dtype.kind == "V" else out


def test_cast_in_njit_matches_python():
    assert np.array_equal(_to_float8(X), python_codes(X, "float8e4m3fn"))


def test_literal_ids_names_and_options():
    results = _many(X)
    expected = [
        python_codes(X, 23),
        python_codes(X, "int4"),
        python_codes(X, "int32"),
        python_codes(X, "float8e4m3fn", saturate=False),
        python_codes(X, 24, saturate=False, round_mode="nearest"),
    ]
    for got, want in zip(results, expected):
        assert np.array_equal(got, want)


def test_cast_inside_a_prange_loop():
    assert np.array_equal(_rows_to_float4(X), python_codes(X, "float4e2m1"))


def test_small_integer_source_through_its_table():
    a = np.arange(-128, 128, dtype=np.int8)
    assert np.array_equal(_from_int8(a), python_codes(a, "bfloat16"))


@pytest.mark.parametrize("target,message", [("float7", "float7"), ("string", "STRING in Python")])
def test_unknown_target_or_string_is_a_clear_typing_error(target, message):
    @njit
    def unknown(a):
        return numbacast.cast(a, target)

    with pytest.raises(TypingError, match=message):
        unknown(X)
