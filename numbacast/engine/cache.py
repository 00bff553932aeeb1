"""Where numbacast's compiled kernels are cached on disk.

Kernels are compiled on first use and saved so that later processes load
them instead of compiling.  The cache directory is the first writable one of:

1. ``$NUMBA_CACHE_DIR/numbacast`` when ``NUMBA_CACHE_DIR`` is set;
2. the ``__pycache__`` folder inside the installed package;
3. ``$XDG_CACHE_HOME/numbacast`` (default ``~/.cache/numbacast``);
4. ``numbacast-cache-<user>`` in the system temporary directory.

When none is writable numbacast warns once (:class:`CacheWarning`) and compiles
in memory for the life of the process.

A cached kernel is reused only while the code it is compiled from is
unchanged: the cache is keyed on a digest of every source file of the layers
that compiled code is built from (:data:`COMPILED_LAYERS`: the formats, the
engine, the text layer and packing), not only on the file that defines the
kernel.  The public API, the ONNX layer, the integrations and the command line
are not in the key, and the bench harness is not in the package at all, so
editing them never throws compiled kernels away.

Cache file names carry the kernel's module path inside the package and its
line (``parsing.read_kernel-text.parsing-612.py311.nbi``), so two kernels never
share a file.
"""

import functools
import getpass
import hashlib
import os
import tempfile
import warnings
from pathlib import Path

from numba import config, njit
from numba.core import caching

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


class PackageCacheLocator(caching._CacheLocator):
    """Numba cache locator for the functions defined in this package."""

    def __init__(self, py_func, path, module_path):
        self._lineno = py_func.__code__.co_firstlineno
        self._module_path = module_path
        self._path = str(path)

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
            except OSError:
                continue
            return locator
        return None


_LOCATORS = (getattr(caching, "CacheImpl", None) or caching._CacheImpl)._locator_classes  # type: ignore[attr-defined]
if PackageCacheLocator not in _LOCATORS:
    _LOCATORS.insert(0, PackageCacheLocator)


def cached_njit(**options):
    """``numba.njit(cache=True, **options)``, or without the disk cache (and a
    :class:`CacheWarning`) when no cache directory is writable."""

    def decorate(function):
        try:
            return njit(cache=True, **options)(function)
        except RuntimeError as error:
            warnings.warn(
                f"numbacast cannot cache compiled kernels on disk ({error}); set NUMBA_CACHE_DIR to "
                "a writable directory to keep them between processes",
                CacheWarning,
                stacklevel=2,
            )
            return njit(**options)(function)

    return decorate
