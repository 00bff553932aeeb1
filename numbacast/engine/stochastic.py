"""Stochastic rounding over whole arrays, reproducible element by element.

The random number of an element depends only on the seed and the element's
index in the C order of the whole array (:func:`~numbacast.engine.rounding.random64`,
a counter-based generator), or is the element's entry in a ``random_bits``
array of the caller's.  So a cast gives the same bits whatever the number of
threads, the strides of the input, ``out=``, or how a Dask array is chunked:
a chunk knows where it lies in the whole array (:func:`chunk_rows`).

:func:`cast_stochastic` runs a stochastic
:class:`~numbacast.engine.conversion.Conversion`; :func:`check_random_bits`
checks a ``random_bits`` array.
"""

import numpy as np
from numba import prange, types
from numba.extending import overload

from .bits import smaller
from .cache import OVERLOAD_OPTIONS, cached_njit, helper_njit, serial_version
from .conversion import ConversionType, scalar_converter
from .kernels import PARALLEL_MIN, split_run
from .prefetch import read_ahead
from .rounding import CHECK, FAST, REDUCE, WINDOW_BITS, random64_window, window_keys
from .scratch import stack_bytes
from .vector_width import element_loop

#: Elements per task of the parallel loop (and per contiguous run of indices at most).
BLOCK = 1 << 12

#: Elements a block converts between two rounds of prefetches (:func:`read_ahead`
#: of the next ones): 2 KiB of float32.  Runs of 256 or 512 elements were
#: 13-15% faster than one prefetch of the whole block before it (AVX-512
#: code; 512 also 6% with AVX2 code), runs of 128 or 1024 3-6%.
RUN = 1 << 9


def random_number(keys, lo, random, j, conversion):
    """The random number of element ``j``, whose global index is ``hi * 2**32 + lo``,
    ``keys`` the :func:`~numbacast.engine.rounding.window_keys` of the seed's
    key, ``hi`` and ``lo`` (``@njit`` only)."""
    raise TypeError("random_number() is for @njit code")


@overload(random_number, jit_options=OVERLOAD_OPTIONS)
def _overload_random_number(keys, lo, random, j, conversion):
    if not isinstance(conversion, ConversionType):
        return None
    bits = conversion.conversion.stochastic_bits
    if isinstance(random, types.NoneType):
        drop = np.uint64(64 - bits)
        return lambda keys, lo, random, j, conversion: random64_window(keys, lo) >> drop
    return lambda keys, lo, random, j, conversion: np.uint64(random[j])


def convert_random(value, conversion, r):
    """One element of a stochastic conversion (``@njit`` only)."""
    raise TypeError("convert_random() is for @njit code")


@overload(convert_random, jit_options=OVERLOAD_OPTIONS)
def _overload_convert_random(value, conversion, r):
    if isinstance(conversion, ConversionType):
        one = scalar_converter(conversion.conversion)
        return lambda value, conversion, r: one(value, r)


def convert_random_fast(value, conversion, r):
    """:func:`convert_random` but where :func:`settled` is zero (``@njit`` only).
    Inlined into the fast loop by LLVM whatever its size: left to LLVM's
    cost model, a rounding into an integer type was a call per element
    there, which does not vectorise (FLOAT -> INT8 stochastic 16M 77 ms)."""
    raise TypeError("convert_random_fast() is for @njit code")


@overload(convert_random_fast, jit_options={**OVERLOAD_OPTIONS, "forceinline": True})
def _overload_convert_random_fast(value, conversion, r):
    if isinstance(conversion, ConversionType):
        one = scalar_converter(conversion.conversion, FAST)
        return lambda value, conversion, r: one(value, r)


def reduce_random(r, conversion):
    """The part of a random number :func:`convert_random_fast` takes (``@njit`` only)."""
    raise TypeError("reduce_random() is for @njit code")


@overload(reduce_random, jit_options=OVERLOAD_OPTIONS)
def _overload_reduce_random(r, conversion):
    if isinstance(conversion, ConversionType):
        reduce = scalar_converter(conversion.conversion, REDUCE)
        return lambda r, conversion: reduce(r)


