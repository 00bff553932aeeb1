"""One conversion (source type, target type, options) as a compile-time constant.

A :class:`Conversion` is a frozen description; Numba sees it as a
:class:`ConversionType`, one type per conversion, so a kernel taking a
conversion argument is compiled -- and cached on disk -- once per conversion,
with every format field folded into the machine code.

``convert(value, conversion)`` is callable from ``@njit`` code: it maps one
element, in the kernel representation of the source (see :func:`kernel_dtype`),
to one element in the kernel representation of the target.  It is composed of
two stages generated from :mod:`numbacast.codecs`:

1. the source stage gives the exact value as a float32, a float64 or an
   integer (int64, or uint64 for UINT64);
2. the target stage rounds that value once to the target.
"""

import functools
from dataclasses import dataclass

import numpy as np
from numba import njit, types
from numba.core.imputils import lower_constant
from numba.extending import NativeValue, models, overload, register_model, typeof_impl, unbox

from ..formats import description as formats
from ..formats.registry import (
    DOUBLE,
    FLOAT,
    FLOAT8E4M3FN,
    FLOAT8E4M3FNUZ,
    FLOAT8E5M2,
    FLOAT8E5M2FNUZ,
    FLOAT8E8M0,
    OnnxType,
)
from . import codecs
from .bits import float_bits

_jit = functools.partial(njit, cache=False, nogil=True)

#: The targets whose overflow ``saturate`` chooses.
SATURATING = frozenset((FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0))


@functools.cache
def kernel_dtype(t: OnnxType):
    """The NumPy dtype a kernel reads and writes for type ``t``.

    FLOAT, DOUBLE, BOOL and the standard integers are themselves; every other
    type (FLOAT16, BFLOAT16 and the ml_dtypes types) is seen as its raw code,
    an unsigned integer as wide as its storage.
    """
    if t.is_float and t not in (FLOAT, DOUBLE):
        return np.dtype(f"u{t.storage.itemsize}")
    if t.is_integer and t.bits < 8:
        return np.dtype(np.uint8)
    return t.storage


@dataclass(frozen=True)
class Conversion:
    """A cast from ``source`` to ``target`` with its options, normalised so
    that options a target ignores do not make a different conversion."""

    source: OnnxType
    target: OnnxType
    saturate: bool = True
    round_mode: str = "up"
    inf_to_nan: bool = False  # Cast-19..23: +/-inf into the FNUZ types gives NaN

    @classmethod
    @functools.cache
    def make(cls, source, target, saturate=True, round_mode="up", inf_to_nan=False):
        target_format = target.format
        if target not in SATURATING:
            # FLOAT16 and BFLOAT16 overflow to inf; float4/float6 always saturate.
            saturate = target.is_float and target_format.nan == formats.NAN_NONE
        if target is not FLOAT8E8M0:
            round_mode = "up"
        inf_to_nan = bool(inf_to_nan) and target.is_float and target_format.nan == formats.NAN_NEGATIVE_ZERO
        return cls(source, target, bool(saturate), round_mode, inf_to_nan)

    def __str__(self):
        return (
            f"{self.source.name}->{self.target.name}(saturate={int(self.saturate)},"
            f"round_mode={self.round_mode},inf_to_nan={int(self.inf_to_nan)})"
        )


class ConversionType(types.Type):
    """The Numba type of one :class:`Conversion` (a constant, no data)."""

    def __init__(self, conversion):
        self.conversion = conversion
        super().__init__(name=f"Conversion[{conversion}]")


@typeof_impl.register(Conversion)
@functools.cache
def _typeof_conversion(value, context):
    return ConversionType(value)


register_model(ConversionType)(models.OpaqueModel)


@unbox(ConversionType)
def _unbox_conversion(typ, obj, c):
    return NativeValue(c.context.get_dummy_value())


@lower_constant(ConversionType)
def _constant_conversion(context, builder, typ, value):
    return context.get_dummy_value()


@_jit
def _identity(value):
    return value


@_jit
def _to_int64(value):
    return np.int64(value)


def source_stage(source: OnnxType):
    """(kind, stage): ``stage(element)`` is the exact value of a source element
    as ``kind`` "f32", "f64" or "int"."""
    if source is FLOAT:
        return "f32", _identity
    if source is DOUBLE:
        return "f64", _identity
    if source.is_float:
        return "f32", codecs.float_decoder(source.format)
    if source.is_integer and source.bits < 8:
        return "int", _small_int_decoder(source.format)
    return "int", _identity if source.bits == 64 else _to_int64


@functools.cache
def _small_int_decoder(fmt):
    mask = fmt.mask
    sign = (1 << (fmt.bits - 1)) if fmt.signed else 0

    @_jit
    def decode(code):
        return ((np.int64(code) & mask) ^ sign) - sign

    return decode


@functools.cache
def target_stage(kind, source_bits, conversion):
    """``stage(value)``: a value of ``kind`` (see :func:`source_stage`) rounded to
    the conversion's target, in the target's kernel representation."""
    target = conversion.target
    fmt = target.format
    if target is FLOAT:
        return _jit(lambda x: np.float32(x))
    if target is DOUBLE:
        return _jit(lambda x: np.float64(x))
    if target.is_bool:
        return _jit(lambda x: x != 0)
    if target.is_integer:
        if kind == "int":
            mask = fmt.mask
            return _jit(lambda x: np.int64(x) & mask) if fmt.bits < 8 else _identity
        real = np.float32 if kind == "f32" else np.float64
        to_int = codecs.float_to_int(fmt, real)
        return _jit(lambda x: to_int(real(x)))

    def encoder(source):
        """Rounds from float32 or float64 bits to a float target other than FLOAT and DOUBLE."""
        if target is FLOAT8E8M0:
            return codecs.e8m0_encoder(source, conversion.saturate, conversion.round_mode)
        return codecs.float_encoder(source, fmt, conversion.saturate, conversion.inf_to_nan)

    if kind == "f32":
        encode32 = encoder(formats.FLOAT32)
        return _jit(lambda x: encode32(float_bits(x)))
    encode64 = encoder(formats.FLOAT64)
    if kind == "int" and source_bits == 64:
        to_float = codecs.int_to_float64
        return _jit(lambda x: encode64(float_bits(to_float(x))))
    return _jit(lambda x: encode64(float_bits(np.float64(x))))


@functools.cache
def scalar_converter(conversion):
    """The ``@njit`` function mapping one source element to one target element."""
    kind, decode = source_stage(conversion.source)
    encode = target_stage(kind, conversion.source.bits, conversion)

    @_jit
    def convert_one(value):
        return encode(decode(value))

    return convert_one


def convert(value, conversion):
    """Convert one kernel element (usable inside ``@njit`` code only)."""
    raise TypeError("convert() is for @njit code; use numbacast.cast() from Python")


@overload(convert, jit_options={"nogil": True})
def _overload_convert(value, conversion):
    if isinstance(conversion, ConversionType):
        one = scalar_converter(conversion.conversion)
        return lambda value, conversion: one(value)
