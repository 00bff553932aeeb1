"""The public NumPy-level function :func:`cast`: argument checks, then dispatch.

A numeric cast runs in :mod:`numbacast.engine.arrays`; texts go to
:mod:`numbacast.text.strings`, packed results to :mod:`numbacast.packing` and
Dask arrays to :mod:`numbacast.integrations.dask_array`.
"""

from __future__ import annotations

import functools
import importlib
import secrets
from types import SimpleNamespace
from typing import Any

import numpy as np
import numpy.typing as npt

from .formats.registry import TypeLike, resolve


def _on_first_use(module: str, name: str) -> Any:
    """A function calling ``module.name``, importing ``module`` on its first call."""

    @functools.cache
    def function():
        return getattr(importlib.import_module(module, __package__), name)

    def call(*args, **kwargs):
        return function()(*args, **kwargs)

    return call


@functools.cache
def runtime() -> Any:
    """The modules a cast runs in: Numba and the numeric engine on the first
    call (``import numbacast`` does not import Numba, a third of a second),
    the text, packing and Dask layers on the first call that needs them."""
    from numba import config  # (first: its import hooks then find no half-imported numbacast module)

    if config.DISABLE_JIT:  # type: ignore[attr-defined]  # set from the environment, not declared
        raise RuntimeError(
            "numbacast runs compiled kernels, and NUMBA_DISABLE_JIT is set: unset it to cast (to run a function "
            "of yours uncompiled, call its .py_func instead)"
        )
    from .engine import checks
    from .engine.arrays import cast_numbers, plan_of
    from .engine.rounding import seed_key

    return SimpleNamespace(
        checks=checks,
        cast_numbers=cast_numbers,
        plan_of=plan_of,
        cast_lazily=_on_first_use(".integrations.dask_array", "cast_lazily"),
        quantize_lazily=_on_first_use(".integrations.dask_array", "quantize_lazily"),
        dequantize_lazily=_on_first_use(".integrations.dask_array", "dequantize_lazily"),
        largest_lazily=_on_first_use(".integrations.dask_array", "largest_lazily"),
        cast_packed=_on_first_use(".packing", "cast_packed"),
        cast_text=_on_first_use(".text.strings", "cast_text"),
        pack=_on_first_use(".packing", "pack"),
        seed_key=seed_key,
    )


#: The casts of a plain ndarray made so far, by the type and value of ``to``,
#: the dtype and the options: each holds ``(plan, target)``, the
#: :class:`numbacast.engine.arrays.Plan` that repeats it and the resolved
#: ``to``, which a later call with the same key runs at once, without the
#: checks its first call passed (two thirds of a small call's time); only a
#: plain ndarray ``out`` is checked again (its own dtype, shape and flags).
_CASTS_MADE: dict = {}