def settled(value, conversion, reduced):
    """A uint32, zero where :func:`convert_random_fast` may be wrong for ``value``
    and the random number ``reduced`` (``@njit`` only)."""
    raise TypeError("settled() is for @njit code")


@overload(settled, jit_options=OVERLOAD_OPTIONS)
def _overload_settled(value, conversion, reduced):
    if isinstance(conversion, ConversionType):
        check = scalar_converter(conversion.conversion, CHECK)
        return lambda value, conversion, reduced: check(value, reduced)


@helper_njit
def _reduced_random(keys, lo, random, j, conversion):
    """The part of element ``j``'s random number (the low 32 bits of its
    global index ``lo``, ``keys`` its window's) that :func:`convert_random_fast`
    and :func:`settled` take."""
    return reduce_random(random_number(keys, lo, random, j, conversion), conversion)


@element_loop
@helper_njit(forceinline=False)
def _fast_run(src, dst, first, m, conversion, key, hi, lo, random):
    """``dst[j]`` = ``src[j]`` by the fast encoder for the ``m`` elements
    from ``j = first`` (unsigned indices into the whole arrays: no slices to
    count references of, no negative indices to wrap), the global index of
    element ``first + i`` being ``hi * 2**32 + lo + i`` (all in the window
    of ``lo``, :data:`~numbacast.engine.rounding.WINDOW_BITS`): each
    element's random number (reduced to what the fast encoder takes), its
    conversion and whether any needs the full encoder, in one loop that
    vectorises; returns the least :func:`settled`.  A function of its own,
    not inlined into :func:`_block`: LLVM then keeps this loop's constants
    in registers or reads them from the stack, where in the block's
    function, among the constants of its other loops, it shuffled them
    from register to register each step (8% of the time with AVX2).  The
    check comes before the conversion: LLVM then compares while the values
    are in registers, where after it, it kept them on the stack (48 stack
    moves a step of 32 elements with AVX2 code, 26 so)."""
    least = np.uint32(1)
    count = lo  # the low 32 bits of element i's index, in 32-bit lanes
    keys = window_keys(key, hi, lo)
    base = np.uint64(first)
    for i in range(np.uint64(m)):  # unsigned: no negative indices to wrap
        j = base + i
        reduced = _reduced_random(keys, count, random, j, conversion)
        count = np.uint32(count + np.uint32(1))
        value = src[j]
        least = smaller(least, settled(value, conversion, reduced))
        dst[j] = convert_random_fast(value, conversion, reduced)
    return least


@cached_njit(nogil=True)
def _block(b, src, dst, conversion, key, starts, row_length, random):
    """Elements ``b * BLOCK`` to ``(b + 1) * BLOCK`` by :func:`_fast_run`, run
    by run (:func:`_run_at`, :func:`_past`); then, if any needs it, those by the full
    encoder (:func:`_settle_block`)."""
    first = b * BLOCK
    end = smaller(first + BLOCK, src.size)
    least = np.uint32(1)  # the least settled() of the block
    k, row, column = _position(first, row_length)
    while k < end:
        m, hi, lo = _run_at(k, end, row, column, starts, row_length)
        read_ahead(src, k, k + m)
        least = smaller(least, _fast_run(src, dst, k, m, conversion, key, hi, lo, random))
        k, row, column = _past(k, m, row, column, row_length)
    if least == 0:
        _settle_block(first, end, src, dst, conversion, key, starts, row_length, random)


@helper_njit
def _run_at(k, end, row, column, starts, row_length):
    """``(m, hi, lo)``: the run of a block from its element ``k`` (in ``row``
    at ``column``; the block ends at ``end``): its length and the high and low
    32 bits of its first element's global index.  The runs are of consecutive
    global indices in one window of the generator (their bits from
    :data:`~numbacast.engine.rounding.WINDOW_BITS` on do not change), so the
    generator's work on those bits is done once a run, and of :data:`RUN`
    elements at most, each after reading ahead the lines of the run as far
    on as the cast kernels do (:func:`read_ahead`)."""
    index = starts[row] + column
    lo = np.uint32(index & _LOW)
    m = smaller(smaller(end - k, row_length - column), smaller(_WINDOW - np.int64(lo & _IN_WINDOW), RUN))
    return m, np.uint32(index >> 32), lo


