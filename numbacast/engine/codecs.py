"""Scalar codecs generated from the format descriptions of :mod:`numbacast.formats`.

Each factory takes format descriptions and returns an ``@njit`` function in
which every field of the formats is a compile-time constant, so one generic
algorithm serves every format and costs nothing at run time.  The factories
are memoised: a given set of arguments always returns the same dispatcher.

Rules (see the conversion rules, docs/rules.md):

* :func:`float_encoder` rounds the exact value of a float32/float64 once,
  to nearest with ties to even, on an exponent range unbounded
  above; a rounded magnitude above the largest finite value is an overflow.
  Overflow and infinity give +/-max when saturating, else +/-inf where the
  format has one, else NaN.  NaN keeps its sign where the format has a signed
  NaN; formats without NaN take +max.  Results that round to zero keep their
  sign, except in formats without -0.
* :func:`float_decoder` gives the exact value of a code as a float32.
* :func:`float_to_int` truncates toward zero and saturates (8- to 64-bit
  targets; NaN gives 0) or rounds to nearest even and keeps the low bits
  (4- and 2-bit targets; NaN and inf give 0).
* :func:`int_to_float64` converts an integer to the float64 nearest it with
  ties *to odd*: exact below 2**53, and never the cause of a double rounding
  when the result is rounded again to a format of at most 51 mantissa bits.
"""

import functools

import numpy as np

from ..formats import description as formats
from .bits import (
    choose,
    clamp,
    converts_to_int64_in_vectors,
    float32_from_bits,
    float64_from_bits,
    float_bits,
    larger,
    narrows_to_bytes_by_packs,
    smaller,
)
from .cache import codec_njit

_jit = codec_njit


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


def source_arithmetic(source):
    """(uint, real, from_bits): the unsigned integer type as wide as a FLOAT32
    or FLOAT64 ``source``, its float type, and the bits-to-float function.

    Encoders wrap every intermediate result in ``uint``: Numba would widen
    32-bit arithmetic to 64 bits, and the narrow lanes are what lets LLVM
    vectorise a float32 kernel twice as wide.
    """
    if source == formats.FLOAT32:
        return np.uint32, np.float32, float32_from_bits
    return np.uint64, np.float64, float64_from_bits


