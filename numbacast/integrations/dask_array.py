"""Dask arrays: ``numbacast.cast`` builds a lazy cast, one task per chunk;
``numbacast.mx.quantize`` and ``dequantize`` a lazy quantisation, one task
per chunk cut at block boundaries.

:func:`numbacast.cast` hands a ``dask.array.Array`` to :func:`cast_lazily`
after checking every argument, so a bad target, option or source dtype raises
at the call, not at ``compute()``.  The result is a Dask array of NumPy chunks,
with the chunks of the input and the target's storage dtype.  Each chunk
(anything ``numpy.asarray`` accepts, cast from its own dtype) is cast by
:func:`numbacast.engine.arrays.cast_numbers` in whatever process computes it --
the caller's, or a ``dask.distributed`` worker, which loads the compiled
kernel from the disk cache like any other process.

Within one process, chunks large enough for a parallel kernel are cast one
at a time, each by all of Numba's threads (see :func:`numbacast.engine.kernels.launch`).

numbacast never imports Dask itself: a Dask array reaching this module means
the caller has imported it.
"""

import numpy as np

from ..engine.arrays import cast_numbers
from ..engine.checks import check_source
from ..engine.stochastic import RANDOM_BITS_SHAPE
from ..formats.blocks import block_count
from ..formats.registry import resolve


def cast_lazily(x, target, saturate, round_mode, out, rounding=None, source=None, **stochastic):
    """The lazy cast of the Dask array ``x`` to ``target`` (an :class:`OnnxType`)
    with checked ``saturate``, ``round_mode`` and ``rounding``; ``out`` must be
    None.  A stochastic cast (``stochastic`` holds ``stochastic_bits``,
    ``key`` and ``random_bits``) tells each chunk where it lies in ``x``, so
    that its random numbers are those of the same elements of a NumPy array."""
    if out is not None:
        raise TypeError(
            "out= cannot be used with a Dask array: numbacast.cast returns a lazy Dask array; compute "
            "it, or write it into your array with dask.array.store(result, out)"
        )
    if target.is_string or x.dtype.kind in "USO":
        raise TypeError(
            f"numbacast.cast does not cast Dask arrays to or from STRING (source dtype {x.dtype}, "
            f"target {target.onnx_name}): the width of a text array is known only once it is computed; "
            "compute the array first, or cast each chunk with x.map_blocks(numbacast.cast, ...)"
        )
    if source is None:
        resolve(x.dtype)
    else:
        check_source(np.empty(0, x.dtype), source)
    storage = target.storage
    function, arrays, token = cast_numbers, (x,), f"numbacast-cast-{target.name}"
    if stochastic:
        if any(np.isnan(size) for sizes in x.chunks for size in sizes):
            raise ValueError(
                f"a stochastic cast of a Dask array needs its chunk sizes (this one has unknown sizes: {x.chunks}): "
                "each element's random number depends on where it lies in the whole array; call "
                "x.compute_chunk_sizes() first"
            )
        random_bits = stochastic.pop("random_bits")
        if random_bits is not None:
            random_bits = dask_array_module().asarray(random_bits)
            if random_bits.shape != x.shape:
                raise ValueError(RANDOM_BITS_SHAPE.format(random_bits.shape, x.shape))
            arrays = (x, random_bits.rechunk(x.chunks))
        function, token = _cast_chunk, f"{token}-stochastic"
    return dask_array_module().map_blocks(
        function,
        *arrays,
        target=target,
        saturate=saturate,
        round_mode=round_mode,
        rounding=rounding,
        source=source,
        **stochastic,
        dtype=storage,
        meta=np.empty((0,) * x.ndim, storage),
        token=token,
    )


