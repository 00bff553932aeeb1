"""Number formats described as data.

Every numeric ONNX type is one of three families (and STRING, text, is
:class:`StringFormat`):

* :class:`FloatFormat` -- sign, exponent and mantissa fields plus the way the
  format spells infinity, NaN and zero.  The codecs in :mod:`numbacast.codecs`
  are generated from these fields alone.
* :class:`IntFormat` -- a two's complement or unsigned integer of some width.
* :class:`BoolFormat` -- ONNX BOOL.

The properties derive every code a codec needs (largest finite code, the NaN and
infinity codes, ...) so that no codec carries a per-format constant of its own.
"""

from dataclasses import dataclass
from fractions import Fraction

#: How a float format spells NaN.
NAN_IEEE = "ieee"  # all-ones exponent with a non-zero mantissa (both signs)
NAN_ALL_ONES = "all-ones"  # only the all-ones magnitude code (both signs)
NAN_NEGATIVE_ZERO = "negative-zero"  # only the code of -0 (FNUZ types: 0x80)
NAN_NONE = "none"  # no NaN at all


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating point format, described by its fields.

    A code is a sign bit (when ``signed``), then ``exponent_bits`` of
    exponent ``e`` and ``mantissa_bits`` of mantissa ``m``.  Its value is
    ``(-1)**s * 2**(e - bias) * (1 + m / 2**mantissa_bits)`` for ``e > 0`` and
    ``(-1)**s * 2**(1 - bias) * m / 2**mantissa_bits`` for ``e == 0`` (when
    the format has ``subnormals``; else ``e == 0`` is a binade like the others).

    ``nan`` says where the NaNs are: :data:`NAN_IEEE` (every code with an
    all-ones exponent and a non-zero mantissa, both signs),
    :data:`NAN_ALL_ONES` (the all-ones magnitude, both signs),
    :data:`NAN_NEGATIVE_ZERO` (the one code of -0, which is then not -0) or
    :data:`NAN_NONE`.  With ``has_inf`` the magnitude code just below the
    NaNs at the top (or the top code itself) is infinity.  The largest
    finite value is the code below those.  Derived properties give every code
    the codecs need: :attr:`max_code`, :attr:`inf_code`,
    :attr:`quiet_nan_code`, :attr:`nan_codes`, :attr:`has_negative_zero`,
    :attr:`largest` and :attr:`smallest`.

    The ONNX float types are instances (``FLOAT8E4M3FN`` is
    ``FloatFormat(4, 3, 7, False, NAN_ALL_ONES)``); so are the formats of
    :mod:`numbacast.formats.custom`.
    """

    exponent_bits: int
    mantissa_bits: int
    bias: int
    has_inf: bool
    nan: str
    signed: bool = True
    subnormals: bool = True

    @property
    def bits(self):
        """Total bits of a code: sign (when signed), exponent and mantissa."""
        return int(self.signed) + self.exponent_bits + self.mantissa_bits

    @property
    def sign_shift(self):
        """Bit position of the sign bit."""
        return self.exponent_bits + self.mantissa_bits

    @property
    def magnitude_mask(self):
        return (1 << self.sign_shift) - 1

    @property
    def high_nans(self):
        """How many of the highest magnitude codes are NaN (2**m - 1 for IEEE,
        1 for an all-ones NaN, 0 otherwise)."""
        if self.nan == NAN_IEEE:
            return (1 << self.mantissa_bits) - 1
        return 1 if self.nan == NAN_ALL_ONES else 0

    @property
    def max_code(self):
        """Magnitude code of the largest finite value: below the NaN codes at
        the top of the range, and below infinity."""
        return self.magnitude_mask - self.high_nans - int(self.has_inf)

    @property
    def inf_code(self):
        """Magnitude code of infinity (formats with infinities only)."""
        assert self.has_inf
        return self.max_code + 1

    @property
    def quiet_nan_code(self):
        """Magnitude code of the canonical NaN (sign excluded)."""
        if self.nan == NAN_IEEE:
            return self.inf_code | (1 << (self.mantissa_bits - 1))
        if self.nan == NAN_ALL_ONES:
            return self.magnitude_mask
        if self.nan == NAN_NEGATIVE_ZERO:
            return 0
        raise ValueError("format has no NaN")

    @property
    def has_negative_zero(self):
        """Whether the code of -0 is -0 (not NaN, not absent)."""
        return self.signed and self.subnormals and self.nan != NAN_NEGATIVE_ZERO

    @property
    def min_normal_exponent(self):
        """Unbiased exponent of the smallest normal value."""
        return 1 - self.bias

    def value_of(self, magnitude_code):
        """The exact value (a Fraction) of a finite magnitude code."""
        exponent, mantissa = magnitude_code >> self.mantissa_bits, magnitude_code & ((1 << self.mantissa_bits) - 1)
        if exponent or not self.subnormals:
            mantissa |= 1 << self.mantissa_bits
        return Fraction(mantissa) * Fraction(2) ** (
            max(exponent, int(self.subnormals)) - self.bias - self.mantissa_bits
        )

    @property
    def largest(self):
        """The largest finite value (a Fraction)."""
        return self.value_of(self.max_code)

    @property
    def smallest(self):
        """The smallest positive value (a Fraction): the smallest subnormal."""
        return self.value_of(1 if self.subnormals else 0)

    @property
    def nan_codes(self):
        """Every code that is NaN, sign bit included, in increasing order."""
        if self.nan == NAN_NONE:
            return ()
        if self.nan == NAN_NEGATIVE_ZERO:
            return (1 << self.sign_shift,)
        top = range(self.magnitude_mask - self.high_nans + 1, self.magnitude_mask + 1)
        signs = (0, 1 << self.sign_shift) if self.signed else (0,)
        return tuple(sign | code for sign in signs for code in top)

    def describe(self):
        """A dict of what the format is: bits, exponent_bits, mantissa_bits,
        bias, signed, subnormals, infinities, nan (the encoding), nan_codes
        (at most 8 shown), negative_zero, largest and smallest (floats)."""
        nan_codes = self.nan_codes
        return dict(
            bits=self.bits,
            exponent_bits=self.exponent_bits,
            mantissa_bits=self.mantissa_bits,
            bias=self.bias,
            signed=self.signed,
            subnormals=self.subnormals,
            infinities=self.has_inf,
            nan=self.nan,
            nan_codes=nan_codes if len(nan_codes) <= 8 else f"{len(nan_codes)} codes",
            negative_zero=self.has_negative_zero,
            largest=float(self.largest),
            smallest=float(self.smallest),
        )


@dataclass(frozen=True)
class IntFormat:
    """A two's complement (``signed``) or unsigned integer of ``bits`` bits."""

    bits: int
    signed: bool

    @property
    def mask(self):
        return (1 << self.bits) - 1

    @property
    def min_value(self):
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max_value(self):
        return (1 << (self.bits - 1)) - 1 if self.signed else self.mask


