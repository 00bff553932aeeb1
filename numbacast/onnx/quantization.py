"""The ONNX ``QuantizeLinear`` and ``DequantizeLinear`` operators, version by version (10 to 28).

:func:`quantize_linear` computes ``y = saturate(round(x / y_scale) + y_zero_point)``
and :func:`dequantize_linear` ``y = (x - x_zero_point) * x_scale``, with the
scale (and zero point) per tensor, per axis or per block (``block_size``,
from version 21).  The rules (docs/rules.md#rule-mx-onnx-quantize-linear):

* the division ``x / y_scale`` is done in the type of ``precision`` (version
  23 on), else in the type of ``y_scale`` (FLOAT for a FLOAT8E8M0 or INT32
  scale), correctly rounded;
* integer outputs: the quotient rounded to the nearest integer, ties to
  even, plus the zero point, clamped to the output type's range; a NaN
  quotient gives the zero point;
* float outputs (float8, FLOAT4E2M1): the quotient plus the zero point (when
  there is one: -0 plus a zero point of 0 is +0) cast by numbacast's rules with
  ``saturate`` (docs/rules.md#rule-float8-saturate);
* dequantisation: ``(x - x_zero_point) * x_scale`` computed exactly, rounded
  once to the output type (``output_dtype`` from version 23, else the type of
  ``x_scale``; with a FLOAT8E8M0 scale ``output_dtype`` is required).

Each version accepts the types and attributes its operator text lists
(:data:`QUANTIZE_TYPES`, :data:`DEQUANTIZE_TYPES`, :data:`ATTRIBUTES_SINCE`);
anything else is a ValueError naming the version.  This module does not need onnx.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..api import cast as numbacast_cast
from ..engine.checks import check_saturate, refuse_masked
from ..formats.blocks import scales_shape
from ..formats.registry import resolve
from . import versions
from .operators import type_name

_FLOAT8 = ("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ")
_X19 = ("FLOAT", "FLOAT16", "BFLOAT16", "INT32")
_OUT21 = (*_FLOAT8, "INT8", "UINT8", "INT16", "UINT16", "INT4", "UINT4")

#: For each QuantizeLinear version: (types of x, types of y_scale, output types).
QUANTIZE_TYPES = {
    10: (("FLOAT", "INT32"), ("FLOAT",), ("INT8", "UINT8")),
    13: (("FLOAT", "INT32"), ("FLOAT",), ("INT8", "UINT8")),
    19: (_X19, _X19, (*_FLOAT8, "INT8", "UINT8")),
    21: (_X19, _X19, _OUT21),
    23: (_X19, _X19, (*_OUT21, "FLOAT4E2M1")),
    24: (_X19, (*_X19, "FLOAT8E8M0"), (*_OUT21, "FLOAT4E2M1")),
    25: (_X19, (*_X19, "FLOAT8E8M0"), (*_OUT21, "FLOAT4E2M1", "INT2", "UINT2")),
    28: (_X19, (*_X19, "FLOAT8E8M0"), (*_OUT21, "FLOAT4E2M1", "INT2", "UINT2", "FLOAT6E2M3", "FLOAT6E3M2")),
}

_SCALES = ("FLOAT", "FLOAT16", "BFLOAT16")
_IN21 = (*_FLOAT8, "INT8", "UINT8", "INT16", "UINT16", "INT32", "INT4", "UINT4")

#: For each DequantizeLinear version: (types of x, types of x_scale, output types).
DEQUANTIZE_TYPES = {
    10: (("INT8", "UINT8", "INT32"), ("FLOAT",), ("FLOAT",)),
    13: (("INT8", "UINT8", "INT32"), ("FLOAT",), ("FLOAT",)),
    19: ((*_FLOAT8, "INT8", "UINT8", "INT32"), _SCALES, _SCALES),
    21: (_IN21, _SCALES, _SCALES),
    23: ((*_IN21, "FLOAT4E2M1"), _SCALES, _SCALES),
    24: ((*_IN21, "FLOAT4E2M1"), (*_SCALES, "FLOAT8E8M0"), _SCALES),
    25: ((*_IN21, "FLOAT4E2M1", "INT2", "UINT2"), (*_SCALES, "FLOAT8E8M0"), _SCALES),
    28: ((*_IN21, "FLOAT4E2M1", "INT2", "UINT2", "FLOAT6E2M3", "FLOAT6E3M2"), (*_SCALES, "FLOAT8E8M0"), _SCALES),
}

#: The version that brought each attribute, per operator.
ATTRIBUTES_SINCE = {
    "QuantizeLinear": {"axis": 13, "saturate": 19, "block_size": 21, "output_dtype": 21, "precision": 23},
    "DequantizeLinear": {"axis": 13, "block_size": 21, "output_dtype": 23},
}

#: The integer outputs of QuantizeLinear and their ranges.
INTEGER_RANGES = {
    name: (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    for name, bits, signed in (
        ("INT8", 8, True),
        ("UINT8", 8, False),
        ("INT16", 16, True),
        ("UINT16", 16, False),
        ("INT4", 4, True),
        ("UINT4", 4, False),
        ("INT2", 2, True),
        ("UINT2", 2, False),
    )
}

#: The types the division of QuantizeLinear may be done in (``precision``).
PRECISIONS = ("FLOAT", "FLOAT16", "BFLOAT16", "DOUBLE")

#: The QuantizeLinear versions whose y_scale has the type of x (one type constraint for both).
SAME_TYPE_SCALE = (19, 21)


def _check_attributes(spec, given):
    """ValueError for an attribute (not None) that the version ``spec`` lacks."""
    since = ATTRIBUTES_SINCE[spec.op]
    for name, value in given.items():
        if value is not None and spec.version < since[name]:
            raise ValueError(
                f"{spec} (in force at opset {spec.opset}) has no {name} attribute; it came with {spec.op}-{since[name]}"
            )


def _check_type(spec, role, name, accepted):
    if name not in accepted:
        raise ValueError(
            f"{spec} (in force at opset {spec.opset}) does not take {name} as its {role}; "
            f"accepted: {', '.join(accepted)}"
        )


def _axis(axis, ndim):
    """``axis`` (default 1) in 0 .. ndim - 1, or the original value when it
    is out of range: per-tensor quantisation does not use it."""
    axis = 1 if axis is None else axis
    if not versions.is_integer(axis):
        raise TypeError(f"axis must be an integer, not {axis!r}")
    return int(axis) % ndim if -ndim <= int(axis) < ndim else int(axis)


def expand(value, shape, axis, block_size, spec, role):
    """``value`` (a scale or zero point) broadcast to ``shape``: per tensor (a
    scalar or one element), per axis (1-D, the length of ``axis``) or per
    block (``block_size`` > 0: the rank of the input, ``axis`` cut to
    ``ceil(n / block_size)``).  ValueError for any other shape."""
    block_size = 0 if block_size is None else block_size
    if not versions.is_integer(block_size) or not 0 <= block_size < 2**63:
        raise ValueError(f"block_size must be a non-negative integer below 2**63 (an int64), not {block_size!r}")
    if block_size == 0:
        if value.size == 1 and value.ndim <= 1:
            return value.reshape(())
        per_axis = spec.version >= ATTRIBUTES_SINCE[spec.op]["axis"] and 0 <= axis < len(shape)
        if value.ndim == 1 and per_axis and value.size == shape[axis]:
            dims = [1] * len(shape)
            dims[axis] = value.size
            return value.reshape(dims)
        raise ValueError(
            f"{role} of shape {value.shape} fits neither per-tensor (one element) nor per-axis quantisation "
            f"(1-D, the length of axis {axis}) of an input of shape {shape}"
        )
    if not 0 <= axis < len(shape):
        raise ValueError(f"axis {axis} is out of range for an input of {len(shape)} dimensions")
    expected = scales_shape(shape, axis, block_size)
    if value.shape != expected:
        raise ValueError(
            f"blocked quantisation of an input of shape {shape} along axis {axis} in blocks of {block_size} "
            f"needs {role} of shape {expected}, not {value.shape}"
        )
    # a block longer than the axis is the whole axis: repeated no more than its length
    return np.repeat(value, min(block_size, shape[axis]), axis=axis).take(range(shape[axis]), axis=axis)


def _array(x, what, role) -> np.ndarray:
    """``x`` as an array; TypeError when it is not numeric (None, text, objects)."""
    refuse_masked(x, what)
    array = np.asarray(x)
    if array.dtype.kind in "OUS":
        raise TypeError(f"{what}'s {role} must be a numeric array, not {x!r:.60}")
    return array


def _type_attribute(spec, name, value, accepted):
    """The type name of the attribute ``name`` (a ``TensorProto.DataType``
    id), one of ``accepted``."""
    if not versions.is_integer(value):
        raise TypeError(
            f"{spec}'s {name} is a TensorProto.DataType id such as 1 (FLOAT), not {value!r}; "
            f"accepted: {', '.join(f'{versions.TYPE_IDS[n]} ({n})' for n in accepted)}"
        )
    name_of_type = versions.name_of_id(value)
    _check_type(spec, name, name_of_type, accepted)
    return name_of_type


def _check_same_shape(spec, zero, scale, role):
    """ValueError when a zero point's shape is not its scale's (one element each passes)."""
    if zero.shape != scale.shape and not (zero.size == 1 and scale.size == 1):
        raise ValueError(f"{spec}: {role} must have the shape of the scale, {scale.shape}, not {zero.shape}")


def _quotient(x, scale, real):
    """``x / scale`` (both broadcast) as float64 values: the exact quotient
    rounded once to the type ``real`` (ties to even, overflowing to
    infinity).  In float64 the quotient of two float32 or int32 values is
    at least 2**-49 of itself away from any midpoint of a 24-bit type
    unless it is one: rounding it to FLOAT, FLOAT16 or BFLOAT16 is rounding
    the exact quotient."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        quotient = x.astype(np.float64) / scale.astype(np.float64)
    if real == "DOUBLE":
        return quotient
    return numbacast_cast(quotient, real).astype(np.float64)