@functools.cache
def signed_codes(source, target, over, inf, nan):
    """``(clamp, clamp_bits, code)`` for rounding a ``source`` float (FLOAT32 or
    FLOAT64) to the signed format ``target``, where an overflow, an infinity
    and a NaN give the (positive, negative) codes ``over``, ``inf`` and ``nan``.

    ``clamp``: an overflow and an infinity give one code, the largest finite
    magnitude or the one just above it (with the sign bit when negative), and
    neither case needs a test of its own: a magnitude's bits are clamped to
    ``clamp_bits``, the source bits of that code's value, before the
    rounding, or the rounded magnitude is cut at that code after it; the same
    in every mode, as rounding is monotone and that value exact.  Cut after,
    the code is known to LLVM to fit its width, which saves the mask before
    the packs that narrow codes to bytes where the CPU narrows by packs
    (:func:`cuts_rounded_code`, directed modes with AVX2: FLOAT ->
    FLOAT4E2M1 toward_negative 94 -> 89 instructions per 32 elements); with
    AVX-512's truncating narrowing there is no mask to save.  Stochastic
    rounding, which draws against the bits, always clamps them, and so does
    :func:`float_encoder`, whose code is the sum of two parts that LLVM
    cannot bound (cut after as well, its AVX2 loops were 1.07x as long).

    ``code(x, a, magnitude, is_nan)``: the code of the value of bits ``x``,
    whose magnitude bits are ``a`` (clamped or not) and rounded magnitude
    ``magnitude``; -0 gives 0 where the format has no -0.  The sign bit is put
    on last by one flip: the special codes of negative values are kept as they
    are before it, so that choosing between the codes of the two signs is a
    choice between equal constants where they differ only by the sign bit.
    Where the NaN codes allow it, NaN is put in by masks rather than a select
    (a vector blend, two or three times the cost): where magnitudes are
    clamped, a NaN's magnitude is the clamp's code and its own code a fixed
    step above it, added in (with the sign dropped where NaN has one code);
    else a NaN code with every magnitude bit set is or-ed in.
    """
    uint, real, _ = source_arithmetic(source)
    dst_sign = 1 << target.sign_shift
    (over_pos, over_neg), (inf_pos, inf_neg), (nan_pos, nan_neg) = (tuple(map(int, c)) for c in (over, inf, nan))
    # the value of the code of an overflow, the largest finite one or the one just above it
    # (a subnormal one in a format without an exponent field)
    top_value = float(target.value_of(over_pos))
    clamp = (
        over_pos == inf_pos < dst_sign
        and over_neg == inf_neg == over_pos | dst_sign
        and over_pos - target.max_code in (0, 1)
        and top_value < float(np.finfo(real).max)
    )
    clamp_bits = uint(real(top_value if clamp else 0).view(uint))
    over_neg_flip, inf_neg_flip, nan_neg_flip = (uint(c ^ dst_sign) for c in (over_neg, inf_neg, nan_neg))
    over_pos, inf_pos, nan_pos = uint(over_pos), uint(inf_pos), uint(nan_pos)
    sign_shift = uint(source.sign_shift)
    sign_move = uint(source.sign_shift - target.sign_shift)
    src_inf = uint(source.inf_code)
    max_code = uint(target.max_code)
    keep_negative_zero = target.has_negative_zero
    # How NaN is put in (every result before the flip is a magnitude, below the sign bit):
    magnitude_ones = uint(dst_sign - 1)
    # clamped, a NaN's magnitude is the clamp's code, over_pos: its code is a fixed step above it
    nan_stepped = clamp and nan_pos >= over_pos and nan_neg_flip in (nan_pos, nan_pos ^ dst_sign)
    # else a NaN code with every magnitude bit set is or-ed in, the sign kept or dropped
    nan_ored = not nan_stepped and nan_pos == magnitude_ones and nan_neg_flip == nan_pos
    nan_unsigned_ored = not nan_stepped and nan_pos == magnitude_ones and nan_neg == nan_pos
    nan_step = uint(nan_pos - over_pos if nan_stepped else 0)  # uint32 arithmetic: never below zero
    nan_drops_sign = nan_neg == nan_pos
    # Clamped into a format whose only code with the sign bit and a zero
    # magnitude is its one NaN (FNUZ, P3109): every result before the sign is
    # at most over_pos < dst_sign, a NaN's exactly dst_sign, and the sign
    # belongs to results from 1 to magnitude_ones, the ones whose sum with
    # magnitude_ones carries into the sign bit: an addition and an AND-OR (one
    # vpternlogd with AVX-512) where a zero test, a NaN test and a merge were.
    sign_by_carry = clamp and not keep_negative_zero and nan_stepped and nan_drops_sign and nan_pos == dst_sign
    dst_sign = uint(dst_sign)
    zero = uint(0)

    # The two commonest cases are functions of their own: less code to compile (a first cast 0.03 s sooner)
    if sign_by_carry:

        @_jit
        def code_by_carry(x, a, magnitude, is_nan):
            sign = uint(uint(x >> sign_move) & dst_sign)
            result = uint(magnitude + choose(is_nan, nan_step, zero))  # (an addition: a blend costs more with AVX2)
            return uint(result | (sign & uint(result + magnitude_ones)))

        return clamp, clamp_bits, code_by_carry

    if clamp and nan_stepped and keep_negative_zero:  # the saturating float8, float6 and float4 casts: the same

        @_jit
        def code_stepped(x, a, magnitude, is_nan):
            sign = uint(uint(x >> sign_move) & dst_sign)
            if nan_drops_sign:
                sign = choose(is_nan, zero, sign)
            return uint(uint(magnitude + choose(is_nan, nan_step, zero)) ^ sign)

        return clamp, clamp_bits, code_stepped

    @_jit
    def code(x, a, magnitude, is_nan):
        negative = (x >> sign_shift) != 0
        sign = uint(uint(x >> sign_move) & dst_sign)
        result = magnitude
        if not keep_negative_zero:  # -0 is +0: the sign flip leaves a zero magnitude alone
            # (the literal 0, measured: against it LLVM tests the magnitude's parts cheaply; against
            # a uint32 zero it built a chain of blends, FNUZ casts 1.4x as long with AVX2 code)
            sign = choose(magnitude != 0, sign, zero)
        if not clamp:
            result = choose(magnitude > max_code, choose(negative, over_neg_flip, over_pos), result)
            result = choose(a == src_inf, choose(negative, inf_neg_flip, inf_pos), result)
        if nan_stepped:
            result = uint(result + choose(is_nan, nan_step, zero))
            if nan_drops_sign:
                sign = choose(is_nan, zero, sign)
        elif nan_ored or nan_unsigned_ored:
            result = uint(result | choose(is_nan, nan_pos, zero))
            if nan_unsigned_ored:
                sign = choose(is_nan, zero, sign)
        else:
            result = choose(is_nan, choose(negative, nan_neg_flip, nan_pos), result)
        return uint(result ^ sign)

    return clamp, clamp_bits, code


