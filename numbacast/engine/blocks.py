"""Block-scaled quantisation kernels: one fused pass over the data, parallel over tasks of whole blocks.

:func:`quantize_blocks` quantises a 2-D C-contiguous array along its last
axis, cut into blocks of ``block_size`` (the last one shorter when the length
is not a multiple): in each task of a ``prange`` loop (:data:`TASK_ELEMENTS`),
the largest magnitude of each block (read once from memory, the task's
elements then sit in cache; a task of whole blocks of 32 or 16 takes each in
a straight run of vector instructions, :mod:`~numbacast.engine.lanes`), then
the blocks' scales from them side by side, then every element of the task
scaled and rounded in one loop.  :func:`dequantize_blocks` goes back.
NVFP4's default tensor scale needs the whole tensor's largest magnitude
before any block's scale: one pass first takes it (:func:`tensor_amax_kernel`,
one value a task), then the quantising pass as for every format.

Nothing here is a codec of its own: the scale is a cast to FLOAT8E8M0 (MX) or
FLOAT8E4M3FN (NVFP4) of a value derived from the block's largest magnitude,
and every element is a cast to its element type, both through the
:class:`~numbacast.engine.conversion.Conversion` of the engine (the same
generated encoders and rounding modes as :func:`numbacast.cast`).  The rules
are in docs/rules.md (``rule-mx-*``).

Scale rules (``SCALE_RULES``; ``emax`` the exponent of the element's largest
power of two, ``max`` its largest value, ``m`` its mantissa bits):

* ``floor``: ``2**(floor(log2 amax) - emax)``, the cast to FLOAT8E8M0 rounding
  down of ``amax * 2**-emax``;
* ``ceil``: ``2**(ceil(log2 amax) - emax)``, one code up unless ``amax`` is a
  power of two;
* ``even``: ``floor`` of ``amax`` first rounded to ``m`` mantissa bits (ties
  to even, into the next binade when it carries);
* ``rceil``: ``2**ceil(log2(amax / max))``, the smallest power of two by which
  ``max`` reaches ``amax`` (checked exactly).

The FLOAT8E8M0 cast saturates: a scale below ``2**-127`` (and ``amax`` = 0)
is ``2**-127``, one above ``2**127`` (and an infinite ``amax``) is ``2**127``;
a NaN ``amax`` gives the NaN scale, and every element of such a block is the
element type's encoding of NaN.
"""

import dataclasses
import functools

import numpy as np
from numba import prange, types
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from ..formats.blocks import MXINT8_EXPONENT, BlockFormat, block_count
from ..formats.registry import DOUBLE, FLOAT, FLOAT8E8M0, OnnxType
from .bits import choose, float32_from_bits, float64_from_bits, float_bits, odd_float32, smaller
from .cache import OVERLOAD_OPTIONS, cached_njit, helper_jitable, helper_njit, serial_version
from .codecs import nan_codes
from .conversion import Conversion, ConversionType, constant_of, constant_type, convert, kernel_dtype
from .kernels import PARALLEL_MIN, array_key, split_run
from .lanes import LANES, fill, largest_magnitude, largest_magnitudes
from .prefetch import read_ahead
from .rounding import WINDOW_BITS, random64, random64_window, window_keys
from .scratch import new_array, new_like
from .stochastic import convert_random, convert_random_fast, reduce_random, settled
from .vector_width import element_loop

FLOOR, CEIL, EVEN, RCEIL = "floor", "ceil", "even", "rceil"


#: The values of ``scale_rule=``, the default first.
SCALE_RULES = (FLOOR, CEIL, EVEN, RCEIL)


def rule_number(rule):
    """The run-time argument of the kernels naming the scale rule ``rule``:
    its place in :data:`SCALE_RULES`.  A kernel holds the loop over a task's
    blocks' scales three times, for :data:`FLOOR_RULE` (the default, alone),
    :data:`POWER_RULES` (whose steps differ by selects on the number, so the
    loop runs in vector lanes) and :data:`RCEIL_RULE`, and picks one a task
    (:func:`block_scales`): one kernel serves every rule, and a quantisation
    by another rule compiles nothing new.  (A loop branching on the rule per
    block made MX quantisation 1.13-1.24x the time with AVX2 code; the
    default's loop without the other rules' selects, 60 AVX2 instructions
    per 8 blocks where it took 112, made it 0.90-0.92x, AVX-512 code
    0.97-0.98x, and a first quantisation compile some 0.15-0.3 s longer.)"""
    return np.int64(SCALE_RULES.index(rule))


@dataclasses.dataclass(frozen=True)
class ScaleRules:
    """The scale rules one compiled scale step takes (``names``, of
    :data:`SCALE_RULES`), as a constant of compiled code; with more than
    one, the step picks by the rule's number at run time."""

    names: tuple


constant_type(ScaleRules)

#: The scale steps a kernel holds: OCP's rule alone (the default: the power of
#: two below amax, without the others' selects), the rules of powers of two
#: near amax (the same steps, chosen by selects) and ``rceil`` (a division and
#: an exact check).
FLOOR_RULE, POWER_RULES, RCEIL_RULE = ScaleRules((FLOOR,)), ScaleRules((FLOOR, CEIL, EVEN)), ScaleRules((RCEIL,))


@dataclasses.dataclass(frozen=True)
class QuantizePlan:
    """What a quantisation's kernels compile in, a constant of the compiled
    code: which element loops its tasks may need, so that a first call
    compiles only the loops it runs.  ``lanes`` is the block size when it is
    32 or 16 and whole blocks take :func:`encode_block` (0: never),
    ``partial`` whether some task holds a block that does not (of another
    size, or the short last block of a line), which takes the loop over a
    weights array."""

    lanes: int
    partial: bool

    def loops(self, any_blocks, whole_blocks, both):
        """Which of three implementations of a task's loop the plan compiles
        in: ``any_blocks`` (blocks of any size, one by one) when it has no
        lanes, ``whole_blocks`` (by its lanes) when every block is whole,
        else ``both`` (the second, then the first for what is left)."""
        if self.lanes == 0:
            return any_blocks
        return both if self.partial else whole_blocks


constant_type(QuantizePlan)


def quantize_plan(block_size=None, n=None):
    """The :class:`QuantizePlan` of lines of ``n`` elements cut into blocks
    of ``block_size`` (in Python types: the plan names its compiled code);
    a block size or a length not known yet (None: ``@njit`` code typing a
    call) takes the loops for any."""
    lanes = int(block_size) if block_size in LANES else 0
    return _plan(lanes, bool(lanes == 0 or n is None or n % block_size != 0))


