"""Rounding modes other than the ONNX default, generated per format like the codecs.

:data:`ROUNDINGS` names the modes of ``numbacast.cast(..., rounding=...)``:
IEEE 754's five (ties to even, ties away, toward zero, toward +inf, toward
-inf) and stochastic rounding.  The rules are in docs/rules.md (``rule-rounding-*``
and ``rule-stochastic-*``).

* :func:`rounding_encoder` is the general encoder: the bits of a float32 or
  float64 rounded once, in any mode, to any :class:`~numbacast.formats.description.FloatFormat`
  with subnormals (signed or not, with or without infinities, any NaN
  encoding).  The ONNX default (ties to even into the built-in types) keeps
  its own faster encoder, :func:`numbacast.engine.codecs.float_encoder`.
* :func:`e8m0_rounding_encoder` is FLOAT8E8M0's encoder in every mode; ONNX's
  ``round_mode`` up, down and nearest are three of them (:data:`E8M0_ROUND_MODES`).
* :func:`int_to_float64_rounded` converts a 64-bit integer to DOUBLE in a mode.
* :func:`integral_rounder` rounds a float to an integer value in a mode, for
  the integer targets (whose default, ONNX's rule, is :func:`integer_rounding`).
* :func:`random64` is the counter-based generator of stochastic rounding: the
  random bits of element ``i`` are a hash of (seed, ``i``) only.

Every encoder takes ``(bits, r)``: ``r`` is the element's random number
(``stochastic_bits`` wide, in the low bits of a uint64), ignored by the
deterministic modes.  Where a value lies between two neighbours ``lo`` and
``hi`` = ``lo`` + one step, with ``rem`` the dropped part in units of
``2**-s`` steps, stochastic rounding goes to ``hi`` when ``d + r >= 2**n``,
``d`` being ``rem`` rounded (ties to even) to ``n`` = ``stochastic_bits`` bits:
P(hi) is then ``d / 2**n``, exactly the fractional distance ``rem / 2**s``
whenever ``s <= n``.
"""

import functools
from fractions import Fraction

import numpy as np
from numba.extending import register_jitable

from ..formats import description as formats
from .bits import choose, float_bits, larger, leading_zeros, multiply_add, smaller
from .cache import helper_njit
from .codecs import cuts_rounded_code, signed_codes, source_arithmetic

_jit = helper_njit

NEAREST_EVEN = "nearest_even"
NEAREST_AWAY = "nearest_away"
TOWARD_ZERO = "toward_zero"
TOWARD_POSITIVE = "toward_positive"
TOWARD_NEGATIVE = "toward_negative"
STOCHASTIC = "stochastic"

#: The values of ``rounding=``, the default first.
ROUNDINGS = (NEAREST_EVEN, NEAREST_AWAY, TOWARD_ZERO, TOWARD_POSITIVE, TOWARD_NEGATIVE, STOCHASTIC)

#: FLOAT8E8M0 casts magnitudes, so its ONNX ``round_mode`` names these modes
#: (the first is the one a conversion keeps).
E8M0_ROUND_MODES = {
    "up": (TOWARD_POSITIVE,),
    "down": (TOWARD_ZERO, TOWARD_NEGATIVE),
    "nearest": (NEAREST_AWAY,),
}

#: The values of ONNX's ``round_mode`` (FLOAT8E8M0 targets), the default first.
ROUND_MODES = tuple(E8M0_ROUND_MODES)

#: Random bits per element when ``stochastic_bits`` is not given.
FULL_BITS = 64

#: The fewest bits a stochastic kernel's fast encoder drops where the target is
#: normal for it to round the subnormal range on that grid too (see
#: :func:`rounding_encoder`): it is then in doubt for about two in 2**shift of
#: those values, and a kernel checks again every element of a block holding
#: one (FLOAT16, shift 13: most blocks of 4,096 values below its normal range).
ALIGNED_MIN_SHIFT = 13

#: The fewest bits a stochastic kernel's fast encoder drops where the target is
#: normal for its check to test every value the same way, not only those below
#: the normal range (:func:`rounding_encoder`): a value of the normal range is
#: then in doubt, needlessly, for two in 2**shift of the random numbers (one
#: block of 4,096 values in 32 or fewer checked again: FLOAT to every float8,
#: float6 and float4 type), where telling the ranges apart took a compare and
#: an OR each 8 values.
TEST_EVERY_VALUE_MIN_SHIFT = 18

# The seed becomes a key by SplitMix64 (Steele, Lea and Flood 2014): its
# increment and its finaliser (Stafford's "Mix13"), a bijection of 64-bit
# integers with full avalanche.
GAMMA = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_MASK64 = (1 << 64) - 1
_MASK32 = (1 << 32) - 1
# The random numbers come from a two-round xorshift-multiply hash of 32-bit
# integers, a bijection (every step can be undone) with the lowest avalanche
# bias known for its construction: the shifts and multipliers TheIronBorn
# found by search for C. Wellons' hash prospector.  It uses 32-bit
# multiplies, which vector units have, where 64-bit ones are emulated; two
# of them an element where a three-round hash takes three.
_H1, _H2 = 0x21F0AAAD, 0xD35A2D97


@register_jitable
def mix64_py(z):
    """The SplitMix64 finaliser on a Python int (mod 2**64), or on a uint64 in ``@njit`` code."""
    z &= _MASK64
    z = ((z ^ (z >> 30)) * _M1) & _MASK64
    z = ((z ^ (z >> 27)) * _M2) & _MASK64
    return z ^ (z >> 31)


def hash32_py(x):
    """:func:`hash32` on a Python int (mod 2**32)."""
    x &= _MASK32
    x ^= x >> 16
    x = (x * _H1) & _MASK32
    x ^= x >> 15
    x = (x * _H2) & _MASK32
    return x ^ (x >> 15)


@register_jitable
def seed_key(seed):
    """The 64-bit key of a seed (any integer 0 <= seed < 2**64; a uint64 in
    ``@njit`` code), see :func:`random64`."""
    return mix64_py(mix64_py(seed) + GAMMA)


def random64_py(key, index):
    """:func:`random64` in Python (the reference of the tests and the docs)."""
    k1, k2 = key & _MASK32, key >> 32
    k3 = hash32_py(k1 ^ k2 ^ 0x9E3779B9)
    lo, hi = index & _MASK32, index >> 32
    top = hash32_py(lo ^ hash32_py(hi ^ k1))
    bottom = hash32_py(hash32_py(lo ^ hash32_py(hi ^ k2)) ^ k3)
    return top << 32 | bottom


#: The shift of :func:`hash32`'s first step.
_FIRST_SHIFT = 16


