"""numbacast.mx against gfloat 0.5.2: the MX formats' scales and elements, bit for bit.

For every MX format (mxfp8 e4m3 and e5m2, mxfp6 e2m3 and e3m2, mxfp4 e2m1,
mxint8, gfloat's ``format_info_mx*``) and every scale rule, each block of
float32 values is quantised by :func:`numbacast.mx.quantize` and checked:

* the scale code against the rule's exact formula (``reference_scale``,
  integers and fractions); for "floor" also against gfloat's
  ``compute_scale_amax`` (the OCP rule);
* the element codes against gfloat: each value divided by the block's scale
  (exact in float64), rounded by ``round_ndarray`` (ties to even, saturating,
  as ``encode_block`` does) and encoded by ``encode_ndarray`` -- and, on a
  sample of blocks, ``encode_block`` and ``quantize_block`` themselves.

The blocks: random ones (normal values times a random power of two from
2**-140 to 2**120 per block, with zeros, float32 subnormals and +/-max
sprinkled in) and crafted edge blocks -- all zeros (both signs), subnormal
blocks, blocks whose largest magnitude is each power of two of float32 and
one float32 step either side, +/-max float32, blocks holding +/-inf, and
every partial-block length from 1 to 31 (the last block of a row).  Blocks
holding NaN are not gfloat's to judge (its ``encode_block`` refuses NaN
elements for the types without NaN): they are checked against the rule
docs/rules.md#rule-mx-special-blocks in tests/test_mx.py.

CI checks, per format and scale rule, 256 random blocks, 126 edge blocks
(every 7th power of two) and the 31 partial blocks: 413, 9912 in all;
``NUMBACAST_FULL_SWEEP=1`` checks 16384 random blocks and 837 edge blocks
(every power of two) per format and rule: 414,048 in all.  Rule:
docs/rules.md#rule-mx-oracles
"""

import math
import os
from fractions import Fraction

import numpy as np
import pytest

import numbacast.mx as mx
from numbacast.formats.blocks import BLOCK_FORMATS

gfloat = pytest.importorskip("gfloat")
from gfloat import formats as gformats  # noqa: E402

FULL_SWEEP = os.environ.get("NUMBACAST_FULL_SWEEP") == "1"
RANDOM_BLOCKS = 16384 if FULL_SWEEP else 256
POWER_STEP = 1 if FULL_SWEEP else 7
RULES = ("floor", "ceil", "even", "rceil")

GFLOAT = {
    "mxfp8_e4m3": gformats.format_info_mxfp8_e4m3,
    "mxfp8_e5m2": gformats.format_info_mxfp8_e5m2,
    "mxfp6_e2m3": gformats.format_info_mxfp6_e2m3,
    "mxfp6_e3m2": gformats.format_info_mxfp6_e3m2,
    "mxfp4_e2m1": gformats.format_info_mxfp4_e2m1,
    "mxint8": gformats.format_info_mxint8,
}


def reference_scale(amax, fmt, rule):
    """The biased FLOAT8E8M0 code of a block of largest magnitude ``amax`` (a
    float), by the exact formula of ``rule``."""
    if math.isnan(amax):
        return 0xFF
    if math.isinf(amax):
        return 254
    if amax == 0:
        return 0
    a = Fraction(amax)
    floor_log2 = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** floor_log2 > a:
        floor_log2 -= 1
    if rule == "floor":
        k = floor_log2 - fmt.emax
    elif rule == "ceil":
        k = floor_log2 + (a != Fraction(2) ** floor_log2) - fmt.emax
    elif rule == "even":
        step = Fraction(2) ** (floor_log2 - fmt.mantissa_bits)
        q, r = divmod(a, step)
        rounded = (q + (r > step / 2 or (r == step / 2 and q % 2 == 1))) * step
        k = floor_log2 + (rounded >= Fraction(2) ** (floor_log2 + 1)) - fmt.emax
    else:
        k = -200
        while fmt.largest * Fraction(2) ** k < a:
            k += 1
        k = max(k, -200)
    return min(max(k, -127), 127) + 127


def random_blocks(rng, count):
    values = rng.standard_normal((count, 32)) * np.exp2(rng.integers(-140, 120, size=(count, 1)))
    special = rng.random((count, 32))
    values[special < 0.02] = 0.0
    values[(special >= 0.02) & (special < 0.03)] = -0.0
    sub = (special >= 0.03) & (special < 0.04)
    values[sub] = rng.integers(1, 1 << 23, size=sub.sum()) * 2.0**-149
    values[(special >= 0.04) & (special < 0.045)] = np.finfo(np.float32).max
    values = values.astype(np.float32)
    return values


def edge_blocks(rng):
    """Blocks of 32 float32: zeros, subnormals, each power of two (every
    POWER_STEP-th) and one step either side as the largest magnitude, +/-max, infinities."""
    f32 = np.float32
    blocks = [np.zeros(32, f32), np.full(32, -0.0, f32), (rng.integers(0, 1 << 23, 32) * 2.0**-149).astype(f32)]
    tiny = np.zeros(32, f32)
    tiny[5] = f32(2.0**-149)
    blocks.append(tiny)
    for e in range(-149, 128, POWER_STEP):
        p = f32(2.0**e)
        for top in (np.nextafter(p, f32(0)), p, np.nextafter(p, f32(np.inf))):
            if top == 0 or not np.isfinite(top):
                continue
            block = (rng.uniform(-1, 1, 32) * float(top)).astype(f32)
            block[rng.integers(32)] = top if rng.random() < 0.5 else -top
            blocks.append(block)
    big = np.finfo(f32).max
    blocks.append(np.array([big, -big] * 16, f32))
    for special in (np.inf, -np.inf):
        block = rng.standard_normal(32).astype(f32)
        block[3] = special
        blocks.append(block)
    return np.stack(blocks)


