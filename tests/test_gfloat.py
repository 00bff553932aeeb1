"""numbacast against gfloat 0.5.2 (pinned in the test extra): every built-in
float type with a gfloat twin and the P3109 formats ``binary{K}p{P}``
(K = 3 to 8, every P, signed and unsigned, extended and finite).

For each format all codes are decoded, and casts from float32 -- every value
of the format, the midpoints, one float32 step either side of each, the
overflow threshold, zeros, infinities and NaN, and random float32 values
across the range -- are compared code for code with gfloat's
``round_ndarray`` then ``encode_ndarray``, sign of zero included.  Where
ONNX and gfloat disagree, ONNX wins for the ONNX types; each difference is
listed in docs/rules.md (#rule-gfloat-differences) and checked by
:func:`test_the_documented_differences`.  NaN codes compare as NaN of the
same sign where the format has one NaN per sign or several (numbacast writes
the canonical NaN with the value's sign, gfloat always its ``code_of_nan``).

CI checks a sample: every built-in type and seven P3109 formats (every K from
3 to 8, P = 1 and P = K, both signs, both domains), each with one (rounding,
saturate) of the ten in turn, with 2**16 random values each (over 10**6 in
all).  ``NUMBACAST_FULL_SWEEP=1`` checks every format with every (rounding,
saturate), 2**16 random values each (1,395 cases, 7.9 * 10**7 values; about 15 minutes on
two cores: each case compiles its own conversion).
"""

import os

import exact
import numpy as np
import pytest
from conftest import converter_harness

import numbacast
from numbacast.engine.conversion import Conversion

gfloat = pytest.importorskip("gfloat")
from gfloat import formats as gformats  # noqa: E402

FULL_SWEEP = os.environ.get("NUMBACAST_FULL_SWEEP") == "1"
RANDOM_VALUES = 1 << 16

MODES = {
    "nearest_even": gfloat.RoundMode.TiesToEven,
    "nearest_away": gfloat.RoundMode.TiesToAway,
    "toward_zero": gfloat.RoundMode.TowardZero,
    "toward_positive": gfloat.RoundMode.TowardPositive,
    "toward_negative": gfloat.RoundMode.TowardNegative,
}
COMBINATIONS = [(mode, saturate) for mode in MODES for saturate in (True, False)]
S, U = gfloat.Signedness.Signed, gfloat.Signedness.Unsigned
E, F = gfloat.Domain.Extended, gfloat.Domain.Finite

#: (numbacast type, gfloat format) for every built-in type with a gfloat twin.
BUILT_IN = [
    ("float16", gformats.format_info_binary16),
    ("bfloat16", gformats.format_info_bfloat16),
    ("float8e4m3fn", gformats.format_info_ocp_e4m3),
    ("float8e4m3fnuz", gformats.format_info_p3109(8, 4, S, F)),
    ("float8e5m2", gformats.format_info_ocp_e5m2),
    ("float8e5m2fnuz", gformats.format_info_p3109(8, 3, S, F)),
    ("float8e8m0", gformats.format_info_ocp_e8m0),
    ("float4e2m1", gformats.format_info_ocp_e2m1),
    ("float6e2m3", gformats.format_info_ocp_e2m3),
    ("float6e3m2", gformats.format_info_ocp_e3m2),
]
P3109 = [
    (k, p, signed, extended)
    for k in range(3, 9)
    for p in range(1, k + 1)
    for signed in (True, False)
    for extended in (True, False)
]


def p3109_pair(k, p, signed, extended):
    return numbacast.p3109(k, p, signed, extended), gformats.format_info_p3109(
        k, p, S if signed else U, E if extended else F
    )


ALL_FORMATS = [(numbacast.resolve(name), fi) for name, fi in BUILT_IN] + [p3109_pair(*spec) for spec in P3109]
#: The P3109 formats CI checks: every K's extremes of P, both signs and domains, the float64 path (k8p1u).
P3109_SAMPLE = [
    (3, 1, True, True),
    (4, 4, True, False),
    (5, 2, False, True),
    (6, 3, True, True),
    (7, 7, False, False),
    (8, 1, False, True),
    (8, 5, True, False),
]
FORMATS = ALL_FORMATS if FULL_SWEEP else ALL_FORMATS[: len(BUILT_IN)] + [p3109_pair(*spec) for spec in P3109_SAMPLE]
#: ONNX targets whose saturate is fixed: FLOAT16 and BFLOAT16 never saturate, float4 and float6 always do.
FIXED_SATURATE = {"float16": False, "bfloat16": False, "float4e2m1": True, "float6e2m3": True, "float6e3m2": True}


