"""Block-scaled formats: OCP Microscaling (MX) and NVIDIA's NVFP4.

``numbacast.mx.quantize(x, fmt)`` cuts ``x`` along one axis into blocks
(32 elements, 16 for NVFP4), gives each block a scale from its largest
magnitude and rounds every element over its scale to the element type, in
one compiled pass per block (parallel over blocks); :func:`dequantize` goes
back.  The formats (:data:`FORMATS`): ``"mxfp8_e4m3"``, ``"mxfp8_e5m2"``,
``"mxfp6_e2m3"``, ``"mxfp6_e3m2"``, ``"mxfp4_e2m1"``, ``"mxint8"`` and
``"nvfp4"``.  The rules (scale rules, corner cases, the NVFP4 recipe) are in
docs/rules.md (``rule-mx-*``); the guide is docs/mx.md.

:func:`to_packed` and :func:`from_packed` give and take the wire layout
(elements packed as :func:`numbacast.pack` packs them, scales as bytes);
:func:`to_dequantize_linear` and :func:`from_dequantize_linear` the inputs
of the ONNX ``DequantizeLinear`` operator (opset 24 and later).
"""

from __future__ import annotations

import functools
import math
import secrets
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from .api import cast, runtime
from .formats.blocks import BLOCK_FORMATS, MXINT8_EXPONENT, block_format, scales_shape
from .formats.registry import BFLOAT16, DOUBLE, FLOAT, FLOAT16, resolve

__all__ = [
    "FORMATS",
    "Quantized",
    "quantize",
    "dequantize",
    "to_packed",
    "from_packed",
    "to_dequantize_linear",
    "from_dequantize_linear",
]

#: The names of the block formats.
FORMATS = tuple(BLOCK_FORMATS)

#: The messages of bad block sizes, tensor scales and scale shapes, worded
#: alike by the Python calls and in ``@njit`` code (``str.format`` templates).
BLOCK_SIZE_RANGE = "block_size must be a positive integer below 2**63, not {}"
TENSOR_SCALE_RANGE = "tensor_scale must be a positive finite float32, not {!r}"
MX_TENSOR_SCALE = "tensor_scale is for nvfp4, not for {}: its tensor scale is 1.0, not {!r}"
SCALES_MISFIT = "scales of shape {} do not fit elements of shape {} cut along axis {} into blocks of {}: expected {}"

#: The types :func:`dequantize` gives.
_DEQUANTIZED_TYPES = (FLOAT, DOUBLE, FLOAT16, BFLOAT16)


class Quantized(NamedTuple):
    """A tensor in a block format (a named tuple, so that ``@njit`` code
    passes it around too).

    ``elements`` has the shape of the quantised tensor (the ml_dtypes dtype
    of the element type, int8 codes worth ``code * 2**-6`` for MXINT8);
    ``scales`` has that shape with ``axis`` cut to ``ceil(n / block_size)``
    (float8_e8m0fnu for MX, float8_e4m3fn for NVFP4); ``format`` is the
    format's name and ``tensor_scale`` the float32 per-tensor scale of
    NVFP4 (1.0 for MX)."""

    elements: np.ndarray
    scales: np.ndarray
    axis: int
    block_size: int
    format: str
    tensor_scale: np.float32 = np.float32(1.0)


def _check_axis(axis, ndim):
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an integer, not {axis!r}")
    if ndim == 0:
        raise ValueError("a block format needs an array of at least one dimension, not a 0-d array")
    if not -ndim <= int(axis) < ndim:
        raise ValueError(
            f"axis {axis} is out of range for an array of {ndim} dimensions (accepted: {-ndim} to {ndim - 1})"
        )
    return int(axis) % ndim


def _check_block_size(block_size, fmt):
    if block_size is None:
        return fmt.block_size
    if isinstance(block_size, (bool, np.bool_)) or not isinstance(block_size, (int, np.integer)):
        raise TypeError(f"block_size must be a positive integer, not {block_size!r}")
    if not 0 < block_size < 2**63:  # the kernels' int64
        raise ValueError(BLOCK_SIZE_RANGE.format(block_size))
    return int(block_size)