@helper_njit
def _position(k, row_length):
    """``(k, row, column)`` of the element ``k`` of a C-ordered array of rows of ``row_length``."""
    row = k // row_length
    return k, row, k - row * row_length


@helper_njit
def _past(k, m, row, column, row_length):
    """:func:`_position` of the element ``m`` on from ``k`` (in ``row`` at
    ``column``), within or just past that row: no division."""
    column += m
    if column == row_length:
        return k + m, row + 1, 0
    return k + m, row, column


@helper_njit(forceinline=False)
def _settle_block(first, end, src, dst, conversion, key, starts, row_length, random):
    """Elements ``first`` to ``end`` of :func:`_block` that its fast encoder
    may have rounded wrongly, by the full encoder, run by run
    (:func:`_settle_run`; a function apart from the block's loop: in it,
    that loop ran 1-3% slower)."""
    k, row, column = _position(first, row_length)
    while k < end:
        m, hi, lo = _run_at(k, end, row, column, starts, row_length)
        _settle_run(src, dst, k, m, conversion, key, hi, lo, random)
        k, row, column = _past(k, m, row, column, row_length)


@helper_njit(forceinline=False)
def _settle_run(src, dst, first, m, conversion, key, hi, lo, random):
    """The elements of a run of :func:`_fast_run` (same arguments) where
    :func:`settled` is zero, by the full encoder: found by a loop that
    vectorises (each element's random number and check, a flag each), then
    redone one by one."""
    doubts = stack_bytes(RUN)
    keys = window_keys(key, hi, lo)
    count = lo
    base = np.uint64(first)
    for i in range(np.uint64(m)):
        reduced = _reduced_random(keys, count, random, base + i, conversion)
        count = np.uint32(count + np.uint32(1))
        doubts[i] = settled(src[base + i], conversion, reduced) == 0
    for i in range(np.uint64(m)):
        if doubts[i]:
            j = base + i
            r = random_number(keys, np.uint32(lo + np.uint32(i)), random, j, conversion)
            dst[j] = convert_random(src[j], conversion, r)


_LOW = (1 << 32) - 1
_WINDOW = 1 << WINDOW_BITS
_IN_WINDOW = np.uint32(_WINDOW - 1)


