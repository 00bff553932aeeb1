"""The rounding modes (docs/rules.md, "Rounding modes") against the exact reference.

Each (target, rounding) sampled here is checked, with both values of
``saturate``, on every code of a 16-bit source and on float64 values at the
edges of the target (every value of the target, the midpoints between them, a
source step either side of each, the overflow threshold, the subnormal range,
zeros, infinities and NaN); a few also on float32 edges.  A cast from a 16-bit
source looks its results up in a table made by the DOUBLE conversion of its
exact values, so checking that conversion on those values checks it; the
conversions run in one serial loop (:func:`conftest.converter_harness`),
which compiles far faster than a parallel kernel each, and one test runs the
public ``cast`` end to end.  ``NUMBACAST_FULL_SWEEP=1`` checks every
combination (several minutes).
"""

import os
from fractions import Fraction

import exact
import numpy as np
import pytest
from conftest import check_against_reference, check_harness, converter_harness, every_16_bit_value

import numbacast
from numbacast.engine.conversion import Conversion

FULL_SWEEP = os.environ.get("NUMBACAST_FULL_SWEEP") == "1"
DIRECTED = ("nearest_away", "toward_zero", "toward_positive", "toward_negative")
SATURATING = {"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "float8e8m0"}
TARGETS = (
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
)
SOURCES16 = ("float16", "bfloat16", "int16", "uint16")


def every_combination():
    """(target, rounding, saturate) for every new mode of every narrow float target."""
    return [
        (target, mode, saturate)
        for target in TARGETS
        for mode in DIRECTED + (("nearest_even",) if target == "float8e8m0" else ())
        for saturate in ((False, True) if target in SATURATING else (True,))
    ]


def sample():
    """One mode per target, every mode at least twice; saturate=False for
    three of the five saturating targets (the IEEE overflow rules), True for
    the other two."""
    chosen = []
    for i, target in enumerate(TARGETS):
        modes = DIRECTED + (("nearest_even",) if target == "float8e8m0" else ())
        chosen.append((target, modes[i % len(modes)], target not in SATURATING or i % 2 == 1))
    return chosen


COMBINATIONS = every_combination() if FULL_SWEEP else sample()


def target_values(target, limit=3000, seed=0):
    """The finite values of ``target`` (a sample of at most ``limit`` for the
    16-bit ones), as Fractions, sorted, without duplicates."""
    bits = exact.STORAGE_BITS[target]
    codes = range(1 << bits)
    if (1 << bits) > limit:
        rng = np.random.default_rng(seed)
        codes = set(rng.integers(0, 1 << bits, limit).tolist()) | set(range(64)) | set(range(0x7B00, 0x7C01))
    values = set()
    for code in codes:
        x = exact.decode(target, code)
        if x.kind == "finite":
            values.add(x.value())
    return sorted(values)


def edge_values(target, dtype):
    """Source values of ``dtype`` around every value of ``target``, every
    midpoint, the overflow threshold and the bottom of the range."""
    values = target_values(target)
    positive = [v for v in values if v > 0]
    points = set(values)
    points.update((a + b) / 2 for a, b in zip(values, values[1:]))
    top = positive[-1]
    step = top - positive[-2]
    points.update((top + step / 2, top + step, 2 * top, positive[0] / 2, positive[0] / 4, positive[0] * 3 / 4))
    info = np.finfo(dtype)
    anchors = np.array([float(p) for p in points if abs(p) <= Fraction(float(info.max))], dtype)
    anchors = np.concatenate([anchors, -anchors])
    spread = [anchors, np.nextafter(anchors, dtype(np.inf)), np.nextafter(anchors, dtype(-np.inf))]
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, info.max, -info.max, info.smallest_subnormal, 1e-30]
    return np.concatenate(spread + [np.array(specials, dtype)])


@pytest.mark.parametrize("target,rounding,saturate", COMBINATIONS)
def test_rounding_against_the_exact_reference(target, rounding, saturate):
    """Every value of a 16-bit source and the float64 edges of the target."""
    source = SOURCES16[COMBINATIONS.index((target, rounding, saturate)) % len(SOURCES16)]
    values = np.concatenate([every_16_bit_value(source), edge_values(target, np.float64)])
    check_harness(values, "double", target, rounding, (saturate,))


@pytest.mark.parametrize(
    "target,rounding,saturate",
    every_combination()
    if FULL_SWEEP
    else [("float8e4m3fn", "toward_negative", False), ("float6e3m2", "nearest_away", True)],
)
def test_float32_edges(target, rounding, saturate):
    check_harness(edge_values(target, np.float32), "float", target, rounding, (saturate,))


