"""NumPy's reductions of ml_dtypes arrays in ``@njit`` code, with the results
NumPy 2 with ml_dtypes gives (measured; ``tests/test_reductions.py`` compares
each one with NumPy for every type, NaN included, and ``docs/numba-types.md``
states the rules for users).

Numba's own versions compile for these arrays from the element operators,
but give other answers: its ``np.cumsum`` starts from the code of 0 (NaN for
FLOAT8E8M0, so that every sum was NaN; +0 for the other types, which turned
a leading -0 into +0), ``np.max`` and ``np.argmax`` skip NaN, ``np.mean``
rounds the count into the type (and does not compile for INT4), and
``np.median`` answers in float64.  The overloads here are registered for the
CPU target, which Numba tries before its own generic ones, on NumPy's
functions and on the functions behind Numba's array methods (``a.sum()``
calls the overloads of ``numba.np.arraymath.array_sum``).

The rules, ``T`` the array's type:

* ``np.sum(a)``, ``a.sum()``, ``np.nansum``: a ``T``: NumPy's identity 0
  stored into ``T`` (NaN for FLOAT8E8M0, whose sum is therefore NaN), then
  each element added (``x + y`` of :mod:`~numbacast.integrations.elements`)
  in the order of NumPy's reduction (:func:`_numpy_axis_order`: by
  decreasing stride, as ``a.ravel(order="K")``, but broadcast axes in C order);
  ``np.sum(a, axis=k)``: each line along axis ``k``, in index order.
  ``np.prod``, ``np.nanprod``: the same from 1, multiplying.  (NumPy's
  nan-functions do not skip NaN for these types.)
* ``np.cumsum(a)``, ``np.cumprod``, ``np.nancumsum``, ``np.nancumprod``: the
  flattened array in C order, from its first element, with no identity;
  ``np.cumsum(a, axis=k)``: each line along axis ``k``.
* ``np.max``, ``np.min`` (``np.amax``, ``a.max()`` ...): the first NaN in
  that order, else the largest (smallest) element, of equal ones
  the last (ml_dtypes' ``maximum``); ``np.nanmax``, ``np.nanmin`` skip NaN
  (``fmax``).  For INT4, UINT4, INT2 and UINT2 the result is an ``int8``, as
  NumPy computes it in int8.  ``np.ptp`` is ``np.max(a) - np.min(a)``.  An
  empty array is NumPy's ValueError.
* ``np.argmax``, ``np.argmin``, ``np.nanargmax``, ``np.nanargmin``: the C
  order index of the first NaN, else of the first largest (smallest)
  element (ml_dtypes' ``argmax``, which NumPy's nan-functions call too).
* ``np.mean``, ``np.nanmean``: ``np.sum(a)`` divided by the count in float64,
  then converted as ``T(v)`` converts a NumPy float64 in Python: rounded
  once (twice, through float32, for BFLOAT16); the integer types truncate,
  and their mean of an empty array is NumPy's ValueError.

Other arguments (``dtype=``, a tuple ``axis``) and the statistics that
NumPy computes in ``T`` step by step (``np.var``, ``np.std``, ``np.median``,
the percentiles ...) are refused when the function compiles, by a TypeError
that says what to write instead -- a TypeError, because on a Numba typing
error Numba would go on to compile its own version.

In ``@njit(parallel=True)`` code Numba swaps ``np.max``, ``np.argmax`` ...
for parallel versions of its own after typing (the table
``numba.parfors.parfor.swap_functions_map``), whose order and NaN rules are
not NumPy's (for these arrays they did not compile, failing inside Numba):
each entry of that table is wrapped to decline element arrays, whose calls
stay the serial overloads here.
"""

import functools
import operator

import numpy as np
from numba import types
from numba.core.errors import NumbaTypeError
from numba.extending import overload
from numba.np import arraymath
from numba.parfors import parfor

from ..engine.conversion import Conversion, scalar_converter
from ..engine.scratch import new_array, new_like
from ..formats.registry import BFLOAT16, DOUBLE, FLOAT8E8M0
from .elements import JIT_OPTIONS, jitable, storer
from .flat_arrays import permuted_view
from .numba_types import Element, ForeignElement, IntElement, element_of


def _element_array(a):
    """The :class:`Element` of an array of an ml_dtypes type, or None; an
    array of an ml_dtypes type that is no ONNX type is refused."""
    if not isinstance(a, types.Array):
        return None
    if isinstance(a.dtype, ForeignElement):
        raise NumbaTypeError(a.dtype.refusal())
    return a.dtype if isinstance(a.dtype, Element) else None


