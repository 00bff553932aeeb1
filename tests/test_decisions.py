"""One named test per numeric rule of the conversion rules (docs/rules.md),
with expected values written out by hand.

Each test's docstring names its rule as ``Rule: docs/rules.md#<label>``;
tests/test_docs.py checks that every label exists."""

import ml_dtypes
import numpy as np
import pytest

import numbacast
from numbacast import cast

NAN, INF = float("nan"), float("inf")


def codes(x, to, **options):
    """The storage codes (unsigned ints) of cast(x, to)."""
    out = cast(np.asarray(x), to, **options)
    return out.view(f"u{out.dtype.itemsize}").tolist()


# -- Types -----------------------------------------------------------------

STORAGE = {
    1: np.float32,
    2: np.uint8,
    3: np.int8,
    4: np.uint16,
    5: np.int16,
    6: np.int32,
    7: np.int64,
    9: np.bool_,
    10: np.float16,
    11: np.float64,
    12: np.uint32,
    13: np.uint64,
    16: ml_dtypes.bfloat16,
    17: ml_dtypes.float8_e4m3fn,
    18: ml_dtypes.float8_e4m3fnuz,
    19: ml_dtypes.float8_e5m2,
    20: ml_dtypes.float8_e5m2fnuz,
    21: ml_dtypes.uint4,
    22: ml_dtypes.int4,
    23: ml_dtypes.float4_e2m1fn,
    24: ml_dtypes.float8_e8m0fnu,
    25: ml_dtypes.uint2,
    26: ml_dtypes.int2,
    27: ml_dtypes.float6_e2m3fn,
    28: ml_dtypes.float6_e3m2fn,
}


@pytest.mark.parametrize("onnx_id", sorted(STORAGE))
def test_types_storage_in_numpy(onnx_id):
    """Rule: docs/rules.md#rule-types"""
    out = cast(np.zeros(3, np.float32), onnx_id)
    assert out.dtype == np.dtype(STORAGE[onnx_id])
    assert numbacast.resolve(onnx_id).storage == np.dtype(STORAGE[onnx_id])
    assert len(numbacast.TYPES) == 25


@pytest.mark.parametrize("spec", [14, 15, "complex64", " COMPLEX128", np.complex64, np.complex128])
def test_types_complex_refused(spec):
    """Rule: docs/rules.md#rule-complex-refused"""
    with pytest.raises(ValueError, match="does not cast complex numbers"):
        cast(np.zeros(2, np.float32), spec)
    with pytest.raises(ValueError, match="does not cast complex numbers"):
        cast(np.zeros(2, spec if not isinstance(spec, (int, str)) else np.complex64), "float")


# -- A single correct rounding ------------------------------------------------


def test_single_rounding_double_to_float8_not_via_float():
    """Rule: docs/rules.md#rule-single-rounding"""
    # 1 + 1/16 is the tie between 1 and 1.125 in E4M3; a double just above it
    # rounds up, while float32(x) == 1.0625 exactly would tie to even (1.0).
    x = 1.0625 + 2.0**-40
    assert np.float32(x) == np.float32(1.0625)
    assert codes([x], "float8e4m3fn") == [0x39]  # 1.125
    assert codes([np.float32(x)], "float8e4m3fn") == [0x38]  # 1.0


def test_single_rounding_int64_to_float_not_via_double():
    """Rule: docs/rules.md#rule-single-rounding"""
    # 2**60 + 2**36 is the tie between two floats; one more rounds up.
    x = 2**60 + 2**36 + 1
    assert float(np.float64(x)) == 2**60 + 2**36  # a double would lose the +1
    assert cast(np.array([x], np.int64), "float")[0] == np.float32(2**60 + 2**37)
    assert cast(np.array([x], np.uint64), "float")[0] == np.float32(2**60 + 2**37)
    assert cast(np.array([x - 1], np.int64), "float")[0] == np.float32(2**60)


def test_single_rounding_int64_to_bfloat16_and_float8():
    """Rule: docs/rules.md#rule-single-rounding"""
    x = 2**60 + 2**52 + 1  # just above the tie between two bfloat16 values
    assert cast(np.array([x], np.int64), "bfloat16").astype(np.float64)[0] == 2**60 + 2**53
    assert cast(np.array([-x], np.int64), "bfloat16").astype(np.float64)[0] == -(2**60 + 2**53)
    assert (
        cast(np.array([2**62 + 2**58 + 1], np.int64), "float8e8m0", round_mode="nearest").view(np.uint8)[0] == 127 + 62
    )
    assert cast(np.array([2**62 + 1], np.int64), "float8e8m0", round_mode="up").view(np.uint8)[0] == 127 + 63
    assert cast(np.array([2**62], np.int64), "float8e8m0", round_mode="up").view(np.uint8)[0] == 127 + 62


