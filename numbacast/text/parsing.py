"""Text to numbers, compiled: the grammar of the conversion rules (docs/rules.md), rounded once.

Grammar (ASCII, case-insensitive letters): optional surrounding whitespace
(space, \\t, \\n, \\v, \\f, \\r); an optional sign; then decimal digits with
an optional point (at least one digit) and an optional exponent ``e``/``E``
with an optional sign and at least one digit -- or one of the words ``inf``,
``infinity``, ``nan``.  For BOOL targets also ``true`` and ``false`` (no
sign).  A text is a row of character codes (bytes or code points, as in
``S`` and ``<U`` arrays); trailing zeros are padding.

The shape of a text -- where its sign, digits, point and exponent are -- is
read from bit masks of its character classes (:mod:`numbacast.chars`,
16 characters per vector step) by :func:`quick_scan` when the text is a plain
number of at most 19 digits within the first 64 characters; every other text
goes through :func:`scan`, one character at a time.

A float target gets the exact decimal value rounded once: :func:`read_float`
computes a float64 rounded to nearest even (for DOUBLE) or *to odd* (for every
narrower target, which rounds it again without double rounding, see
:func:`numbacast.codecs.round_to_float64`).  The binary significand comes from

1. a fast path (the Eisel-Lemire idea): the first 19 significant digits times
   a 128-bit power of five, exact whenever the product's truncation is
   certain -- and, for longer inputs, when the same 54 bits come out for the
   19 digits and for the 19 digits plus one unit;
2. otherwise an exact fallback, the "decimal shift" algorithm on up to 800
   digits (enough for every rounding boundary of a float64, whose exact
   decimal expansions have at most 767 significant digits): a pass of its
   own (:func:`exact_float`) over the texts that need it, compiled only when
   one does.

An integer target gets :func:`read_integer`: an integer literal (no point,
no exponent) within -2**63 .. 2**64-1 is that integer, low bits kept; any
other number truncates toward zero and saturates (8- to 64-bit targets) or
rounds to nearest even and keeps the low bits (4- and 2-bit targets),
computed exactly from the digits; NaN gives 0, infinities give max/min
(8 to 64 bits) or 0 (4 and 2 bits).
"""

import functools

import numpy as np
from numba import prange

from ..engine.bits import larger, leading_zeros, ones, smaller, trailing_zeros
from ..engine.cache import cached_njit, helper_njit, serial_version
from ..engine.codecs import round_to_float64
from ..engine.prefetch import RUN_BYTES, read_ahead
from ..engine.scratch import stack_bytes
from .chars import LANES, WINDOW, aligned_digits, borrowed_row, classes
from .wide import POW5_EXPONENT, POW5_HIGH, POW5_LOW, POW5_MAX, POW5_MIN, multiply_full

_jit = helper_njit

#: What a text holds.
NUMBER, INFINITY, NAN, TRUE, FALSE, INVALID = range(6)
#: The float value of each kind of word, by kind.
_WORD_VALUES = np.array([0.0, np.inf, np.nan, 1.0, 0.0, 0.0])

#: Significant digits the fast path reads, all of which fit in a uint64.
FAST_DIGITS = 19
#: Digits the exact fallback keeps; any further non-zero digit is a sticky bit.
DIGITS_MAX = 800
#: Bytes of the exact pass's digit buffer: the digits kept and the 19 a left shift may add.
DIGITS_BUFFER = DIGITS_MAX + 19
#: Decimal exponents are read up to this magnitude (far beyond any float).
EXPONENT_LIMIT = 10**15

_U0, _U1, _U10 = np.uint64(0), np.uint64(1), np.uint64(10)
_U64_MAX = np.uint64(2**64 - 1)
_TOP_BIT = np.uint64(1 << 63)
_POW5_U64 = np.array([5**i for i in range(28)], np.uint64)  # 5**27 < 2**63
_EXACT_POW5_MAX = 55  # 5**55 < 2**128: the table holds it exactly
_FAR_EXPONENT = 4000  # a binary exponent beyond every format, above or below

_DOT, _PLUS, _MINUS, _E = ord("."), ord("+"), ord("-"), ord("e")


def _ascii(word):
    return np.frombuffer(word.encode(), np.uint8)


_INF, _INITY, _NAN, _TRUE, _FALSE = map(_ascii, ("inf", "inity", "nan", "true", "false"))