@functools.cache
def cuts_rounded_code(clamp, draws_against_bits=False):
    """Whether an encoder of :func:`~numbacast.engine.rounding.rounding_encoder`
    that clamps (:func:`signed_codes`) cuts the rounded magnitude at the
    overflow's code rather than clamping the bits before the rounding: where
    the CPU narrows codes to bytes by packs, unless the rounding draws random
    numbers against the bits (stochastic)."""
    return clamp and not draws_against_bits and narrows_to_bytes_by_packs()


def float_encoder(source, target, saturate, inf_to_nan=False, nan_free=False):
    """``encode(value) -> code``: a ``source`` float (a FLOAT32 or FLOAT64
    value) rounded once to the signed float format ``target``; with
    ``nan_free`` the caller never needs a NaN's code (it writes those
    itself), so there is no NaN test and a NaN's code is unspecified.

    The floating-point adder rounds: a magnitude ``a`` in the binade of
    ``2**e`` (``e`` at least the target's smallest normal exponent, the
    target's subnormals counted in that binade) is added to ``B =
    2**(e + shift)``, ``shift`` the mantissa bits the target has fewer, whose
    last mantissa bit weighs one target step in that binade: the sum is ``B``
    plus ``a`` rounded to nearest even on the target's grid, ``r`` steps, in
    its low mantissa bits.  The code is then ``(sum >> shift) + r`` less a
    constant: the sum's top bits count ``B``'s exponent in binades of the
    target's codes, ``r`` the steps above them.  Seven vector instructions
    after the clamp where an integer rounding of the bits (normal numbers)
    and a sum with a fixed power of two (subnormal ones), of which the
    smaller was kept, took nine: where the code is stored as a byte, LLVM
    leaves out the mask of ``r``, whose top bits fall outside it (FLOAT ->
    FLOAT8E4M3FN, one thread, data in cache: 0.180 -> 0.156 ns/element with
    AVX-512 code, 0.214 -> 0.199 with AVX2 code; from DOUBLE 0.36 -> 0.32
    and 0.64 -> 0.57).  Where magnitudes are not clamped below the target's
    overflow, they are cut at the power of two above the target's largest
    value, whose code is above the largest: ``B`` stays finite, and ``r``
    below ``2**shift`` (else a sum that rounds up to a power of two would
    lose its top step into the exponent).

    Overflow, infinity, NaN and the sign are those of :func:`signed_codes`.
    A target that is the source cut short (BFLOAT16 of FLOAT32) without
    saturation takes :func:`_top_bits_encoder`.
    """
    if cuts_short(source, target, saturate, inf_to_nan):
        return _top_bits_encoder(source, target, nan_free)
    uint, real, from_bits = source_arithmetic(source)
    magnitude_mask = uint(source.magnitude_mask)
    exponent_mask = uint(source.inf_code)
    shift = source.mantissa_bits - target.mantissa_bits
    # the biased source exponent of the target's smallest normal binade, where its subnormals round too
    lowest = source.bias + target.min_normal_exponent
    # the binade above the target's largest value, where unclamped magnitudes stop
    top = source.bias + target.largest.numerator.bit_length() - target.largest.denominator.bit_length() + 1
    assert lowest >= 1 and top + shift < (1 << source.exponent_bits) - 1, (source, target)
    assert target.mantissa_bits + 1 < shift, (source, target)  # r, at most 2**(m + 1), stays below the shift
    lowest_bits, top_bits = uint(lowest << source.mantissa_bits), uint(top << source.mantissa_bits)
    step_exponent = uint(shift << source.mantissa_bits)
    steps_mask = uint((1 << shift) - 1)
    codes_below = uint((shift + lowest) << target.mantissa_bits)
    over, infinity = overflow_codes(target, saturate, inf_to_nan)
    nans = nan_codes(target)
    clamp, clamp_bits, signed_code = signed_codes(source, target, over, infinity, nans)
    # magnitudes are kept at most the overflow's value (clamped) or the power of two above the largest
    kept_bits = clamp_bits if clamp else top_bits
    nan_bits = _rounded_nan_bits(source, target, clamp, nans, top)
    nan_selected = nan_bits is not None and not nan_free
    shift = uint(shift)

    @_jit
    def encode(value):
        x = float_bits(real(value))
        a = uint(x & magnitude_mask)
        nan = False if nan_free else from_bits(a) != from_bits(a)
        kept = smaller(a, kept_bits)
        if nan_selected:  # the NaN's code rounded from a value's bits: one masked move with AVX-512
            kept = choose(nan, nan_bits, kept)
            nan = False
        bound = uint(uint(larger(kept, lowest_bits) & exponent_mask) + step_exponent)
        total = float_bits(from_bits(kept) + from_bits(bound))
        magnitude = uint(uint(uint(total >> shift) + uint(total & steps_mask)) - codes_below)
        return signed_code(x, a, magnitude, nan)

    return encode