def cast(
    x: npt.ArrayLike,
    to: TypeLike,
    *,
    saturate: bool = True,
    round_mode: str | None = None,
    out: np.ndarray | None = None,
    packed: bool = False,
    rounding: str | None = None,
    seed: int | None = None,
    stochastic_bits: int | None = None,
    random_bits: npt.ArrayLike | None = None,
    source: TypeLike | None = None,
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
    to : str, int, dtype, FloatType or FloatFormat
        The target type: an ONNX name in any case (``"float8e4m3fn"``,
        ``"FLOAT"``, ``"double"``, ``"string"``), an ONNX id (``17``), a
        type constant (``numbacast.FLOAT8E4M3FN``) or a dtype (``str`` for
        STRING) -- or a float format that is not an ONNX type: a
        :class:`numbacast.FloatType` (:func:`numbacast.p3109`,
        :func:`numbacast.gfloat_format`, ``numbacast.FLOAT8_E4M3`` ...) or a
        :class:`numbacast.FloatFormat`, whose casts return its codes (uint8
        or uint16) or its ml_dtypes array.
    saturate : bool
        For the float8 targets and FLOAT8E8M0: out-of-range values and
        infinities give the largest finite value (True, the default) instead of
        inf or NaN.  Other targets ignore it.
    round_mode : {"up", "down", "nearest"}, optional
        How FLOAT8E8M0 rounds (default "up", the ONNX attribute); other
        targets ignore it.  The same as ``rounding`` "toward_positive",
        "toward_zero" and "nearest_away" (FLOAT8E8M0 casts magnitudes): giving
        both, in disagreement, is a ValueError.
    out : numpy.ndarray, optional
        Where to write the result: an array of the shape of ``x`` and exactly
        the target's storage dtype (for STRING, any ``<U`` dtype wide enough
        for the longest text), writeable, any strides.  Checked before
        anything is written.  Not with a Dask array.
    packed : bool
        For the sub-byte targets (INT4, UINT4, FLOAT4E2M1, INT2, UINT2,
        FLOAT6E2M3, FLOAT6E3M2): return the ONNX wire bytes of the result (see
        :func:`numbacast.pack`), cast and packed in one pass.
    rounding : str, optional
        How a float target rounds, and how a float is rounded to an integer
        for an integer target: "nearest_even", "nearest_away",
        "toward_zero", "toward_positive", "toward_negative" (IEEE 754's
        modes) or "stochastic" (up or down at random, with the probability
        that makes the mean exact).  Default: ONNX's rule, "nearest_even"
        for float targets, "toward_zero" for integer targets ("nearest_even"
        for the 4- and 2-bit ones).  Overflow follows the mode and
        ``saturate``; bool targets, and integer targets from integers,
        round nothing.  See the rounding rules in docs/rules.md.
    seed : int, optional
        For "stochastic": the random numbers of element ``i`` (in C order)
        depend only on ``seed`` and ``i``, so the same seed gives the same bits
        whatever the threads, strides, ``out`` or Dask chunks.  Default: a
        fresh seed for each call.
    stochastic_bits : int, optional
        For "stochastic": random bits per element, 1 to 64 (default 64: the
        probabilities are exact; or the width of ``random_bits``'s dtype).
    random_bits : array_like of unsigned integers, optional
        For "stochastic", instead of ``seed``: the random number of each
        element (the shape of ``x``, each below ``2**stochastic_bits``), as
        gfloat's ``round_float(..., RoundMode.Stochastic, srbits=, srnumbits=)``
        takes them.
    source : type, optional
        The type of the elements of ``x`` when its dtype does not say: for
        the codes (uint8 or uint16) of a :class:`numbacast.FloatType`, or the
        codes of any narrow type.  Default: the type of ``x.dtype``.

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
    made = None  # the key of this call in _CASTS_MADE, when it can be one
    if (
        type(x) is np.ndarray
        and (out is None or type(out) is np.ndarray)
        and packed is False
        and seed is stochastic_bits is random_bits is source is None
        and (saturate is True or saturate is False)
    ):
        made = (type(to), to, x.dtype, saturate, round_mode, rounding)
        try:
            plan_and_target = _CASTS_MADE.get(made)
        except TypeError:  # something unhashable: the checks below name it
            plan_and_target = made = None
        if plan_and_target is not None:
            return _repeat(plan_and_target, x, out)
    options = dict(
        saturate=saturate,
        round_mode=round_mode,
        rounding=rounding,
        seed=seed,
        stochastic_bits=stochastic_bits,
        random_bits=random_bits,
        source=source,
    )
    target = resolve(to)
    run = runtime()
    checks = run.checks
    source_type = None if source is None else resolve(source)
    saturate, packed = checks.check_saturate(saturate), checks.check_packed(packed)
    rounding, round_mode = checks.check_rounding(rounding, round_mode, target)
    seed, stochastic_bits = checks.check_stochastic(rounding, seed, stochastic_bits, random_bits)
    stochastic = {}
    if rounding == "stochastic":
        key = run.seed_key(secrets.randbits(64) if seed is None else seed)
        stochastic = dict(stochastic_bits=stochastic_bits, key=key, random_bits=random_bits)
    if out is not None and not checks.is_dask_array(x):
        checks.check_out_type(out)
    if checks.is_masked_array(x):
        return cast_masked(x, target, out, packed, options)
    if checks.is_dask_array(x):
        if packed:
            checks.refuse_dask(x, "numbacast.cast(..., packed=True)")
        return run.cast_lazily(x, target, saturate, round_mode, out, rounding, source=source_type, **stochastic)
    array = np.asarray(x)
    if target.is_string or array.dtype.kind in "USO":
        if source_type is not None:
            raise TypeError("source= is for numeric arrays; cast the codes to a numeric type first")
        if packed:
            raise TypeError(
                "packed=True casts numbers into the sub-byte types; a cast of texts or into STRING is not packed "
                "(cast the texts to the numeric type first, then pack: numbacast.packing.pack)"
            )
        if stochastic:
            raise TypeError(
                "rounding='stochastic' casts numbers, not texts; cast the texts to DOUBLE first, then round that"
            )
        return run.cast_text(array, target, saturate, round_mode, out, rounding)
    if packed:
        if stochastic:
            if out is not None:
                raise ValueError("out= cannot be combined with packed=True")
            return run.pack(
                run.cast_numbers(array, target, saturate, round_mode, None, rounding, source=source_type, **stochastic)
            )
        source_type = checks.check_source(array, source_type)
        return run.cast_packed(array, target, saturate, round_mode, out, rounding, source_type)
    if made is not None and not stochastic and array.dtype.isnative:
        plan_and_target = _CASTS_MADE[made] = run.plan_of(array, target, saturate, round_mode, rounding), target
        return _repeat(plan_and_target, array, out)
    return run.cast_numbers(array, target, saturate, round_mode, out, rounding, source=source_type, **stochastic)


def _repeat(plan_and_target, x, out):
    """A cast kept in :data:`_CASTS_MADE` of the plain ndarray ``x`` into a
    new array or ``out`` (a plain ndarray, checked here)."""
    plan, target = plan_and_target
    if out is None:
        return plan.new(x)
    runtime().checks.check_out(out, x.shape, target)
    return plan.into(x, out)


def cast_masked(x, target, out, packed, options):
    """:func:`cast` of the masked array ``x`` (``options`` as the caller gave
    them): a masked array holding the cast of its data, with a copy of its
    mask, as ``x.astype`` gives.  Texts under the mask are not read (they are
    taken as "0"), so they cannot fail the cast.  The fill value is the cast
    of ``x``'s, or zero when that cannot be cast."""
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
    result = cast(data, target, **options)
    fill_options = {**options, "random_bits": None} if options["random_bits"] is not None else options
    try:
        fill = cast(np.array(x.fill_value, x.dtype), target, **fill_options)
    except (TypeError, ValueError, OverflowError):
        fill = None if target.is_string else np.zeros((), target.storage)
    return ma.MaskedArray(result, mask=mask, fill_value=fill)
