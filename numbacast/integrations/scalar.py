"""Scalar codecs for your own ``@njit`` code: one element cast with the rules
of :func:`numbacast.cast`.

``encode(value, to, saturate=True, round_mode="up")`` casts one number --
a Python or NumPy scalar, or an element of an ml_dtypes array (``a[i]``) --
to the ONNX type ``to`` and returns it as a scalar of that type's NumPy
dtype (an ml_dtypes scalar for BFLOAT16, the float8, float6 and float4 types
and INT4 ... UINT2), exactly as ``numbacast.cast`` would cast a one-element
array of it.  ``decode(x)`` is the exact value of a scalar: a float64 (an
int64 for the integer types), as ``numbacast.cast(x, "double")`` (or
``"int64"``) gives it.  In ``@njit`` code, ``to``, ``saturate`` and
``round_mode`` are literal constants, checked when the function compiles::

    import numpy as np
    from numba import njit, prange
    import ml_dtypes
    from numbacast.scalar import encode

    @njit(parallel=True)
    def quantize(x, scale, out):  # out: a float8_e4m3fn array
        for i in prange(x.size):
            out[i] = encode(x[i] / scale, "float8e4m3fn", saturate=True)

    x = np.linspace(-1000, 1000, 1 << 20, dtype=np.float32)
    out = np.empty(x.shape, ml_dtypes.float8_e4m3fn)
    quantize(x, np.float32(2.0), out)  # out == numbacast.cast(x / np.float32(2.0), "float8e4m3fn")

An assignment ``out[i] = v`` rounds as NumPy does (never saturating, see
:mod:`numbacast.integrations.elements`); ``encode`` rounds as ONNX ``Cast``.

The older per-format functions stay: for every type that Numba has no
native scalar for -- FLOAT16, BFLOAT16, the five float8 types, the two float6
types, FLOAT4E2M1, INT4, UINT4, INT2 and UINT2 -- this module has

* ``encode_<name>(x, saturate=True)``: the float64 (or anything Numba turns
  into one, such as a float32) ``x`` cast to the type, as its storage code
  (uint8, or uint16 for FLOAT16 and BFLOAT16).  ``encode_float8e8m0`` also takes
  ``round_mode`` ("up", "down" or "nearest").  A ``saturate`` other than
  True or False (or 1 or 0), or an ``x`` that is not a real number, is a
  TypeError.
* ``decode_<name>(code)``: the exact value of a storage code, as a float64
  (int64 for the integer types).  Bits above the type's width are ignored,
  but a code outside its storage (0 to 255, or to 65535 for FLOAT16 and
  BFLOAT16) raises ValueError rather than being cut to fit, and a code that
  is not an integer raises TypeError.

They follow the same rules as :func:`numbacast.cast` -- they are the functions
its kernels are built from -- and work from Python too (compiled on first call).
"""

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..api import cast
from ..engine.checks import check_round_mode, check_saturate
from ..engine.conversion import Conversion, kernel_dtype, scalar_converter
from ..engine.rounding import ROUND_MODES
from ..formats.registry import DOUBLE, FLOAT16, INT64, TYPES, resolve
from .njit import NO_FLOAT16
from .njit_arguments import literal
from .numba_types import Element, as_dtype, code_of, element_of

_jit = njit(nogil=True)

#: The types with a scalar codec here.
CODEC_TYPES = [t for t in TYPES if t.storage.itemsize <= 2 and (t.is_float or t.bits < 8)]


def _encoder(target):
    code = np.dtype(f"u{target.storage.itemsize}").type
    saturating = scalar_converter(Conversion.make(DOUBLE, target, saturate=True))
    plain = scalar_converter(Conversion.make(DOUBLE, target, saturate=False))

    def encode(x, saturate=True):
        return code(saturating(np.float64(x)) if saturate else plain(np.float64(x)))

    return _jit(encode)


def _e8m0_encoder(target):
    sat_up, sat_down, sat_nearest = (
        scalar_converter(Conversion.make(DOUBLE, target, True, mode)) for mode in ROUND_MODES
    )
    up, down, nearest = (scalar_converter(Conversion.make(DOUBLE, target, False, mode)) for mode in ROUND_MODES)

    def encode(x, saturate=True, round_mode="up"):
        v = np.float64(x)
        if round_mode == "up":
            return np.uint8(sat_up(v) if saturate else up(v))
        if round_mode == "down":
            return np.uint8(sat_down(v) if saturate else down(v))
        if round_mode == "nearest":
            return np.uint8(sat_nearest(v) if saturate else nearest(v))
        raise ValueError("round_mode must be one of 'up', 'down', 'nearest', not '" + round_mode + "'")

    return _jit(encode)