@pytest.mark.parametrize("rounding", DIRECTED if FULL_SWEEP else ("toward_positive",))
def test_float_from_double_and_integers(rounding):
    rng = np.random.default_rng(1)
    floats = rng.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    floats = floats[np.isfinite(floats)].astype(np.float64)
    neighbours = np.nextafter(np.float32(floats), np.float32(np.inf)).astype(np.float64)
    halfway = floats + (neighbours - floats) / 2
    values = np.concatenate([floats, halfway, np.nextafter(halfway, np.inf), np.nextafter(halfway, -np.inf)])
    values = np.concatenate([values, [3.4028235677973366e38, 3.4028235677973362e38, 1e300, -1e300, 1e-46, -1e-46]])
    check_harness(values, "double", "float", rounding)
    big = rng.integers(-(1 << 63), (1 << 63) - 1, 2000, dtype=np.int64)
    big = np.concatenate([big, big >> 20, big >> 39, np.array([(1 << 63) - 1, -(1 << 63), (1 << 53) + 1], np.int64)])
    check_harness(big, "int64", "float", rounding)
    check_harness(big, "int64", "double", rounding)


def test_cast_takes_rounding_end_to_end():
    """The public cast, through the table of a 16-bit source, gives what the scalar converters give."""
    codes = np.arange(1 << 16, dtype=np.uint16)
    options = dict(saturate=False, rounding="toward_positive")
    out = numbacast.cast(codes.view(np.float16), "float8e5m2", **options)
    check_against_reference("float16", codes, "float8e5m2", options, out)


def test_rounding_is_plumbed_through_every_entry_point():
    """Dask arrays take ``rounding`` too (texts: tests/test_decisions.py)."""
    x = np.array([1.3, -1.3, 5.5], np.float64)
    with pytest.raises(ValueError, match="DOUBLE"):
        numbacast.cast(np.array(["1.5"]), "double", rounding="toward_zero")
    import dask.array as da

    lazy = numbacast.cast(da.from_array(x, chunks=2), "float4e2m1", rounding="toward_zero")
    assert lazy.compute().astype(np.float64).tolist() == [1.0, -1.0, 4.0]


NAN_PAYLOAD_TARGETS = tuple(t for t in TARGETS if t not in ("float16", "bfloat16", "float6e2m3"))
NON_STOCHASTIC = ("nearest_even",) + DIRECTED


def every_nan(dtype):
    """Every NaN of float32 (both signs, all 2**23 - 1 payloads); for float64
    the payloads of one, two and all bits, and 2**16 random ones."""
    if dtype == np.float32:
        payloads = np.arange(1, 1 << 23, dtype=np.uint32)
        top = np.uint32(0x7F800000)
    else:
        rng = np.random.default_rng(5)
        fixed = [1 << k for k in range(52)] + [(1 << 52) - 1, (1 << 51) + 1, (1 << 51) - 1]
        random = rng.integers(1, 1 << 52, 1 << 16, dtype=np.uint64)
        payloads = np.concatenate([np.array(fixed, np.uint64), random])
        top = np.uint64(0x7FF0000000000000)
    magnitudes = payloads | top
    sign = np.array(1, magnitudes.dtype) << np.array(8 * magnitudes.itemsize - 1, magnitudes.dtype)
    return np.concatenate([magnitudes, magnitudes | sign]).view(dtype)


@pytest.mark.parametrize("rounding", NON_STOCHASTIC)
def test_double_nans_become_the_float_quiet_nan_of_their_sign(rounding):
    """DOUBLE -> FLOAT writes FLOAT's quiet NaN of the NaN's sign, none of its
    payload (docs/rules.md), in every mode but stochastic: the processor's
    conversion, which the nearest and directed modes take, keeps the top of
    the payload, and the cast clears it."""
    values = every_nan(np.float64)
    want = [exact.encode("float", exact.Exact.nan(sign), rounding=rounding) for sign in (0, 1)]
    codes = numbacast.cast(values, "float", rounding=rounding).view(np.uint32).astype(np.int64)
    assert (codes == np.where(np.signbit(values), want[1], want[0])).all()


@pytest.mark.parametrize("source", ["float", "double"])
@pytest.mark.parametrize("target", NAN_PAYLOAD_TARGETS)
def test_every_nan_payload_gives_the_nan_code(source, target):
    """A NaN's payload never shows in its code: every NaN of the source, in
    every mode but stochastic and with both values of ``saturate``, gives the
    code the exact reference gives the NaN of its sign (FLOAT -> FLOAT8E8M0
    lets a NaN's bits run through its arithmetic, then cuts the result to the
    NaN code; docs/internals.md, "Kernel code")."""
    values = every_nan(np.float32 if source == "float" else np.float64)
    negative = np.signbit(values)
    s, t = numbacast.resolve(source), numbacast.resolve(target)
    options = [(m, saturate) for m in NON_STOCHASTIC for saturate in (True, False)]
    if source == "double" or not target.startswith("float8"):  # three of them, in turn (compiling costs)
        turn = 3 * NAN_PAYLOAD_TARGETS.index(target)
        options = [options[(turn + k) % len(options)] for k in range(3)]
    found = [Conversion.make(s, t, saturate, rounding=m) for m, saturate in options]
    for first in range(0, len(found), 3):
        group = found[first : first + 3]
        rows = converter_harness(group)(values)
        for conversion, row in zip(group, rows):
            rule = dict(saturate=conversion.saturate, rounding=conversion.rounding)
            want = [exact.encode(target, exact.Exact.nan(sign), **rule) for sign in (0, 1)]
            codes = row.astype(np.int64)
            assert (codes[~negative] == want[0]).all() and (codes[negative] == want[1]).all(), (conversion, want)