@_jit
def _digit(c):
    """The value of a decimal digit character, or -1."""
    d = np.int64(c) - 48
    return d if 0 <= d <= 9 else -1


@_jit
def _is_space(c):
    return c == 32 or 9 <= c <= 13


@_jit
def _match(row, i, word):
    """The end of ``word`` (lower-case letters) at ``row[i:]`` in any case, or -1."""
    if i + word.size > row.size:
        return -1
    for j in range(word.size):
        if np.int64(row[i + j]) | 0x20 != word[j]:
            return -1
    return i + word.size


@_jit
def _word(row, i, signed, words):
    """``(kind, end)`` of a word at ``row[i:]``; ``(INVALID, i)`` when there is none."""
    end = _match(row, i, _INF)
    if end >= 0:
        longer = _match(row, end, _INITY)
        return INFINITY, longer if longer >= 0 else end
    end = _match(row, i, _NAN)
    if end >= 0:
        return NAN, end
    if words and not signed:
        end = _match(row, i, _TRUE)
        if end >= 0:
            return TRUE, end
        end = _match(row, i, _FALSE)
        if end >= 0:
            return FALSE, end
    return INVALID, i


@_jit
def _digits(row, i, w):
    """Read the digits at ``row[i:]`` into ``w`` (modulo 2**64): ``(w, end)``."""
    while i < row.size:
        d = np.uint64(row[i]) - np.uint64(48)
        if d > np.uint64(9):
            break
        w = w * _U10 + d
        i += 1
    return w, i


@_jit
def _exponent(row, i):
    """``(exponent, end)`` of the digits of an exponent at ``row[i:]`` (after
    the "e"); ``end`` is -1 when there is no digit."""
    negative = i < row.size and row[i] == _MINUS
    if i < row.size and (row[i] == _PLUS or row[i] == _MINUS):
        i += 1
    value, end = _digits(row, i, _U0)
    if end - i > 15:  # clamp a long exponent (its digits may have overflowed)
        value = _U0
        for j in range(i, end):
            value = smaller(value * _U10 + np.uint64(row[j] - 48), np.uint64(EXPONENT_LIMIT))
    exponent = np.int64(value)
    return -exponent if negative else exponent, end if end > i else -1


@_jit
def scan(row, words):
    """Read one text.

    Returns ``(kind, negative, w, e10, more, literal, start, exponent)``:
    for a NUMBER, ``w`` holds its first 19 significant digits and the value
    is ``w * 10**e10`` -- plus a little more when ``more`` (a non-zero digit
    was left out); ``literal`` says there is no point and no exponent;
    ``start`` is where the digits begin and ``exponent`` is the value of the
    exponent part.  ``words`` also accepts "true" and "false"."""
    n = row.size
    i = 0
    while i < n and _is_space(row[i]):
        i += 1
    signed = i < n and (row[i] == _PLUS or row[i] == _MINUS)
    negative = signed and row[i] == _MINUS
    i += np.int64(signed)
    start = i
    w, i = _digits(row, i, _U0)
    whole = i - start
    point = i < n and row[i] == _DOT
    if point:
        w, end = _digits(row, i + 1, w)
        fraction = end - i - 1
        i = end
    else:
        fraction = 0
    e10, more, exponent, kind = -fraction, False, np.int64(0), NUMBER
    if whole + fraction == 0:
        kind, i = (INVALID, i) if point else _word(row, i, signed, words)
    elif whole + fraction > FAST_DIGITS:  # w may have overflowed: read again
        w, e10, more = _leading_digits(row, start)
    if kind == NUMBER and i < n and np.int64(row[i]) | 0x20 == _E:
        exponent, i = _exponent(row, i + 1)
        point = True  # not a literal
        e10 += exponent
        if i < 0:
            kind, i = INVALID, n
    while i < n and _is_space(row[i]):
        i += 1
    padding = 0
    for j in range(n):  # only padding may follow (a whole-row loop: no branch to mispredict)
        padding |= np.int64(row[j]) * (j >= i)
    if padding != 0:
        kind = INVALID
    return kind, negative, w, e10, more, not point, start, exponent


@_jit
def _bit(mask, i):
    """Bit ``i`` of a uint64 ``mask`` as 0 or 1 (0 from bit 64 on)."""
    return np.int64((mask >> np.uint64(i & 63)) & _U1) * (i < 64)