# -- Floating point targets ------------------------------------------------


def test_overflow_is_judged_after_rounding():
    """Rule: docs/rules.md#rule-overflow-after-rounding"""
    assert codes([464.0, -464.0], "float8e4m3fn", saturate=False) == [0x7E, 0xFE]  # tie -> 448
    assert codes([465.0, -465.0], "float8e4m3fn", saturate=False) == [0x7F, 0xFF]  # [x] = 480 > max
    assert codes([465.0, -465.0], "float8e4m3fn") == [0x7E, 0xFE]
    assert codes([65519.0, 65520.0], "float16") == [0x7BFF, 0x7C00]


def test_ieee_targets_overflow_to_inf_and_ignore_saturate():
    """Rule: docs/rules.md#rule-ieee-overflow"""
    for saturate in (True, False):
        assert codes([1e6, -1e6, 1e39], "float16", saturate=saturate) == [0x7C00, 0xFC00, 0x7C00]
        assert codes([1e39, -1e39], "bfloat16", saturate=saturate) == [0x7F80, 0xFF80]
        assert cast(np.array([1e39, -1e300]), "float", saturate=saturate).tolist() == [INF, -INF]


def test_ieee_targets_nan_keeps_its_sign():
    """Rule: docs/rules.md#rule-ieee-nan"""
    for to in ("float16", "bfloat16", "float", "double"):
        out = cast(np.array([NAN, -NAN]), to).astype(np.float64)
        assert np.isnan(out).all() and np.signbit(out).tolist() == [False, True]


@pytest.mark.parametrize(
    "to,max_code,inf_code,nan_codes",
    [
        ("float8e4m3fn", 0x7E, None, (0x7F, 0xFF)),
        ("float8e4m3fnuz", 0x7F, None, (0x80, 0x80)),
        ("float8e5m2", 0x7B, 0x7C, (0x7E, 0xFE)),
        ("float8e5m2fnuz", 0x7F, None, (0x80, 0x80)),
    ],
)
def test_float8_saturate_tables(to, max_code, inf_code, nan_codes):
    """Rule: docs/rules.md#rule-float8-saturate"""
    neg_max = max_code | 0x80
    values = [INF, -INF, 1e6, -1e6, NAN, -NAN]
    assert codes(values, to) == [max_code, neg_max, max_code, neg_max, *nan_codes]
    if inf_code:  # E5M2: inf
        expected = [inf_code, inf_code | 0x80, inf_code, inf_code | 0x80]
    else:
        expected = [nan_codes[0], nan_codes[1], nan_codes[0], nan_codes[1]]
    assert codes(values, to, saturate=False) == expected + list(nan_codes)


def test_float8_fnuz_negative_zero_becomes_zero():
    """Rule: docs/rules.md#rule-float8-fnuz-zero"""
    for to in ("float8e4m3fnuz", "float8e5m2fnuz"):
        assert codes([-0.0, -1e-30, 0.0], to) == [0, 0, 0]
    assert codes([-0.0, -1e-30], "float8e4m3fn") == [0x80, 0x80]
    assert codes([-0.0], "float8e5m2") == [0x80]


@pytest.mark.parametrize("to,max_code,bits", [("float4e2m1", 0x7, 4), ("float6e2m3", 0x1F, 6), ("float6e3m2", 0x1F, 6)])
def test_float4_float6_always_saturate_and_nan_gives_max(to, max_code, bits):
    """Rule: docs/rules.md#rule-float4-float6"""
    sign = 1 << (bits - 1)
    for saturate in (True, False):
        assert codes([INF, -INF, 1e9, -1e9, NAN, -NAN, -0.0], to, saturate=saturate) == [
            max_code,
            max_code | sign,
            max_code,
            max_code | sign,
            max_code,
            max_code,
            sign,
        ]


def test_float4_rounds_to_nearest_even():
    """Rule: docs/rules.md#rule-round-nearest-even"""
    # float4e2m1 values: 0, 0.5, 1, 1.5, 2, 3, 4, 6
    assert codes([0.25, 0.75, 1.25, 2.5, 3.5, 5.0, 5.01], "float4e2m1") == [0, 2, 2, 4, 6, 6, 7]


