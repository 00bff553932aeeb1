"""The public scalar codecs, called from a user's own @njit code."""

import functools
import re

import ml_dtypes
import numpy as np
import pytest
from conftest import assert_same_error_in_njit, variant_id, variants
from numba import njit, prange

import numbacast
from numbacast import scalar

CODEC_NAMES = [t.name for t in scalar.CODEC_TYPES]


def test_every_documented_name_exists():
    expected = {
        "float16",
        "bfloat16",
        "float8e4m3fn",
        "float8e4m3fnuz",
        "float8e5m2",
        "float8e5m2fnuz",
        "float8e8m0",
        "float4e2m1",
        "float6e2m3",
        "float6e3m2",
        "int4",
        "uint4",
        "int2",
        "uint2",
    }
    assert set(CODEC_NAMES) == expected
    for name in expected:
        assert callable(getattr(scalar, f"encode_{name}")) and callable(getattr(scalar, f"decode_{name}"))


@njit(parallel=True)
def _encode_all_f8(x, saturate):
    out = np.empty(x.size, np.uint8)
    for i in prange(x.size):
        out[i] = scalar.encode_float8e4m3fn(x[i], saturate)
    return out


@njit
def _roundtrip_e5m2(x):
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = scalar.decode_float8e5m2(scalar.encode_float8e5m2(x[i]))
    return out


@njit
def _e8m0(x, mode):
    out = np.empty(x.size, np.uint8)
    for i in range(x.size):
        out[i] = scalar.encode_float8e8m0(x[i], True, mode)
    return out


@njit
def _int4(x):
    out = np.empty(x.size, np.int64)
    for i in range(x.size):
        out[i] = scalar.decode_int4(scalar.encode_int4(x[i]))
    return out


X = np.array([0.1, -3.3, 464.0, 465.0, 1e9, -np.inf, np.nan, 2.5, -0.0, 1e-12], np.float32)


@pytest.mark.parametrize("saturate", [True, False])
def test_encode_in_a_prange_loop_matches_cast(saturate):
    expected = numbacast.cast(X, "float8e4m3fn", saturate=saturate).view(np.uint8)
    assert np.array_equal(_encode_all_f8(X, saturate), expected)


def test_decode_of_encode_matches_a_round_trip_through_cast():
    expected = numbacast.cast(numbacast.cast(X, "float8e5m2"), "float")
    assert np.array_equal(_roundtrip_e5m2(X), expected, equal_nan=True)


@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
def test_e8m0_round_modes(mode):
    expected = numbacast.cast(X, "float8e8m0", round_mode=mode).view(np.uint8)
    assert np.array_equal(_e8m0(X, mode), expected)


def test_int4_codec():
    assert _int4(X).tolist() == numbacast.cast(X, "int4").astype(np.int64).tolist()


@pytest.mark.parametrize("name", CODEC_NAMES)
def test_every_codec_from_python_matches_cast(name):
    encode, decode = getattr(scalar, f"encode_{name}"), getattr(scalar, f"decode_{name}")
    codes = [int(encode(float(v))) for v in X]
    assert (
        codes
        == numbacast.cast(X.astype(np.float64), name).view(f"u{numbacast.resolve(name).storage.itemsize}").tolist()
    )
    values = np.array([decode(c) for c in codes], dtype=np.float64)
    expected = numbacast.cast(numbacast.cast(X, name), "double")
    assert np.array_equal(values, expected, equal_nan=True)


def test_bad_round_mode_in_njit_raises():
    with pytest.raises(ValueError, match="round_mode"):
        _e8m0(X, "sideways")


# --------------------------------------------------------------------------
# encode(value, to, saturate, round_mode) and decode(x)
# --------------------------------------------------------------------------

VALUES = [0.1, -3.3, 464.0, 465.0, 1e9, -np.inf, np.nan, 2.5, -0.0, 1e-12, 7, -9]
NJIT_TARGETS = [t.name for t in numbacast.TYPES if t is not numbacast.FLOAT16]  # Numba has no float16 scalars


@functools.cache
def _encoder(target, saturate, round_mode):
    @njit
    def encode_all(values, out):
        for i in range(values.size):
            out[i] = scalar.encode(values[i], target, saturate, round_mode)

    return encode_all


@pytest.mark.parametrize("variant", variants(NJIT_TARGETS), ids=variant_id)
def test_encode_is_a_one_element_cast_in_python_and_njit(variant):
    target, options = variant
    saturate, round_mode = options.get("saturate", True), options.get("round_mode", "up")
    for values in (np.array(VALUES, np.float64), np.arange(-9, 9)):
        expected = numbacast.cast(values, target, saturate=saturate, round_mode=round_mode)
        in_python = np.array([scalar.encode(v, target, saturate, round_mode) for v in values])
        assert in_python.dtype == expected.dtype
        assert np.array_equal(in_python.view(f"u{in_python.itemsize}"), expected.view(f"u{expected.itemsize}"))
        compiled = np.empty_like(expected)
        _encoder(target, saturate, round_mode)(values, compiled)
        assert np.array_equal(compiled.view(f"u{compiled.itemsize}"), expected.view(f"u{expected.itemsize}"))


def test_encode_takes_elements_of_ml_dtypes_arrays():
    a = numbacast.cast(np.array(VALUES, np.float32), "bfloat16")
    expected = numbacast.cast(a, "float8e5m2", saturate=False)
    out = np.empty(a.shape, expected.dtype)
    _encoder("float8e5m2", False, "up")(a, out)
    assert np.array_equal(out.view(np.uint8), expected.view(np.uint8))


@njit
def _decode_all(a, out):
    for i in range(a.size):
        out[i] = scalar.decode(a[i])