@_jit
def hash32(x):
    """The generator's hash of a 32-bit integer: ``x ^= x >> 16; x *= 0x21F0AAAD;
    x ^= x >> 15; x *= 0xD35A2D97; x ^= x >> 15`` (mod 2**32)."""
    x = np.uint32(x)
    return _hash32_rest(np.uint32(x ^ (x >> np.uint32(_FIRST_SHIFT))))


@_jit
def _hash32_rest(x):
    """:func:`hash32` after its first step ``x ^= x >> 16``."""
    x = np.uint32(x * np.uint32(_H1))
    x = np.uint32(x ^ (x >> np.uint32(15)))
    x = np.uint32(x * np.uint32(_H2))
    return np.uint32(x ^ (x >> np.uint32(15)))


@_jit
def random64(key, index):
    """64 random bits for element ``index`` of the stream of ``key``: a
    counter-based generator, :func:`random64_run` of the index's high and
    low 32 bits."""
    index = np.uint64(index)
    return random64_run(key, np.uint32(index >> np.uint64(32)), np.uint32(index & np.uint64(_MASK32)))


@_jit
def random64_run(key, hi, lo):
    """:func:`random64` of the index ``hi * 2**32 + lo``.  With the key's halves
    ``k1``, ``k2`` and ``k3 = hash32(k1 ^ k2 ^ 0x9E3779B9)``, the top half is
    ``hash32(lo ^ hash32(hi ^ k1))`` and the bottom half
    ``hash32(hash32(lo ^ hash32(hi ^ k2)) ^ k3)``.  Each half is a
    bijection of ``lo`` for a given ``hi``: no two of 2**32 consecutive
    elements share their top 32 bits.  Computed as :func:`random64_window`
    of the :func:`window_keys` of ``lo``'s window: in a loop over the
    ``lo`` of one window, with ``hi`` and the key fixed, everything but the
    last two or three :func:`hash32` (less their first steps) is computed
    once; a rounding that needs at most 32 random bits (FLOAT sources into
    every narrow format, in the normal range) computes the top half only."""
    return random64_window(window_keys(key, hi, lo), lo)


#: Consecutive indices share the high bits above these (a window, see
#: :func:`window_keys`).
WINDOW_BITS = _FIRST_SHIFT


@_jit
def window_keys(key, hi, lo):
    """What :func:`random64_window` takes for the indices ``hi * 2**32 + lo'``
    whose ``lo'`` has the bits of ``lo`` above :data:`WINDOW_BITS`: with
    ``a = hash32(hi ^ k1)`` and ``b = hash32(hi ^ k2)``, the first step
    of ``hash32(lo' ^ a)``, ``x ^ (x >> 16)``, is ``lo' ^ a ^ ((lo ^ a) >> 16)``
    for all of them (the shift sees only the bits they share), so a loop
    over a window XORs once where the step takes a shift and two XORs; and
    likewise for ``b``.  ``(a', b', k3)``."""
    key = np.uint64(key)
    k1 = np.uint32(key & np.uint64(_MASK32))
    k2 = np.uint32(key >> np.uint64(32))
    k3 = hash32(np.uint32(k1 ^ k2 ^ np.uint32(0x9E3779B9)))
    lo, shift = np.uint32(lo), np.uint32(_FIRST_SHIFT)
    a = hash32(np.uint32(np.uint32(hi) ^ k1))
    b = hash32(np.uint32(np.uint32(hi) ^ k2))
    return np.uint32(a ^ ((lo ^ a) >> shift)), np.uint32(b ^ ((lo ^ b) >> shift)), k3


@_jit
def random64_window(keys, lo):
    """:func:`random64_run` of the index ``hi * 2**32 + lo``, ``keys`` the
    :func:`window_keys` of ``hi`` and of an ``lo`` in the same window."""
    a, b, k3 = keys
    lo = np.uint32(lo)
    top = _hash32_rest(np.uint32(lo ^ a))
    bottom = hash32(np.uint32(_hash32_rest(np.uint32(lo ^ b)) ^ k3))
    return np.uint64(np.uint64(np.uint64(top) << np.uint64(32)) | np.uint64(bottom))


def e8m0_rounding(round_mode):
    """The rounding an ONNX ``round_mode`` of FLOAT8E8M0 is."""
    return E8M0_ROUND_MODES[round_mode][0]


@functools.cache
def stochastic_lanes(shift, n, uint):
    """The stochastic decision in the lanes of ``uint``, for a conversion
    whose fixed shift (the target's normal range) is ``shift``:
    ``(reduce, normal_up, small_up, fits, lift)``.

    ``reduce(r)`` keeps the top ``m = min(n, width - 1)`` bits of the ``n``-bit
    random number ``r``; ``normal_up(rem, reduce(r))`` decides where ``shift``
    bits go and ``small_up(rem, s, reduce(r))`` where ``s`` bits go, for any
    ``s <= m``: with ``s <= n``, ``d + r >= 2**n`` (``d`` = ``rem * 2**(n - s)``)
    is ``(r >> (n - s)) + rem >= 2**s``, which needs the top ``s`` bits of
    ``r`` only.  ``fits`` is ``m``: a larger ``s`` takes :func:`stochastic_up`
    and all of ``r``.  ``lift(reduce(r))`` is the top ``shift`` bits of ``r``:
    added to bits whose low ``shift`` bits are ``rem``, it carries exactly
    when ``normal_up`` is true.  When ``n < shift`` (few random bits), ``d`` is
    ``rem`` rounded to ``n`` bits (ties to even), ``m`` is ``n`` and ``lift`` is None."""
    width = 32 if uint is np.uint32 else 64
    m = min(n, width - 1)
    drop = np.uint64(n - m)
    one = uint(1)
    reduce = _jit(lambda r: uint(np.uint64(r) >> drop))

    @_jit
    def small_up(rem, s, reduced):
        s = uint(s)
        return uint(uint(reduced >> uint(uint(m) - s)) + uint(rem)) >= uint(one << s)

    if shift <= m:
        keep, limit = uint(m - shift), uint(1 << shift)
        normal_up = _jit(lambda rem, reduced: uint(uint(reduced >> keep) + uint(rem)) >= limit)
        return reduce, normal_up, small_up, m, _jit(lambda reduced: uint(reduced >> keep))
    t = uint(shift - n)
    half, low, limit = uint(1 << (shift - n - 1)), uint((1 << (shift - n)) - 1), uint(1 << n)

    @_jit
    def normal_up_rounded(rem, reduced):
        kept = uint(uint(rem) >> t)
        rest = uint(uint(rem) & low)
        d = uint(kept + uint((rest > half) | ((rest == half) & ((kept & one) != 0))))
        return uint(d + reduced) >= limit

    return reduce, normal_up_rounded, small_up, m, None


