"""Whole blocks of a fixed length in vector registers, for the block-scaled kernels.

``largest_magnitude(values, start, lanes)`` is the largest magnitude of
``values[start:start + lanes]``, in the type of ``values``, and
``largest_magnitudes(values, start, lanes, out, out_start)`` that of each of
``lanes`` consecutive such spans side by side (a task's blocks by groups),
``fill(values, start, lanes, value)`` writes ``value`` into that span; ``lanes``
is a literal, 16 or 32 (the block sizes of NVFP4 and OCP MX), ``values`` a 1-D
C-contiguous float32 or float64 array, and the span must lie inside it (the
caller checks; nothing here does).  Each is one straight run of vector
instructions (loads, a mask, a reduction; or stores of a splat), where a loop
of a run-time length pays a vector prologue, a remainder and their branches
for every block.

The largest magnitude is the float of the largest magnitude bits (the bits
without the sign): they order like the magnitudes, with NaNs above infinity,
so it is NaN when one of the values is, as in
:func:`~numbacast.engine.blocks.block_amax`.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

#: The fixed block lengths that have a vector path.
LANES = (16, 32)

_FLOATS = (types.float32, types.float64)


def _span(context, builder, array_type, array, start, lanes, element):
    """A pointer to ``lanes`` elements of ``array`` from ``start``, as a vector of ``element``."""
    data = context.make_array(array_type)(context, builder, array).data
    pointer = builder.gep(data, [start])
    return builder.bitcast(pointer, ir.VectorType(element, lanes).as_pointer())


def _check(values, lanes):
    if not (isinstance(values, types.Array) and values.ndim == 1 and values.layout == "C"):
        raise errors.NumbaTypeError(f"expected a 1-D C-contiguous array, not {values}")
    if values.dtype not in _FLOATS:
        raise errors.NumbaTypeError(f"expected float32 or float64 values, not {values.dtype}")
    if not (isinstance(lanes, types.IntegerLiteral) and lanes.literal_value in LANES):
        raise errors.NumbaTypeError(f"lanes must be a literal of {LANES}, not {lanes}")
    return lanes.literal_value


@intrinsic
def largest_magnitude(typingctx, values, start, lanes):
    """The largest magnitude of ``values[start:start + lanes]`` (NaN when one is NaN)."""
    count = _check(values, lanes)
    result = values.dtype

    def codegen(context, builder, signature, args):
        width = result.bitwidth
        element = ir.IntType(width)
        start_index = context.cast(builder, args[1], signature.args[1], types.intp)
        pointer = _span(context, builder, signature.args[0], args[0], start_index, count, element)
        vector = builder.load(pointer, align=values.dtype.bitwidth // 8)
        mask = ir.Constant(ir.VectorType(element, count), [(1 << (width - 1)) - 1] * count)
        magnitudes = builder.and_(vector, mask)
        reduce_type = ir.FunctionType(element, [ir.VectorType(element, count)])
        name = f"llvm.vector.reduce.umax.v{count}i{width}"
        reduce = cgutils.get_or_insert_function(builder.module, reduce_type, name)
        return builder.bitcast(builder.call(reduce, [magnitudes]), context.get_value_type(result))

    return result(values, types.intp, lanes), codegen


def _merged(builder, module, first, second, lanes, width):
    """The vector of lanes whose ``2k`` blocks are ``first``'s ``k`` blocks then
    ``second``'s, each block the larger, lane by lane, of the two halves of
    the same block in its source: one step of the reduction of
    :func:`largest_magnitudes` (two shuffles and an unsigned maximum)."""
    blocks = lanes // width  # in each source
    lower, upper = [], []
    for source in (0, lanes):
        for b in range(blocks):
            lower += [source + b * width + j for j in range(width // 2)]
            upper += [source + b * width + width // 2 + j for j in range(width // 2)]
    vector = first.type
    index = ir.VectorType(ir.IntType(32), lanes)
    halves = [builder.shuffle_vector(first, second, ir.Constant(index, order)) for order in (lower, upper)]
    bits = vector.element.width
    maximum = cgutils.get_or_insert_function(
        module, ir.FunctionType(vector, [vector, vector]), f"llvm.umax.v{lanes}i{bits}"
    )
    return builder.call(maximum, halves)


@intrinsic
def largest_magnitudes(typingctx, values, start, lanes, out, out_start):
    """The largest magnitude of each of ``lanes`` consecutive blocks of
    ``lanes`` values from ``values[start]`` into ``out[out_start:out_start +
    lanes]`` (an array of the type of ``values``; NaN when a block holds
    one), the blocks side by side: each block's magnitude bits in a vector,
    then pairs of vectors merged into one holding both blocks at half the
    lanes each (:func:`_merged`), until one vector holds every block's
    maximum in one lane, stored at once.  ``lanes`` - 1 merges of two shuffles
    where a reduction per block takes log2(``lanes``) shuffle steps of its
    own and a scalar store."""
    count = _check(values, lanes)
    if not (isinstance(out, types.Array) and out.ndim == 1 and out.layout == "C" and out.dtype == values.dtype):
        raise errors.NumbaTypeError(f"expected a 1-D C-contiguous {values.dtype} array for the maxima, not {out}")
    result = values.dtype

    def codegen(context, builder, signature, args):
        width = result.bitwidth
        element = ir.IntType(width)
        start_index = context.cast(builder, args[1], signature.args[1], types.intp)
        mask = ir.Constant(ir.VectorType(element, count), [(1 << (width - 1)) - 1] * count)
        vectors = []
        for b in range(count):
            offset = builder.add(start_index, ir.Constant(start_index.type, b * count))
            pointer = _span(context, builder, signature.args[0], args[0], offset, count, element)
            vectors.append(builder.and_(builder.load(pointer, align=width // 8), mask))
        block_width = count
        while len(vectors) > 1:
            pairs = zip(vectors[::2], vectors[1::2])
            vectors = [_merged(builder, builder.module, a, b, count, block_width) for a, b in pairs]
            block_width //= 2
        out_index = context.cast(builder, args[4], signature.args[4], types.intp)
        pointer = _span(context, builder, signature.args[3], args[3], out_index, count, element)
        builder.store(vectors[0], pointer, align=width // 8)
        return context.get_dummy_value()

    return types.none(values, types.intp, lanes, out, types.intp), codegen


@intrinsic
def fill(typingctx, values, start, lanes, value):
    """Write ``value`` into ``values[start:start + lanes]``."""
    count = _check(values, lanes)

    def codegen(context, builder, signature, args):
        element = context.get_value_type(values.dtype)
        start_index = context.cast(builder, args[1], signature.args[1], types.intp)
        pointer = _span(context, builder, signature.args[0], args[0], start_index, count, element)
        scalar = context.cast(builder, args[3], signature.args[3], values.dtype)
        one = builder.insert_element(
            ir.Constant(ir.VectorType(element, count), ir.Undefined), scalar, ir.IntType(32)(0)
        )
        splat = builder.shuffle_vector(one, one, ir.Constant(ir.VectorType(ir.IntType(32), count), [0] * count))
        builder.store(splat, pointer, align=values.dtype.bitwidth // 8)
        return context.get_dummy_value()

    return types.none(values, types.intp, lanes, value), codegen
