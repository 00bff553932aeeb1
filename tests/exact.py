"""Exact reference for the numeric rules of the conversion rules (docs/rules.md).

Pure Python: values are ``Fraction``s, rounding is done on integers. No numpy,
no ml_dtypes, no float arithmetic.  Used by the test-suite to check numbacast
bit for bit.

    decode(name, code)  -> Exact           exact value of a storage code
    encode(name, x, ...) -> int            storage code the library must return
    cast_code(src, code, dst, ...) -> int  decode then encode
    cast_codes(src, codes, dst, ...)       cast_code of each code (sweeps)
    same_code(dst, a, b) -> bool           code equality, NaNs of one sign equal

Storage codes are unsigned ints of ``STORAGE_BITS[name]`` bits (int8 -56 is
200).  Sub-byte types (float8/6/4, int4/uint4, int2/uint2) hold one element
per byte, in the low bits; decode ignores the high bits.
"""

import re
from fractions import Fraction
from math import copysign, isinf, isnan
from operator import index
from typing import NamedTuple

__all__ = [
    "TYPES",
    "STORAGE_BITS",
    "INTEGER_TYPES",
    "FLOAT_TYPES",
    "ROUND_MODES",
    "ROUNDINGS",
    "Exact",
    "decode",
    "encode",
    "cast_code",
    "cast_codes",
    "same_code",
    "read_text",
    "parse_code",
    "format_code",
    "gaps",
    "exact_decimal",
]

ROUND_MODES = ("up", "down", "nearest")
#: numbacast's ``rounding=`` values (docs/rules.md, "Rounding modes").
ROUNDINGS = ("nearest_even", "nearest_away", "toward_zero", "toward_positive", "toward_negative", "stochastic")
#: FLOAT8E8M0's ``round_mode`` as a rounding of the magnitude.
E8M0_ROUNDING = {"up": "toward_positive", "down": "toward_zero", "nearest": "nearest_away"}
_ZERO = Fraction(0)


# --------------------------------------------------------------------------
# The format table
# --------------------------------------------------------------------------
#
# Floats: (ebits, mbits, bias, specials, overflow)
#   specials  "ieee"   inf = all-ones exponent, NaN = all-ones exponent + mantissa != 0
#             "fn"     no inf, NaN = S.1111.111 (signed)
#             "fnuz"   no inf, no -0, one NaN = 0x80 (sign bit alone)
#             "finite" no inf, no NaN
#   overflow  "inf"    [x] > max and inf give +/-inf (saturate does not apply)
#             "flag"   the saturate attribute decides
#             "max"    always saturate to +/-max
_FLOAT_TABLE = {
    "float": (8, 23, 127, "ieee", "inf"),
    "double": (11, 52, 1023, "ieee", "inf"),
    "float16": (5, 10, 15, "ieee", "inf"),
    "bfloat16": (8, 7, 127, "ieee", "inf"),
    "float8e4m3fn": (4, 3, 7, "fn", "flag"),
    "float8e4m3fnuz": (4, 3, 8, "fnuz", "flag"),
    "float8e5m2": (5, 2, 15, "ieee", "flag"),
    "float8e5m2fnuz": (5, 2, 16, "fnuz", "flag"),
    "float4e2m1": (2, 1, 1, "finite", "max"),
    "float6e2m3": (2, 3, 1, "finite", "max"),
    "float6e3m2": (3, 2, 3, "finite", "max"),
}
# Integers: (value bits, signed)
_INT_TABLE = {
    "uint8": (8, False),
    "int8": (8, True),
    "uint16": (16, False),
    "int16": (16, True),
    "uint32": (32, False),
    "int32": (32, True),
    "uint64": (64, False),
    "int64": (64, True),
    "uint4": (4, False),
    "int4": (4, True),
    "uint2": (2, False),
    "int2": (2, True),
}
# float8e8m0 and bool are one-offs, handled by their own small branches.

