"""Where numbacast's compiled kernels are cached on disk, and which folders it trusts.

Kernels are compiled on first use and saved so that later processes load
them instead of compiling.  The cache directory is the first usable one of:

1. ``$NUMBA_CACHE_DIR/numbacast`` when ``NUMBA_CACHE_DIR`` is set;
2. the ``__pycache__`` folder inside the installed package;
3. ``$XDG_CACHE_HOME/numbacast`` (default ``~/.cache/numbacast``);
4. ``numbacast-cache-<user>`` in the system temporary directory.

A folder is *usable* when numbacast can write it and trusts it.  The cache
holds machine code that numbacast runs, so (on POSIX systems) a folder is
trusted only if it belongs to the user running numbacast, neither other users
nor a group with other members may write it, and no folder above it may be
written by every user without the sticky bit.  A folder numbacast creates
is created with mode 0700.  A folder that numbacast could write but does not
trust is skipped with a :class:`CacheWarning` naming it; a folder it cannot
write is skipped silently.  When no folder is usable numbacast warns once and
compiles in memory for the life of the process.

Every cache file is sealed with a checksum and verified before it is loaded
(:mod:`numbacast.engine.cache_files`); a damaged file is a miss, reported once
and rewritten.

A cached kernel is reused only while the code it is compiled from is
unchanged: the cache is keyed on a digest of every source file of the layers
that compiled code is built from (:data:`COMPILED_LAYERS`: the formats, the
engine, the text layer and packing), not only on the file that defines the
kernel.  The public API, the ONNX layer, the integrations and the command line
are not in the key, and the bench harness is not in the package at all, so
editing them never throws compiled kernels away.

Cache file names carry the kernel's module path inside the package and its
line (``parsing.read_kernel-text.parsing-612.py311.nbi``), so two kernels never
share a file.  The serial twin of a parallel kernel (:func:`serial_version`,
used in processes forked after a parallel cast) has ``_serial`` after the
kernel's name.
"""

import functools
import gc
import getpass
import hashlib
import os
import stat
import tempfile
import warnings
from pathlib import Path
from typing import Any

from numba import config, njit, types
from numba.core import caching, sigutils
from numba.core.compiler import Compiler
from numba.core.registry import CPUDispatcher
from numba.core.runtime import rtsys
from numba.extending import register_jitable

from .cache_files import VerifiedIndexDataCacheFile, warn_damaged
from .linking import linked_only_library, parfor_parts_linked_only
from .scalar_operators import scalar_operators_typed_directly
from .vector_width import WideVectorCompiler

PACKAGE_DIR = Path(__file__).resolve().parent.parent

#: The parts of the package (folders and modules, relative to it) that compiled
#: kernels are built from: the cache key is a digest of their source files.
COMPILED_LAYERS = ("formats", "engine", "text", "packing.py")


class CacheWarning(UserWarning):
    """Compiled kernels cannot be saved; every process compiles its own."""