def cases():
    found = []
    for i, (t, fi) in enumerate(FORMATS):
        combos = COMBINATIONS if FULL_SWEEP else [COMBINATIONS[(3 * i) % len(COMBINATIONS)]]
        for mode, saturate in combos:
            saturate = FIXED_SATURATE.get(t.name, saturate)
            if (t, fi, mode, saturate) not in found:
                found.append((t, fi, mode, saturate))
    return found


def case_id(case):
    t, fi, mode, saturate = case
    return f"{t.name}-{mode}-{'sat' if saturate else 'nosat'}"


CASES = cases()


def gfloat_values(fi):
    """Every value of gfloat's format (NaN excluded), as float64."""
    values = gfloat.decode_ndarray(fi, np.arange(1 << fi.k, dtype=np.uint64))
    return np.unique(values[~np.isnan(values)])


def float32_sweep(fi, rng, count):
    """float32 values around every value of the format, past its range and random across it."""
    values = gfloat_values(fi)
    finite = values[np.isfinite(values)]
    positive = finite[finite > 0]
    mids = (finite[1:] + finite[:-1]) / 2
    top, step = positive[-1], positive[-1] - positive[-2] if positive.size > 1 else positive[-1]
    anchors = np.concatenate([finite, mids, [top + step / 2, top + step, 2 * top, positive[0] / 2, positive[0] / 4]])
    anchors = anchors[np.abs(anchors) <= np.finfo(np.float32).max].astype(np.float32)
    anchors = np.concatenate([anchors, -anchors])
    spread = [anchors, np.nextafter(anchors, np.float32(np.inf)), np.nextafter(anchors, np.float32(-np.inf))]
    f32 = np.finfo(np.float32)
    specials = np.array(
        [0, -0.0, np.inf, -np.inf, np.nan, -np.nan, f32.max, -f32.max, f32.smallest_subnormal], np.float32
    )
    low = max(int(np.floor(np.log2(positive[0]))) - 3, -149)
    high = min(int(np.floor(np.log2(top))) + 3, 127)
    exponents = rng.integers(low, high + 1, count)
    mantissas = rng.integers(0, 1 << 23, count, dtype=np.uint32)
    random = (np.uint32(127) + exponents.clip(-126, 127).astype(np.uint32)) << np.uint32(23) | mantissas
    random = random.view(np.float32) * np.where(exponents < -126, np.float32(2.0) ** (exponents + 126), 1).astype(
        np.float32
    )
    random *= rng.choice(np.array([-1, 1], np.float32), count)
    return np.concatenate(spread + [specials, random.astype(np.float32)])


def gfloat_codes(fi, values, mode, saturate):
    rounded = gfloat.round_ndarray(fi, values.astype(np.float64), MODES[mode], saturate)
    return gfloat.encode_ndarray(fi, rounded).astype(np.uint64)


def compared(t, fi, values):
    """The values gfloat and numbacast both define the same way (see the module docstring)."""
    keep = np.ones(values.size, bool)
    if not fi.is_signed:  # gfloat 0.5.2 does not define negative values in unsigned formats
        keep &= ~np.signbit(values)
    if fi.num_nans == 0:  # gfloat refuses NaN in a format without; ONNX's float4 and float6 give +max
        keep &= ~np.isnan(values)
    if t.name == "float8e8m0":  # ONNX's own range and zero rules
        keep &= values >= 2.0**-127
    return values[keep]


def is_nan(fi, code):
    return bool(np.isnan(gfloat.decode_ndarray(fi, np.array([code], np.uint64))[0]))


def nan_sign(fi, code):
    return bool(code >> (fi.k - 1)) if fi.is_signed else False


def assert_same_codes(t, fi, values, ours, theirs):
    bad = np.flatnonzero(ours != theirs)
    several_nans = t.name in FIXED_SATURATE or t.name in ("float8e4m3fn", "float8e5m2")  # ONNX NaN codes
    wrong = [i for i in bad if not (several_nans and is_nan(fi, int(ours[i])) and is_nan(fi, int(theirs[i])))]
    assert not wrong, f"{len(wrong)} of {values.size} differ; first: " + ", ".join(
        f"{values[i]!r}: {int(ours[i]):#x} vs gfloat {int(theirs[i]):#x}" for i in wrong[:6]
    )


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_encode_matches_gfloat(case):
    t, fi, mode, saturate = case
    rng = np.random.default_rng(CASES.index(case))
    values = compared(t, fi, float32_sweep(fi, rng, RANDOM_VALUES))
    conversion = Conversion.make(numbacast.FLOAT, t, saturate, rounding=mode)
    ours = converter_harness([conversion])(values)[0].astype(np.uint64)
    assert_same_codes(t, fi, values, ours, gfloat_codes(fi, values, mode, saturate))