#: The one :class:`QuantizePlan` of each value (made once: half a microsecond).
_plan = functools.cache(QuantizePlan)


#: The smallest and largest biased FLOAT8E8M0 codes of a finite scale.
E8M0_LOW, E8M0_HIGH = 0, 254


@functools.cache
def element_conversion(fmt: BlockFormat, wide: bool, saturate=True, rounding=None, stochastic_bits=None):
    """The cast of a scaled value (FLOAT, or DOUBLE when ``wide``: the type
    of the input) to ``fmt``'s element grid, ``nan_free``: a NaN element
    makes its block's scale NaN, and :func:`_quantize_task` writes every
    element of such a block (:func:`nan_element`).  With AVX2 code the NaN
    test was 3 of some 24 instructions a vector: MX quantisation 0.89-0.93x
    the time without it."""
    source = DOUBLE if wide else FLOAT
    return Conversion.make(
        source, fmt.grid, saturate, rounding=rounding, stochastic_bits=stochastic_bits, nan_free=True
    )


@functools.cache
def scale_conversion(fmt: BlockFormat):
    """The cast that makes a scale: DOUBLE to FLOAT8E8M0 rounding down,
    saturating (every MX scale rule starts from it); for NVFP4, FLOAT to
    FLOAT8E4M3FN (ties to even, saturating) of the float64 quotient
    rounded to odd (:func:`~numbacast.engine.bits.odd_float32`)."""
    if fmt.tensor_scale:
        return Conversion.make(FLOAT, fmt.scale, True)
    return Conversion.make(DOUBLE, FLOAT8E8M0, True, "down")


@functools.cache
def decoding(t: OnnxType, real: OnnxType = DOUBLE):
    """The cast of ``t``'s codes to ``real`` (DOUBLE or FLOAT; exact)."""
    return Conversion.make(t, real)


def _real(conversion):
    return np.float64 if conversion.conversion.source is DOUBLE else np.float32


def in_source_type(value, conversion):
    """``value`` in the source type of ``conversion`` (FLOAT or DOUBLE; ``@njit`` only)."""
    raise TypeError("in_source_type() is for @njit code")


@overload(in_source_type, jit_options=OVERLOAD_OPTIONS)
def _overload_in_source_type(value, conversion):
    if isinstance(conversion, ConversionType):
        real = _real(conversion)
        return lambda value, conversion: real(value)


def source_dtype(conversion):
    """The dtype of the source type of ``conversion`` (FLOAT or DOUBLE; ``@njit`` only)."""
    raise TypeError("source_dtype() is for @njit code")


@overload(source_dtype, jit_options=OVERLOAD_OPTIONS)
def _overload_source_dtype(conversion):
    if isinstance(conversion, ConversionType):
        dtype = np.dtype(_real(conversion))
        return lambda conversion: dtype


def block_value(code, scale_decode, unit):
    """What the elements of a block of scale ``code`` are multiplied by when
    dequantised: the scale times ``unit`` (exact) for MX, :func:`nvfp4_divisor`
    for NVFP4 (``unit`` the tensor scale).  ``@njit`` only."""
    raise TypeError("block_value() is for @njit code")


@overload(block_value, jit_options=OVERLOAD_OPTIONS)
def _overload_block_value(code, scale_decode, unit):
    if not isinstance(scale_decode, ConversionType):
        return None
    if scale_decode.conversion.source is FLOAT8E8M0:
        return lambda code, scale_decode, unit: convert(code, scale_decode) * unit
    return lambda code, scale_decode, unit: nvfp4_divisor(convert(code, scale_decode), unit)


@cached_njit(nogil=True)
def nvfp4_divisor(scale, tensor_scale):
    """NVFP4's divisor of a block: its scale times the tensor scale, rounded
    to float32 (as a float64): a float32 product, exact before its one
    rounding (the scale's 4 significant bits times the tensor scale's 24),
    of two values float32 holds.  A block's elements are its values divided
    by it, and dequantise as element times it."""
    return np.float64(np.float32(scale) * np.float32(tensor_scale))


#: The roundings an MX block's elements are scaled for by a plain product
#: (:func:`scaled`; the others keep a product that underflows nonzero).
_PLAIN_PRODUCT = ("nearest_even", "nearest_away")


def scaled(x, weight, conversion, block):
    """``x`` scaled by its block's weight (see :func:`block_scale`), in the element
    conversion's source type (``@njit`` only): a product for MX, a quotient
    for NVFP4.  Branch-free, so that the element loops run in vector lanes: a
    NaN weight gives NaN, of any sign, and :func:`_quantize_task` rewrites
    the elements of such blocks."""
    raise TypeError("scaled() is for @njit code")


@overload(scaled, jit_options={**OVERLOAD_OPTIONS, "error_model": "numpy"})  # a division without a zero check
def _overload_scaled(x, weight, conversion, block):
    if not isinstance(conversion, ConversionType) or not isinstance(block, ConversionType):
        return None
    real = _real(conversion)
    if block.conversion.target is not FLOAT8E8M0:  # NVFP4: divided by the block's divisor
        return lambda x, weight, conversion, block: real(x) / weight
    if conversion.conversion.rounding in _PLAIN_PRODUCT:
        return lambda x, weight, conversion, block: real(x) * weight
    tiny = real(np.finfo(real).smallest_subnormal)

    def multiply_keeping_nonzero(x, weight, conversion, block):
        # A product that underflows to 0 is below the target's smallest step,
        # where every non-zero value rounds alike, in the directed modes too.
        v = real(x) * weight
        if v == 0 and x != 0:
            v = tiny if x > 0 else -tiny
        return v

    return multiply_keeping_nonzero


def weight_at(weights, k):
    """What element ``k`` of a block is scaled by: ``weights[k]`` of an array
    written beside the elements, else ``weights`` itself, the block's one
    weight (``@njit`` only)."""
    raise TypeError("weight_at() is for @njit code")


@overload(weight_at, jit_options=OVERLOAD_OPTIONS)
def _overload_weight_at(weights, k):
    if isinstance(weights, types.Array):
        return lambda weights, k: weights[k]
    return lambda weights, k: weights


def encode_element(v, conversion, key, index):
    """The grid code of the scaled value ``v`` (``@njit`` only): stochastic
    conversions draw the random number of element ``index`` of ``key``."""
    raise TypeError("encode_element() is for @njit code")


