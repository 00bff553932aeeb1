"""Scalar codecs generated from the format descriptions of :mod:`numbacast.formats`.

Each factory takes format descriptions and returns an ``@njit`` function in
which every field of the formats is a compile-time constant, so one generic
algorithm serves every format and costs nothing at run time.  The factories
are memoised: a given set of arguments always returns the same dispatcher.

Rules (see DECISIONS.md):

* :func:`float_encoder` rounds the exact value of a float32/float64 (given as
  its bits) once, to nearest with ties to even, on an exponent range unbounded
  above; a rounded magnitude above the largest finite value is an overflow.
  Overflow and infinity give +/-max when saturating, else +/-inf where the
  format has one, else NaN.  NaN keeps its sign where the format has a signed
  NaN; formats without NaN take +max.  Results that round to zero keep their
  sign, except in formats without -0.
* :func:`e8m0_encoder` picks a power of two by ``round_mode`` (up, down,
  nearest: 2**(k+1) when x >= 1.5 * 2**k), ignoring the sign.
* :func:`float_decoder` gives the exact value of a code as a float64.
* :func:`float_to_int` truncates toward zero and saturates (8- to 64-bit
  targets; NaN gives 0) or rounds to nearest even and keeps the low bits
  (4- and 2-bit targets; NaN and inf give 0).
* :func:`int_to_float64` converts an integer to the float64 nearest it with
  ties *to odd*: exact below 2**53, and never the cause of a double rounding
  when the result is rounded again to a format of at most 51 mantissa bits.
"""

import functools

import numpy as np
from numba import njit

from . import formats
from .bits import float64_from_bits, float_bits, leading_zeros

_jit = functools.partial(njit, cache=False, nogil=True)

ROUND_MODES = ("up", "down", "nearest")


def overflow_codes(target, saturate, inf_to_nan=False):
    """(positive, negative) codes of a finite overflow and of an infinity.

    ``inf_to_nan`` is the Cast-19..23 rule for the FNUZ types: infinity
    becomes NaN even when saturating.
    """
    sign = 1 << target.sign_shift
    if saturate or target.nan == formats.NAN_NONE:
        overflow = (target.max_code, target.max_code | sign)
    elif target.has_inf:
        overflow = (target.inf_code, target.inf_code | sign)
    else:
        overflow = nan_codes(target)
    infinity = nan_codes(target) if inf_to_nan and target.nan == formats.NAN_NEGATIVE_ZERO else overflow
    return overflow, infinity


def nan_codes(target):
    """(positive, negative) codes that a NaN of either sign becomes."""
    sign = 1 << target.sign_shift
    if target.nan == formats.NAN_NONE:
        return target.max_code, target.max_code
    if target.nan == formats.NAN_NEGATIVE_ZERO:
        return sign, sign
    return target.quiet_nan_code, target.quiet_nan_code | sign


@functools.lru_cache(maxsize=None)
def float_encoder(source, target, saturate, inf_to_nan=False):
    """``encode(bits) -> code``: the bits of a ``source`` float (FLOAT32 or
    FLOAT64) rounded once to the signed float format ``target``."""
    src_sign_shift = source.sign_shift
    src_mag_mask = source.magnitude_mask
    src_mant_bits = source.mantissa_bits
    src_mant_mask = (1 << src_mant_bits) - 1
    src_inf = source.inf_code
    shift = source.mantissa_bits - target.mantissa_bits
    round_bias = (1 << (shift - 1)) - 1
    rebias = (source.bias - target.bias) << target.mantissa_bits
    # Source magnitudes from here up are normal numbers in the target.
    normal_exponent = source.bias + target.min_normal_exponent
    normal_min = normal_exponent << src_mant_bits
    subnormal_shift_base = normal_exponent + shift
    max_shift = src_mant_bits + 2  # any larger shift rounds to zero just the same
    dst_sign_shift = target.sign_shift
    max_code = target.max_code
    keep_negative_zero = target.has_negative_zero
    (ovf_pos, ovf_neg), (inf_pos, inf_neg) = overflow_codes(target, saturate, inf_to_nan)
    nan_pos, nan_neg = nan_codes(target)

    @_jit
    def encode(bits):
        x = np.int64(bits)
        negative = ((x >> src_sign_shift) & 1) != 0
        a = x & src_mag_mask
        # Normal in the target: round the mantissa, then re-bias the exponent.
        clipped = min(a, src_inf)
        normal = ((clipped + round_bias + ((clipped >> shift) & 1)) >> shift) - rebias
        # Subnormal (or zero) in the target: shift the full significand.
        exponent = a >> src_mant_bits
        significand = (a & src_mant_mask) | (np.int64(exponent > 0) << src_mant_bits)
        s = min(subnormal_shift_base - max(exponent, 1), max_shift)
        subnormal = (significand + ((1 << (s - 1)) - 1) + ((significand >> s) & 1)) >> s
        magnitude = normal if a >= normal_min else subnormal
        code = magnitude | (np.int64(negative) << dst_sign_shift)
        if magnitude == 0 and not keep_negative_zero:
            code = 0
        if magnitude > max_code:
            code = ovf_neg if negative else ovf_pos
        if a == src_inf:
            code = inf_neg if negative else inf_pos
        if a > src_inf:
            code = nan_neg if negative else nan_pos
        return code

    return encode


