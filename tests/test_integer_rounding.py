"""``rounding=`` into the integer types (docs/rules.md, rule-rounding-integers) against the exact reference.

A float cast into an integer type is rounded to an integer in the mode
``rounding`` names, then saturated (8 to 64 bits) or cut to its low bits (4
and 2 bits) by ONNX's rules; without ``rounding`` it keeps ONNX's own rule
(toward zero, ties to even into 4 and 2 bits).  The reference
(``exact.encode``) rounds the exact value with the same decision as a float
target's step.  Every code of a 16-bit source is checked for a sample of
(target, mode) pairs, every pair on values around the integers at the edges
of each target; ``NUMBACAST_FULL_SWEEP=1`` sweeps every pair.
"""

import os
from fractions import Fraction

import exact
import numpy as np
import pytest
from conftest import check_against_reference, check_harness, every_16_bit_value
from numba import njit

import numbacast

FULL_SWEEP = os.environ.get("NUMBACAST_FULL_SWEEP") == "1"
MODES = ("nearest_even", "nearest_away", "toward_zero", "toward_positive", "toward_negative")
TARGETS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "int4", "uint4", "int2", "uint2")
SOURCES16 = ("float16", "bfloat16")


def every_pair():
    return [(target, mode) for target in TARGETS for mode in MODES]


def sample():
    """Each target in two modes, each mode in four or five targets."""
    return [(target, MODES[(i + k) % len(MODES)]) for i, target in enumerate(TARGETS) for k in (0, 2)]


PAIRS = every_pair() if FULL_SWEEP else sample()


def edge_values(target, dtype):
    """``dtype`` values at and between the integers around zero and around
    ``target``'s bounds (halves, a step either side of each), and beyond."""
    info = np.iinfo(numbacast.resolve(target).storage) if numbacast.resolve(target).bits >= 8 else None
    low, high = (int(info.min), int(info.max)) if info else (-16, 16)
    anchors = {k + f for k in range(-5, 6) for f in (0.0, 0.25, 0.5, 0.75)}
    for bound in (low, high):
        anchors.update(bound + k + f for k in range(-3, 4) for f in (0.0, 0.5))
    points = np.array(sorted(anchors), np.float64).astype(dtype)
    steps = [points, np.nextafter(points, dtype(np.inf)), np.nextafter(points, dtype(-np.inf))]
    info_f = np.finfo(dtype)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, info_f.max, -info_f.max, info_f.smallest_subnormal, 1e-30]
    return np.concatenate(steps + [np.array(specials, dtype)])


@pytest.mark.parametrize("target,rounding", PAIRS)
def test_every_16_bit_code(target, rounding):
    """Every value of FLOAT16 or BFLOAT16 (by turns), through DOUBLE as a
    16-bit source's table is made."""
    source = SOURCES16[PAIRS.index((target, rounding)) % len(SOURCES16)]
    check_harness(every_16_bit_value(source), "double", target, rounding)


@pytest.mark.parametrize("target", TARGETS)
def test_edges_in_every_mode(target):
    for rounding in MODES:
        check_harness(edge_values(target, np.float64), "double", target, rounding)
        check_harness(edge_values(target, np.float32), "float", target, rounding)


def test_the_public_cast_rounds_as_the_reference():
    """End to end: a table (FLOAT16), the serial and the parallel kernels
    (FLOAT, DOUBLE), each mode, against the reference."""
    rng = np.random.default_rng(4)
    big = (rng.standard_normal(40000) * 100).astype(np.float32)
    big[::7] = np.round(big[::7] * 2) / 2  # ties
    for values, source in (
        (edge_values("int8", np.float16), "float16"),
        (big, "float"),
        (edge_values("int64", np.float64), "double"),
    ):
        codes = values.view(f"u{values.dtype.itemsize}")
        for target in ("int8", "uint16", "int64", "int4"):
            for rounding in MODES:
                got = numbacast.cast(values, target, rounding=rounding)
                check_against_reference(source, codes, target, {"rounding": rounding}, got)