def _check_scale_rule(scale_rule, fmt):
    rules = _runtime_blocks().SCALE_RULES
    if scale_rule not in rules:
        raise ValueError(f"scale_rule must be one of {rules}, not {scale_rule!r}")
    if fmt.tensor_scale and scale_rule != rules[0]:
        raise ValueError(
            f"{fmt.name} has one recipe for its FLOAT8E4M3FN block scales (docs/rules.md#rule-mx-nvfp4); "
            f"scale_rule={scale_rule!r} is for the MX formats"
        )
    return scale_rule


def _float_input(x):
    """``x`` as a float32 or float64 array (float16 and bfloat16 widened, exactly)."""
    array = np.asarray(x)
    if not array.dtype.isnative:  # either byte order, as numbacast.cast takes
        array = array.astype(array.dtype.newbyteorder("="))
    _check_float_dtype(array.dtype)
    return array if array.dtype in (np.float32, np.float64) else array.astype(np.float32)


def _check_float_dtype(dtype):
    if np.dtype(dtype).newbyteorder("=") not in (np.float32, np.float64, FLOAT16.storage, BFLOAT16.storage):
        raise TypeError(
            f"quantize() takes an array of float64, float32, float16 or bfloat16, not {dtype}; "
            "cast it first (numbacast.cast(x, 'float'))"
        )


@functools.cache
def _runtime_blocks() -> Any:
    """The kernels module, imported on first use (``import numbacast`` does not import Numba)."""
    runtime()
    from .engine import blocks

    return blocks


def _moved(array, axis):
    """``array`` with ``axis`` last, as a 2-D C-contiguous array (rows, n)
    (the last axis is not moved: ``np.moveaxis`` takes microseconds even then)."""
    moved = np.ascontiguousarray(array if axis == array.ndim - 1 else np.moveaxis(array, axis, -1))
    return moved.reshape(math.prod(moved.shape[:-1]), moved.shape[-1])


def _restored(flat, shape, axis):
    """The 2-D ``flat`` (axis last) back to ``shape`` with ``axis`` in place, C-contiguous."""
    moved_shape = shape[:axis] + shape[axis + 1 :] + (shape[axis],)
    if axis == len(shape) - 1:
        return flat.reshape(moved_shape)
    return np.ascontiguousarray(np.moveaxis(flat.reshape(moved_shape), -1, axis))