@pytest.mark.parametrize("name", ["bfloat16", "float8e4m3fn", "float8e8m0", "int4", "uint2", "float6e3m2"])
def test_decode_is_the_exact_value(name):
    t = numbacast.resolve(name)
    a = np.arange(1 << t.bits, dtype=f"u{t.storage.itemsize}").view(t.storage)
    wide = "int64" if t.is_integer else "double"
    expected = numbacast.cast(a, wide)
    out = np.empty(a.shape, expected.dtype)
    _decode_all(a, out)
    assert np.array_equal(out.view(np.uint64), expected.view(np.uint64))
    assert np.array_equal(np.array([scalar.decode(v) for v in a]).view(np.uint64), expected.view(np.uint64))


def test_the_documented_quantize_example():
    @njit(parallel=True)
    def quantize(x, scale, out):
        for i in prange(x.size):
            out[i] = scalar.encode(x[i] / scale, "float8e4m3fn", saturate=True)

    x = np.linspace(-1000, 1000, 1 << 16, dtype=np.float32)
    out = np.empty(x.shape, ml_dtypes.float8_e4m3fn)
    quantize(x, np.float32(2.0), out)
    assert np.array_equal(out.view(np.uint8), numbacast.cast(x / np.float32(2.0), "float8e4m3fn").view(np.uint8))


@pytest.mark.parametrize("options", ['saturate="no"', "saturate=2", 'round_mode="sideways"'])
def test_encode_options_are_checked_as_in_cast(options):
    assert_same_error_in_njit(f'scalar.encode(v, "float8e4m3fn", {options})', "v", 1.5, {"scalar": scalar})


@pytest.mark.parametrize(
    "call, error, message",
    [
        ("scalar.decode_float8e4m3fn(1.5)", TypeError, "decode_float8e4m3fn takes an integer storage code, not "),
        ("scalar.decode_float8e4m3fn(True)", TypeError, "decode_float8e4m3fn takes an integer storage code, not "),
        ("scalar.encode_float8e4m3fn(1000.0, 2)", TypeError, "saturate must be True/False (or 1/0), not 2"),
        ("scalar.encode_float8e4m3fn(1000.0, 'no')", TypeError, "saturate must be True/False (or 1/0), not 'no'"),
        ("scalar.encode_float8e4m3fn('1')", TypeError, "encode_float8e4m3fn takes one real number, not "),
        ("scalar.encode_float8e4m3fn(None)", TypeError, "encode_float8e4m3fn takes one real number, not "),
        ("scalar.encode_float8e4m3fn(1 + 2j)", TypeError, "encode_float8e4m3fn takes one real number, not "),
    ],
)
def test_the_per_type_codecs_check_their_arguments(call, error, message):
    """A fractional code, a saturate that is not a bool, a text, a complex
    number: an error naming it, never read as something else -- in @njit
    code the same error when the function compiles.  Rule: docs/rules.md#rule-errors"""
    with pytest.raises(error, match=re.escape(message)):
        eval(call, {"scalar": scalar})
    compiled = njit(eval(f"lambda: {call}", {"scalar": scalar}))
    with pytest.raises(error, match=re.escape(message)):
        compiled()


def test_the_per_type_codecs_judge_saturate_as_written_in_njit_code():
    """A literal 1 or 0 is a saturate (typed as written, before as int64),
    a run-time bool too; a run-time integer is refused, naming its type."""
    as_one = njit(lambda x: scalar.encode_float8e4m3fn(x, 1))
    as_zero = njit(lambda x: scalar.encode_float8e4m3fn(x, 0))
    assert (as_one(1000.0), as_zero(1000.0)) == (scalar.encode_float8e4m3fn(1000.0, True), 0x7F)
    assert njit(lambda x, s: scalar.encode_float8e4m3fn(x, s))(1000.0, False) == 0x7F
    with pytest.raises(TypeError, match=re.escape("saturate must be True/False (or 1/0), not int64")):
        njit(lambda x, s: scalar.encode_float8e4m3fn(x, s))(1000.0, 1)


def test_the_e8m0_codec_checks_round_mode_when_it_runs():
    message = "round_mode must be one of 'up', 'down', 'nearest', not 'sideways'"
    with pytest.raises(ValueError, match=re.escape(message)):
        scalar.encode_float8e8m0(3.0, True, "sideways")
    with pytest.raises(ValueError, match=re.escape(message)):
        njit(lambda mode: scalar.encode_float8e8m0(3.0, True, mode))("sideways")


@pytest.mark.parametrize("value", [np.longdouble(1.5), np.timedelta64(3)])
def test_the_per_type_codecs_refuse_numbers_wider_than_64_bits_and_durations(value):
    with pytest.raises(TypeError, match="encode_float8e4m3fn takes one real number"):
        scalar.encode_float8e4m3fn(value)


def test_the_per_type_codecs_take_any_python_int_and_float16():
    """An int beyond 64 bits is the float64 it rounds to (infinity beyond
    float64's range), as Numba takes smaller ones; a float16 its exact value;
    a code beyond the storage is the storage range's ValueError."""
    assert scalar.encode_float8e4m3fn(2**70) == scalar.encode_float8e4m3fn(float(2**70)) == 0x7E
    assert scalar.encode_float8e4m3fn(-(2**70), False) == 0xFF
    assert scalar.encode_float8e5m2(10**400, False) == 0x7C and scalar.encode_float8e5m2(-(10**400)) == 0xFB
    assert scalar.encode_float8e4m3fn(np.float16(1.5)) == scalar.encode_float8e4m3fn(1.5) == 0x3C
    for code in (2**70, -(2**70), 256):
        with pytest.raises(ValueError, match="takes a storage code from 0 to 255"):
            scalar.decode_float8e4m3fn(code)