def quantize_linear(
    x: npt.ArrayLike,
    y_scale: npt.ArrayLike,
    y_zero_point: npt.ArrayLike | None = None,
    *,
    opset: int = versions.LATEST_OPSET,
    axis: int | None = None,
    saturate: int | None = None,
    block_size: int | None = None,
    output_dtype: int | None = None,
    precision: int | None = None,
) -> np.ndarray:
    """``QuantizeLinear`` as the version in force at ``opset`` (10 to 28)
    computes it; the attributes as ONNX names them (None: absent, the
    default).  Returns an array of the output type's storage (ml_dtypes for
    the float8, float4 and 4- and 2-bit integer types)."""
    spec = versions.in_force("QuantizeLinear", opset)
    _check_attributes(
        spec, dict(axis=axis, saturate=saturate, block_size=block_size, output_dtype=output_dtype, precision=precision)
    )
    saturate = True if saturate is None else check_saturate(saturate)
    x, scale = _array(x, "QuantizeLinear", "input x"), _array(y_scale, "QuantizeLinear", "y_scale")
    x_types, scale_types, out_types = QUANTIZE_TYPES[spec.version]
    x_type, scale_type = type_name(x.dtype), type_name(scale.dtype)
    _check_type(spec, "input x", x_type, x_types)
    _check_type(spec, "y_scale", scale_type, scale_types)
    if spec.version in SAME_TYPE_SCALE and scale_type != x_type:
        raise ValueError(
            f"{spec} (in force at opset {spec.opset}) needs y_scale of the type of x, {x_type}, not {scale_type}"
        )
    out = "UINT8"
    if output_dtype:
        out = _type_attribute(spec, "output_dtype", output_dtype, out_types)
    if y_zero_point is not None:
        zero = _array(y_zero_point, "QuantizeLinear", "y_zero_point")
        zero_type = type_name(zero.dtype)
        if output_dtype and zero_type != out:
            raise ValueError(f"output_dtype {out} differs from the type of y_zero_point, {zero_type}")
        _check_same_shape(spec, zero, scale, "y_zero_point")
        out = zero_type
    _check_type(spec, "output type", out, out_types)
    axis = _axis(axis, x.ndim)
    scale = expand(scale, x.shape, axis, block_size, spec, "y_scale")
    if precision:
        real = _type_attribute(spec, "precision", precision, PRECISIONS)
    else:
        real = scale_type if scale_type in PRECISIONS else "FLOAT"
    quotient = _quotient(x, scale, real)
    zero_point = 0.0
    if y_zero_point is not None:
        zero_point = expand(zero, x.shape, axis, block_size, spec, "y_zero_point").astype(np.float64)
    target = resolve(out)
    if out in INTEGER_RANGES:
        low, high = INTEGER_RANGES[out]
        rounded = np.where(np.isnan(quotient), 0.0, np.rint(quotient)) + zero_point
        return np.clip(rounded, low, high).astype(np.int64).astype(target.storage)
    if y_zero_point is not None:  # -0 + 0 is +0, as the formula says
        quotient = quotient + zero_point
    return numbacast_cast(quotient, target, saturate=saturate)


