"""Argument checks shared by every entry point (``cast``, ``unpack``, the ONNX layer).

Each ``check_*`` function returns the checked value in its canonical form or
raises a ``TypeError``/``ValueError`` that names the bad value and what is
accepted.  Nothing here compiles or converts anything.
"""

import sys

import numpy as np

from .codecs import ROUND_MODES


def check_saturate(saturate):
    """``saturate`` as a bool: True/False, NumPy bools, or the integers 1/0."""
    if isinstance(saturate, (bool, np.bool_)) or (isinstance(saturate, (int, np.integer)) and saturate in (0, 1)):
        return bool(saturate)
    raise TypeError(f"saturate must be True/False (or 1/0), not {saturate!r}")


def check_packed(packed):
    """``packed`` as a bool: True/False or NumPy bools only."""
    if isinstance(packed, (bool, np.bool_)):
        return bool(packed)
    raise TypeError(f"packed must be True or False, not {packed!r}")


def check_round_mode(round_mode):
    """``round_mode``, one of :data:`~numbacast.engine.codecs.ROUND_MODES`."""
    if isinstance(round_mode, str) and round_mode in ROUND_MODES:
        return round_mode
    raise ValueError(f"round_mode must be one of {', '.join(map(repr, ROUND_MODES))}, not {round_mode!r}")


def check_out(out, shape, target):
    """TypeError/ValueError unless ``out`` can receive a cast of this shape to ``target``."""
    check_out_type(out)
    if out.dtype != target.storage:
        raise TypeError(f"out has dtype {out.dtype}; a cast to {target.onnx_name} needs dtype {target.storage}")
    if out.shape != shape:
        raise ValueError(f"out has shape {out.shape}; the input has shape {shape}")
    if not out.flags.writeable:
        raise ValueError("out is read-only")


def check_out_type(out):
    """TypeError unless ``out`` is a NumPy array (of any subclass but a masked array)."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy.ndarray, not {type(out).__name__}")
    if is_masked_array(out):
        raise TypeError(
            "out cannot be a masked array: a cast writes values, not masks. A cast of a masked array "
            "returns a masked array with its mask; assign it with out[...] = numbacast.cast(x, to)"
        )


def is_masked_array(x):
    """True when ``x`` is a ``numpy.ma.MaskedArray``; never imports ``numpy.ma``
    (if it is not imported, ``x`` cannot be one)."""
    ma = sys.modules.get("numpy.ma")
    return ma is not None and isinstance(x, ma.MaskedArray)


def refuse_masked(x, what):
    """TypeError if ``x`` is a masked array: ``what`` would drop its mask."""
    if is_masked_array(x):
        raise TypeError(
            f"{what} does not take masked arrays: it cannot keep the mask. Pass x.filled(value) or x.data "
            "(numbacast.cast itself keeps the mask of a masked array)"
        )


def is_dask_array(x):
    """True when ``x`` is a ``dask.array.Array``; never imports Dask (if
    ``dask.array`` is not imported, ``x`` cannot be one)."""
    dask_array = sys.modules.get("dask.array")
    return dask_array is not None and isinstance(x, getattr(dask_array, "Array", ()))


def refuse_dask(x, what):
    """Raise TypeError if ``x`` is a Dask array: ``what`` (e.g. ``"numbacast.pack"``)
    packs the whole array into one byte string, which Dask chunks cannot give."""
    if is_dask_array(x):
        raise TypeError(
            f"{what} does not take Dask arrays: it packs the whole array into one byte string, and a chunk "
            "whose size is not a multiple of the elements per packed group (2 for 4-bit types, 4 for 2- and 6-bit "
            f"types) shares bytes with the next chunk. Compute the array first ({what}(x.compute(), ...)), or, "
            "when every chunk's size is such a multiple, pack each chunk yourself with x.map_blocks(...)"
        )