TYPES = (
    "float",
    "uint8",
    "int8",
    "uint16",
    "int16",
    "int32",
    "int64",
    "bool",
    "float16",
    "double",
    "uint32",
    "uint64",
    "bfloat16",
    "float8e4m3fn",
    "float8e4m3fnuz",
    "float8e5m2",
    "float8e5m2fnuz",
    "uint4",
    "int4",
    "float4e2m1",
    "float8e8m0",
    "uint2",
    "int2",
    "float6e2m3",
    "float6e3m2",
)
FLOAT_TYPES = frozenset(_FLOAT_TABLE) | {"float8e8m0"}
INTEGER_TYPES = frozenset(_INT_TABLE) | {"bool"}  # sources that keep low bits


class _Float(NamedTuple):
    """Precomputed constants of one binary floating-point format."""

    mbits: int
    bias: int
    specials: str
    overflow: str
    codemask: int  # all bits of one element (sign included)
    signbit: int
    emin: int  # exponent of the smallest normal, 1 - bias
    maxcode: int  # magnitude code of the largest finite value
    infcode: int  # magnitude code of inf (ieee), -1 if no inf
    nancode: int  # magnitude code of the canonical NaN, -1 if no NaN
    # (fnuz: 0, its only NaN 0x80 is the sign bit alone)
    expmask: int  # mask of the exponent field, in place


class _Int(NamedTuple):
    width: int
    signed: bool
    mask: int
    lo: int
    hi: int


def _make_float(ebits, mbits, bias, specials, overflow):
    nbits = 1 + ebits + mbits
    allones = (1 << (ebits + mbits)) - 1
    infcode = ((1 << ebits) - 1) << mbits if specials == "ieee" else -1
    maxcode = {"ieee": infcode - 1, "fn": allones - 1}.get(specials, allones)
    nancode = {"ieee": infcode | (1 << (mbits - 1)), "fn": allones, "fnuz": 0}.get(specials, -1)
    return _Float(
        mbits,
        bias,
        specials,
        overflow,
        (1 << nbits) - 1,
        1 << (ebits + mbits),
        1 - bias,
        maxcode,
        infcode,
        nancode,
        infcode if specials == "ieee" else 0,
    )


def _make_int(width, signed):
    mask = (1 << width) - 1
    lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, mask)
    return _Int(width, signed, mask, lo, hi)


_FORMATS = {name: _make_float(*row) for name, row in _FLOAT_TABLE.items()}
_FORMATS.update({name: _make_int(*row) for name, row in _INT_TABLE.items()})
_FORMATS["bool"] = "bool"
_FORMATS["float8e8m0"] = "e8m0"
assert set(_FORMATS) == set(TYPES)

STORAGE_BITS = {name: 8 for name in TYPES}
STORAGE_BITS.update(
    float=32, double=64, float16=16, bfloat16=16, uint16=16, int16=16, uint32=32, int32=32, uint64=64, int64=64
)


def _fmt(name):
    try:
        return _FORMATS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown type {name!r}; expected one of {TYPES}") from None


# --------------------------------------------------------------------------
# Exact values
# --------------------------------------------------------------------------


class Exact(NamedTuple):
    """sign (0/1), kind ("finite" | "inf" | "nan"), mag (Fraction >= 0)."""

    sign: int
    kind: str
    mag: Fraction

    @classmethod
    def from_int(cls, i):
        i = index(i)
        return cls(1 if i < 0 else 0, "finite", Fraction(abs(i)))

    @classmethod
    def from_fraction(cls, f, sign=None):
        """Any rational (Fraction, int, Decimal...). ``sign`` forces the sign,
        which is the only way to get -0 from a Fraction."""
        f = Fraction(f)
        s = (1 if f < 0 else 0) if sign is None else sign
        return cls(s, "finite", abs(f))

    @classmethod
    def from_float(cls, x):
        """Exact value of a Python float (= double), -0.0 and NaN sign kept."""
        x = float(x)
        s = 1 if copysign(1.0, x) < 0 else 0
        if isnan(x):
            return cls(s, "nan", _ZERO)
        if isinf(x):
            return cls(s, "inf", _ZERO)
        return cls(s, "finite", abs(Fraction(x)))

    @classmethod
    def nan(cls, sign=0):
        return cls(sign, "nan", _ZERO)

    @classmethod
    def inf(cls, sign=0):
        return cls(sign, "inf", _ZERO)

    def value(self):
        """Signed Fraction for finite values (-0 becomes 0)."""
        if self.kind != "finite":
            raise ValueError(f"{self.kind} has no rational value")
        return -self.mag if self.sign else self.mag