def _overloads(*functions):
    """Register the decorated typer as the CPU target's overload of each of
    ``functions`` (NumPy's functions and the functions behind Numba's array
    methods): Numba tries it before its own, generic, overloads."""

    def register(typer):
        for function in functions:
            overload(function, target="cpu", jit_options=JIT_OPTIONS)(typer)
        return typer

    return register


def _refuse(what, element, instead):
    raise TypeError(
        f"numbacast: {what} of {element} arrays is not supported in @njit code, which would not give "
        f"NumPy's result. Write instead: {instead}"
    )


def _is_none(argument):
    return argument is None or isinstance(argument, (types.NoneType, types.Omitted))


def _check_arguments(name, element, axis, dtype):
    """Refuse a ``dtype`` and an ``axis`` that is not an integer."""
    if not _is_none(dtype):
        _refuse(f"np.{name}(a, dtype=...)", element, f"np.{name}(numbacast.cast(a, 'float')), in float32")
    if not (_is_none(axis) or isinstance(axis, types.Integer)):
        _refuse(f"np.{name}(a, axis={axis})", element, f"np.{name}(a) or np.{name}(a, axis=k), k an integer")


#: The dtype of the arrays of axes given to permuted_view (a constant of the compiled code).
_AXES = np.dtype(np.intp)


@jitable
def _lines(a, axis):
    """``np.moveaxis(a, axis, -1)``: ``a[index]`` is a line along ``axis``, for
    ``index`` in ``np.ndindex`` of the other axes, in their order; NumPy's
    AxisError for an axis out of bounds."""
    if axis < -a.ndim or axis >= a.ndim:
        raise np.exceptions.AxisError(axis, a.ndim)  # NumPy words it: no string formatting compiled
    order = new_array((a.ndim,), _AXES)
    order[-1] = axis % a.ndim
    others = 0
    for i in range(a.ndim):
        if i != order[-1]:
            order[others] = i
            others += 1
    return permuted_view(a, order)


# --------------------------------------------------------------------------
# NumPy's order
# --------------------------------------------------------------------------


@jitable
def _same(a):
    return a


@jitable
def _numpy_axis_order(strides):
    """The axes, outermost first, as NumPy's iterator nests them in a
    reduction (``npyiter_find_best_axis_ordering``): an insertion sort of
    the axes, innermost first, by stride magnitude, in which an axis of
    stride 0 (broadcast) compares with none -- so by decreasing stride, ties
    and broadcast axes in C order; a negative stride is walked as it is."""
    order = new_array((len(strides),), _AXES)
    for i in range(len(order)):
        order[i] = len(order) - 1 - i
    for i in range(1, len(order)):
        axis, stride, place = order[i], abs(strides[order[i]]), i
        for j in range(i - 1, -1, -1):
            other = abs(strides[order[j]])
            if stride != 0 and other != 0:
                if other <= stride:
                    break
                place = j
        for k in range(i, place, -1):
            order[k] = order[k - 1]
        order[place] = axis
    return order[::-1].copy()


@jitable
def _in_numpy_order(a):
    """``a`` with its axes in NumPy's reduction order: its C order is the order in which NumPy reduces ``a``."""
    return permuted_view(a, _numpy_axis_order(a.strides))


def _walk(array_type):
    """The function giving an array whose C order is NumPy's reduction order."""
    return _same if array_type.ndim < 2 or array_type.layout == "C" else _in_numpy_order


# --------------------------------------------------------------------------
# Sums and products
# --------------------------------------------------------------------------


@functools.cache
def _fold(element, step, identity):
    """``fold(values)``: ``identity`` stored into the type, then ``step(total, x)`` for each value in C order."""
    first = element.numpy_dtype.type(identity)

    @jitable
    def fold(values):
        total = first
        for x in values.flat:
            total = step(total, x)
        return total

    return fold


def _reduction(step, identity):
    """The typer of NumPy's reduction ``f(a)`` by ``step``, from ``identity``
    (Numba's ``np.prod(a)``, ``np.nansum(a)``, ``a.prod()`` take no other argument)."""

    def typer(a):
        element = _element_array(a)
        if element is None:
            return None
        fold, walk = _fold(element, step, identity), _walk(a)
        return lambda a: fold(walk(a))

    return typer


