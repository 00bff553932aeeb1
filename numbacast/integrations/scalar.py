"""Per-format scalar codecs for your own ``@njit`` code.

For every type that Numba has no native scalar for -- FLOAT16, BFLOAT16, the
five float8 types, the two float6 types, FLOAT4E2M1, INT4, UINT4, INT2 and
UINT2 -- this module has

* ``encode_<name>(x, saturate=True)``: the float64 (or anything Numba turns
  into one, such as a float32) ``x`` cast to the type, as its storage code
  (uint8, or uint16 for FLOAT16 and BFLOAT16).  ``encode_float8e8m0`` also takes
  ``round_mode`` ("up", "down" or "nearest").
* ``decode_<name>(code)``: the exact value of a storage code, as a float64
  (int64 for the integer types).  Bits above the type's width are ignored,
  but a code outside its storage (0 to 255, or to 65535 for FLOAT16 and
  BFLOAT16) raises ValueError rather than being cut to fit.

They follow the same rules as :func:`numbacast.cast` -- they are the functions
its kernels are built from -- and work from Python too (compiled on first call)::

    from numba import njit, prange
    from numbacast.scalar import encode_float8e4m3fn, decode_float8e4m3fn

    @njit(parallel=True)
    def quantize(x, scale, out):
        for i in prange(x.size):
            out[i] = encode_float8e4m3fn(x[i] / scale)
"""

import numpy as np
from numba import njit

from ..engine.codecs import ROUND_MODES
from ..engine.conversion import Conversion, scalar_converter
from ..formats.registry import DOUBLE, INT64, TYPES

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
        raise ValueError("round_mode must be 'up', 'down' or 'nearest'")

    return _jit(encode)


def _decoder(source):
    to_value = scalar_converter(Conversion.make(source, DOUBLE if source.is_float else INT64))
    top = (1 << (8 * source.storage.itemsize)) - 1
    message = f"decode_{source.name} takes a storage code from 0 to {top}"

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


__all__ = ["CODEC_TYPES"]
for _type in CODEC_TYPES:
    _encode = _e8m0_encoder(_type) if _type.name == "float8e8m0" else _encoder(_type)
    globals()[f"encode_{_type.name}"] = _encode
    globals()[f"decode_{_type.name}"] = _decoder(_type)
    _encode.__doc__, globals()[f"decode_{_type.name}"].__doc__ = _docstrings(_type)
    __all__ += [f"encode_{_type.name}", f"decode_{_type.name}"]
del _type, _encode
