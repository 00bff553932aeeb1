"""ONNX TensorProtos: read, write and cast them, sub-byte types packed.

Needs the onnx package (``pip install "numbacast[onnx]"``).

:func:`cast_tensor` casts a TensorProto to a TensorProto, reading and writing
the packed wire layout of the sub-byte types directly;
:func:`tensor_to_array` and :func:`array_to_tensor` convert between
TensorProtos and arrays.
"""

from __future__ import annotations

from typing import Any

try:
    import onnx
    from onnx import numpy_helper
except ImportError as error:
    raise ImportError('numbacast.onnx.cast_tensor needs the onnx package: pip install "numbacast[onnx]"') from error

import numpy as np

from ..formats.registry import resolve
from ..packing import PACKED_TYPES, pack, pack_with, packed_data, unpack, unpack_with
from . import operators, versions


def tensor_type_name(tensor):
    """The name of the data type of a TensorProto."""
    return versions.name_of_id(tensor.data_type)


def _packed_payload(tensor, t):
    """The packed bytes of a TensorProto of the packed type ``t``, or None when
    its data is held otherwise (external data; FLOAT6 in ``int32_data``, one
    element an entry)."""
    if tensor.HasField("raw_data"):
        return np.frombuffer(tensor.raw_data, np.uint8)
    if tensor.data_location == onnx.TensorProto.EXTERNAL or t.bits == 6:
        return None
    return np.asarray(tensor.int32_data, np.int64).astype(np.uint8)  # one packed byte an entry


def _packed_type(name):
    """The :class:`OnnxType` of the type called ``name`` if ONNX stores it packed, else None."""
    if name == "STRING" or resolve(name) not in PACKED_TYPES:
        return None
    return resolve(name)


def tensor_to_array(tensor: Any) -> np.ndarray:
    """The values of a TensorProto as an array (sub-byte types one element a byte)."""
    t = _packed_type(tensor_type_name(tensor))
    payload = None if t is None else _packed_payload(tensor, t)
    if payload is None:
        return numpy_helper.to_array(tensor)
    return unpack(payload, t, tuple(tensor.dims))


def _packed_tensor(data, t, shape, name):
    tensor = onnx.TensorProto(name=name, data_type=t.id, dims=shape)
    tensor.raw_data = data.tobytes()
    return tensor


def array_to_tensor(array: Any, name: str = "") -> Any:
    """A TensorProto holding ``array``, packed where its type is packed."""
    array = np.asarray(array)
    t = _packed_type(operators.type_name(array.dtype))
    if t is None:
        return numpy_helper.from_array(array, name or None)
    return _packed_tensor(pack(array), t, array.shape, name)


def cast_tensor(
    tensor: Any,
    to: int | str,
    *,
    opset: int = versions.LATEST_OPSET,
    saturate: int | bool | None = None,
    round_mode: str | None = None,
) -> Any:
    """Cast a TensorProto as the ONNX Cast operator in force at ``opset`` does.

    ``tensor`` may hold its values in ``raw_data`` or in the typed fields
    (``float_data``, ``int32_data``, ...).  ``to``, ``opset``, ``saturate``
    and ``round_mode`` are as in :func:`cast`.  Returns a TensorProto of the
    target type, with the name and dims of ``tensor``, its values in
    ``raw_data`` (``string_data`` for STRING), packed for the sub-byte types.
    Packed data is read and written by the kernels that cast, in one pass.
    """
    spec = versions.in_force("Cast", opset)
    job = operators.caster(spec, tensor_type_name(tensor), spec.target(to), saturate, round_mode)
    conversion = job.conversion
    shape = tuple(tensor.dims)
    if conversion is not None and conversion.source in PACKED_TYPES and conversion.target not in PACKED_TYPES:
        payload = _packed_payload(tensor, conversion.source)
        if payload is not None:
            codes, shape = packed_data(payload, conversion.source, shape)
            return array_to_tensor(unpack_with(conversion, codes, shape), tensor.name)
    array = tensor_to_array(tensor)
    if conversion is not None and conversion.target in PACKED_TYPES:
        return _packed_tensor(pack_with(conversion, array), conversion.target, shape, tensor.name)
    return array_to_tensor(job(array), tensor.name)