@_jit
def _span(low, high):
    """The uint64 mask of bits ``low`` to ``high - 1`` (0 <= low <= high <= 64)."""
    if high <= low:
        return _U0
    return (_U64_MAX >> np.uint64(64 - high + low)) << np.uint64(low)


@_jit
def _decimal(row, start, end, w=_U0):
    """``w`` followed by the digits of ``row[start:end]`` (digits only): two a
    step, ``w * 100 + (10 * d1 + d2)``, whose product does not wait for the
    pair's own arithmetic."""
    i = start
    while i + 1 < end:
        pair = (np.uint64(row[i]) - np.uint64(48)) * _U10 + (np.uint64(row[i + 1]) - np.uint64(48))
        w = w * np.uint64(100) + pair
        i += 2
    if i < end:
        w = w * _U10 + (np.uint64(row[i]) - np.uint64(48))
    return w


@_jit
def _eight_digits(word):
    """The number whose 8 decimal digits are the bytes of ``word``, the first
    (most significant) in the low byte: pairs, then fours, then all eight, by
    multiplications that add up the lanes of a word."""
    word = word * _U10 + (word >> np.uint64(8))  # byte 2k: digits 2k and 2k + 1
    pairs = np.uint64(0x000000FF000000FF)
    return (
        (word & pairs) * np.uint64(100 + (1000000 << 32))
        + ((word >> np.uint64(16)) & pairs) * np.uint64(1 + (10000 << 32))
    ) >> np.uint64(32)


@_jit
def _mantissa_digits(row, start, at, end):
    """The digits of ``row[start:end]`` but the point at ``at`` (``end`` when
    none) as an integer: 16 a step from the window's bytes (:func:`aligned_digits`)
    when the mantissa ends within the first 16 characters, else two a step."""
    if end <= LANES:
        high, low = aligned_digits(row, start, at, end)
        return _eight_digits(high) * np.uint64(10**8) + _eight_digits(low)
    return _decimal(row, at + 1, end, _decimal(row, start, at))


@_jit
def quick_scan(row):
    """:func:`scan` of a plain number -- at most 19 digits after its leading
    zeros, the whole text within the first :data:`~numbacast.chars.WINDOW` characters -- read from
    character class masks: ``(True, kind, negative, ...)`` as scan returns,
    or ``(False, ...)`` for any other text, which scan reads."""
    digit, point, letter_e, sign, space, used, zero = classes(row)
    text = used & ~space
    end = 64 - np.int64(leading_zeros(used))  # padding (zeros) only from here on
    first, last = np.int64(trailing_zeros(text)), 64 - np.int64(leading_zeros(text))
    failed = (False, INVALID, False, _U0, np.int64(0), False, False, np.int64(0), np.int64(0))
    if row.size > WINDOW or text == _U0 or used != _span(0, end):
        return failed
    start = first + _bit(sign, first)
    mantissa_end = start + np.int64(trailing_zeros(~((digit | point) >> np.uint64(start & 63))))
    mantissa = _span(start, smaller(mantissa_end, 64))
    leading = start + np.int64(trailing_zeros(~((zero | point) >> np.uint64(start & 63))))  # zeros and point
    significant = ones(digit & mantissa & ~_span(start, smaller(leading, 64)))
    count, points = ones(digit & mantissa), ones(point & mantissa)
    if start >= 64 or count == _U0 or significant > FAST_DIGITS or points > _U1:
        return failed
    exponent, has_exponent = np.int64(0), mantissa_end < last
    if has_exponent:
        digits_start = mantissa_end + 1 + _bit(sign, mantissa_end + 1)
        digits = _span(smaller(digits_start, last), last)
        if (
            not _bit(letter_e, mantissa_end)
            or digits_start >= last
            or last - digits_start > 15
            or digit & digits != digits
        ):
            return failed
        exponent = np.int64(_decimal(row, digits_start, last))
        exponent = -exponent if row[mantissa_end + 1] == _MINUS else exponent
    at = np.int64(trailing_zeros(point & mantissa)) if points else mantissa_end  # the point, or the end
    fraction = mantissa_end - 1 - at if points else 0
    return (
        True,
        NUMBER,
        row[first] == _MINUS,
        _mantissa_digits(row, start, at, mantissa_end),
        exponent - fraction,
        False,
        points == _U0 and not has_exponent,
        start,
        exponent,
    )