@functools.cache
def stochastic_up(n):
    """``up(rem, s, r)``: whether stochastic rounding with ``n`` random bits
    (1 to 64) moves up, ``rem`` being the dropped part in units of
    ``2**-s`` steps (``s >= 1``) and ``r`` the element's random number
    (``r < 2**n``).  The ``rem`` rounded to ``n`` bits (ties to even), ``d``,
    plus ``r`` must reach ``2**n`` -- gfloat's ``RoundMode.Stochastic``."""
    one = np.uint64(1)
    ones = np.uint64((1 << 64) - 1)
    bits, top = np.uint64(n), np.uint64(63)
    limit = np.uint64(1 << n) if n < 64 else np.uint64(0)
    low56, top8 = np.uint64((1 << 56) - 1), np.uint64(0xFF)
    wide = n == 64

    @_jit
    def up(rem, s, r):
        # In uint64 lanes, both ways computed and one chosen, and no carry out
        # of 64 bits tested (LLVM would not vectorise it): this vectorises.
        rem64 = np.uint64(rem)
        s64 = np.uint64(s)
        r = np.uint64(r)
        exact = s64 <= bits
        # s <= n: d = rem * 2**(n - s) and d + r >= 2**n is
        # r >> (n - s) > 2**s - 1 - rem, the complement of rem in s bits
        sa = s64 if exact else bits
        mask = np.uint64(ones >> np.uint64(np.uint64(64) - sa))
        by_top = np.uint64(r >> np.uint64(bits - sa)) > np.uint64(mask ^ rem64)
        # s > n: d = rem / 2**(s - n) rounded to even (d <= 2**n, and < 2**56 when n = 64)
        t = np.uint64(s64 - bits) if not exact else one
        t = t if t < top else top
        kept = np.uint64(rem64 >> t)
        rest = np.uint64(rem64 & np.uint64(np.uint64(one << t) - one))
        half = np.uint64(one << np.uint64(t - one))
        d = np.uint64(kept + np.uint64((rest > half) | ((rest == half) & ((kept & one) != 0))))
        if wide:  # r >= 2**64 - d, with 0 < d < 2**56: the top 8 bits all ones, the rest large enough
            by_rounded = (d != 0) & ((r >> np.uint64(56)) == top8) & ((r & low56) >= np.uint64(np.uint64(1 << 56) - d))
        else:
            by_rounded = np.uint64(d + r) >= limit
        return by_top if exact else by_rounded

    return up


#: The parts of a stochastic encoder (see :func:`rounding_encoder`): a kernel
#: runs FAST over a block, with the random numbers REDUCE makes, then FULL
#: where CHECK says so.
FULL, FAST, CHECK, REDUCE = "full", "fast", "check", "reduce"
PARTS = (FULL, FAST, CHECK, REDUCE)


def sub_shift_value(source, target):
    """Below the target's normal range, ``sub_shift - max(e, 1)`` bits of the
    significand of a source of biased exponent ``e`` go."""
    return source.mantissa_bits - target.mantissa_bits + source.bias + target.min_normal_exponent


#: What a CHECK gives a value FAST rounds exactly, where others need a test:
#: all ones, so that the choice between it and the test's result is an OR
#: with the comparison's mask, not a blend (with AVX2 code 0.93-0.99x the
#: time of a stochastic cast, 4 instructions fewer a loop of 32 elements).
_SETTLED = np.uint32(0xFFFFFFFF)


@functools.cache
def _settled_above(uint, magnitude_mask, mantissa_bits, lowest):
    """``check(bits, r)``: 0 for magnitudes below the biased exponent ``lowest``, else 1."""
    mask = uint(magnitude_mask)
    low = uint(max(lowest, 0) << mantissa_bits)
    return _jit(lambda bits, r: np.uint32(uint(uint(bits) & mask) >= low))


@_jit
def _settled(bits, r):
    return np.uint32(1)


@_jit
def _identity(r):
    return r


@_jit
def _never(rem, s, r):
    return False


@_jit
def _never_fixed(rem, r):
    return False


def mode_flags(rounding, stochastic_bits=FULL_BITS):
    """``(even, away, positive, negative, stochastic)``: the constants an encoder
    branches on for ``rounding`` -- ties to even, ties away, up for positive
    values, up for negative values (toward_zero is all False) -- and the
    stochastic decision (:func:`stochastic_up`, or a function never called)."""
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {ROUNDINGS}, not {rounding!r}")
    random = rounding == STOCHASTIC
    return (
        rounding == NEAREST_EVEN,
        rounding == NEAREST_AWAY,
        rounding == TOWARD_POSITIVE,
        rounding == TOWARD_NEGATIVE,
        random,
        stochastic_up(stochastic_bits) if random else _never,
    )


def fits(source, target):
    """Whether :func:`rounding_encoder` can round from ``source`` (FLOAT32 or
    FLOAT64) to ``target``: the target's normal numbers are normal in the
    source and it has fewer mantissa bits."""
    return (
        source.bias + target.min_normal_exponent >= 1
        and target.mantissa_bits < source.mantissa_bits
        and target.bias <= source.bias
    )


def saturates_always(target):
    """Formats with neither infinity nor NaN have nothing but +/-max for an overflow."""
    return not target.has_inf and target.nan == formats.NAN_NONE