def block_aligned(x, axis, block_size):
    """``x`` with chunks along ``axis`` that hold whole blocks of
    ``block_size`` (all but the last chunk a multiple of it): ``x`` itself
    when they do, else rechunked along ``axis`` to the multiple of
    ``block_size`` nearest its mean chunk (at least one block)."""
    sizes = x.chunks[axis]
    if any(np.isnan(size) for size in sizes):
        raise ValueError(
            f"a Dask array cut into blocks needs its chunk sizes (this one has unknown sizes: {x.chunks}); "
            "call x.compute_chunk_sizes() first"
        )
    if all(size % block_size == 0 for size in sizes[:-1]):
        return x
    blocks = max(1, round(sum(sizes) / len(sizes) / block_size))
    return x.rechunk({axis: min(sum(sizes), blocks * block_size)})


def quantize_lazily(x, quantize_chunk, axis, block_size, element_dtype, scale_dtype):
    """``(elements, scales)``: the lazy quantisation of the Dask array ``x``
    cut along ``axis`` into blocks of ``block_size``, ``quantize_chunk(chunk)``
    giving the ``(elements, scales)`` of one chunk (of ``x`` rechunked by
    :func:`block_aligned`: each block in one chunk).  Each chunk is quantised
    once, for both arrays."""
    x = block_aligned(x, axis, block_size)
    da = dask_array_module()
    meta = np.empty((0,) * x.ndim, x.dtype)
    pairs = da.map_blocks(quantize_chunk, x, dtype=x.dtype, meta=meta, token="numbacast-mx-quantize")
    elements = da.map_blocks(_part, pairs, 0, dtype=element_dtype, meta=np.empty((0,) * x.ndim, element_dtype))
    scales = da.map_blocks(
        _part,
        pairs,
        1,
        chunks=_scale_chunks(x.chunks, axis, block_size),
        dtype=scale_dtype,
        meta=np.empty((0,) * x.ndim, scale_dtype),
    )
    return elements, scales


def _scale_chunks(chunks, axis, block_size):
    """The chunks of the scales of elements of ``chunks``, cut at block boundaries along ``axis``."""
    return chunks[:axis] + (tuple(block_count(size, block_size) for size in chunks[axis]),) + chunks[axis + 1 :]


def _part(pair, which):
    """Array ``which`` of a chunk's ``(elements, scales)``."""
    return pair[which]


def largest_lazily(x, largest_of_chunk):
    """The largest of ``largest_of_chunk(chunk)`` over the chunks of the Dask
    array ``x`` (NaN when one is NaN), computed now."""
    one = tuple((1,) * len(sizes) for sizes in x.chunks)
    da = dask_array_module()
    largest = da.map_blocks(_as_cell, x, largest_of_chunk, chunks=one, dtype=np.float64)
    return float(largest.max().compute())


def _as_cell(chunk, largest_of_chunk):
    return np.full((1,) * chunk.ndim, largest_of_chunk(chunk), np.float64)


def dequantize_lazily(elements, scales, dequantize_chunk, axis, block_size, dtype):
    """The lazy values of the Dask (or NumPy) ``elements`` and ``scales`` of
    a quantisation along ``axis`` into blocks of ``block_size``,
    ``dequantize_chunk(elements, scales)`` giving those of one chunk (of
    ``dtype``): the elements rechunked by :func:`block_aligned`, the scales
    to match them."""
    da = dask_array_module()
    elements = block_aligned(da.asarray(elements), axis, block_size)
    scales, matching = da.asarray(scales), _scale_chunks(elements.chunks, axis, block_size)
    if scales.chunks != matching:  # (unknown sizes are matched already, or not at all)
        scales = scales.rechunk(matching)
    meta = np.empty((0,) * elements.ndim, dtype)
    return da.map_blocks(dequantize_chunk, elements, scales, dtype=dtype, meta=meta, token="numbacast-mx-dequantize")


def dask_array_module():
    """``dask.array``, which the caller has imported (it made a Dask array)."""
    import sys

    return sys.modules["dask.array"]


def _cast_chunk(chunk, random_bits=None, *, block_info=None, **options):
    """One chunk of a stochastic cast, placed in the whole array by ``block_info``."""
    info = block_info[0]
    location = (tuple(info["shape"]), tuple(start for start, _ in info["array-location"]))
    return cast_numbers(chunk, random_bits=random_bits, location=location, **options)
