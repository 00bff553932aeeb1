"""The public NumPy-level function :func:`cast`: argument checks, then dispatch.

A numeric cast runs in :mod:`numbacast.engine.arrays`; texts go to
:mod:`numbacast.text.strings`, packed results to :mod:`numbacast.packing` and
Dask arrays to :mod:`numbacast.integrations.dask_array`.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import numpy as np
import numpy.typing as npt

from .formats.registry import TypeLike, resolve


@functools.cache
def runtime() -> Any:
    """The modules a cast runs in, imported on the first call: ``import
    numbacast`` does not import Numba, a third of a second."""
    import numba  # noqa: F401  (first: its import hooks then find no half-imported numbacast module)

    from .engine import checks
    from .engine.arrays import cast_numbers
    from .integrations.dask_array import cast_lazily
    from .packing import cast_packed
    from .text.strings import cast_text

    return SimpleNamespace(
        checks=checks, cast_numbers=cast_numbers, cast_lazily=cast_lazily, cast_packed=cast_packed, cast_text=cast_text
    )


def cast(
    x: npt.ArrayLike,
    to: TypeLike,
    *,
    saturate: bool = True,
    round_mode: str = "up",
    out: np.ndarray | None = None,
    packed: bool = False,
) -> Any:
    """Cast ``x`` to the ONNX type ``to``, as the ONNX ``Cast`` operator does.

    Parameters
    ----------
    x : array_like
        Any shape (0-d and empty included), any strides, either byte order, of
        a NumPy bool/integer/float dtype or an ml_dtypes dtype -- or texts:
        a ``<U`` or ``S`` array or an object array of str.  Not modified.
        An ndarray subclass is read as a plain array (``numpy.asarray``), but
        a masked array (``numpy.ma``) gives a masked array with the same mask;
        the texts under its mask are not read.
    to : str, int, dtype
        The target type: an ONNX name in any case (``"float8e4m3fn"``,
        ``"FLOAT"``, ``"double"``, ``"string"``), an ONNX id (``17``), a
        type constant (``numbacast.FLOAT8E4M3FN``) or a dtype (``str`` for
        STRING).
    saturate : bool
        For the float8 targets and FLOAT8E8M0: out-of-range values and
        infinities give the largest finite value (True, the default) instead of
        inf or NaN.  Other targets ignore it.
    round_mode : {"up", "down", "nearest"}
        How FLOAT8E8M0 rounds; other targets ignore it.
    out : numpy.ndarray, optional
        Where to write the result: an array of the shape of ``x`` and exactly
        the target's storage dtype (for STRING, any ``<U`` dtype wide enough
        for the longest text), writeable, any strides, of any ndarray subclass
        but a masked array.  Checked before anything is written.  Not with a
        Dask array or a masked ``x``.
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
        (see :mod:`numbacast.integrations.dask_array`); every argument is
        checked at the call.

    Raises
    ------
    ValueError
        Also for a text that is not a number, naming its index.
    """
    target = resolve(to)
    run = runtime()
    checks = run.checks
    saturate = checks.check_saturate(saturate)
    round_mode, packed = checks.check_round_mode(round_mode), checks.check_packed(packed)
    if out is not None and not checks.is_dask_array(x):
        checks.check_out_type(out)
    if checks.is_masked_array(x):
        return cast_masked(x, target, saturate, round_mode, out, packed)
    if checks.is_dask_array(x):
        if packed:
            checks.refuse_dask(x, "numbacast.cast(..., packed=True)")
        return run.cast_lazily(x, target, saturate, round_mode, out)
    array = np.asarray(x)
    if target.is_string or array.dtype.kind in "USO":
        if packed:
            raise TypeError("packed=True is for the sub-byte numeric targets, not for STRING casts")
        return run.cast_text(array, target, saturate, round_mode, out)
    if packed:
        return run.cast_packed(array, target, saturate, round_mode, out)
    return run.cast_numbers(array, target, saturate, round_mode, out)


def cast_masked(x, target, saturate, round_mode, out, packed):
    """:func:`cast` of the masked array ``x``: a masked array holding the cast of
    its data, with a copy of its mask, as ``x.astype`` gives.  Texts under the
    mask are not read (they are taken as "0"), so they cannot fail the cast.
    The fill value is the cast of ``x``'s, or zero when that cannot be cast."""
    if packed:
        raise TypeError("packed=True cannot keep a mask: cast x.filled(value) or x.data to pack a masked array")
    if out is not None:
        raise TypeError(
            "out= cannot keep the mask of a masked x: cast without out (the result is a masked array), "
            "or cast x.filled(value) or x.data into out"
        )
    ma = np.ma
    data, mask = x.data, ma.getmask(x)
    if mask is not ma.nomask:
        mask = mask.copy()
        if data.dtype.kind in "USO" and not target.is_string and mask.any():
            data = data.copy()
            data[mask] = b"0" if data.dtype.kind == "S" else "0"
    result = cast(data, target, saturate=saturate, round_mode=round_mode)
    try:
        fill = cast(np.array(x.fill_value, x.dtype), target, saturate=saturate, round_mode=round_mode)
    except (TypeError, ValueError, OverflowError):
        fill = None if target.is_string else np.zeros((), target.storage)
    return ma.MaskedArray(result, mask=mask, fill_value=fill)