def quantize(
    x: npt.ArrayLike,
    fmt: str,
    axis: int = -1,
    block_size: int | None = None,
    scale_rule: str = "floor",
    rounding: str = "nearest_even",
    *,
    saturate: bool = True,
    seed: int | None = None,
    stochastic_bits: int | None = None,
    tensor_scale: float | None = None,
) -> Quantized:
    """Quantise ``x`` to the block format ``fmt`` along ``axis``.

    Parameters
    ----------
    x : array_like
        float64, float32, float16 or bfloat16, at least one dimension; not
        modified.  A Dask array gives a :class:`Quantized` of lazy Dask
        arrays, each chunk quantised by this function once cut at block
        boundaries (docs/dask-and-threads.md#block-formats).
    fmt : str
        One of :data:`FORMATS`.
    axis : int
        The axis cut into blocks (default the last).
    block_size : int, optional
        Elements per block (default 32, 16 for NVFP4); the last block of each
        line is shorter when the length is not a multiple
        (docs/rules.md#rule-mx-partial-block).
    scale_rule : {"floor", "ceil", "even", "rceil"}
        How a block's scale comes from its largest magnitude
        (docs/rules.md#rule-mx-scale-rules); MX formats only.
    rounding : str
        How elements round, one of :data:`numbacast.ROUNDINGS` (as in
        :func:`numbacast.cast`).
    saturate : bool
        Elements beyond the element type's largest value give +/-max (True,
        the default); False gives what a cast without saturation gives
        (infinity for E5M2, NaN for E4M3; the float6 and float4 types
        always saturate).
    seed, stochastic_bits : int, optional
        For ``rounding="stochastic"``, as in :func:`numbacast.cast`: element
        ``i`` of ``x`` with ``axis`` moved last, in C order, draws the
        random number ``i`` of the seed's stream.
    tensor_scale : float, optional
        NVFP4 only: the per-tensor scale (a positive finite float32); default
        ``amax(|x|) / (448 * 6)`` (docs/rules.md#rule-mx-nvfp4).

    Returns
    -------
    Quantized
    """
    block = block_format(fmt)
    run = runtime()
    lazy = run.checks.is_dask_array(x)
    array: Any = x if lazy else _float_input(x)
    if lazy:
        _check_float_dtype(array.dtype)
    axis = _check_axis(axis, array.ndim)
    block_size = _check_block_size(block_size, block)
    scale_rule = _check_scale_rule(scale_rule, block)
    rounding, _ = run.checks.check_rounding(rounding, None, block.grid)
    seed, stochastic_bits = run.checks.check_stochastic(rounding, seed, stochastic_bits, None)
    saturate = run.checks.check_saturate(saturate)
    if tensor_scale is not None and not block.tensor_scale:
        raise ValueError(f"tensor_scale is for nvfp4, not for {block.name}")
    scale = np.float32(1.0) if tensor_scale is None else _check_tensor_scale(tensor_scale)
    if lazy:
        given = None if tensor_scale is None else scale
        return _quantize_lazily(array, block, axis, block_size, scale_rule, rounding, saturate, given)
    kernels = _runtime_blocks()
    key = 0
    if rounding == "stochastic":
        key = run.seed_key(secrets.randbits(64) if seed is None else seed)
    src = _moved(array, axis)
    if block.tensor_scale and tensor_scale is None:  # one pass for the tensor's largest magnitude
        scale = kernels.scale_of_tensor_amax(kernels.tensor_amax_of(src, block_size))
    conversion = kernels.element_conversion(block, src.dtype == np.float64, saturate, rounding, stochastic_bits)
    codes, scale_codes = kernels.quantize_blocks(src, block, block_size, scale_rule, conversion, scale, key)
    elements = _restored(codes, array.shape, axis).view(block.element.storage)
    scales = _restored(scale_codes, scales_shape(array.shape, axis, block_size), axis).view(block.scale.storage)
    return Quantized(elements, scales, axis, block_size, block.name, scale)


def _quantize_lazily(x, block, axis, block_size, scale_rule, rounding, saturate, tensor_scale):
    """:func:`quantize` of the Dask array ``x`` (its arguments checked): a
    :class:`Quantized` of lazy Dask arrays, each chunk quantised by
    :func:`quantize` once cut at block boundaries along ``axis``.  NVFP4
    without ``tensor_scale`` takes its tensor scale from the largest
    magnitude of ``x``, computed now (one read of ``x``)."""
    run = runtime()
    if rounding == "stochastic":
        raise ValueError(
            "rounding='stochastic' takes a NumPy array, not a Dask array: each element's random number is "
            "numbered by its place in the whole array; compute the array first, or round a Dask array by "
            "one of " + ", ".join(r for r in run.checks.ROUNDINGS if r != "stochastic")
        )
    if block.tensor_scale and tensor_scale is None:  # the tensor's largest magnitude, now
        largest = functools.partial(_largest_magnitude, axis=axis, block_size=block_size)
        tensor_scale = _runtime_blocks().scale_of_tensor_amax(run.largest_lazily(x, largest))
    quantize_chunk = functools.partial(
        _quantize_chunk,
        fmt=block.name,
        axis=axis,
        block_size=block_size,
        scale_rule=scale_rule,
        rounding=rounding,
        saturate=saturate,
        tensor_scale=tensor_scale,
    )
    elements, scales = run.quantize_lazily(
        x, quantize_chunk, axis, block_size, block.element.storage, block.scale.storage
    )
    return Quantized(elements, scales, axis, block_size, block.name, np.float32(tensor_scale or 1.0))


def _quantize_chunk(chunk, **options):
    """``(elements, scales)`` of one chunk of a lazy quantisation."""
    q = quantize(chunk, **options)
    return q.elements, q.scales


def _largest_magnitude(chunk, axis, block_size):
    """The largest magnitude of one chunk of a lazy NVFP4 quantisation (NaN when one is NaN)."""
    return _runtime_blocks().tensor_amax_of(_moved(_float_input(chunk), axis), block_size)


