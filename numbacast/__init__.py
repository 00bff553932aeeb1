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
  :mod:`numbacast.mx` -- block-scaled formats (OCP MX, NVFP4) on top of it;
* :mod:`numbacast.text`, :mod:`numbacast.packing` -- ONNX STRING and the
  packed wire layout of the sub-byte types;
* :mod:`numbacast.onnx` -- the operators version by version, TensorProtos,
  ``onnx.reference``;
* :mod:`numbacast.integrations` -- ``cast`` inside ``@njit`` code, scalar
  codecs, Dask arrays;
* :mod:`numbacast.cli` -- ``python -m numbacast``.
"""

import importlib
import importlib.abc
import importlib.util
import sys

from .api import cast
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
_SUBMODULES = {"scalar": ".integrations.scalar", "onnx": ".onnx", "mx": ".mx"}

#: Names that ``numbacast.<name>`` imports from the Numba-compiled layers on first use:
#: ``import numbacast`` does not import Numba (see :func:`numbacast.api.runtime`).
_LAZY = {
    "pack": ".packing",
    "unpack": ".packing",
    "ROUND_MODES": ".engine.rounding",
    "ROUNDINGS": ".engine.rounding",
    "CacheWarning": ".engine.cache",
}


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(_SUBMODULES[name], __name__)
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))


def _register_with_numba():
    """Teach Numba ``numbacast.cast`` and ``numbacast.mx`` inside ``@njit`` code
    (:mod:`numbacast.integrations.njit`, :mod:`numbacast.integrations.mx_njit`)."""
    from .integrations import mx_njit, njit  # noqa: F401


def _register_before_numba_compiles():
    """Call :func:`_register_with_numba` when Numba first compiles or loads a
    function that is not one of numbacast's own kernels, where it loads its
    extensions (``numba.core.entrypoints.init_all``, which Numba calls before
    every compilation): by then no numbacast module is half-imported, and a
    first cast does not wait for integrations it does not use (0.02 s)."""
    from numba.core import entrypoints

    init_all = entrypoints.init_all

    def init_all_then_register():
        init_all()
        kernels = sys.modules.get(f"{__name__}.engine.kernels")
        if kernels is not None and kernels.compiling_own_kernel():
            return
        entrypoints.init_all = init_all
        _register_with_numba()

    entrypoints.init_all = init_all_then_register


class _WhenNumbaIsImported(importlib.abc.MetaPathFinder):
    """Runs :func:`_register_before_numba_compiles` right after Numba is
    imported, by anyone: ``@njit`` code can call ``numbacast.cast`` whichever
    of Numba and numbacast was imported first, and ``import numbacast`` does
    not import Numba.  The finder removes itself on Numba's import."""

    def find_spec(self, name, path=None, target=None):
        if name != "numba":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_hook(module):
            exec_module(module)
            _register_before_numba_compiles()

        spec.loader.exec_module = exec_then_hook
        return spec


if "numba" in sys.modules:  # imported before numbacast: registered all the same before its next compilation
    _register_before_numba_compiles()
else:
    sys.meta_path.insert(0, _WhenNumbaIsImported())