@functools.cache
def rounding_encoder(source, target, saturate, rounding, stochastic_bits=FULL_BITS, inf_to_nan=False, part=FULL):
    """``encode(bits, r) -> code``: the bits of a ``source`` float (FLOAT32 or
    FLOAT64) rounded once in ``rounding`` to ``target``, a format with
    subnormals that :func:`fits` the source.

    ``part`` (stochastic rounding only, see :data:`PARTS`): :data:`FAST`,
    ``encode(bits, reduce(r))``, rounds values in the target's subnormal
    range wrongly but vectorises; :data:`REDUCE` is that ``reduce``;
    :data:`CHECK` is ``check(bits, r) -> uint32``, zero where a value needs
    :data:`FULL`, the encoder itself.

    The magnitude is cut at the target's step: a fixed shift of the bits where
    the target is normal (a carry runs into the exponent, which is still
    right), a per-element shift of the significand below, where the step is
    the target's smallest subnormal.  Then, on the rounded magnitude:

    * above the largest finite value (an overflow): +/-max when saturating,
      for a format without infinity and NaN, and in the modes that round
      toward zero for this sign; else infinity where the format has one, NaN
      where it does not;
    * infinity: infinity where the format has one and ``saturate`` is False,
      else as an overflow that rounds away (``inf_to_nan``: NaN);
    * NaN: the format's NaN with the sign where it has one of each sign
      (formats without NaN: +max);
    * zero keeps its sign where the format has -0;
    * unsigned formats: a negative value that does not round to zero, and -inf,
      give 0 when saturating (or without NaN), else NaN.
    """
    assert target.subnormals and fits(source, target), (source, target)
    uint, real, from_bits = source_arithmetic(source)
    one = uint(1)
    src_m = source.mantissa_bits

    sign_shift = uint(source.sign_shift)
    magnitude_mask = uint(source.magnitude_mask)
    src_inf = uint(source.inf_code)
    mant_mask = uint((1 << src_m) - 1)
    implicit = uint(1 << src_m)
    shift = source.mantissa_bits - target.mantissa_bits
    rebias = uint((source.bias - target.bias) << target.mantissa_bits)
    rebias_parity = uint(((source.bias - target.bias) << target.mantissa_bits) & 1)
    normal_exponent = source.bias + target.min_normal_exponent
    normal_min = uint(normal_exponent << src_m)
    sub_shift = uint(shift + normal_exponent)  # less the source's exponent (at least 1)
    cap = uint(src_m + 2)  # shifting a significand this far leaves nothing, and half a step is above it
    fixed_shift, fixed_low = uint(shift), uint((1 << shift) - 1)
    fixed_half, fixed_half_less = uint(1 << (shift - 1)), uint((1 << (shift - 1)) - 1)
    # the rebias in the units of the source's mantissa field, added to the rounding's own bits
    modulus = 1 << (8 * np.dtype(uint).itemsize)
    unbias = -((source.bias - target.bias) << src_m) % modulus
    half_less_unbias, half_unbias, low_unbias = (
        uint((int(c) + unbias) % modulus) for c in (fixed_half_less, fixed_half, fixed_low)
    )
    unbias = uint(unbias)
    has_subnormal_range = normal_exponent > 1  # else the bit formula covers everything
    magic = real(2.0 ** (target.min_normal_exponent - target.mantissa_bits + source.mantissa_bits))
    magic_bits = uint(magic.view(uint))
    minus_half_step = real(-(2.0 ** (target.min_normal_exponent - target.mantissa_bits - 1)))
    toward_zero_mode = rounding == TOWARD_ZERO
    even, away, up_positive, up_negative, random, stochastic_full = mode_flags(rounding, stochastic_bits)
    # Below the normal range, |x| in steps of the target's smallest subnormal, 2**-step_exponent:
    # exact when 0 <= step_exponent (a product by 2**step_exponent, which never underflows)
    step_exponent = target.mantissa_bits - target.min_normal_exponent
    top_exponent = np.finfo(real).maxexp - 1
    below_half = np.nextafter(real(0.5), real(0))
    step_scale = real(2.0 ** min(step_exponent, top_exponent))
    # The modes but ties to even and stochastic round there in steps (the values below the
    # normal range are then below the largest and the clamp, in a format with a normal range
    # below its largest value)
    in_steps = (
        (toward_zero_mode or up_positive or up_negative or away)
        and 0 <= step_exponent <= top_exponent
        and target.largest >= Fraction(2) ** target.min_normal_exponent
    )
    if random:
        reduce, stochastic_normal, stochastic_small, small_bits, lift = stochastic_lanes(shift, stochastic_bits, uint)
    else:
        reduce, stochastic_normal, stochastic_small, small_bits, lift = _identity, _never_fixed, _never, 0, None
    if part == REDUCE:
        return reduce
    fast = part == FAST
    small_cap = uint(max(small_bits, 1))
    # FAST with the random bits added where the target is normal: below, the magnitude is moved
    # onto the grid of the source's ulp at the target's smallest normal (a float sum, rounded
    # to nearest even there), whose bits then carry as above; in doubt (CHECK) where that
    # rounding can change the decision: the dropped bits and the random ones sum to one
    # below a carry or to a carry with nothing left (FLOAT16: two in 2**13 of its subnormal
    # values; a target dropping fewer bits takes the fraction of a step in floating point)
    aligned = lift is not None and uint is np.uint32 and (shift >= ALIGNED_MIN_SHIFT or not has_subnormal_range)
    lift = lift or _identity
    settle_mask = uint(fixed_low ^ one)
    tests_every_value = shift >= TEST_EVERY_VALUE_MIN_SHIFT
    # Else FAST from float32 (32-bit lanes, small_bits <= 31): the target's subnormal range in floating point
    float_steps = not aligned and uint is np.uint32 and 0 < small_bits and step_exponent <= top_exponent
    fraction_scale, small_shift = real(2.0**small_bits), uint(small_bits)
    if part == CHECK and not aligned:
        # values below the target's normal range whose step drops more than small_bits bits
        # (FAST rounds the normal range exactly: a fixed shift, whatever the random bits)
        deepest = min(sub_shift_value(source, target) - small_bits, normal_exponent)
        deep = _settled_above(uint, source.magnitude_mask, src_m, deepest)
        if not float_steps:
            return deep
        # FAST's decision, fraction + r >= 2**small_bits, with the fraction cut to
        # small_bits bits, is the exact one unless fraction + r = 2**small_bits - 1
        doubt = uint((1 << small_bits) - 1)

        @_jit
        def settled_steps(bits, r):
            # FAST's fraction, computed alike (one computation once both are inlined in a
            # loop); for large values it is undefined, and then not chosen
            steps = from_bits(uint(uint(bits) & magnitude_mask)) * step_scale
            fraction = np.int32((steps - real(np.int32(steps))) * fraction_scale)
            return np.uint32(uint(uint(fraction) + uint(r)) != doubt) if deep(bits, r) == 0 else _SETTLED

        return settled_steps
    max_code = uint(target.max_code)
    signed = target.signed
    dst_sign = uint(1 << target.sign_shift) if signed else uint(0)
    saturating = bool(saturate) or saturates_always(target)
    if target.nan == formats.NAN_NONE:
        nan_pos = nan_neg = max_code
    elif target.nan == formats.NAN_NEGATIVE_ZERO:
        nan_pos = nan_neg = dst_sign
    else:
        nan_pos, nan_neg = uint(target.quiet_nan_code), uint(target.quiet_nan_code | dst_sign)
    if saturating:
        away_pos, away_neg = max_code, uint(max_code | dst_sign)
    elif target.has_inf:
        away_pos, away_neg = uint(target.inf_code), uint(target.inf_code | dst_sign)
    else:
        away_pos, away_neg = nan_pos, nan_neg
    inf_pos, inf_neg = away_pos, away_neg
    if target.has_inf and not saturating:
        inf_pos, inf_neg = uint(target.inf_code), uint(target.inf_code | dst_sign)
    if inf_to_nan and target.nan == formats.NAN_NEGATIVE_ZERO:
        inf_pos, inf_neg = nan_pos, nan_neg
    toward_pos = rounding in (TOWARD_ZERO, TOWARD_NEGATIVE)  # an overflow of a positive value gives +max
    toward_neg = rounding in (TOWARD_ZERO, TOWARD_POSITIVE)
    if signed:
        over = (max_code if toward_pos else away_pos, uint(max_code | dst_sign) if toward_neg else away_neg)
        clamp, clamp_bits, signed_code = signed_codes(source, target, over, (inf_pos, inf_neg), (nan_pos, nan_neg))
    else:
        clamp, clamp_bits, signed_code = False, uint(0), None
    cut_after = cuts_rounded_code(clamp, random)
    clamp_code = uint(over[0]) if clamp else uint(0)
    normal_min_value = normal_min.view(real)
    half_normal_min = real(normal_min_value / 2)

    @_jit
    def aligned_sum(a, r):
        """FAST's magnitude bits plus the random ones, and whether ``a`` is below the normal range.

        Below it, the value ``v`` moves onto the grid of the source's ulp at
        half the smallest normal value ``n``: ``h = v / 2 + n / 2`` (exact
        but for its rounding to nearest even there), whose bits, in the
        binade below ``n``, then carry as a normal value's do (the code
        ``v / n`` times the target's step count).  ``h > v`` exactly when
        ``v < n`` (and never for NaN), so the larger of the two is the one to
        take: one float maximum (``half``, one fused multiply-add with FMA),
        where a choice of bits and of the base to subtract took two blends
        (a stochastic cast 0.84-0.93x the time with AVX2 code)."""
        if not has_subnormal_range:
            return uint(a + lift(r)), False
        value = from_bits(a)
        half = multiply_add(value, real(0.5), half_normal_min)
        subnormal = half > value
        return uint(float_bits(half if subnormal else value) + lift(r)), subnormal

    if part == CHECK:
        if not has_subnormal_range:  # the bits carry exactly everywhere
            return _settled

        @_jit
        def settled(bits, r):  # zero where lifted is one below a carry or a carry with nothing left
            a = uint(uint(bits) & magnitude_mask)
            if clamp:
                a = smaller(a, clamp_bits)
            lifted, subnormal = aligned_sum(a, r)
            check = np.uint32(uint(lifted + one) & settle_mask)
            return check if tests_every_value or subnormal else _SETTLED

        return settled
    # Unsigned formats: what a negative value that is not zero becomes.
    below_range = uint(0) if saturating or target.nan == formats.NAN_NONE else nan_pos
    zero = uint(0)

    # The magnitude rounded, one of three functions by the mode (a function of
    # the mode's steps only: a first cast compiles less of the encoder's code).
    if random and fast:  # all but the values CHECK picks (a kernel redoes those)

        @_jit
        def rounded_magnitude(x, a, subnormal, negative, r):
            exponent = uint(a >> uint(src_m))
            if aligned:  # the dropped bits and the random ones carry into the kept ones
                lifted, _ = aligned_sum(a, r)
                magnitude = uint(uint(lifted >> fixed_shift) - rebias)
            else:
                up = stochastic_normal(uint(a & fixed_low), r)
                magnitude = uint(uint(uint(a >> fixed_shift) + uint(up)) - rebias)
            if subnormal and float_steps:
                # |x| in target steps, exactly (a power of two times a float32 below 2**24): its
                # integer part, and its fraction in units of 2**-small_bits (exact, as at most
                # small_bits bits go, or CHECK says so); up when that and r reach 2**small_bits
                # below 2**24 (its conversions to int32 are defined), as CHECK computes it
                steps = from_bits(uint(x & magnitude_mask)) * step_scale
                q = np.int32(steps)
                fraction = np.int32((steps - real(q)) * fraction_scale)
                magnitude = uint(uint(q) + uint(uint(uint(fraction) + uint(r)) >> small_shift))
            elif subnormal and not aligned:
                body = uint(uint(a & mant_mask) | (implicit if exponent != zero else zero))
                s_small = uint(sub_shift - larger(exponent, one))  # at most small_bits, or CHECK says so
                s = uint(smaller(s_small, cap))
                q = uint(body >> s)
                rem = uint(body & uint(uint(one << s) - one))
                magnitude = uint(q + uint(stochastic_small(rem, smaller(s_small, small_cap), r)))
            return magnitude

    elif random:

        @_jit
        def rounded_magnitude(x, a, subnormal, negative, r):
            # Cut at the target's step: ``s`` bits of ``body`` go (a fixed shift
            # where the target is normal; below, the significand by a shift that
            # grows as the exponent falls, capped where nothing is left).
            exponent = uint(a >> uint(src_m))
            body = a
            s = fixed_shift
            base = rebias
            if subnormal:
                body = uint(uint(a & mant_mask) | (implicit if exponent != zero else zero))
                s = uint(smaller(uint(sub_shift - larger(exponent, one)), cap))
                base = zero
            q = uint(body >> s)
            rem = uint(body & uint(uint(one << s) - one))
            s_true = np.uint64(np.uint64(sub_shift) - np.uint64(larger(exponent, one)))
            up = stochastic_full(rem, s_true, r) if subnormal else stochastic_normal(rem, reduce(r))
            magnitude = uint(uint(q + uint(up)) - base)
            return magnitude

    else:

        @_jit
        def rounded_magnitude(x, a, subnormal, negative, r):
            # Normal range: (a + add) >> shift rounds: add 0 truncates, the
            # dropped bits all ones round any remainder up, half ties away,
            # half - 1 + the kept last bit ties to even; the carry may run
            # into the exponent, which is still right.  The exponent's rebias
            # is taken off before the shift, in the same sum (one instruction
            # less a vector): a magnitude below half the target's smallest
            # normal then wraps to another value, but is subnormal, and
            # replaced below (without a subnormal range, nothing wraps).
            add = unbias
            if even:
                add = uint(half_less_unbias + uint(uint(uint(a >> fixed_shift) ^ rebias_parity) & one))
            elif away:
                add = half_unbias
            elif up_positive:
                add = unbias if negative else low_unbias
            elif up_negative:  # a float comparison (one instruction; -0 and NaN end alike either way)
                add = low_unbias if from_bits(x) < 0 else unbias
            magnitude = uint(uint(a + add) >> fixed_shift)
            if has_subnormal_range and subnormal and in_steps:
                # Below: x in steps of the smallest subnormal (fewer than 2**mantissa_bits,
                # x unclamped is |x| = a), rounded to an integer in the mode (one instruction;
                # ties away: the integer part of |x| + 0.5 less half an ulp of 0.5, which a
                # sum rounds up to the next integer exactly when the fraction is at least 0.5)
                if away:
                    magnitude = uint(np.int32(from_bits(a) * step_scale + below_half))
                elif up_positive:
                    magnitude = uint(abs(np.int32(np.ceil(from_bits(x) * step_scale))))
                elif up_negative:
                    magnitude = uint(abs(np.int32(np.floor(from_bits(x) * step_scale))))
                else:
                    magnitude = uint(np.int32(from_bits(a) * step_scale))
            elif has_subnormal_range and subnormal:
                # Below: the hardware rounds to nearest even on the grid of the
                # smallest subnormal (adding a power of two whose last bit is that
                # step); the exact difference from the value says how to move.
                value = from_bits(a)
                rounded = value + magic
                magnitude = uint(float_bits(rounded) - magic_bits)
                diff = (rounded - magic) - value  # exact: the rounded value less the value
                if toward_zero_mode:
                    magnitude = uint(magnitude - uint(diff > 0))
                elif away:  # the ties that went down to even go up
                    magnitude = uint(magnitude + uint(diff == minus_half_step))
                elif up_positive or up_negative:
                    outward = negative if up_negative else not negative  # the magnitude rounds up
                    magnitude = uint(uint(magnitude + uint((diff < 0) & outward)) - uint((diff > 0) & (not outward)))
            return magnitude

    @_jit
    def encode(bits, r):
        x = uint(bits)
        negative = (x >> sign_shift) != zero
        a = uint(x & magnitude_mask)
        nan = from_bits(a) != from_bits(a)  # float comparisons: one instruction each
        if clamp and not cut_after:
            a = smaller(a, clamp_bits)
        subnormal = from_bits(a) < normal_min_value
        magnitude = rounded_magnitude(x, a, subnormal, negative, r)
        if cut_after:
            magnitude = smaller(magnitude, clamp_code)
        if signed:
            code = signed_code(x, a, magnitude, nan)
        else:
            code = magnitude
            if magnitude > max_code:
                code = max_code if toward_pos else away_pos
            if a == src_inf:
                code = inf_pos
            if negative and (magnitude != zero or a >= src_inf):
                code = below_range
            if a > src_inf:
                code = nan_pos
        return code

    return encode


