"""The public scalar codecs, called from a user's own @njit code."""

import numpy as np
import pytest
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
