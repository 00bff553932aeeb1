"""Numbers to text, compiled: shortest round-trip digits and NumPy's layout.

Rules (the conversion rules, docs/rules.md, "Strings"):

* A float prints the shortest decimal that reads back, rounding to nearest
  with ties to even, to the same value *in its own format*; of several
  shortest decimals, the nearest to the value, and of two equally near, the
  one with an even last digit.  A decimal exactly halfway to a neighbour
  counts when the value's significand is even (it reads back to the value).
  The digits come from Giulietti's Schubfach algorithm, run on the value's
  own significand and exponent, with the 128-bit powers of ten of
  :mod:`numbacast.wide`.
* Layout: positional with at least one digit after the point when
  ``1e-4 <= |x| < upper`` (or x is zero), scientific otherwise with an
  exponent sign and at least two exponent digits; ``upper`` is 1e16 for
  DOUBLE, 1e6 for FLOAT and 1e3 for the narrower formats.  Specials print
  "NaN", "INF" and "-INF".  This is NumPy's ``str()`` for FLOAT16, FLOAT and
  DOUBLE but for those three literals.
* Integers print in plain decimal.

Two kernels print an array: :func:`float_decimals` (or
:func:`integer_decimals`) finds each number's *decimal record* ``(f, k,
form)`` -- the value is ``f * 10**k``, ``form`` says how it is laid out --
and the length of its text; once the longest length is known,
:func:`text_parallel` writes the texts straight into the code points of a
``<U`` array just that wide.
"""

import numpy as np
from numba import prange

from ..engine.bits import float_bits, larger, leading_zeros
from ..engine.cache import cached_njit, helper_njit, serial_version
from .wide import POW5_EXPONENT, POW5_HIGH, POW5_LOW, POW5_MIN, POW10, multiply_full

_jit = helper_njit

_U0, _U1, _U2, _U10 = np.uint64(0), np.uint64(1), np.uint64(2), np.uint64(10)
_MASK63 = np.uint64((1 << 63) - 1)
_MANTISSA_MASK = np.uint64((1 << 52) - 1)
_MAGNITUDE_MASK = np.uint64((1 << 63) - 1)


@_jit
def _round_to_odd(g1, g0, cp):
    """``g * cp / 2**127`` with ``g = g1 * 2**63 + g0``, its lowest bit set when
    inexact (Schubfach's ``rop``)."""
    x1, _ = multiply_full(g0, cp)
    y1, y0 = multiply_full(g1, cp)
    z = (y0 >> _U1) + x1
    vbp = y1 + (z >> np.uint64(63))
    return vbp | (((z & _MASK63) + _MASK63) >> np.uint64(63))


