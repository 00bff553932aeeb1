"""The public NumPy-level function :func:`cast`."""

import functools

import numpy as np

from .codecs import ROUND_MODES
from .conversion import DOUBLE, INT64, Conversion, kernel_dtype
from .kernels import NO_TABLE, cast_kernel
from .registry import resolve

#: Sources of at most this many bytes are converted through a table of all their codes.
TABLE_MAX_ITEMSIZE = 2


def cast(x, to, *, saturate=True, round_mode="up", out=None, packed=False):
    """Cast ``x`` to the ONNX type ``to``, as the ONNX ``Cast`` operator does.

    Parameters
    ----------
    x : array_like
        Any shape (0-d and empty included), any strides, either byte order, of
        a NumPy bool/integer/float dtype or an ml_dtypes dtype.  Not modified.
    to : str, int, dtype
        The target type: an ONNX name in any case (``"float8e4m3fn"``,
        ``"FLOAT"``, ``"double"``), an ONNX id (``17``) or a dtype.
    saturate : bool
        For the float8 targets and FLOAT8E8M0: out-of-range values and
        infinities give the largest finite value (True, the default) instead of
        inf or NaN.  Other targets ignore it.
    round_mode : {"up", "down", "nearest"}
        How FLOAT8E8M0 rounds; other targets ignore it.
    out : numpy.ndarray, optional
        Where to write the result: an array of the shape of ``x`` and exactly
        the target's storage dtype, writeable, any strides.  Checked before
        anything is written.
    packed : bool
        For the sub-byte targets (INT4, UINT4, FLOAT4E2M1, INT2, UINT2,
        FLOAT6E2M3, FLOAT6E3M2): return the ONNX wire bytes of the result (see
        :func:`numbacast.pack`), cast and packed in one pass.

    Returns
    -------
    numpy.ndarray
        ``out``, or a new array of the shape of ``x`` whose dtype is the NumPy
        storage of ``to`` (ml_dtypes dtypes for bfloat16, float8, float6,
        float4, int4, uint4, int2 and uint2, one element per byte); with
        ``packed=True``, a flat uint8 array of ``ceil(x.size * bits / 8)`` bytes.
    """
    target = resolve(to)
    array = np.asarray(x)
    conversion = Conversion.make(source_type(array.dtype), target, check_saturate(saturate),
                                 check_round_mode(round_mode))
    if check_packed(packed):
        from .packing import cast_packed  # packing.py builds on this module
        return cast_packed(conversion, array, out)
    if out is not None:
        check_out(out, array.shape, target)
    return run(conversion, array, out)


def source_type(dtype):
    """The ONNX type of elements of ``dtype``; TypeError/ValueError when it has none."""
    if dtype.kind in "USO":
        raise TypeError(f"cannot cast an array of dtype {dtype}: numbacast.cast takes bool, integer, float "
                        "and ml_dtypes arrays")
    return resolve(dtype)


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
    if array.dtype.itemsize <= TABLE_MAX_ITEMSIZE:
        cast_kernel(src.view(f"u{array.dtype.itemsize}"), dst, None, table(conversion))
    else:
        cast_kernel(src.view(kernel_dtype(conversion.source)), dst, conversion, NO_TABLE)
    return out


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
    cast_kernel(codes.view(kernel_dtype(source)), values, Conversion.make(source, wide), NO_TABLE)
    result = np.empty(codes.shape, kernel_dtype(conversion.target))
    options = dict(saturate=conversion.saturate, round_mode=conversion.round_mode, inf_to_nan=conversion.inf_to_nan)
    cast_kernel(values, result, Conversion.make(wide, conversion.target, **options), NO_TABLE)
    result.flags.writeable = False
    return result