#: Positive floats below this round to a finite float32: a hair below float32's largest plus half
#: its last step, from where they round to infinity.
_FLOAT32_ROUNDS_FINITE = float(np.finfo(np.float32).max) * (1 + 2.0**-25)


def _check_tensor_scale(given):
    if type(given) is np.float32:  # the type quantize gives
        value = given
    elif type(given) is float and 0 < given < _FLOAT32_ROUNDS_FINITE:  # (no overflow to silence)
        value = np.float32(given)
    else:
        if type(given) not in (float, int):
            kind = np.asarray(given).dtype.kind if np.ndim(given) == 0 and not isinstance(given, str) else None
            if kind not in ("f", "i", "u"):  # a real number, not a bool, a text or an array
                raise TypeError(TENSOR_SCALE_RANGE.format(given))
        with np.errstate(over="ignore"):  # beyond float32: inf, refused below
            value = np.float32(given)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(TENSOR_SCALE_RANGE.format(given))
    return value


def _check_quantized(q):
    """``(fmt, elements, scales, axis, block_size, tensor_scale, lazy)`` of
    ``q``, checked: its arrays as NumPy arrays, but a Dask array as it is
    (then ``lazy`` is True)."""
    if not isinstance(q, Quantized):
        raise TypeError(f"expected a numbacast.mx.Quantized (from numbacast.mx.quantize), not {type(q).__name__}")
    fmt = block_format(q.format)
    is_dask = runtime().checks.is_dask_array
    elements, scales = (a if is_dask(a) else np.asarray(a) for a in (q.elements, q.scales))
    lazy = is_dask(elements) or is_dask(scales)
    axis = _check_axis(q.axis, elements.ndim)
    block_size = _check_block_size(q.block_size, fmt)
    element_dtype = fmt.element.storage
    if elements.dtype != element_dtype or scales.dtype != fmt.scale.storage:
        raise TypeError(
            f"{fmt.name} holds elements of dtype {element_dtype} and scales of dtype {fmt.scale.storage}, "
            f"not {elements.dtype} and {scales.dtype}"
        )
    if lazy and (math.isnan(elements.shape[axis]) or math.isnan(scales.shape[axis])):
        raise ValueError(
            f"elements of shape {elements.shape} and scales of shape {scales.shape}: a Dask array cut into "
            f"blocks along axis {axis} needs its size there; call compute_chunk_sizes() first"
        )
    expected = scales_shape(elements.shape, axis, block_size)
    if not all(a == b or math.isnan(a) and math.isnan(b) for a, b in zip(scales.shape, expected, strict=True)):
        raise ValueError(SCALES_MISFIT.format(scales.shape, elements.shape, axis, block_size, expected))
    return fmt, elements, scales, axis, block_size, _checked_tensor_scale(q.tensor_scale, fmt), lazy


def _checked_tensor_scale(given, fmt):
    """The tensor scale of a quantisation to ``fmt``, checked as
    :func:`quantize` checks it (:func:`_check_tensor_scale`); an MX format's
    must be 1.0, as :func:`quantize` gives it."""
    value = _check_tensor_scale(given)
    if not fmt.tensor_scale and value != 1:
        raise ValueError(MX_TENSOR_SCALE.format(fmt.name, given))
    return value