@pytest.mark.parametrize(
    "mode,expected",
    [
        # inputs: 3, 2.9, 1.5, 1.49, 4, -3, 2**-127, 2**-128, 2**127, 2**128, 1e300
        ("up", [129, 129, 128, 128, 129, 129, 0, 0, 254, 254, 254]),
        ("down", [128, 128, 127, 127, 129, 128, 0, 0, 254, 254, 254]),
        ("nearest", [129, 128, 128, 127, 129, 129, 0, 0, 254, 254, 254]),
    ],
)
def test_float8e8m0_round_modes(mode, expected):
    """Rule: docs/rules.md#rule-e8m0-round-modes"""
    x = [3.0, 2.9, 1.5, 1.49, 4.0, -3.0, 2.0**-127, 2.0**-128, 2.0**127, 2.0**128, 1e300]
    assert codes(x, "float8e8m0", round_mode=mode) == expected
    unsaturated = codes(x, "float8e8m0", round_mode=mode, saturate=False)
    assert unsaturated[:7] == expected[:7]
    assert unsaturated[8] == 254 and unsaturated[10] == 0xFF


def test_float8e8m0_specials_and_range():
    """Rule: docs/rules.md#rule-e8m0-range"""
    x = [0.0, -0.0, INF, -INF, NAN, 2.0**-200, 2.0**-128]
    assert codes(x, "float8e8m0") == [0, 0, 254, 254, 255, 0, 0]
    for mode in ("up", "down", "nearest"):
        assert codes(x, "float8e8m0", round_mode=mode, saturate=False) == [255] * 7
    # 1.5 * 2**-128 goes up to 2**-127 (code 0) when rounding up or to nearest
    tiny = [1.5 * 2.0**-128]
    assert [codes(tiny, "float8e8m0", round_mode=m, saturate=False) for m in ("up", "down", "nearest")] == [
        [0],
        [255],
        [0],
    ]
    # float32 subnormal 2**-127 is code 0 in every mode
    sub = np.array([2.0**-127], np.float32)
    assert sub[0] != 0
    for mode in ("up", "down", "nearest"):
        assert codes(sub, "float8e8m0", round_mode=mode) == [0]


def test_other_float_targets_from_integers_round_the_exact_integer():
    """Rule: docs/rules.md#rule-integers-to-floats"""
    assert codes(np.array([464, 465, -465], np.int32), "float8e4m3fn", saturate=False) == [0x7E, 0x7F, 0xFF]
    assert codes(np.array([2049], np.int64), "float16") == [0x6800]  # tie 2048/2050 -> 2048
    assert codes(np.array([2051], np.int64), "float16") == [0x6802]  # tie 2050/2052 -> 2052
    assert codes(np.array([True, False]), "float8e5m2") == [0x3C, 0]


# -- Rounding modes ------------------------------------------------------------

MODES = ("nearest_even", "nearest_away", "toward_zero", "toward_positive", "toward_negative")


def test_rounding_modes_on_ties_and_tiny_values():
    """Rule: docs/rules.md#rule-rounding-modes"""
    x = [1.0625, -1.0625, 1e-10, -1e-10, 1.125]
    expected = {
        "nearest_even": [0x38, 0xB8, 0x00, 0x80, 0x39],
        "nearest_away": [0x39, 0xB9, 0x00, 0x80, 0x39],
        "toward_zero": [0x38, 0xB8, 0x00, 0x80, 0x39],
        "toward_positive": [0x39, 0xB8, 0x01, 0x80, 0x39],
        "toward_negative": [0x38, 0xB9, 0x00, 0x81, 0x39],
    }
    for mode in MODES:
        assert codes(np.array(x, np.float64), "float8e4m3fn", rounding=mode) == expected[mode], mode
    assert codes(np.array(x, np.float64), "float8e4m3fn") == expected["nearest_even"]
    # a text is read with the same modes (from its exact decimal value)
    assert codes(np.array(["1.0625", "-1.0625"]), "float8e4m3fn", rounding="toward_negative") == [0x38, 0xB9]
    # no rounding happens, whatever the mode
    assert cast(np.array([0.1], np.float16), "float", rounding="toward_zero")[0] == np.float32(np.float16(0.1))


