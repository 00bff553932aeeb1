"""Views of arrays in ``@njit`` code, written in LLVM IR where nothing is
compiled, and :func:`~numbacast.engine.scratch.new_array` (``np.empty``).

``reshaped_view(array, shape, dtype)`` is
``array.reshape(shape).view(dtype)`` of a C-contiguous ``array``, the same
memory, read-only when ``array`` is; ``retyped_view(array, dtype)`` is
``array.view(dtype)`` in any layout, for a dtype of the same size;
``permuted_view(array, order)`` is ``array.transpose(order)`` for a
permutation ``order`` of the axes; ``unused_table()`` is a writeable
one-element uint8 array for the ``table`` argument of a kernel that does not
read it (a conversion's own kernel; see
:data:`~numbacast.engine.kernels.NO_TABLE`), on the stack of its caller.

Numba compiles ``np.empty``, ``reshape``, ``view`` and ``np.zeros`` as
functions of their own for each signature: ``view``'s check of its two
dtypes took 0.25 s a signature on the Zen 1 EPYC, ``np.zeros`` 0.23 s,
``np.empty`` 0.19 s, in each first ``numbacast.cast`` (or ``mx.quantize``,
``mx.dequantize``) in ``@njit`` code of a new pair of array types.  Numba's
``transpose`` of a tuple checks the tuple by a slice assignment, whose
shape-mismatch message compiled Numba's integer-to-text and string joining:
3.4 s in a program's first reduction along an axis (and 3.2 s in a first
``@njit`` cast with ``out=``, which copied its result by such an assignment).
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

from ..engine.scratch import check_shape, tuple_sizes
from .numba_types import as_dtype


@intrinsic
def reshaped_view(typingctx, array, shape, dtype):
    """``array.reshape(shape).view(dtype)`` of a C-contiguous ``array``: ``shape``
    a tuple of integers whose product is ``array.size`` (not checked), ``dtype``
    of the element size of ``array``."""
    if not (isinstance(array, types.Array) and array.layout == "C" and isinstance(dtype, types.DType)):
        raise errors.NumbaTypeError(f"reshaped_view takes a C-contiguous array and a dtype, not {array}, {dtype}")
    check_shape(shape, "reshaped_view")
    if as_dtype(array.dtype).itemsize != as_dtype(dtype.dtype).itemsize:
        raise errors.NumbaTypeError(f"reshaped_view of {array.dtype} elements as {dtype.dtype}: not the same size")
    result = types.Array(dtype.dtype, len(shape), "C", readonly=not array.mutable, aligned=array.aligned)

    def codegen(context, builder, signature, args):
        source = context.make_array(signature.args[0])(context, builder, args[0])
        sizes = tuple_sizes(context, builder, shape, args[1])
        strides, stride = [], source.itemsize
        for size in reversed(sizes):
            strides.insert(0, stride)
            stride = builder.mul(stride, size)
        return _view(context, builder, source, result, sizes, strides)

    return result(array, shape, dtype), codegen


@intrinsic
def retyped_view(typingctx, array, dtype):
    """``array.view(dtype)`` for ``dtype`` of the element size of ``array``, in
    any layout: the same memory, shape and strides."""
    if not (isinstance(array, types.Array) and isinstance(dtype, types.DType)):
        raise errors.NumbaTypeError(f"retyped_view takes an array and a dtype, not {array}, {dtype}")
    if as_dtype(array.dtype).itemsize != as_dtype(dtype.dtype).itemsize:
        raise errors.NumbaTypeError(f"retyped_view of {array.dtype} elements as {dtype.dtype}: not the same size")
    result = array.copy(dtype=dtype.dtype)

    def codegen(context, builder, signature, args):
        source = context.make_array(array)(context, builder, args[0])
        sizes, strides = (cgutils.unpack_tuple(builder, field, array.ndim) for field in (source.shape, source.strides))
        return _view(context, builder, source, result, sizes, strides)

    return result(array, dtype), codegen


@intrinsic
def permuted_view(typingctx, array, order):
    """``array.transpose(order)``: the same memory, axis ``order[i]`` of ``array``
    as axis ``i``; ``order`` a C-contiguous 1-D integer array holding a
    permutation of ``range(array.ndim)`` (not checked)."""
    if not (
        isinstance(array, types.Array)
        and isinstance(order, types.Array)
        and order.ndim == 1
        and order.layout == "C"
        and isinstance(order.dtype, types.Integer)
    ):
        raise errors.NumbaTypeError(f"permuted_view takes an array and a 1-D array of axes, not {array}, {order}")
    result = array.copy(layout="A") if array.ndim > 1 else array

    def codegen(context, builder, signature, args):
        source = context.make_array(array)(context, builder, args[0])
        axes = context.make_array(order)(context, builder, args[1])
        shape, strides = (cgutils.alloca_once_value(builder, field) for field in (source.shape, source.strides))
        sizes, steps = [], []
        for i in range(array.ndim):
            axis = builder.load(builder.gep(axes.data, [context.get_constant(types.intp, i)]))
            axis = context.cast(builder, axis, order.dtype, types.intp)
            zero = context.get_constant(types.intp, 0)
            sizes.append(builder.load(builder.gep(shape, [zero, axis])))
            steps.append(builder.load(builder.gep(strides, [zero, axis])))
        return _view(context, builder, source, result, sizes, steps)

    return result(array, order), codegen


def _view(context, builder, source, result, sizes, strides):
    """A view of the array ``source`` as type ``result``: its data, meminfo and
    parent, with ``sizes`` and ``strides`` (a borrowed reference)."""
    view = context.make_array(result)(context, builder)
    populate_array(
        view,
        data=builder.bitcast(source.data, view.data.type),
        shape=sizes,
        strides=strides,
        itemsize=source.itemsize,
        meminfo=source.meminfo,
        parent=source.parent,
    )
    return impl_ret_borrowed(context, builder, result, view._getvalue())


#: The type of the Python calls' table argument (``typeof(NO_TABLE)``, written
#: out: ``typeof`` of an array imports ``numpy.ma``, 7 ms of an import): one
#: compiled kernel for both.
_UNUSED_TABLE = types.Array(types.uint8, 1, "C")


@intrinsic
def unused_table(typingctx):
    """A writeable one-element uint8 array on the caller's stack, for a kernel's unread ``table``."""

    def codegen(context, builder, signature, args):
        cell = cgutils.alloca_once_value(builder, ir.Constant(ir.IntType(8), 0))
        table = context.make_array(_UNUSED_TABLE)(context, builder)
        one = context.get_constant(types.intp, 1)
        populate_array(
            table,
            data=builder.bitcast(cell, table.data.type),
            shape=[one],
            strides=[one],
            itemsize=one,
            meminfo=None,
        )
        return table._getvalue()

    return _UNUSED_TABLE(), codegen
