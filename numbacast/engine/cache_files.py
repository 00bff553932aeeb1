"""The files of numbacast's disk cache, each verified before it is loaded.

Numba's own cache files are pickles that are loaded as they are: a file cut
short, garbled or swapped with another raises ``UnpicklingError``/``EOFError``
in every later process, or hands LLVM damaged machine code, which can kill the
process.  numbacast writes the same content in *sealed* files instead::

    magic line | SHA-256 of the payload (32 bytes) | payload length (8 bytes, little-endian) | payload

and checks the magic, the length and the checksum before anything in the file
is unpickled.  There are two kinds of file per kernel (``<base>`` is the
kernel's file name base, e.g. ``kernels.cast_kernel-engine.kernels-52.py311``):

* the index ``<base>.nbi``: the Numba version, the source stamp of the package
  and, for every compiled signature, the name of its data file and the
  SHA-256 of that file's payload;
* a data file ``<base>.<digest>.nbc`` per signature, named after the start of
  its checksum: the signature's index key and the compiled code.

A file that fails a check -- its magic, its length, its checksum, an index
that does not unpickle into the expected shape, a data file whose checksum is
not the one its index entry records (two files swapped) or whose key is not
the signature looked up -- is *damaged*: numbacast warns once naming it
(:class:`~numbacast.engine.cache.CacheWarning`), removes it and treats it as
a miss, so the kernel is compiled again and saved anew.  A damaged cache
therefore never outlives the process that finds it.

Files are written under a temporary name in the cache folder and renamed into
place, so a reader sees a whole file or none.  Adding an entry to an index
(read, add, write) holds an exclusive lock on ``<base>.nbi.lock`` (POSIX
``flock``), so that processes saving signatures of one kernel at once do not
drop each other's entries.  Files in Numba's own format
(the layout of numbacast 0.1.0) are stale, not damaged: they are ignored
without a warning and replaced on the next save.

The checksums protect against accidents (a full disk, a killed process, a
bad copy), not against someone who can write the cache folder: such a person
can write a valid file.  That is why :mod:`numbacast.engine.cache` uses only
folders that belong to the user and that no one else can write.
"""

import contextlib
import hashlib
import os
import pickle
import re
import sys
import tempfile
import time
import warnings

from numba.core import caching

if sys.platform != "win32":
    import fcntl
from numba.core.serialize import dumps

MAGIC_INDEX = b"numbacast cache index 1\n"
MAGIC_DATA = b"numbacast cache data 1\n"

_DIGEST_BYTES = 32
_LENGTH_BYTES = 8

#: Data files no index refers to are removed once they are this old (seconds):
#: younger ones may belong to a process that has not written its index yet.
ORPHAN_AGE = 600.0


class DamagedFile(Exception):
    """A cache file failed a check; the message says which."""


def seal(magic, payload):
    """The bytes of a sealed file holding ``payload``."""
    return magic + hashlib.sha256(payload).digest() + len(payload).to_bytes(_LENGTH_BYTES, "little") + payload


def unseal(magic, blob):
    """The payload of the sealed file ``blob``; DamagedFile unless its magic,
    length and checksum are right."""
    head = len(magic) + _DIGEST_BYTES + _LENGTH_BYTES
    if not blob.startswith(magic):
        raise DamagedFile("it is not a numbacast cache file of this kind")
    if len(blob) < head:
        raise DamagedFile(f"it is cut short ({len(blob)} bytes)")
    digest = blob[len(magic) : len(magic) + _DIGEST_BYTES]
    length = int.from_bytes(blob[len(magic) + _DIGEST_BYTES : head], "little")
    payload = blob[head:]
    if len(payload) != length:
        raise DamagedFile(f"it holds {len(payload)} bytes of data where its header says {length}")
    if hashlib.sha256(payload).digest() != digest:
        raise DamagedFile("its checksum does not match its content")
    return payload


def is_numba_format(blob):
    """Whether ``blob`` starts like a file of Numba's own cache (a pickle)."""
    return blob[:1] == b"\x80"


