"""Reading ahead: software prefetches for the kernels that stream an array.

An encoder into a narrow float type is some twenty vector instructions
between one load and one store.  In a loop of such steps the processor's
scheduler fills with the steps that wait on loads, few loads are in flight,
and the hardware prefetchers do not make up for it: on the CPUs measured
(docs/benchmarks.md) FLOAT -> FLOAT8E4M3FN from memory took 1.4x (AVX-512
code) and 1.6x (AVX2 code) the time of a trivial kernel moving the same
bytes, and 1.0-1.15x / 1.1-1.3x with the input prefetched.

So the kernels work through their input by runs of :data:`RUN_BYTES` and,
before each run, ask the processor to fetch the run :data:`AHEAD_BYTES`
further on into L2 (:func:`read_ahead`, one prefetch per cache line): the
loads of the run's own loop then find their lines in L2.  Short runs spread
the prefetches out (a burst of a few hundred at once stalled the loads they
were meant to help); a prefetch is a hint, which never faults and changes no
value, whatever the address.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

#: Bytes of input a kernel converts between two rounds of prefetches.
RUN_BYTES = 512

#: Elements a cast kernel converts between two rounds of prefetches when its
#: input has 4 or 8 bytes an element (:data:`RUN_BYTES` of float32, 1 KiB of float64).
RUN_ELEMENTS = 128

#: How far ahead of the run being converted the prefetched run lies.
AHEAD_BYTES = 1 << 15

#: Bytes of one cache line: one prefetch per line.
LINE = 64

#: LLVM's locality hint of a prefetch into L2 but not L1 (``prefetcht1`` on
#: x86): runs fetched into L1 so far ahead would push out the one being read.
_LOCALITY_L2 = 2


def _check(values):
    if not (isinstance(values, types.Array) and values.layout == "C"):
        raise errors.NumbaTypeError(f"expected a C-contiguous array, not {values}")


def _prefetch_line(builder, data, offset):
    """Emit a prefetch of the element ``offset`` of the array data ``data``:
    a read (0), into L2, of data (1: not instructions)."""
    byte = ir.IntType(8).as_pointer()
    word = ir.IntType(32)
    function_type = ir.FunctionType(ir.VoidType(), [byte, word, word, word])
    function = cgutils.get_or_insert_function(builder.module, function_type, "llvm.prefetch.p0")
    pointer = builder.bitcast(builder.gep(data, [offset]), byte)
    builder.call(function, [pointer, word(0), word(_LOCALITY_L2), word(1)])


@intrinsic
def read_ahead(typingctx, values, first, end):
    """Prefetch the lines of ``values[first:end]`` moved :data:`AHEAD_BYTES`
    on (the part inside the array; ``first`` and ``end`` integers, at least
    0, index a C-contiguous array of any shape as if it were flat).  One
    loop of prefetches written straight in LLVM IR: a Numba function here
    was typed and compiled on every first cast."""
    _check(values)
    for bound in (first, end):
        if not isinstance(bound, types.Integer):
            raise errors.NumbaTypeError(f"expected integer bounds, not {bound}")

    def codegen(context, builder, signature, args):
        itemsize = context.get_abi_sizeof(context.get_data_type(values.dtype))
        ahead, step = AHEAD_BYTES // itemsize, max(LINE // itemsize, 1)
        array = context.make_array(signature.args[0])(context, builder, args[0])
        intp = context.get_value_type(types.intp)
        low = context.cast(builder, args[1], signature.args[1], types.intp)
        high = context.cast(builder, args[2], signature.args[2], types.intp)
        start = builder.add(low, intp(ahead))
        stop = builder.add(high, intp(ahead))
        stop = builder.select(builder.icmp_signed("<", stop, array.nitems), stop, array.nitems)
        with cgutils.for_range_slice(builder, start, stop, intp(step), intp) as (index, _):
            _prefetch_line(builder, array.data, index)
        return context.get_dummy_value()

    return types.none(values, first, end), codegen
