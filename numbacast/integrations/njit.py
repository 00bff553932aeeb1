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
from ..engine.checks import SEED_RANGE, check_packed, check_rounding, check_saturate, check_stochastic
from ..engine.conversion import Conversion, kernel_dtype
from ..engine.kernels import cast_kernel
from ..engine.rounding import seed_key
from ..engine.scratch import new_array
from ..engine.stochastic import RANDOM_BITS_SHAPE, RANDOM_BITS_TOO_WIDE, check_random_bits, stochastic_any
from ..formats.registry import FLOAT16, resolve
from . import elements, reductions  # noqa: F401  (register the element operators and casts, and the reductions)
from .flat_arrays import reshaped_view, retyped_view, unused_table
from .numba_types import as_dtype

#: The dtype of the row starts a stochastic kernel takes (a constant of the compiled code).
_STARTS = np.dtype(np.int64)


def _literal(value, name):
    """The Python value of a literal (or omitted) argument."""
    if not isinstance(value, types.Type):  # the default of an omitted argument
        return value
    if isinstance(value, types.Omitted):
        return value.value
    if isinstance(value, types.Literal):
        return value.literal_value
    if isinstance(value, types.NoneType):
        return None
    raise errors.NumbaTypeError(
        f"numbacast in @njit code needs {name} as a literal constant (written in the call), not {value}"
    )


def _checked(check, value):
    """``check(value)``, its TypeError or ValueError raised as Numba's, with the same message."""
    try:
        return check(value)
    except TypeError as error:
        raise errors.NumbaTypeError(str(error)) from None
    except ValueError as error:
        raise errors.NumbaValueError(str(error)) from None


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
        raise errors.NumbaValueError(
            f"numbacast.cast in @njit code cannot cast an array of {x.dtype}: {error}"
        ) from None
    if source.is_string:
        raise errors.NumbaValueError(_NUMBERS_ONLY)
    return source


def _target_type(to):
    if isinstance(to, (types.DType, types.NumberClass)):  # a dtype, such as x.dtype or np.float32
        target = _checked(resolve, as_dtype(to.dtype))
    else:
        target = _checked(resolve, to.literal_value)
    if target.is_string:
        raise errors.NumbaValueError(_NUMBERS_ONLY)
    if target is FLOAT16:
        raise errors.NumbaTypeError(NO_FLOAT16.format(what="numbacast.cast"))
    return target


def _check_out(out, x, target):
    expected = from_dtype(target.storage)
    if not isinstance(out, types.Array):
        raise errors.NumbaTypeError(f"out must be a numpy.ndarray, not {out}")
    if out.dtype != expected:
        raise errors.NumbaTypeError(
            f"out has dtype {out.dtype}; a cast to {target.onnx_name} needs dtype {target.storage}"
        )
    if out.ndim != x.ndim:
        raise errors.NumbaValueError(f"out has {out.ndim} dimensions; the input has {x.ndim}")
    if not out.mutable:
        raise errors.NumbaValueError("out is read-only")


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


def _absent(value):
    """Whether an optional argument was left out (or is None)."""
    return value is None or isinstance(value, (types.NoneType, types.Omitted))


class _WordedError(ValueError):
    """A ValueError whose message Python words, ``template.format(*values)``,
    from the values ``@njit`` code raises it with: the Python call's message,
    where writing it in compiled code compiled Numba's integer-to-text and
    string joining (2.2 s of a first ``@njit`` stochastic cast)."""

    def __init__(self, template, *values):
        super().__init__(template.format(*values))


def _check_seed(seed):
    """ValueError, as the Python call raises it, for a negative ``seed`` (``@njit`` only)."""


@overload(_check_seed, jit_options=OVERLOAD_OPTIONS)
def _overload_check_seed(seed):
    if isinstance(seed, types.Integer) and seed.signed:

        def check(seed):
            if seed < 0:
                raise _WordedError(SEED_RANGE, seed)

        return check
    return lambda seed: None


@helper_jitable
def _key(seed):
    """The stochastic key of the integer ``seed``, checked (``@njit`` only)."""
    _check_seed(seed)
    return seed_key(np.uint64(seed))


@helper_jitable
def _no_key(seed):
    """The key of a cast that draws no random numbers of its own (unused)."""
    return np.uint64(0)


def _random_numbers(random_bits, shape, bits):
    """``random_bits`` checked against the input's ``shape`` and ``bits`` as
    the Python call checks them, and flattened; or None (``@njit`` only)."""