@cached_njit(parallel=True, nogil=True)
def stochastic_kernel(src, dst, conversion, key, starts, row_length, random):
    """``dst[j]`` = ``src[j]`` rounded stochastically, parallel over blocks of
    :data:`BLOCK` elements; element ``j`` lies in row ``j // row_length`` of
    its array, whose first element has the global index ``starts[row]``;
    ``random`` is None (hash the seed's ``key`` and the index) or the flat
    array of random numbers."""
    for b in prange((src.size + BLOCK - 1) // BLOCK):  # the loop index is unsigned in parallel, signed in serial
        _block(np.int64(b), src, dst, conversion, key, starts, row_length, random)  # one _block for both


#: ``(serial, parallel)`` compilations of :func:`stochastic_kernel`, for
#: :func:`~numbacast.engine.kernels.split_run`: a small array compiles the
#: serial loop only.
STOCHASTIC_ROUNDING = (serial_version(stochastic_kernel), stochastic_kernel)


@cached_njit(nogil=True)
def stochastic_any(src, dst, conversion, key, starts, row_length, random):
    """For ``@njit`` code: the blocks of :func:`stochastic_kernel` on the
    calling thread for arrays below :data:`PARALLEL_MIN` (by its own
    :func:`_block`, compiled once for both: the serial twin is not
    compiled), else :func:`stochastic_kernel`."""
    if src.size < PARALLEL_MIN:
        for b in range((src.size + BLOCK - 1) // BLOCK):
            _block(np.int64(b), src, dst, conversion, key, starts, row_length, random)
    else:
        stochastic_kernel(src, dst, conversion, key, starts, row_length, random)


_WHOLE = np.zeros(1, np.int64)


def chunk_rows(shape, location=None):
    """``(starts, row_length)`` for an array of ``shape``: the whole array, or
    with ``location`` = ``(whole_shape, offsets)`` the chunk of a larger array
    at those offsets.  Trailing axes the chunk spans whole make one run."""
    if location is None or len(shape) == 0:
        return _WHOLE, max(int(np.prod(shape, dtype=np.int64)), 1)
    whole, offsets = location
    axis = len(shape) - 1
    while axis > 0 and shape[axis] == whole[axis]:  # C-contiguous in the whole array from here on
        axis -= 1
    row_length = int(np.prod(shape[axis:], dtype=np.int64))
    strides = np.cumprod((1,) + tuple(whole[:0:-1]), dtype=np.int64)[::-1]
    outer = [np.arange(offsets[i], offsets[i] + shape[i], dtype=np.int64) * strides[i] for i in range(axis)]
    first = offsets[axis] * strides[axis] + sum(offsets[i] * strides[i] for i in range(axis + 1, len(shape)))
    starts = np.zeros(1, np.int64) + first
    for values in outer[::-1]:
        starts = (values[:, None] + starts[None, :]).reshape(-1)
    return np.ascontiguousarray(starts, np.int64), max(row_length, 1)


#: The messages of ``random_bits`` of another shape than the input's and of
#: values wider than ``stochastic_bits`` (``str.format`` templates), shared
#: with the ``@njit`` and Dask casts.
RANDOM_BITS_SHAPE = "random_bits has shape {}; the input has shape {}"
RANDOM_BITS_TOO_WIDE = "random_bits holds values of more than stochastic_bits={} bits (up to {})"


def check_random_bits(random_bits, shape, bits):
    """``random_bits`` as a flat native array of one unsigned integer per
    element of an array of ``shape``, each below ``2**bits``."""
    array = np.asarray(random_bits)
    if array.dtype.kind != "u" or array.dtype.itemsize > 8:
        raise TypeError(f"random_bits must be an array of unsigned integers (uint8 to uint64), not {array.dtype}")
    if array.shape != shape:
        raise ValueError(RANDOM_BITS_SHAPE.format(array.shape, shape))
    flat = np.ascontiguousarray(array).reshape(-1)
    if not flat.dtype.isnative:
        flat = flat.astype(flat.dtype.newbyteorder("="))
    if bits < 64 and flat.size and int(flat.max()) >> bits:
        raise ValueError(RANDOM_BITS_TOO_WIDE.format(bits, flat.max()))
    return flat


def _shares_memory(out, array, random):
    """Whether writing ``out`` may change ``array`` or the random numbers ``random`` (None or an array)."""
    return np.may_share_memory(out, array) or (random is not None and np.may_share_memory(out, random))


def cast_stochastic(conversion, array, out, key, random=None, location=None):
    """Apply the stochastic ``conversion`` to ``array`` into ``out`` (checked)
    or a new array: ``key`` from :func:`~numbacast.engine.rounding.seed_key`,
    ``random`` a flat array from :func:`check_random_bits` or None, ``location``
    as in :func:`chunk_rows`."""
    from .conversion import kernel_dtype

    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if out is not None and (not out.flags.c_contiguous or _shares_memory(out, array, random)):
        out[...] = cast_stochastic(conversion, array, None, key, random, location)
        return out
    if out is None:
        out = np.empty(array.shape, conversion.target.storage)
    src = np.ascontiguousarray(array).reshape(-1).view(kernel_dtype(conversion.source))
    dst = out.reshape(-1).view(kernel_dtype(conversion.target))
    starts, row_length = chunk_rows(array.shape, location)
    args = (src, dst, conversion, np.uint64(key), starts, np.int64(row_length), random)
    split_run(STOCHASTIC_ROUNDING, src.size, *args)
    return out