@functools.lru_cache(maxsize=None)
def e8m0_encoder(saturate, round_mode):
    """``encode(bits) -> code``: the bits of a float64 to FLOAT8E8M0."""
    if round_mode not in ROUND_MODES:
        raise ValueError(f"round_mode must be one of {ROUND_MODES}, not {round_mode!r}")
    target = formats.FLOAT8E8M0
    src = formats.FLOAT64
    up, nearest = round_mode == "up", round_mode == "nearest"
    mant_bits = src.mantissa_bits
    mant_mask = (1 << mant_bits) - 1
    half = 1 << (mant_bits - 1)
    mag_mask = src.magnitude_mask
    src_inf = src.inf_code
    nan = target.quiet_nan_code
    low = 0 if saturate else nan  # zero and values below 2**-127
    high = target.max_code if saturate else nan  # infinity and values above 2**127
    offset = target.bias - src.bias
    max_code = target.max_code

    @_jit
    def encode(bits):
        a = np.int64(bits) & mag_mask
        mantissa = a & mant_mask
        k = a >> mant_bits  # biased exponent of the source
        if up:
            k += np.int64(mantissa != 0)
        elif nearest:
            k += np.int64(mantissa >= half)
        code = k + offset
        if code < 0 or a == 0:
            code = low
        if code > max_code or a == src_inf:
            code = high
        if a > src_inf:
            code = nan
        return code

    return encode


@functools.lru_cache(maxsize=None)
def float_decoder(fmt):
    """``decode(code) -> float64``: the exact value of a code of ``fmt``.

    Bits above the format's width are ignored."""
    code_mask = (1 << fmt.bits) - 1
    sign_shift = fmt.sign_shift
    signed = fmt.signed
    mag_mask = fmt.magnitude_mask
    mant_bits = fmt.mantissa_bits
    mant_mask = (1 << mant_bits) - 1
    exp_all_ones = (1 << fmt.exponent_bits) - 1
    rebias = formats.FLOAT64.bias - fmt.bias
    widen = formats.FLOAT64.mantissa_bits - mant_bits
    subnormal_scale = 2.0 ** (fmt.min_normal_exponent - mant_bits)
    subnormals = fmt.subnormals
    nan = fmt.nan
    quiet_nan = formats.FLOAT64.quiet_nan_code
    f64_inf = formats.FLOAT64.inf_code

    @_jit
    def decode(code):
        c = np.int64(code) & code_mask
        a = c & mag_mask
        exponent = a >> mant_bits
        mantissa = a & mant_mask
        bits = ((exponent + rebias) << 52) | (mantissa << widen)
        if subnormals and exponent == 0:
            bits = np.int64(float_bits(np.float64(mantissa) * subnormal_scale))
        if nan == formats.NAN_IEEE and exponent == exp_all_ones:
            bits = quiet_nan if mantissa != 0 else f64_inf
        if nan == formats.NAN_ALL_ONES and a == mag_mask:
            bits = quiet_nan
        if nan == formats.NAN_NEGATIVE_ZERO and c == (1 << sign_shift):
            bits = quiet_nan
        negative = signed and (c >> sign_shift) != 0
        return float64_from_bits(np.uint64(bits) | (np.uint64(negative) << np.uint64(63)))

    return decode


