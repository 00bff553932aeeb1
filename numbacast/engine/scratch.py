"""Arrays made in compiled code without compiling NumPy's functions for them.

``new_array(shape, dtype)`` is ``np.empty(shape, dtype)``: a new C-contiguous
array (``shape`` a tuple of integers), by Numba's own allocation, where
``np.empty`` was a function Numba compiled for each signature (0.07-0.19 s
each, in the first call of each kernel that allocates); ``new_like(size,
array)`` a new 1-D array of the dtype of ``array``.

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
from numba.core.imputils import impl_ret_new_ref
from numba.extending import intrinsic
from numba.np.arrayobj import _empty_nd_impl

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


@intrinsic
def new_array(typingctx, shape, dtype):
    """``np.empty(shape, dtype)``: a new C-contiguous array, ``shape`` a tuple of integers."""
    check_shape(shape, "new_array")
    if not isinstance(dtype, types.DType):
        raise errors.NumbaTypeError(f"new_array takes a dtype, not {dtype}")
    result = types.Array(dtype.dtype, len(shape), "C")

    def codegen(context, builder, signature, args):
        return _allocated(context, builder, result, tuple_sizes(context, builder, shape, args[0]))

    return result(shape, dtype), codegen


@intrinsic
def new_like(typingctx, size, like):
    """``np.empty(size, like.dtype)`` (``size`` an integer, ``like`` an
    array): a new 1-D C-contiguous array of the dtype of ``like``, where
    ``like.dtype`` in compiled code compiles NumPy's dtype function."""
    if not isinstance(size, types.Integer) or not isinstance(like, types.Array):
        raise errors.NumbaTypeError(f"new_like takes a size and an array, not {size} and {like}")
    result = types.Array(like.dtype, 1, "C")

    def codegen(context, builder, signature, args):
        return _allocated(context, builder, result, [context.cast(builder, args[0], size, types.intp)])

    return result(size, like), codegen


def _allocated(context, builder, result, sizes):
    """A new array of type ``result`` and shape ``sizes`` (intp values), by Numba's allocation."""
    array = _empty_nd_impl(context, builder, result, sizes)
    return impl_ret_new_ref(context, builder, result, array._getvalue())


def check_shape(shape, name):
    """A NumbaTypeError unless ``shape`` is the type of a tuple of integers."""
    if not (isinstance(shape, types.BaseTuple) and all(isinstance(size, types.Integer) for size in shape)):
        raise errors.NumbaTypeError(f"{name} takes a tuple of integers for its shape, not {shape}")


def tuple_sizes(context, builder, shape, value):
    """The sizes of the tuple ``value`` of type ``shape``, as intp."""
    values = cgutils.unpack_tuple(builder, value, len(shape))
    return [context.cast(builder, size, size_type, types.intp) for size, size_type in zip(values, shape)]