@dataclass(frozen=True)
class BoolFormat:
    """ONNX BOOL: zero is False, everything else True."""

    bits: int = 8


@dataclass(frozen=True)
class StringFormat:
    """ONNX STRING: one text per element (NumPy ``<U``)."""


def ieee(exponent_bits, mantissa_bits):
    """An IEEE 754 binary format (bias 2**(E-1) - 1, infinities and NaNs)."""
    return FloatFormat(exponent_bits, mantissa_bits, (1 << (exponent_bits - 1)) - 1, True, NAN_IEEE)


def top_bits_of(fmt, wider):
    """Whether each code of ``fmt`` is the top bits of the code of the IEEE
    format ``wider`` with the same value: ``fmt`` is IEEE too, with
    ``wider``'s exponent and at most its mantissa bits (BFLOAT16 of FLOAT32,
    FLOAT8E5M2 of FLOAT16, and each format of itself); moved up by
    ``wider.bits - fmt.bits``, a code is ``wider``'s."""
    return (
        isinstance(fmt, FloatFormat)
        and fmt.mantissa_bits <= wider.mantissa_bits
        and fmt == ieee(wider.exponent_bits, fmt.mantissa_bits)
    )


def fields_fit_in(fmt, wider):
    """Whether the fields of each code of ``fmt``, moved into those of the IEEE
    format ``wider`` (the sign to its sign, the exponent field into the low
    bits of its exponent field, the mantissa to the top of its mantissa),
    make a code of ``wider`` whose value is ``fmt``'s times
    ``2**(wider.bias - fmt.bias)``: ``fmt``'s codes are ``wider``'s top bits
    (:func:`top_bits_of`: the same exponent and bias, so the power of two is
    1 and infinities and NaNs land on ``wider``'s), or its binades fit in
    ``wider``'s (:func:`binades_fit_in`: its NaN codes land on finite codes).
    In FLOAT16: FLOAT16, FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT6E2M3,
    FLOAT6E3M2 and FLOAT4E2M1."""
    return top_bits_of(fmt, wider) or binades_fit_in(fmt, wider)


def binades_fit_in(fmt, wider):
    """Whether the fields of each code of ``fmt``, moved into those of the IEEE
    format ``wider`` (the sign to its sign, the exponent field into the low
    bits of its exponent field, the mantissa to the top of its mantissa),
    make a finite code of ``wider`` whose value is ``fmt``'s times
    ``2**(wider.bias - fmt.bias)``: ``fmt`` signed, with subnormals (they
    land on ``wider``'s subnormals, or on its normals whose exponent has a
    zero top bit, with the same scale), without infinities, with fewer
    exponent bits than ``wider`` (no code lands on its infinities and NaNs)
    and at most its mantissa bits.  A NaN code of ``fmt`` lands on a finite
    code, to be made a NaN apart.  FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT6E2M3,
    FLOAT6E3M2 and FLOAT4E2M1 in FLOAT16."""
    return (
        isinstance(fmt, FloatFormat)
        and fmt.signed
        and fmt.subnormals
        and not fmt.has_inf
        and fmt.exponent_bits < wider.exponent_bits
        and fmt.mantissa_bits <= wider.mantissa_bits
    )


FLOAT32 = ieee(8, 23)
FLOAT64 = ieee(11, 52)
FLOAT16 = ieee(5, 10)
BFLOAT16 = ieee(8, 7)
FLOAT8E4M3FN = FloatFormat(4, 3, 7, False, NAN_ALL_ONES)
FLOAT8E4M3FNUZ = FloatFormat(4, 3, 8, False, NAN_NEGATIVE_ZERO)
FLOAT8E5M2 = ieee(5, 2)
FLOAT8E5M2FNUZ = FloatFormat(5, 2, 16, False, NAN_NEGATIVE_ZERO)
FLOAT8E8M0 = FloatFormat(8, 0, 127, False, NAN_ALL_ONES, signed=False, subnormals=False)
FLOAT4E2M1 = FloatFormat(2, 1, 1, False, NAN_NONE)
FLOAT6E2M3 = FloatFormat(2, 3, 1, False, NAN_NONE)
FLOAT6E3M2 = FloatFormat(3, 2, 3, False, NAN_NONE)