def _rounded_nan_bits(source, target, clamp, nans, top):
    """The ``source`` bits of the value :func:`float_encoder` rounds to the
    magnitude of ``target``'s NaN code (``nans``: those of +NaN and -NaN),
    for a NaN to take its code by the rounding, selected in before it (its
    code's sign kept as a value's, or, in a format whose only NaN is the
    code of -0, given by the carry of :func:`signed_codes`); None where
    that does not serve, or where the CPU
    narrows codes to bytes by packs: AVX2's select of 32-bit lanes is a
    ``vblendvps`` (two or three micro-operations), and there the step of
    :func:`signed_codes` after the rounding is kept.  With AVX-512 the
    select is one masked move where the step took a compare, a move of the
    mask into a vector and a subtraction: FLOAT -> FLOAT8E4M3FN, one thread,
    data in cache, 0.157 -> 0.150 ns/element."""
    nan_positive, nan_negative = (int(c) for c in nans)
    sign = 1 << target.sign_shift
    keeps_sign = nan_negative == nan_positive | sign and nan_positive < sign and target.has_negative_zero
    only_nan = nan_positive == nan_negative == sign and not target.has_negative_zero
    if not clamp or not (keeps_sign or only_nan) or narrows_to_bytes_by_packs():
        return None
    value = target.value_of(nan_positive)  # the NaN's code read as a finite one's, in the binade of ``top`` at most
    assert value < 2 ** (top - source.bias + 1) and nan_positive > target.max_code, (source, target)
    uint, real, _ = source_arithmetic(source)
    return uint(real(float(value)).view(uint))


def cuts_short(source, target, saturate, inf_to_nan=False):
    """Whether :func:`float_encoder` rounds ``source`` into ``target`` by
    :func:`_top_bits_encoder`: ``target``'s codes are the top bits of
    ``source``'s, and it overflows to infinity."""
    return formats.top_bits_of(target, source) and not saturate and not inf_to_nan