def test_the_default_is_onnx_rule():
    """No ``rounding``: toward zero into INT8, ties to even into INT4; the
    same as naming that mode."""
    x = np.array([2.5, -2.5, 3.5, -0.7, 127.9, -128.9], np.float32)
    assert numbacast.cast(x, "int8").tolist() == [2, -2, 3, 0, 127, -128]
    assert numbacast.cast(x, "int4").astype(int).tolist() == [2, -2, 4, -1, 0, -1]
    assert np.array_equal(numbacast.cast(x, "int8", rounding="toward_zero"), numbacast.cast(x, "int8"))
    assert np.array_equal(numbacast.cast(x, "int4", rounding="nearest_even"), numbacast.cast(x, "int4"))
    assert numbacast.cast(x, "int8", rounding="nearest_even").tolist() == [2, -2, 4, -1, 127, -128]
    assert numbacast.cast(x, "int8", rounding="toward_negative").tolist() == [2, -3, 3, -1, 127, -128]


def test_integer_sources_do_not_round():
    """From integers nothing rounds: every mode keeps the low bits."""
    x = np.arange(-300, 300, 7, dtype=np.int32)
    for rounding in MODES + ("stochastic",):
        assert np.array_equal(numbacast.cast(x, "int8", rounding=rounding), numbacast.cast(x, "int8"))
        assert np.array_equal(numbacast.cast(x, "uint4", rounding=rounding), numbacast.cast(x, "uint4"))


