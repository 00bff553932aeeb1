"""ONNX STRING in and out: the text layer behind :func:`numbacast.cast`.

* Numbers to STRING (:func:`format_numbers`): a ``<U`` array just as wide as
  the longest text.  Floats print their shortest round-trip digits in their
  own format and integers their decimal value (:mod:`numbacast.printing`);
  BOOL prints "1"/"0".  FLOAT8E8M0, whose values are powers of two read back
  by ``round_mode``, prints each value exactly: the only digits that read
  back to it in every mode.
* STRING to numbers (:func:`parse_texts`): ``<U``, ``S`` or object arrays of
  str, read by :mod:`numbacast.parsing` and rounded once to the target.  The
  first text that is not a number raises a ValueError naming its index.

Texts are handled as ``(n, width)`` arrays of uint32 code points (a ``<U``
array's own memory; ``S`` bytes are widened first).  A caller's ``out`` is
written only once every text has been read.
"""

import functools

import numpy as np

from ..engine.arrays import run
from ..engine.checks import check_out, check_out_type
from ..engine.conversion import Conversion
from ..engine.kernels import split_run
from ..engine.rounding import integer_rounding
from ..formats.registry import DOUBLE, FLOAT, FLOAT8E8M0, INT64, UINT64, resolve
from .parsing import EXACT_FLOATS, QUICK_FLOATS, QUICK_INTEGERS, READ_EXACT, READ_FLOATS, READ_INTEGERS, READ_NUMBER
from .printing import float_decimal_kernel, integer_decimal_kernel, text_kernel

#: Floats print positionally below this magnitude (docs/rules.md#rule-string-layout); FLOAT16 and
#: every narrower float use 1e3.
POSITIONAL_LIMIT = {DOUBLE: 1e16, FLOAT: 1e6}
NARROW_POSITIONAL_LIMIT = 1e3

ACCEPTED_TEXT = (
    "a decimal number (optional sign, digits with an optional point, an optional exponent, "
    "surrounding whitespace) or inf, infinity, nan in any case"
)


def cast_text(array, target, saturate, round_mode, out, rounding=None):
    """``numbacast.cast`` when the source or the target is STRING."""
    if not target.is_string:
        return parse_texts(array, target, saturate, round_mode, out, rounding)
    if array.dtype.kind in "USO":
        texts = unicode_texts(array)
    else:
        texts = format_numbers(array, resolve(array.dtype))
    if out is not None:
        check_text_out(out, texts)
    return _deliver(texts, out)


def check_text_out(out, texts):
    """TypeError/ValueError unless ``out`` can receive ``texts``."""
    check_out_type(out)
    if out.dtype.kind != "U" or not out.dtype.isnative:
        raise TypeError(f"out has dtype {out.dtype}; a cast to STRING needs a native-order str dtype ('<U')")
    if out.shape != texts.shape:
        raise ValueError(f"out has shape {out.shape}; the input has shape {texts.shape}")
    if out.dtype.itemsize < texts.dtype.itemsize:
        raise ValueError(f"out has dtype {out.dtype}; the longest text needs {texts.dtype}")
    if not out.flags.writeable:
        raise ValueError("out is read-only")


# --------------------------------------------------------------------------
# Numbers to text
# --------------------------------------------------------------------------


def format_numbers(array, source):
    """The texts of a numeric array of the ONNX type ``source``, as a ``<U``
    array of its shape just wide enough for the longest."""
    if source is FLOAT8E8M0:
        table, lengths = e8m0_texts()
        codes = array.view(np.uint8).reshape(-1)
        return table[codes].astype(f"<U{lengths[codes].max(initial=1)}").reshape(array.shape)
    if source.is_float:
        values = array if source in POSITIONAL_LIMIT else run(Conversion.make(source, DOUBLE), array)
        fmt = source.format
        kernel = float_decimal_kernel
        style = (
            fmt.mantissa_bits,
            fmt.min_normal_exponent - fmt.mantissa_bits,
            POSITIONAL_LIMIT.get(source, NARROW_POSITIONAL_LIMIT),
        )
    else:
        values = array if source in (INT64, UINT64) else run(Conversion.make(source, INT64), array)
        kernel, style = integer_decimal_kernel, ()
    flat = np.ascontiguousarray(values.astype(values.dtype.newbyteorder("="), copy=False)).reshape(-1)
    n = flat.size
    digits, exponents = np.empty(n, np.uint64), np.empty(n, np.int32)
    forms, lengths = np.empty(n, np.uint8), np.empty(n, np.uint8)
    split_run(kernel, n, flat, *style, digits, exponents, forms, lengths)
    width = max(int(lengths.max(initial=1)), 1)
    texts = np.empty(array.shape, f"<U{width}")
    split_run(text_kernel, n, digits, exponents, forms, texts.reshape(-1).view(np.uint32).reshape(n, width))
    return texts