def _top_bits_encoder(source, target, nan_free):
    """:func:`float_encoder` into a ``target`` whose codes are the top bits
    of ``source``'s (BFLOAT16 of FLOAT32, :func:`~numbacast.formats.description.top_bits_of`),
    overflowing to infinity: the source's code plus half a target step less
    one plus the last kept bit, cut short, is the code rounded to nearest
    even, whatever the sign (subnormals round alike, a carry runs into the
    exponent and from the largest value into infinity); a NaN is the quiet
    NaN of its sign.  Nine AVX-512 instructions per 16 elements, where the
    general encoder, which takes the sign apart, took thirteen.  NaN is found
    by a float comparison: with AVX2 code twelve instructions per 8
    elements where an unsigned comparison of the magnitude bits took
    fourteen (one thread, data in cache: 0.151 -> 0.130 ns/element)."""
    uint, real, _ = source_arithmetic(source)
    shift = uint(source.bits - target.bits)
    half_less_one = uint((1 << (source.bits - target.bits - 1)) - 1)
    quiet_nan, sign = uint(target.quiet_nan_code), uint(1 << target.sign_shift)
    one = uint(1)

    @_jit
    def encode_top_bits(value):
        x = float_bits(real(value))
        code = uint(uint(uint(x + half_less_one) + uint((x >> shift) & one)) >> shift)
        if nan_free:
            return code
        return choose(real(value) != real(value), uint(uint(uint(x >> shift) & sign) | quiet_nan), code)

    return encode_top_bits