@functools.cache
def e8m0_rounding_encoder(source, saturate, rounding, stochastic_bits=FULL_BITS, part=FULL):
    """``encode(bits, r) -> code``: the bits of a ``source`` float (FLOAT32 or
    FLOAT64) to FLOAT8E8M0 in ``rounding``, ignoring the sign.

    The power of two ``2**k`` is read off the exponent field (a subnormal
    float32 is first normalised exactly, ``(1 + m * 2**-23) - 1``) and moved
    up one by the mode: toward_positive (ONNX's "up") when any mantissa bit is
    set, nearest_away ("nearest") when the mantissa is at least one half, ties
    to even when above one half or at one half with ``k`` odd, stochastic with
    probability ``|x| / 2**k - 1``; toward_zero ("down") never.  Zero and
    values below ``2**-127`` give the smallest code when saturating, else NaN;
    infinity and values above ``2**127`` the largest code or NaN; NaN gives NaN.  The ``part`` are those
    of :func:`rounding_encoder`; :data:`CHECK` is never zero (the step is fixed)."""
    if part == CHECK:
        return _settled
    uint, real, from_bits = source_arithmetic(source)
    target = formats.FLOAT8E8M0
    rounding = {TOWARD_NEGATIVE: TOWARD_ZERO}.get(rounding, rounding)
    even, away, up_positive, up_negative, random, stochastic = mode_flags(rounding, stochastic_bits)
    reduce, stochastic = (
        stochastic_lanes(source.mantissa_bits, stochastic_bits, uint)[:2] if random else (_identity, _never_fixed)
    )
    if part == REDUCE:
        return reduce
    if part == FULL:
        fixed_up = stochastic
        stochastic = _jit(lambda rem, r: fixed_up(rem, reduce(r)))
    mant_bits = uint(source.mantissa_bits)
    mant_mask = uint((1 << source.mantissa_bits) - 1)
    half = 1 << (source.mantissa_bits - 1)
    lift = uint(half - 1 if even else half if away else (1 << source.mantissa_bits) - 1 if up_positive else 0)
    offset_parity = uint((target.bias - source.bias) & 1)  # a code's parity less its exponent's
    tie_up = uint(1 if even else 0)  # ties to even: a tie goes up when the code below it is odd
    mag_mask = uint(source.magnitude_mask)
    src_inf = uint(source.inf_code)
    nan = uint(target.quiet_nan_code)
    low = uint(0 if saturate else target.quiet_nan_code)
    high = uint(target.max_code if saturate else target.quiet_nan_code)
    offset = uint((target.bias - source.bias) % (1 << source.bits))
    wrapped = uint(1 << (source.bits - 1))
    max_code = uint(target.max_code)
    normalise_subnormals = source.min_normal_exponent > -target.bias - 1
    normal_min = uint(1 << source.mantissa_bits)
    one = real(1.0)
    one_bits = uint(one.view(uint))
    subnormal_offset = uint((target.bias - source.bias - (source.bias - 1)) % (1 << source.bits))
    assert (subnormal_offset ^ offset) & 1 == 0, source  # one parity for both offsets
    # saturating: magnitudes from 2**127 up (infinity too) are clamped to it first,
    # and a code below the smallest (negative as a signed integer) becomes it
    sint = np.int32 if uint is np.uint32 else np.int64
    top_value = real(2.0**127)
    top_bits = uint(top_value.view(uint))
    zero = uint(0)
    assert nan == (1 << target.bits) - 1
    # FLOAT saturating (not stochastic): the subnormals from 2**-127 up, a binade with one bit
    # less, are moved onto a normal binade's grid, 2a - 2**23 (exact), the values below to 0;
    # then the exponent field is the code (the biases are equal), and a NaN, let through the
    # clamp (x86's minps), gives a code above 254 that a min makes 255
    folded = normalise_subnormals and saturate and not random
    half_normal_min = uint(1 << (source.mantissa_bits - 1))
    assert not folded or offset == 0, source

    @functools.partial(helper_njit, inline="always")
    def exponent_moved(m):
        """The exponent field of the magnitude bits ``m`` moved up by the
        mode (``lift``, and for ties to even the code's parity): the mantissa
        added carries into it."""
        return uint(uint(uint(m + lift + uint(uint(uint(m >> mant_bits) ^ offset_parity) & tie_up)) >> mant_bits))

    if folded:  # the default cast from FLOAT: a function of its own, which Numba inlines (a first cast 0.01 s sooner)

        @functools.partial(helper_njit, inline="always")
        def encode_folded(bits, r):
            v = from_bits(uint(uint(bits) & mag_mask))
            a = float_bits(choose(v > top_value, top_value, v))  # NaN stays NaN: its code is above 255
            lifted = larger(a, half_normal_min)
            m = smaller(a, uint(uint(lifted + lifted) - normal_min))
            return smaller(exponent_moved(m), nan)

        return encode_folded

    @_jit
    def encode(bits, r):
        a = uint(uint(bits) & mag_mask)
        nan_in = from_bits(a) != from_bits(a)
        code_offset = offset
        if saturate:
            a = smaller(a, top_bits)
        m = a
        if normalise_subnormals and a < normal_min:
            m = uint(float_bits(from_bits(uint(a | one_bits)) - one))
            code_offset = subnormal_offset
        if random:
            code = uint(uint(uint(m >> mant_bits) + code_offset) + uint(stochastic(uint(m & mant_mask), r)))
        else:
            code = uint(exponent_moved(m) + code_offset)
        if saturate:
            result = uint(larger(sint(code), sint(0)))
        else:
            result = code
            if code > max_code:
                result = high
            if (code >= wrapped) | (a == 0):
                result = low
            if a == src_inf:
                result = high
        return uint(result | (nan if nan_in else zero))  # NaN is the code of all ones: or-ed, not selected

    return encode