def gfloat_elements(fi, values, scale_codes):
    """gfloat's element codes of ``values`` (rows of one block) over the scales of ``scale_codes``."""
    scales = np.exp2(scale_codes.astype(np.float64) - 127)
    scaled = values.astype(np.float64) / scales[:, None]
    rounded = gfloat.round_ndarray(fi.etype, scaled, gfloat.RoundMode.TiesToEven, sat=True)
    return gfloat.encode_ndarray(fi.etype, rounded)


def check(name, values, rule, block_size=None):
    """Compare one array of blocks (rows of at most 32, each one block) with the references; the number of blocks."""
    fmt, fi = BLOCK_FORMATS[name], GFLOAT[name]
    q = mx.quantize(values, name, scale_rule=rule, block_size=block_size)
    scale_codes = q.scales.view(np.uint8)[:, 0]
    amax = np.abs(values.astype(np.float64)).max(axis=1)
    expected = np.array([reference_scale(float(a), fmt, rule) for a in amax])
    assert np.array_equal(scale_codes, expected), (name, rule, np.flatnonzero(scale_codes != expected)[:5])
    if rule == "floor":
        gscales = np.array([gfloat.compute_scale_amax(fi.etype.emax, row.astype(np.float64)) for row in values])
        assert np.array_equal(np.exp2(scale_codes.astype(np.float64) - 127), gscales)
    got = q.elements.view(np.uint8).astype(np.int64)
    want = gfloat_elements(fi, values, scale_codes).astype(np.int64)
    bad = np.argwhere(got != want)
    assert not bad.size, (name, rule, [(values[i, j], got[i, j], want[i, j]) for i, j in bad[:5]])
    return len(values)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("name", list(GFLOAT))
def test_random_and_edge_blocks_match_gfloat(name, rule):
    """Rule: docs/rules.md#rule-mx-scale-rules"""
    rng = np.random.default_rng(17)
    checked = check(name, random_blocks(rng, RANDOM_BLOCKS), rule)
    checked += check(name, edge_blocks(rng), rule)
    for length in range(1, 32):  # every partial-block length, as the last block of a row of 32 + length
        row = random_blocks(rng, 2).reshape(-1)[: 32 + length][None, :]
        q = mx.quantize(row, name, scale_rule=rule)
        whole = mx.quantize(row[:, :32], name, scale_rule=rule)
        part = mx.quantize(row[:, 32:], name, scale_rule=rule)
        assert q.scales.shape == (1, 2)
        assert np.array_equal(q.scales.view(np.uint8), np.concatenate([whole.scales, part.scales], 1).view(np.uint8))
        assert np.array_equal(
            q.elements.view(np.uint8), np.concatenate([whole.elements, part.elements], 1).view(np.uint8)
        )
        checked += check(name, row[:, 32:], rule)
    assert checked == RANDOM_BLOCKS + (837 if FULL_SWEEP else 126) + 31


@pytest.mark.parametrize("name", ["mxfp8_e4m3", "mxfp4_e2m1", "mxint8"])
def test_blocks_of_16_match_gfloat(name):
    """Blocks of 16 (the fixed-width path NVFP4 takes, here for MX elements):
    random and edge blocks cut in halves, and a block holding a NaN.  Rule: docs/rules.md#rule-mx-scale-rules"""
    rng = np.random.default_rng(23)
    halves = np.concatenate([random_blocks(rng, 64), edge_blocks(rng)]).reshape(-1, 16)
    assert check(name, halves, "floor", block_size=16) == len(halves)
    nan = halves[:4].copy()
    nan[2, 7] = np.nan
    q = mx.quantize(nan, name, block_size=16)
    assert np.array_equal(q.scales.view(np.uint8)[:, 0] == 255, [False, False, True, False])


def test_gfloat_block_functions_agree_on_a_sample():
    """gfloat's own ``quantize_block`` and ``encode_block`` (the per-block
    Python functions) on 16 random blocks per format: the dequantised values
    and the codes, scale first.  Rule: docs/rules.md#rule-mx-oracles"""
    rng = np.random.default_rng(5)
    for name, fi in GFLOAT.items():
        values = random_blocks(rng, 16)
        values[np.abs(values).max(axis=1) < 2.0**-100] = 1.0  # so that float32 holds every dequantised value
        q = mx.quantize(values, name)
        dequantized = mx.dequantize(q)
        for row, block, codes, scale in zip(values, dequantized, q.elements.view(np.uint8), q.scales.view(np.uint8)):
            v = row.astype(np.float64)
            expected = gfloat.quantize_block(fi, v, gfloat.compute_scale_amax)
            assert np.array_equal(block, expected.astype(np.float32))
            s = gfloat.compute_scale_amax(fi.etype.emax, v)
            assert list(gfloat.encode_block(fi, s, v / s)) == [int(scale[0]), *map(int, codes)]