@functools.cache
def float_decoder(fmt):
    """``decode(code) -> float32``: the exact value of a code of ``fmt``, a
    format narrower than FLOAT32 (every such format fits in it exactly).

    Bits above the format's width are ignored.  A format with FLOAT32's
    exponent (BFLOAT16) is moved up into place, NaN made the quiet NaN.
    Otherwise codes with a non-zero exponent field are moved into place and
    re-biased; a zero exponent field (a
    subnormal, or the smallest binade of a format without subnormals) is
    converted from an integer and scaled by a power of two.
    """
    result = formats.FLOAT32
    uint, real, from_bits = source_arithmetic(result)
    code_mask = uint((1 << fmt.bits) - 1)
    sign_shift = uint(fmt.sign_shift)
    signed = fmt.signed
    mag_mask = uint(fmt.magnitude_mask)
    mant_mask = uint((1 << fmt.mantissa_bits) - 1)
    exponent_field = uint(((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits)
    rebias = uint((result.bias - fmt.bias) << result.mantissa_bits)
    widen = uint(result.mantissa_bits - fmt.mantissa_bits)
    # Exponent field 0: (mantissa + implicit bit) * 2**(lowest exponent - mantissa bits).
    implicit = uint(0 if fmt.subnormals else 1 << fmt.mantissa_bits)
    lowest_exponent = (1 if fmt.subnormals else 0) - fmt.bias
    zero_exponent_scale = real(2.0 ** (lowest_exponent - fmt.mantissa_bits))
    ieee_nan = fmt.nan == formats.NAN_IEEE
    all_ones_nan = fmt.nan == formats.NAN_ALL_ONES
    negative_zero_nan = fmt.nan == formats.NAN_NEGATIVE_ZERO
    quiet_nan = uint(result.quiet_nan_code).view(real)
    infinity = uint(result.inf_code).view(real)
    result_sign_shift = uint(result.sign_shift)
    zero = uint(0)  # compared with a uint32, an int literal would widen the lanes to 64 bits

    if formats.top_bits_of(fmt, result):
        # BFLOAT16: FLOAT32 cut short, so the code moved up is the value; only NaN is made the quiet one.
        sign32, quiet_nan_bits = uint(1 << result.sign_shift), uint(result.quiet_nan_code)

        @_jit
        def decode_moved_up(code):
            bits = uint(uint(uint(code) & code_mask) << widen)
            value = from_bits(bits)
            # NaN found by a float comparison: one AVX2 instruction where an unsigned one took three
            return choose(value != value, from_bits(uint(quiet_nan_bits | uint(bits & sign32))), value)

        return decode_moved_up

    @_jit
    def decode(code):
        c = uint(uint(code) & code_mask)
        a = uint(c & mag_mask)
        exponent = uint(a & exponent_field)
        value = from_bits(uint(uint(a << widen) + rebias))
        value = choose(exponent == zero, real(uint(a | implicit)) * zero_exponent_scale, value)
        if ieee_nan:
            value = choose(exponent == exponent_field, choose((a & mant_mask) != zero, quiet_nan, infinity), value)
        if all_ones_nan:
            value = choose(a == mag_mask, quiet_nan, value)
        if negative_zero_nan:
            value = choose(c == uint(uint(1) << sign_shift), quiet_nan, value)
        negative = signed and (c >> sign_shift) != zero
        return from_bits(uint(float_bits(value) | uint(uint(negative) << result_sign_shift)))

    return decode


_TWO_62 = 2.0**62


_ZERO64 = np.uint64(0)
#: float64's fields, from its description
_EXPONENT_SHIFT = np.uint64(formats.FLOAT64.mantissa_bits)
_FRACTION_FIELD = np.uint64((1 << formats.FLOAT64.mantissa_bits) - 1)
_IMPLICIT_BIT = np.uint64(1 << formats.FLOAT64.mantissa_bits)
_EXPONENT_FIELD = np.uint64((1 << formats.FLOAT64.exponent_bits) - 1)
#: the biased exponent of a float64 whose last significand bit weighs 1
_UNITS_EXPONENT = formats.FLOAT64.bias + formats.FLOAT64.mantissa_bits


@functools.cache
def float_to_int(fmt, real=np.float64):
    """``convert(x) -> int``: a float64 (or a float32, when ``real`` is
    ``np.float32``) to the integer format ``fmt``, as an int64 (uint64 for UINT64);
    ``x`` is first made a ``real`` (a no-op on a value of that type).

    Targets that fit in an int32 convert through int32, after the range
    checks and in the source's own width: packed float32 -> int32 and float64
    -> int32 conversions are AVX2 instructions, float -> int64 ones need
    AVX-512DQ, so this lets LLVM vectorise the loop.  Without AVX-512DQ
    (:func:`~numbacast.engine.bits.converts_to_int64_in_vectors`) the wider
    targets (INT64, UINT32, UINT64) take the magnitude by shifts
    (:func:`truncated_magnitude`) and the range checks by selects, which
    vectorise too, where a conversion per element and a branch on its range
    were a mispredicted branch for each negative value into an unsigned
    type (FLOAT -> UINT64 6.8 ns/element on one thread).  Every bound is a
    power of two, exact in float32 and float64 alike, so the comparisons
    give what they give on the exact value.
    """
    int32 = np.int32
    if fmt.bits < 8:
        mask = fmt.mask
        if real is np.float32:
            # A float32 of magnitude 2**31 or more is a multiple of 2**8, whose low bits (the ones
            # kept) are zero -- as is the result for NaN and inf: clamped to [-2**31, 2**31 - 2**7]
            # (NaN to the top), each converts to an int32 with those low bits zero.
            low, high, mask32 = np.float32(-(2.0**31)), np.float32(2.0**31 - 2.0**7), int32(mask)

            @_jit
            def to_small_int32(x):
                return np.int64(int32(clamp(np.rint(real(x)), low, high)) & mask32)

            return to_small_int32

        @_jit
        def to_small_int(x):
            r = np.rint(real(x))
            return np.int64(r) & mask if abs(r) < _TWO_62 else 0

        return to_small_int

    lowest, highest = real(fmt.min_value), real(fmt.max_value + 1)  # both powers of two: exact
    min_value, max_value = fmt.min_value, fmt.max_value
    result = np.uint64 if fmt.bits == 64 and not fmt.signed else np.int64
    through = int32 if fmt.bits < 32 or (fmt.bits == 32 and fmt.signed) else result

    if through is int32 and float(real(max_value)) == max_value:
        # Both bounds are values of the source type: clamp in floating point (a vector min and
        # max), then truncate; a value in [max, max + 1) truncates to max as it would unclamped.
        largest, zero = real(max_value), real(0)
        low32, high32 = int32(min_value), int32(max_value)

        @_jit
        def to_int_clamped(x):
            x = real(x)
            n = through(clamp(choose(x == x, x, zero), lowest, largest))
            # a no-op on values already in range, which lets LLVM narrow them by saturating packs
            return result(smaller(larger(n, low32), high32))

        return to_int_clamped

    if through is not int32 and not converts_to_int64_in_vectors():  # AVX2: by shifts, in vector lanes
        top, bottom = (np.uint64(bound % (1 << 64)) for bound in (max_value, min_value))  # modulo 2**64
        zero = real(0)

        @_jit
        def to_int_by_shifts(x):
            x = real(x)
            t = truncated_magnitude(np.float64(x))
            n = choose(x == x, choose(x < zero, np.uint64(_ZERO64 - t), t), _ZERO64)  # modulo 2**64
            return result(choose(x >= highest, top, choose(x < lowest, bottom, n)))

        return to_int_by_shifts

    @_jit
    def to_int(x):
        x = real(x)
        if x != x:
            return result(0)
        if x >= highest:
            return result(max_value)
        if x < lowest:
            return result(min_value)
        return result(through(x))

    return to_int


@_jit
def truncated_magnitude(x):
    """``trunc(|x|)`` of a float64 ``x`` of magnitude below ``2**64``, as a
    uint64: the significand shifted by the exponent's distance from the
    units place (right, and 0 below 1, or left); NaN and larger magnitudes
    give a number the caller replaces.  Shifts and selects in 64-bit lanes,
    which vectorise where the CPU has no packed conversion of float64 into
    64-bit integers (AVX2): see :func:`float_to_int`."""
    bits = float_bits(x)
    e = np.int64((bits >> _EXPONENT_SHIFT) & _EXPONENT_FIELD)
    significand = np.uint64(np.uint64(bits & _FRACTION_FIELD) | _IMPLICIT_BIT)
    right = np.uint64(smaller(larger(_UNITS_EXPONENT - e, 0), 63))  # all of it beyond 52: 0
    left = np.uint64(smaller(larger(e - _UNITS_EXPONENT, 0), 11))  # magnitudes of 2**64 up: not asked
    return np.uint64(np.uint64(significand >> right) << left)


_TWO_32 = np.float64(2.0**32)
_LOW_HALF, _HALF_SHIFT = np.uint64(0xFFFFFFFF), np.uint64(32)
_ONE64, _MINUS_ONE64 = np.uint64(1), np.uint64(0xFFFFFFFFFFFFFFFF)
#: 2**52, and its bits: or-ed with an integer below 2**52 they make the float64 2**52 plus it
_TWO_52 = np.float64(2.0**52)
_TWO_52_BITS = np.uint64(_TWO_52.view(np.uint64))


@_jit
def int_to_float64(value):
    """An int64 or uint64 to float64, ties to odd (see the module docstring).
    The magnitude's two 32-bit halves convert exactly (each or-ed into the
    significand of ``2**52``, which is then taken off), their sum rounds once
    to nearest, and its exact error (a Fast2Sum: the high half's value is 0
    or above every low half) moves an even result one step toward the
    magnitude, onto the odd neighbour the rounding to odd picks.  Selects
    and 64-bit lanes that vectorise with AVX2, which converts no 64-bit
    integer in vectors and counts no leading zeros there."""
    negative = value < 0
    u = np.uint64(value)
    u = choose(negative, np.uint64(_ZERO64 - u), u)
    high = (float64_from_bits(np.uint64(np.uint64(u >> _HALF_SHIFT) | _TWO_52_BITS)) - _TWO_52) * _TWO_32
    low = float64_from_bits(np.uint64(np.uint64(u & _LOW_HALF) | _TWO_52_BITS)) - _TWO_52
    total = high + low
    error = low - (total - high)
    bits = float_bits(total)
    step = choose(error > 0, _ONE64, choose(error < 0, _MINUS_ONE64, _ZERO64))
    magnitude = float64_from_bits(np.uint64(bits + choose((bits & _ONE64) == _ZERO64, step, _ZERO64)))
    return choose(negative, -magnitude, magnitude)


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
    shift = 64 - _F64_SIGNIFICAND_BITS + larger(_F64_MIN_EXPONENT - top, 0)
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
    biased = np.uint64(larger(top - _F64_MIN_EXPONENT, 0))  # the exponent field, less the hidden bit's carry
    return float64_from_bits((biased << np.uint64(52)) + kept)