def dequantize(q: Quantized, to: Any = "float32") -> np.ndarray:
    """The values of ``q``: each element times its block's scale (for NVFP4
    its float32 divisor, block scale times tensor scale rounded to float32),
    computed exactly, then rounded once to ``to``
    (``"float32"``, ``"float64"``, ``"float16"`` or ``"bfloat16"``, ties to
    even, overflowing to infinity).  A NaN scale gives NaN for its whole
    block (docs/rules.md#rule-mx-dequantize).  Lazy (a Dask array) where
    ``q`` holds Dask arrays."""
    fmt, elements, scales, axis, block_size, tensor_scale, lazy = _check_quantized(q)
    target = resolve(to)
    if target not in _DEQUANTIZED_TYPES:
        raise ValueError(f"dequantize() gives {', '.join(t.name for t in _DEQUANTIZED_TYPES)}, not {to!r}")
    if lazy:
        chunk = functools.partial(
            _dequantize_chunk, fmt=fmt.name, axis=axis, block_size=block_size, tensor_scale=tensor_scale, to=to
        )
        return runtime().dequantize_lazily(elements, scales, chunk, axis, block_size, target.storage)
    blocks = _runtime_blocks()
    codes = _moved(elements, axis)  # (seen as its codes by dequantize_blocks)
    scale_codes = _moved(scales.view(np.uint8), axis)
    values = blocks.dequantize_blocks(codes, scale_codes, fmt, block_size, target, tensor_scale)
    return _restored(values, elements.shape, axis)


def _dequantize_chunk(elements, scales, fmt, axis, block_size, tensor_scale, to):
    """The values of one chunk of a lazy dequantisation."""
    return dequantize(Quantized(elements, scales, axis, block_size, fmt, tensor_scale), to)


def to_packed(q: Quantized) -> tuple[np.ndarray, np.ndarray]:
    """``(elements, scales)``: the wire bytes of ``q``, each a flat uint8
    array in C order -- the elements packed as :func:`numbacast.pack` packs
    their type (two float4 per byte, four float6 per three bytes; the 8-bit
    types one per byte), the scales one byte each.  The tensor scale of
    NVFP4, the shape, axis and block size travel beside them
    (docs/rules.md#rule-mx-wire-layout)."""
    fmt, elements, scales, _, _, _, lazy = _check_quantized(q)
    if lazy:
        raise TypeError(
            "to_packed() gives the wire bytes of a whole tensor, and these elements or scales are Dask arrays: "
            "compute them first, e.g. q._replace(elements=q.elements.compute(), scales=q.scales.compute())"
        )
    if fmt.element_bits < 8:
        packed = runtime().pack(elements)
    else:
        packed = np.ascontiguousarray(elements).reshape(-1).view(np.uint8).copy()
    return packed, np.ascontiguousarray(scales).reshape(-1).view(np.uint8).copy()