def dequantize_linear(
    x: npt.ArrayLike,
    x_scale: npt.ArrayLike,
    x_zero_point: npt.ArrayLike | None = None,
    *,
    opset: int = versions.LATEST_OPSET,
    axis: int | None = None,
    block_size: int | None = None,
    output_dtype: int | None = None,
) -> np.ndarray:
    """``DequantizeLinear`` as the version in force at ``opset`` (10 to 28)
    computes it: ``(x - x_zero_point) * x_scale`` exactly, rounded once to
    the output type (``output_dtype``, else the type of ``x_scale``)."""
    spec = versions.in_force("DequantizeLinear", opset)
    _check_attributes(spec, dict(axis=axis, block_size=block_size, output_dtype=output_dtype))
    x, scale = _array(x, "DequantizeLinear", "input x"), _array(x_scale, "DequantizeLinear", "x_scale")
    x_types, scale_types, out_types = DEQUANTIZE_TYPES[spec.version]
    x_type, scale_type = type_name(x.dtype), type_name(scale.dtype)
    _check_type(spec, "input x", x_type, x_types)
    _check_type(spec, "x_scale", scale_type, scale_types)
    if output_dtype:
        out = _type_attribute(spec, "output_dtype", output_dtype, out_types)
    elif scale_type == "FLOAT8E8M0":
        raise ValueError(f"{spec}: a FLOAT8E8M0 x_scale needs output_dtype (accepted: {', '.join(out_types)})")
    else:
        out = scale_type
    _check_type(spec, "output type", out, out_types)
    axis = _axis(axis, x.ndim)
    values = x.astype(np.float64)
    if x_zero_point is not None:
        zero = _array(x_zero_point, "DequantizeLinear", "x_zero_point")
        if type_name(zero.dtype) != x_type:
            raise ValueError(f"x_zero_point is of type {type_name(zero.dtype)}; x is of type {x_type}")
        _check_same_shape(spec, zero, scale, "x_zero_point")
        if x_type == "INT32" and np.any(zero != 0):
            raise ValueError(f"{spec}: an INT32 input has no zero point (it must be 0), not {zero!r:.60}")
        values = values - expand(zero, x.shape, axis, block_size, spec, "x_zero_point").astype(np.float64)
    product = values * expand(scale, x.shape, axis, block_size, spec, "x_scale").astype(np.float64)
    return numbacast_cast(product, out)
