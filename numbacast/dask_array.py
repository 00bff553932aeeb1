"""Dask arrays: ``numbacast.cast`` builds a lazy cast, one task per chunk.

:func:`numbacast.cast` hands a ``dask.array.Array`` to :func:`cast_lazily`
after checking every argument, so a bad target, option or source dtype raises
at the call, not at ``compute()``.  The result is a Dask array of NumPy chunks,
with the chunks of the input and the target's storage dtype.  Each chunk
(anything ``numpy.asarray`` accepts, cast from its own dtype) is cast by
:func:`numbacast.cast` in whatever process computes it -- the caller's, or a
``dask.distributed`` worker, which loads the compiled kernel from the disk
cache like any other process.

Within one process, chunks large enough for a parallel kernel are cast one
at a time, each by all of Numba's threads (see :func:`numbacast.kernels.launch`).

numbacast never imports Dask itself; this module is imported by
:func:`numbacast.cast` when it first sees a Dask array.
"""

import numpy as np

from .api import cast, is_dask_array
from .registry import resolve


def cast_lazily(x, target, saturate, round_mode, out):
    """The lazy cast of the Dask array ``x`` to ``target`` (an :class:`OnnxType`)
    with checked ``saturate`` and ``round_mode``; ``out`` must be None."""
    if out is not None:
        raise TypeError("out= cannot be used with a Dask array: numbacast.cast returns a lazy Dask array; compute "
                        "it, or write it into your array with dask.array.store(result, out)")
    if target.is_string or x.dtype.kind in "USO":
        raise TypeError(f"numbacast.cast does not cast Dask arrays to or from STRING (source dtype {x.dtype}, "
                        f"target {target.onnx_name}): the width of a text array is known only once it is computed; "
                        "compute the array first, or cast each chunk with x.map_blocks(numbacast.cast, ...)")
    resolve(x.dtype)
    storage = target.storage
    return x.map_blocks(cast, to=target.id, saturate=saturate, round_mode=round_mode, dtype=storage,
                        meta=np.empty((0,) * x.ndim, storage), token=f"numbacast-cast-{target.name}")


def refuse_dask(x, what):
    """Raise TypeError if ``x`` is a Dask array: ``what`` (e.g. ``"numbacast.pack"``)
    packs the whole array into one byte string, which Dask chunks cannot give."""
    if is_dask_array(x):
        raise TypeError(
            f"{what} does not take Dask arrays: it packs the whole array into one byte string, and a chunk "
            "whose size is not a multiple of the elements per packed group (2 for 4-bit types, 4 for 2- and 6-bit "
            f"types) shares bytes with the next chunk. Compute the array first ({what}(x.compute(), ...)), or, "
            "when every chunk's size is such a multiple, pack each chunk yourself with x.map_blocks(...)")
