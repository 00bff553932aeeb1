"""``numbacast.cast`` inside ``@njit`` code.

A user's ``@njit`` (or ``@njit(parallel=True)``) function may call
``numbacast.cast(array, to)`` with ``to`` a literal type name or ONNX id, or
a dtype (``other.dtype``, ``np.float32``, ``ml_dtypes.bfloat16``) and,
if given, literal ``saturate``, ``round_mode``, ``rounding`` and
``stochastic_bits``, an integer ``seed`` (a run-time value) or a
``random_bits`` array, and an ``out=`` array.  The call compiles to the same
kernel as the Python call (the same table-or-compute choice,
:func:`numbacast.engine.arrays.uses_table`; for stochastic rounding the same
kernel over the element indices of the whole array) and gives the same bits.
A stochastic cast needs ``seed`` or ``random_bits`` there (the Python call
draws a fresh seed from the operating system; ``@njit`` code has no source
but the user's own ``np.random``, whose draws numbacast does not take).  The
literal options are checked when the function compiles, the run-time values
(a negative seed, ``random_bits`` of another shape or too wide) when it runs,
with the Python call's messages.

Arrays are typed as in Python: importing numbacast makes every ml_dtypes
dtype of an ONNX type a Numba type (:mod:`numbacast.integrations.numba_types`),
so the result of a cast to FLOAT8E4M3FN is a ``float8_e4m3fn`` array, as
the Python call returns; ``result.view(np.uint8)`` gives its storage codes.

The options are checked when the function compiles, by the checks of the
Python call and with their messages (:mod:`numbacast.engine.checks`):
``saturate="no"`` or ``saturate=2`` is a compile-time error, never taken as
True.  ``packed=True`` is for Python calls only.
"""

import numpy as np
from numba import types
from numba.core import errors
from numba.extending import overload
from numba.np.numpy_support import from_dtype

from ..api import cast
from ..engine.arrays import table, uses_table
from ..engine.cache import OVERLOAD_OPTIONS, helper_jitable
from ..engine.checks import check_packed, check_rounding, check_saturate
from ..engine.conversion import Conversion, kernel_dtype
from ..engine.kernels import cast_kernel
from ..engine.scratch import new_array
from ..engine.stochastic import RANDOM_BITS_SHAPE, RANDOM_BITS_TOO_WIDE, stochastic_any
from ..formats.registry import FLOAT16, resolve
from . import elements, reductions  # noqa: F401  (register the element operators and casts, and the reductions)
from .flat_arrays import reshaped_view, retyped_view, unused_table
from .njit_arguments import (
    WordedError,
    absent,
    check_seed,
    key,
    literal,
    no_key,
    require_random_source,
    stochastic_options,
)
from .numba_types import as_dtype

#: The dtype of the row starts a stochastic kernel takes (a constant of the compiled code).
_STARTS = np.dtype(np.int64)


#: Numba compiles no float16 scalars or arrays for the CPU.
NO_FLOAT16 = (
    "{what} in @njit code has no FLOAT16: Numba has no float16 scalars or arrays in CPU code. Cast to FLOAT16 "
    "in Python, or to 'float' (which holds every float16 value exactly) or 'bfloat16' in @njit code"
)
_NUMBERS_ONLY = "numbacast.cast in @njit code casts numbers only; cast to or from STRING in Python"


def _source_type(x):
    try:
        source = resolve(as_dtype(x.dtype))
    except (ValueError, TypeError, errors.NumbaNotImplementedError) as error:
        raise ValueError(f"numbacast.cast in @njit code cannot cast an array of {x.dtype}: {error}") from None
    if source.is_string:
        raise ValueError(_NUMBERS_ONLY)
    return source


def _target_type(to):
    if isinstance(to, (types.DType, types.NumberClass)):  # a dtype, such as x.dtype or np.float32
        target = resolve(as_dtype(to.dtype))
    else:
        target = resolve(to.literal_value)
    if target.is_string:
        raise ValueError(_NUMBERS_ONLY)
    if target is FLOAT16:
        raise TypeError(NO_FLOAT16.format(what="numbacast.cast"))
    return target


def _check_out(out, x, target):
    expected = from_dtype(target.storage)
    if not isinstance(out, types.Array):
        raise TypeError(f"out must be a numpy.ndarray, not {out}")
    if out.dtype != expected:
        raise TypeError(f"out has dtype {out.dtype}; a cast to {target.onnx_name} needs dtype {target.storage}")
    if out.ndim != x.ndim:
        raise ValueError(f"out has {out.ndim} dimensions; the input has {x.ndim}")
    if not out.mutable:
        raise ValueError("out is read-only")


@helper_jitable
def _bounds(a):
    """[first byte, last byte + 1) of the memory an array spans."""
    low = high = a.ctypes.data
    for axis in range(a.ndim):
        reach = (a.shape[axis] - 1) * a.strides[axis]
        if reach > 0:
            high += reach
        else:
            low += reach
    return low, high + a.itemsize


@helper_jitable
def _overlap(a, b):
    if a.size == 0 or b.size == 0:
        return False
    a_low, a_high = _bounds(a)
    b_low, b_high = _bounds(b)
    return a_low < b_high and b_low < a_high