def compiled_sources(package_dir=PACKAGE_DIR):
    """The source files of :data:`COMPILED_LAYERS` under ``package_dir``, sorted."""
    files = []
    for layer in COMPILED_LAYERS:
        path = package_dir / layer
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def digest_of(package_dir):
    """A digest of the names and contents of :func:`compiled_sources`."""
    digest = hashlib.sha256()
    for path in compiled_sources(package_dir):
        digest.update(path.relative_to(package_dir).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@functools.cache
def source_digest():
    """The cache key of this installation: :func:`digest_of` the package."""
    return digest_of(PACKAGE_DIR)


def candidate_dirs():
    """The cache directories to try, in order."""
    if config.CACHE_DIR:
        yield Path(config.CACHE_DIR) / "numbacast"
    yield PACKAGE_DIR / "__pycache__"
    xdg = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    yield Path(xdg) / "numbacast"
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    yield Path(tempfile.gettempdir()) / f"numbacast-cache-{user}"


class UntrustedFolder(Exception):
    """A cache folder numbacast could write but does not trust; the message says why."""


def _private_group(gid):
    """Whether the group ``gid`` is the user's own private group (named after
    the user, with no other member), so that its write permission lets no one
    else in."""
    try:
        import grp

        group = grp.getgrgid(gid)
        user = getpass.getuser()
    except (ImportError, KeyError, OSError):
        return False
    return gid == os.getgid() and group.gr_name == user and set(group.gr_mem) <= {user}


def trust_problem(path):
    """Why the existing folder ``path`` is not to be trusted with compiled code,
    or None when it is (always None where there are no user ids, e.g. Windows)."""
    if not hasattr(os, "getuid"):
        return None
    uid = os.getuid()
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        if st.st_uid != uid:
            return f"it is a link that belongs to another user (uid {st.st_uid})"
        st = os.stat(path)
    if st.st_uid != uid:
        return f"it belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o002:
        return "every user may write it"
    if st.st_mode & 0o020 and not _private_group(st.st_gid):
        return f"the users of group {st.st_gid} may write it"
    for parent in Path(os.path.abspath(path)).parents:
        pst = os.stat(parent)
        if pst.st_mode & 0o002 and not pst.st_mode & stat.S_ISVTX:
            return f"the folder {parent} above it may be written by every user (and has no sticky bit)"
    return None


def prepare_folder(path):
    """Make ``path`` ready to hold the cache: create it (mode 0700) if missing,
    check that it is trusted and writable.  OSError when it cannot be written,
    :class:`UntrustedFolder` when numbacast does not trust it."""
    path = Path(path)
    if not os.path.lexists(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass  # created by another process meanwhile: checked below like any existing folder
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise PermissionError(f"{path} is not writable")
    problem = trust_problem(path)
    if problem is not None:
        raise UntrustedFolder(f"{path}: {problem}")
    tempfile.TemporaryFile(dir=path).close()


#: The folders refused so far in this process (each is reported once).
_REFUSED: set = set()


def _refuse(error):
    message = str(error)
    if message in _REFUSED:
        return
    _REFUSED.add(message)
    warnings.warn(
        f"numbacast does not keep compiled kernels in {message}. The cache holds code that numbacast runs, so it "
        "uses only folders that belong to you and that no one else may write; it tries the next location",
        CacheWarning,
        stacklevel=3,
    )


class PackageCacheLocator(caching._CacheLocator):
    """Numba cache locator for the functions defined in this package: the first
    usable folder of :func:`candidate_dirs`."""

    def __init__(self, py_func, path, module_path):
        self._lineno = py_func.__code__.co_firstlineno
        self._py_file = py_func.__code__.co_filename  # where Numba's warnings point, as its own locators do
        self._module_path = module_path
        self._path = str(path)

    def ensure_cache_path(self):
        prepare_folder(self._path)

    def get_cache_path(self):
        return self._path

    def get_source_stamp(self):
        return source_digest()

    def get_disambiguator(self):
        return f"{self._module_path}-{self._lineno}"

    @classmethod
    def from_function(cls, py_func, py_file):
        source = Path(py_file).resolve()
        if not source.is_relative_to(PACKAGE_DIR):
            return None
        module_path = ".".join(source.relative_to(PACKAGE_DIR).with_suffix("").parts)
        for path in candidate_dirs():
            locator = cls(py_func, path, module_path)
            try:
                locator.ensure_cache_path()
            except UntrustedFolder as error:
                _refuse(error)
                continue
            except OSError:
                continue
            return locator
        return None


_LOCATORS = (getattr(caching, "CacheImpl", None) or caching._CacheImpl)._locator_classes  # type: ignore[attr-defined]
if PackageCacheLocator not in _LOCATORS:
    _LOCATORS.insert(0, PackageCacheLocator)


class _PackageCacheImpl(caching.CompileResultCacheImpl):
    """Numba's cache of compile results, for this package's folders only: no
    fallback to Numba's own locations, which numbacast has not checked."""

    _locator_classes = [PackageCacheLocator]  # type: ignore[list-item]


class _SerialCacheImpl(_PackageCacheImpl):
    """The cache of a serial twin: its own files, beside the parallel kernel's."""

    def get_filename_base(self, fullname, abiflags):
        return super().get_filename_base(fullname + "_serial", abiflags)


class VerifiedFunctionCache(caching.FunctionCache):
    """Numba's function cache over verified files
    (:class:`~numbacast.engine.cache_files.VerifiedIndexDataCacheFile`): a
    damaged entry is a miss, reported once, and a failure to save is a warning."""

    _impl_class = _PackageCacheImpl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = VerifiedIndexDataCacheFile(
            cache_path=self._cache_path,
            filename_base=self._impl.filename_base,
            source_stamp=self._impl.locator.get_source_stamp(),
            damaged=lambda path, reason: warn_damaged(path, reason, CacheWarning),
        )

    def load_overload(self, sig, target_context):
        # Loading compiled code needs Numba's runtime (the memory allocator the
        # kernels call) but none of the implementations Numba's refresh() of
        # the context imports, 0.12 s of a first call: Numba refreshes it
        # itself before it compiles anything.
        rtsys.initialize(target_context)
        if not self._enabled:
            return None
        key = self._index_key(sig, target_context.codegen())
        data = self._cache_file.load(key)
        if data is None:
            return None
        try:
            cres = self._impl.rebuild(target_context, data)
        except Exception as error:  # checksummed data that still does not load: compile again
            warn_damaged(self._cache_path, f"an entry does not load ({type(error).__name__}: {error})", CacheWarning)
            return None
        args, _ = sigutils.normalize_signature(sig)
        if tuple(cres.signature.args) != tuple(args):
            warn_damaged(self._cache_path, f"an entry for {args} holds {cres.signature.args}", CacheWarning)
            return None
        return cres

    def save_overload(self, sig, data):
        try:
            self._save_overload(sig, data)
        except (OSError, UntrustedFolder) as error:
            message = f"numbacast cannot save a compiled kernel to {self._cache_path} ({error})"
            if message not in _REFUSED:
                _REFUSED.add(message)
                warnings.warn(message + "; it is kept in memory", CacheWarning, stacklevel=2)


class SerialFunctionCache(VerifiedFunctionCache):
    _impl_class = _SerialCacheImpl


def _with_disk_cache(dispatcher, cache_class):
    """``dispatcher`` caching its compiled code in ``cache_class`` from its
    first compilation or load on (:class:`_DeferredCache`)."""
    dispatcher._cache = _DeferredCache(dispatcher, cache_class)
    return dispatcher


class _DeferredCache:
    """A dispatcher's disk cache, made when the dispatcher first uses it:
    making one finds and checks its folder, some 0.7 ms a kernel, which an
    import would pay for every kernel of the package.  It is then the
    dispatcher's cache itself -- or, when no cache folder is usable, a cache
    in memory only, with a :class:`CacheWarning`."""

    def __init__(self, dispatcher, cache_class):
        self._dispatcher, self._cache_class = dispatcher, cache_class

    def __getattr__(self, name):
        try:
            cache, problem = self._cache_class(self._dispatcher.py_func), None
        except RuntimeError as error:
            cache, problem = caching.NullCache(), error
        self._dispatcher._cache = cache  # before the warning, which may raise
        if problem is not None:
            warnings.warn(
                f"numbacast cannot cache compiled kernels on disk ({problem}); set NUMBA_CACHE_DIR to "
                "a folder of yours that no one else may write, to keep them between processes",
                CacheWarning,
                stacklevel=2,
            )
        return getattr(cache, name)


#: The options of each parallel kernel made by :func:`cached_njit`, and its serial twin once made.
_PARALLEL_OPTIONS: dict = {}
_SERIAL_TWINS: dict = {}


class _HelperCompiler(Compiler):
    """Compiles a helper into a :class:`~numbacast.engine.linking.LinkedOnlyLibrary`."""

    def compile_extra(self, func):
        if self.state.library is None:
            self.state.library = linked_only_library(self.state.targetctx.codegen(), func.__qualname__)
        return super().compile_extra(func)


class HelperDispatcher(CPUDispatcher):
    """The dispatcher of a helper the kernels call (see :func:`helper_njit`):
    a call from Python is a TypeError, and a call from compiled code is
    typed without literals."""

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.py_func.__qualname__}() is compiled into numbacast's kernels: call it from @njit code")

    def get_call_template(self, args, kws):
        """Numba's, for the arguments' types without their literal values: a
        caller passing a constant (``False``, ``0``) and one passing a
        variable share one compilation of the helper and of all it calls."""
        unliteral = {name: types.unliteral(t) for name, t in kws.items()}
        return super().get_call_template([types.unliteral(t) for t in args], unliteral)


def helper_njit(function=None, **options):
    """``@njit(nogil=True, **options)`` for the helpers the kernels call: not
    cached on their own (each is compiled into the kernels that call it) and
    built without the CPython and C wrappers a dispatcher otherwise compiles
    for each of its signatures (a cold first text cast 0.3-0.5 s sooner), so
    only ``@njit`` code can call them; nor is a helper's own code optimised
    or emitted (:class:`~numbacast.engine.linking.LinkedOnlyLibrary`).

    A helper is inlined into its callers by LLVM (``forceinline``) unless
    it says ``forceinline=False``.  Always set: Numba compiles a helper once
    per signature, and a helper that leaves the option unset takes it from
    its first caller, so that code compiled later got a call or not by the
    order of a process's first calls (a stochastic cast compiled first left
    MX quantisation a call per element, 2.2x the time with AVX2 code)."""
    options = dict(
        {"forceinline": True}, **options, nopython=True, nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True
    )

    def decorate(function):
        return HelperDispatcher(function, locals={}, targetoptions=options, pipeline_class=_HelperCompiler)

    return decorate if function is None else decorate(function)


def codec_njit(function=None, **options):
    """:func:`helper_njit` for the codecs (:mod:`~numbacast.engine.codecs`,
    :mod:`~numbacast.engine.conversion`), which Numba inlines into the code
    that calls them before it types that code (``inline="always"``): a codec
    is typed within its caller and never compiled on its own, so a first
    cast compiles its kernel and element function only, where each codec
    it went through was a compilation more (cold first casts 0.015-0.05 s
    sooner for FLOAT -> INT8 on 1,000 elements, 0.05-0.1 s for FLOAT ->
    FLOAT8E5M2FNUZ; the same machine code), at the price of typing a codec
    that several converters share once for each (``numbacast.scalar``'s
    tests 20% longer).  Not the functions of the rounding modes
    (:mod:`~numbacast.engine.rounding`): the stochastic kernels call them
    from several places, each of which would type them again (a first
    stochastic cast 0.6 s slower)."""
    return helper_njit(function, inline="always", **options)


#: The ``jit_options`` of numbacast's ``@overload`` implementations, which
#: are compiled into the kernels like the helpers, without the CPython and C
#: wrappers nothing calls (10-20 ms less on a first cast), and ``Any``:
#: Numba's type hints do not list ``pipeline_class``, which its ``jit`` takes.
OVERLOAD_OPTIONS: Any = {
    "nogil": True,
    "no_cpython_wrapper": True,
    "no_cfunc_wrapper": True,
    "pipeline_class": _HelperCompiler,
}

#: ``@helper_jitable``: Numba's ``register_jitable`` with :data:`OVERLOAD_OPTIONS`,
#: for the functions of numbacast's ``@overload`` implementations.
helper_jitable = register_jitable(**OVERLOAD_OPTIONS)


class _KernelCompiler(WideVectorCompiler):
    """Compiles a kernel (and, inside it, the helpers it calls) with
    Python's cyclic garbage collector paused, unless it was already off.
    Numba's compilation makes objects by the hundred thousand, so the
    collector would otherwise scan every object of the process many times
    over while the kernel compiles (Numba's own tables included); paused, the
    cycles it leaves are found by the next collection after it.  A first
    cast of a small array 0.04 s sooner (0.41 s instead of 0.45 for FLOAT ->
    INT8, from before ``import numbacast``).  Its operators on numbers are
    typed without NumPy's array rules
    (:mod:`~numbacast.engine.scalar_operators`)."""

    def _compile_core(self, args, return_type):
        collecting = gc.isenabled()
        gc.disable()
        try:
            with scalar_operators_typed_directly():
                return super()._compile_core(args, return_type)
        finally:
            if collecting:
                gc.enable()


class _LoopFlagsCompiler(_KernelCompiler):
    """Compiles a parallel kernel with the flags Numba compiles the body of
    its ``prange`` loop with (the NumPy error model; arguments that alias
    nothing, as Numba finds them in that loop): Numba keys the implementation
    of each ``@overload`` by the flags of the code that calls it, so with the
    kernel's own flags every overload the loop calls was typed and compiled
    twice, once for the kernel and once for the loop (a cold first cast of a
    large array 0.25 s slower).  Both flags hold for the whole kernel: the
    arrays a kernel is given never overlap (an ``out=`` that shares memory
    with the input is written through a temporary, from Python and from
    ``@njit`` code), and outside their loops the kernels divide only by
    nonzero constants.  The parts Numba compiles for the loop are linked
    into the kernel only (:func:`~numbacast.engine.linking.parfor_parts_linked_only`)."""

    def _customize_flags(self, flags):
        flags.error_model = "numpy"
        flags.noalias = True
        return flags

    def _compile_core(self, args, return_type):
        with parfor_parts_linked_only():
            return super()._compile_core(args, return_type)


class ParallelKernelDispatcher(CPUDispatcher):
    """The dispatcher of a parallel kernel (see :class:`_LoopFlagsCompiler`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._compiler.__class__ = _LoopFlagsCompiler


def _wide(dispatcher):
    """``dispatcher`` compiling with :class:`_KernelCompiler`."""
    dispatcher._compiler.__class__ = _KernelCompiler
    return dispatcher


def cached_njit(**options):
    """``numba.njit(**options)`` with numbacast's verified disk cache, or without
    a disk cache (and a :class:`CacheWarning`) when no cache folder is usable;
    without the C wrapper, which nothing calls; its compilations for
    arguments that ask for them take 512-bit vectors where the CPU has them
    (:mod:`~numbacast.engine.vector_width`).  A parallel kernel is compiled
    by :class:`ParallelKernelDispatcher`."""
    options = dict(options, no_cfunc_wrapper=True)

    def decorate(function):
        if options.get("parallel"):
            dispatcher = ParallelKernelDispatcher(function, locals={}, targetoptions=dict(options, nopython=True))
            _PARALLEL_OPTIONS[dispatcher] = options
        else:
            dispatcher = _wide(njit(**options)(function))
        return _with_disk_cache(dispatcher, VerifiedFunctionCache)

    return decorate


def serial_version(dispatcher):
    """The serial twin of a parallel kernel made by :func:`cached_njit`: the
    same function compiled without ``parallel`` (``prange`` is ``range``),
    cached in its own files; the dispatcher itself for any other."""
    options = _PARALLEL_OPTIONS.get(dispatcher)
    if options is None:
        return dispatcher
    twin = _SERIAL_TWINS.get(dispatcher)
    if twin is None:
        serial = {name: value for name, value in options.items() if name != "parallel"}
        twin = _with_disk_cache(_wide(njit(**serial)(dispatcher.py_func)), SerialFunctionCache)
        _SERIAL_TWINS[dispatcher] = twin
    return twin
