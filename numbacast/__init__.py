"""numbacast: the ONNX Cast operator for NumPy, compiled with Numba.

``numbacast.cast(x, to, saturate=True, round_mode="up")`` casts an array to any
numeric ONNX type, rounding once and correctly, in parallel compiled kernels.
"""

from . import cache as _cache  # registers the disk cache locator before any kernel is defined
from .api import cast
from .cache import CacheWarning
from .codecs import ROUND_MODES
from .packing import pack, unpack
from . import numba_ext as _numba_ext  # numbacast.cast inside @njit code
from .registry import TYPES, OnnxType, resolve

__version__ = "0.1.0"

__all__ = ["cast", "pack", "unpack", "resolve", "TYPES", "OnnxType", "ROUND_MODES", "CacheWarning", "__version__"]
