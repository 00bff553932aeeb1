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
from .conversion import Conversion, kernel_dtype, through_stand_in
from .kernels import NO_TABLE, PARALLEL_MIN, Launcher
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
    conversion = _conversion_of(array, source, target, saturate, round_mode, rounding, stochastic_bits)
    if out is not None:
        check_out(out, array.shape, target)
    if conversion.stochastic:
        random = None
        if random_bits is not None:
            random = check_random_bits(random_bits, array.shape, conversion.stochastic_bits)
        return cast_stochastic(conversion, array, out, key, random, location)
    return run(conversion, array, out)


def plan_of(array, target, saturate=True, round_mode="up", rounding=None):
    """The :class:`Plan` of :func:`cast_numbers` of the ndarray ``array`` with
    these checked options (not stochastic)."""
    return plan(_conversion_of(array, None, target, saturate, round_mode, rounding))


def _conversion_of(array, source, target, saturate, round_mode, rounding, stochastic_bits=None):
    """The :class:`~numbacast.engine.conversion.Conversion` of the elements of
    ``array`` (of the type ``source``, checked; None: its dtype's) to ``target``."""
    return Conversion.make(
        check_source(array, source), target, saturate, round_mode, rounding=rounding, stochastic_bits=stochastic_bits
    )


def run(conversion, array, out=None):
    """Apply ``conversion`` to every element of ``array``, into ``out`` (checked
    by :func:`~numbacast.engine.checks.check_out`) or a new array; return that array.

    An ``out`` of an ndarray subclass (``numpy.matrix``, ``numpy.memmap``) is
    written through a plain ndarray view of its memory and returned itself."""
    array = np.asarray(array)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if out is None:
        return plan(conversion).new(array)
    return plan(conversion).into(array, out)


@functools.cache
def plan(conversion):
    """The :class:`Plan` of ``conversion``, made on its first use."""
    return Plan(conversion)


class Plan:
    """How :func:`run` applies one conversion, worked out once: the dtypes
    its kernel reads and writes, the :func:`table` of its results when
    :func:`uses_table`, and the :class:`~numbacast.engine.kernels.Launcher`
    keeping its compiled loops.  A warm call of :meth:`new` costs an
    allocation, two views and the loop (``numbacast.cast`` keeps the plans
    of the casts it made: see docs/internals.md)."""

    def __init__(self, conversion):
        self.storage = conversion.target.storage
        self.target_view = kernel_dtype(conversion.target)
        if uses_table(conversion):  # the codes index the table
            self.source_view = np.dtype(f"u{conversion.source.storage.itemsize}")
            self.lookup = table(conversion)
            self.launch = Launcher(None, self.lookup)
        else:
            self.source_view, self.lookup = kernel_dtype(conversion.source), None
            self.launch = Launcher(conversion, NO_TABLE)

    def new(self, array):
        """The conversion of the ndarray ``array`` (of the source's storage,
        native byte order, any shape and strides) in a new array."""
        result = np.empty(array.shape, self.storage)
        self.apply(_flat(np.ascontiguousarray(array)), _flat(result), fresh=True)
        return result

    def into(self, array, out):
        """The conversion of the ndarray ``array`` (as for :meth:`new`) into
        ``out`` (checked by :func:`~numbacast.engine.checks.check_out`), returned."""
        result, out = out, out.view(np.ndarray)
        if not out.flags.c_contiguous or np.may_share_memory(out, array):
            out[...] = self.new(array)
        else:
            self.apply(_flat(np.ascontiguousarray(array)), _flat(out))
        return result

    def apply(self, src, dst, fresh=False):
        """``dst`` = the conversion of ``src``, both flat C-contiguous arrays
        of the source's and the target's storage; ``fresh`` when ``dst`` was
        just allocated (see :class:`~numbacast.engine.kernels.Launcher`)."""
        if src.dtype != self.source_view:
            src = src.view(self.source_view)
        if dst.dtype != self.target_view:
            dst = dst.view(self.target_view)
        if self.lookup is not None and src.size < PARALLEL_MIN:
            np.take(self.lookup, src, out=dst)  # a gather by NumPy: a first small cast compiles no loop for it
        else:
            self.launch(src, dst, fresh=fresh)


def _flat(array):
    """The C-contiguous ``array`` as one dimension (itself when it is one)."""
    return array if array.ndim == 1 else array.reshape(-1)


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

    The table is filled by two serial kernels run over every code, through
    the type that stands for the source's kind of value
    (:func:`~numbacast.engine.conversion.through_stand_in`): the source's
    codes to their values in FLOAT (DOUBLE, INT32), then those values to the
    target, by the kernel a cast from FLOAT (DOUBLE, INT32) to the target
    runs.  It takes well under a millisecond; a first cast of a new pair
    compiles neither loop when the source and the target were used before
    with other types (the parallel loops only when a large array needs them;
    a small array's codes are looked up by NumPy, see :func:`run`).
    """
    to_value, from_value = through_stand_in(conversion)
    source = conversion.source
    codes = np.arange(1 << (8 * source.storage.itemsize), dtype=f"u{source.storage.itemsize}")
    values = np.empty(codes.shape, kernel_dtype(to_value.target))
    plan(to_value).launch(codes.view(kernel_dtype(source)), values, parallel=False)  # the casts' own plans
    result = np.empty(codes.shape, kernel_dtype(conversion.target))
    plan(from_value).launch(values, result, parallel=False)
    result.flags.writeable = False
    return result