@overload(encode_element, jit_options=OVERLOAD_OPTIONS)
def _overload_encode_element(v, conversion, key, index):
    if not isinstance(conversion, ConversionType):
        return None
    if conversion.conversion.stochastic:
        drop = np.uint64(64 - conversion.conversion.stochastic_bits)
        return lambda v, conversion, key, index: convert_random(v, conversion, random64(key, index) >> drop)
    return lambda v, conversion, key, index: convert(v, conversion)


def nan_element(conversion):
    """The grid code of a NaN element by ``conversion``: the code the generated
    encoders give +NaN (:func:`~numbacast.engine.codecs.nan_codes`, for every
    rounding), which an element conversion, without its NaN test, does not
    (``@njit`` only)."""
    raise TypeError("nan_element() is for @njit code")


@overload(nan_element, jit_options=OVERLOAD_OPTIONS)
def _overload_nan_element(conversion):
    if not isinstance(conversion, ConversionType):
        return None
    code = np.uint32(nan_codes(conversion.conversion.target.format)[0])
    return lambda conversion: code


def store_element(code, conversion):
    """The stored element of a grid code: itself, or for MXINT8 the int8 of
    its sign and magnitude, clamped to -128 .. 127 (``@njit`` only)."""
    raise TypeError("store_element() is for @njit code")


@overload(store_element, jit_options=OVERLOAD_OPTIONS)
def _overload_store_element(code, conversion):
    if not isinstance(conversion, ConversionType):
        return None
    grid = conversion.conversion.target.format
    if grid.bits <= 8:
        return lambda code, conversion: np.uint8(code)
    sign_shift, mask = np.uint32(grid.sign_shift), np.uint32(grid.magnitude_mask)
    top_positive, top_negative = np.int32(127), np.int32(128)

    def to_int8(code, conversion):
        magnitude = np.int32(np.uint32(code) & mask)
        if (np.uint32(code) >> sign_shift) != 0:
            return np.int8(-smaller(magnitude, top_negative))
        return np.int8(smaller(magnitude, top_positive))

    return to_int8


def block_amax(values):
    """The largest magnitude of the 1-D array ``values`` as a float64, NaN when one
    is NaN (``@njit`` only).  The magnitude bits order like the magnitudes,
    with the NaNs above infinity: an integer maximum, which vectorises."""
    raise TypeError("block_amax() is for @njit code")


@overload(block_amax, jit_options=OVERLOAD_OPTIONS)
def _overload_block_amax(values):
    wide = values.dtype == types.float64
    uint, from_bits = (np.uint64, float64_from_bits) if wide else (np.uint32, float32_from_bits)
    mask = uint(0x7FFFFFFFFFFFFFFF if wide else 0x7FFFFFFF)

    def amax(values):
        top = uint(0)
        for j in range(values.size):
            bits = uint(float_bits(values[j]) & mask)
            top = bits if bits > top else top
        return np.float64(from_bits(top))

    return amax


@helper_jitable
def _scale_value(code):
    """``2**(code - 127)``, the value of the finite FLOAT8E8M0 code ``code``, made from its bits."""
    return float64_from_bits((np.uint64(code) + np.uint64(1023 - 127)) << np.uint64(52))


def block_scale(amax, block, rules, rule, unscale, largest, half_step, tensor_scale):
    """``(code, weight)``: the scale code (by the conversion ``block``) of a
    block whose largest magnitude is ``amax``, by the scale rule numbered
    ``rule`` (:func:`rule_number`) among the :class:`ScaleRules` ``rules``
    (``unscale`` is ``2**-emax``), and what its elements are scaled by, in
    the type of ``amax`` (that of the input and of the element conversion's
    source): ``1 / scale`` for MX (exact: a power of two, made from the
    code's bits; NaN for the NaN scale), for NVFP4 the divisor
    :func:`nvfp4_divisor` of the scale.  ``@njit`` only."""
    raise TypeError("block_scale() is for @njit code")


@overload(block_scale, jit_options=OVERLOAD_OPTIONS)
def _overload_block_scale(amax, block, rules, rule, unscale, largest, half_step, tensor_scale):
    compiled = constant_of(rules, ScaleRules)
    if not isinstance(block, ConversionType) or not isinstance(amax, types.Float) or compiled is None:
        return None
    real = as_dtype(amax).type  # the input's type
    if block.conversion.target is not FLOAT8E8M0:
        decode = decoding(block.conversion.target, FLOAT)

        def nvfp4_scale(amax, block, rules, rule, unscale, largest, half_step, tensor_scale):
            quotient = amax / (largest * tensor_scale)  # a float64
            code = np.uint8(convert(odd_float32(quotient), block))
            divisor = real(nvfp4_divisor(convert(code, decode), tensor_scale))
            return code, real(np.inf) if divisor == 0 else divisor

        return nvfp4_scale
    one = np.uint8(1)
    exponent_field = np.uint64(0x7FF0000000000000)
    mantissa_field = np.uint64((1 << 52) - 1)
    low, high, nan_code = np.uint8(E8M0_LOW), np.uint8(E8M0_HIGH), np.uint8(FLOAT8E8M0.format.quiet_nan_code)
    smallest = 2.0 ** (E8M0_LOW - 127)
    inverse_bias = np.uint64(1023 + 127)  # 1 / 2**(code - 127) has the float64 exponent field 1023 + 127 - code
    with_even, with_ceil, rceil = EVEN in compiled.names, CEIL in compiled.names, compiled == RCEIL_RULE
    ceil, even = rule_number(CEIL), rule_number(EVEN)

    def mx_scale(amax, block, rules, rule, unscale, largest, half_step, tensor_scale):
        value = amax * unscale
        if with_even:  # even: amax rounded to the element's precision first
            rounded = float64_from_bits(np.uint64(float_bits(value) + half_step) & exponent_field)
            value = choose((rule == even) & (amax < np.inf), rounded, value)
        if rceil:
            value = amax / largest
        code = np.uint8(convert(value, block))  # 2**floor(log2 value), within the range
        if with_ceil:  # ceil: one code up unless value is a power of two
            inexact = (code < high) & (value >= smallest) & ((float_bits(value) & mantissa_field) != 0)
            code = choose((rule == ceil) & inexact, np.uint8(code + one), code)
        if rceil and amax == amax:  # exactly the smallest 2**k with largest * 2**k >= amax
            for _ in range(2):
                if code < high and largest * _scale_value(code) < amax:
                    code = np.uint8(code + one)
            if code > low and largest * _scale_value(code - one) >= amax:
                code = np.uint8(code - one)
        weight = real(float64_from_bits(np.uint64(inverse_bias - np.uint64(code)) << np.uint64(52)))
        return code, real(np.nan) if code == nan_code else weight

    return mx_scale


