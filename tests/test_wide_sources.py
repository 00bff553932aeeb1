"""FLOAT, DOUBLE and the 32/64-bit integers into every target: each target's
rounding midpoints (of FLOAT16 and BFLOAT16, those at the ends of each binade
and a random thirty-second of the rest), FLOAT's powers of two, and their
neighbours one unit away in the source, the specials, the range edges and a
random sample, against the exact reference."""

import functools
import os
import subprocess
import sys
import zlib
from fractions import Fraction

import exact
import ml_dtypes
import numpy as np
import pytest
from conftest import cast_in_serial_pieces, check_against_reference, variant_id, variants

import numbacast

WIDE_SOURCES = ["float", "double", "int32", "uint32", "int64", "uint64"]
#: Random bit patterns per pair, beside the targeted values (each is decoded and encoded exactly, in Python).
RANDOM_SAMPLE = 5_000


@functools.cache
def positive_values(target):
    """Sorted finite positive values of a target of at most 16 bits (Fractions)."""
    bits = 16 if target in ("float16", "bfloat16") else 8
    values = [exact.decode(target, c) for c in range(1 << bits)]
    magnitudes = {v.mag for v in values if v.kind == "finite" and v.mag > 0}  # each once, not once per sign
    return sorted(magnitudes, key=float)  # every such value is a float64 exactly: its order, without Fractions


def float_target_points(target, rng):
    """A small float target's values, the midpoints between them, the tie
    just above the largest value and the tie just below the smallest.  Of a
    16-bit target, the values and midpoints at the ends of every binade and
    a random thirty-second of the rest (some 32 a binade of FLOAT16, 4 of BFLOAT16)."""
    values = positive_values(target)
    if target == "float8e8m0":
        return values + [v * Fraction(3, 2) for v in values] + [values[0] / 2, values[-1] * 2]
    mids = [(a + b) / 2 for a, b in zip(values, values[1:])]
    top_ulp = values[-1] - values[-2]
    ends = [values[0] / 2, values[-1] + top_ulp / 2, values[-1] + top_ulp]
    if len(values) < 1 << 10:
        return values + mids + ends
    steps = [b - a for a, b in zip(values, values[1:])]  # a binade ends where the step changes
    edge = {i + d for i in range(1, len(steps)) if steps[i] != steps[i - 1] for d in (-2, -1, 0, 1)}
    keep = [i for i in range(len(mids)) if i in edge or i < 4 or rng.random() < 1 / 32]
    return [values[i] for i in keep] + [mids[i] for i in keep] + [values[-1]] + ends


def integer_ties(precision, max_bits, rng, per_length=40):
    """Integers at and next to the ties of a float of ``precision`` bits."""
    points = []
    for length in range(precision + 1, max_bits + 1):
        shift = length - precision
        for mantissa in rng.integers(1 << (precision - 1), 1 << precision, per_length).tolist():
            tie = (mantissa << shift) + (1 << (shift - 1))
            points += [tie - 1, tie, tie + 1]
    return points


def float32_midpoints(rng, n=4000):
    """Midpoints between random consecutive float32 values, over every exponent."""
    bits = rng.integers(0, 0x7F7FFFFF, n, dtype=np.uint32)
    lows = bits.view(np.float32)
    highs = np.nextafter(lows, np.float32(np.inf))
    return [(Fraction(float(a)) + Fraction(float(b))) / 2 for a, b in zip(lows, highs)]


def integer_points(target):
    """Values around the edges of an integer target and around zero."""
    t = numbacast.resolve(target).format
    edges = [t.min_value, t.max_value, 0]
    points = [e + d for e in edges for d in (-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2)]
    points += [n + 0.5 for n in range(-20, 20)] + [2**k for k in range(70)]
    return [Fraction(p) for p in points]


def target_points(source, target, rng):
    if target in ("float", "double"):
        precision = 24 if target == "float" else 53
        if source in ("float", "double"):
            return float32_midpoints(rng) if (source, target) == ("double", "float") else []
        return [Fraction(p) for p in integer_ties(precision, 64, rng)]
    if target == "bool":
        return [Fraction(0), Fraction(1, 2**149), Fraction(1, 2)]
    if numbacast.resolve(target).is_integer:
        return integer_points(target)
    return float_target_points(target, rng)


def nearby(source, points):
    """Source values equal or next to +/- each point (within its range)."""
    dtype = numbacast.resolve(source).storage
    if dtype.kind == "f":
        with np.errstate(over="ignore"):  # points beyond the source's range become inf
            found = np.array([float(p) for p in points] + [-float(p) for p in points], dtype=dtype)
        inf = dtype.type(np.inf)
        return np.concatenate([found, np.nextafter(found, inf), np.nextafter(found, -inf)])
    info = np.iinfo(dtype)
    ints = {int(p) + d for p in points for d in (-1, 0, 1)}
    ints |= {-i for i in ints}
    return np.array(sorted(i for i in ints if info.min <= i <= info.max), dtype=dtype)


def powers_of_two(source):
    """Every power of two of FLOAT's range, for a float source (with
    :func:`nearby`, the values just below them, where a rounded magnitude
    carries into the next binade), else none."""
    if numbacast.resolve(source).storage.kind != "f":
        return []
    return [Fraction(2) ** k for k in range(-149, 128)]


