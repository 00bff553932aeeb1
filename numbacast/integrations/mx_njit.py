"""``numbacast.mx.quantize`` and ``numbacast.mx.dequantize`` inside ``@njit`` code.

A user's ``@njit`` function may call ``numbacast.mx.quantize(x, fmt)`` with
``x`` a float32 or float64 array, ``fmt`` a literal format name, blocks along
the last axis (``axis=-1``, the default, or the literal last axis), a
``block_size`` (an integer, or None for the format's), literal
``scale_rule``, ``rounding``, ``saturate`` and ``stochastic_bits``, and at run
time a ``seed`` (as ``numbacast.cast`` in ``@njit`` code takes it) and
NVFP4's ``tensor_scale``; it returns
the same :class:`numbacast.mx.Quantized` named tuple as the Python call, and
``numbacast.mx.dequantize(q)`` (``to`` a literal "float32" or "float64")
takes it back.  Both run the kernels of the Python calls and give the same
bits (docs/rules.md#rule-mx-scale-rules).  The options are checked when the
function compiles, by the checks of the Python call and with their messages.

The block kernels (:mod:`numbacast.engine.blocks`) are imported by the first
``@njit`` function that quantises or dequantises, not when these overloads
are registered (at Numba's first compilation of anything): a process that
only casts does not import them.
"""

import functools

import numpy as np
from numba import types
from numba.extending import overload

from ..engine.cache import OVERLOAD_OPTIONS, helper_jitable
from ..engine.checks import check_rounding, check_saturate
from ..engine.conversion import kernel_dtype
from ..engine.scratch import new_array
from ..formats.blocks import BLOCK_FORMATS, block_format
from ..formats.registry import DOUBLE, FLOAT, INT8
from ..mx import (
    BLOCK_SIZE_RANGE,
    MX_TENSOR_SCALE,
    SCALES_MISFIT,
    TENSOR_SCALE_RANGE,
    Quantized,
    dequantize,
    quantize,
)
from .flat_arrays import reshaped_view
from .njit_arguments import (
    WordedError,
    absent,
    key,
    literal,
    no_key,
    require_random_source,
    stochastic_options,
)
from .numba_types import as_dtype

#: The dtype the kernels read and write the scale codes as (a constant of the compiled code:
#: ``np.dtype(...)`` written in it is a function Numba compiles).
_SCALE_CODES = np.dtype(np.uint8)


def _last_axis(axis, ndim):
    value = literal(axis, "axis")
    if value not in (-1, ndim - 1):
        raise ValueError(
            f"numbacast.mx.quantize in @njit code cuts blocks along the last axis (-1 or {ndim - 1}), not {value!r}; "
            "move the axis last (np.ascontiguousarray(x.T)) or quantise in Python"
        )


@functools.cache
def _nvfp4_tensor_part():
    """NVFP4's default tensor scale: one pass for the tensor's largest magnitude
    (made once, on first use: it calls the block kernels)."""
    from ..engine.blocks import nvfp4_tensor_scale

    @helper_jitable
    def nvfp4_tensor_part(src, block_size, tensor_scale):
        return nvfp4_tensor_scale(src, block_size)

    return nvfp4_tensor_part


@helper_jitable
def _nvfp4_tensor_scale_check(tensor_scale, name):
    """NVFP4's tensor scale: positive and finite, as the Python call checks it
    (``name`` unused: the signature of :func:`_mx_tensor_scale_check`, which
    dequantisation calls alike)."""
    scale = np.float32(tensor_scale)
    if not (scale > 0 and scale < np.inf):
        raise WordedError(TENSOR_SCALE_RANGE, tensor_scale)


@helper_jitable
def _given_tensor_part(src, block_size, tensor_scale):
    """NVFP4 with the caller's tensor scale, checked."""
    _nvfp4_tensor_scale_check(tensor_scale, "nvfp4")
    return np.float32(tensor_scale)