@functools.cache
def int_to_float64_rounded(rounding, stochastic_bits=FULL_BITS, part=FULL):
    """``convert(value, r) -> float64``: an int64 or uint64 rounded in ``rounding``
    (every ``part`` is the converter but :data:`CHECK`, never zero)."""
    if part == CHECK:
        return _settled
    if part == REDUCE:
        return _identity
    even, away, up_positive, up_negative, random, stochastic = mode_flags(rounding, stochastic_bits)
    one = np.uint64(1)

    @_jit
    def convert(value, r):
        negative = value < 0
        u = np.uint64(value)
        if negative:
            u = np.uint64(0) - u
        s = larger(11 - np.int64(leading_zeros(u)), 0)
        shift = np.uint64(s)
        q = np.uint64(u >> shift)
        rem = np.uint64(u & np.uint64(np.uint64(one << shift) - one))
        half = np.uint64(np.uint64(one << shift) >> one)
        up = False
        if even:
            up = (rem > half) | ((rem == half) & ((q & one) != 0))
        elif away:
            up = rem >= half
        elif up_positive:
            up = (rem != 0) & (not negative)
        elif up_negative:
            up = (rem != 0) & negative
        elif random:
            up = stochastic(rem, larger(s, 1), r)
        if s > 0:
            q = np.uint64(q + np.uint64(up))
        magnitude = np.float64(q) * np.float64(2.0) ** s
        return -magnitude if negative else magnitude

    return convert