@pytest.mark.parametrize("extended", [True, False])
def test_a_format_without_an_exponent_field_rounds_as_gfloat(extended):
    """Signed binary4p4: every value is subnormal, the largest too, so that the
    value of its code cannot be read as an exponent and a mantissa (the full
    sweep found 1.875 giving NaN with saturate=True: its clamp came from such a
    reading).  Every (rounding, saturate)."""
    t, fi = p3109_pair(4, 4, True, extended)
    values = compared(t, fi, float32_sweep(fi, np.random.default_rng(4), 1 << 12))
    for first in range(0, len(COMBINATIONS), 3):  # a harness runs up to three conversions
        combinations = COMBINATIONS[first : first + 3]
        conversions = [Conversion.make(numbacast.FLOAT, t, saturate, rounding=mode) for mode, saturate in combinations]
        for (mode, saturate), ours in zip(combinations, converter_harness(conversions)(values)):
            assert_same_codes(t, fi, values, ours.astype(np.uint64), gfloat_codes(fi, values, mode, saturate))


@pytest.mark.parametrize("t,fi", FORMATS, ids=lambda x: getattr(x, "name", ""))
def test_every_code_decodes_as_gfloat_decodes_it(t, fi):
    codes = np.arange(1 << fi.k, dtype=np.uint64)
    ours = converter_harness([Conversion.make(t, numbacast.DOUBLE)])(codes.astype(f"u{t.storage.itemsize}"))[0]
    theirs = gfloat.decode_ndarray(fi, codes)
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    same = ~np.isnan(theirs)
    assert np.array_equal(ours[same].view(np.uint64), theirs[same].view(np.uint64))  # -0.0 included


def ours(values, target, source=numbacast.FLOAT, **options):
    """numbacast's codes (or values, for FLOAT and DOUBLE) of a cast with these options."""
    target, source = numbacast.resolve(target), numbacast.resolve(source)
    return converter_harness([Conversion.make(source, target, **options)])(values)[0]


def test_the_documented_differences():
    """Rule: docs/rules.md#rule-gfloat-differences"""
    e4m3, ocp_e4m3 = numbacast.resolve("float8e4m3fn"), gformats.format_info_ocp_e4m3
    # NaN keeps its sign in the ONNX types; gfloat writes its one NaN code
    x = np.array([np.nan, -np.nan, 500.0], np.float32)
    assert ours(x, e4m3, saturate=False).tolist() == [0x7F, 0xFF, 0x7F]
    assert gfloat_codes(ocp_e4m3, x, "nearest_even", False).tolist() == [0xFF, 0xFF, 0xFF]
    # FLOAT16 and BFLOAT16 overflow to infinity whatever saturate says
    assert ours(np.array([1e6], np.float32), "float16", saturate=True).tolist() == [0x7C00]
    assert gfloat_codes(gformats.format_info_binary16, np.array([1e6]), "nearest_even", True).tolist() == [0x7BFF]
    # float4 and float6 always saturate and give +max for NaN, where gfloat raises
    assert ours(np.array([np.nan, 100.0], np.float32), "float4e2m1", saturate=False).tolist() == [0x7, 0x7]
    with pytest.raises(ValueError):
        gfloat_codes(gformats.format_info_ocp_e2m1, np.array([100.0]), "nearest_even", False)
    # FLOAT8E8M0: ONNX's zero, range and sign rules, round_mode "up" by default
    e8m0, ocp_e8m0 = numbacast.resolve("float8e8m0"), gformats.format_info_ocp_e8m0
    y = np.array([0.0, 2.0**-130, -4.0, 3.0], np.float32)
    assert ours(y, e8m0).tolist() == [0, 0, 129, 129]
    assert ours(y, e8m0, rounding="nearest_even").tolist() == [0, 0, 129, 128]
    theirs = gfloat_codes(ocp_e8m0, np.array([0.0, 2.0**-130, 3.0]), "nearest_even", True).tolist()
    assert theirs[0] == 0 and theirs[1] > 0xFF and theirs[2] == 128  # below 2**-127: no code at all
    assert ours(y[:2], e8m0, saturate=False).tolist() == [0xFF, 0xFF]
    # unsigned P3109: a negative value is 0 when saturating, else NaN (gfloat 0.5.2 leaves it undefined)
    u = numbacast.p3109(8, 3, signed=False)
    z = np.array([-1.0, -1e-30, -np.inf], np.float32)
    assert ours(z, u, saturate=True).tolist() == [0, 0, 0]
    assert ours(z, u, saturate=False).tolist() == [0xFF, 0, 0xFF]
    assert ours(z, u, saturate=False, rounding="toward_negative").tolist() == [0xFF, 0xFF, 0xFF]
    # and NaN decodes with the sign bit of its code (gfloat: +NaN)
    assert np.signbit(ours(np.array([0x80], np.uint8), "double", source=numbacast.p3109(8, 3)))[0]
    assert exact.decode("float8e4m3fnuz", 0x80).kind == "nan"
