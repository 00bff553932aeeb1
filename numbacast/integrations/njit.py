"""``numbacast.cast`` inside ``@njit`` code.

A user's ``@njit`` (or ``@njit(parallel=True)``) function may call
``numbacast.cast(array, to)`` with ``to`` a literal type name or ONNX id and,
if given, literal ``saturate`` and ``round_mode``.  The call compiles to the
same kernel as the Python call (the same table-or-compute choice,
:func:`numbacast.engine.arrays.uses_table`).  Inside ``@njit`` code an array holds Numba's
own dtypes, so the result is the kernel representation of the target: the
array itself for FLOAT, DOUBLE, BOOL and the standard integers, and the raw
storage codes (uint8, or uint16 for FLOAT16 and BFLOAT16) for the others --
the same bytes as the ml_dtypes array the Python call returns.
"""

import numpy as np
from numba import types
from numba.core import errors
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from ..api import cast
from ..engine.arrays import table, uses_table
from ..engine.conversion import Conversion, kernel_dtype
from ..engine.kernels import NO_TABLE, cast_kernel
from ..formats.registry import resolve


def _literal(value, name):
    """The Python value of a literal (or omitted) argument."""
    if not isinstance(value, types.Type):  # the default of an omitted argument
        return value
    if isinstance(value, types.Omitted):
        return value.value
    if isinstance(value, types.Literal):
        return value.literal_value
    raise errors.NumbaTypeError(f"numbacast.cast in @njit code needs {name} as a literal constant, not {value}")


@overload(cast, prefer_literal=True, jit_options={"nogil": True})
def _overload_cast(x, to, saturate=True, round_mode="up"):
    if not isinstance(x, types.Array) or not isinstance(to, types.Literal):
        return None
    try:
        target, source = resolve(to.literal_value), resolve(as_dtype(x.dtype))
        if target.is_string or source.is_string:
            raise ValueError("numbacast.cast in @njit code casts numbers only; cast to or from STRING in Python")
        conversion = Conversion.make(
            source, target, bool(_literal(saturate, "saturate")), _literal(round_mode, "round_mode")
        )
    except (ValueError, TypeError) as error:
        raise errors.NumbaValueError(str(error)) from None
    result_dtype = kernel_dtype(target)
    source = conversion.source
    if uses_table(conversion):
        codes, codes_table, step = np.dtype(f"u{source.storage.itemsize}"), table(conversion), None
    else:
        codes, codes_table, step = kernel_dtype(source), NO_TABLE, conversion

    def impl(x, to, saturate=True, round_mode="up"):
        result = np.empty(x.shape, result_dtype)
        cast_kernel(np.ascontiguousarray(x).reshape(-1).view(codes), result.reshape(-1), step, codes_table)
        return result

    return impl
