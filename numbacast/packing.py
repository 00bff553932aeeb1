"""The ONNX wire layout of the sub-byte types, and casts fused with it.

ONNX stores INT4, UINT4, FLOAT4E2M1 (4 bits), INT2, UINT2 (2 bits),
FLOAT6E2M3 and FLOAT6E3M2 (6 bits) packed: the elements, in C order, form one
little-endian bit stream, element ``i`` in bits ``i*b`` to ``i*b + b - 1``;
the last byte is zero-padded.  A tensor of ``n`` elements takes
``ceil(n*b/8)`` bytes.  So 4-bit types hold two elements per byte (the first
in the low nibble), 2-bit types four per byte (the first in the lowest two
bits) and 6-bit types four elements in three bytes.

One generic formulation serves both directions and the three widths: packing
re-cuts a stream of ``b``-bit items into 8-bit items, unpacking the reverse.
The kernel works group by group, in parallel: a *group* is the fewest elements
that fill whole bytes (``lcm(8, b)`` bits: 2 elements in 1 byte, 4 in 1, 4 in
3).

The element side goes through a :class:`~numbacast.engine.conversion.Conversion`, so
a cast and the packing are one pass: :func:`pack_with` casts every element
and packs the results, :func:`unpack_with` unpacks and casts every element.
Packing into the 4- and 2-bit types, a group being one byte, takes a
second form (:func:`pack_bytes_parallel`): a few hundred elements cast into
code bytes in the core's cache, then each group's bytes shifted into one,
so that the cast runs in vector lanes as wide as an unpacked one.
A conversion from a type to itself is the plain layout change.
"""

from __future__ import annotations

import math
import operator

import numpy as np
import numpy.typing as npt
from numba import prange, types
from numba.extending import overload

from .engine.arrays import table, uses_table
from .engine.cache import OVERLOAD_OPTIONS, cached_njit, helper_njit, serial_version
from .engine.checks import check_round_mode, check_saturate, refuse_dask, refuse_masked
from .engine.conversion import Conversion, convert, kernel_dtype
from .engine.kernels import split_run
from .engine.prefetch import read_ahead
from .formats.registry import TYPES, TypeLike, resolve

_jit = helper_njit

#: The types that ONNX stores packed, fewer than 8 bits an element.
PACKED_TYPES = tuple(t for t in TYPES if t.bits < 8)


def group_shape(bits):
    """(elements, bytes) of one group of ``bits``-bit elements."""
    span = math.lcm(8, bits)
    return span // bits, span // 8


def packed_size(count, bits):
    """Bytes taken by ``count`` packed elements of ``bits`` bits."""
    return (count * bits + 7) // 8


def stream_layout(read, write):
    """``(in_items, in_bits, out_items, out_bits)`` of one group of
    :func:`repack_kernel` as constants (``@njit`` code only)."""
    raise TypeError("for @njit code only")


@overload(stream_layout, jit_options=OVERLOAD_OPTIONS)
def _overload_stream_layout(read, write):
    if isinstance(write, types.NoneType):  # packing: elements of the read conversion's target in, bytes out
        bits = read.conversion.target.bits
        elements, nbytes = group_shape(bits)
        layout = (elements, bits, nbytes, 8)
    else:  # unpacking: bytes in, elements of the write conversion's source out
        bits = write.conversion.source.bits
        elements, nbytes = group_shape(bits)
        layout = (nbytes, 8, elements, bits)
    return lambda read, write: layout


def element(value, conversion, table):
    """``value`` through ``conversion`` (``@njit`` code only): itself when the
    conversion is None or keeps the type, ``table[value]`` when there is a
    table, else ``convert(value, conversion)``."""
    raise TypeError("for @njit code only")


@overload(element, jit_options=OVERLOAD_OPTIONS)
def _overload_element(value, conversion, table):
    if isinstance(conversion, types.NoneType) or conversion.conversion.source is conversion.conversion.target:
        return lambda value, conversion, table: value
    if not isinstance(table, types.NoneType):
        return lambda value, conversion, table: table[value]
    return lambda value, conversion, table: convert(value, conversion)