@_jit
def shortest_decimal(c, q, asymmetric):
    """``(f, k)``: the shortest decimal ``f * 10**k`` that rounds back to
    ``c * 2**q`` (uint64 ``c`` > 0).  ``asymmetric`` says the neighbour below
    is half as far as the one above (``c`` is the smallest significand of a
    binade that is not the lowest).  ``f`` may end in zeros."""
    out = c & _U1  # an odd significand excludes the interval's ends
    cb = c << np.uint64(2)
    cbr = cb + _U2
    if asymmetric:
        cbl = cb - _U1
        k = (q * 661971961083 - 274743187321) >> 41  # floor(log10(3/4 * 2**q))
    else:
        cbl = cb - _U2
        k = (q * 661971961083) >> 41  # floor(log10(2**q))
    index = -k - POW5_MIN
    high, low = POW5_HIGH[index], POW5_LOW[index]
    # g = floor(10**-k * 2**r) + 1 for the r that puts g in [2**125, 2**126).
    g_high = high >> _U2
    g_low = ((low >> _U2) | (high << np.uint64(62))) + _U1
    g_high += np.uint64(g_low == _U0)
    g1 = (g_high << _U1) | (g_low >> np.uint64(63))
    g0 = g_low & _MASK63
    h = np.uint64(q + POW5_EXPONENT[index] - k + 129)
    vb = _round_to_odd(g1, g0, cb << h)
    vbl = _round_to_odd(g1, g0, cbl << h)
    vbr = _round_to_odd(g1, g0, cbr << h)
    s = vb >> _U2
    sp10 = (s // _U10) * _U10  # one digit fewer
    tp10 = sp10 + _U10
    upin = vbl + out <= sp10 << _U2
    wpin = (tp10 << _U2) + out <= vbr
    if upin != wpin:
        return sp10 if upin else tp10, k
    t = s + _U1
    uin = vbl + out <= s << _U2
    win = (t << _U2) + out <= vbr
    if uin != win:
        return s if uin else t, k
    cmp = np.int64(vb) - np.int64((s + t) << _U1)
    return s if cmp < 0 or (cmp == 0 and (s & _U1) == _U0) else t, k


@_jit
def significand_exponent(x, mantissa_bits, q_min):
    """``(c, q, asymmetric)`` of a finite non-zero float64 ``x`` in a format of
    ``mantissa_bits`` whose subnormals are multiples of ``2**q_min``; ``x`` must
    be a value of that format."""
    bits = float_bits(x) & _MAGNITUDE_MASK
    biased = np.int64(bits >> np.uint64(52))
    mantissa = bits & _MANTISSA_MASK
    if biased == 0:  # a float64 subnormal: only in DOUBLE itself
        significand, exponent = mantissa, np.int64(-1074)
    else:
        significand, exponent = mantissa | np.uint64(1 << 52), biased - 1075
    q = larger(exponent + 52 - mantissa_bits, q_min)
    c = significand >> np.uint64(q - exponent)
    return c, q, c == (_U1 << np.uint64(mantissa_bits)) and q > q_min


@_jit
def digit_count(value):
    """Decimal digits of a uint64 (1 for 0)."""
    guess = ((64 - np.int64(leading_zeros(value))) * 1233) >> 12  # floor(log10(2**bits))
    return larger(guess + np.int64(value >= POW10[guess]), 1)


#: Forms of a decimal record; ``NEGATIVE`` is or-ed in for a minus sign.
POSITIONAL, SCIENTIFIC, INTEGER, NAN, INFINITY = range(5)
NEGATIVE = 8
_FORM_MASK = NEGATIVE - 1

_DIGIT_PAIRS = np.frombuffer("".join(f"{i:02d}" for i in range(100)).encode(), np.uint8)
_U100 = np.uint64(100)
_ZERO, _POINT, _MINUS, _PLUS, _E = (ord(c) for c in "0.-+e")


def _ascii(text):
    return np.frombuffer(text.encode(), np.uint8)


_NAN_TEXT, _INF_TEXT, _ZERO_POINT, _POINT_ZERO = map(_ascii, ("NaN", "INF", "0.", ".0"))


@_jit
def float_decimal(x, mantissa_bits, q_min, upper):
    """The decimal record ``(f, k, form)`` of a float64 ``x`` holding a value of
    the format described by ``mantissa_bits`` and ``q_min``: ``f * 10**k`` is
    its shortest decimal, ``f`` without trailing zeros."""
    negative = NEGATIVE if float_bits(x) >> np.uint64(63) != _U0 else 0
    if x != x:
        return _U0, 0, NAN
    magnitude = abs(x)
    if magnitude == np.inf:
        return _U0, 0, INFINITY | negative
    if magnitude == 0:
        return _U0, 0, POSITIONAL | negative
    c, q, asymmetric = significand_exponent(magnitude, mantissa_bits, q_min)
    f, k = shortest_decimal(c, q, asymmetric)
    while f % _U10 == _U0:
        f //= _U10
        k += 1
    return f, k, (POSITIONAL if 1e-4 <= magnitude < upper else SCIENTIFIC) | negative


@_jit
def integer_decimal(value):
    """The decimal record of an int64 or uint64."""
    if value < 0:
        return _U0 - np.uint64(value), 0, INTEGER | NEGATIVE
    return np.uint64(value), 0, INTEGER


@_jit
def text_length(f, k, form):
    """Length of the text :func:`write_text` writes for a decimal record."""
    sign = np.int64((form & NEGATIVE) != 0)
    kind = form & _FORM_MASK
    if kind == NAN:
        return 3
    if kind == INFINITY:
        return sign + 3
    n = digit_count(f)
    if kind == INTEGER:
        return sign + n
    exponent = k + n - 1
    if kind == SCIENTIFIC:
        return sign + n + np.int64(n > 1) + (5 if abs(exponent) >= 100 else 4)
    if exponent < 0:
        return sign + 1 - exponent + n
    return sign + larger(n, exponent + 1) + 1 + np.int64(n <= exponent + 1)


@_jit
def write_digits(row, end, value, count):
    """The last ``count`` decimal digits of ``value`` into ``row[end - count:end]``."""
    j = end
    while j - 2 >= end - count:
        pair = np.int64(value % _U100) * 2
        value //= _U100
        row[j - 1] = _DIGIT_PAIRS[pair + 1]
        row[j - 2] = _DIGIT_PAIRS[pair]
        j -= 2
    if j > end - count:
        row[j - 1] = _ZERO + np.int64(value % _U10)


@_jit
def write_literal(row, start, text):
    """Copy the bytes ``text`` into ``row`` at ``start``; return the end."""
    for j in range(text.size):
        row[start + j] = text[j]
    return start + text.size


@_jit
def write_positional(row, start, f, n, exponent):
    """``f`` (``n`` digits) times ``10**(exponent - n + 1)`` as "ddd.ddd",
    at least one digit on each side of the point; returns the end."""
    if exponent < 0:
        end = write_literal(row, start, _ZERO_POINT)
        for _ in range(-exponent - 1):
            row[end] = _ZERO
            end += 1
        write_digits(row, end + n, f, n)
        return end + n
    if n <= exponent + 1:
        write_digits(row, start + n, f, n)
        end = start + n
        for _ in range(exponent + 1 - n):
            row[end] = _ZERO
            end += 1
        return write_literal(row, end, _POINT_ZERO)
    write_digits(row, start + n + 1, f, n)
    for j in range(exponent + 1):  # slide the integer digits left over the point
        row[start + j] = row[start + j + 1]
    row[start + exponent + 1] = _POINT
    return start + n + 1


@_jit
def write_scientific(row, start, f, n, exponent):
    """``f`` (``n`` digits) as "d.ddde+XX"; returns the end."""
    write_digits(row, start + n + 1, f, n)
    row[start] = row[start + 1]
    end = start + 1
    if n > 1:
        row[start + 1] = _POINT
        end = start + n + 1
    row[end] = _E
    row[end + 1] = _MINUS if exponent < 0 else _PLUS
    magnitude = np.uint64(abs(exponent))
    count = 3 if magnitude >= 100 else 2
    write_digits(row, end + 2 + count, magnitude, count)
    return end + 2 + count


@_jit
def write_text(row, f, k, form):
    """Write the text of a decimal record into ``row`` (bytes or code points);
    return its length."""
    kind = form & _FORM_MASK
    start = 0
    if form & NEGATIVE:  # never with NAN
        row[0] = _MINUS
        start = 1
    if kind == NAN:
        return write_literal(row, start, _NAN_TEXT)
    if kind == INFINITY:
        return write_literal(row, start, _INF_TEXT)
    n = digit_count(f)
    if kind == INTEGER:
        write_digits(row, start + n, f, n)
        return start + n
    if kind == SCIENTIFIC:
        return write_scientific(row, start, f, n, k + n - 1)
    return write_positional(row, start, f, n, k + n - 1)


@cached_njit(parallel=True, nogil=True)
def float_decimals(values, mantissa_bits, q_min, upper, digits, exponents, forms, lengths):
    """The decimal record (:func:`float_decimal`) of every float of the flat
    array ``values`` and the length of its text."""
    for i in prange(values.size):
        f, k, form = float_decimal(np.float64(values[i]), mantissa_bits, q_min, upper)
        digits[i], exponents[i], forms[i] = f, k, form
        lengths[i] = text_length(f, k, form)


@cached_njit(parallel=True, nogil=True)
def integer_decimals(values, digits, exponents, forms, lengths):
    """The decimal record (:func:`integer_decimal`) of every int64 or uint64
    of the flat array ``values`` and the length of its text."""
    for i in prange(values.size):
        f, k, form = integer_decimal(values[i])
        digits[i], exponents[i], forms[i] = f, k, form
        lengths[i] = text_length(f, k, form)


@cached_njit(parallel=True, nogil=True)
def text_parallel(digits, exponents, forms, chars):
    """The text of every decimal record into the rows of ``chars`` (uint32 code
    points of a ``<U`` array at least as wide as every text), zero-padded."""
    n, width = chars.shape
    for i in prange(n):
        row = chars[i]
        for j in range(write_text(row, digits[i], exponents[i], forms[i]), width):
            row[j] = 0


#: ``(serial, parallel)`` compilations of the two printing loops, for
#: :func:`~numbacast.engine.kernels.split_run`.
float_decimal_kernel = (serial_version(float_decimals), float_decimals)
integer_decimal_kernel = (serial_version(integer_decimals), integer_decimals)
text_kernel = (serial_version(text_parallel), text_parallel)
