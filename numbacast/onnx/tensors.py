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

import math
import os
import stat

import numpy as np

from ..engine.checks import refuse_masked
from ..formats.registry import resolve
from ..packing import PACKED_TYPES, pack, pack_with, packed_data, unpack, unpack_with
from . import operators, versions


def tensor_type_name(tensor):
    """The name of the data type of a TensorProto."""
    return versions.name_of_id(tensor.data_type)


def _int32_data_range(name):
    """(low, high): the values an ``int32_data`` entry of a tensor of the type
    called ``name`` may hold, or None when that type is not kept there or any
    int32 fits.  4- and 2-bit types hold one packed byte an entry, FLOAT6 one
    6-bit code, the other floats their storage code, integers their value."""
    if name in ("STRING", "INT32") or name not in versions.TYPE_IDS:
        return None
    try:
        t = resolve(name)
    except (TypeError, ValueError):
        return None
    if t.bits < 8:
        return (0, 63) if t.bits == 6 else (0, 255)
    if t.storage.itemsize >= 4:
        return None
    if t.is_bool:
        return 0, 1
    if t.is_float:
        return 0, (1 << (8 * t.storage.itemsize)) - 1
    if t.format.signed:
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def check_tensor(tensor):
    """TypeError unless ``tensor`` is a TensorProto; ValueError for negative
    dims, data kept in an external file (see :func:`load_external_data`),
    values held both in ``raw_data`` and in a typed field, and
    ``int32_data`` entries that do not fit the type."""
    if not isinstance(tensor, onnx.TensorProto):
        hint = "; parse serialized bytes with onnx.TensorProto.FromString(data)" if isinstance(tensor, bytes) else ""
        raise TypeError(f"expected an onnx.TensorProto, not {type(tensor).__name__}{hint}")
    label = f"tensor {tensor.name!r}" if tensor.name else "the tensor"
    dims = list(tensor.dims)
    if any(d < 0 for d in dims):
        raise ValueError(f"{label} has dims {dims}: a dimension cannot be negative")
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        raise ValueError(
            f"{label} keeps its data in an external file ({_external_location(tensor)!r}); numbacast does not "
            "open files named inside a tensor: load the data first (numbacast.onnx.tensors.load_external_data, "
            "or onnx.external_data_helper.load_external_data_for_tensor)"
        )
    typed = _typed_fields_in_use(tensor)
    if tensor.HasField("raw_data") and typed:
        raise ValueError(
            f"{label} holds its values twice, in raw_data and in {typed[0]}: a tensor keeps them in one field "
            "(onnx.checker refuses it too)"
        )
    bounds = _int32_data_range(tensor_type_name(tensor))
    if bounds is not None and not tensor.HasField("raw_data") and len(tensor.int32_data):
        values = np.asarray(tensor.int32_data, np.int64)
        bad = np.flatnonzero((values < bounds[0]) | (values > bounds[1]))
        if bad.size:
            raise ValueError(
                f"{label} of type {tensor_type_name(tensor)} has int32_data[{bad[0]}] = {values[bad[0]]}, "
                f"outside {bounds[0]}..{bounds[1]}"
            )
    return tensor


def _typed_fields_in_use(tensor):
    """The names of the typed value fields (``float_data``, ``int32_data`` ...) that hold entries."""
    fields = ("float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")
    return [name for name in fields if len(getattr(tensor, name))]


def _check_count(tensor, have, need, what):
    if have != need:
        label = f"tensor {tensor.name!r}" if tensor.name else "the tensor"
        raise ValueError(
            f"{label} of type {tensor_type_name(tensor)} and dims {list(tensor.dims)} needs {need} {what}, not {have}"
        )


def _external_location(tensor):
    return next((entry.value for entry in tensor.external_data if entry.key == "location"), "")