def _sum(a, axis=None, dtype=None):
    """``np.sum(a, axis=None, dtype=None)``: the reduction, or one along an integer axis."""
    element = _element_array(a)
    if element is None:
        return None
    _check_arguments("sum", element, axis, dtype)
    fold, walk = _fold(element, operator.add, 0), _walk(a)
    if _is_none(axis):
        return lambda a, axis=None, dtype=None: fold(walk(a))
    if a.ndim == 1:
        return lambda a, axis=None, dtype=None: fold(_lines(a, axis))

    def along(a, axis=None, dtype=None):
        lines = _lines(a, axis)
        out = new_array(lines.shape[:-1], a.dtype)
        for index in np.ndindex(out.shape):
            out[index] = fold(lines[index])
        return out

    return along


_overloads(np.sum, arraymath.array_sum)(_sum)
_overloads(np.nansum)(_reduction(operator.add, 0))
_overloads(np.prod, np.nanprod, arraymath.array_prod)(_reduction(operator.mul, 1))


@functools.cache
def _running(step):
    """``running(values, out)``: NumPy's accumulation of a line by ``step``, from its first element."""

    @jitable
    def running(values, out):
        for i in range(len(values)):
            out[i] = values[i] if i == 0 else step(out[i - 1], values[i])

    return running


@functools.cache
def _flattened(running):
    """``flattened(a)``: ``running`` over the flattened array, in C order."""

    @jitable
    def flattened(a):
        out = new_like(a.size, a)
        running(a.ravel(), out)
        return out

    return flattened


def _accumulation(step):
    """The typer of NumPy's accumulation ``f(a)`` by ``step`` of the flattened
    array (Numba's ``np.cumprod(a)``, ``np.nancumsum(a)`` take no other argument)."""
    flattened = _flattened(_running(step))

    def typer(a):
        if _element_array(a) is None:
            return None
        return lambda a: flattened(a)

    return typer


_running_sum = _running(operator.add)
_flattened_sum = _flattened(_running_sum)


def _cumsum(a, axis=None, dtype=None):
    """``np.cumsum(a, axis=None, dtype=None)``: of the flattened array, or along an integer axis."""
    element = _element_array(a)
    if element is None:
        return None
    _check_arguments("cumsum", element, axis, dtype)
    if _is_none(axis):
        return lambda a, axis=None, dtype=None: _flattened_sum(a)

    def along(a, axis=None, dtype=None):
        out = new_array(a.shape, a.dtype)
        lines, out_lines = _lines(a, axis), _lines(out, axis)
        for index in np.ndindex(lines.shape[:-1]):
            _running_sum(lines[index], out_lines[index])
        return out

    return along


_overloads(np.cumsum, arraymath.array_cumsum)(_cumsum)
_overloads(np.nancumsum)(_accumulation(operator.add))
_overloads(np.cumprod, np.nancumprod, arraymath.array_cumprod)(_accumulation(operator.mul))


# --------------------------------------------------------------------------
# Extrema
# --------------------------------------------------------------------------


@jitable
def _maximum(best, x):
    """ml_dtypes' ``maximum``: NaN wins, and of equal values the later."""
    return best if best != best or best > x else x


@jitable
def _minimum(best, x):
    return best if best != best or best < x else x


@jitable
def _fmax(best, x):
    """ml_dtypes' ``fmax``: NaN loses, and of equal values the later."""
    return best if x != x or best > x else x


@jitable
def _fmin(best, x):
    return best if x != x or best < x else x


def _extremum_result(element):
    """NumPy's type for the extrema: ``T``, or int8 for the integer types (computed in int8)."""
    return np.int8 if isinstance(element, IntElement) else _same


@functools.cache
def _extremum_loop(ufunc_name, step, walk, result):
    """``extremum(a)``: the reduction by ``step`` in NumPy's order (``walk``), as ``result``."""
    empty = f"zero-size array to reduction operation {ufunc_name} which has no identity"

    @jitable
    def extremum(a):
        if a.size == 0:
            raise ValueError(empty)
        values = walk(a)
        best = values.flat[0]
        for x in values.flat:
            best = step(best, x)
        return result(best)

    return extremum


def _extremum(ufunc_name, step):
    """The typer of NumPy's reduction by ``ufunc_name``, which has no identity
    (its loop compiled once per array type, whichever of NumPy's names calls it)."""

    def typer(a):
        element = _element_array(a)
        if element is None:
            return None
        extremum = _extremum_loop(ufunc_name, step, _walk(a), _extremum_result(element))
        return lambda a: extremum(a)

    return typer


_overloads(np.max, np.amax, arraymath.npy_max)(_extremum("maximum", _maximum))
_overloads(np.min, np.amin, arraymath.npy_min)(_extremum("minimum", _minimum))
_overloads(np.nanmax)(_extremum("fmax", _fmax))
_overloads(np.nanmin)(_extremum("fmin", _fmin))


