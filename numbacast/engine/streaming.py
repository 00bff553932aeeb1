"""Writing a large output past the caches: nontemporal stores.

A store into a cache line the core does not hold first reads that line from
memory (the core must own all of a line before it changes part of it), so
a kernel writing N bytes into an array larger than the caches moves 2N bytes
for them, and the line it wrote pushes another out of the cache on the way.
A *nontemporal* store (``movntdq`` on x86) gathers whole lines in the core's
write-combining buffers and sends them to memory without reading them: a
cast from FLOAT into FLOAT16 then moves 6 bytes an element, not 8.

A cast called from Python streams an output given to it (``out=``)
(:func:`~numbacast.engine.kernels.streaming_kernel`) when the output is at
least :data:`STREAM_MIN_BYTES` (larger than a core's share of the
last-level cache on the CPUs measured: such an output is not in the cache
when the cast ends anyway; smaller outputs stay there for whatever reads
them next) and the conversion is a light one into narrower elements
(:attr:`~numbacast.engine.conversion.Conversion.streams_output`; outputs as
wide as their source or wider were slower streamed on a Zen 4 EPYC): each run
of elements is converted into a small scratch array (it stays in the
first-level cache), then copied into the output by :func:`stream_copy`, and
each task ends with :func:`store_fence`.  The heavier conversions (the
encoders into float types, the decodes of the narrow ones) lost by the
detour through the scratch array more than the stores saved (FLOAT ->
FLOAT8E4M3FN 5.8 -> 6.4 ms for 16M elements, AVX2 code), so they store as
they convert.  An output the cast allocates of :data:`NEW_PAGES_MIN_BYTES`
or more is written by plain stores: its pages are new, and the system
zeroes each as the first store faults it in, lines that streaming stores
then had written back besides their own (on the Intel host, 16M elements:
FLOAT -> FLOAT16, FLOAT -> BFLOAT16, DOUBLE -> FLOAT, DOUBLE -> INT32 and
INT64 -> INT32 into new outputs took 1.18-1.53x the time streamed, host and
AVX2 code; into a reused output streaming stays ahead, FLOAT -> FLOAT16
2.2-2.5 against 2.9-3.4 ms).  Smaller new outputs come from memory the
allocator keeps, already faulted in, and stream (INT32 -> INT8, 16 MiB:
0.79-0.88x the time of plain stores): :func:`streams`.  Casts in ``@njit``
code do not stream: their parallel loop is compiled before the size is
known, and a second loop would add its compilation (0.4-0.6 s) to every
first ``@njit`` cast of a light conversion.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

#: Outputs of at least this many bytes are written by nontemporal stores.
STREAM_MIN_BYTES = 1 << 22

#: Outputs the cast allocates of at least this many bytes are new pages: the
#: C library's allocator (glibc's) serves requests from 32 MiB up by new
#: mappings whatever it kept, and smaller ones from memory it kept where it can.
NEW_PAGES_MIN_BYTES = 1 << 25


def streams(nbytes, fresh):
    """Whether an output of ``nbytes`` of a conversion that streams is written
    by nontemporal stores: from :data:`STREAM_MIN_BYTES` up, unless ``fresh``
    (allocated by the cast) and new pages (:data:`NEW_PAGES_MIN_BYTES` up)."""
    return nbytes >= STREAM_MIN_BYTES and not (fresh and nbytes >= NEW_PAGES_MIN_BYTES)


#: Bytes of the page whose offsets the processor compares loads and stores by.
PAGE_BYTES = 4096

#: Bytes of one nontemporal store: a 16-byte vector, which needs an address
#: aligned to 16 (NumPy aligns the arrays it allocates to 16 bytes).
_VECTOR = 16


def _check(name, array):
    if not (isinstance(array, types.Array) and array.ndim == 1 and array.layout == "C"):
        raise errors.NumbaTypeError(f"{name} takes 1-D C-contiguous arrays, not {array}")


@intrinsic
def window(typingctx, scratch, dst, first):
    """Where in ``scratch`` (an array of :data:`PAGE_BYTES` more than a run)
    to convert the run of ``dst`` from ``first`` on (an index, uint64): the
    place whose address is half a page away from the run's, modulo a page.
    The processor matches a load to the stores before it by the low 12 bits
    of their addresses; a load of the scratch array a little above a
    nontemporal store into the output waits for that store to reach memory,
    which made a whole cast 2-5 times slower where the scratch array lay so
    (the one allocated by the task fell there by chance, in a few casts in a
    hundred).  Address arithmetic written straight in LLVM IR: as a Numba
    function it was typed and compiled twice on a first cast (0.2 s)."""
    _check("window", scratch)
    _check("window", dst)
    if scratch.dtype != dst.dtype or not isinstance(first, types.Integer):
        raise errors.NumbaTypeError(f"window takes two arrays of one dtype and an integer, not {scratch}, {dst}")

    def codegen(context, builder, signature, args):
        word = ir.IntType(64)
        itemsize = context.get_abi_sizeof(context.get_data_type(signature.args[1].dtype))
        here = builder.ptrtoint(context.make_array(signature.args[0])(context, builder, args[0]).data, word)
        target = builder.ptrtoint(context.make_array(signature.args[1])(context, builder, args[1]).data, word)
        offset = builder.mul(context.cast(builder, args[2], signature.args[2], types.uint64), word(itemsize))
        gap = builder.sub(builder.add(builder.add(target, offset), word(PAGE_BYTES // 2)), here)
        return builder.udiv(builder.and_(gap, word(PAGE_BYTES - 1)), word(itemsize))

    return types.uint64(scratch, dst, first), codegen


@intrinsic
def stream_copy(typingctx, dst, at, values, start, count):
    """``dst[at:at + count] = values[start:start + count]`` (1-D C-contiguous
    arrays of one dtype, the indices in bounds): the bytes of ``dst`` from
    its first 16-byte boundary to its last by nontemporal 16-byte stores, the
    few outside by plain ones."""
    _check("stream_copy", dst)
    _check("stream_copy", values)
    if dst.dtype != values.dtype or not all(isinstance(i, types.Integer) for i in (at, start, count)):
        raise errors.NumbaTypeError(
            f"stream_copy takes two arrays of one dtype and three integers, not {dst}, {values}"
        )

    def codegen(context, builder, signature, args):
        intp = context.get_value_type(types.intp)
        byte = ir.IntType(8)
        vector = ir.VectorType(byte, _VECTOR)
        itemsize = context.get_abi_sizeof(context.get_data_type(signature.args[0].dtype))
        target = context.make_array(signature.args[0])(context, builder, args[0])
        source = context.make_array(signature.args[2])(context, builder, args[2])
        first = context.cast(builder, args[1], signature.args[1], types.intp)
        start = context.cast(builder, args[3], signature.args[3], types.intp)
        size = builder.mul(context.cast(builder, args[4], signature.args[4], types.intp), intp(itemsize))
        to = builder.bitcast(builder.gep(target.data, [first]), byte.as_pointer())
        of = builder.bitcast(builder.gep(source.data, [start]), byte.as_pointer())
        head = builder.and_(builder.neg(builder.ptrtoint(to, intp)), intp(_VECTOR - 1))
        head = builder.select(builder.icmp_signed("<", head, size), head, size)
        body_end = builder.add(head, builder.and_(builder.sub(size, head), intp(-_VECTOR)))
        nontemporal = builder.module.add_metadata([ir.IntType(32)(1)])

        def copy(low, high, step, width):
            with cgutils.for_range_slice(builder, low, high, intp(step), intp) as (k, _):
                value = builder.load(builder.bitcast(builder.gep(of, [k]), width.as_pointer()), align=1)
                store = builder.store(value, builder.bitcast(builder.gep(to, [k]), width.as_pointer()), align=step)
                if width is vector:
                    store.set_metadata("nontemporal", nontemporal)

        copy(intp(0), head, 1, byte)
        copy(head, body_end, _VECTOR, vector)
        copy(body_end, size, 1, byte)
        return context.get_dummy_value()

    return types.none(dst, at, values, start, count), codegen


@intrinsic
def store_fence(typingctx):
    """A store fence: the nontemporal stores made before it are seen by every
    thread before any store after it (``sfence`` on x86, where they are not
    ordered with the others otherwise; a full fence elsewhere)."""

    def codegen(context, builder, signature, args):
        if builder.module.triple.startswith(("x86_64", "i686", "i386")):
            function_type = ir.FunctionType(ir.VoidType(), [])
            builder.call(cgutils.get_or_insert_function(builder.module, function_type, "llvm.x86.sse.sfence"), [])
        else:
            builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.none(), codegen