@helper_njit
def _scales_by(amaxes, codes, block, rules, rule, unscale, largest, half_step, tensor_scale):
    """The scale codes (into ``codes``) and weights (in place) of the blocks
    whose largest magnitudes are ``amaxes``, by :func:`block_scale`: one
    loop, in vector lanes where it can."""
    for i in range(amaxes.size):
        codes[i], amaxes[i] = block_scale(amaxes[i], block, rules, rule, unscale, largest, half_step, tensor_scale)


def block_scales(amaxes, codes, block, rule, unscale, largest, half_step, tensor_scale):
    """:func:`_scales_by` the scale rule numbered ``rule`` (:func:`rule_number`,
    read at run time; NVFP4 has one rule).  ``@njit`` only."""
    raise TypeError("block_scales() is for @njit code")


@overload(block_scales, jit_options=OVERLOAD_OPTIONS)
def _overload_block_scales(amaxes, codes, block, rule, unscale, largest, half_step, tensor_scale):
    if not isinstance(block, ConversionType):
        return None
    if block.conversion.target is not FLOAT8E8M0:

        def one_rule(amaxes, codes, block, rule, unscale, largest, half_step, tensor_scale):
            _scales_by(amaxes, codes, block, POWER_RULES, rule, unscale, largest, half_step, tensor_scale)

        return one_rule

    floor, rceil = rule_number(FLOOR), rule_number(RCEIL)

    def by_rule(amaxes, codes, block, rule, unscale, largest, half_step, tensor_scale):
        if rule == floor:
            _scales_by(amaxes, codes, block, FLOOR_RULE, rule, unscale, largest, half_step, tensor_scale)
        elif rule == rceil:
            _scales_by(amaxes, codes, block, RCEIL_RULE, rule, unscale, largest, half_step, tensor_scale)
        else:
            _scales_by(amaxes, codes, block, POWER_RULES, rule, unscale, largest, half_step, tensor_scale)

    return by_rule


#: Runs of consecutive tasks a quantisation is cut into, at most: the
#: iterations of its parallel loop, each allocating one scratch array.
TASK_RUNS = 256

#: Elements of a quantising task's element loop between two rounds of
#: prefetches (:func:`read_ahead` of the elements 32 KiB on, in tasks to
#: come): 1 KiB of float32.  Runs of 256 took 0.80-0.86x the time of one
#: prefetch of the whole task before its loop (AVX-512 code; 0.86-0.94x with
#: AVX2 code), runs of 128 or 512 0.86-0.90x, 1024 0.94-0.99x.
ENCODE_RUN = 256

#: Elements per task of the parallel loops, at least: a task takes whole blocks
#: of one line, so that the element loops are long enough to run in vector
#: lanes and a task's own steps (its call, its span and slices, its scales'
#: loop set up) are paid once for many blocks.  Quantising by tasks of 4096
#: took 0.96-0.98x the time of tasks of 2048 (16M elements, MX and NVFP4,
#: AVX-512 code; 0.98-1.0x with AVX2 code), tasks of 8192 no less.
TASK_ELEMENTS = 4096


#: :func:`~numbacast.formats.blocks.block_count` in ``@njit`` code too.
block_count = helper_jitable(block_count)