def test_rounding_overflow_follows_the_mode_and_saturate():
    """Rule: docs/rules.md#rule-rounding-overflow"""
    x = np.array([465.0, -465.0, INF, -INF, NAN], np.float64)
    assert codes(x, "float8e4m3fn", saturate=False, rounding="toward_zero") == [0x7E, 0xFE, 0x7F, 0xFF, 0x7F]
    assert codes(x, "float8e4m3fn", saturate=False, rounding="toward_positive") == [0x7F, 0xFE, 0x7F, 0xFF, 0x7F]
    assert codes(x, "float8e4m3fn", saturate=False, rounding="toward_negative") == [0x7E, 0xFF, 0x7F, 0xFF, 0x7F]
    assert codes(x, "float8e4m3fn", saturate=True, rounding="toward_positive") == [0x7E, 0xFE, 0x7E, 0xFE, 0x7F]
    # FLOAT16 has infinity: toward zero keeps 65504 but an infinity stays infinite
    assert codes(np.array([65520.0, -65520.0, INF], np.float64), "float16", rounding="toward_zero") == [
        0x7BFF,
        0xFBFF,
        0x7C00,
    ]
    # FLOAT4E2M1 has neither infinity nor NaN: always +/-max
    assert codes(np.array([7.0, -INF], np.float64), "float4e2m1", rounding="toward_positive") == [0x7, 0xF]


def test_rounding_e8m0_round_mode_and_rounding():
    """Rule: docs/rules.md#rule-rounding-e8m0"""
    x = np.array([1.5, 3.0, 6.0, -3.0], np.float64)
    assert codes(x, "float8e8m0", rounding="nearest_even") == [128, 128, 130, 128]
    assert codes(x, "float8e8m0", rounding="nearest_away") == codes(x, "float8e8m0", round_mode="nearest")
    assert codes(x, "float8e8m0", rounding="toward_negative", round_mode="down") == [127, 128, 129, 128]
    assert codes(x, "float8e8m0") == codes(x, "float8e8m0", rounding="toward_positive")
    with pytest.raises(ValueError, match="disagree"):
        cast(x, "float8e8m0", round_mode="up", rounding="nearest_even")
    with pytest.raises(ValueError, match="rounding must be one of"):
        cast(x, "float8e8m0", rounding="up")


def test_stochastic_rounding_goes_up_with_the_fractional_distance():
    """Rule: docs/rules.md#rule-stochastic"""
    # 1.03125 lies a quarter of the way from 1.0 to 1.125 (FLOAT8E4M3FN): with
    # 2 random bits it goes up for r = 3 only, that is with probability 1/4
    x = np.full(4, 1.03125, np.float32)
    bits = np.arange(4, dtype=np.uint8)
    assert codes(x, "float8e4m3fn", rounding="stochastic", random_bits=bits, stochastic_bits=2) == [
        0x38,
        0x38,
        0x38,
        0x39,
    ]
    # exact values never move; the same seed gives the same bits
    assert codes(np.array([1.0, -448.0], np.float32), "float8e4m3fn", rounding="stochastic") == [0x38, 0xFE]
    y = np.linspace(1, 2, 1000, dtype=np.float32)
    assert codes(y, "float8e4m3fn", rounding="stochastic", seed=5) == codes(
        y, "float8e4m3fn", rounding="stochastic", seed=5
    )


# -- Integer targets -------------------------------------------------------


def test_integer_to_integer_keeps_low_bits():
    """Rule: docs/rules.md#rule-integer-wrap"""
    assert cast(np.array([200], np.int16), "int8").tolist() == [-56]
    assert cast(np.array([9], np.int8), "int4").astype(np.int8).tolist() == [-7]
    assert cast(np.array([-1], np.int64), "uint64").tolist() == [2**64 - 1]
    assert cast(np.array([2**64 - 1], np.uint64), "int2").astype(np.int8).tolist() == [-1]
    assert cast(np.array([-8, 7], ml_dtypes.int4), "uint2").astype(np.int8).tolist() == [0, 3]


def test_float_to_integer_truncates_and_saturates():
    """Rule: docs/rules.md#rule-float-to-integer"""
    x = np.array([2.9, -2.9, 1e20, -1e20, NAN, INF, -INF, -0.999, 127.9, -128.9])
    assert cast(x, "int8").tolist() == [2, -2, 127, -128, 0, 127, -128, 0, 127, -128]
    assert cast(x, "uint8").tolist() == [2, 0, 255, 0, 0, 255, 0, 0, 127, 0]
    assert cast(x, "int64").tolist()[2:7] == [2**63 - 1, -(2**63), 0, 2**63 - 1, -(2**63)]
    assert cast(x, "uint64").tolist()[2:7] == [2**64 - 1, 0, 0, 2**64 - 1, 0]
    assert cast(np.array([2.0**63, 2.0**64]), "uint64").tolist() == [2**63, 2**64 - 1]


