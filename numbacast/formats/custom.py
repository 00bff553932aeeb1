"""Float formats that are not ONNX types: P3109, gfloat's named formats,
ml_dtypes' float8 types that ONNX lacks, or any :class:`FloatFormat` of yours.

A :class:`FloatType` is a :class:`~numbacast.formats.description.FloatFormat`
with a name and a NumPy storage; ``numbacast.cast`` takes it as ``to`` (and
as ``source=``, for arrays of its codes) like an ONNX type, and compiles and
caches its kernels the same way, every field a compile-time constant.

* :func:`p3109` -- the IEEE P3109 formats ``binary{K}p{P}`` (signed or
  unsigned, extended or finite);
* :func:`numbacast.formats.registry.gfloat_format` -- a format by its name
  in gfloat (``"ocp_e4m3"``, ``"p3109_k8p3se"``, ...; the ones that are ONNX
  types are those types);
* :data:`FLOAT8_E4M3`, :data:`FLOAT8_E3M4`, :data:`FLOAT8_E4M3B11FNUZ` --
  ml_dtypes' ``float8_e4m3``, ``float8_e3m4`` and ``float8_e4m3b11fnuz``,
  stored in their ml_dtypes arrays.

Formats of at most 16 bits whose every value is a float64 are accepted (a
bias of at most 1023 -- an exponent field of at most 10 bits for the usual
biases -- and no value beyond float64's range),
with subnormals (or, for P3109, a zero exponent field that is zero).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from . import description as f

#: The widest custom format, in bits.
MAX_BITS = 16

_NAN_ENCODINGS = (f.NAN_IEEE, f.NAN_ALL_ONES, f.NAN_NEGATIVE_ZERO, f.NAN_NONE)


def check_format(fmt: f.FloatFormat) -> f.FloatFormat:
    """``fmt`` if numbacast can cast to and from it, else ValueError saying why
    (TypeError for a field of the wrong type)."""
    wrong = [
        f"{name} must be an integer, not {getattr(fmt, name)!r}"
        for name in ("exponent_bits", "mantissa_bits", "bias")
        if isinstance(getattr(fmt, name), (bool, np.bool_)) or not isinstance(getattr(fmt, name), (int, np.integer))
    ] + [
        f"{name} must be True or False, not {getattr(fmt, name)!r}"
        for name in ("has_inf", "signed", "subnormals")
        if not isinstance(getattr(fmt, name), (bool, np.bool_))
    ]
    if not isinstance(fmt.nan, str):
        wrong.append(f"nan must be one of {_NAN_ENCODINGS}, not {fmt.nan!r}")
    if wrong:
        raise TypeError(f"float format {fmt}: " + "; ".join(wrong))
    problems = []
    if fmt.exponent_bits < 0 or fmt.mantissa_bits < 0:
        problems.append("field widths must not be negative")
    if not 1 <= fmt.bits <= MAX_BITS:
        problems.append(f"it has {fmt.bits} bits; numbacast takes formats of 1 to {MAX_BITS} bits")
    if fmt.nan not in _NAN_ENCODINGS:
        problems.append(f"unknown NaN encoding {fmt.nan!r} (one of {_NAN_ENCODINGS})")
    if fmt.nan == f.NAN_IEEE and (not fmt.has_inf or fmt.mantissa_bits < 1 or fmt.exponent_bits < 1):
        problems.append("IEEE NaNs need infinities, an exponent field and a mantissa")
    if fmt.nan == f.NAN_NEGATIVE_ZERO and not fmt.signed:
        problems.append("a NaN in the place of -0 needs a sign bit")
    if not fmt.subnormals:
        problems.append("formats without subnormals are not supported (FLOAT8E8M0 is the ONNX type)")
    if not problems and fmt.max_code < 1:
        problems.append("it has no positive finite value")
    if not problems:
        top = (fmt.max_code >> fmt.mantissa_bits) - fmt.bias  # exponent of the largest value
        if fmt.bias > 1023 or top > 1023 or fmt.mantissa_bits > 51:
            problems.append("some of its values are not float64 values")
    if problems:
        raise ValueError(f"unsupported float format {fmt}: " + "; ".join(problems))
    return fmt


@dataclass(frozen=True)
class FloatType:
    """A float format that is not an ONNX type, usable wherever numbacast takes a type.

    ``format`` is its :class:`~numbacast.formats.description.FloatFormat`,
    ``name`` a name unique to it, ``storage`` the NumPy dtype of its arrays:
    ``uint8`` (up to 8 bits) or ``uint16`` codes, or an ml_dtypes dtype.
    Two types of the same name, format and storage are equal."""

    name: str
    format: f.FloatFormat
    storage: Any = None

    custom = True  #: not an ONNX type
    id = None  #: no ONNX id
    aliases: tuple[str, ...] = ()
    is_float = True
    is_integer = False
    is_bool = False
    is_string = False

    def __post_init__(self):
        check_format(self.format)
        storage = self.storage if self.storage is not None else np.uint8 if self.format.bits <= 8 else np.uint16
        object.__setattr__(self, "storage", np.dtype(storage))
        if self.storage.itemsize * 8 < self.format.bits:
            raise ValueError(f"{self.name}: {self.format.bits} bits do not fit in {self.storage}")

    @property
    def onnx_name(self) -> str:
        """Its name (no ONNX name: the attribute is there for messages)."""
        return self.name

    @property
    def bits(self) -> int:
        return self.format.bits

    def __repr__(self):
        return f"numbacast.FloatType({self.name!r})"

    def __str__(self):
        return self.name


def format_name(fmt: f.FloatFormat) -> str:
    """A name that tells every field of ``fmt``."""
    nan = {f.NAN_IEEE: "ieee", f.NAN_ALL_ONES: "fn", f.NAN_NEGATIVE_ZERO: "fnuz", f.NAN_NONE: "nonan"}[fmt.nan]
    return (
        f"float{fmt.bits}_e{fmt.exponent_bits}m{fmt.mantissa_bits}b{fmt.bias}"
        f"{'' if fmt.signed else 'u'}{'i' if fmt.has_inf else ''}{nan}"
    )


def float_type(fmt: f.FloatFormat, name: str | None = None) -> FloatType:
    """The :class:`FloatType` of a format of yours (named by its fields unless ``name``)."""
    return FloatType(name or format_name(check_format(fmt)), fmt)


def p3109_format(k: int, p: int, signed: bool = True, extended: bool = True) -> f.FloatFormat:
    """The format of P3109 ``binary{k}p{p}`` (as gfloat 0.5.2's ``format_info_p3109``):
    ``k`` bits, precision ``p`` (``p - 1`` mantissa bits), bias ``2**(k-p-1)``
    signed or ``2**(k-p)`` unsigned; no -0; signed formats have one NaN in the
    place of -0, unsigned ones the all-ones code; ``extended`` formats have
    infinity in the largest magnitude code below the NaN (finite ones a larger
    ``max`` there)."""
    for name, value in (("k", k), ("p", p)):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"P3109's {name} must be an integer, not {value!r}")
    for name, value in (("signed", signed), ("extended", extended)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"P3109's {name} must be True or False, not {value!r}")
    k, p, signed, extended = int(k), int(p), bool(signed), bool(extended)
    if not 2 <= k <= MAX_BITS or not 1 <= p <= k:
        raise ValueError(
            f"P3109 binary{k}p{p} ({'signed' if signed else 'unsigned'}) is not a format numbacast takes: "
            f"it takes 2 <= k <= {MAX_BITS} bits and a precision 1 <= p <= k"
        )
    if signed:
        return f.FloatFormat(k - p, p - 1, (1 << (k - p - 1)) if k - p >= 1 else 0, extended, f.NAN_NEGATIVE_ZERO)
    return f.FloatFormat(k - p + 1, p - 1, 1 << (k - p), extended, f.NAN_ALL_ONES, signed=False)


def p3109(k: int, p: int, signed: bool = True, extended: bool = True) -> FloatType:
    """The P3109 format ``binary{k}p{p}``, signed or unsigned, extended (with
    infinities) or finite, named as gfloat names it: ``p3109_k{k}p{p}{s|u}{e|f}``.
    Casts to it return its codes (uint8 or uint16)."""
    fmt = p3109_format(k, p, signed, extended)
    name = f"p3109_k{int(k)}p{int(p)}{'s' if signed else 'u'}{'e' if extended else 'f'}"
    return FloatType(name, fmt)


#: gfloat's names of the P3109 formats.
P3109_NAME = re.compile(r"p3109_k(\d+)p(\d+)([su])([ef])")

#: ml_dtypes' float8 types that ONNX lacks, stored in their ml_dtypes arrays.
FLOAT8_E4M3 = FloatType("float8_e4m3", f.FloatFormat(4, 3, 7, True, f.NAN_IEEE), np.dtype(ml_dtypes.float8_e4m3))
FLOAT8_E3M4 = FloatType("float8_e3m4", f.FloatFormat(3, 4, 3, True, f.NAN_IEEE), np.dtype(ml_dtypes.float8_e3m4))
FLOAT8_E4M3B11FNUZ = FloatType(
    "float8_e4m3b11fnuz",
    f.FloatFormat(4, 3, 11, False, f.NAN_NEGATIVE_ZERO),
    np.dtype(ml_dtypes.float8_e4m3b11fnuz),
)
NAMED = (FLOAT8_E4M3, FLOAT8_E3M4, FLOAT8_E4M3B11FNUZ)
