"""128-bit arithmetic for decimal conversion, on uint64 halves.

* ``multiply_full(a, b)``: the full product of two uint64 as ``(high, low)``.
* ``POW5_HIGH``, ``POW5_LOW``, ``POW5_EXPONENT``: for every ``q`` from
  :data:`POW5_MIN` to :data:`POW5_MAX`, ``5**q`` as a 128-bit significand
  ``T`` (its top bit set) truncated toward zero, and an exponent ``E`` with
  ``T <= 5**q / 2**E < T + 1``; index ``q - POW5_MIN``.
* ``POW10``: the powers of ten that fit in a uint64.

Decimal parsing multiplies by ``5**q`` (``10**q = 5**q * 2**q``) and shortest
printing by ``10**-k``; both read this one table.
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import errors
from numba.extending import intrinsic

#: The range of powers of five in the table: wide enough for every decimal
#: exponent that can round to a finite non-zero float64 (parsing) and every
#: ``10**-k`` that shortest printing of a float64 needs.
POW5_MIN, POW5_MAX = -342, 342


def _power_of_five_table():
    high, low, exponent = [], [], []
    for q in range(POW5_MIN, POW5_MAX + 1):
        if q >= 0:
            power = 5**q
            shift = 128 - power.bit_length()  # significand = power * 2**shift, truncated
            significand = power << shift if shift >= 0 else power >> -shift
            exp = -shift
        else:
            divisor = 5**-q
            exp = -(127 + divisor.bit_length())  # 2**-exp / divisor lies in [2**127, 2**128)
            significand = (1 << -exp) // divisor
        assert 1 << 127 <= significand < 1 << 128
        high.append(significand >> 64)
        low.append(significand & ((1 << 64) - 1))
        exponent.append(exp)
    return np.array(high, np.uint64), np.array(low, np.uint64), np.array(exponent, np.int64)


POW5_HIGH, POW5_LOW, POW5_EXPONENT = _power_of_five_table()
POW10 = np.array([10**i for i in range(20)], np.uint64)


@intrinsic
def multiply_full(typingctx, a, b):
    """``(high, low)``: the 128-bit product of two uint64."""
    if a != types.uint64 or b != types.uint64:
        raise errors.NumbaTypeError(f"multiply_full takes two uint64, not {a} and {b}")
    result = types.UniTuple(types.uint64, 2)

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        high = builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))
        low = builder.trunc(product, ir.IntType(64))
        return context.make_tuple(builder, result, (high, low))

    return result(a, b), codegen