def read_own_file(path):
    """The bytes of ``path``; FileNotFoundError if it is missing, DamagedFile if
    it belongs to another user or others may write it (POSIX)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if isinstance(error, FileNotFoundError):
            raise
        raise DamagedFile(f"it cannot be opened ({error.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        if hasattr(os, "getuid"):
            st = os.fstat(f.fileno())
            if st.st_uid != os.getuid():
                raise DamagedFile(f"it belongs to another user (uid {st.st_uid})")
            if st.st_mode & 0o002:
                raise DamagedFile("every user may write it")
        return f.read()


def write_atomically(path, blob):
    """Write ``blob`` to ``path`` through a temporary file in its folder and a rename."""
    folder, name = os.path.split(path)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


@contextlib.contextmanager
def locked(path):
    """Hold an exclusive lock on the file ``path`` (created if missing) for the
    block: ``flock``, released when the file is closed; no lock where the
    system has none (Windows)."""
    if sys.platform == "win32":
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class VerifiedIndexDataCacheFile(caching.IndexDataCacheFile):
    """Numba's index-and-data cache files, sealed and verified (see the module).

    ``damaged(path, reason)`` is called for every damaged file found."""

    def __init__(self, cache_path, filename_base, source_stamp, damaged):
        super().__init__(cache_path, filename_base, source_stamp)
        self._filename_base = filename_base
        self._damaged = damaged
        self._data_file = re.compile(re.escape(filename_base) + r"\.[^.]+\.nbc\Z")

    # the index

    def _load_index(self):
        overloads, _ = self._read_index()
        return overloads

    def _read_index(self):
        """(overloads, fresh): the index's entries and whether it was a valid,
        current index (False: missing, stale or damaged)."""
        try:
            blob = read_own_file(self._index_path)
        except FileNotFoundError:
            return {}, False
        except DamagedFile as error:
            self._discard(self._index_path, str(error))
            return {}, False
        if is_numba_format(blob):
            return {}, False
        try:
            version, stamp, overloads = pickle.loads(unseal(MAGIC_INDEX, blob))
            if not isinstance(overloads, dict) or not all(self._valid_entry(v) for v in overloads.values()):
                raise DamagedFile("its entries are not (file name, checksum) pairs of this kernel")
        except DamagedFile as error:
            self._discard(self._index_path, str(error))
            return {}, False
        except Exception as error:  # whatever unpickling a damaged payload raises
            self._discard(self._index_path, f"it does not unpickle ({type(error).__name__}: {error})")
            return {}, False
        if version != self._version or stamp != self._source_stamp:
            return {}, False
        return overloads, True

    def _valid_entry(self, entry):
        return (
            isinstance(entry, tuple)
            and len(entry) == 2
            and isinstance(entry[0], str)
            and self._data_file.match(entry[0]) is not None
            and isinstance(entry[1], bytes)
            and len(entry[1]) == _DIGEST_BYTES
        )

    def _save_index(self, overloads):
        payload = self._dump((self._version, self._source_stamp, overloads))
        write_atomically(self._index_path, seal(MAGIC_INDEX, payload))

    # the data

    def save(self, key, data):
        payload = self._dump((key, data))
        digest = hashlib.sha256(payload).digest()
        name = f"{self._filename_base}.{digest.hex()[:24]}.nbc"
        write_atomically(self._data_path(name), seal(MAGIC_DATA, payload))
        with locked(self._index_path + ".lock"):
            overloads = self._load_index()
            overloads[key] = (name, digest)
            self._save_index(overloads)
        self._remove_orphans({entry[0] for entry in overloads.values()})

    def load(self, key):
        overloads = self._load_index()
        entry = overloads.get(key)
        if entry is None:
            return None
        name, digest = entry
        path = self._data_path(name)
        try:
            blob = read_own_file(path)
            if is_numba_format(blob):
                raise DamagedFile("it is in Numba's own format where numbacast's is expected")
            payload = unseal(MAGIC_DATA, blob)
            if hashlib.sha256(payload).digest() != digest:
                raise DamagedFile("it is not the file its index entry describes (files swapped or replaced?)")
            try:
                stored_key, data = pickle.loads(payload)
            except Exception as error:
                raise DamagedFile(f"it does not unpickle ({type(error).__name__}: {error})") from None
            if stored_key != key:
                raise DamagedFile("it holds another signature than the one its index entry names")
        except FileNotFoundError:
            return None  # removed since the index was written: a plain miss
        except DamagedFile as error:
            self._discard(path, str(error))
            return None
        caching._cache_log("[cache] data loaded from %r", path)
        return data

    def _dump(self, obj):
        return dumps(obj)

    # housekeeping

    def _discard(self, path, reason):
        """Report the damaged file ``path`` and remove it (best effort)."""
        self._damaged(path, reason)
        try:
            os.unlink(path)
        except OSError:
            pass

    def _remove_orphans(self, referenced):
        """Remove this kernel's data files that no index entry refers to and
        that are older than :data:`ORPHAN_AGE` (best effort)."""
        now = time.time()
        try:
            names = os.listdir(self._cache_path)
        except OSError:
            return
        for name in names:
            if name in referenced or not self._data_file.match(name):
                continue
            path = self._data_path(name)
            try:
                if now - os.lstat(path).st_mtime > ORPHAN_AGE:
                    os.unlink(path)
            except OSError:
                pass


#: The damaged files reported so far in this process.
_REPORTED: set = set()


def warn_damaged(path, reason, category):
    """Warn (``category``) that the cache file ``path`` is damaged, once per file and process."""
    if path in _REPORTED:
        return
    _REPORTED.add(path)
    warnings.warn(
        f"numbacast: the cache file {path} is damaged: {reason}. It is ignored and removed; the kernel is "
        "compiled again and saved anew",
        category,
        stacklevel=2,
    )
