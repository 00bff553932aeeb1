"""Running a numeric conversion over whole arrays: the numeric tail of ``cast``.

:func:`cast_numbers` casts an array of a numeric type; :func:`run` applies one
:class:`~numbacast.engine.conversion.Conversion` to every element of an array.

Each conversion either computes every element (decode the source, round once
to the target) or looks it up in a :func:`table` holding the converted value
of every code of its source.  :func:`uses_table` is the one rule that chooses,
for the Python call, the packed kernels and the ``@njit`` overload alike.
"""

import functools

import numpy as np

from ..formats.registry import DOUBLE, FLOAT
from .checks import check_out, check_source, refuse_masked
from .conversion import Conversion, kernel_dtype
from .kernels import NO_TABLE, PARALLEL_MIN, launch
from .stochastic import cast_stochastic, check_random_bits

#: Sources of at most this many bytes may be converted through a table of all their codes.
TABLE_MAX_ITEMSIZE = 2


def cast_numbers(
    array,
    target,
    saturate=True,
    round_mode="up",
    out=None,
    rounding=None,
    stochastic_bits=None,
    key=0,
    random_bits=None,
    location=None,
    source=None,
):
    """``array`` (a NumPy array of a numeric type) cast to the numeric type
    ``target`` with checked options, into ``out`` (checked here) or a new array.

    A stochastic cast draws its random numbers from ``key`` (see
    :func:`~numbacast.engine.rounding.seed_key`) or takes them from
    ``random_bits``; ``location`` places a chunk in a larger array (see
    :func:`~numbacast.engine.stochastic.chunk_rows`); ``source``, when given,
    is the type of the elements of ``array`` (see :func:`~numbacast.engine.checks.check_source`).
    Masked arrays are refused: Dask chunks come here, not through ``cast``."""
    refuse_masked(array, "numbacast's cast of a Dask chunk")
    array = np.asarray(array)
    conversion = Conversion.make(
        check_source(array, source), target, saturate, round_mode, rounding=rounding, stochastic_bits=stochastic_bits
    )
    if out is not None:
        check_out(out, array.shape, target)
    if conversion.stochastic:
        random = None
        if random_bits is not None:
            random = check_random_bits(random_bits, array.shape, conversion.stochastic_bits)
        return cast_stochastic(conversion, array, out, key, random, location)
    return run(conversion, array, out)


def run(conversion, array, out=None):
    """Apply ``conversion`` to every element of ``array``, into ``out`` (checked
    by :func:`~numbacast.engine.checks.check_out`) or a new array; return that array.

    An ``out`` of an ndarray subclass (``numpy.matrix``, ``numpy.memmap``) is
    written through a plain ndarray view of its memory and returned itself."""
    array = np.asarray(array)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if out is None:
        result = out = np.empty(array.shape, conversion.target.storage)
    else:
        result, out = out, out.view(np.ndarray)
        if not out.flags.c_contiguous or np.may_share_memory(out, array):
            out[...] = run(conversion, array)
            return result
    src = np.ascontiguousarray(array).reshape(-1)
    dst = out.reshape(-1).view(kernel_dtype(conversion.target))
    src, step, lookup = kernel_arguments(conversion, src)
    if step is None and src.size < PARALLEL_MIN:
        np.take(lookup, src, out=dst)  # a gather by NumPy: a first small cast compiles no loop for it
    else:
        launch(src, dst, step, lookup)
    return result


def kernel_arguments(conversion, src):
    """``(src, step, table)`` for a kernel over the flat source array ``src``:
    its codes and the table when :func:`uses_table`, else its kernel view,
    the conversion and :data:`~numbacast.engine.kernels.NO_TABLE`."""
    if uses_table(conversion):
        return src.view(f"u{src.dtype.itemsize}"), None, table(conversion)
    return src.view(kernel_dtype(conversion.source)), conversion, NO_TABLE


def uses_table(conversion):
    """Whether ``conversion`` looks its results up in :func:`table` rather than
    computing them.

    A source of at most 16 bits uses a table, except

    * into FLOAT and DOUBLE, which a few vector instructions compute from any
      source faster than a gather from a table;
    * from an integer or BOOL into an integer or BOOL, a truncation or a
      comparison that vectorises.

    Every other pair -- a narrow float source into anything but FLOAT and
    DOUBLE, or any small source into a float format narrower than FLOAT --
    runs one or two codecs per element, where the gather is faster.  The
    figures come from ``benchmarks/harness/table_or_compute.py`` (the docs'
    internals page shows a run).  The rule decides for the Python call, the
    packed kernels and ``cast`` inside ``@njit`` alike; both ways give the
    same bits.
    """
    source, target = conversion.source, conversion.target
    if conversion.stochastic:
        return False  # each element's result depends on its random number too
    if source.storage.itemsize > TABLE_MAX_ITEMSIZE or target in (FLOAT, DOUBLE):
        return False
    return not (_is_integral(source) and _is_integral(target))


def _is_integral(t):
    return t.is_integer or t.is_bool


@functools.cache
def table(conversion):
    """The converted value of every code of a source of at most 16 bits.

    The table is filled by the conversion's own serial kernel, run over every
    code: it takes well under a millisecond, and a first cast of a new pair
    compiles that one loop (the parallel loops only when a large array needs
    them; a small array's codes are then looked up by NumPy, see :func:`run`).
    """
    source = conversion.source
    codes = np.arange(1 << (8 * source.storage.itemsize), dtype=f"u{source.storage.itemsize}")
    result = np.empty(codes.shape, kernel_dtype(conversion.target))
    launch(codes.view(kernel_dtype(source)), result, conversion, NO_TABLE, parallel=False)
    result.flags.writeable = False
    return result
