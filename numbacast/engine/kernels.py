"""Array kernels: one compiled loop per conversion.

``cast_kernel(src, dst, conversion, table)`` writes into the flat array ``dst``
the conversion of every element of the flat array ``src``:

* ``conversion`` a :class:`~numbacast.conversion.Conversion`: each element goes
  through the stages of its conversion (:func:`~numbacast.engine.conversion.stages`; ``table`` is unused);
* ``conversion`` None: each element is an index into ``table``, which holds
  the converted value of every possible code of a source of at most 16 bits.

The loop is compiled twice: :func:`serial_kernel` converts arrays shorter
than :data:`PARALLEL_MIN` on the calling thread, :func:`parallel_kernel`
splits longer ones over Numba's thread pool (``numba.set_num_threads``), by
runs that read ahead (:mod:`~numbacast.engine.prefetch`); from Python, a
large output of a light conversion is written past the caches by a third
loop, :func:`streaming_kernel` (:mod:`~numbacast.engine.streaming`).
Numba compiles each once per signature -- that is, once per conversion and
array types -- on its first use, and caches the machine code on disk
(:mod:`numbacast.cache`): a first cast of a small array compiles only the
serial loop, which takes a fraction of the time of the parallel one.
``cast_kernel`` chooses between the two for ``@njit`` code (below :data:`PARALLEL_MIN`, by the
parallel loop's element loop, the serial loop's twin).

From Python, call a :class:`Launcher` (or any parallel kernel through
:func:`take_turns`): one parallel kernel runs at a time per process.
Numba's ``workqueue`` threading layer aborts the process when two threads
start parallel work at once, and every layer would oversubscribe the cores.

After ``fork``: GNU OpenMP (Numba's ``omp`` threading layer) ends a child
process that starts a parallel region when its parent had run one.  So a
child forked after a parallel kernel ran under that layer runs the *serial
twin* of each parallel kernel (:func:`~numbacast.engine.cache.serial_version`:
the same code compiled without ``parallel``; for a cast, :func:`serial_kernel`), on its calling thread; the first
use of a twin loads it from the disk cache (or compiles it, once per machine).
The ``workqueue`` and ``tbb`` layers, and children made by ``spawn`` or
``forkserver``, keep their thread pools.
"""

import os
import threading

import numba
import numpy as np
from numba import prange, typeof, types
from numba.extending import overload
from numba.np.numpy_support import from_dtype, map_layout

from .bits import smaller
from .cache import OVERLOAD_OPTIONS, cached_njit, helper_njit, serial_version
from .conversion import ConversionType, stages
from .interrupts import interrupts_deferred
from .prefetch import RUN_BYTES, RUN_ELEMENTS, read_ahead
from .scratch import new_like
from .streaming import PAGE_BYTES, store_fence, stream_copy, streams, window
from .vector_width import element_loop

#: Below this many elements a kernel runs serially: starting threads costs more.
PARALLEL_MIN = 1 << 15

#: The ``table`` argument of a kernel that has none.
NO_TABLE = np.zeros(1, np.uint8)


def convert_element(value, conversion, table):
    """One element of :func:`cast_kernel` (``@njit`` code only)."""
    raise TypeError("convert_element() is for @njit code")


@overload(convert_element, jit_options=OVERLOAD_OPTIONS)
def _overload_convert_element(value, conversion, table):
    if isinstance(conversion, types.NoneType):
        return lambda value, conversion, table: table[value]
    if isinstance(conversion, ConversionType) and not conversion.conversion.stochastic:
        decode, encode = stages(conversion.conversion)  # composed here, one compiled function less
        if decode is None:
            return lambda value, conversion, table: encode(value)
        return lambda value, conversion, table: encode(decode(value))


@element_loop
@helper_njit
def _convert_run(src, dst, first, end, lag, conversion, table):
    """``dst[first - lag:end - lag]`` = the conversion of ``src[first:end]``,
    indices unsigned (no negative ones to wrap; ``lag`` and ``i - lag`` are
    taken modulo 2**64): ``lag`` 0 into the output, ``first - at`` into a scratch
    array from its index ``at`` on.  A function of its own, compiled apart
    and inlined by LLVM: written in the body of the ``prange``, each overload
    it calls was typed and compiled twice on a first large cast (0.35 s
    more)."""
    for i in range(first, end):
        dst[i - lag] = convert_element(src[i], conversion, table)