@_jit
def fast_significand(w, e10):
    """``(m, e2, sticky, ok)``: ``w * 10**e10`` (``w`` > 0) is ``m * 2**e2``, ``m``
    with its top bit set, exactly when not ``sticky``, else a little more but
    less than ``(m + 1) * 2**e2``.  ``ok`` False: the product could not tell."""
    if e10 < POW5_MIN:
        return _TOP_BIT, -_FAR_EXPONENT, True, True
    if e10 > POW5_MAX:
        return _TOP_BIT, _FAR_EXPONENT, True, True
    shift = np.int64(leading_zeros(w))
    wn = w << np.uint64(shift)
    index = e10 - POW5_MIN
    # The 192-bit product of wn and the 128-bit truncated power of five.
    a1, a0 = multiply_full(wn, POW5_LOW[index])
    b1, b0 = multiply_full(wn, POW5_HIGH[index])
    p1 = a1 + b0
    p2 = b1 + np.uint64(p1 < a1)
    shifted = _U1 - (p2 >> np.uint64(63))  # 1: the top bit is clear, move it up (without a branch)
    m = (p2 << shifted) | ((p1 >> np.uint64(63)) * shifted)
    rest, below = (p1 << shifted) | shifted, np.int64(shifted)
    e2 = POW5_EXPONENT[index] + e10 - shift + 128 - below
    # Either the product is exact (only its bits say whether the value is
    # inexact), or the true product exceeds the computed one by less than wn
    # in the lowest word, which changes m only through a carry across an
    # all-ones rest.  Both computed, one chosen without a branch: texts mix them.
    exact = (e10 >= 0) & (e10 <= _EXACT_POW5_MAX)
    sticky = ((rest & ~np.uint64(below)) != _U0) | (a0 != _U0) | ~exact
    uncertain = ~exact & (a0 + wn < a0) & (rest == _U64_MAX)
    if uncertain and -len(_POW5_U64) < e10 < 0 and w % _POW5_U64[-e10] == _U0:
        # 5**-e10 divides w: the value is the integer w / 5**-e10 times 2**e10
        # (a carry the truncated power of five always leaves uncertain)
        quotient = w // _POW5_U64[-e10]
        shift = np.int64(leading_zeros(quotient))
        return quotient << np.uint64(shift), e10 - shift, False, True
    # Otherwise an inexact product's value is not a 64-bit dyadic number: it is inexact.
    return m, e2, sticky, not uncertain


@functools.partial(_jit, inline="always")
def _trim(digits, count):
    """The count of ``digits[:count]`` without its trailing zeros."""
    while count > 0 and digits[count - 1] == 0:
        count -= 1
    return count


@_jit
def _mantissa(row, start, limit, digits):
    """Walk the mantissa at ``row[start:]`` (digits and at most one point):
    ``(w, kept, point, more)``.  Leading zeros are skipped; of the
    significant digits the first ``limit`` are kept, accumulated into ``w``
    when ``digits`` is None, else stored into ``digits``, and ``kept`` counts
    them; ``more``: a non-zero digit was left out; ``point``: the digits
    before the point, less the zeros that lead after it."""
    w, kept, point, more, after_point = _U0, 0, 0, False, False
    for i in range(start, row.size):
        d = _digit(row[i])
        if d < 0:
            if row[i] != _DOT or after_point:
                break
            after_point = True
        elif kept == 0 and d == 0:
            point -= np.int64(after_point)
        else:
            if kept < limit:
                if digits is None:
                    w = w * _U10 + np.uint64(d)
                else:
                    digits[kept] = d
                kept += 1
            else:
                more |= d != 0
            point += np.int64(not after_point)
    return w, kept, point, more


@_jit
def _load_digits(row, start, exponent, digits):
    """The significant digits at ``row[start:]`` into ``digits`` (without
    trailing zeros): ``(count, point, truncated)`` with the value
    ``0.d1d2... * 10**point``; ``truncated``: non-zero digits were left out."""
    _, count, point, truncated = _mantissa(row, start, DIGITS_MAX, digits)
    return _trim(digits, count), point + exponent, truncated