# --------------------------------------------------------------------------
# decode
# --------------------------------------------------------------------------


def _pow2(e):
    return Fraction(1 << e) if e >= 0 else Fraction(1, 1 << -e)


def _decode_float(f, code):
    code &= f.codemask
    sign = 1 if code & f.signbit else 0
    c = code & (f.signbit - 1)
    if f.specials == "ieee" and c & f.expmask == f.expmask:
        return Exact(sign, "inf" if c == f.infcode else "nan", _ZERO)
    if (f.specials == "fn" and c == f.nancode) or (f.specials == "fnuz" and code == f.signbit):
        return Exact(sign, "nan", _ZERO)
    e, m = c >> f.mbits, c & ((1 << f.mbits) - 1)
    if e:
        m |= 1 << f.mbits
    else:
        e = 1  # subnormal: exponent of emin
    e -= f.bias + f.mbits
    return Exact(sign, "finite", Fraction(m << e) if e >= 0 else Fraction(m, 1 << -e))


def _decode(name, code):
    f = _fmt(name)
    if not 0 <= code < 1 << STORAGE_BITS[name]:
        raise ValueError(f"code {code} out of range for {name}")
    if f == "bool":
        return Exact(0, "finite", Fraction(1 if code else 0))
    if f == "e8m0":
        return Exact(0, "nan", _ZERO) if code == 0xFF else Exact(0, "finite", _pow2(code - 127))
    if isinstance(f, _Int):
        v = code & f.mask
        if f.signed and v > f.hi:
            v -= 1 << f.width
        return Exact.from_int(v)
    return _decode_float(f, code)


_DECODE_CACHE = {name: {} for name in TYPES if STORAGE_BITS[name] <= 16}


def decode(name, code):
    """Exact value of storage ``code`` (0 <= code < 2**STORAGE_BITS[name])."""
    code = index(code)
    cache = _DECODE_CACHE.get(name)
    if cache is None:
        return _decode(name, code)
    x = cache.get(code)
    if x is None:
        x = cache[code] = _decode(name, code)
    return x


# --------------------------------------------------------------------------
# encode
# --------------------------------------------------------------------------


def _floor_log2(n, d):
    """floor(log2(n/d)) for integers n, d > 0."""
    e = n.bit_length() - d.bit_length()
    if (n < d << e) if e >= 0 else (n << -e < d):
        e -= 1
    return e


def _round_shift(n, d, shift):
    """round_half_even(n/d * 2**shift), integers n >= 0, d > 0."""
    if shift >= 0:
        n <<= shift
    else:
        d <<= -shift
    q, r = divmod(n, d)
    r2 = 2 * r
    if r2 > d or (r2 == d and q & 1):
        q += 1
    return q


def _round_up(twice_rem, d, lower_odd, negative, rounding, random):
    """Whether a value ``lower + rem/d`` steps (0 < rem < d, ``twice_rem`` = 2 rem)
    rounds up in ``rounding``.  ``random`` = (r, n) for "stochastic": the
    fraction rem/d rounded to n bits (ties to even), plus r, must reach 2**n."""
    if rounding == "nearest_even":
        return twice_rem > d or (twice_rem == d and lower_odd)
    if rounding == "nearest_away":
        return twice_rem >= d
    if rounding == "toward_zero":
        return False
    if rounding == "toward_positive":
        return not negative
    if rounding == "toward_negative":
        return negative
    if rounding == "stochastic":
        r, n = random
        q, rest = divmod(twice_rem << n, 2 * d)  # the fraction rem/d in units of 2**-n
        if 2 * rest > 2 * d or (2 * rest == 2 * d and q & 1):
            q += 1
        return q + r >= 1 << n
    raise ValueError(f"rounding {rounding!r}; expected one of {ROUNDINGS}")