def test_float_to_small_integers_rounds_half_even_then_keeps_low_bits():
    """Rule: docs/rules.md#rule-float-to-small-integer"""
    x = np.array([2.5, 3.5, -0.5, -1.5, 7.5, 8.0, 1e20, NAN, INF, -INF], np.float32)
    assert cast(x, "int4").astype(np.int8).tolist() == [2, 4, 0, -2, -8, -8, 0, 0, 0, 0]
    assert cast(x, "uint4").astype(np.int8).tolist() == [2, 4, 0, 14, 8, 8, 0, 0, 0, 0]
    assert cast(x, "int2").astype(np.int8).tolist() == [-2, 0, 0, -2, 0, 0, 0, 0, 0, 0]
    assert cast(x, "uint2").astype(np.int8).tolist() == [2, 0, 0, 2, 0, 0, 0, 0, 0, 0]


def test_rounding_into_integers_rounds_then_saturates_or_keeps_low_bits():
    """Rule: docs/rules.md#rule-rounding-integers"""
    x = np.array([2.5, -2.5], np.float32)
    by_mode = {
        None: [2, -2],
        "toward_zero": [2, -2],
        "nearest_even": [2, -2],
        "nearest_away": [3, -3],
        "toward_positive": [3, -2],
        "toward_negative": [2, -3],
    }
    for rounding, expected in by_mode.items():
        assert cast(x, "int8", rounding=rounding).tolist() == expected
    assert cast(np.array([-0.5]), "int4", rounding="toward_negative").astype(np.int8).tolist() == [-1]
    assert cast(np.array([-0.5]), "uint4", rounding="toward_negative").astype(np.int8).tolist() == [15]
    assert cast(np.array([127.5, NAN, INF]), "int8", rounding="nearest_even").tolist() == [127, 0, 127]
    assert np.array_equal(cast(x, "int4", rounding="nearest_even"), cast(x, "int4"))
    draws = cast(np.full(100000, -2.3), "int8", rounding="stochastic", seed=0)
    assert set(draws.tolist()) == {-2, -3} and abs(draws.mean() + 2.3) < 0.01
    three_bits = cast(np.full(100000, -2.3), "int8", rounding="stochastic", seed=0, stochastic_bits=3)
    assert abs((three_bits == -3).mean() - 0.25) < 0.01
    assert cast(np.array([4.0, -7.0]), "int8", rounding="stochastic", seed=1).tolist() == [4, -7]
    with pytest.raises(ValueError, match="ONNX's rule only"):
        cast(np.array(["2.5"]), "int8", rounding="nearest_away")


def test_bool_source_is_zero_or_one():
    """Rule: docs/rules.md#rule-bool-source"""
    b = np.array([True, False])
    for to in ("float", "int8", "uint4", "float8e4m3fn", "int64", "bool"):
        assert cast(b, to).astype(np.float64).tolist() == [1.0, 0.0]


# -- Bool target -------------------------------------------------------------


def test_bool_target_zero_is_false_everything_else_true():
    """Rule: docs/rules.md#rule-bool-target"""
    x = np.array([0.0, -0.0, NAN, 1e-45, -INF, 0.5])
    assert cast(x, "bool").tolist() == [False, False, True, True, True, True]
    assert cast(np.array([0, 2, -1], np.int64), "bool").tolist() == [False, True, True]
    assert cast(np.array([0x00, 0x80, 0x7F, 0x01], np.uint8).view(ml_dtypes.float8_e4m3fn), "bool").tolist() == [
        False,
        False,
        True,
        True,
    ]


def test_float8_fnuz_infinity_is_nan_before_cast_24():
    """Cast-19..23 give NaN for +/-inf into the FNUZ types even when saturating
    (the ONNX layer selects this rule by opset); finite overflow still saturates.

    Rule: docs/rules.md#rule-fnuz-infinity-by-version"""
    from numbacast.engine.arrays import run
    from numbacast.engine.conversion import Conversion

    x = np.array([np.inf, -np.inf, 1e9, -1e9, 1.0], np.float32)
    for name, max_code in (("float8e4m3fnuz", 0x7F), ("float8e5m2fnuz", 0x7F)):
        conversion = Conversion.make(numbacast.resolve("float"), numbacast.resolve(name), True, "up", inf_to_nan=True)
        out = run(conversion, x).view(np.uint8).tolist()
        assert out[:4] == [0x80, 0x80, max_code, max_code | 0x80]
        assert codes(x, name)[:2] == [max_code, max_code | 0x80]  # Cast-24 and later