@pytest.mark.parametrize("bits", [1, 8, 64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stochastic_rounding_with_given_numbers(bits, dtype):
    """Each element goes up by its own random number exactly as the reference
    says (the fraction rounded to ``bits`` bits plus the number reaching
    ``2**bits``), at every kind of value: fractions of every size, ties,
    integers, values far below 1, beyond the range, halves with one bit
    below the units place, NaN and the infinities."""
    rng = np.random.default_rng(bits)
    units = np.finfo(dtype).nmant - 1  # from 2**units up the last bit of a value is its halves
    values = np.concatenate(
        [
            edge_values("int8", dtype),
            (rng.standard_normal(3000) * np.exp2(rng.integers(-30, 12, 3000))).astype(dtype),
            np.array([2.0**-140 if dtype is np.float32 else 2.0**-1070, 0.5 + 2.0**-20, 1 - 2.0**-23], dtype),
            np.repeat(np.array([2.0**units + 0.5, 2.0 ** (units + 1) - 0.5, -(2.0**units) - 2.5], dtype), 50),
        ]
    )
    r = rng.integers(0, 1 << min(bits, 63), values.size, dtype=np.uint64)
    if bits == 64:
        r |= rng.integers(0, 2, values.size, dtype=np.uint64) << np.uint64(63)
    source = "float" if dtype is np.float32 else "double"
    for target in ("int8", "uint4", "int64"):
        got = numbacast.cast(values, target, rounding="stochastic", random_bits=r, stochastic_bits=bits)
        codes = values.view(f"u{values.dtype.itemsize}").tolist()
        expected = [
            exact.encode(target, exact.decode(source, c), rounding="stochastic", random=(int(ri), bits))
            for c, ri in zip(codes, r.tolist())
        ]
        assert got.view(f"u{got.dtype.itemsize}").astype(np.uint64).tolist() == expected


def test_stochastic_rounding_is_unbiased_and_reproducible():
    x = np.full(200000, -2.3, np.float32)
    mean = float(numbacast.cast(x, "int8", rounding="stochastic", seed=1).astype(np.float64).mean())
    assert abs(mean + 2.3) < 0.01
    assert np.array_equal(
        numbacast.cast(x[:1000], "int16", rounding="stochastic", seed=9),
        numbacast.cast(x, "int16", rounding="stochastic", seed=9)[:1000],
    )


@njit
def _in_njit(a, seed):
    return (
        numbacast.cast(a, "int8", rounding="toward_negative"),
        numbacast.cast(a, "uint4", rounding="nearest_away"),
        numbacast.cast(a, "int16", rounding="stochastic", seed=seed),
    )


def test_in_njit_code_as_in_python():
    x = edge_values("int8", np.float32)
    floor, away, random = _in_njit(x, 5)
    assert np.array_equal(floor, numbacast.cast(x, "int8", rounding="toward_negative"))
    assert np.array_equal(away, numbacast.cast(x, "uint4", rounding="nearest_away"))
    assert np.array_equal(random, numbacast.cast(x, "int16", rounding="stochastic", seed=5))


def test_texts_take_onnx_rule_only():
    """Texts are read into integers exactly, by ONNX's rule: another mode is
    a ValueError saying so; the rule's own name is accepted."""
    texts = np.array(["2.5", "-2.5", "7"])
    assert numbacast.cast(texts, "int8", rounding="toward_zero").tolist() == [2, -2, 7]
    assert numbacast.cast(texts, "int4", rounding="nearest_even").astype(int).tolist() == [2, -2, 7]
    with pytest.raises(ValueError, match="ONNX's rule only \\(toward_zero\\), not rounding='nearest_even'"):
        numbacast.cast(texts, "int8", rounding="nearest_even")
    with pytest.raises(ValueError, match="not rounding='toward_zero'"):
        numbacast.cast(texts, "int4", rounding="toward_zero")


@pytest.mark.parametrize("bits", [31, 32, 40, 64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stochastic_decisions_at_the_fast_pass_edge(bits, dtype):
    """Random numbers whose top 31 bits ``r`` put ``h + r`` (``h`` the top 31
    bits of the fraction) at ``2**31 - 1``, where the fast pass leaves the
    decision to the full one, and at the sums around it, with the
    low bits all zeros and all ones, on values whose fractions have bits
    below ``2**-31`` (where those low bits decide) and on float32 values of
    every binade with a fraction (whose ``h`` the fast pass computes in
    float32); and likewise for the top 32 bits at ``2**32``, the edge of an
    earlier fast pass: the reference's decision every time."""
    rng = np.random.default_rng(bits)
    base = np.concatenate(
        [
            rng.standard_normal(200) * 40,
            0.5 + 2.0**-40 * rng.integers(-(2**12), 2**12, 100),
            np.array([2.0**-33, 2.0**-40, 2.0**-70, 1 - 2.0**-53, 7.0, -(2.0**-35) * 3, 2.0**-32, 2.0**-31]),
            np.exp2(np.arange(-40, 23)) * (1 + rng.random(63)),
            np.array([1 - 2.0**-24, 0.5 - 2.0**-25, 2.0**-149, 2.0**23 - 0.5, 0.5 + 2.0**-24]),
        ]
    ).astype(dtype)
    values, numbers = [], []
    for x in base.tolist():
        fraction = abs(Fraction(x)) - int(abs(x))
        for fast in (31, 32) if bits >= 32 else (31,):
            h = int(fraction * (1 << fast))
            for total in range((1 << fast) - 3, (1 << fast) + 1):
                top = total - h
                if 0 <= top < (1 << fast):
                    for low in {0, (1 << (bits - fast)) - 1}:
                        values.append(x)
                        numbers.append((top << (bits - fast)) | low)
    values = np.array(values, dtype)
    r = np.array(numbers, np.uint64)
    got = numbacast.cast(values, "int16", rounding="stochastic", random_bits=r, stochastic_bits=bits)
    codes = values.view(f"u{values.dtype.itemsize}").tolist()
    source = "float" if dtype is np.float32 else "double"
    expected = [
        exact.encode("int16", exact.decode(source, c), rounding="stochastic", random=(int(ri), bits))
        for c, ri in zip(codes, r.tolist())
    ]
    assert got.view(np.uint16).astype(np.uint64).tolist() == expected