def _round_float(f, n, d, rounding="nearest_even", negative=False, random=None):
    """Magnitude code of n/d > 0 rounded once in ``rounding`` (ties to even by
    default), exponent range unbounded above (a result > f.maxcode is an overflow)."""
    e = max(_floor_log2(n, d), f.emin)
    shift = f.mbits - e
    if shift >= 0:
        n <<= shift
    else:
        d <<= -shift
    s, rem = divmod(n, d)  # significand, 0 .. 2**(mbits+1)
    # normal: code = ((e+bias) << m) + s - 2**m; subnormal (e = emin): code = s.
    # A carry to 2**(mbits+1) lands on the next binade by itself.
    code = ((e + f.bias - 1) << f.mbits) + s
    if rem and _round_up(2 * rem, d, code & 1, negative, rounding, random):
        code += 1
    return code


def _toward_zero_for(rounding, negative):
    """Whether ``rounding`` rounds a value of this sign toward zero (IEEE 754:
    an overflow then gives the largest finite value, not infinity)."""
    return rounding == "toward_zero" or rounding == ("toward_positive" if negative else "toward_negative")


def _encode_float(f, x, saturate, fnuz_inf_to_nan, rounding="nearest_even", random=None):
    sign = f.signbit if x.sign else 0
    kind = x.kind
    if kind == "nan":
        if f.specials == "finite":
            return f.maxcode  # NaN -> +max (float4/float6 notes)
        return f.signbit if f.specials == "fnuz" else sign | f.nancode
    if kind == "finite":
        mag = x.mag
        c = _round_float(f, mag.numerator, mag.denominator, rounding, bool(x.sign), random) if mag else 0
        if c == 0:
            return 0 if f.specials == "fnuz" else sign
        if c <= f.maxcode:
            return sign | c
        if _toward_zero_for(rounding, x.sign):
            return sign | f.maxcode
    elif fnuz_inf_to_nan and f.specials == "fnuz":
        return f.signbit  # Cast-19..23: inf -> NaN
    # overflow ([x] > max) or infinity
    if f.overflow == "max" or (f.overflow == "flag" and saturate):
        return sign | f.maxcode
    if f.infcode >= 0:
        return sign | f.infcode
    return f.signbit if f.specials == "fnuz" else sign | f.nancode


def _encode_e8m0(x, saturate, round_mode, rounding=None, random=None):
    if round_mode not in ROUND_MODES:
        raise ValueError(f"round_mode {round_mode!r}; expected one of {ROUND_MODES}")
    rounding = rounding or E8M0_ROUNDING[round_mode]
    if x.kind == "nan":
        return 0xFF
    if x.kind == "inf":
        return 0xFE if saturate else 0xFF
    n, d = x.mag.numerator, x.mag.denominator
    if n == 0:
        return 0 if saturate else 0xFF
    k = _floor_log2(n, d)  # 2**k <= |x| < 2**(k+1)
    # |x| = 2**k * (1 + rem/den): one step is 2**k
    rem, den = (n - (d << k), d << k) if k >= 0 else ((n << -k) - d, d)
    if rem and _round_up(
        2 * rem, den, (k + 127) & 1, False, rounding.replace("toward_negative", "toward_zero"), random
    ):
        k += 1
    if k < -127:
        return 0 if saturate else 0xFF
    if k > 127:
        return 0xFE if saturate else 0xFF
    return k + 127


def _round_integer(x, rounding, random):
    """The magnitude of the finite ``x`` rounded to an integer in ``rounding``
    (``random`` = (r, n) for "stochastic"), the fraction decided as a float
    target's step is (:func:`_round_up`)."""
    n, d = x.mag.numerator, x.mag.denominator
    q, rem = divmod(n, d)
    if rem and _round_up(2 * rem, d, q & 1, bool(x.sign), rounding, random):
        q += 1
    return q


def _encode_int(f, x, from_integer, rounding=None, random=None):
    """An integer target's code: from an integer, its low bits; from a float,
    rounded in ``rounding`` (None: ONNX's rule, toward zero into 8 to 64 bits,
    ties to even into 4 and 2 bits), then saturated (8 to 64 bits; NaN 0,
    +/-inf max/min) or its low bits (4 and 2 bits; NaN and +/-inf 0)."""
    if from_integer:
        if x.kind != "finite" or x.mag.denominator != 1:
            raise ValueError(f"from_integer=True needs an integer, got {x}")
        v = x.mag.numerator
    elif f.width <= 4:  # int4/uint4/int2/uint2: ties to even by default, low bits
        if x.kind != "finite":
            return 0
        v = _round_integer(x, rounding or "nearest_even", random)
    else:  # 8..64 bits: toward zero by default, saturate
        if x.kind == "nan":
            return 0
        if x.kind == "inf":
            return (f.lo if x.sign else f.hi) & f.mask
        v = _round_integer(x, rounding or "toward_zero", random)
        v = max(f.lo, -v) if x.sign else min(f.hi, v)
        return v & f.mask
    return (-v if x.sign else v) & f.mask


