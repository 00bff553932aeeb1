"""Character classes of a text, as bit masks, 16 code points per vector step.

A text is a row of uint32 code points (a ``<U`` array viewed as
``(n, width)`` uint32).  :func:`classes` returns one uint64 mask per class
for the first :data:`WINDOW` characters of a row -- digits, points, the
letter e/E, signs, whitespace, non-zero characters and the digit 0, in that order: bit
``j`` says whether character ``j`` is of the class.  The parser reads a number's shape from these masks with
bit arithmetic instead of a branch per character.

:func:`aligned_digits` reads the digits of a mantissa within the first 16
characters from the same window's bytes, aligned for adding them up at once.

:func:`borrowed_row` gives row ``i`` of a 2-D array as a 1-D array without a
reference count, for kernels that read rows of an array they hold alive.
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

from ..engine.cache import helper_njit

#: Characters one vector step reads.
LANES = 16
#: Characters a mask covers: four steps.
WINDOW = 4 * LANES

_I1, _I32, _I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)
_CHARS = ir.VectorType(_I32, LANES)


def _splat(builder, value, vector_type):
    """``value`` in every lane of ``vector_type``."""
    one = builder.insert_element(ir.Constant(vector_type, ir.Undefined), value, ir.Constant(_I32, 0))
    return builder.shuffle_vector(
        one, one, ir.Constant(ir.VectorType(_I32, vector_type.count), [0] * vector_type.count)
    )


def _load_window(builder, data, start, size):
    """The code points ``row[start:start + LANES]``, 0 past ``size`` (``start``
    below ``size``): one plain vector load when the row holds them all (rows
    of one array share a width, so the branch is predicted), else a masked
    load of the ``size - start`` that it holds."""
    pointer = builder.bitcast(builder.gep(data, [start]), _CHARS.as_pointer())
    remaining = builder.sub(size, start)
    whole = builder.icmp_signed(">=", remaining, ir.Constant(_I64, LANES))
    with builder.if_else(whole, likely=True) as (plain, partial):
        with plain:
            loaded = builder.load(pointer, align=4)
            plain_block = builder.basic_block
        with partial:
            count = _splat(builder, builder.trunc(remaining, _I32), _CHARS)
            inside = builder.icmp_signed("<", ir.Constant(_CHARS, list(range(LANES))), count)
            load_type = ir.FunctionType(_CHARS, [_CHARS.as_pointer(), _I32, ir.VectorType(_I1, LANES), _CHARS])
            masked_load = cgutils.get_or_insert_function(builder.module, load_type, f"llvm.masked.load.v{LANES}i32.p0")
            masked = builder.call(
                masked_load, [pointer, ir.Constant(_I32, 4), inside, ir.Constant(_CHARS, [0] * LANES)]
            )
            partial_block = builder.basic_block
    chars = builder.phi(_CHARS)
    chars.add_incoming(loaded, plain_block)
    chars.add_incoming(masked, partial_block)
    return chars


def _narrow(builder, chars):
    """The code points ``chars`` as a vector of bytes, those above 255 made
    255 (which is in no class and no digit)."""
    umin_type = ir.FunctionType(_CHARS, [_CHARS, _CHARS])
    umin = cgutils.get_or_insert_function(builder.module, umin_type, f"llvm.umin.v{LANES}i32")
    bytes_type = ir.VectorType(ir.IntType(8), LANES)
    return builder.trunc(builder.call(umin, [chars, ir.Constant(_CHARS, [255] * LANES)]), bytes_type)


def _class_bits(builder, chars):
    """One ``<LANES x i1>`` per class, in the order :func:`classes` returns them.
    The code points are first narrowed to bytes (:func:`_narrow`): one vector
    of 16 bytes for the compares, where 16 code points take a 512-bit
    register, or two 256-bit ones with AVX2."""
    chars = _narrow(builder, chars)
    bytes_type = chars.type

    def const(value):
        return ir.Constant(bytes_type, [value] * LANES)

    def equal(code):
        return builder.icmp_unsigned("==", chars, const(code))

    def within(low, count):
        return builder.icmp_unsigned("<", builder.sub(chars, const(low)), const(count))

    return (
        within(ord("0"), 10),
        equal(ord(".")),
        builder.icmp_unsigned("==", builder.or_(chars, const(0x20)), const(ord("e"))),
        builder.or_(equal(ord("+")), equal(ord("-"))),
        builder.or_(equal(ord(" ")), within(9, 5)),  # space, \t \n \v \f \r
        builder.icmp_unsigned("!=", chars, const(0)),
        equal(ord("0")),
    )


@intrinsic
def window_classes(typingctx, row, start):
    """The class masks of ``row[start:start + 16]`` (characters past the row's
    end read as 0), shifted to bit ``start``: a 7-tuple of uint64.  A blank
    window (16 zeros: padding, in no class) skips the compares: most rows
    of float32 texts in a ``<U32`` array end in one (0.89x the time)."""
    if not (isinstance(row, types.Array) and row.ndim == 1 and row.dtype == types.uint32 and row.layout == "C"):
        raise errors.NumbaTypeError(f"window_classes takes a 1-D C-contiguous uint32 array, not {row}")
    result = types.UniTuple(types.uint64, 7)

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        start = context.cast(builder, args[1], signature.args[1], types.intp)
        chars = _load_window(builder, array.data, start, builder.extract_value(array.shape, 0))
        before = builder.basic_block
        reduce_or = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(_I32, [_CHARS]), f"llvm.vector.reduce.or.v{LANES}i32"
        )
        blank = builder.icmp_unsigned("==", builder.call(reduce_or, [chars]), ir.Constant(_I32, 0))
        with builder.if_then(builder.not_(blank)):
            masks = [
                builder.shl(builder.zext(builder.bitcast(bits, ir.IntType(LANES)), _I64), start)
                for bits in _class_bits(builder, chars)
            ]
            computed = builder.basic_block
        merged = []
        for mask in masks:
            phi = builder.phi(_I64)
            phi.add_incoming(mask, computed)
            phi.add_incoming(ir.Constant(_I64, 0), before)
            merged.append(phi)
        return context.make_tuple(builder, result, merged)

    return result(row, types.intp), codegen


@intrinsic
def aligned_digits(typingctx, row, first, point, end):
    """The digits of ``row[first:end]`` but the point at ``point`` (``end``
    when there is none), ``end`` at most 16 and every other character there a
    digit, as 16 byte values 0-9 in two uint64 ``(high, low)``: the last digit
    in the top byte of ``low``, byte ``j`` of ``high`` the digit ``16 - j``
    places from the end (0 before the first).  128-bit shifts of the window's
    bytes, without a loop or a branch."""
    if not (isinstance(row, types.Array) and row.ndim == 1 and row.dtype == types.uint32 and row.layout == "C"):
        raise errors.NumbaTypeError(f"aligned_digits takes a 1-D C-contiguous uint32 array, not {row}")
    result = types.UniTuple(types.uint64, 2)

    def codegen(context, builder, signature, args):
        wide = ir.IntType(8 * LANES)
        array = context.make_array(signature.args[0])(context, builder, args[0])
        first, point, end = (
            builder.zext(context.cast(builder, value, signature.args[k + 1], types.intp), wide)
            for k, value in enumerate(args[1:])
        )
        chars = _load_window(builder, array.data, ir.Constant(_I64, 0), builder.extract_value(array.shape, 0))
        text = builder.bitcast(_narrow(builder, chars), wide)
        eight = ir.Constant(wide, 8)
        has_point = builder.icmp_unsigned("<", point, end)
        # the bytes before the point, then those after it moved down one
        below = builder.sub(builder.shl(ir.Constant(wide, 1), builder.mul(point, eight)), ir.Constant(wide, 1))
        below = builder.select(has_point, below, ir.Constant(wide, -1))
        joined = builder.or_(builder.and_(text, below), builder.and_(builder.lshr(text, eight), builder.not_(below)))
        count = builder.sub(builder.sub(end, first), builder.zext(has_point, wide))  # 1 to 16 digits
        digits = builder.lshr(joined, builder.mul(first, eight))
        digits = builder.shl(digits, builder.mul(builder.sub(ir.Constant(wide, LANES), count), eight))
        digits = builder.and_(digits, ir.Constant(wide, int("0F" * LANES, 16)))
        low = builder.trunc(builder.lshr(digits, ir.Constant(wide, 64)), _I64)
        high = builder.trunc(digits, _I64)
        return context.make_tuple(builder, result, (high, low))

    return result(row, first, point, end), codegen


@helper_njit
def _either(a, b):
    """The class masks ``a`` or ``b``, class by class."""
    return (a[0] | b[0], a[1] | b[1], a[2] | b[2], a[3] | b[3], a[4] | b[4], a[5] | b[5], a[6] | b[6])


@helper_njit
def classes(row):
    """The class masks of the first :data:`WINDOW` characters of ``row``.
    The four windows are written out, one after the other: a loop over them,
    with the test for blank windows in its body, is one LLVM does not unroll."""
    none = np.uint64(0)
    masks = (none, none, none, none, none, none, none)
    if row.size > 0:
        masks = window_classes(row, 0)
    if row.size > LANES:
        masks = _either(masks, window_classes(row, LANES))
    if row.size > 2 * LANES:
        masks = _either(masks, window_classes(row, 2 * LANES))
    if row.size > 3 * LANES:
        masks = _either(masks, window_classes(row, 3 * LANES))
    return masks


@intrinsic
def borrowed_row(typingctx, array, index):
    """Row ``index`` of a 2-D C-contiguous array, as a 1-D array that holds no
    reference: valid while ``array`` is."""
    if not (isinstance(array, types.Array) and array.ndim == 2 and array.layout == "C"):
        raise errors.NumbaTypeError(f"borrowed_row takes a 2-D C-contiguous array, not {array}")
    result = array.copy(ndim=1)

    def codegen(context, builder, signature, args):
        source = context.make_array(signature.args[0])(context, builder, args[0])
        index = context.cast(builder, args[1], signature.args[1], types.intp)
        width = builder.extract_value(source.shape, 1)
        row = context.make_array(result)(context, builder)
        itemsize = context.get_constant(types.intp, context.get_abi_sizeof(context.get_data_type(array.dtype)))
        context.populate_array(
            row,
            data=builder.gep(source.data, [builder.mul(index, width)]),
            shape=cgutils.pack_array(builder, [width]),
            strides=cgutils.pack_array(builder, [itemsize]),
            itemsize=itemsize,
            meminfo=None,
        )
        return row._getvalue()

    return result(array, types.intp), codegen
