"""Scratch arrays in the stack frame of compiled code.

``stack_bytes(count)`` (``count`` an integer literal) is a 1-D C-contiguous
uint8 array of ``count`` bytes, uninitialised, in the stack frame of the
compiled function that calls it: no allocation, no reference count (its
memory-info pointer is null, which Numba's reference counting skips), and
no release.  It lives as long as that call: it may be passed to the
functions it calls, never returned or stored where it outlives the call.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

_BYTES = types.Array(types.uint8, 1, "C")


@intrinsic
def stack_bytes(typingctx, count):
    """``count`` uninitialised bytes on the caller's stack, as a uint8 array."""
    if not isinstance(count, types.IntegerLiteral) or count.literal_value <= 0:
        raise errors.NumbaTypeError(f"stack_bytes takes a positive integer literal, not {count}")
    size = count.literal_value

    def codegen(context, builder, signature, args):
        storage = cgutils.alloca_once(builder, ir.ArrayType(ir.IntType(8), size))
        intp = context.get_value_type(types.intp)
        array = context.make_array(_BYTES)(context, builder)
        context.populate_array(
            array,
            data=builder.bitcast(storage, ir.IntType(8).as_pointer()),
            shape=[ir.Constant(intp, size)],
            strides=[ir.Constant(intp, 1)],
            itemsize=ir.Constant(intp, 1),
            meminfo=None,
        )
        return array._getvalue()

    return _BYTES(count), codegen