def _code_range(source):
    """``(top, message)``: the largest storage code of ``source`` and what a decode says of another."""
    top = (1 << (8 * source.storage.itemsize)) - 1
    return top, f"decode_{source.name} takes a storage code from 0 to {top}"


def _decoder(source):
    to_value = scalar_converter(Conversion.make(source, DOUBLE if source.is_float else INT64))
    top, message = _code_range(source)

    def decode(code):
        if code < 0 or code > top:
            raise ValueError(message)
        return to_value(code)

    return _jit(decode)


def _docstrings(t):
    """The docstrings of ``encode_<name>`` and ``decode_<name>`` for the type ``t``."""
    code_bits = 8 * t.storage.itemsize
    round_mode = (
        ', and ``round_mode`` ("up", "down" or "nearest") how it picks the power of two'
        if t.name == "float8e8m0"
        else ""
    )
    encode = (
        f"``x`` cast to {t.onnx_name}, as its storage code (a ``uint{code_bits}``).\n\n"
        "``x`` is a float64 or anything Numba converts to one (a float32, an integer); it is rounded once, "
        f"by the conversion rules.  ``saturate`` is as in :func:`numbacast.cast`{round_mode}.  Callable from "
        "``@njit`` code and from Python."
    )
    ignored = f"  Bits above the low {t.bits} are ignored." if t.bits < code_bits else ""
    value = "a float64" if t.is_float else "an int64"
    decode = f"The exact value of the {t.onnx_name} storage code ``code``, as {value}.{ignored}"
    return encode, decode


def encode(value, to, saturate=True, round_mode="up"):
    """``value`` cast to the ONNX type ``to`` as :func:`numbacast.cast` casts
    it, as a NumPy scalar of ``to``'s storage dtype."""
    return cast(np.asarray(value), to, saturate=saturate, round_mode=round_mode)[()]


def decode(x):
    """The exact value of a scalar: float64 for a float type, int64 for an integer type."""
    x = np.asarray(x)
    return cast(x, INT64 if resolve(x.dtype).is_integer or resolve(x.dtype).is_bool else DOUBLE)[()]


def _scalar_type(value, what):
    if isinstance(value, Element):
        return value.onnx_type
    if isinstance(value, (types.Number, types.Boolean)):
        return resolve(as_dtype(types.unliteral(value)))
    raise TypeError(f"{what} takes one number (a scalar or an array element), not {value}")


def _no_float16(onnx_type, what):
    if onnx_type is FLOAT16:
        raise TypeError(NO_FLOAT16.format(what=what))


def _reader(source):
    """The kernel representation of a scalar of ``source`` (an OnnxType)."""
    if kernel_dtype(source) != source.storage:
        return code_of
    return _same


def _writer(target):
    """A scalar of ``target`` from its kernel representation."""
    if kernel_dtype(target) != target.storage:
        scalar_class = target.storage.type
        return _jit(lambda code: element_of(code, scalar_class))
    return _same


@_jit
def _same(value):
    return value


@overload(encode, prefer_literal=True, jit_options={"nogil": True})
def _overload_encode(value, to, saturate=True, round_mode="up"):
    if not isinstance(to, types.Literal):
        return None
    source, target = _scalar_type(value, "numbacast.scalar.encode"), resolve(to.literal_value)
    if target.is_string:
        raise ValueError("numbacast.scalar.encode casts numbers only; cast to or from STRING in Python")
    _no_float16(target, "numbacast.scalar.encode")
    saturate = check_saturate(literal(saturate, "saturate"))
    round_mode = check_round_mode(literal(round_mode, "round_mode"))
    read, write = _reader(source), _writer(target)
    convert = scalar_converter(Conversion.make(source, target, saturate, round_mode))
    return lambda value, to, saturate=True, round_mode="up": write(convert(read(value)))