def load_external_data(tensor, folder):
    """Read the external data of ``tensor`` from the file it names in
    ``folder`` into its ``raw_data`` (in place; the tensor is returned).

    The file must be named by a bare file name (no folder part, no ``..``, not
    absolute), be a regular file in ``folder`` (not a link), and hold the
    ``offset`` and ``length`` given; anything else is a ValueError."""
    if not isinstance(tensor, onnx.TensorProto):
        raise TypeError(f"expected an onnx.TensorProto, not {type(tensor).__name__}")
    if tensor.data_location != onnx.TensorProto.EXTERNAL:
        return tensor
    label = f"tensor {tensor.name!r}" if tensor.name else "the tensor"
    info = {}
    for entry in tensor.external_data:
        if entry.key not in ("location", "offset", "length", "checksum") or entry.key in info:
            raise ValueError(f"{label} has an external_data entry numbacast does not read: {entry.key!r}")
        info[entry.key] = entry.value
    location = info.get("location", "")
    if (
        not location
        or location in (".", "..")
        or os.path.basename(location) != location
        or "/" in location
        or "\\" in location
        or os.path.isabs(location)
        or "\0" in location
    ):
        raise ValueError(
            f"{label} names its external data file {location!r}: numbacast reads only a file named by a bare "
            "file name, in the folder of the tensor's own file"
        )
    try:
        offset, length = int(info.get("offset", 0)), info.get("length")
        length = None if length is None else int(length)
    except ValueError:
        raise ValueError(f"{label} has an external data offset or length that is not an integer") from None
    if offset < 0 or (length is not None and length < 0):
        raise ValueError(f"{label} has a negative external data offset or length")
    path = os.path.join(folder, location)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    except OSError as error:
        raise ValueError(f"{label}: cannot open its external data file {path} ({error.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{label}: its external data file {path} is not a regular file")
        end = st.st_size if length is None else offset + length
        if offset > st.st_size or end > st.st_size:
            raise ValueError(
                f"{label}: its external data ({offset} + {end - offset} bytes) runs past the end of {path} "
                f"({st.st_size} bytes)"
            )
        f.seek(offset)
        data = f.read(end - offset)
    tensor.raw_data = data
    tensor.data_location = onnx.TensorProto.DEFAULT
    del tensor.external_data[:]
    return tensor


def _packed_payload(tensor, t):
    """The packed bytes of a TensorProto of the packed type ``t``, or None when
    its data is held otherwise (FLOAT6 in ``int32_data``, one element an entry).
    The byte count is checked by the caller (:func:`numbacast.packing.packed_data`)."""
    if tensor.HasField("raw_data"):
        return np.frombuffer(tensor.raw_data, np.uint8)
    if t.bits == 6:
        return None
    return np.asarray(tensor.int32_data, np.int64).astype(np.uint8)  # one packed byte an entry, checked in range


def _packed_type(name):
    """The :class:`OnnxType` of the type called ``name`` if ONNX stores it packed, else None."""
    if name == "STRING" or resolve(name) not in PACKED_TYPES:
        return None
    return resolve(name)


def tensor_to_array(tensor: Any) -> np.ndarray:
    """The values of a TensorProto as an array (sub-byte types one element a byte).

    Checked first (:func:`check_tensor`): TypeError for anything but a
    TensorProto, ValueError for negative dims, external data, values that do
    not fit the type or a number of values that does not match the dims."""
    check_tensor(tensor)
    name = tensor_type_name(tensor)
    t = _packed_type(name)
    payload = None if t is None else _packed_payload(tensor, t)
    if payload is not None:
        return unpack(payload, t, tuple(tensor.dims))
    count = math.prod(tensor.dims)
    if name != "STRING" and tensor.HasField("raw_data"):
        itemsize = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
        _check_count(tensor, len(tensor.raw_data), count * itemsize, "bytes of raw_data")
    elif not name.startswith("COMPLEX"):
        field = onnx.helper.tensor_dtype_to_field(tensor.data_type)
        _check_count(tensor, len(getattr(tensor, field)), count, f"entries of {field}")
    return numpy_helper.to_array(tensor)


def _packed_tensor(data, t, shape, name):
    tensor = onnx.TensorProto(name=name, data_type=t.id, dims=shape)
    tensor.raw_data = data.tobytes()
    return tensor


def array_to_tensor(array: Any, name: str = "") -> Any:
    """A TensorProto holding ``array``, packed where its type is packed."""
    refuse_masked(array, "numbacast.onnx.array_to_tensor")
    array = np.asarray(array)
    if not array.dtype.isnative:  # ONNX stores little-endian values; from either byte order
        array = array.astype(array.dtype.newbyteorder("="))
    name_of_type = operators.type_name(array.dtype)
    if name_of_type not in versions.TYPE_IDS:
        raise ValueError(f"{name_of_type} is not an ONNX type: a TensorProto cannot hold it")
    t = _packed_type(name_of_type)
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
    check_tensor(tensor)
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