def specials(source):
    dtype = numbacast.resolve(source).storage
    if dtype.kind == "f":
        info = np.finfo(dtype)
        values = [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            -np.nan,
            info.max,
            -info.max,
            info.tiny,
            -info.tiny,
            info.smallest_subnormal,
            -info.smallest_subnormal,
            1.0,
            -1.0,
        ]
        return np.array(values, dtype=dtype)
    info = np.iinfo(dtype)
    return np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=dtype)


def random_values(source, rng):
    dtype = numbacast.resolve(source).storage
    raw = rng.integers(0, 256, RANDOM_SAMPLE * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype)


@pytest.mark.parametrize("source", WIDE_SOURCES)
@pytest.mark.parametrize("variant", variants(), ids=variant_id)
def test_midpoints_neighbours_specials_and_random(source, variant):
    target, options = variant
    rng = np.random.default_rng(zlib.crc32(f"{source}->{target}".encode()))
    x = np.concatenate(
        [
            nearby(source, target_points(source, target, rng) + powers_of_two(source)),
            specials(source),
            random_values(source, rng),
        ]
    )
    x = np.unique(x.view(f"u{x.dtype.itemsize}")).view(x.dtype)
    out = cast_in_serial_pieces(x, target, **options)
    codes = x.view(f"u{x.dtype.itemsize}")
    check_against_reference(source, codes, target, options, out)


#: The low halves of the float32 codes the quick BFLOAT16 sweep takes under
#: every top half: at and beside the tie, and at both ends.
BFLOAT16_LOW_HALVES = (0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF)


def test_float_to_bfloat16_under_every_top_half_matches_ml_dtypes():
    """FLOAT -> BFLOAT16, cut short by one addition (codecs.cuts_short): every
    float32 whose low half is at or beside the tie or at an end, under each
    of the 65,536 top halves (every bfloat16 code, its ties, NaN payloads,
    infinities, subnormals and the carries into the next binade and into
    infinity), against ml_dtypes' rounding to nearest even;
    ``NUMBACAST_FULL_SWEEP=1`` takes every float32 (all 2**32: 0 mismatches,
    18 s, on the host and with AVX2 code)."""
    lows = range(1 << 16) if os.environ.get("NUMBACAST_FULL_SWEEP") == "1" else BFLOAT16_LOW_HALVES
    tops = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    for chunk in range(0, len(lows), 1024):
        codes = (tops[:, None] | np.array(lows[chunk : chunk + 1024], np.uint32)[None, :]).reshape(-1)
        x = codes.view(np.float32)
        with np.errstate(invalid="ignore"):
            expected = x.astype(ml_dtypes.bfloat16).view(np.uint16)
        got = numbacast.cast(x, "bfloat16").view(np.uint16)
        assert np.array_equal(got, expected), codes[np.flatnonzero(got != expected)[:5]]


#: Casts, in a process whose kernels are compiled for haswell (AVX2, no
#: AVX-512DQ), of the arrays of an ``.npz`` file named "source:target:rounding"
#: (rounding "" for ONNX's rule) into another.
SHIFTS_PROBE = """
import sys
import numpy as np
import numbacast
from numbacast.engine.bits import converts_to_int64_in_vectors

given = np.load(sys.argv[1])
out = {key: numbacast.cast(given[key], key.split(":")[1], rounding=key.split(":")[2] or None) for key in given.files}
np.savez(sys.argv[2], by_shifts=not converts_to_int64_in_vectors(), **out)
"""


def test_wide_integer_targets_by_shifts_with_avx2_code(tmp_path):
    """Compiled for a CPU without a packed conversion of floats into 64-bit
    integers (haswell), FLOAT and DOUBLE go into INT64, UINT64 and UINT32 by
    the shifts of ``codecs.truncated_magnitude`` and selects: the exact
    reference's codes on each target's edges, FLOAT's powers of two and
    their neighbours, the specials and a random sample, by ONNX's rule
    (toward zero) and rounding up, whichever CPU runs the suite (where it
    has AVX-512DQ, the suite's own casts take the conversion instruction)."""
    rng = np.random.default_rng(64)
    arrays = {}
    for source in ("float", "double"):
        for target in ("int64", "uint64", "uint32"):
            x = np.concatenate(
                [
                    nearby(source, target_points(source, target, rng) + powers_of_two(source)),
                    specials(source),
                    random_values(source, rng),
                ]
            )
            for rounding in ("", "toward_positive"):
                arrays[f"{source}:{target}:{rounding}"] = x
    np.savez(tmp_path / "given.npz", **arrays)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_CPU_NAME="haswell", NUMBA_CPU_FEATURES="")
    args = [sys.executable, "-c", SHIFTS_PROBE, str(tmp_path / "given.npz"), str(tmp_path / "got.npz")]
    subprocess.run(args, env=env, check=True, capture_output=True)
    got = np.load(tmp_path / "got.npz")
    assert bool(got["by_shifts"])
    for key, x in arrays.items():
        source, target, rounding = key.split(":")
        options = {"rounding": rounding} if rounding else {}
        check_against_reference(source, x.view(f"u{x.dtype.itemsize}"), target, options, got[key])