#: The processor's rounding of a float to an integral value in each mode that has one.
_TO_INTEGRAL_VALUE = {NEAREST_EVEN: np.rint, TOWARD_POSITIVE: np.ceil, TOWARD_NEGATIVE: np.floor, TOWARD_ZERO: np.trunc}


def integer_rounding(bits):
    """The rounding ONNX gives a float cast into an integer type of ``bits``
    bits, the default of ``rounding=`` there: toward zero from 8 bits up,
    ties to even for the 4- and 2-bit types."""
    return TOWARD_ZERO if bits >= 8 else NEAREST_EVEN


@functools.cache
def integral_rounder(rounding, real, stochastic_bits=FULL_BITS, part=FULL):
    """``round(x, r) -> real``: the float ``x`` (a ``real``, np.float32 or
    np.float64) rounded to an integer in ``rounding``, as a float of its
    type (an integer value of it is exact); NaN and the infinities stay
    themselves, and the sign of a result of zero is the sign of ``x``.  The
    deterministic modes are the processor's roundings to an integral value
    (``llvm.rint``, ``trunc``, ``ceil``, ``floor``; ties away from the
    truncation and the exact remainder).  Stochastic rounding takes the
    fraction below the units place from the bits, in units of ``2**-s``,
    and moves the magnitude up by :func:`stochastic_up`, as the float
    encoders do a step of their target.  ``part`` (stochastic rounding, see
    :data:`PARTS`): with 31 random bits or more, :func:`_fast_integral_rounder`;
    with fewer, every part is the rounder but :data:`CHECK` (never zero: the
    fast pass is already exact) and :data:`REDUCE` (the random number whole)."""
    if rounding == STOCHASTIC and stochastic_bits >= _FAST_BITS and part != FULL:
        return _fast_integral_rounder(real, stochastic_bits, part)
    if part == CHECK:
        return _settled
    if part == REDUCE:
        return _identity
    if rounding in _TO_INTEGRAL_VALUE:
        to_integral = _TO_INTEGRAL_VALUE[rounding]
        return _jit(lambda x, r: to_integral(real(x)))
    if rounding == NEAREST_AWAY:
        half, one, zero = real(0.5), real(1.0), real(0.0)

        @_jit
        def ties_away(x, r):
            x = real(x)
            t = np.trunc(x)
            return t + choose(np.abs(x - t) >= half, np.copysign(one, x), zero)

        return ties_away
    stochastic = mode_flags(rounding, stochastic_bits)[-1]
    fmt = _format_of(real)
    uint = source_arithmetic(fmt)[0]
    width = uint(8 * np.dtype(uint).itemsize)
    mantissa_mask, implicit = uint((1 << fmt.mantissa_bits) - 1), uint(1 << fmt.mantissa_bits)
    magnitude_mask, exponent_shift = uint(fmt.magnitude_mask), uint(fmt.mantissa_bits)
    units = fmt.bias + fmt.mantissa_bits  # the biased exponent from which every value is an integer
    one, zero, top_shift = uint(1), uint(0), width - uint(1)

    @_jit
    def stochastic_integer(x, r):
        x = real(x)
        a = uint(float_bits(x) & magnitude_mask)
        e = np.int64(a >> exponent_shift)
        s = units - larger(e, np.int64(1))  # bits of the significand below the units place
        m = uint(uint(a & mantissa_mask) | choose(e != 0, implicit, zero))
        cut = uint(smaller(uint(larger(s, np.int64(0))), top_shift))  # m < 2**(width - 1): m >> cut is 0 beyond
        whole = uint(m >> cut)
        rem = uint(m & uint(uint(one << cut) - one))
        up = (s > 0) & (rem != 0) & stochastic(rem, larger(s, np.int64(1)), r)
        rounded = np.copysign(real(whole + uint(up)), x)
        return choose(s > 0, rounded, x)  # NaN, the infinities and every integer: x itself

    return stochastic_integer


