"""numbacast: the ONNX Cast operator for NumPy, compiled with Numba.

``numbacast.cast(x, to, saturate=True, round_mode="up")`` casts an array to any
numeric ONNX type, rounding once and correctly, in parallel compiled kernels;
``rounding=`` picks IEEE 754's other modes or stochastic rounding, and ``to``
may also be a float format ONNX lacks (P3109, gfloat's, ml_dtypes').

The package reads as the pipeline a cast runs through:

* :mod:`numbacast.formats` -- the number formats as data and the ONNX types;
* :mod:`numbacast.engine` -- codecs generated from the formats, conversions,
  compiled kernels, the disk cache, argument checks, running a conversion
  over arrays;
* :mod:`numbacast.api` -- :func:`cast`: argument checks, then dispatch;
* :mod:`numbacast.text`, :mod:`numbacast.packing` -- ONNX STRING and the
  packed wire layout of the sub-byte types;
* :mod:`numbacast.onnx` -- the operators version by version, TensorProtos,
  ``onnx.reference``;
* :mod:`numbacast.integrations` -- ``cast`` inside ``@njit`` code, scalar
  codecs, Dask arrays;
* :mod:`numbacast.cli` -- ``python -m numbacast``.
"""

import importlib

from .api import cast
from .engine.cache import CacheWarning
from .engine.codecs import ROUND_MODES
from .engine.rounding import ROUNDINGS
from .formats.custom import FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, FloatType, p3109
from .formats.description import FloatFormat
from .formats.registry import (
    BFLOAT16,
    BOOL,
    DOUBLE,
    FLOAT,
    FLOAT4E2M1,
    FLOAT6E2M3,
    FLOAT6E3M2,
    FLOAT8E4M3FN,
    FLOAT8E4M3FNUZ,
    FLOAT8E5M2,
    FLOAT8E5M2FNUZ,
    FLOAT8E8M0,
    FLOAT16,
    INT2,
    INT4,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    TYPES,
    UINT2,
    UINT4,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    OnnxType,
    gfloat_format,
    resolve,
)
from .integrations import njit as _njit  # noqa: F401  (registers numbacast.cast inside @njit code)
from .packing import pack, unpack

__version__ = "0.1.0"

__all__ = [
    "cast",
    "pack",
    "unpack",
    "resolve",
    "TYPES",
    "OnnxType",
    "ROUND_MODES",
    "ROUNDINGS",
    "FloatFormat",
    "FloatType",
    "p3109",
    "gfloat_format",
    "FLOAT8_E4M3",
    "FLOAT8_E3M4",
    "FLOAT8_E4M3B11FNUZ",
    "CacheWarning",
    "__version__",
    # the ONNX types, in id order
    "FLOAT",
    "UINT8",
    "INT8",
    "UINT16",
    "INT16",
    "INT32",
    "INT64",
    "STRING",
    "BOOL",
    "FLOAT16",
    "DOUBLE",
    "UINT32",
    "UINT64",
    "BFLOAT16",
    "FLOAT8E4M3FN",
    "FLOAT8E4M3FNUZ",
    "FLOAT8E5M2",
    "FLOAT8E5M2FNUZ",
    "UINT4",
    "INT4",
    "FLOAT4E2M1",
    "FLOAT8E8M0",
    "UINT2",
    "INT2",
    "FLOAT6E2M3",
    "FLOAT6E3M2",
]

#: Submodules that ``numbacast.<name>`` imports on first use (they are not needed by ``cast``).
_SUBMODULES = {"scalar": ".integrations.scalar", "onnx": ".onnx"}


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(_SUBMODULES[name], __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
