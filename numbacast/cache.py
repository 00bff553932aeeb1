"""Where numbacast's compiled kernels are cached on disk.

Kernels are compiled on first use and saved so that later processes load
them instead of compiling.  The cache directory is the first writable one of:

1. ``$NUMBA_CACHE_DIR/numbacast`` when ``NUMBA_CACHE_DIR`` is set;
2. the ``__pycache__`` folder inside the installed package;
3. ``$XDG_CACHE_HOME/numbacast`` (default ``~/.cache/numbacast``);
4. ``numbacast-cache-<user>`` in the system temporary directory.

When none is writable numbacast warns once (:class:`CacheWarning`) and compiles
in memory for the life of the process.  A cached kernel is reused only while
every source file of the package is unchanged: the cache is keyed on a digest
of all of them, not only on the file that defines the kernel.
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

PACKAGE_DIR = Path(__file__).resolve().parent


class CacheWarning(UserWarning):
    """Compiled kernels cannot be saved; every process compiles its own."""


@functools.lru_cache(maxsize=None)
def source_digest():
    """A digest of every source file of the package."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        digest.update(path.relative_to(PACKAGE_DIR).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


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

    def __init__(self, py_func, path):
        self._lineno = py_func.__code__.co_firstlineno
        self._path = str(path)

    def get_cache_path(self):
        return self._path

    def get_source_stamp(self):
        return source_digest()

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        if Path(py_file).resolve().parent != PACKAGE_DIR:
            return None
        for path in candidate_dirs():
            locator = cls(py_func, path)
            try:
                locator.ensure_cache_path()
            except OSError:
                continue
            return locator
        return None


_LOCATORS = (getattr(caching, "CacheImpl", None) or caching._CacheImpl)._locator_classes
if PackageCacheLocator not in _LOCATORS:
    _LOCATORS.insert(0, PackageCacheLocator)


def cached_njit(**options):
    """``numba.njit(cache=True, **options)``, or without the disk cache (and a
    :class:`CacheWarning`) when no cache directory is writable."""

    def decorate(function):
        try:
            return njit(cache=True, **options)(function)
        except RuntimeError as error:
            warnings.warn(f"numbacast cannot cache compiled kernels on disk ({error}); set NUMBA_CACHE_DIR to "
                          "a writable directory to keep them between processes", CacheWarning, stacklevel=2)
            return njit(**options)(function)

    return decorate