def _format_of(real):
    """The format of the NumPy float type ``real`` (np.float32 or np.float64)."""
    return formats.FLOAT32 if real is np.float32 else formats.FLOAT64


#: The random bits the fast pass of stochastic rounding into integers decides by.
_FAST_BITS = 31


@functools.cache
def _fast_integral_rounder(real, stochastic_bits, part):
    """The parts of stochastic rounding into integers with ``stochastic_bits``
    of 31 or more, but FULL: :data:`REDUCE` keeps the random number's top 31
    bits ``r``; :data:`FAST` moves ``|x|`` up when ``h + r >= 2**31``, ``h`` the
    top 31 bits of its fraction (``floor(p * 2**31)``, exact in the source's
    own float type: see ``high_fraction``), and leaves the infinities
    themselves and a NaN a NaN (which the integer conversion after it
    makes 0 in every target); :data:`CHECK` is zero where ``h + r`` is
    ``2**31 - 1``, the one sum where the dropped bits can change the
    decision: there FULL decides.  The fraction rounded to
    ``stochastic_bits`` bits lies between the same two points of the grid
    of ``2**-31`` as the fraction (at most ``(h + 1) * 2**-31``), and the
    random number below ``(r + 1) * 2**-31`` (in units of the same place):
    their sum is below ``(h + r + 2) * 2**-31``, under 1 when ``h + r`` is
    ``2**31 - 2`` or less, and at least ``(h + r) * 2**-31``.  Both terms are
    below ``2**31``, and the decision is the sign bit of their sum in
    32-bit lanes, where 32 bits each took an unsigned comparison (AVX2 has
    none: a minimum and an equality) and an unsigned conversion of the
    fraction (six instructions with AVX2 code).  FAST and CHECK run in the
    lanes of the source's type and 32-bit integer lanes (a float32 source 8
    to a 256-bit register, where float64 lanes took 4), where FULL takes
    64-bit integer lanes (:func:`stochastic_up`)."""
    drop = np.uint64(stochastic_bits - _FAST_BITS)
    if part == REDUCE:
        return _jit(lambda r: np.uint32(np.uint64(r) >> drop))
    scale, zero, one = real(2.0**_FAST_BITS), real(0.0), real(1.0)
    carry, edge = np.uint32(1 << _FAST_BITS), np.uint32((1 << _FAST_BITS) - 1)

    @_jit
    def high_fraction(a):
        """``floor(p * 2**31)`` of the fraction ``p`` of ``a >= 0`` (0 for NaN
        and infinities), as a uint32: ``p`` is ``a - floor(a)`` without
        rounding, ``p * 2**31`` a power-of-two multiple below ``2**31``,
        whose floor the processor's signed conversion (a truncation) gives,
        in vector lanes from float32 and float64 alike."""
        p = a - np.floor(a)
        return np.uint32(np.int32(choose(p == p, p, zero) * scale))

    if part == CHECK:

        @_jit
        def check(x, reduced):
            total = np.uint32(high_fraction(np.abs(real(x))) + np.uint32(reduced))
            return np.uint32(total ^ edge)  # zero at the edge alone: one instruction, where != took three

        return check

    uint, _, from_bits = source_arithmetic(_format_of(real))
    sign = uint(1 << (8 * np.dtype(uint).itemsize - 1))

    @_jit
    def fast(x, reduced):
        x = real(x)
        a = np.abs(x)
        up = np.uint32(high_fraction(a) + np.uint32(reduced)) >= carry  # h + r >= 2**31
        # exact: a fraction leaves floor(a) + 1 <= 2**23 in float32; a select of 1.0, where real(up) took
        # the mask into a vector, an integer conversion and a subtraction
        magnitude = np.floor(a) + choose(up, one, zero)
        return from_bits(float_bits(magnitude) | (float_bits(x) & sign))  # its sign bit clear: x's set

    return fast


def decodes_exactly(result, fmt):
    """Whether every value of ``fmt`` is a value of ``result`` (FLOAT32 or
    FLOAT64) and a normal code of ``fmt`` maps onto a normal one of ``result``."""
    top = (fmt.max_code >> fmt.mantissa_bits) - fmt.bias
    return (
        fmt.mantissa_bits <= result.mantissa_bits
        and top <= result.bias
        and fmt.min_normal_exponent - fmt.mantissa_bits >= result.min_normal_exponent - result.mantissa_bits
        and fmt.min_normal_exponent >= result.min_normal_exponent
    )


@functools.cache
def format_decoder(fmt, result):
    """``decode(code) -> value``: the exact value, as a ``result`` float
    (FLOAT32 or FLOAT64, see :func:`decodes_exactly`), of a code of any format
    with subnormals.  Bits above the format's width are ignored.

    Magnitude codes above the largest finite one are infinity (where the
    format has one, the code just above) or NaN; the code of -0 is NaN in
    formats that put their NaN there.  NaNs and infinities keep the sign bit
    of signed formats."""
    assert fmt.subnormals and decodes_exactly(result, fmt), (fmt, result)
    uint, real, from_bits = source_arithmetic(result)
    code_mask = uint((1 << fmt.bits) - 1)
    sign_shift = uint(fmt.sign_shift)
    signed = fmt.signed
    mag_mask = uint(fmt.magnitude_mask)
    exponent_shift = uint(fmt.mantissa_bits)
    widen = uint(result.mantissa_bits - fmt.mantissa_bits)
    rebias = uint(((result.bias - fmt.bias) << result.mantissa_bits) % (1 << result.bits))
    subnormal_scale = real(2.0 ** (fmt.min_normal_exponent - fmt.mantissa_bits))
    max_code = uint(fmt.max_code)
    has_inf = fmt.has_inf
    inf_code = uint(fmt.inf_code if fmt.has_inf else 0)
    negative_zero_nan = fmt.nan == formats.NAN_NEGATIVE_ZERO
    negative_zero = uint(1 << fmt.sign_shift)
    quiet_nan = uint(result.quiet_nan_code).view(real)
    infinity = uint(result.inf_code).view(real)
    result_sign_shift = uint(result.sign_shift)
    zero = uint(0)

    @_jit
    def decode(code):
        c = uint(uint(code) & code_mask)
        a = uint(c & mag_mask)
        value = from_bits(uint(uint(uint(a << widen) + rebias)))
        if (a >> exponent_shift) == zero:
            value = real(a) * subnormal_scale
        if a > max_code:
            value = infinity if has_inf and a == inf_code else quiet_nan
        if negative_zero_nan and c == negative_zero:
            value = quiet_nan
        negative = signed and (c >> sign_shift) != zero
        return from_bits(uint(float_bits(value) | uint(uint(negative) << result_sign_shift)))

    return decode