def encode(
    name, x, saturate=True, round_mode="up", fnuz_inf_to_nan=False, from_integer=False, rounding=None, random=None
):
    """Storage code of ``name`` for the exact value ``x`` (an ``Exact``).

    ``from_integer`` says the source was an integer type (or bool): integer
    targets then keep the low bits instead of truncating and saturating.
    It changes nothing for the other targets.  ``rounding`` (one of
    :data:`ROUNDINGS`; None: ties to even, ``round_mode`` for FLOAT8E8M0,
    ONNX's rule for integer targets) is for float and integer targets;
    "stochastic" takes ``random`` = (r, n), the element's ``n``-bit random
    number."""
    f = _fmt(name)
    if isinstance(f, _Float):
        return _encode_float(f, x, saturate, fnuz_inf_to_nan, rounding or "nearest_even", random)
    if isinstance(f, _Int):
        return _encode_int(f, x, from_integer, rounding, random)
    if f == "bool":
        return 0 if x.kind == "finite" and not x.mag else 1
    return _encode_e8m0(x, saturate, round_mode, rounding, random)


def cast_code(
    src_name, code, dst_name, saturate=True, round_mode="up", fnuz_inf_to_nan=False, rounding=None, random=None
):
    """Code of ``dst_name`` for storage ``code`` of ``src_name``."""
    x = decode(src_name, code)
    return encode(dst_name, x, saturate, round_mode, fnuz_inf_to_nan, src_name in INTEGER_TYPES, rounding, random)


def cast_codes(src_name, codes, dst_name, saturate=True, round_mode="up", fnuz_inf_to_nan=False, rounding=None):
    """``[cast_code(src_name, c, dst_name, ...) for c in codes]`` (ints), with
    the target's rules looked up once: a sweep of every 16-bit code is a
    third of a second sooner."""
    f = _fmt(dst_name)
    values = [decode(src_name, c) for c in codes]
    if isinstance(f, _Float):
        mode = rounding or "nearest_even"
        return [_encode_float(f, x, saturate, fnuz_inf_to_nan, mode) for x in values]
    from_integer = src_name in INTEGER_TYPES
    return [encode(dst_name, x, saturate, round_mode, fnuz_inf_to_nan, from_integer, rounding) for x in values]


def same_code(dst_name, a, b):
    """a == b, except that two NaNs of the same sign are equal in formats with
    several NaN codes (float, double, float16, bfloat16, float8e5m2)."""
    a, b = index(a), index(b)
    if a == b:
        return True
    f = _fmt(dst_name)
    if not (isinstance(f, _Float) and f.specials == "ieee"):
        return False
    if (a ^ b) & f.signbit:
        return False  # different signs
    a &= f.signbit - 1
    b &= f.signbit - 1
    return a > f.infcode and b > f.infcode  # both NaN (codes above inf)


# --------------------------------------------------------------------------
# Text (docs/rules.md, "Strings")
# --------------------------------------------------------------------------

_SPACE = "[ \t\n\v\f\r]*"
_TEXT = re.compile(
    _SPACE + r"([+-]?)(?:([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|(infinity|inf|nan))" + _SPACE, re.IGNORECASE
)
_BOOL_WORD = re.compile(_SPACE + "(true|false)" + _SPACE, re.IGNORECASE)