def _table(table):
    """The table argument of a kernel: ``table``, or for None an unused one typed as
    :data:`~numbacast.engine.kernels.NO_TABLE` (:func:`~numbacast.integrations.flat_arrays.unused_table`)."""


@overload(_table, jit_options=OVERLOAD_OPTIONS)
def _overload_table(table):
    if isinstance(table, types.NoneType):
        return lambda table: unused_table()
    return lambda table: table


def _random_numbers(random_bits, shape, bits):
    """``random_bits`` checked against the input's ``shape`` and ``bits`` as
    the Python call checks them, and flattened; or None (``@njit`` only)."""


@overload(_random_numbers, jit_options=OVERLOAD_OPTIONS)
def _overload_random_numbers(random_bits, shape, bits):
    if absent(random_bits):
        return lambda random_bits, shape, bits: None

    def flat(random_bits, shape, bits):
        if random_bits.shape != shape:
            raise WordedError(RANDOM_BITS_SHAPE, random_bits.shape, shape)
        numbers = np.ascontiguousarray(random_bits).reshape(-1)
        if bits < 64 and numbers.size and np.uint64(numbers.max()) >> np.uint64(bits) != 0:
            raise WordedError(RANDOM_BITS_TOO_WIDE, bits, numbers.max())
        return numbers

    return flat


def _may_write_over(random_bits, out):
    """Whether writing ``out`` could change ``random_bits`` (``@njit`` only)."""


@overload(_may_write_over, jit_options=OVERLOAD_OPTIONS)
def _overload_may_write_over(random_bits, out):
    if absent(random_bits):
        return lambda random_bits, out: False
    return lambda random_bits, out: _overlap(random_bits, out)


@overload(cast, prefer_literal=True, jit_options=OVERLOAD_OPTIONS)
def _overload_cast(
    x,
    to,
    saturate=True,
    round_mode=None,
    out=None,
    packed=False,
    rounding=None,
    seed=None,
    stochastic_bits=None,
    random_bits=None,
):
    if not isinstance(x, types.Array) or not isinstance(to, (types.Literal, types.DType, types.NumberClass)):
        return None
    target, source = _target_type(to), _source_type(x)
    saturate = check_saturate(literal(saturate, "saturate"))
    rounding, round_mode = check_rounding(literal(rounding, "rounding"), literal(round_mode, "round_mode"), target)
    bits = stochastic_options(rounding, seed, stochastic_bits, random_bits, x)
    if check_packed(literal(packed, "packed")):
        raise ValueError(
            "numbacast.cast(..., packed=True) is for Python calls; in @njit code, cast and call numbacast.pack in "
            "Python, or cast to the typed array and view its codes"
        )
    conversion = Conversion.make(source, target, saturate, round_mode, rounding=rounding, stochastic_bits=bits)
    require_random_source(conversion, seed, random_bits)
    result_dtype, result_codes = target.storage, kernel_dtype(target)
    # The kernels are called with the argument types of the Python call (a read-only table, a writeable
    # NO_TABLE, fresh starts), so that both use one compiled kernel, from the disk cache.
    if conversion.stochastic:
        codes = kernel_dtype(source)

        key_of = key if absent(random_bits) else no_key

        @helper_jitable
        def apply(src, dst, seed, random_bits, shape):
            random = _random_numbers(random_bits, shape, bits)
            starts, row_length = new_array((1,), _STARTS), np.int64(max(src.size, 1))
            starts[0] = 0
            stochastic_any(src, dst, conversion, key_of(seed), starts, row_length, random)

    else:
        if uses_table(conversion):
            codes, codes_table, step = np.dtype(f"u{source.storage.itemsize}"), table(conversion), None
        else:
            codes, codes_table, step = kernel_dtype(source), None, conversion

        @helper_jitable
        def apply(src, dst, seed, random_bits, shape):
            check_seed(seed)  # given with rounding='stochastic' into a type that holds every value exactly
            cast_kernel(src, dst, step, _table(codes_table))

    if not absent(out):
        _check_out(out, x, target)
    direct = not absent(out) and out.layout == "C"
    contiguous = x.layout == "C"

    def impl(
        x,
        to,
        saturate=True,
        round_mode=None,
        out=None,
        packed=False,
        rounding=None,
        seed=None,
        stochastic_bits=None,
        random_bits=None,
    ):
        # (branches on contiguous, direct and out's type: Numba prunes them when it compiles)
        src = reshaped_view(x if contiguous else np.ascontiguousarray(x), (x.size,), codes)
        if out is None:
            result = new_array(x.shape, result_dtype)
            apply(src, reshaped_view(result, (x.size,), result_codes), seed, random_bits, x.shape)
            return result
        if out.shape != x.shape:
            raise ValueError("out has a different shape from the input")
        if direct:
            if not _overlap(src, out) and not _may_write_over(random_bits, out):
                apply(src, reshaped_view(out, (x.size,), result_codes), seed, random_bits, x.shape)
                return out
        result = new_array(x.shape, result_dtype)
        codes_result = reshaped_view(result, (x.size,), result_codes)
        apply(src, codes_result, seed, random_bits, x.shape)
        codes_out = retyped_view(out, result_codes)
        for i, index in enumerate(np.ndindex(x.shape)):  # (out[...] = result compiled Numba's shape-mismatch text)
            codes_out[index] = codes_result[i]
        return out

    return impl