def _bytes(data, count, what):
    """``data`` (bytes-like or a uint8 array) as ``count`` bytes, checked."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        codes = np.frombuffer(data, np.uint8)
    elif isinstance(data, np.ndarray) and data.dtype == np.uint8:
        codes = np.ascontiguousarray(data).reshape(-1)
    else:
        raise TypeError(f"packed {what} must be bytes or a uint8 array, not {type(data).__name__}")
    if codes.size != count:
        raise ValueError(f"packed {what} of this shape take {count} bytes, not {codes.size}")
    return codes.copy()


def from_packed(
    elements: Any,
    scales: Any,
    shape: int | tuple[int, ...],
    fmt: str,
    axis: int = -1,
    block_size: int | None = None,
    tensor_scale: float = 1.0,
) -> Quantized:
    """The :class:`Quantized` of the wire bytes of :func:`to_packed`: a
    tensor of ``shape`` in ``fmt`` cut along ``axis`` into blocks of
    ``block_size`` (default the format's), with the ``tensor_scale`` of NVFP4.
    ValueError when a byte count does not match the shape."""
    block = block_format(fmt)
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_)) and d >= 0 for d in dims):
        raise TypeError(f"shape must be a tuple of integers from 0 up, not {shape!r}")
    dims = tuple(int(d) for d in dims)
    axis = _check_axis(axis, len(dims))
    block_size = _check_block_size(block_size, block)
    scale = _checked_tensor_scale(tensor_scale, block)
    if block.element_bits < 8:
        from .packing import unpack

        values = unpack(elements, block.element, dims)
    else:
        values = _bytes(elements, math.prod(dims), "elements").view(block.element.storage).reshape(dims)
    scale_shape = scales_shape(dims, axis, block_size)
    scale_values = _bytes(scales, math.prod(scale_shape), "scales").view(block.scale.storage).reshape(scale_shape)
    return Quantized(values, scale_values, axis, block_size, block.name, scale)


def _onnx_scale_dtype(fmt):
    """The dtype of ``x_scale`` for ``fmt``: float32 for MXINT8 and NVFP4, else the scale's."""
    return np.dtype(np.float32) if fmt.integer_elements or fmt.tensor_scale else fmt.scale.storage


def to_dequantize_linear(q: Quantized) -> tuple[dict, dict]:
    """``(inputs, attributes)`` for the ONNX ``DequantizeLinear`` operator
    (opset 24 and later, blocked): ``inputs`` = ``{"x": elements, "x_scale":
    scales}``, ``attributes`` = ``{"axis": axis, "block_size": block_size}``,
    dequantising to :func:`dequantize`'s values.  The MX float formats'
    scales are FLOAT8E8M0; MXINT8's are float32 (``scale * 2**-6``, exact,
    not always an E8M0 value); NVFP4's are its float32 divisors (block scale
    times tensor scale, rounded to float32; docs/rules.md#rule-mx-onnx)."""
    fmt, elements, scales, axis, block_size, tensor_scale, _ = _check_quantized(q)
    if fmt.integer_elements:
        scales = (scales.astype(np.float64) * 2.0**MXINT8_EXPONENT).astype(np.float32)
    if fmt.tensor_scale:
        scales = (scales.astype(np.float64) * float(tensor_scale)).astype(np.float32)
    return {"x": elements, "x_scale": scales}, {"axis": axis, "block_size": block_size}


#: The block format of each (element dtype, x_scale dtype) pair of DequantizeLinear inputs.
_BY_DTYPES = {(f.element.storage, _onnx_scale_dtype(f)): f for f in BLOCK_FORMATS.values()}


def from_dequantize_linear(
    x: np.ndarray, x_scale: np.ndarray, axis: int = 1, block_size: int = 0, tensor_scale: float | None = None
) -> Quantized:
    """The :class:`Quantized` of blocked ``DequantizeLinear`` inputs as
    :func:`to_dequantize_linear` gives them, the format told by the dtypes of
    ``x`` and ``x_scale``; ``axis`` and ``block_size`` are the operator's
    attributes.  MXINT8's float32 scales must be powers of two times
    ``2**-6``; NVFP4's (FLOAT4E2M1 elements, float32 scales) need the
    ``tensor_scale`` and must be divisors of it.  ValueError otherwise."""
    x, x_scale = np.asarray(x), np.asarray(x_scale)
    fmt = _BY_DTYPES.get((x.dtype, x_scale.dtype))
    if fmt is None:
        accepted = ", ".join(f"{f.name} ({e}, {s})" for (e, s), f in _BY_DTYPES.items())
        raise ValueError(
            f"no block format has elements of {x.dtype} and scales of {x_scale.dtype}; accepted: {accepted}"
        )
    if fmt.tensor_scale and tensor_scale is None:
        raise ValueError("nvfp4 needs its tensor_scale: its x_scale are the blocks' divisors, scale times tensor scale")
    if not fmt.tensor_scale and tensor_scale is not None:
        raise ValueError(f"tensor_scale is given for nvfp4 only (its scales are divisors of it), not for {fmt.name}")
    wide = x_scale.astype(np.float64)
    ts = np.float32(1.0) if tensor_scale is None else _check_tensor_scale(tensor_scale)
    if fmt.integer_elements:
        codes = cast(wide * 2.0**-MXINT8_EXPONENT, "float8e8m0", round_mode="down")
        if not np.array_equal(codes.astype(np.float64) * 2.0**MXINT8_EXPONENT, wide, equal_nan=True):
            raise ValueError("mxint8 scales must be powers of two times 2**-6 within the E8M0 range")
        x_scale = codes
    if fmt.tensor_scale:
        codes = cast(wide / float(ts), "float8e4m3fn")
        if not np.array_equal((codes.astype(np.float64) * float(ts)).astype(np.float32), x_scale, equal_nan=True):
            raise ValueError(f"these scales are not NVFP4 block scales times the tensor scale {tensor_scale}")
        x_scale = codes
    q = Quantized(x, x_scale, axis, block_size, fmt.name, ts)
    _check_quantized(q)
    return q._replace(axis=_check_axis(axis, x.ndim))