@_jit
def _repack_group(src, dst, first_in, in_items, in_bits, first_out, out_items, out_bits, read, write, table):
    """Read ``in_items`` items of ``in_bits`` bits from ``src`` into one
    little-endian bit stream and write it out as ``out_items`` items of
    ``out_bits`` bits to ``dst``, each item going through its side's conversion.

    Indices are unsigned so that Numba needs no negative-index wraparound and
    LLVM can vectorise the loop around this one."""
    in_mask = np.uint64((1 << in_bits) - 1)
    out_mask = np.uint64((1 << out_bits) - 1)
    stream = np.uint64(0)
    for k in range(in_items):
        item = np.uint64(element(src[np.uint64(first_in + k)], read, table)) & in_mask
        stream |= item << np.uint64(k * in_bits)
    for k in range(out_items):
        item = np.uint8((stream >> np.uint64(k * out_bits)) & out_mask)
        dst[np.uint64(first_out + k)] = element(item, write, table)


@_jit
def _repack_tail(src, dst, full, read, write, table):
    """The last, partial group of :func:`repack_kernel` after ``full`` whole ones."""
    in_items, in_bits, out_items, out_bits = stream_layout(read, write)
    _repack_group(
        src,
        dst,
        full * in_items,
        src.size - full * in_items,
        in_bits,
        full * out_items,
        dst.size - full * out_items,
        out_bits,
        read,
        write,
        table,
    )


