"""Argument checks shared by every entry point (``cast``, ``unpack``, the ONNX layer).

Each ``check_*`` function returns the checked value in its canonical form or
raises a ``TypeError``/``ValueError`` that names the bad value and what is
accepted.  Nothing here compiles or converts anything.
"""

import sys

import numpy as np

from ..formats.registry import FLOAT8E8M0, resolve
from .rounding import E8M0_ROUND_MODES, FULL_BITS, ROUND_MODES, ROUNDINGS, STOCHASTIC


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
    """``round_mode``, one of :data:`~numbacast.engine.rounding.ROUND_MODES`."""
    if isinstance(round_mode, str) and round_mode in ROUND_MODES:
        return round_mode
    raise ValueError(f"round_mode must be one of {', '.join(map(repr, ROUND_MODES))}, not {round_mode!r}")


def check_rounding(rounding, round_mode, target):
    """``(rounding, round_mode)`` checked for a cast to ``target``: ``rounding``
    one of :data:`~numbacast.engine.rounding.ROUNDINGS` or None (the ONNX
    default), ``round_mode`` one of the ONNX modes, None giving "up".

    Into FLOAT8E8M0 both name the same choice: when both are given they must
    agree (``round_mode`` "up" is ``rounding`` "toward_positive", "down" is
    "toward_zero" or "toward_negative" -- the same on magnitudes -- and
    "nearest" is "nearest_away").  Other targets ignore ``round_mode``."""
    given_round_mode = round_mode
    round_mode = "up" if round_mode is None else check_round_mode(round_mode)
    if rounding is None:
        return None, round_mode
    if not isinstance(rounding, str) or rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be one of {', '.join(map(repr, ROUNDINGS))}, not {rounding!r}")
    if target is FLOAT8E8M0 and given_round_mode is not None and rounding not in E8M0_ROUND_MODES[round_mode]:
        same = " or ".join(map(repr, E8M0_ROUND_MODES[round_mode]))
        raise ValueError(
            f"round_mode={round_mode!r} and rounding={rounding!r} disagree for FLOAT8E8M0: round_mode "
            f"{round_mode!r} is rounding {same}; give one of them"
        )
    return rounding, round_mode


#: The message of a seed out of range (a ``str.format`` template, shared with the ``@njit`` casts).
SEED_RANGE = "seed must be in 0 .. 2**64 - 1, not {}"


def check_stochastic(rounding, seed, stochastic_bits, random_bits):
    """``(seed, stochastic_bits)`` checked: all three options are for
    ``rounding="stochastic"`` only; ``seed`` an integer in ``0 .. 2**64 - 1``
    or None (a fresh one, from the operating system); ``stochastic_bits`` an
    integer from 1 to 64 or None (64, or the width of ``random_bits``'s dtype);
    ``seed`` and ``random_bits`` exclude each other."""
    if rounding != STOCHASTIC:
        if seed is None and stochastic_bits is None and random_bits is None:
            return None, None
        given = [
            name
            for name, v in (("seed", seed), ("stochastic_bits", stochastic_bits), ("random_bits", random_bits))
            if v is not None
        ]
        if given:
            raise ValueError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for rounding='stochastic' only")
        return None, None
    if random_bits is not None and seed is not None:
        raise ValueError("give seed= or random_bits=, not both: random_bits are the random numbers themselves")
    if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer))):
        raise TypeError(f"seed must be an integer, not {seed!r}")
    if seed is not None and not 0 <= int(seed) < 1 << 64:
        raise ValueError(SEED_RANGE.format(seed))
    if stochastic_bits is None:
        if random_bits is not None:
            stochastic_bits = 8 * np.asarray(random_bits).dtype.itemsize
        else:
            stochastic_bits = FULL_BITS
    if isinstance(stochastic_bits, (bool, np.bool_)) or not isinstance(stochastic_bits, (int, np.integer)):
        raise TypeError(f"stochastic_bits must be an integer from 1 to 64, not {stochastic_bits!r}")
    if not 1 <= int(stochastic_bits) <= 64:
        raise ValueError(f"stochastic_bits must be from 1 to 64, not {stochastic_bits}")
    return (None if seed is None else int(seed)), int(stochastic_bits)


def check_source(array, source):
    """The type of ``array``'s elements: ``source`` (a resolved type) when given
    -- ``array`` then holds its storage, or its codes as unsigned integers of
    the same width -- else the type of ``array``'s dtype."""
    if source is None:
        return resolve(array.dtype)
    codes = np.dtype(f"u{source.storage.itemsize}") if source.is_float or source.is_integer else None
    if array.dtype.newbyteorder("=") not in (source.storage, codes):  # either byte order
        accepted = f"{source.storage}" + (f" or {codes} codes" if codes is not None and codes != source.storage else "")
        raise TypeError(f"an array of {source.onnx_name} must have dtype {accepted}, not {array.dtype}")
    return source


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
