"""numbacast.cast called from a user's own @njit code: typed arrays in and out,
the same bits as the Python call, out=, and the option checks of the Python call."""

import re

import ml_dtypes
import numpy as np
import pytest
from conftest import assert_same_error_in_njit
from numba import njit, prange

import numbacast

X = np.array([[0.1, 464.0, 465.0, -1e9], [np.nan, 2.5, -0.0, 7.25]], np.float32)


def codes(a):
    return a.view(f"u{a.dtype.itemsize}")


def assert_same(got, want):
    """Same dtype, shape and bits."""
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(codes(got), codes(want))


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
        numbacast.cast(a, 16, saturate=1),
    )


@njit(parallel=True)
def _rows_to_float4(a):
    out = np.empty(a.shape, ml_dtypes.float4_e2m1fn)
    for i in prange(a.shape[0]):
        out[i] = numbacast.cast(a[i], "float4e2m1")
    return out


@njit
def _from_int8(a):
    return numbacast.cast(a, "bfloat16")


@njit
def _round_trip(x):
    return numbacast.cast(numbacast.cast(x, "float8e4m3fn"), "float32")


def test_cast_in_njit_returns_the_typed_array_of_the_python_call():
    got = _to_float8(X)
    assert got.dtype == ml_dtypes.float8_e4m3fn
    assert_same(got, numbacast.cast(X, "float8e4m3fn"))


def test_round_trip_in_njit_equals_the_python_round_trip():
    assert_same(_round_trip(X), numbacast.cast(numbacast.cast(X, "float8e4m3fn"), "float32"))


def test_literal_ids_names_and_options():
    expected = [
        numbacast.cast(X, 23),
        numbacast.cast(X, "int4"),
        numbacast.cast(X, "int32"),
        numbacast.cast(X, "float8e4m3fn", saturate=False),
        numbacast.cast(X, 24, saturate=False, round_mode="nearest"),
        numbacast.cast(X, "bfloat16"),
    ]
    for got, want in zip(_many(X), expected):
        assert_same(got, want)


def test_cast_inside_a_prange_loop():
    assert_same(_rows_to_float4(X), numbacast.cast(X, "float4e2m1"))


def test_small_integer_source_through_its_table():
    a = np.arange(-128, 128, dtype=np.int8)
    assert_same(_from_int8(a), numbacast.cast(a, "bfloat16"))


def test_typed_sources_strided_and_multidimensional():
    x = np.linspace(-500, 500, 4 * 6 * 5, dtype=np.float32).reshape(4, 6, 5)
    for source in ("bfloat16", "float8e5m2", "int4", "float6e3m2"):
        typed = numbacast.cast(x, source)
        for view in (typed, typed[::2, 1:, ::-1], typed.transpose(2, 0, 1)):
            assert_same(_round_trip(view), numbacast.cast(numbacast.cast(view, "float8e4m3fn"), "float32"))


@njit
def _into(x, out):
    return numbacast.cast(x, "bfloat16", out=out)


def test_out_contiguous_is_returned_and_filled():
    out = np.empty(X.shape, ml_dtypes.bfloat16)
    assert _into(X, out) is out
    assert_same(out, numbacast.cast(X, "bfloat16"))


def test_out_strided():
    big = np.zeros((4, 4), ml_dtypes.bfloat16)
    _into(X, big[::2])
    assert_same(big[::2], numbacast.cast(X, "bfloat16"))
    assert not codes(big[1::2]).any()


def test_out_sharing_the_input_memory_gets_the_result_of_the_unchanged_input():
    buffer = np.linspace(-3, 3, 16, dtype=np.float32)
    x = buffer[:8]
    expected = numbacast.cast(x.copy(), "bfloat16")
    out = buffer.view(ml_dtypes.bfloat16)[8:16]  # the bytes of x[4:8]: written before they would be read
    _into(x, out)
    assert_same(out, expected)


def test_out_of_another_shape_raises_at_run_time():
    with pytest.raises(ValueError, match="out has a different shape"):
        _into(X, np.empty((4, 2), ml_dtypes.bfloat16))


@pytest.mark.parametrize(
    "out, error, message",
    [
        (np.empty(X.shape, np.uint16), TypeError, "out has dtype uint16; a cast to BFLOAT16 needs dtype bfloat16"),
        (np.empty(X.size, ml_dtypes.bfloat16), ValueError, "out has 1 dimensions; the input has 2"),
    ],
)
def test_out_of_another_type_is_refused_when_the_function_compiles(out, error, message):
    with pytest.raises(error, match=re.escape(message)) as raised:
        _into(X, out)
    assert type(raised.value) is error


def _compile_error(call):
    """The error of compiling ``lambda a: <call>``: a TypeError or ValueError
    of numbacast's, never Numba's TypingError around it."""
    function = njit(eval(f"lambda a: {call}", {"numbacast": numbacast, "np": np}))
    with pytest.raises((TypeError, ValueError)) as error:  # Numba's TypingError is neither
        function(X)
    return error.value


@pytest.mark.parametrize(
    "options",
    ['saturate="no"', "saturate=2", "saturate=None", 'round_mode="sideways"', "round_mode=1", "packed=1"],
)
def test_options_are_checked_as_in_python(options):
    """Issue 14 item 6: the Python call and the @njit call reject the same options, with the same message."""
    assert_same_error_in_njit(f'numbacast.cast(a, "float8e4m3fn", {options})', "a", X, {"numbacast": numbacast})


def test_packed_is_for_python_calls():
    error = _compile_error('numbacast.cast(a, "int4", packed=True)')
    assert isinstance(error, ValueError) and "packed=True) is for Python calls" in str(error)


@pytest.mark.parametrize("target,message", [("float7", "unknown type name 'float7'"), ("string", "STRING in Python")])
def test_unknown_target_or_string_is_a_clear_value_error(target, message):
    error = _compile_error(f"numbacast.cast(a, {target!r})")
    assert isinstance(error, ValueError) and message in str(error)


def test_float16_is_refused_with_what_to_do():
    error = _compile_error('numbacast.cast(a, "float16")')
    assert isinstance(error, TypeError) and "Numba has no float16" in str(error) and "'float'" in str(error)


def test_string_array_source_is_a_clear_value_error():
    with pytest.raises(ValueError, match="STRING in Python"):
        _to_float8(np.array(["1.5", "2"]))


def test_non_literal_option_is_a_clear_type_error():
    @njit
    def variable(a, saturate):
        return numbacast.cast(a, "float8e4m3fn", saturate=saturate)

    with pytest.raises(TypeError, match="needs saturate as a literal constant"):
        variable(X, True)