@helper_jitable
def _tasks(rows, n, block_size):
    """``(blocks per task, tasks per row)`` of lines of ``n`` elements
    (Python as well as ``@njit`` code: it sizes NVFP4's array of maxima)."""
    group = max(1, TASK_ELEMENTS // block_size)
    return group, block_count(block_count(n, block_size), group)


@helper_njit
def _task_room(group, n, block_size):
    """The most elements a task holds: its ``group`` blocks, or the whole
    line of ``n`` where that is shorter (a block longer than the line, which
    :func:`_task_span` cuts at its end): the length of a task's scratch."""
    return smaller(group * block_size, n)


@helper_njit
def _task_span(t, per_row, group, n, block_size):
    """``(row, first block, end block, first element, end element)`` of task ``t``."""
    row, k = divmod(np.int64(t), per_row)
    b0 = k * group
    b1 = smaller(b0 + group, block_count(n, block_size))
    return row, b0, b1, b0 * block_size, smaller(b1 * block_size, n)


def task_amaxes(line, size, out, plan):
    """The largest magnitude of each block of ``size`` elements of ``line`` (a
    task's, the last block maybe shorter) into ``out``, one per block (of
    the type of ``line``), by the loops ``plan`` (a :class:`QuantizePlan`)
    compiles in: the whole blocks of its 32 or 16 lanes by
    :func:`amaxes_by_lanes` (groups of blocks side by side,
    :func:`~numbacast.engine.lanes.largest_magnitudes`), then, where the
    plan has short blocks or other sizes, the rest by :func:`_amaxes_from`
    (``@njit`` only)."""
    raise TypeError("task_amaxes() is for @njit code")


@overload(task_amaxes, jit_options=OVERLOAD_OPTIONS)
def _overload_task_amaxes(line, size, out, plan):
    compiled = constant_of(plan, QuantizePlan)
    if compiled is None:
        return None
    return compiled.loops(
        lambda line, size, out, plan: _amaxes_from(line, size, out, 0),
        lambda line, size, out, plan: amaxes_by_lanes(line, out, plan),
        lambda line, size, out, plan: _amaxes_from(line, size, out, amaxes_by_lanes(line, out, plan)),
    )


def amaxes_by_lanes(line, out, plan):
    """The largest magnitudes of the whole blocks of ``line`` of the 32 or 16
    lanes of ``plan`` into ``out``: by groups of as many blocks side by
    side, then one by one in vector lanes; returns how many (``@njit``
    only)."""
    raise TypeError("amaxes_by_lanes() is for @njit code")


@overload(amaxes_by_lanes, jit_options=OVERLOAD_OPTIONS)
def _overload_amaxes_by_lanes(line, out, plan):
    lanes = getattr(constant_of(plan, QuantizePlan), "lanes", None)
    if lanes not in LANES:
        return None

    def by_lanes(line, out, plan):
        grouped = line.size // (lanes * lanes) * lanes
        for g in range(0, grouped, lanes):
            largest_magnitudes(line, g * lanes, lanes, out, g)
        whole = line.size // lanes
        for i in range(grouped, whole):
            out[i] = largest_magnitude(line, i * lanes, lanes)
        return whole

    return by_lanes


@helper_njit
def _amaxes_from(line, size, out, first):
    """The largest magnitude of blocks ``first`` on of ``line`` into ``out``, block by block."""
    for i in range(first, out.size):
        out[i] = block_amax(line[i * size : (i + 1) * size])


@helper_njit
def _spread(values, per_block, size):
    """``per_block[i]`` written beside each element of block ``i`` (of ``size``
    elements, the last maybe shorter) of ``values``, a task's scratch array:
    whole blocks of 32 or 16 by vector stores (:func:`~numbacast.engine.lanes.fill`)."""
    fixed32 = size == 32 and values.size % 32 == 0  # whole blocks of OCP MX
    fixed16 = size == 16 and values.size % 16 == 0  # whole blocks of NVFP4
    for i in range(per_block.size):
        lo = i * size
        if fixed32:
            fill(values, lo, 32, per_block[i])
        elif fixed16:
            fill(values, lo, 16, per_block[i])
        else:
            values[lo : lo + size] = per_block[i]


def encode_block(line, out, base, weight, plan, conversion, block, key, start):
    """The ``plan.lanes`` elements of ``line`` from ``base`` (unsigned)
    scaled by ``weight`` (see :func:`scaled`; or by their own, ``weight``
    an array beside ``line``: :func:`weight_at`) and rounded into ``out``,
    element ``k`` being element ``start + k`` of the stochastic stream of
    ``key`` (``plan`` a :class:`QuantizePlan` of 16 or 32 lanes): a loop of a
    constant length, which runs in whole vector registers with the weight
    in one, without a remainder or a weights array to read (``@njit`` only)."""
    raise TypeError("encode_block() is for @njit code")


@overload(encode_block, jit_options=OVERLOAD_OPTIONS)
def _overload_encode_block(line, out, base, weight, plan, conversion, block, key, start):
    lanes = getattr(constant_of(plan, QuantizePlan), "lanes", None)
    if lanes not in LANES or not isinstance(conversion, ConversionType) or not isinstance(block, ConversionType):
        return None
    c = conversion.conversion
    encode = _stochastic_block_loop(np.uint64(lanes), c) if c.stochastic else _block_loop(np.uint64(lanes))
    nvfp4 = block.conversion.target is not FLOAT8E8M0
    if not _in_block_lanes(c, lanes, nvfp4, isinstance(weight, types.Array)):
        return encode
    encode.__qualname__ += f"_in_{lanes}_lanes"  # the name the loop hint finds it by
    return element_loop(encode, lanes)


def _in_block_lanes(c, lanes, nvfp4, weights_array):
    """Whether :func:`encode_block`'s loop, by the conversion ``c``, is
    hinted to run in as many vector lanes as its block has elements: its
    codes then narrow to bytes by packs into one store, where LLVM's own
    choice, registers of 8 with AVX2 code, took 5 instructions each.

    * Blocks of 32 (the kernel's lanes for FLOAT into bytes), MX to nearest
      or stochastic: quantisation with AVX2 code 0.96-0.97x the time
      (stochastic 0.88-0.9x), AVX-512 code 0.98-1.0x.  Not an MX directed
      rounding, whose branch for a product that underflows took 1.3x the
      time hinted, nor NVFP4's division (3.5x).
    * Blocks of 16 (NVFP4's, any rounding; MX's on request, as above), on
      data in the cache: 0.93-0.97x with AVX2 code, the same with AVX-512
      code (which takes 16 lanes anyway).
    * Never a kernel whose element loops take LLVM's lanes (``loop_lanes``
      0), nor weights in an array (the chunks of :func:`encode_run`, as fast
      in LLVM's own lanes)."""
    if weights_array or not c.loop_lanes:
        return False
    if nvfp4:
        return lanes == 16
    return c.rounding in _PLAIN_PRODUCT or c.stochastic


def _block_loop(width):
    """:func:`encode_block`'s loop over ``width`` elements (a new function each call)."""

    def encode(line, out, base, weight, plan, conversion, block, key, start):
        for j in range(width):
            k = base + j
            v = scaled(line[k], weight_at(weight, k), conversion, block)
            out[k] = store_element(encode_element(v, conversion, key, np.uint64(start) + k), conversion)

    return encode


_IN_WINDOW = np.uint64((1 << WINDOW_BITS) - 1)
_LOW32 = np.uint64((1 << 32) - 1)


def _stochastic_block_loop(width, conversion):
    """:func:`encode_block`'s loop over ``width`` elements for a stochastic
    ``conversion``, as the stochastic cast kernel rounds
    (:mod:`~numbacast.engine.stochastic`), the same bits: a block whose
    elements' global indices lie in one window of the generator (all but
    those across a multiple of ``2**16``) takes the window's keys once, each
    element's random number reduced to what the fast encoder takes, and
    the full encoder after the loop only for the elements the fast one may
    have rounded wrongly (:func:`_settle_elements`).  A block across two
    windows goes element by element (:func:`_block_loop`).  Stochastic
    MX quantisation 0.17x the time with all 64 random bits, 0.3-0.47x with
    8 (AVX2 code, 16M elements), where every element drew its full number
    and took the full encoder.  A new function each call."""
    drop, window = np.uint64(64 - conversion.stochastic_bits), np.uint64(width)
    element_by_element = helper_jitable(_block_loop(width))

    def encode(line, out, base, weight, plan, conversion, block, key, start):
        first = np.uint64(start) + base
        if (first & _IN_WINDOW) + window > _IN_WINDOW + np.uint64(1):  # across two windows
            element_by_element(line, out, base, weight, plan, conversion, block, key, start)
            return
        lo = np.uint32(first & _LOW32)
        keys = window_keys(key, np.uint32(first >> np.uint64(32)), lo)
        least = np.uint32(1)
        for j in range(width):
            k = base + j
            v = scaled(line[k], weight_at(weight, k), conversion, block)
            reduced = reduce_random(random64_window(keys, np.uint32(lo + np.uint32(j))) >> drop, conversion)
            least = smaller(least, settled(v, conversion, reduced))
            out[k] = store_element(convert_random_fast(v, conversion, reduced), conversion)
        if least == 0:
            _settle_elements(line, out, base, width, weight, conversion, block, keys, lo, drop)

    return encode


@helper_njit(forceinline=False)
def _settle_elements(line, out, base, width, weight, conversion, block, keys, lo, drop):
    """The elements of a block of :func:`_stochastic_block_loop` whose fast
    encoding may be wrong (:func:`~numbacast.engine.stochastic.settled` zero),
    by the full encoder with their whole random numbers.  A function apart,
    outside the loop hint of the block's loop, like the cast kernel's."""
    for j in range(width):
        k = base + j
        v = scaled(line[k], weight_at(weight, k), conversion, block)
        r = random64_window(keys, np.uint32(lo + np.uint32(j))) >> drop
        if settled(v, conversion, reduce_random(r, conversion)) == 0:
            out[k] = store_element(convert_random(v, conversion, r), conversion)


@helper_njit
def _encode_whole_blocks(line, out, weights, size, src, start, conversion, block, key, plan):
    """The elements of a task of whole blocks of ``plan.lanes`` (16 or
    32), block after block by :func:`encode_block` with each block's weight
    (``weights``, one a block), reading ahead (:func:`read_ahead`) before
    each :data:`ENCODE_RUN` elements.  MX quantisation took 0.88-0.92x the
    time of the loop over a weights array written beside each element
    (16M, AVX-512 and AVX2 code), NVFP4 0.92-0.99x."""
    width, run = np.uint64(size), np.uint64(ENCODE_RUN)
    for b in range(np.uint64(weights.size)):  # unsigned: no negative indices to wrap
        base = b * width
        if base % run == 0:
            read_ahead(src, start + base, start + base + run)
        encode_block(line, out, base, weights[b], plan, conversion, block, key, start)


#: Elements of :func:`encode_run`'s chunks, and their plan (each element with its own weight).
CHUNK = 32
_CHUNKS = quantize_plan(CHUNK, CHUNK)


@helper_njit
def _encode_by_weights(line, out, weights, per_block, size, src, start, conversion, block, key):
    """The elements of a task, each block's weight (``per_block``) written
    beside each of its elements (in ``weights``, as long as ``line``), then
    by runs of :data:`ENCODE_RUN` (:func:`encode_run`), each after reading
    ahead: contiguous loads and stores in vector lanes, however short the
    blocks."""
    _spread(weights, per_block, size)
    count, step = np.uint64(line.size), np.uint64(ENCODE_RUN)
    for run in range(np.uint64(0), count, step):  # unsigned: no negative indices to wrap
        read_ahead(src, start + run, start + run + step)
        encode_run(line, out, weights, run, smaller(run + step, count), conversion, block, key, start)


def encode_run(line, out, weights, first, end, conversion, block, key, start):
    """Elements ``first`` to ``end`` of a task scaled by their weights
    (``weights``, beside them) and rounded: for stochastic rounding in
    chunks of :data:`CHUNK` by :func:`encode_block`, which draws the random
    numbers a window of the generator at a time, the last few one by one;
    for the other roundings one by one, in one loop (``@njit`` only).  In
    blocks of 24 (one thread, data in the cache) stochastic MX and NVFP4
    quantisation took 0.4x the time of elements drawing their whole random
    numbers one by one (AVX2 code 0.3-0.48x), a first one about 1 s more
    to compile (cold: 3.3-4.5 s against 2.3-3.2); chunks to nearest took
    the same time (AVX2 code 0.9-0.97x) and 0.3 s more to compile,
    directed ones 1.08x the time with AVX2 code."""
    raise TypeError("encode_run() is for @njit code")


@overload(encode_run, jit_options=OVERLOAD_OPTIONS)
def _overload_encode_run(line, out, weights, first, end, conversion, block, key, start):
    if not isinstance(conversion, ConversionType):
        return None
    c = conversion.conversion
    if not c.stochastic:
        return lambda line, out, weights, first, end, conversion, block, key, start: _encode_elements(
            line, out, weights, first, end, conversion, block, key, start
        )
    chunk = np.uint64(CHUNK)

    def by_chunks(line, out, weights, first, end, conversion, block, key, start):
        chunks_end = first + (end - first) // chunk * chunk
        for base in range(first, chunks_end, chunk):
            encode_block(line, out, base, weights, _CHUNKS, conversion, block, key, start)
        _encode_elements(line, out, weights, chunks_end, end, conversion, block, key, start)

    return by_chunks


@helper_njit
def _encode_elements(line, out, weights, first, end, conversion, block, key, start):
    """Elements ``first`` to ``end`` of a task, one by one, scaled by their
    weights (:func:`weight_at`: an array beside them, or one for all)."""
    for k in range(first, end):
        v = scaled(line[k], weight_at(weights, k), conversion, block)
        out[k] = store_element(encode_element(v, conversion, key, np.uint64(start) + k), conversion)


def encode_task(line, out, weights, per_block, size, src, start, conversion, block, key, plan):
    """The elements of a task scaled and rounded: whole blocks of
    ``plan.lanes`` by :func:`_encode_whole_blocks` (a line's short last
    block after them one element after the other, :func:`_encode_elements`),
    blocks of other sizes by :func:`_encode_by_weights`; only the loops
    ``plan`` says the tasks may need are compiled (``@njit`` only).  A task
    ending in a short block went all by weights: quantising lines of 1,000
    elements (one thread, data in the cache) now takes 0.25-0.5x the time
    with stochastic rounding, 0.8x to nearest, both CPUs' code."""
    raise TypeError("encode_task() is for @njit code")


@overload(encode_task, jit_options=OVERLOAD_OPTIONS)
def _overload_encode_task(line, out, weights, per_block, size, src, start, conversion, block, key, plan):
    task = constant_of(plan, QuantizePlan)
    if task is None:
        return None

    def whole(line, out, weights, per_block, size, src, start, conversion, block, key, plan):
        _encode_whole_blocks(line, out, per_block, size, src, start, conversion, block, key, plan)

    def by_weights(line, out, weights, per_block, size, src, start, conversion, block, key, plan):
        _encode_by_weights(line, out, weights, per_block, size, src, start, conversion, block, key)

    def either(line, out, weights, per_block, size, src, start, conversion, block, key, plan):
        whole_blocks = line.size // size
        _encode_whole_blocks(line, out, per_block[:whole_blocks], size, src, start, conversion, block, key, plan)
        if whole_blocks < per_block.size:  # the short last block of a line
            first, end = np.uint64(whole_blocks * size), np.uint64(line.size)
            _encode_elements(line, out, per_block[whole_blocks], first, end, conversion, block, key, start)

    return task.loops(by_weights, whole, either)


@helper_njit
def _quantize_task(
    t, per_row, group, n, src, elements, scales, block, conversion, plan, params, key, scratch, per_block
):
    """Task ``t`` of :func:`quantize_kernel`: the largest magnitude of each
    of its blocks (into ``per_block``), then their scales side by side (by
    the rule of ``params``, :func:`block_scales`), then the elements scaled
    by their block's weight and rounded (:func:`encode_task`, by the loops
    ``plan`` compiles in: whole blocks of 16 or 32 by
    :func:`_encode_whole_blocks`, others by :func:`_encode_by_weights`, with
    ``scratch`` as long as a task, of the source type, that of the
    conversion: see :func:`element_conversion`).  Last, in a task holding a block of the NaN
    scale, that block's elements made the encoding of +NaN (:func:`scaled`
    leaves them to be rewritten; found by the weights written out, as a
    loop over such blocks' bounds made the common path 4% slower).

    A helper, which LLVM inlines into the kernel's loop: the reference
    counts of the task's slices then cancel out there, where a function
    of its own took and released each (atomic steps, a tenth of a task's
    time on data in cache).  Quantisation 0.94-0.96x the time at 16M
    (AVX-512 code; 0.97-0.98x with AVX2 code), and a first quantisation
    0.2 s sooner."""
    size, unscale, largest, half_step, tensor_scale, rule = params
    row, b0, b1, first, last = _task_span(t, per_row, group, n, size)
    start = row * n + first
    line, out = src[start : start + last - first], elements[start : start + last - first]
    weights = scratch[: line.size]
    codes = scales[row, b0:b1]  # indexed from 0: no negative indices to wrap
    task_amaxes(line, size, per_block[: b1 - b0], plan)
    block_scales(per_block[: b1 - b0], codes, block, rule, unscale, largest, half_step, tensor_scale)
    encode_task(line, out, weights, per_block[: b1 - b0], size, src, start, conversion, block, key, plan)
    nan_blocks = False
    for b in range(b1 - b0):
        nan_blocks |= per_block[b] != per_block[b]
    if nan_blocks:
        _spread(weights, per_block[: b1 - b0], size)
        for k in range(line.size):
            if weights[k] != weights[k]:
                out[k] = store_element(nan_element(conversion), conversion)


@cached_njit(parallel=True, nogil=True)
def quantize_kernel(src, elements, scales, block, conversion, plan, params, key):
    """Every block of ``src`` quantised, parallel over tasks of whole blocks
    (:data:`TASK_ELEMENTS`): ``src`` a 2-D C-contiguous float32 or float64
    array cut along its rows, ``elements`` its codes (uint8, int8 for MXINT8),
    ``scales`` the scale codes (uint8, one per block of each row), ``block``
    the scale's conversion and ``conversion`` the elements', ``plan`` a
    :class:`QuantizePlan`, ``params`` =
    ``(block_size, 2**-emax, largest, half_step, tensor_scale, rule)`` (the
    last of :func:`rule_number`), ``key`` the key
    of stochastic rounding."""
    rows, n = src.shape
    group, per_row = _tasks(rows, n, params[0])
    flat_src, flat_elements = src.reshape(-1), elements.reshape(-1)
    tasks = rows * per_row
    runs = smaller(tasks, TASK_RUNS)
    for r in prange(runs):  # one scratch array a run of tasks
        scratch, per_block = new_like(_task_room(group, n, params[0]), src), new_like(group, src)
        for t in range(r * tasks // runs, (r + 1) * tasks // runs):
            _quantize_task(
                t,
                per_row,
                group,
                n,
                flat_src,
                flat_elements,
                scales,
                block,
                conversion,
                plan,
                params,
                key,
                scratch,
                per_block,
            )


@helper_njit
def _dequantize_task(
    t,
    per_row,
    group,
    n,
    elements,
    scales,
    out,
    scale_decode,
    element_decode,
    output,
    block_size,
    unit,
    scratch,
    per_block,
):
    """Task ``t`` of :func:`dequantize_kernel` (over slices of the flat arrays,
    indexed from 0): the blocks' factors side by side (into ``per_block``, a
    loop in vector lanes), each written beside its block's elements (in
    ``scratch``, as in :func:`_quantize_task`), then one loop over the task;
    inlined into the kernel's loop like :func:`_quantize_task`."""
    row, b0, b1, first, last = _task_span(t, per_row, group, n, block_size)
    start = row * n + first
    line, result = elements[start : start + last - first], out[start : start + last - first]
    factors = scratch[: line.size]
    codes = scales[row, b0:b1]
    read_ahead(elements, start, start + line.size)
    for i in range(b1 - b0):
        per_block[i] = in_source_type(block_value(codes[i], scale_decode, unit), output)
    _spread(factors, per_block[: b1 - b0], block_size)
    for k in range(line.size):
        result[k] = convert(convert(line[k], element_decode) * factors[k], output)


@cached_njit(parallel=True, nogil=True)
def dequantize_kernel(elements, scales, out, scale_decode, element_decode, output, block_size, unit):
    """Every element times its block's scale times ``unit`` (the tensor scale
    of NVFP4, ``2**-6`` for MXINT8, else 1), exact in float64, then cast by
    ``output`` into ``out``; parallel over tasks of whole blocks."""
    rows, n = elements.shape
    group, per_row = _tasks(rows, n, block_size)
    flat_elements, flat_out = elements.reshape(-1), out.reshape(-1)
    tasks = rows * per_row
    runs = smaller(tasks, TASK_RUNS)
    for r in prange(runs):  # one scratch array a run of tasks
        scratch = new_array((_task_room(group, n, block_size),), source_dtype(output))  # the type the products take
        per_block = new_like(group, scratch)
        for t in range(r * tasks // runs, (r + 1) * tasks // runs):
            _dequantize_task(
                t,
                per_row,
                group,
                n,
                flat_elements,
                scales,
                flat_out,
                scale_decode,
                element_decode,
                output,
                block_size,
                unit,
                scratch,
                per_block,
            )


@cached_njit(parallel=True, nogil=True)
def tensor_amax_kernel(src, block_size, maxima):
    """The largest magnitude of each task of :func:`quantize_kernel` in
    ``src`` (2-D C-contiguous, cut along its rows) into ``maxima`` (float64,
    one a task; NaN for a task holding one), parallel: NVFP4's first pass,
    which reads the tensor and writes next to nothing."""
    rows, n = src.shape
    group, per_row = _tasks(rows, n, block_size)
    flat = src.reshape(-1)
    for t in prange(rows * per_row):
        row, b0, b1, first, last = _task_span(t, per_row, group, n, block_size)
        start = row * n + first
        maxima[t] = block_amax(flat[start : start + last - first])


#: ``(serial, parallel)`` compilations of each loop, for :func:`~numbacast.engine.kernels.split_run`.
quantize_serial, dequantize_serial, tensor_amax_serial = map(
    serial_version, (quantize_kernel, dequantize_kernel, tensor_amax_kernel)
)
QUANTIZE = (quantize_serial, quantize_kernel)
DEQUANTIZE = (dequantize_serial, dequantize_kernel)
TENSOR_AMAX = (tensor_amax_serial, tensor_amax_kernel)


@helper_jitable
def scale_of_tensor_amax(amax):
    """NVFP4's default per-tensor scale of a tensor whose largest magnitude
    is ``amax``: ``amax / (448 * 6)`` rounded to float32, 1.0 when that is
    not a positive finite float32."""
    value = np.float32(amax / 2688.0)
    if not (value > 0 and value < np.inf):
        value = np.float32(1.0)
    return value


@register_jitable
def _task_maxima(src, block_size):
    """An array for :func:`tensor_amax_kernel`'s maxima of ``src``, one a task."""
    rows, n = src.shape
    return np.empty(rows * _tasks(rows, n, block_size)[1], np.float64)


@cached_njit(nogil=True)
def nvfp4_tensor_scale(src, block_size):
    """NVFP4's default per-tensor scale (:func:`scale_of_tensor_amax`) of
    ``src``, for ``@njit`` code: as :func:`scale_of_tensor_amax` of
    :func:`tensor_amax_of` in Python."""
    maxima = _task_maxima(src, block_size)
    if src.size < PARALLEL_MIN:
        tensor_amax_serial(src, block_size, maxima)
    else:
        tensor_amax_kernel(src, block_size, maxima)
    return scale_of_tensor_amax(block_amax(maxima))


@cached_njit(nogil=True)
def quantize_any(src, elements, scales, block, conversion, plan, params, key):
    """:func:`quantize_kernel` or its serial twin by the size of ``src``, for ``@njit`` code."""
    if src.size < PARALLEL_MIN:
        quantize_serial(src, elements, scales, block, conversion, plan, params, key)
    else:
        quantize_kernel(src, elements, scales, block, conversion, plan, params, key)


@cached_njit(nogil=True)
def dequantize_any(elements, scales, out, scale_decode, element_decode, output, block_size, unit):
    """:func:`dequantize_kernel` or its serial twin by the size, for ``@njit`` code."""
    if elements.size < PARALLEL_MIN:
        dequantize_serial(elements, scales, out, scale_decode, element_decode, output, block_size, unit)
    else:
        dequantize_kernel(elements, scales, out, scale_decode, element_decode, output, block_size, unit)


def tensor_amax_of(src, block_size):
    """The largest magnitude of the 2-D C-contiguous ``src`` (a float; NaN
    when one is NaN), from Python: by :func:`tensor_amax_kernel` (one pass,
    parallel over the tasks of the quantisation of blocks of
    ``block_size``) and the tasks' largest by NumPy."""
    maxima = _task_maxima(src, block_size)
    split_run(TENSOR_AMAX, src.size, src, int(block_size), maxima)  # a Python int: Numba types it, 1 us sooner
    if maxima.size <= 1:  # a tensor of at most one task (NumPy's reduction took 2 us of a small quantisation)
        return float(maxima[0]) if maxima.size else 0.0
    return float(np.max(maxima))


def format_parameters(fmt: BlockFormat):
    """``(2**-emax, largest, half_step)``: what :func:`block_scale` takes of
    ``fmt`` (``half_step`` is half a step of its precision in a float64's
    mantissa field, which the ``even`` rule adds)."""
    return 2.0**-fmt.emax, float(fmt.largest), np.uint64(1 << (52 - fmt.mantissa_bits - 1))


@helper_jitable
def with_run_time_parameters(fixed, block_size, tensor_scale, rule):
    """``params`` of :func:`quantize_kernel`: the :func:`format_parameters`
    ``fixed`` with the block size, the tensor scale and the number of the
    scale rule (:func:`rule_number`), in Python and ``@njit`` code."""
    unscale, largest, half_step = fixed
    return np.int64(block_size), unscale, largest, half_step, np.float64(tensor_scale), rule


@functools.lru_cache(maxsize=256)
def quantize_parameters(fmt: BlockFormat, block_size, rule, tensor_scale):
    """``params``, the run-time arguments of :func:`quantize_kernel` besides
    the arrays (kept: they are a tenth of a small quantisation's time)."""
    return with_run_time_parameters(format_parameters(fmt), block_size, tensor_scale, rule_number(rule))


def dequantizing(fmt: BlockFormat, output: OnnxType):
    """``(decode, unit, store)`` of a dequantisation to ``output``: the cast of
    the stored elements to the type the products are computed in, the power
    of two their values carry besides the scales (2**-6 for MXINT8), and the
    cast of a product to ``output``.  The products are computed in FLOAT for
    a FLOAT output (an element times a block's scale, a float32 value, is
    then rounded once, by the multiplication), else in DOUBLE (exact)."""
    real = FLOAT if output is FLOAT else DOUBLE
    unit = 2.0**MXINT8_EXPONENT if fmt.integer_elements else 1.0
    return decoding(fmt.element, real), unit, Conversion.make(real, output)


#: The stochastic key of a quantisation that draws no random numbers (made once: 0.45 us).
_NO_KEY = np.uint64(0)


def quantize_blocks(src, fmt: BlockFormat, block_size, rule, conversion, tensor_scale=1.0, key=0):
    """``(elements, scales)`` of the 2-D C-contiguous float32 or float64 array
    ``src`` quantised to ``fmt`` along its last axis (see the module's text)."""
    rows, n = src.shape
    elements = np.empty((rows, n), kernel_dtype(fmt.element))
    scales = np.empty((rows, block_count(n, block_size)), np.uint8)
    params = quantize_parameters(fmt, block_size, rule, tensor_scale)
    plan = quantize_plan(block_size, n)
    stochastic_key = _NO_KEY if key == 0 else np.uint64(key)
    args = (src, elements, scales, scale_conversion(fmt), conversion, plan, params, stochastic_key)
    # the types vary by the input and the conversions alone: the arrays made here and params are of fixed types
    split_run(QUANTIZE, src.size, *args, key=(array_key(src), fmt, conversion, plan))
    return elements, scales


def dequantize_blocks(elements, scales, fmt: BlockFormat, block_size, output: OnnxType, tensor_scale=1.0):
    """The values of 2-D ``elements`` (codes, C-contiguous) with their
    ``scales`` (codes, one per block of each row), cast to the float type
    ``output``: an array of its storage dtype."""
    out = np.empty(elements.shape, output.storage)
    element_decode, unit, output_conversion = dequantizing(fmt, output)
    codes = elements.view(kernel_dtype(element_decode.source))
    args = (codes, scales, out.view(kernel_dtype(output)), decoding(fmt.scale), element_decode, output_conversion)
    key = (array_key(codes), array_key(scales), fmt, output)  # out and the two last arguments: fixed types
    split_run(DEQUANTIZE, elements.size, *args, np.int64(block_size), unit * float(tensor_scale), key=key)
    return out