@helper_jitable
def _no_tensor_part(src, block_size, tensor_scale):
    """An MX format's: no tensor scale (1.0)."""
    return np.float32(1.0)


def _tensor_part(block_format_, tensor_scale):
    """Which of the three above a quantisation to ``block_format_`` runs, by
    the type of ``tensor_scale`` (checked as the Python call checks it)."""
    if absent(tensor_scale):
        return _nvfp4_tensor_part() if block_format_.tensor_scale else _no_tensor_part
    if not block_format_.tensor_scale:
        raise ValueError(f"tensor_scale is for nvfp4, not for {block_format_.name}")
    if not isinstance(tensor_scale, (types.Float, types.Integer)):
        raise TypeError(TENSOR_SCALE_RANGE.format(tensor_scale))
    return _given_tensor_part


@overload(quantize, prefer_literal=True, jit_options=OVERLOAD_OPTIONS)
def _overload_quantize(
    x,
    fmt,
    axis=-1,
    block_size=None,
    scale_rule="floor",
    rounding="nearest_even",
    saturate=True,
    seed=None,
    stochastic_bits=None,
    tensor_scale=None,
):
    if not isinstance(x, types.Array) or not isinstance(fmt, types.Literal):
        return None
    from ..engine import blocks

    if x.dtype not in (types.float32, types.float64):
        raise TypeError(f"numbacast.mx.quantize in @njit code takes float32 or float64 arrays, not {x.dtype}")
    block_format_ = block_format(fmt.literal_value)
    _last_axis(axis, x.ndim)
    rule = literal(scale_rule, "scale_rule")
    if rule not in blocks.SCALE_RULES or (block_format_.tensor_scale and rule != blocks.FLOOR):
        raise ValueError(f"scale_rule must be one of {blocks.SCALE_RULES} (nvfp4: 'floor'), not {rule!r}")
    mode, _ = check_rounding(literal(rounding, "rounding"), None, block_format_.grid)
    bits = stochastic_options(mode, seed, stochastic_bits, None, x)
    saturating = check_saturate(literal(saturate, "saturate"))
    conversion = blocks.element_conversion(block_format_, x.dtype == types.float64, saturating, mode, bits)
    require_random_source(conversion, seed, None, wanted="seed= (an integer)")
    block = blocks.scale_conversion(block_format_)
    default_size = block_format_.block_size
    plan = blocks.quantize_plan(default_size if absent(block_size) else None)  # the size: known if default
    name = block_format_.name
    element_dtype, code_dtype = block_format_.element.storage, kernel_dtype(block_format_.element)
    scale_dtype = block_format_.scale.storage
    fixed, rule_number = blocks.format_parameters(block_format_), blocks.rule_number(rule)
    last = x.ndim - 1
    contiguous, source_dtype = x.layout == "C", as_dtype(x.dtype)  # (a branch Numba prunes when it compiles)
    tensor_part = _tensor_part(block_format_, tensor_scale)
    key_of = key if mode == "stochastic" else no_key
    with_run_time_parameters, quantize_any = blocks.with_run_time_parameters, blocks.quantize_any
    block_count = blocks.block_count

    def impl(
        x,
        fmt,
        axis=-1,
        block_size=None,
        scale_rule="floor",
        rounding="nearest_even",
        saturate=True,
        seed=None,
        stochastic_bits=None,
        tensor_scale=None,
    ):
        size = default_size if block_size is None else block_size
        if size <= 0:
            raise WordedError(BLOCK_SIZE_RANGE, size)
        n = x.shape[last]
        rows = x.size // n if n > 0 else 0
        src = reshaped_view(x if contiguous else np.ascontiguousarray(x), (rows, n), source_dtype)
        nb = block_count(n, size)
        scale = tensor_part(src, size, tensor_scale)
        elements = new_array(x.shape, element_dtype)
        scales = new_array(x.shape[:last] + (nb,), scale_dtype)
        params = with_run_time_parameters(fixed, size, scale, rule_number)
        quantize_any(
            src,
            reshaped_view(elements, (rows, n), code_dtype),
            reshaped_view(scales, (rows, nb), _SCALE_CODES),
            block,
            conversion,
            plan,
            params,
            key_of(seed),
        )
        return Quantized(elements, scales, last, size, name, scale)

    return impl


