"""Array kernels: one compiled loop per conversion.

``cast_kernel(src, dst, conversion, table)`` writes into the flat array ``dst``
the conversion of every element of the flat array ``src``:

* ``conversion`` a :class:`~numbacast.conversion.Conversion`: each element goes
  through :func:`~numbacast.conversion.convert` (``table`` is unused);
* ``conversion`` None: each element is an index into ``table``, which holds
  the converted value of every possible code of a source of at most 16 bits.

The loop is compiled twice: :func:`serial_kernel` converts arrays shorter
than :data:`PARALLEL_MIN` on the calling thread, :func:`parallel_kernel`
splits longer ones over Numba's thread pool (``numba.set_num_threads``).
Numba compiles each once per signature -- that is, once per conversion and
array types -- on its first use, and caches the machine code on disk
(:mod:`numbacast.cache`): a first cast of a small array compiles only the
serial loop, which takes a fraction of the time of the parallel one.
``cast_kernel`` chooses between the two for ``@njit`` code.

From Python, call :func:`launch` (or any parallel kernel through
:func:`take_turns`): one parallel kernel runs at a time per process.
Numba's ``workqueue`` threading layer aborts the process when two threads
start parallel work at once, and every layer would oversubscribe the cores.
"""

import threading

import numpy as np
from numba import prange, typeof, types
from numba.extending import overload

from .cache import cached_njit
from .conversion import ConversionType, convert

#: Below this many elements a kernel runs serially: starting threads costs more.
PARALLEL_MIN = 1 << 15

#: The ``table`` argument of a kernel that has none.
NO_TABLE = np.zeros(1, np.uint8)


def convert_element(value, conversion, table):
    """One element of :func:`cast_kernel` (``@njit`` code only)."""
    raise TypeError("convert_element() is for @njit code")


@overload(convert_element, jit_options={"nogil": True})
def _overload_convert_element(value, conversion, table):
    if isinstance(conversion, types.NoneType):
        return lambda value, conversion, table: table[value]
    if isinstance(conversion, ConversionType):
        return lambda value, conversion, table: convert(value, conversion)


@cached_njit(nogil=True)
def serial_kernel(src, dst, conversion, table):
    """The loop of :func:`cast_kernel` on the calling thread (arrays below :data:`PARALLEL_MIN`)."""
    for i in range(src.size):
        dst[i] = convert_element(src[i], conversion, table)


@cached_njit(parallel=True, nogil=True)
def parallel_kernel(src, dst, conversion, table):
    """The loop of :func:`cast_kernel` over Numba's thread pool (arrays of :data:`PARALLEL_MIN` or more)."""
    for i in prange(src.size):
        dst[i] = convert_element(src[i], conversion, table)


@cached_njit(nogil=True)
def cast_kernel(src, dst, conversion, table):
    """:func:`serial_kernel` or :func:`parallel_kernel` by the size of ``src``,
    for ``@njit`` code (compiling it compiles both)."""
    if src.size < PARALLEL_MIN:
        serial_kernel(src, dst, conversion, table)
    else:
        parallel_kernel(src, dst, conversion, table)


_PARALLEL_LAUNCH = threading.Lock()

#: Compiled entry points of :func:`serial_kernel` and :func:`parallel_kernel` by
#: ``(kernel, _signature_key(...))``: calling one skips the dispatcher's type
#: matching (most of a small call's cost).
_ENTRY_POINTS: dict = {}


def _signature_key(src, dst, conversion, table):
    """What selects a compiled :func:`cast_kernel` for these (1-D, C-contiguous) arguments."""
    return (
        conversion,
        src.dtype,
        src.flags.writeable,
        src.flags.aligned,
        dst.dtype,
        dst.flags.aligned,
        table.dtype,
        table.flags.writeable,
    )


def _entry_point(src, dst, conversion, table, kernel=None):
    kernel = kernel or serial_kernel
    key = (kernel, _signature_key(src, dst, conversion, table))
    entry = _ENTRY_POINTS.get(key)
    if entry is None:
        signature = tuple(typeof(arg) for arg in (src, dst, conversion, table))
        kernel.compile(signature)  # or load it from the disk cache
        entry = _ENTRY_POINTS[key] = kernel.overloads[signature].entry_point
    return entry


def take_turns(kernel, *args):
    """``kernel(*args)`` for a parallel kernel called from Python in any
    thread: one such call runs at a time in the process."""
    with _PARALLEL_LAUNCH:
        return kernel(*args)


def launch(src, dst, conversion, table, parallel=True):
    """:func:`cast_kernel` from Python, any thread, on 1-D C-contiguous arrays:
    parallel runs take turns, serial ones (small arrays, or ``parallel``
    False) do not wait.  Each of the two loops is compiled (or loaded) on its
    first use."""
    if src.size < PARALLEL_MIN or not parallel:
        _entry_point(src, dst, conversion, table)(src, dst, conversion, table)
    else:
        take_turns(_entry_point(src, dst, conversion, table, parallel_kernel), src, dst, conversion, table)


def split_run(kernels, size, *args):
    """``kernels`` is ``(serial, parallel)``, two compilations of one loop:
    run the serial one when ``size`` is below :data:`PARALLEL_MIN`, else the
    parallel one (taking turns).  A process that only ever sees small arrays
    never compiles the parallel loop, the costlier of the two."""
    serial, parallel = kernels
    if size < PARALLEL_MIN:
        return serial(*args)
    return take_turns(parallel, *args)