@overload(decode, jit_options={"nogil": True})
def _overload_decode(x):
    source = _scalar_type(x, "numbacast.scalar.decode")
    read, write = _reader(source), _same
    convert = scalar_converter(Conversion.make(source, INT64 if source.is_integer or source.is_bool else DOUBLE))
    return lambda x: write(convert(read(x)))


def _python_number(x, name):
    """``x``, a real number given to ``name`` from Python, as the compiled
    codec takes it: a Python int beyond the 64-bit ones, or a float16, as the
    float64 it rounds to (an int beyond float64's range, as infinity)."""
    if isinstance(x, np.float16):
        return np.float64(x)  # exact
    if isinstance(x, (np.longdouble, np.timedelta64)):
        raise TypeError(f"{name} takes one real number of at most 64 bits, not {x!r}")
    if isinstance(x, (bool, float, np.bool_, np.integer, np.floating)):
        return x
    if isinstance(x, int):
        if -(1 << 63) <= x < 1 << 64:
            return x
        try:
            return float(x)
        except OverflowError:
            return float("inf") if x > 0 else float("-inf")
    if isinstance(x, np.generic):  # an element of an ml_dtypes array
        try:
            if not resolve(x.dtype).is_string:
                return x
        except (TypeError, ValueError):
            pass
    raise TypeError(f"{name} takes one real number, not {x!r}")


def _check_encode_types(x, saturate, name):
    """The types of ``name``'s arguments in ``@njit`` code: ``x`` a real
    number or an ml_dtypes element; ``saturate`` checked as the Python call
    checks it when it is a literal, else a bool known when the function runs."""
    if not isinstance(x, (types.Integer, types.Float, types.Boolean, Element)):
        raise TypeError(f"{name} takes one real number, not {x}")
    if not isinstance(saturate, types.Type) or isinstance(saturate, (types.Literal, types.Omitted)):
        check_saturate(literal(saturate, "saturate"))
    elif not isinstance(saturate, types.Boolean):
        raise TypeError(f"saturate must be True/False (or 1/0), not {saturate}")


def _float_codecs(t):
    """``(encode_<name>, decode_<name>)`` of the type ``t``: Python functions
    that check their arguments and run the compiled codec, and take the same
    arguments in ``@njit`` code (checked when it compiles)."""
    encode_name, decode_name = f"encode_{t.name}", f"decode_{t.name}"
    compiled_decode = _decoder(t)
    if t.name == "float8e8m0":
        compiled_encode = _e8m0_encoder(t)

        def encode(x, saturate=True, round_mode="up"):
            return compiled_encode(
                _python_number(x, encode_name), check_saturate(saturate), check_round_mode(round_mode)
            )

        def overload_encode(x, saturate=True, round_mode="up"):
            _check_encode_types(x, saturate, encode_name)
            return lambda x, saturate=True, round_mode="up": compiled_encode(x, saturate, round_mode)

    else:
        compiled_encode = _encoder(t)

        def encode(x, saturate=True):
            return compiled_encode(_python_number(x, encode_name), check_saturate(saturate))

        def overload_encode(x, saturate=True):
            _check_encode_types(x, saturate, encode_name)
            return lambda x, saturate=True: compiled_encode(x, saturate)

    top, out_of_range = _code_range(t)

    def decode(code):
        if isinstance(code, (bool, np.bool_)) or not isinstance(code, (int, np.integer)):
            raise TypeError(f"{decode_name} takes an integer storage code, not {code!r}")
        if not 0 <= code <= top:  # before Numba sees an int it has no type for
            raise ValueError(out_of_range)
        return compiled_decode(code)

    def overload_decode(code):
        if not isinstance(code, types.Integer):
            raise TypeError(f"{decode_name} takes an integer storage code, not {code}")
        return lambda code: compiled_decode(code)

    overload(encode, prefer_literal=True, jit_options={"nogil": True})(overload_encode)
    overload(decode, jit_options={"nogil": True})(overload_decode)
    encode.__name__ = encode.__qualname__ = encode_name
    decode.__name__ = decode.__qualname__ = decode_name
    encode.__doc__, decode.__doc__ = _docstrings(t)
    return encode, decode


__all__ = ["CODEC_TYPES", "encode", "decode"]
for _type in CODEC_TYPES:
    globals()[f"encode_{_type.name}"], globals()[f"decode_{_type.name}"] = _float_codecs(_type)
    __all__ += [f"encode_{_type.name}", f"decode_{_type.name}"]
del _type