def read_text(text, words=False):
    """The number a text holds by the grammar of docs/rules.md, as
    ``(Exact, literal)`` (``literal``: an integer literal, no point and no
    exponent), or None when it holds none.  ``words`` also reads true/false."""
    found = _BOOL_WORD.fullmatch(text) if words else None
    if found:
        return Exact.from_int(int(found.group(1).lower() == "true")), False
    found = _TEXT.fullmatch(text)
    if not found:
        return None
    sign, mantissa, exponent, word = found.groups()
    negative = int(sign == "-")
    if word:
        return (Exact.nan(negative) if word.lower() == "nan" else Exact.inf(negative)), False
    value = Fraction(mantissa if not mantissa.endswith(".") else mantissa[:-1])
    if exponent:
        power = int(exponent[1:])
        value *= Fraction(10) ** power
    return Exact.from_fraction(value, negative), "." not in mantissa and not exponent


def parse_code(name, text, saturate=True, round_mode="up"):
    """Storage code of ``name`` for a text (docs/rules.md): integer targets keep
    the low bits of an integer literal within -2**63 .. 2**64-1."""
    found = read_text(text, words=name == "bool")
    if found is None:
        raise ValueError(f"{text!r} is not a number")
    x, literal = found
    in_range = literal and -(1 << 63) <= x.value() < 1 << 64
    return encode(name, x, saturate, round_mode, from_integer=in_range)


#: Floats print positionally when 1e-4 <= |x| < this (1e3 for the others).
_POSITIONAL_LIMIT = {"double": 10**16, "float": 10**6}


def gaps(name, mag):
    """(below, above): the distances from ``mag`` > 0, a value of the float
    type ``name``, to its neighbours (the one above the largest value lies
    past the range, where the format would put it)."""
    if name == "float8e8m0":
        return mag / 2, mag
    f = _fmt(name)
    e = max(_floor_log2(mag.numerator, mag.denominator), f.emin)
    ulp = _pow2(e - f.mbits)
    return (ulp / 2 if mag == _pow2(e) and e > f.emin else ulp), ulp


def _shortest(mag, low, high, closed):
    """(digits, k): the shortest digits * 10**k in the interval (low, high) --
    closed when ``closed`` -- nearest to ``mag``, ties to an even digit."""
    width = high - low
    k = len(str(width.numerator)) - len(str(width.denominator)) + 1  # 10**k > width
    while True:
        unit = Fraction(10) ** k
        below = mag // unit
        inside = [d for d in (below, below + 1) if (low <= d * unit <= high if closed else low < d * unit < high)]
        if len(inside) == 2:
            a, b = mag - below * unit, (below + 1) * unit - mag
            return (below if a < b or (a == b and below % 2 == 0) else below + 1), k
        if inside:
            return inside[0], k
        k -= 1


def _layout(negative, digits, k, positional):
    text = str(digits).rstrip("0") or "0"
    k += len(str(digits)) - len(text)
    exponent = k + len(text) - 1
    if positional:
        if exponent < 0:
            body = "0." + "0" * (-exponent - 1) + text
        elif len(text) <= exponent + 1:
            body = text + "0" * (exponent + 1 - len(text)) + ".0"
        else:
            body = text[: exponent + 1] + "." + text[exponent + 1 :]
    else:
        body = text[0] + ("." + text[1:] if len(text) > 1 else "") + f"e{exponent:+03d}"
    return "-" * negative + body


def format_code(name, code):
    """The text docs/rules.md gives a storage code of ``name``."""
    x = decode(name, code)
    if x.kind == "nan":
        return "NaN"
    if x.kind == "inf":
        return "-INF" if x.sign else "INF"
    if name not in FLOAT_TYPES:
        return str(x.value() if name != "bool" else int(x.value() != 0))
    positional = x.mag == 0 or Fraction(1, 10**4) <= x.mag < _POSITIONAL_LIMIT.get(name, 10**3)
    if x.mag == 0:
        digits, k = 0, 0
    elif name == "float8e8m0":  # the exact value: it reads back whatever round_mode
        digits, k = exact_decimal(x.mag)
    else:
        below, above = gaps(name, x.mag)
        even = (x.mag / above) % 2 == 0  # an even significand reads back from a tie
        digits, k = _shortest(x.mag, x.mag - below / 2, x.mag + above / 2, even)
    return _layout(x.sign, digits, k, positional)


def exact_decimal(mag):
    """(digits, k) with digits * 10**k == mag, for a dyadic ``mag``."""
    k = 0
    while mag.denominator != 1:
        mag *= 10
        k -= 1
    return mag.numerator, k