@_jit
def _shift_right(digits, count, point, truncated, bits):
    """The decimal divided by ``2**bits`` (1 <= bits <= 60), in place."""
    mask = (_U1 << np.uint64(bits)) - _U1
    read, acc = 0, _U0
    while acc >> np.uint64(bits) == _U0:  # digits until the first quotient digit
        acc = acc * _U10 + (np.uint64(digits[read]) if read < count else _U0)
        read += 1
    point -= read - 1
    written = 0
    while read < count:
        digits[written] = acc >> np.uint64(bits)
        written += 1
        acc = (acc & mask) * _U10 + np.uint64(digits[read])
        read += 1
    while acc != _U0:
        digit = acc >> np.uint64(bits)
        if written < DIGITS_MAX:
            digits[written] = digit
            written += 1
        else:
            truncated |= digit != _U0
        acc = (acc & mask) * _U10
    return _trim(digits, written), point, truncated


@_jit
def _shift_left(digits, count, point, truncated, bits):
    """The decimal times ``2**bits`` (1 <= bits <= 60), in place; ``digits``
    has room for 19 digits more than :data:`DIGITS_MAX`."""
    write, acc = count + 19, _U0  # 2**60 < 10**19: at most 19 new digits
    for read in range(count - 1, -1, -1):
        acc += np.uint64(digits[read]) << np.uint64(bits)
        write -= 1
        digits[write] = acc % _U10
        acc //= _U10
    while acc != _U0:
        write -= 1
        digits[write] = acc % _U10
        acc //= _U10
    grown = count + 19 - write
    for j in range(grown):
        digits[j] = digits[write + j]
    for j in range(DIGITS_MAX, grown):
        truncated |= digits[j] != 0
    return _trim(digits, smaller(grown, DIGITS_MAX)), point + grown - count, truncated


@_jit
def _leading_digits(row, start):
    """``(w, e10, more)`` of the mantissa at ``row[start:]``: its first 19
    significant digits, the power of ten they are scaled by and whether a
    non-zero digit was left out."""
    w, kept, point, more = _mantissa(row, start, FAST_DIGITS, None)
    return w, point - kept, more