@overload(_random_numbers, jit_options=OVERLOAD_OPTIONS)
def _overload_random_numbers(random_bits, shape, bits):
    if _absent(random_bits):
        return lambda random_bits, shape, bits: None

    def flat(random_bits, shape, bits):
        if random_bits.shape != shape:
            raise _WordedError(RANDOM_BITS_SHAPE, random_bits.shape, shape)
        numbers = np.ascontiguousarray(random_bits).reshape(-1)
        if bits < 64 and numbers.size and np.uint64(numbers.max()) >> np.uint64(bits) != 0:
            raise _WordedError(RANDOM_BITS_TOO_WIDE, bits, numbers.max())
        return numbers

    return flat


def _may_write_over(random_bits, out):
    """Whether writing ``out`` could change ``random_bits`` (``@njit`` only)."""


@overload(_may_write_over, jit_options=OVERLOAD_OPTIONS)
def _overload_may_write_over(random_bits, out):
    if _absent(random_bits):
        return lambda random_bits, out: False
    return lambda random_bits, out: _overlap(random_bits, out)


def _stochastic_options(rounding, seed, stochastic_bits, random_bits, x):
    """``stochastic_bits`` checked as the Python call checks it (None when not
    stochastic): ``seed`` and ``random_bits`` are types here, their values
    are checked at run time."""
    if not (_absent(seed) or isinstance(seed, types.Integer)):
        raise errors.NumbaTypeError(f"seed must be an integer, not {seed}")
    seed_value = None if _absent(seed) else _literal(seed, "seed") if isinstance(seed, types.Literal) else 0
    random_value = None
    if not _absent(random_bits):
        if not isinstance(random_bits, types.Array):
            raise errors.NumbaTypeError(f"random_bits must be an array of unsigned integers, not {random_bits}")
        random_value = np.empty((0,) * random_bits.ndim, as_dtype(random_bits.dtype))
        _checked(lambda a: check_random_bits(a, a.shape, 64), random_value)  # its dtype, as in Python
        if random_bits.ndim != x.ndim:
            raise errors.NumbaValueError(f"random_bits has {random_bits.ndim} dimensions; the input has {x.ndim}")
    bits_value = _literal(stochastic_bits, "stochastic_bits")
    return _checked(lambda r: check_stochastic(r, seed_value, bits_value, random_value), rounding)[1]


def _require_random_source(conversion, seed, random_bits, wanted="seed= (an integer) or random_bits="):
    """A stochastic ``conversion`` in ``@njit`` code needs ``seed`` (or
    ``random_bits``): numbacast draws no seed there (the only source would be
    the user's ``np.random``, whose draws it would use up)."""
    if conversion.stochastic and _absent(seed) and _absent(random_bits):
        raise errors.NumbaTypeError(
            f"rounding='stochastic' in @njit code needs {wanted}: numbacast does not draw a seed of its own "
            "there, which would use up draws of your np.random"
        )


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
    saturate = _checked(check_saturate, _literal(saturate, "saturate"))
    rounding, round_mode = _checked(
        lambda r: check_rounding(r, _literal(round_mode, "round_mode"), target), _literal(rounding, "rounding")
    )
    bits = _stochastic_options(rounding, seed, stochastic_bits, random_bits, x)
    if _checked(check_packed, _literal(packed, "packed")):
        raise errors.NumbaValueError(
            "numbacast.cast(..., packed=True) is for Python calls; in @njit code, cast and call numbacast.pack in "
            "Python, or cast to the typed array and view its codes"
        )
    conversion = Conversion.make(source, target, saturate, round_mode, rounding=rounding, stochastic_bits=bits)
    _require_random_source(conversion, seed, random_bits)
    result_dtype, result_codes = target.storage, kernel_dtype(target)
    # The kernels are called with the argument types of the Python call (a read-only table, a writeable
    # NO_TABLE, fresh starts), so that both use one compiled kernel, from the disk cache.
    if conversion.stochastic:
        codes = kernel_dtype(source)

        key_of = _key if _absent(random_bits) else _no_key

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
            _check_seed(seed)  # given with rounding='stochastic' into a type that holds every value exactly
            cast_kernel(src, dst, step, _table(codes_table))

    if not _absent(out):
        _check_out(out, x, target)
    direct = not _absent(out) and out.layout == "C"
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
