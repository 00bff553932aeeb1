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
from dataclasses import dataclass, replace

import numpy as np
from numba import types
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
    FLOAT16,
    INT32,
    INT64,
    UINT64,
    OnnxType,
)
from . import codecs, vector_width
from . import rounding as rounding_modes
from .bits import (
    choose,
    converts_half_in_hardware,
    float32_from_bits,
    float_bits,
    half_code,
    half_to_float,
    half_value,
    single_value,
)
from .cache import OVERLOAD_OPTIONS, codec_njit, helper_njit

_jit = codec_njit

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
    that options a target ignores do not make a different conversion.

    ``rounding`` is one of :data:`~numbacast.engine.rounding.ROUNDINGS` (for
    FLOAT8E8M0 it replaces ``round_mode``, which only says how ``rounding``
    was given); ``stochastic_bits`` is the number of random bits per element
    of stochastic rounding (0 for the other modes).  ``nan_free``: the
    caller never needs a NaN's code (block quantisation writes the elements
    of a NaN block itself), so the generated nearest-even encoders leave out
    their NaN test; it is kept only where such an encoder does the rounding."""

    source: OnnxType
    target: OnnxType
    saturate: bool = True
    round_mode: str = "up"
    inf_to_nan: bool = False  # Cast-19..23: +/-inf into the FNUZ types gives NaN
    rounding: str = rounding_modes.NEAREST_EVEN
    stochastic_bits: int = 0
    nan_free: bool = False

    @classmethod
    @functools.cache
    def make(
        cls,
        source,
        target,
        saturate=True,
        round_mode="up",
        inf_to_nan=False,
        rounding=None,
        stochastic_bits=None,
        nan_free=False,
    ):
        """The normalised conversion.  ``rounding`` None is the ONNX default:
        ``round_mode`` for FLOAT8E8M0, from a float into an integer type
        :func:`~numbacast.engine.rounding.integer_rounding` (toward zero, or
        ties to even into the 4- and 2-bit types), ties to even for the other
        targets.  Where nothing rounds (BOOL, and integer targets from
        integers) the rounding is ties to even whatever was given;
        ``stochastic_bits`` None is :data:`~numbacast.engine.rounding.FULL_BITS`."""
        target_format = target.format
        if target not in SATURATING and not is_custom(target):
            # FLOAT16 and BFLOAT16 overflow to inf; float4/float6 always saturate.
            saturate = target.is_float and target_format.nan == formats.NAN_NONE
        if target is FLOAT8E8M0:
            if rounding is None:
                rounding = rounding_modes.e8m0_rounding(round_mode)
            if rounding == rounding_modes.TOWARD_NEGATIVE:  # the same on magnitudes
                rounding = rounding_modes.TOWARD_ZERO
            round_mode = next((m for m, same in rounding_modes.E8M0_ROUND_MODES.items() if rounding in same), "up")
        else:
            round_mode = "up"
            if target.is_integer and source.is_float:  # ONNX's rule unless told otherwise
                rounding = rounding_modes.integer_rounding(target.bits) if rounding is None else rounding
            elif rounding is None or not target.is_float or exactly_representable(source, target):
                rounding = rounding_modes.NEAREST_EVEN
        if rounding == rounding_modes.STOCHASTIC:
            stochastic_bits = rounding_modes.FULL_BITS if stochastic_bits is None else int(stochastic_bits)
        else:
            stochastic_bits = 0
        inf_to_nan = bool(inf_to_nan) and target.is_float and target_format.nan == formats.NAN_NEGATIVE_ZERO
        nan_free = bool(nan_free) and rounds_by_float_encoder(target, rounding)
        return cls(source, target, bool(saturate), round_mode, inf_to_nan, rounding, stochastic_bits, nan_free)

    @property
    def stochastic(self):
        """Whether each element needs a random number."""
        return self.rounding == rounding_modes.STOCHASTIC

    @property
    def wide_vectors(self):
        """Whether the kernels of this conversion ask for 512-bit vectors
        (:mod:`~numbacast.engine.vector_width`): those into a float type
        whose codes the generated encoders compute, where the time goes
        into instructions -- every float target but FLOAT, DOUBLE and
        FLOAT16 (decodes, and conversions the processor makes in one
        instruction), and those too when the rounding is other than to
        nearest-even.  Not BFLOAT16 from FLOAT (:attr:`cuts_short`), a few
        instructions too (0.92-0.93x the trivial kernel, streamed, with
        256-bit vectors as with 512-bit ones).  Into the integer types:
        FLOAT into the one-byte and smaller ones, a clamp, a conversion and
        for the sub-byte types a wrap or a cut each element, and their codes
        narrowed four registers at a time (FLOAT -> INT8, one thread, data in
        L2, on an Intel Xeon: 0.095 -> 0.082 ns/element with AVX-512 code,
        INT4, UINT4, INT2, UINT2 0.12-0.15 -> 0.10-0.11; with AVX2 code, by
        the 32 lanes of :attr:`loop_lanes`, INT8 0.21 -> 0.135, ties away
        0.25 -> 0.21); and stochastic rounding into any of them, whose
        random numbers are most of its instructions (FLOAT -> INT8 0.91 ->
        0.76 ns/element with AVX-512 code).  Otherwise not INT32 from FLOAT
        (LLVM keeps 256-bit vectors there whatever the attribute: ties away
        the same code), nor DOUBLE sources, nor BOOL (a compare)."""
        if not self.target.is_float:
            into_bytes = self.source is FLOAT and self.target.is_integer and self.target.bits <= 8
            return into_bytes or self.stochastic
        if self.rounding != rounding_modes.NEAREST_EVEN:
            return True
        return self.target not in (FLOAT, DOUBLE, FLOAT16) and not self.cuts_short

    @property
    def cuts_short(self):
        """Whether the target's codes are the source's cut short, rounded by
        one addition (:func:`~numbacast.engine.codecs.cuts_short`: BFLOAT16
        from FLOAT)."""
        return (
            self.source is FLOAT
            and rounds_by_float_encoder(self.target, self.rounding)
            and codecs.cuts_short(formats.FLOAT32, self.target.format, self.saturate, self.inf_to_nan)
        )

    @property
    def loop_lanes(self):
        """The elements the kernels' element loops convert per step
        (:mod:`~numbacast.engine.vector_width`): 32 for conversions of
        :attr:`wide_vectors` from FLOAT into one-byte codes, where LLVM
        would take 8 with AVX2 code; else 0, LLVM's choice (into two-byte
        codes 32 lanes were 2-9% faster with AVX2 code but up to 7% slower
        with 512-bit vectors)."""
        one_byte = kernel_dtype(self.target).itemsize == 1
        return vector_width.LOOP_LANES if self.wide_vectors and self.source is FLOAT and one_byte else 0

    @property
    def streams_output(self):
        """Whether the kernels may write a large output of this conversion by
        nontemporal stores (:mod:`~numbacast.engine.streaming`): those whose
        output elements are narrower than their source elements and take a
        few vector instructions each (a conversion the processor makes in
        one, a truncation), where the time goes into moving bytes.  Not an
        output as wide as its source or wider (a decode, FLOAT into DOUBLE,
        INT32 into FLOAT): streamed, such outputs took 1.23-1.61x the time
        of plain stores on a Zen 4 EPYC (16M elements, into a reused
        output; 1.39-1.61x into a fresh one; INT32 -> FLOAT 1.06x and
        1.25x), where narrowing ones took 0.73-0.90x (0.66-1.15x into a
        fresh one).  Not those that spend it computing, where converting
        into a scratch array and then streaming it made them 2-18% slower
        with AVX2 code: :attr:`wide_vectors` (the encoders' arithmetic),
        FLOAT16 from any source but FLOAT (rounded by the bits, not by the
        processor's instruction) and UINT64 into FLOAT (no AVX2 instruction
        for it).  FLOAT into the one-byte integers, in 512-bit vectors since
        session 53: into a fresh output on an Intel Xeon (16M elements,
        medians of 21) 1.57-1.67 ms with plain stores, 1.69-2.37 ms
        streamed.  Measured again on a Zen 4 EPYC (AVX-512 code, 16M
        elements, medians of 8 alternated runs, into a reused output / a
        fresh one), streamed against plain stores: INT64 -> FLOAT16 9.4 /
        12.0 ms against 7.8 / 10.8, INT32 -> FLOAT16 4.1 / 6.8 against
        3.7 / 5.9, UINT64 -> FLOAT 6.1 / 12.3 against 6.9 / 11.4, DOUBLE ->
        FLOAT16 4.9 / 10.1 against 5.8 / 8.6: slower, or faster into a
        reused output and slower into a fresh one, so they stay apart.
        (BFLOAT16 from FLOAT, :attr:`cuts_short`, streams: 0.82-0.93x
        the time of plain stores in both states of the memory, AVX2 code
        0.87-0.89x.)"""
        source, target = self.source, self.target
        narrowing = kernel_dtype(target).itemsize < kernel_dtype(source).itemsize
        computed = (
            self.wide_vectors or (target is FLOAT16 and source is not FLOAT) or (source is UINT64 and target is FLOAT)
        )
        return narrowing and not computed

    def __str__(self):
        return (
            f"{_label(self.source)}->{_label(self.target)}(saturate={int(self.saturate)},"
            f"round_mode={self.round_mode},inf_to_nan={int(self.inf_to_nan)},"
            f"rounding={self.rounding},stochastic_bits={self.stochastic_bits}"
            f"{',nan_free=1' if self.nan_free else ''})"
        )


def rounds_by_float_encoder(target, rounding):
    """Whether a conversion into ``target`` in ``rounding`` is rounded by
    :func:`~numbacast.engine.codecs.float_encoder` (:func:`target_stage`
    chooses by this): nearest even into a built-in float format narrower
    than FLOAT but FLOAT8E8M0 (FLOAT16 from FLOAT may take the processor's
    conversion instead, which has no NaN test to leave out)."""
    return (
        target.is_float
        and target not in (FLOAT, DOUBLE, FLOAT8E8M0)
        and not is_custom(target)
        and rounding == rounding_modes.NEAREST_EVEN
    )


def _label(t):
    """The name of a type in a conversion's name: a custom type's tells its format too."""
    return f"{t.name}[{t.format},{t.storage}]" if is_custom(t) else t.name


def is_custom(t):
    """Whether ``t`` is a float format of the user's rather than an ONNX type."""
    return getattr(t, "custom", False)


def exactly_representable(source, target):
    """Whether every finite value of ``source`` is a value of the float type
    ``target`` (no rounding mode can then change a result)."""
    if target is FLOAT8E8M0:
        return False
    ft = target.format
    if source.is_integer:
        magnitude_bits = source.bits - int(source.format.signed)
        return (
            (ft.signed or not source.format.signed)
            and ft.mantissa_bits + 1 >= magnitude_bits
            and (ft.largest >= 2**magnitude_bits)
        )
    if not source.is_float or source is FLOAT8E8M0:
        return False
    fs = source.format
    return (
        (ft.signed or not fs.signed)
        and ft.mantissa_bits >= fs.mantissa_bits
        and ft.min_normal_exponent - ft.mantissa_bits <= fs.min_normal_exponent - fs.mantissa_bits
        and ft.largest >= fs.largest
    )


class Constant(types.Type):
    """The Numba type of one instance of a class made a constant by
    :func:`constant_type` without a type class of its own (a frozen
    dataclass, whose repr says all of it and names the type); ``value`` the
    instance."""

    def __init__(self, value):
        self.value = value
        super().__init__(name=repr(value))


def constant_of(numba_type, cls):
    """The instance of ``cls`` a :class:`Constant` type stands for, or None."""
    value = getattr(numba_type, "value", None) if isinstance(numba_type, Constant) else None
    return value if isinstance(value, cls) else None


def constant_type(cls, type_class=Constant):
    """Make the instances of ``cls`` compile-time constants in Numba: each is
    typed ``type_class(instance)`` (whose name must say all of the instance,
    as it keys the compiled code and its cache), and carries no data at run time."""
    typeof_impl.register(cls)(functools.cache(lambda value, context: type_class(value)))
    if type_class in _CONSTANT_TYPES:
        return
    _CONSTANT_TYPES.add(type_class)
    register_model(type_class)(models.OpaqueModel)
    unbox(type_class)(lambda typ, obj, c: NativeValue(c.context.get_dummy_value()))
    lower_constant(type_class)(lambda context, builder, typ, value: context.get_dummy_value())


#: The type classes :func:`constant_type` has registered with Numba (once each).
_CONSTANT_TYPES: set = set()


class ConversionType(types.Type):
    """The Numba type of one :class:`Conversion` (a constant, no data)."""

    def __init__(self, conversion):
        self.conversion = conversion
        super().__init__(name=f"Conversion[{conversion}]")

    @property
    def wide_vectors(self):
        """The conversion's :attr:`Conversion.wide_vectors`, which
        :mod:`~numbacast.engine.vector_width` reads from a kernel's argument types."""
        return self.conversion.wide_vectors

    @property
    def loop_lanes(self):
        """The conversion's :attr:`Conversion.loop_lanes`, read like :attr:`wide_vectors`."""
        return self.conversion.loop_lanes


constant_type(Conversion, ConversionType)


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
    if is_custom(source):
        if rounding_modes.decodes_exactly(formats.FLOAT32, source.format):
            return "f32", rounding_modes.format_decoder(source.format, formats.FLOAT32)
        return "f64", rounding_modes.format_decoder(source.format, formats.FLOAT64)
    if source.is_float and formats.fields_fit_in(source.format, formats.FLOAT16) and converts_half_in_hardware():
        return "f32", _half_decoder(source.format)  # FLOAT16, FLOAT8E4M3FN(UZ), FLOAT8E5M2, FLOAT6, FLOAT4E2M1
    if source.is_float:
        return "f32", codecs.float_decoder(source.format)
    if source.is_integer and source.bits < 8:
        return "int", _small_int_decoder(source.format)
    return "int", _identity if source.bits == 64 else _to_int64


@functools.cache
def _half_decoder(fmt):
    """``decode(code)``: the float32 value of a code of ``fmt`` (whose fields
    fit in FLOAT16's, :func:`~numbacast.formats.description.fields_fit_in`)
    by the processor's FLOAT16 conversion, where
    :func:`~numbacast.engine.bits.converts_half_in_hardware`: the code's
    fields moved into FLOAT16's (the sign to its sign, the exponent field
    into the low bits of its exponent field, the mantissa to the top of its
    mantissa) make a FLOAT16 code, whose value times ``2**(15 - bias)``
    (exact) is the code's.  Where ``fmt`` has FLOAT16's exponent (FLOAT16,
    FLOAT8E5M2), the fields move as one shift, the power of two is 1 and
    infinities and NaNs land on FLOAT16's, the NaNs made the quiet NaN of
    their sign by :func:`~numbacast.engine.bits.half_value`.  Elsewhere a
    NaN code lands on a finite FLOAT16 code and is flipped into FLOAT16's
    quiet NaN of its sign first, by one exclusive or of a constant, and the
    conversion is the plain one (:func:`~numbacast.engine.bits.half_to_float`;
    with half_value's test instead, no faster than the generated decoder).
    The values, NaNs and signs of :func:`~numbacast.engine.codecs.float_decoder`:
    FLOAT8E5M2 -> FLOAT 0.82x its time, FLOAT8E4M3FN -> FLOAT 0.89-0.96x,
    MX dequantisation of mxfp8_e4m3 0.89x (AVX2 code, a Zen 1 EPYC).  On a
    Zen 4 EPYC (one thread, data in the cache, 3 alternated runs), AVX2 /
    AVX-512 code: FLOAT8E5M2 -> FLOAT 0.55x / 0.63x, FLOAT8E4M3FN 0.85x /
    0.85x, FLOAT4E2M1 0.81x / 0.82x, FLOAT16 0.48x / 0.65-0.9x, mxfp8_e4m3
    dequantisation 0.93x / 0.91x."""
    half = formats.FLOAT16
    if fmt == half:  # the code is the FLOAT16: no function of its own to compile
        return half_value
    code_mask, magnitude_mask = np.uint32((1 << fmt.bits) - 1), np.uint32(fmt.magnitude_mask)
    sign_bit, sign_up = np.uint32(1 << fmt.sign_shift), np.uint32(half.sign_shift - fmt.sign_shift)
    fields_up = np.uint32(half.mantissa_bits - fmt.mantissa_bits)
    moved_magnitude = np.uint32(fmt.magnitude_mask << int(fields_up))
    scale = np.float32(2.0 ** (half.bias - fmt.bias))
    convert = half_value if formats.top_bits_of(fmt, half) else half_to_float
    nan_is_all_ones, nan_is_negative_zero = fmt.nan == formats.NAN_ALL_ONES, fmt.nan == formats.NAN_NEGATIVE_ZERO
    # a NaN code's moved bits flipped into FLOAT16's quiet NaN (its sign kept): one exclusive or of a constant
    to_quiet_nan = np.uint32(half.quiet_nan_code ^ (int(moved_magnitude) if nan_is_all_ones else 0))
    zero = np.uint32(0)

    @_jit
    def decode(code):
        c = np.uint32(np.uint32(code) & code_mask)
        bits = np.uint32(
            np.uint32(np.uint32(c << fields_up) & moved_magnitude) | np.uint32(np.uint32(c & sign_bit) << sign_up)
        )
        if nan_is_all_ones:
            bits = np.uint32(bits ^ choose(np.uint32(c & magnitude_mask) == magnitude_mask, to_quiet_nan, zero))
        if nan_is_negative_zero:
            bits = np.uint32(bits ^ choose(c == sign_bit, to_quiet_nan, zero))
        return convert(bits) * scale

    return decode


@functools.cache
def _small_int_decoder(fmt):
    mask = fmt.mask
    sign = (1 << (fmt.bits - 1)) if fmt.signed else 0

    @_jit
    def decode(code):
        return ((np.int64(code) & mask) ^ sign) - sign

    return decode


def target_stage(kind, source_bits, conversion, part=None):
    """``stage(value)``: a value of ``kind`` (see :func:`source_stage`) rounded to
    the conversion's target, in the target's kernel representation; for a
    stochastic conversion ``stage(value, r)``, ``r`` the element's random
    number, and ``part`` one of :data:`~numbacast.engine.rounding.PARTS`
    (default FULL).  A stage depends on the kind of value it takes, not on
    the source: every source of a kind shares its compiled stage into a
    target (made for the kind's source in :data:`_KIND_SOURCES`), so a
    first cast from another source compiles one function less."""
    wide_int = kind == "int" and source_bits == 64
    shared = replace(conversion, source=_KIND_SOURCES[kind, wide_int])
    return _stage(kind, wide_int, shared, part or rounding_modes.FULL)


#: The source a target stage is made for, by (kind, 64-bit integer).
_KIND_SOURCES = {("f32", False): FLOAT, ("f64", False): DOUBLE, ("int", False): INT32, ("int", True): INT64}


def through_stand_in(conversion):
    """``(to_value, from_value)``: a conversion from a source of at most 16
    bits as two, through the type that stands for its kind of value (FLOAT,
    DOUBLE or INT32, see :func:`target_stage`): ``to_value`` gives each
    element's exact value in that type (every value of such a source has
    one there), and ``from_value`` rounds it to the target with the target
    stage of ``conversion`` itself, so the two give the bits of
    ``conversion``.  A table of every code (:func:`~numbacast.engine.arrays.table`)
    is filled that way: a source's ``to_value`` and a kind's ``from_value``
    serve every pair that shares them, where ``conversion``'s own loop would
    be compiled for each pair."""
    if conversion.source.storage.itemsize > 2 or conversion.stochastic:
        raise ValueError(f"{conversion} does not go through a stand-in type")
    kind, _ = source_stage(conversion.source)
    stand_in = _KIND_SOURCES[kind, False]
    return Conversion.make(conversion.source, stand_in), replace(conversion, source=stand_in)


@functools.cache
def _stage(kind, wide_int, conversion, part):
    """:func:`target_stage`'s stage of ``conversion``, whose source stands for its kind."""
    target = conversion.target
    fmt = target.format
    rounding, bits, random = conversion.rounding, conversion.stochastic_bits, conversion.stochastic
    directed = rounding != rounding_modes.NEAREST_EVEN
    if target is DOUBLE and directed and wide_int:
        convert = rounding_modes.int_to_float64_rounded(rounding, bits, part)
        return convert if part == rounding_modes.REDUCE else _random_stage(convert, random)
    if target is FLOAT and kind == "f64" and rounding in _PROCESSOR_DIRECTIONS and part == rounding_modes.FULL:
        return single_value(_PROCESSOR_DIRECTIONS[rounding])  # the processor's conversion, NaN made canonical
    if target is FLOAT and directed:
        encode_float = rounding_modes.rounding_encoder(
            formats.FLOAT64, formats.FLOAT32, False, rounding, bits or rounding_modes.FULL_BITS, part=part
        )
        to_double = codecs.int_to_float64 if wide_int else _to_float64
        if part == rounding_modes.REDUCE:
            return encode_float
        if random and part == rounding_modes.CHECK:
            return _jit(lambda x, r: encode_float(float_bits(to_double(x)), r))
        if random:
            return _jit(lambda x, r: float32_from_bits(encode_float(float_bits(to_double(x)), r)))
        return _jit(lambda x: float32_from_bits(encode_float(float_bits(to_double(x)), _NO_RANDOM)))
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
        if rounding == rounding_modes.integer_rounding(fmt.bits):
            return to_int  # float_to_int's function itself (it makes x a float of the kind): one inlined function less
        # another rounding first to an integer value, which float_to_int then converts exactly
        to_integer = rounding_modes.integral_rounder(rounding, real, bits or rounding_modes.FULL_BITS, part)
        if part in (rounding_modes.CHECK, rounding_modes.REDUCE):
            return to_integer
        if random:
            return _jit(lambda x, r: to_int(to_integer(x, r)))
        return _jit(lambda x: to_int(to_integer(x, _NO_RANDOM)))

    def encoder(source):
        """``(encode, takes_r)``: rounds from float32 or float64 bits to a float
        target other than FLOAT and DOUBLE; ``encode(bits, r)`` when ``takes_r``."""
        if target is FLOAT8E8M0:  # ONNX's round_mode is one of the roundings (Conversion.make)
            return rounding_modes.e8m0_rounding_encoder(source, conversion.saturate, rounding, bits, part), True
        if not rounds_by_float_encoder(target, rounding):
            encode = rounding_modes.rounding_encoder(
                source,
                fmt,
                conversion.saturate,
                rounding,
                bits or rounding_modes.FULL_BITS,
                conversion.inf_to_nan,
                part,
            )
            return encode, True
        return codecs.float_encoder(source, fmt, conversion.saturate, conversion.inf_to_nan, conversion.nan_free), False

    if target is FLOAT16 and kind == "f32" and rounding in _PROCESSOR_DIRECTIONS and converts_half_in_hardware():
        return half_code(_PROCESSOR_DIRECTIONS[rounding])  # the bit formula's codes, by the processor
    in_float32 = not is_custom(target) or rounding_modes.fits(formats.FLOAT32, fmt)
    if kind == "int" and not wide_int and not random and in_float32 and 2 * fmt.largest <= _FLOAT32_INTEGERS:
        # Integers below 2**24 are float32 exactly, and from there up every value overflows such a
        # target alike in every mode: the float32 stage, in lanes twice as many as float64's
        as_float32 = _stage("f32", False, replace(conversion, source=FLOAT), part)
        return _jit(lambda x: as_float32(np.float32(x)))
    if kind == "f32" and in_float32:
        encode, takes_r = encoder(formats.FLOAT32)
        if part == rounding_modes.REDUCE:
            return encode
        if random:
            return _jit(lambda x, r: encode(float_bits(x), r))
        if takes_r:
            return _jit(lambda x: encode(float_bits(x), _NO_RANDOM))
        return encode
    encode, takes_r = encoder(formats.FLOAT64)
    if part == rounding_modes.REDUCE:
        return encode
    to_double = codecs.int_to_float64 if wide_int else _to_float64
    if random:
        return _jit(lambda x, r: encode(float_bits(to_double(x)), r))
    if takes_r:
        return _jit(lambda x: encode(float_bits(to_double(x)), _NO_RANDOM))
    return _jit(lambda x: encode(to_double(x)))


_NO_RANDOM = np.uint64(0)

#: 2**24: every integer up to it is a float32.
_FLOAT32_INTEGERS = 1 << 24

#: The roundings of FLOAT -> FLOAT16 and DOUBLE -> FLOAT by the processor's conversion
#: (see bits.half_code and bits.single_value). Not ties away: testing for a tie took two
#: more conversions, and the bit formula took 0.75-0.95x the time on one thread on the
#: Zen 4 EPYC (docs/internals.md).
_PROCESSOR_DIRECTIONS = {
    rounding_modes.NEAREST_EVEN: 0,
    rounding_modes.TOWARD_POSITIVE: 1,
    rounding_modes.TOWARD_NEGATIVE: -1,
    rounding_modes.TOWARD_ZERO: 2,
}


@_jit
def _to_float64(x):
    return np.float64(x)


def _random_stage(convert, random):
    """``convert(x, r)`` as a stage: itself when stochastic, else with ``r`` = 0."""
    return convert if random else _jit(lambda x: convert(x, _NO_RANDOM))


def stages(conversion, part=rounding_modes.FULL):
    """``(decode, encode)``: the source and target stages of ``conversion``
    (:func:`source_stage`, :func:`target_stage`); ``decode`` None when a
    source element is its own value.  Code converting one element calls
    them in one function of its own (:func:`scalar_converter`, or an
    ``@overload`` whose implementation composes them: a compiled function
    less per conversion)."""
    kind, decode = source_stage(conversion.source)
    encode = target_stage(kind, conversion.source.bits, conversion, part if conversion.stochastic else None)
    return (None if decode is _identity else decode), encode


@functools.cache
def scalar_converter(conversion, part=rounding_modes.FULL):
    """The ``@njit`` function mapping one source element to one target element
    (``convert_one(value, r)`` for a stochastic conversion, ``r`` the
    element's random number, ``part`` one of :data:`~numbacast.engine.rounding.PARTS`).

    Not stochastic, a helper compiled on its own
    (:func:`~numbacast.engine.cache.helper_njit`, the codecs inlined into
    it), once per process for all the ``@njit`` integrations that convert
    by it: inlined into each of their operators, the codecs were typed again
    for each (a user's function of a few element operators 5-10% longer to
    compile)."""
    decode, encode = stages(conversion, part)
    if part == rounding_modes.REDUCE:
        return encode  # of the random number alone
    if conversion.stochastic:
        return encode if decode is None else _jit(lambda value, r: encode(decode(value), r))
    source = decode or _identity  # inlined, as the codecs are
    return helper_njit(lambda value: encode(source(value)))


def convert(value, conversion):
    """Convert one kernel element (usable inside ``@njit`` code only)."""
    raise TypeError("convert() is for @njit code; use numbacast.cast() from Python")


@overload(convert, jit_options=OVERLOAD_OPTIONS)
def _overload_convert(value, conversion):
    if isinstance(conversion, ConversionType) and not conversion.conversion.stochastic:
        decode, encode = stages(conversion.conversion)
        if decode is None:
            return lambda value, conversion: encode(value)
        return lambda value, conversion: encode(decode(value))