@functools.cache
def e8m0_texts():
    """``(texts, lengths)`` of every FLOAT8E8M0 code: 2**(code - 127) written
    out exactly (positional from 1e-4 below 1e3, else scientific), 0xFF "NaN"."""
    texts = []
    for code in range(255):
        value = 2.0 ** (code - 127)
        if 1e-4 <= value < NARROW_POSITIONAL_LIMIT:
            texts.append(np.format_float_positional(value, unique=False, precision=200, trim="0"))
        else:
            texts.append(np.format_float_scientific(value, unique=False, precision=200, trim="-", exp_digits=2))
    texts.append("NaN")
    table, lengths = np.array(texts), np.array([len(text) for text in texts])
    table.flags.writeable = lengths.flags.writeable = False
    return table, lengths


# --------------------------------------------------------------------------
# Text to numbers
# --------------------------------------------------------------------------


def unicode_texts(array):
    """A ``<U`` array of the texts of a ``<U``, ``S`` (UTF-8) or all-str object array."""
    if array.dtype.kind == "O":
        for index, item in enumerate(array.reshape(-1)):
            if not isinstance(item, str):
                raise TypeError(
                    f"cannot cast an object array holding {type(item).__name__} {item!r} (element "
                    f"{_position(index, array.shape)}): object arrays must hold only str"
                    + (
                        "; NumPy holds an integer beyond 64 bits as an object, no number type has it"
                        if isinstance(item, int)
                        else ""
                    )
                )
        return array.astype(np.str_) if array.size else np.empty(array.shape, "<U1")
    if array.dtype.kind == "S":
        try:
            return np.char.decode(array, "utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"cannot decode bytes as UTF-8 text: {error}") from None
    return array.astype(array.dtype.newbyteorder("="), copy=True)


def code_points(array):
    """The ``(n, width)`` uint32 code points of a ``<U``, ``S`` or all-str
    object array, in C order."""
    if array.dtype.kind == "S":
        width = array.dtype.itemsize
        raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        return raw.reshape(array.size, width).astype(np.uint32)
    if array.dtype.kind == "O" or not array.dtype.isnative:
        array = unicode_texts(array)
    width = array.dtype.itemsize // 4
    return np.ascontiguousarray(array).reshape(-1).view(np.uint32).reshape(array.size, width)


def parse_texts(array, target, saturate, round_mode, out, rounding=None):
    """Read every text of ``array`` as a number of the ONNX type ``target``."""
    if target is DOUBLE and rounding not in (None, "nearest_even"):
        raise ValueError(f"texts are read into DOUBLE to nearest, ties to even only, not rounding={rounding!r}")
    if target.is_integer:
        onnx_rule = integer_rounding(target.bits)
        if rounding not in (None, onnx_rule):
            raise ValueError(
                f"texts are read into {target.onnx_name} by ONNX's rule only ({onnx_rule}), not "
                f"rounding={rounding!r}; read them as DOUBLE, then cast that with rounding={rounding!r} (two roundings)"
            )
    if out is not None:
        check_out(out, array.shape, target)
    chars = code_points(array)
    n = chars.shape[0]
    valid = np.empty(n, np.uint8)
    if target.is_integer:
        codes = np.empty(n, np.uint64)
        split_run(QUICK_INTEGERS, n, chars, target.bits, codes, valid)
        _read_the_rest(READ_INTEGERS, chars, valid, target.bits, target.format.signed, codes)
        _check_valid(array, valid, target)
        unsigned = np.dtype(f"u{target.storage.itemsize}")
        return _deliver(codes.astype(unsigned).view(target.storage).reshape(array.shape), out)
    values = np.empty(n, np.float64)  # rounded to odd for every narrower target
    to_odd = target is not DOUBLE
    split_run(QUICK_FLOATS, n, chars, to_odd, target.is_bool, values, valid)
    _read_the_rest(READ_FLOATS, chars, valid, to_odd, target.is_bool, values)
    exact = np.flatnonzero(valid == READ_EXACT)  # the significands the fast path leaves
    if exact.size:
        split_run(EXACT_FLOATS, exact.size, chars, exact, to_odd, values)
        valid[exact] = READ_NUMBER
    _check_valid(array, valid, target)
    if target is DOUBLE:
        return _deliver(values.reshape(array.shape), out)
    conversion = Conversion.make(DOUBLE, target, saturate, round_mode, rounding=rounding)
    return run(conversion, values.reshape(array.shape), out)


def _read_the_rest(kernels, chars, valid, option, words_or_signed, result):
    """Read the texts the quick pass left (``valid`` 0) with the full reader:
    compiled only when some text needs it."""
    if valid.all():
        return
    rows = np.flatnonzero(valid == 0)
    split_run(kernels, rows.size, chars, rows, option, words_or_signed, result, valid)


def _deliver(result, out):
    """``result``, or ``out`` (already checked) holding a copy of it."""
    if out is None:
        return result
    out.view(np.ndarray)[...] = result
    return out


def _position(index, shape):
    return index if len(shape) <= 1 else tuple(int(i) for i in np.unravel_index(index, shape))


def _check_valid(array, valid, target):
    if valid.all():
        return
    index = int(np.argmin(valid))
    text = array.reshape(-1)[index]
    text = text.item() if isinstance(text, np.generic) else text
    accepted = ACCEPTED_TEXT + (", or true/false in any case" if target.is_bool else "")
    raise ValueError(
        f"cannot read element {_position(index, array.shape)} ({text!r}) as {target.onnx_name}: expected {accepted}"
    )