@cached_njit(parallel=True, nogil=True)
def repack_parallel(src, dst, read, write, table):
    """The loop of :data:`repack_kernel`, parallel over groups."""
    in_items, in_bits, out_items, out_bits = stream_layout(read, write)
    full = min(src.size // in_items, dst.size // out_items)
    for g in prange(full):
        _repack_group(src, dst, g * in_items, in_items, in_bits, g * out_items, out_items, out_bits, read, write, table)
    _repack_tail(src, dst, full, read, write, table)


#: Groups a task of :func:`pack_bytes_parallel` packs, and groups it packs
#: at a time: its codes (a scratch array of 512 or 1024 bytes) stay in the
#: core's first-level cache, and the packed bytes go out while the elements
#: still come in (a run of stores at a time, not 8 KiB at once).
PACK_GROUPS, PACK_RUN = 1 << 13, 1 << 8


@cached_njit(parallel=True, nogil=True)
def pack_bytes_parallel(src, dst, read, table):
    """Packing into a 4- or 2-bit type (one byte a group, ``dst`` holding
    every group of ``src``, the last one zero-padded), parallel over tasks
    of :data:`PACK_GROUPS` groups, :data:`PACK_RUN` at a time: every
    element's code into a byte of a scratch array (one loop, in vector lanes
    as wide as an unpacked cast's), then each group's code bytes shifted
    into one (a loop of byte lanes).  The same bytes as
    :func:`repack_parallel`, whose loop of groups reads the elements of a
    group from interleaved lanes and encodes them in vectors half as wide
    (and, compiled for AVX-512 without ``prange``, not in vectors at all)."""
    items, bits, _, _ = stream_layout(read, None)
    groups, size = dst.size, src.size  # the last group maybe partial, zero-padded
    mask = np.uint8((1 << bits) - 1)
    for task in prange((groups + PACK_GROUPS - 1) // PACK_GROUPS):
        codes = np.empty(PACK_RUN * items, np.uint8)
        for first in range(task * PACK_GROUPS, min(groups, (task + 1) * PACK_GROUPS), PACK_RUN):
            count = min(PACK_RUN, groups - first)
            start = np.uint64(first)  # unsigned: no negative-index wraparound in the loops
            present = min(count * items, size - first * items)
            base = np.int64(first) * items  # the run's first element
            read_ahead(src, base, base + present)
            for k in range(present):
                codes[k] = np.uint8(element(src[start * np.uint64(items) + np.uint64(k)], read, table)) & mask
            for k in range(present, count * items):
                codes[k] = 0
            for g in range(count):
                folded = codes[g * items]
                for k in range(1, items):
                    folded |= codes[g * items + k] << np.uint8(k * bits)
                dst[start + np.uint64(g)] = folded


#: Pack into a 4- or 2-bit type: ``split_run(pack_bytes_kernel, src.size, src, dst, read, table)``.
pack_bytes_kernel = (serial_version(pack_bytes_parallel), pack_bytes_parallel)


#: Re-cut the bit stream of ``src`` into the items of ``dst``, group by group:
#: ``split_run(repack_kernel, max(src.size, dst.size), src, dst, read, write, table)``
#: (the element side is the longer).
#:
#: Packing: ``read`` is the conversion of each element of ``src`` and
#: ``write`` None; ``dst`` gets the packed bytes.  Unpacking: ``read`` is None
#: and ``write`` the conversion of each element unpacked from the bytes
#: ``src`` into ``dst``.  ``table`` (or None) holds the converted value of
#: every code of a narrow element type.  The parallel loop is compiled on the
#: first array of :data:`~numbacast.engine.kernels.PARALLEL_MIN` elements.
repack_kernel = (serial_version(repack_parallel), repack_parallel)


def _table_for(conversion):
    """The table of converted codes a kernel uses for ``conversion``
    (:func:`~numbacast.engine.arrays.uses_table`), or None to convert each
    element.  A layout conversion (a type to itself) converts nothing."""
    if conversion.source is conversion.target or not uses_table(conversion):
        return None
    return table(conversion)


def layout_conversion(t):
    """The conversion that packs or unpacks the type ``t`` unchanged.  Every
    type of a width uses the same one, so they share one compiled kernel."""
    carrier = next(p for p in PACKED_TYPES if p.bits == t.bits)
    return Conversion.make(carrier, carrier)


def check_packed_type(t, role):
    """ValueError unless the type ``t`` is one that ONNX stores packed."""
    if t not in PACKED_TYPES:
        raise ValueError(
            f"{role} must be one of the packed sub-byte types "
            f"({', '.join(p.onnx_name for p in PACKED_TYPES)}), not {t.onnx_name}"
        )


def pack_with(conversion, array):
    """The ONNX packed bytes (a flat uint8 array) of the conversion of every element of ``array``, in C order."""
    check_packed_type(conversion.target, "the packed type")
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    flat = np.ascontiguousarray(array).reshape(-1)
    lookup = _table_for(conversion)
    src = flat.view(kernel_dtype(conversion.source) if lookup is None else f"u{flat.dtype.itemsize}")
    dst = np.empty(packed_size(flat.size, conversion.target.bits), np.uint8)
    if conversion.target.bits in (4, 2):
        split_run(pack_bytes_kernel, flat.size, src, dst, conversion, lookup)
    else:
        split_run(repack_kernel, flat.size, src, dst, conversion, None, lookup)
    return dst


def unpack_with(conversion, codes, shape):
    """An array of ``shape`` holding the conversion of every element packed in
    ``codes``, as checked by :func:`packed_data`."""
    check_packed_type(conversion.source, "the packed type")
    out = np.empty(shape, conversion.target.storage)
    split_run(
        repack_kernel,
        out.size,
        codes,
        out.reshape(-1).view(kernel_dtype(conversion.target)),
        None,
        conversion,
        _table_for(conversion),
    )
    return out


def packed_data(data, t, shape):
    """(codes, shape): the packed ``data`` of ``shape`` elements of type ``t``
    as a flat uint8 array, and ``shape`` as a tuple, both checked."""
    shape = _check_shape(shape)
    return _packed_bytes(data, t, shape), shape


def _check_shape(shape):
    """``shape`` (an integer or a sequence of them, none negative) as a tuple."""
    try:
        dims = tuple(map(operator.index, shape if isinstance(shape, (tuple, list)) else (shape,)))
    except TypeError:
        dims = None
    if dims is None or any(d < 0 for d in dims):
        raise ValueError(f"shape must be a non-negative integer or a tuple of them, not {shape!r}")
    return dims


def _packed_bytes(data, t, shape):
    """``data`` (bytes-like or a uint8 array) as a flat uint8 array, checked
    to be exactly the packed size of ``shape`` elements of type ``t``."""
    refuse_masked(data, "numbacast.unpack")
    if isinstance(data, (bytes, bytearray, memoryview)):
        codes = np.frombuffer(data, np.uint8)
    elif isinstance(data, np.ndarray) and data.dtype == np.uint8:
        codes = np.ascontiguousarray(data).reshape(-1)
    else:
        kind = f"an array of dtype {data.dtype}" if isinstance(data, np.ndarray) else type(data).__name__
        raise TypeError(f"packed data must be bytes or a uint8 array, not {kind}")
    count = math.prod(shape)
    expected = packed_size(count, t.bits)
    if codes.size != expected:
        raise ValueError(
            f"packed {t.onnx_name} data of shape {shape} takes {expected} bytes "
            f"(ceil({count} * {t.bits} / 8)), not {codes.size}"
        )
    return codes


def pack(x: npt.ArrayLike) -> np.ndarray:
    """The ONNX wire bytes of an array of a sub-byte type.

    ``x`` is an array of ml_dtypes int4, uint4, float4_e2m1fn, int2, uint2,
    float6_e2m3fn or float6_e3m2fn (one element per byte, as
    :func:`numbacast.cast` returns them).  Returns a flat uint8 array of
    ``ceil(x.size * bits / 8)`` bytes in the ONNX layout (elements in C
    order).  To cast and pack in one pass, use ``cast(x, to, packed=True)``.
    """
    refuse_dask(x, "numbacast.pack")
    refuse_masked(x, "numbacast.pack")
    array = np.asarray(x)
    t = resolve(array.dtype)
    if t not in PACKED_TYPES:
        raise TypeError(
            f"pack takes an array of a sub-byte type ({', '.join(p.name for p in PACKED_TYPES)}), "
            f"not of dtype {array.dtype}; cast(x, to, packed=True) casts and packs in one pass"
        )
    return pack_with(layout_conversion(t), array)


def unpack(
    data: bytes | bytearray | memoryview | np.ndarray,
    type: TypeLike,
    shape: int | tuple[int, ...] | list[int],
    *,
    to: TypeLike | None = None,
    saturate: bool = True,
    round_mode: str = "up",
) -> np.ndarray:
    """The array packed in the ONNX wire bytes ``data``.

    ``data`` holds ``shape`` elements of the sub-byte ONNX type ``type``
    (bytes, bytearray, memoryview or a uint8 array of exactly
    ``ceil(n * bits / 8)`` bytes).  Returns an array of ``shape`` in the
    storage of ``type`` (one element per byte) or, with ``to``, its cast to
    ``to`` (with ``saturate`` and ``round_mode`` as in :func:`numbacast.cast`)
    in one pass.
    """
    source = resolve(type)
    check_packed_type(source, "type")
    if to is None:
        return unpack_with(layout_conversion(source), *packed_data(data, source, shape)).view(source.storage)
    target = resolve(to)
    if target.is_string:
        raise TypeError(
            "unpack casts to the numeric types only, not to STRING: unpack first, then "
            f"numbacast.cast(unpack(data, {source.name!r}, shape), 'string')"
        )
    conversion = Conversion.make(source, target, check_saturate(saturate), check_round_mode(round_mode))
    return unpack_with(conversion, *packed_data(data, source, shape))


def cast_packed(array, target, saturate, round_mode, out, rounding=None, source=None):
    """``cast(..., packed=True)``: the packed bytes of the cast of ``array`` (of
    type ``source``, by default its dtype's) to ``target`` with checked options."""
    source = resolve(array.dtype) if source is None else source
    conversion = Conversion.make(source, target, saturate, round_mode, rounding=rounding)
    if out is not None:
        raise ValueError("out= cannot be combined with packed=True")
    check_packed_type(conversion.target, "with packed=True, the target type")
    return pack_with(conversion, array)