@_overloads(np.ptp)
def _ptp(a):
    element = _element_array(a)
    if element is None:
        return None
    result = _extremum_result(element)
    return lambda a: result(np.max(a) - np.min(a))


@functools.cache
def _arg_extremum_loop(name, better):
    """``arg_extremum(a)``: ml_dtypes' loop, in C order."""
    empty = f"attempt to get {name} of an empty sequence"

    @jitable
    def arg_extremum(a):
        if a.size == 0:
            raise ValueError(empty)
        best, found = np.float32(np.nan), 0  # the first element is taken
        for i, x in enumerate(a.flat):
            value = np.float32(x)
            if better(value, best):
                best, found = value, i
                if value != value:
                    break
        return found

    return arg_extremum


def _arg_extremum(name, better):
    """The typer of ``np.<name>(a, axis=None)`` (its loop compiled once per array type)."""

    def typer(a, axis=None):
        element = _element_array(a)
        if element is None:
            return None
        if not _is_none(axis):
            _refuse(f"np.{name}(a, axis=...)", element, f"np.{name}(numbacast.cast(a, 'float'), axis=...)")
        arg_extremum = _arg_extremum_loop(name, better)
        return lambda a, axis=None: arg_extremum(a)

    return typer


_overloads(np.argmax, np.nanargmax, arraymath.array_argmax)(
    _arg_extremum("argmax", jitable(lambda value, best: not value <= best))
)
_overloads(np.argmin, np.nanargmin, arraymath.array_argmin)(
    _arg_extremum("argmin", jitable(lambda value, best: not value >= best))
)


# --------------------------------------------------------------------------
# Mean
# --------------------------------------------------------------------------


@functools.cache
def _from_float64(element):
    """``T(v)`` of a NumPy float64 ``v`` in Python, for the quotients of
    ``np.mean``: rounded once to nearest even; BFLOAT16's constructor goes
    through float32, and NaN and the infinities convert as an assignment
    stores them (FLOAT8E8M0's sum, so its mean, is NaN)."""
    stored = storer(element, "f64")
    if isinstance(element, IntElement) or element.onnx_type in (BFLOAT16, FLOAT8E8M0):
        return stored
    once = scalar_converter(Conversion.make(DOUBLE, element.onnx_type, saturate=False))
    scalar_class = element.numpy_dtype.type

    @jitable
    def convert(v):
        if np.isfinite(v):
            return element_of(once(v), scalar_class)
        return stored(v)

    return convert


@_overloads(np.mean, np.nanmean, arraymath.array_mean)
def _mean(a):
    """NumPy's ``_mean``: ``T(np.sum(a) / np.intp(a.size))``."""
    element = _element_array(a)
    if element is None:
        return None
    convert = _from_float64(element)
    if isinstance(element, IntElement):

        def integer_mean(a):
            if a.size == 0:
                raise ValueError("cannot convert float NaN to integer")
            return convert(np.float64(np.sum(a)) / a.size)

        return integer_mean
    return lambda a: convert(np.float64(np.sum(a)) / np.float64(a.size))


# --------------------------------------------------------------------------
# Refused
# --------------------------------------------------------------------------

_REFUSED = (
    np.var,
    np.std,
    np.nanvar,
    np.nanstd,
    np.median,
    np.nanmedian,
    np.percentile,
    np.nanpercentile,
    np.quantile,
    np.nanquantile,
    np.average,
)


def _refusal(name):
    def typer(a, *args, **kwargs):
        element = _element_array(a)
        if element is not None:
            _refuse(f"np.{name}", element, f"np.{name}(numbacast.cast(a, 'float'), ...), computed in float32")

    return typer


for _function in _REFUSED:
    overload(_function, target="cpu")(_refusal(_function.__name__))
overload(arraymath.array_var, target="cpu")(_refusal("var"))
overload(arraymath.array_std, target="cpu")(_refusal("std"))


# --------------------------------------------------------------------------
# parallel=True
# --------------------------------------------------------------------------


def _declining_element_arrays(parallel_version):
    """Numba's ``parallel_version(return_type, *argument_types)`` of a NumPy
    function, or None (no swap) where an argument is an ml_dtypes array."""

    def choose(return_type, *args, **kwargs):
        if any(isinstance(t, types.Array) and isinstance(t.dtype, (Element, ForeignElement)) for t in args):
            return None
        return parallel_version(return_type, *args, **kwargs)

    return choose


for _key, _version in list(parfor.swap_functions_map.items()):
    parfor.swap_functions_map[_key] = _declining_element_arrays(_version)