@_jit
def exact_significand(row, start, exponent):
    """``(m, e2, sticky)`` as :func:`fast_significand`, for the non-zero
    mantissa at ``row[start:]`` times ``10**exponent``, by exact decimal
    shifts."""
    digits = stack_bytes(DIGITS_BUFFER)  # no allocation per text
    count, point, truncated = _load_digits(row, start, exponent, digits)
    if point > 400:
        return _TOP_BIT, _FAR_EXPONENT, True
    if point < -400:
        return _TOP_BIT, -_FAR_EXPONENT, True
    e2 = np.int64(0)
    while point > 0:  # down below 1
        bits = smaller(4 * point, 60)
        count, point, truncated = _shift_right(digits, count, point, truncated, bits)
        e2 += bits
    while point < 0 or digits[0] < 5:  # up into [0.5, 1)
        bits = larger(smaller(-point * 3321928 // 1000000, 60), 1)  # 2**bits <= 10**-point
        count, point, truncated = _shift_left(digits, count, point, truncated, bits)
        e2 -= bits
    for _ in range(2):  # into [2**63, 2**64)
        count, point, truncated = _shift_left(digits, count, point, truncated, np.int64(32))
    m = _U0
    for j in range(point):
        m = m * _U10 + (np.uint64(digits[j]) if j < count else _U0)
    return m, e2 - 64, truncated or count > point


@_jit
def quick_word(row, words):
    """``(kind, negative)`` of a word as :func:`scan` reads it, with an
    optional sign and nothing else in the row (no whitespace); ``kind``
    INVALID for every other text."""
    signed = row.size > 0 and (row[0] == _PLUS or row[0] == _MINUS)
    kind, end = _word(row, np.int64(signed), signed, words)
    for j in range(end, row.size):
        if row[j] != 0:
            return INVALID, False
    return kind, signed and row[0] == _MINUS


@_jit
def quick_float(row, to_odd, words):
    """``(value, settled)``: :func:`read_float` of a plain number that
    :func:`quick_scan` reads and whose significand :func:`fast_significand`
    settles, or of a word that :func:`quick_word` reads; ``settled`` False
    for every other text, which read_float reads."""
    quick, _, negative, w, e10, _, _, _, _ = quick_scan(row)
    if not quick:
        kind, negative = quick_word(row, words)
        value = _WORD_VALUES[kind]
        return -value if negative else value, kind != INVALID
    value = 0.0
    if w != _U0:
        m, e2, sticky, ok = fast_significand(w, e10)
        if not ok:
            return 0.0, False
        value = round_to_float64(m, e2, sticky, to_odd)
    return -value if negative else value, True


#: What the full reader found a text to be (a ``valid`` entry): not a number,
#: a number, or a number whose significand needs :func:`exact_float`.
READ_INVALID, READ_NUMBER, READ_EXACT = np.uint8(0), np.uint8(1), np.uint8(2)


@_jit
def read_float(row, to_odd, words):
    """``(value, read)``: the text at ``row`` as a float64 rounded to nearest
    even, or to odd (``to_odd``), and :data:`READ_NUMBER`; ``words`` accepts
    "true" (1.0) and "false".  :data:`READ_INVALID` for a text that is not a
    number, :data:`READ_EXACT` (and no value) for one whose significand the
    fast path cannot settle, which :func:`exact_float` reads."""
    kind, negative, w, e10, more, _, start, exponent = scan(row, words)
    value = 0.0
    if kind == NAN:
        value = np.nan
    elif kind == INFINITY:
        value = np.inf
    elif kind == TRUE:
        value = 1.0
    elif kind == NUMBER and w != _U0:
        m, e2, sticky, ok = fast_significand(w, e10)
        if more and ok:  # the value lies between w and w + 1 units
            m_next, e2_next, _, ok_next = fast_significand(w + _U1, e10)
            ok = ok_next and e2_next == e2 and m_next >> _U10 == m >> _U10
            sticky = True
        if not ok:
            return 0.0, READ_EXACT
        value = round_to_float64(m, e2, sticky, to_odd)
    return -value if negative else value, READ_NUMBER if kind != INVALID else READ_INVALID


@_jit
def exact_float(row, to_odd):
    """:func:`read_float` of a number whose significand needs the exact
    decimal shifts (:func:`exact_significand`): a kernel of its own, so that
    a first read of texts compiles it only when some text needs it."""
    _, negative, _, _, _, _, start, exponent = scan(row, False)  # a number: words play no part
    m, e2, sticky = exact_significand(row, start, exponent)
    value = round_to_float64(m, e2, sticky, to_odd)
    return -value if negative else value


#: The fraction part of a number, as rounding to an integer sees it.
FRACTION_ZERO, FRACTION_BELOW_HALF, FRACTION_HALF, FRACTION_ABOVE_HALF = range(4)


@_jit
def integer_parts(row, start, exponent):
    """``(low, big, fraction)`` of the mantissa at ``row[start:]`` times
    ``10**exponent``: its integer part modulo 2**64, whether that part is
    2**64 or more, and the class of its fraction part."""
    integer_digits = exponent
    for i in range(start, row.size):
        if _digit(row[i]) < 0:
            break
        integer_digits += 1
    low, big, first, rest, position = _U0, False, 0, False, 0
    for i in range(start, row.size):
        d = _digit(row[i])
        if d < 0:
            if row[i] == _DOT:
                continue
            break
        if position < integer_digits:
            big |= low > (_U64_MAX - np.uint64(d)) // _U10
            low = low * _U10 + np.uint64(d)
        elif position == integer_digits:
            first = d
        else:
            rest |= d != 0
        position += 1
    for _ in range(smaller(larger(integer_digits - position, 0), 64)):  # 10**64 is 0 modulo 2**64
        big |= low > _U64_MAX // _U10
        low *= _U10
    if first == 0 and not rest:
        fraction = FRACTION_ZERO
    elif first < 5:
        fraction = FRACTION_BELOW_HALF
    elif first == 5 and not rest:
        fraction = FRACTION_HALF
    else:
        fraction = FRACTION_ABOVE_HALF
    return low, big, fraction


@_jit
def quick_integer(row):
    """``(code, settled)``: :func:`read_integer` of an integer literal of at
    most 19 digits (without its sign) that :func:`quick_scan` reads, and
    whose value is -2**63 or more; ``settled`` False for every other text."""
    quick, _, negative, w, _, _, literal, _, _ = quick_scan(row)
    if not quick or not literal or (negative and w > _TOP_BIT):
        return _U0, False
    return _U0 - w if negative else w, True


@_jit
def read_integer(row, bits, signed):
    """``(code, ok)``: the text at ``row`` cast to an integer of ``bits`` bits
    (``signed`` or not), as its two's complement code in a uint64."""
    kind, negative, _, _, _, literal, start, exponent = scan(row, False)
    mask = _U64_MAX >> np.uint64(64 - bits)
    highest = mask >> np.uint64(signed)  # the largest magnitude of either sign
    lowest = (highest + _U1) if signed else _U0
    value = _U0
    if kind == INFINITY and bits >= 8:
        value = (_U0 - lowest) if negative else highest
    elif kind == NUMBER:
        magnitude, big, fraction = integer_parts(row, start, exponent)
        if literal and not big and (not negative or magnitude <= _TOP_BIT):
            value = _U0 - magnitude if negative else magnitude
        elif bits < 8:
            up = fraction == FRACTION_ABOVE_HALF or (fraction == FRACTION_HALF and (magnitude & _U1) != _U0)
            magnitude += np.uint64(up)
            value = _U0 - magnitude if negative else magnitude
        elif negative:
            value = _U0 - (lowest if big or magnitude > lowest else magnitude)
        else:
            value = highest if big or magnitude > highest else magnitude
    return value & mask, kind != INVALID


@helper_njit
def runs_of_rows(chars):
    """``(runs, rows)``: the quick passes go through ``chars`` by runs of
    ``rows`` rows, about :data:`~numbacast.engine.prefetch.RUN_BYTES` each,
    and before each run read ahead (:func:`~numbacast.engine.prefetch.read_ahead`):
    a row's parse waited on its first load for a seventh of its time."""
    n, width = chars.shape
    rows = larger(RUN_BYTES // larger(width * chars.itemsize, 1), 1)
    return (n + rows - 1) // rows, rows


@helper_njit
def run_of_rows(chars, r, rows):
    """``(first, end)``: the rows of the run ``r`` of :func:`runs_of_rows`,
    once the run as far on as the cast kernels read is asked for."""
    n, width = chars.shape
    first, end = r * rows, smaller(r * rows + rows, n)
    read_ahead(chars, first * width, end * width)
    return first, end


@cached_njit(parallel=True, nogil=True)
def quick_floats(chars, to_odd, words, result, settled):
    """:func:`quick_float` of every row of ``chars`` (an ``(n, width)`` array
    of bytes or code points) into ``result`` and ``settled``."""
    runs, rows = runs_of_rows(chars)
    for r in prange(runs):
        first, end = run_of_rows(chars, r, rows)
        for i in range(first, end):
            result[i], settled[i] = quick_float(borrowed_row(chars, i), to_odd, words)


@cached_njit(parallel=True, nogil=True)
def read_floats(chars, rows, to_odd, words, result, valid):
    """:func:`read_float` of the ``rows`` of ``chars`` into ``result`` and
    ``valid`` (what each is), at the same indices."""
    for j in prange(rows.size):
        i = rows[j]
        result[i], valid[i] = read_float(borrowed_row(chars, i), to_odd, words)


@cached_njit(parallel=True, nogil=True)
def exact_floats(chars, rows, to_odd, result):
    """:func:`exact_float` of the ``rows`` of ``chars`` into ``result``, at the same indices."""
    for j in prange(rows.size):
        i = rows[j]
        result[i] = exact_float(borrowed_row(chars, i), to_odd)


@cached_njit(parallel=True, nogil=True)
def quick_integers(chars, bits, result, settled):
    """:func:`quick_integer` of every row of ``chars`` into ``result`` (the low
    ``bits`` bits of each code) and ``settled``."""
    mask = _U64_MAX >> np.uint64(64 - bits)
    runs, rows = runs_of_rows(chars)
    for r in prange(runs):
        first, end = run_of_rows(chars, r, rows)
        for i in range(first, end):
            code, settled[i] = quick_integer(borrowed_row(chars, i))
            result[i] = code & mask


@cached_njit(parallel=True, nogil=True)
def read_integers(chars, rows, bits, signed, result, valid):
    """:func:`read_integer` of the ``rows`` of ``chars``, as :func:`read_floats`."""
    for j in prange(rows.size):
        i = rows[j]
        result[i], valid[i] = read_integer(borrowed_row(chars, i), bits, signed)


#: ``(serial, parallel)`` compilations (for
#: :func:`~numbacast.engine.kernels.split_run`) of the passes over texts: the
#: quick one over every text, the full one over the texts it leaves, and for
#: floats the exact significands of the few numbers the full one leaves.  A
#: call compiles only the passes its texts need.
QUICK_FLOATS, READ_FLOATS, EXACT_FLOATS, QUICK_INTEGERS, READ_INTEGERS = (
    (serial_version(kernel), kernel)
    for kernel in (quick_floats, read_floats, exact_floats, quick_integers, read_integers)
)