@helper_njit(inline="always")
def _runs(src):
    """``(run, runs)``: the parallel loops go through ``src`` by runs of
    ``run`` elements (:data:`~numbacast.engine.prefetch.RUN_BYTES` of the
    input, :data:`~numbacast.engine.prefetch.RUN_ELEMENTS` of 4- and 8-byte
    elements), ``runs`` of them (unsigned throughout).  Inlined by Numba into
    the kernel, outside its ``prange`` loop, where it was a compilation of its
    own: a first cast of 16M elements 0.045 s sooner (medians of 6 cold
    processes, 0.840 -> 0.794 s), the parallel loop's code unchanged.
    :func:`_run_read_ahead`, called inside the loop, stays a function: there
    the loop's code changed with it."""
    run = np.uint64(RUN_BYTES // src.itemsize if src.itemsize < 4 else RUN_ELEMENTS)
    return run, (np.uint64(src.size) + run - np.uint64(1)) // run


@helper_njit
def _run_read_ahead(src, r, run):
    """``(first, end)``: the elements of run ``r`` of :func:`_runs`, once the
    lines of one run further on are asked for
    (:func:`~numbacast.engine.prefetch.read_ahead`)."""
    first = r * run
    end = smaller(first + run, np.uint64(src.size))
    read_ahead(src, np.int64(first), np.int64(end))
    return first, end


@cached_njit(parallel=True, nogil=True)
def parallel_kernel(src, dst, conversion, table):
    """The loop of :func:`cast_kernel` over Numba's thread pool (arrays of
    :data:`PARALLEL_MIN` or more), by the runs of :func:`_runs`, each
    prefetching the lines of one further on."""
    run, runs = _runs(src)
    for r in prange(runs):
        first, end = _run_read_ahead(src, np.uint64(r), run)
        _convert_run(src, dst, first, end, np.uint64(0), conversion, table)


#: Tasks :func:`streaming_kernel` cuts a cast into, at most: its ``prange``'s
#: iterations, each a stretch of consecutive runs with one scratch array and one fence.
TASKS = 256


@cached_njit(parallel=True, nogil=True)
def streaming_kernel(src, dst, conversion, table):
    """:func:`parallel_kernel` for an output written past the caches
    (:mod:`~numbacast.engine.streaming`: an output of
    :data:`~numbacast.engine.streaming.STREAM_MIN_BYTES` or more, of a
    conversion that :attr:`~numbacast.engine.conversion.Conversion.streams_output`;
    from Python only): by tasks of consecutive runs, each run converted into
    a scratch array (at the place :func:`~numbacast.engine.streaming.window`
    gives), then streamed into place; a store fence ends each task."""
    run, runs = _runs(src)
    tasks = smaller(runs, np.uint64(TASKS))
    for t in prange(tasks):
        scratch = new_like(run + np.uint64(PAGE_BYTES // dst.itemsize), dst)
        for r in range(np.uint64(t) * runs // tasks, (np.uint64(t) + np.uint64(1)) * runs // tasks):
            first, end = _run_read_ahead(src, r, run)
            at = window(scratch, dst, first)
            _convert_run(src, scratch, first, end, first - at, conversion, table)  # into scratch[at:]
            stream_copy(dst, first, scratch, at, end - first)
        store_fence()


@cached_njit(nogil=True)
def serial_kernel(src, dst, conversion, table):
    """The loop of :func:`cast_kernel` on the calling thread: arrays below
    :data:`PARALLEL_MIN`, which sit in the core's cache (so it does not read
    ahead, and a first cast of a small array compiles 0.05-0.08 s sooner),
    and every array in a process that must not start the thread pool."""
    for i in range(src.size):
        dst[i] = convert_element(src[i], conversion, table)


@cached_njit(nogil=True)
def cast_kernel(src, dst, conversion, table):
    """For ``@njit`` code: the loop of :func:`serial_kernel` on the calling
    thread for arrays below :data:`PARALLEL_MIN` (the element loop of
    :func:`parallel_kernel` over the whole array, compiled once for both),
    else :func:`parallel_kernel`."""
    if src.size < PARALLEL_MIN:
        _convert_run(src, dst, np.uint64(0), np.uint64(src.size), np.uint64(0), conversion, table)
    else:
        parallel_kernel(src, dst, conversion, table)


_PARALLEL_LAUNCH = threading.Lock()

#: The threading layers whose thread pool does not survive ``fork``: GNU OpenMP
#: ends a child that starts a parallel region after its parent ran one.
FORK_UNSAFE_LAYERS = frozenset({"omp"})


class _ProcessState:
    #: A parallel kernel has run in this process (or in the parent it was forked from).
    ran_parallel = False
    #: Parallel kernels must not start Numba's thread pool in this process: it
    #: was forked after a parallel kernel ran under a fork-unsafe threading layer.
    serial_only = False


def _after_fork_in_child():
    """In a child made by ``fork``: a fresh launch lock (the parent's may have
    been held by another thread at the fork), and serial kernels only when the
    parent's thread pool cannot be used here."""
    global _PARALLEL_LAUNCH
    _PARALLEL_LAUNCH = threading.Lock()
    if _ProcessState.ran_parallel and not _ProcessState.serial_only:
        try:
            layer = numba.threading_layer()
        except ValueError:  # no thread pool was started
            return
        _ProcessState.serial_only = layer in FORK_UNSAFE_LAYERS


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


#: The bits of ``ndarray.flags.num`` that Numba's type of an array depends on:
#: C_CONTIGUOUS and F_CONTIGUOUS (its layout), ALIGNED and WRITEABLE.
_TYPED_FLAGS = 0x0001 | 0x0002 | 0x0100 | 0x0400


def array_key(a):
    """What Numba's type of the array ``a`` depends on: dtype, dimensions, and
    the flags that give its layout (as ``numba.typeof`` decides it), whether
    it is writeable and whether it is aligned."""
    return (a.dtype, a.ndim, a.flags.num & _TYPED_FLAGS)


def _numba_type(value):
    """``numba.typeof(value)``, but for an array by the steps of Numba's own
    rule (its dtype, dimensions, layout and whether it is writeable) without
    the test that it is not a ``numpy.ma`` array: that test imports
    ``numpy.ma``, 9 ms of a first cast, and the kernels take plain arrays."""
    if type(value) is np.ndarray:
        return types.Array(from_dtype(value.dtype), value.ndim, map_layout(value), readonly=not value.flags.writeable)
    return typeof(value)


#: Entry points of the kernels called through :func:`kernel_entry`, by
#: :func:`_arguments_key`.
_ENTRIES: dict = {}

#: Argument types whose Numba type is that of their Python type, whatever the value.
_TYPED_BY_CLASS = frozenset(
    (bool, float, np.bool_, np.int8, np.int16, np.int32, np.int64)
    + (np.uint8, np.uint16, np.uint32, np.uint64, np.float32, np.float64)
)


#: Argument types that Numba's dispatcher types by itself, in compiled code:
#: a small call with only these takes 0.4 us in it, less than a key takes.
_TYPED_BY_NUMBA = frozenset({np.ndarray, bool, int, float, type(None)})


def _arguments_key(kernel, args):
    """What Numba's types of ``args`` depend on, with ``kernel``: for an
    array its :func:`array_key`; a Python int's size (int64 when it
    fits); the class of a bool, float or NumPy number; each element's key
    for a tuple; else the argument itself (None, a conversion and the other
    constants of compiled code, typed by their value).  One loop, no call
    per argument: the key is most of a small call's cost."""
    key = [kernel]
    for a in args:
        kind = type(a)
        if kind is np.ndarray:
            key.append(array_key(a))
        elif kind in _TYPED_BY_CLASS:
            key.append(kind)
        elif kind is tuple:
            key.append(_arguments_key(tuple, a))
        elif kind is int:
            key.append((int, -(2**63) <= a < 2**63))
        elif isinstance(a, np.ndarray):  # of a subclass
            key.append((kind, array_key(a)))
        else:
            key.append(a)
    return tuple(key)


#: Marks an entry kept by its caller's key (:func:`kernel_entry`), which then
#: never equals an :func:`_arguments_key`.
_BY_CALLER = object()


def kernel_entry(kernel, args, key=None):
    """The entry point of ``kernel`` (a dispatcher) compiled, or loaded from
    the disk cache, for ``args``, kept by :func:`_arguments_key`, or by the
    caller's own ``key``: what alone Numba's types of ``args`` vary by in
    its calls (the :func:`array_key` of an array it is given, a conversion),
    where the other arguments are of types the same in every call (arrays it
    makes itself, tuples of parameters it builds); the key of every argument
    took 2.6 us of an 11 us quantisation of 32 elements.  A key that leaves
    out something the types vary by would call code compiled for other
    types.  Calling the entry point skips the dispatcher's typing of every
    argument (a quantisation of 1,024 elements took 6 us in that, its kernel
    0.6 us).  A Ctrl-C during the compilation raises KeyboardInterrupt once
    it is done."""
    key = _arguments_key(kernel, args) if key is None else (kernel, _BY_CALLER, key)
    entry = _ENTRIES.get(key)
    if entry is None:
        entry = _ENTRIES[key] = _compiled_entry(kernel, args)
    return entry


class _OwnCompilations(threading.local):
    """How many of numbacast's own kernels this thread is compiling (or
    loading from the disk cache) right now."""

    depth = 0


_own_compilations = _OwnCompilations()


def compiling_own_kernel():
    """Whether this thread is compiling (or loading) one of numbacast's own
    kernels.  Those need none of the ``@njit`` integrations
    (:mod:`numbacast.integrations`): numbacast registers them with Numba at
    the first compilation of anything else (``numbacast._register_with_numba``)."""
    return _own_compilations.depth > 0


def _compiled_entry(kernel, args):
    """The entry point of ``kernel`` compiled (or loaded from the disk cache)
    for ``args``, Ctrl-C deferred until the compilation is done."""
    signature = tuple(map(_numba_type, args))
    _own_compilations.depth += 1
    try:
        with interrupts_deferred():
            kernel.compile(signature)
    finally:
        _own_compilations.depth -= 1
    return kernel.overloads[signature].entry_point


def _run_parallel(entry, args):
    """``entry(*args)``, a parallel kernel's entry point, one at a time in the process."""
    _ProcessState.ran_parallel = True
    with _PARALLEL_LAUNCH:
        return entry(*args)


def take_turns(kernel, *args):
    """``kernel(*args)`` for a parallel kernel called from Python in any
    thread (by :func:`kernel_entry`): one such call runs at a time in the
    process.  In a process forked after a parallel kernel ran under a
    fork-unsafe threading layer, the kernel's serial twin runs instead."""
    if _ProcessState.serial_only:
        kernel = serial_version(kernel)
    return _run_parallel(kernel_entry(kernel, args), args)


class Launcher:
    """:func:`cast_kernel` of one conversion and table from Python, any thread,
    on 1-D C-contiguous arrays of the same size: parallel runs take turns,
    serial ones (small arrays, or ``parallel`` False) do not wait; a large
    output of a conversion that streams is written by :func:`streaming_kernel`
    (:func:`~numbacast.engine.streaming.streams`: not new pages the cast
    allocated, ``fresh``).
    Each of the three loops is compiled (or loaded) on its first use, and its entry
    point kept by the dtypes, dimensions and typed flags of the arrays: a
    warm call looks it up by those alone, not by the conversion's fields
    too.  In a process forked after a parallel kernel ran under a
    fork-unsafe threading layer every run is serial.  Calling an entry point
    skips the dispatcher's type matching (most of a small call's cost)."""

    def __init__(self, conversion, table):
        self.conversion, self.table = conversion, table
        self._streams = conversion is not None and conversion.streams_output
        self._entries: dict = {}

    def __call__(self, src, dst, parallel=True, fresh=False):
        if src.size != dst.size:
            raise ValueError(f"a Launcher takes arrays of one size, not {src.shape} and {dst.shape}")
        serial = src.size < PARALLEL_MIN or not parallel or _ProcessState.serial_only
        if serial:
            kernel = serial_kernel
        elif self._streams and streams(dst.nbytes, fresh):
            kernel = streaming_kernel
        else:
            kernel = parallel_kernel
        key = (kernel, array_key(src), array_key(dst))
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = self._entry_point(kernel, src, dst)
        args = (src, dst, self.conversion, self.table)
        if serial:
            entry(*args)
        else:
            _run_parallel(entry, args)

    def _entry_point(self, kernel, src, dst):
        """The entry point of ``kernel`` compiled (or loaded from the disk
        cache) for these arrays, this conversion and table."""
        if src.ndim != 1 or dst.ndim != 1 or not (src.flags.c_contiguous and dst.flags.c_contiguous):
            # checked here only: a key that is found says the same of its arrays
            raise ValueError(f"a Launcher takes 1-D C-contiguous arrays, not {src.shape} and {dst.shape}")
        return _compiled_entry(kernel, (src, dst, self.conversion, self.table))


def split_run(kernels, size, *args, key=None):
    """``kernels`` is ``(serial, parallel)``, two compilations of one loop:
    run the serial one when ``size`` is below :data:`PARALLEL_MIN`, else the
    parallel one (taking turns, see :func:`take_turns`).  A process that only
    ever sees small arrays never compiles the parallel loop, the costlier of
    the two.  The serial loop is called through its dispatcher when Numba
    types every argument by itself (:data:`_TYPED_BY_NUMBA`) and no ``key``
    is given, else by :func:`kernel_entry` (a conversion, a plan or a tuple
    among them), kept by the caller's ``key`` where given."""
    serial, parallel = kernels
    if size >= PARALLEL_MIN:
        return take_turns(parallel, *args)
    if key is None and _TYPED_BY_NUMBA.issuperset(map(type, args)):
        return serial(*args)
    return kernel_entry(serial, args, key)(*args)