#: What a Quantized along another axis than the last meets in @njit code.
_LAST_AXIS_ONLY = "numbacast.mx.dequantize in @njit code takes blocks along the last axis ({}), not axis {}"


@helper_jitable
def _mx_tensor_scale_check(tensor_scale, name):
    """An MX format's tensor scale: 1.0, as the Python call checks it."""
    if tensor_scale != 1:
        raise WordedError(MX_TENSOR_SCALE, name, tensor_scale)


#: The format of each (element dtype, scale dtype) in @njit code.
_FORMATS = {(f.element.storage, f.scale.storage): f for f in BLOCK_FORMATS.values()}


@overload(dequantize, prefer_literal=True, jit_options=OVERLOAD_OPTIONS)
def _overload_dequantize(q, to="float32"):
    if not isinstance(q, types.NamedTuple) or q.instance_class is not Quantized:
        return None
    from ..engine import blocks

    elements, scales = q.types[0], q.types[1]
    fmt = _FORMATS.get((as_dtype(elements.dtype), as_dtype(scales.dtype)))
    if fmt is None:
        raise TypeError(f"no block format has elements of {elements.dtype} and scales of {scales.dtype}")
    to_name = literal(to, "to")
    target = {"float32": FLOAT, "float64": DOUBLE}.get(to_name)
    if target is None:
        raise ValueError(f"numbacast.mx.dequantize in @njit code gives 'float32' or 'float64', not {to_name!r}")
    element_decode, unit, output = blocks.dequantizing(fmt, target)
    scale_decode = blocks.decoding(fmt.scale)
    code_dtype = np.dtype(np.int8) if fmt.element is INT8 else np.dtype(np.uint8)
    out_dtype = target.storage
    last = elements.ndim - 1
    elements_contiguous, scales_contiguous = elements.layout == "C", scales.layout == "C"  # (pruned branches)
    dequantize_any, block_count = blocks.dequantize_any, blocks.block_count
    if scales.ndim != elements.ndim:
        raise ValueError(f"scales of {scales.ndim} dimensions do not fit elements of {elements.ndim}")
    check_tensor_scale = _nvfp4_tensor_scale_check if fmt.tensor_scale else _mx_tensor_scale_check
    name = fmt.name

    def impl(q, to="float32"):
        if q.axis != last:
            raise WordedError(_LAST_AXIS_ONLY, last, q.axis)
        if q.block_size <= 0:
            raise WordedError(BLOCK_SIZE_RANGE, q.block_size)
        n = q.elements.shape[last]
        rows = q.elements.size // n if n > 0 else 0
        nb = q.scales.shape[last]
        expected = q.elements.shape[:last] + (block_count(n, q.block_size),)
        if q.scales.shape != expected:
            raise WordedError(SCALES_MISFIT, q.scales.shape, q.elements.shape, last, q.block_size, expected)
        check_tensor_scale(q.tensor_scale, name)
        out = new_array(q.elements.shape, out_dtype)
        dequantize_any(
            reshaped_view(
                q.elements if elements_contiguous else np.ascontiguousarray(q.elements), (rows, n), code_dtype
            ),
            reshaped_view(q.scales if scales_contiguous else np.ascontiguousarray(q.scales), (rows, nb), _SCALE_CODES),
            reshaped_view(out, (rows, n), out_dtype),
            scale_decode,
            element_decode,
            output,
            np.int64(q.block_size),
            unit * np.float64(q.tensor_scale),
        )
        return out

    return impl
