"""The public NumPy-level function :func:`cast`."""

import functools
import sys

import numpy as np

from .codecs import ROUND_MODES
from .conversion import DOUBLE, FLOAT, INT64, Conversion, kernel_dtype
from .kernels import NO_TABLE, launch
from .registry import resolve

#: Sources of at most this many bytes are converted through a table of all their codes.
TABLE_MAX_ITEMSIZE = 2


def cast(x, to, *, saturate=True, round_mode="up", out=None, packed=False):
    """Cast ``x`` to the ONNX type ``to``, as the ONNX ``Cast`` operator does.

    Parameters
    ----------
    x : array_like
        Any shape (0-d and empty included), any strides, either byte order, of
        a NumPy bool/integer/float dtype or an ml_dtypes dtype -- or texts:
        a ``<U`` or ``S`` array or an object array of str.  Not modified.
    to : str, int, dtype
        The target type: an ONNX name in any case (``"float8e4m3fn"``,
        ``"FLOAT"``, ``"double"``, ``"string"``), an ONNX id (``17``) or a
        dtype (``str`` for STRING).
    saturate : bool
        For the float8 targets and FLOAT8E8M0: out-of-range values and
        infinities give the largest finite value (True, the default) instead of
        inf or NaN.  Other targets ignore it.
    round_mode : {"up", "down", "nearest"}
        How FLOAT8E8M0 rounds; other targets ignore it.
    out : numpy.ndarray, optional
        Where to write the result: an array of the shape of ``x`` and exactly
        the target's storage dtype (for STRING, any ``<U`` dtype wide enough
        for the longest text), writeable, any strides.  Checked before
        anything is written.  Not with a Dask array.
    packed : bool
        For the sub-byte targets (INT4, UINT4, FLOAT4E2M1, INT2, UINT2,
        FLOAT6E2M3, FLOAT6E3M2): return the ONNX wire bytes of the result (see
        :func:`numbacast.pack`), cast and packed in one pass.

    Returns
    -------
    numpy.ndarray or dask.array.Array
        ``out``, or a new array of the shape of ``x`` whose dtype is the NumPy
        storage of ``to`` (ml_dtypes dtypes for bfloat16, float8, float6,
        float4, int4, uint4, int2 and uint2, one element per byte; for
        STRING a ``<U`` dtype just wide enough for the longest text); with
        ``packed=True``, a flat uint8 array of ``ceil(x.size * bits / 8)``
        bytes.  For a Dask array ``x``, a lazy Dask array with the same chunks
        (see :mod:`numbacast.dask_array`); every argument is checked at the call.

    Raises
    ------
    ValueError
        Also for a text that is not a number, naming its index.
    """
    target = resolve(to)
    saturate, round_mode, packed = check_saturate(saturate), check_round_mode(round_mode), check_packed(packed)
    if is_dask_array(x):
        from .dask_array import cast_lazily, refuse_dask  # imports this module
        if packed:
            refuse_dask(x, "numbacast.cast(..., packed=True)")
        return cast_lazily(x, target, saturate, round_mode, out)
    array = np.asarray(x)
    if target.is_string or array.dtype.kind in "USO":
        if packed:
            raise TypeError("packed=True is for the sub-byte numeric targets, not for STRING casts")
        from .strings import cast_text  # the text layer builds on this module

        return cast_text(array, target, saturate, round_mode, out)
    conversion = Conversion.make(resolve(array.dtype), target, saturate, round_mode)
    if packed:
        from .packing import cast_packed  # packing.py builds on this module
        return cast_packed(conversion, array, out)
    if out is not None:
        check_out(out, array.shape, target)
    return run(conversion, array, out)


def is_dask_array(x):
    """True when ``x`` is a ``dask.array.Array``; never imports Dask (if
    ``dask.array`` is not imported, ``x`` cannot be one)."""
    dask_array = sys.modules.get("dask.array")
    return dask_array is not None and isinstance(x, getattr(dask_array, "Array", ()))


def check_saturate(saturate):
    if isinstance(saturate, (bool, np.bool_)) or (isinstance(saturate, (int, np.integer)) and saturate in (0, 1)):
        return bool(saturate)
    raise TypeError(f"saturate must be True/False (or 1/0), not {saturate!r}")


def check_packed(packed):
    if isinstance(packed, (bool, np.bool_)):
        return bool(packed)
    raise TypeError(f"packed must be True or False, not {packed!r}")


def check_round_mode(round_mode):
    if isinstance(round_mode, str) and round_mode in ROUND_MODES:
        return round_mode
    raise ValueError(f"round_mode must be one of {', '.join(map(repr, ROUND_MODES))}, not {round_mode!r}")


def check_out(out, shape, target):
    """TypeError/ValueError unless ``out`` can receive a cast of this shape to ``target``."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy.ndarray, not {type(out).__name__}")
    if out.dtype != target.storage:
        raise TypeError(f"out has dtype {out.dtype}; a cast to {target.onnx_name} needs dtype {target.storage}")
    if out.shape != shape:
        raise ValueError(f"out has shape {out.shape}; the input has shape {shape}")
    if not out.flags.writeable:
        raise ValueError("out is read-only")


def run(conversion, array, out=None):
    """Apply ``conversion`` to every element of ``array``, into ``out`` (checked
    by :func:`check_out`) or a new array; return that array."""
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if out is not None and (not out.flags.c_contiguous or np.may_share_memory(out, array)):
        out[...] = run(conversion, array)
        return out
    if out is None:
        out = np.empty(array.shape, conversion.target.storage)
    src = np.ascontiguousarray(array).reshape(-1)
    dst = out.reshape(-1).view(kernel_dtype(conversion.target))
    if uses_table(conversion):
        launch(src.view(f"u{array.dtype.itemsize}"), dst, None, table(conversion))
    else:
        launch(src.view(kernel_dtype(conversion.source)), dst, conversion, NO_TABLE)
    return out


def uses_table(conversion):
    """Whether ``conversion`` looks its results up in :func:`table` rather
    than computing them: for sources of at most 16 bits, except into FLOAT
    and DOUBLE, which a few vector instructions compute faster than a lookup."""
    if conversion.target in (FLOAT, DOUBLE):
        return False
    return conversion.source.storage.itemsize <= TABLE_MAX_ITEMSIZE


@functools.lru_cache(maxsize=None)
def table(conversion):
    """The converted value of every code of a source of at most 16 bits.

    Codes are first decoded exactly (floats to DOUBLE, integers and bool to
    INT64), then converted to the target like any DOUBLE or INT64 value.
    """
    source = conversion.source
    codes = np.arange(1 << (8 * source.storage.itemsize), dtype=f"u{source.storage.itemsize}")
    wide = DOUBLE if source.is_float else INT64
    values = np.empty(codes.shape, wide.storage)
    launch(codes.view(kernel_dtype(source)), values, Conversion.make(source, wide), NO_TABLE)
    result = np.empty(codes.shape, kernel_dtype(conversion.target))
    options = dict(saturate=conversion.saturate, round_mode=conversion.round_mode, inf_to_nan=conversion.inf_to_nan)
    launch(values, result, Conversion.make(wide, conversion.target, **options), NO_TABLE)
    result.flags.writeable = False
    return result
