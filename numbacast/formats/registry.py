"""The ONNX types: ids, names, NumPy storage and number format.

``TYPES`` holds the 25 numeric types; ``STRING`` is text.

:func:`resolve` turns anything a user may call a type -- an ONNX id (``17``),
a name in any case (``"float8e4m3fn"``, ``"FLOAT"``, ``"double"``), a NumPy
dtype or scalar type, an ml_dtypes dtype -- into an :class:`OnnxType`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

import ml_dtypes
import numpy as np

from . import custom
from . import description as f


@dataclass(frozen=True, eq=False)
class OnnxType:
    """One ONNX ``TensorProto.DataType`` and how numbacast stores it.

    There is one instance per type (compared by identity)."""

    id: int
    name: str  # canonical lower-case ONNX name, e.g. "float8e4m3fn"
    storage: np.dtype  # NumPy dtype of an array of this type
    format: f.FloatFormat | f.IntFormat | f.BoolFormat | f.StringFormat
    aliases: tuple[str, ...] = ()

    @property
    def onnx_name(self) -> str:
        """The ``TensorProto.DataType`` enum name, e.g. ``FLOAT8E4M3FN``."""
        return self.name.upper()

    @property
    def is_float(self) -> bool:
        return isinstance(self.format, f.FloatFormat)

    @property
    def is_integer(self) -> bool:
        return isinstance(self.format, f.IntFormat)

    @property
    def is_bool(self) -> bool:
        return isinstance(self.format, f.BoolFormat)

    @property
    def is_string(self) -> bool:
        return isinstance(self.format, f.StringFormat)

    @property
    def bits(self) -> int:
        """Significant bits of one element (4 for INT4, 32 for FLOAT)."""
        if isinstance(self.format, f.StringFormat):
            raise AttributeError("STRING elements have no fixed number of bits")
        return self.format.bits

    def __reduce__(self):
        # Unpickled (by a Dask worker, say) as the one instance of its process.
        return resolve, (self.id,)

    def __repr__(self):
        return f"numbacast.{self.onnx_name}"


def _t(id, name, storage, fmt, *aliases):
    return OnnxType(id, name, np.dtype(storage), fmt, aliases)


FLOAT = _t(1, "float", np.float32, f.FLOAT32, "float32")
UINT8 = _t(2, "uint8", np.uint8, f.IntFormat(8, False))
INT8 = _t(3, "int8", np.int8, f.IntFormat(8, True))
UINT16 = _t(4, "uint16", np.uint16, f.IntFormat(16, False))
INT16 = _t(5, "int16", np.int16, f.IntFormat(16, True))
INT32 = _t(6, "int32", np.int32, f.IntFormat(32, True))
INT64 = _t(7, "int64", np.int64, f.IntFormat(64, True))
BOOL = _t(9, "bool", np.bool_, f.BoolFormat(), "bool_")
FLOAT16 = _t(10, "float16", np.float16, f.FLOAT16, "half")
DOUBLE = _t(11, "double", np.float64, f.FLOAT64, "float64")
UINT32 = _t(12, "uint32", np.uint32, f.IntFormat(32, False))
UINT64 = _t(13, "uint64", np.uint64, f.IntFormat(64, False))
BFLOAT16 = _t(16, "bfloat16", ml_dtypes.bfloat16, f.BFLOAT16)
FLOAT8E4M3FN = _t(17, "float8e4m3fn", ml_dtypes.float8_e4m3fn, f.FLOAT8E4M3FN, "float8_e4m3fn")
FLOAT8E4M3FNUZ = _t(18, "float8e4m3fnuz", ml_dtypes.float8_e4m3fnuz, f.FLOAT8E4M3FNUZ, "float8_e4m3fnuz")
FLOAT8E5M2 = _t(19, "float8e5m2", ml_dtypes.float8_e5m2, f.FLOAT8E5M2, "float8_e5m2")
FLOAT8E5M2FNUZ = _t(20, "float8e5m2fnuz", ml_dtypes.float8_e5m2fnuz, f.FLOAT8E5M2FNUZ, "float8_e5m2fnuz")
UINT4 = _t(21, "uint4", ml_dtypes.uint4, f.IntFormat(4, False))
INT4 = _t(22, "int4", ml_dtypes.int4, f.IntFormat(4, True))
FLOAT4E2M1 = _t(23, "float4e2m1", ml_dtypes.float4_e2m1fn, f.FLOAT4E2M1, "float4_e2m1fn")
FLOAT8E8M0 = _t(24, "float8e8m0", ml_dtypes.float8_e8m0fnu, f.FLOAT8E8M0, "float8_e8m0fnu")
UINT2 = _t(25, "uint2", ml_dtypes.uint2, f.IntFormat(2, False))
INT2 = _t(26, "int2", ml_dtypes.int2, f.IntFormat(2, True))
FLOAT6E2M3 = _t(27, "float6e2m3", ml_dtypes.float6_e2m3fn, f.FLOAT6E2M3, "float6_e2m3fn")
FLOAT6E3M2 = _t(28, "float6e3m2", ml_dtypes.float6_e3m2fn, f.FLOAT6E3M2, "float6_e3m2fn")

#: The 25 numeric ONNX types, in id order.
TYPES = (
    FLOAT,
    UINT8,
    INT8,
    UINT16,
    INT16,
    INT32,
    INT64,
    BOOL,
    FLOAT16,
    DOUBLE,
    UINT32,
    UINT64,
    BFLOAT16,
    FLOAT8E4M3FN,
    FLOAT8E4M3FNUZ,
    FLOAT8E5M2,
    FLOAT8E5M2FNUZ,
    UINT4,
    INT4,
    FLOAT4E2M1,
    FLOAT8E8M0,
    UINT2,
    INT2,
    FLOAT6E2M3,
    FLOAT6E3M2,
)

#: ONNX STRING: NumPy ``<U`` arrays (``S`` and object arrays of str are read too).
STRING = _t(8, "string", np.str_, f.StringFormat(), "str")

#: ONNX ids of types the Cast operator refuses.
REFUSED = {14: "COMPLEX64", 15: "COMPLEX128"}

BY_ID = {t.id: t for t in (*TYPES, STRING)}
BY_NAME = {alias: t for t in (*TYPES, STRING) for alias in (t.name, *t.aliases)}
BY_DTYPE = {t.storage: t for t in TYPES}


#: Anything :func:`resolve` accepts as a type: a name, an ONNX id, a dtype or
#: scalar type, or an :class:`OnnxType`.
TypeLike = Union[str, int, np.integer, np.dtype, type, "OnnxType", custom.FloatType, f.FloatFormat]

#: What :func:`resolve` returns: an ONNX type or a float type of another format.
AnyType = OnnxType | custom.FloatType

#: The float types that are not ONNX types but have a name and a dtype of their own (ml_dtypes').
CUSTOM_BY_NAME = {t.name: t for t in custom.NAMED}
CUSTOM_BY_DTYPE = {t.storage: t for t in custom.NAMED}


def accepted_names() -> str:
    """A sentence listing what :func:`resolve` accepts, for error messages."""
    names = ", ".join(t.name for t in (*TYPES, STRING))
    others = ", ".join(t.name for t in custom.NAMED)
    return (
        f"an ONNX type name ({names}), its ONNX id, or the NumPy/ml_dtypes dtype; "
        f"a float format ONNX lacks ({others}, p3109_k<K>p<P><s|u><e|f>, a numbacast.FloatFormat)"
    )


def resolve(spec: TypeLike) -> AnyType:
    """Return the :class:`OnnxType` named by ``spec`` -- or the
    :class:`~numbacast.formats.custom.FloatType` it is or names (ml_dtypes'
    ``float8_e4m3``, ``float8_e3m4``, ``float8_e4m3b11fnuz`` by name or dtype,
    or by a P3109 name ``p3109_k{K}p{P}{s|u}{e|f}``, or the type of a
    :class:`~numbacast.formats.description.FloatFormat`: a user-defined type,
    even when its fields are an ONNX type's).

    Raises ValueError for an unknown or refused type and TypeError for a
    ``spec`` that is no kind of type description.
    """
    if isinstance(spec, (OnnxType, custom.FloatType)):
        return spec
    if type(spec) is str and spec in BY_NAME:  # the common case first
        return BY_NAME[spec]
    if isinstance(spec, f.FloatFormat):
        return custom.float_type(spec)
    if isinstance(spec, np.dtype) and spec in BY_DTYPE:
        return BY_DTYPE[spec]
    if spec is None or isinstance(spec, (bool, np.bool_, float)):
        raise TypeError(f"a type must be a name, an ONNX id or a dtype, not {spec!r}; expected {accepted_names()}")
    if isinstance(spec, (int, np.integer)):
        if int(spec) in BY_ID:
            return BY_ID[int(spec)]
        if int(spec) in REFUSED:
            raise ValueError(
                f"ONNX type {int(spec)} ({REFUSED[int(spec)]}) is refused: the Cast operator does not cast "
                f"complex numbers; accepted: {accepted_names()}"
            )
        raise ValueError(f"unknown ONNX type id {int(spec)}; accepted: {accepted_names()}")
    if isinstance(spec, str):
        key = spec.strip().lower()
        if key in BY_NAME:
            return BY_NAME[key]
        if key in CUSTOM_BY_NAME:
            return CUSTOM_BY_NAME[key]
        if custom.P3109_NAME.fullmatch(key):
            return gfloat_format(key)
        if key.upper() in REFUSED.values():
            raise ValueError(
                f"{key.upper()} is refused: the Cast operator does not cast complex numbers; "
                f"accepted: {accepted_names()}"
            )
        raise ValueError(f"unknown type name {spec!r}; accepted: {accepted_names()}")
    try:
        dtype = np.dtype(spec)
    except TypeError:
        raise TypeError(f"cannot read a type from {spec!r}; expected {accepted_names()}") from None
    native = dtype if dtype.byteorder in "=|" else dtype.newbyteorder("=")
    found = BY_DTYPE.get(native) or CUSTOM_BY_DTYPE.get(native)
    if found is not None:
        return found
    if dtype.kind in "US":
        return STRING
    if dtype.kind == "c":
        raise ValueError(
            f"complex dtype {dtype} is refused: the Cast operator does not cast complex numbers; "
            f"accepted: {accepted_names()}"
        )
    raise ValueError(f"unsupported dtype {dtype}; accepted: {accepted_names()}")


#: gfloat's named formats that are ONNX types, by gfloat name.
GFLOAT_ONNX = {
    "binary64": "double",
    "binary32": "float",
    "binary16": "float16",
    "bfloat16": "bfloat16",
    "ocp_e5m2": "float8e5m2",
    "ocp_e4m3": "float8e4m3fn",
    "ocp_e3m2": "float6e3m2",
    "ocp_e2m3": "float6e2m3",
    "ocp_e2m1": "float4e2m1",
    "ocp_e8m0": "float8e8m0",
}


def gfloat_format(name: Any):
    """The type of one of gfloat's named formats: the ONNX type for those that
    are one (``"binary16"`` is FLOAT16, ``"ocp_e4m3"`` FLOAT8E4M3FN,
    ``"ocp_e8m0"`` FLOAT8E8M0 ...; ONNX's rules then apply), a P3109 type for
    ``"p3109_k{K}p{P}{s|u}{e|f}"``.  gfloat need not be installed; one of its
    ``FormatInfo`` objects is taken by its name."""
    if type(name).__name__ == "FormatInfo" and isinstance(getattr(name, "name", None), str):
        name = name.name  # a gfloat FormatInfo
    if not isinstance(name, str):
        raise TypeError(
            f"gfloat_format takes the name of one of gfloat's formats (a str) or its FormatInfo, not {name!r}"
        )
    if name in GFLOAT_ONNX:
        return resolve(GFLOAT_ONNX[name])
    found = custom.P3109_NAME.fullmatch(name)
    if found:
        k, p, sign, domain = found.groups()
        return custom.p3109(int(k), int(p), sign == "s", domain == "e")
    raise ValueError(
        f"unknown gfloat format {name!r}; numbacast knows {', '.join(GFLOAT_ONNX)} and p3109_k<K>p<P><s|u><e|f> "
        "(ocp_int8, a two's complement format, is not a float format numbacast casts)"
    )