_TWO_62 = 2.0**62


@functools.lru_cache(maxsize=None)
def float_to_int(fmt):
    """``convert(x) -> int``: a float64 to the integer format ``fmt``."""
    if fmt.bits < 8:
        mask = fmt.mask

        @_jit
        def to_small_int(x):
            r = np.rint(x)
            return np.int64(r) & mask if abs(r) < _TWO_62 else 0

        return to_small_int

    lowest, highest = float(fmt.min_value), float(fmt.max_value) + 1.0  # both exact
    min_value, max_value = fmt.min_value, fmt.max_value
    result = np.uint64 if fmt.bits == 64 and not fmt.signed else np.int64

    @_jit
    def to_int(x):
        if x != x:
            return result(0)
        if x >= highest:
            return result(max_value)
        if x < lowest:
            return result(min_value)
        return result(x)

    return to_int


@_jit
def int_to_float64(value):
    """An int64 or uint64 to float64, ties to odd (see the module docstring)."""
    negative = value < 0
    u = np.uint64(value)
    if negative:
        u = np.uint64(0) - u
    excess = 11 - np.int64(leading_zeros(u))  # bits beyond float64's 53
    shift = np.uint64(max(excess, 0))
    sticky = np.uint64((u & ((np.uint64(1) << shift) - np.uint64(1))) != 0)
    kept = (u >> shift) | sticky
    magnitude = np.float64(kept) * float64_from_bits((np.uint64(1023) + shift) << np.uint64(52))
    return -magnitude if negative else magnitude


_F64_SIGNIFICAND_BITS = formats.FLOAT64.mantissa_bits + 1
_F64_MIN_EXPONENT = formats.FLOAT64.min_normal_exponent
_F64_MAX_EXPONENT = formats.FLOAT64.bias
_F64_LARGEST = np.float64(np.finfo(np.float64).max)
_F64_SMALLEST = np.float64(np.finfo(np.float64).smallest_subnormal)


@_jit
def round_to_float64(significand, exponent, sticky, to_odd):
    """The float64 of ``(significand + d) * 2**exponent``, a uint64 significand
    with its top bit set: ``d`` is 0 when ``sticky`` is False, else some value
    in (0, 2**10) -- only the top 54 bits of the significand count exactly.

    ``to_odd`` False rounds to nearest, ties to even (overflow gives inf).
    ``to_odd`` True truncates and sets the lowest bit when inexact, so that
    rounding the result again to any format of at most 51 mantissa bits is a
    single correct rounding (a finite overflow gives the largest float64, a
    non-zero underflow the smallest)."""
    top = exponent + 63  # exponent of the leading bit
    if top > _F64_MAX_EXPONENT:
        return _F64_LARGEST if to_odd else np.inf
    shift = 64 - _F64_SIGNIFICAND_BITS + max(_F64_MIN_EXPONENT - top, 0)
    if shift > 64:  # below half the smallest subnormal
        return _F64_SMALLEST if to_odd else 0.0
    if shift == 64:
        kept, rest, half = np.uint64(0), significand, np.uint64(1 << 63)
    else:
        kept = significand >> np.uint64(shift)
        rest = significand & ((np.uint64(1) << np.uint64(shift)) - np.uint64(1))
        half = np.uint64(1) << np.uint64(shift - 1)
    if to_odd:
        kept |= np.uint64(rest != 0 or sticky)
    elif rest > half or (rest == half and (sticky or (kept & np.uint64(1)) != 0)):
        kept += np.uint64(1)
    biased = np.uint64(max(top - _F64_MIN_EXPONENT, 0))  # the exponent field, less the hidden bit's carry
    return float64_from_bits((biased << np.uint64(52)) + kept)
