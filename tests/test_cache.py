"""The disk cache: a second process loads kernels instead of compiling, an
unwritable package directory never breaks a cast, a damaged cache heals and a
folder someone else could write is not used."""

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import numbacast

PACKAGE = Path(numbacast.__file__).resolve().parent

PROBE = textwrap.dedent("""
    import json, warnings
    import numpy as np
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import numbacast
        from numbacast.engine.kernels import serial_kernel
        out = numbacast.cast(np.array([1.0, 464.0, 1e9], np.float32), "float8e5m2fnuz", saturate=False)
    stats = serial_kernel.stats
    print(json.dumps({"codes": out.view(np.uint8).tolist(), "hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values()), "file": numbacast.__file__,
                      "warnings": [str(w.category.__name__) for w in caught]}))
""")


def run_probe(env, cwd, prelude=""):
    result = subprocess.run(
        [sys.executable, "-c", prelude + PROBE], env=env, cwd=cwd, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def private_copy(tmp_path):
    """A copy of the package (so its cache is empty) importable from tmp_path."""
    shutil.copytree(PACKAGE, tmp_path / "numbacast", ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    env.pop("NUMBA_CACHE_DIR", None)
    return env


def test_second_process_loads_the_kernel_from_disk(tmp_path):
    env = private_copy(tmp_path)
    first = run_probe(env, tmp_path)
    second = run_probe(env, tmp_path)
    assert first["file"].startswith(str(tmp_path))
    assert first["codes"] == second["codes"] == [0x40, 0x63, 0x80]
    assert first["misses"] >= 1 and first["hits"] == 0
    assert second["misses"] == 0 and second["hits"] >= 1
    assert any((tmp_path / "numbacast" / "__pycache__").glob("kernels.serial_kernel-*.nbc"))


EVERY_KIND = textwrap.dedent("""
    import hashlib, sys
    import numpy as np
    from numba import njit
    import numbacast
    from numbacast import mx

    @njit
    def user_loop(a):  # compiled after the kernels are loaded from the cache
        return numbacast.cast(a, "float8e4m3fn")

    x = np.linspace(-300, 300, 40000).astype(np.float32)
    results = [
        numbacast.cast(x[:100], "int4"),  # the serial loop
        numbacast.cast(x, "float8e5m2"),  # the parallel loop
        numbacast.cast(x.astype(np.float16), "float4e2m1"),  # a 16-bit source
        numbacast.cast(x, "bfloat16", rounding="stochastic", seed=7),
        mx.quantize(x, "nvfp4").elements,
        mx.dequantize(mx.quantize(x, "mxfp4_e2m1")),
        numbacast.cast(numbacast.cast(x[:50], "string"), "float"),
        user_loop(x[:10]),
    ]
    print(hashlib.sha256(b"".join(np.ascontiguousarray(r).view(np.uint8).tobytes() for r in results)).hexdigest())
""")


def test_a_process_loading_every_kind_of_kernel_from_disk_gives_the_same_bits(tmp_path):
    """Loading compiled code does not refresh Numba's compiler context (a
    tenth of a second of a warm first call); every kind of kernel loaded so
    gives the bits it gave when compiled, and Numba still compiles user code
    (it refreshes the context itself) after the loads."""
    env = private_copy(tmp_path)

    def run():
        result = subprocess.run(
            [sys.executable, "-c", EVERY_KIND], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stdout.split()[-1]

    compiled, loaded = run(), run()
    assert compiled == loaded


def test_numba_cache_dir_is_honoured(tmp_path):
    env = private_copy(tmp_path)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "elsewhere")
    run_probe(env, tmp_path)
    assert any((tmp_path / "elsewhere" / "numbacast").glob("kernels.serial_kernel-*.nbc"))
    assert not any((tmp_path / "numbacast" / "__pycache__").glob("kernels.serial_kernel-*.nbc"))


def test_unwritable_package_directory_falls_back_to_the_user_cache(tmp_path):
    env = private_copy(tmp_path)
    (tmp_path / "numbacast" / "__pycache__").write_text("a file where the cache folder would go")
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    first = run_probe(env, tmp_path)
    second = run_probe(env, tmp_path)
    assert any((tmp_path / "xdg" / "numbacast").glob("kernels.serial_kernel-*.nbc"))
    assert second["hits"] >= 1 and second["misses"] == 0 and first["codes"] == second["codes"]
    assert "CacheWarning" not in first["warnings"]


def test_nowhere_writable_warns_and_still_casts(tmp_path):
    env = private_copy(tmp_path)
    (tmp_path / "numbacast" / "__pycache__").write_text("not a folder")
    env["XDG_CACHE_HOME"] = os.devnull  # a file: nothing can be created below it
    prelude = f"import tempfile; tempfile.tempdir = {os.path.join(os.devnull, 'tmp')!r}\n"
    result = run_probe(env, tmp_path, prelude)
    assert "CacheWarning" in result["warnings"]
    assert result["codes"][0] == 0x40


def test_a_kernel_numba_cannot_cache_is_numbas_warning_and_still_casts(tmp_path):
    """Unoptimised code (``NUMBA_OPT=0``) keeps references Numba will not
    cache: its NumbaWarning saying so (which names the kernel's source
    line), and the cast's codes, where the cache's locator lacked the file
    name that warning reads (an AttributeError)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_OPT="0")
    result = run_probe(env, tmp_path)
    assert result["codes"] == run_probe(dict(env, NUMBA_OPT="3"), tmp_path)["codes"]
    assert "NumbaWarning" in result["warnings"] and result["misses"] == 1


# -- A cache that heals (issue 14) -------------------------------------------------------------

HEAL_PROBE = textwrap.dedent("""
    import json, warnings
    import numpy as np
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import numbacast
        from numbacast.engine.kernels import serial_kernel
        x = np.array([1.0, 464.0, 6e4, -3.3, 0.01], np.float32)
        codes = [numbacast.cast(x, "float8e5m2fnuz", saturate=False).view(np.uint8).tolist(),
                 numbacast.cast(x.astype(np.float16), "float8e4m3fn").view(np.uint8).tolist(),
                 numbacast.cast(x.astype(np.float64), "bfloat16").view(np.uint16).tolist()]
    stats = serial_kernel.stats
    print(json.dumps({"codes": codes, "hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values()),
                      "warnings": [str(w.message) for w in caught if w.category.__name__ == "CacheWarning"]}))
""")


def heal_probe(env, cwd):
    result = subprocess.run(
        [sys.executable, "-c", HEAL_PROBE], env=env, cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Assertion" not in result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def truncate(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def garble(path):
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i % len(data)] ^= 0x5A
    path.write_bytes(bytes(data))


def zero_bytes(path):
    data = bytearray(path.read_bytes())
    start = min(len(data) - 8, 3 * len(data) // 4)
    data[start : start + 8] = bytes(8)
    path.write_bytes(bytes(data))


def cache_files(folder):
    return sorted(folder.glob("kernels.serial_kernel-*.nbc")), next(folder.glob("kernels.serial_kernel-*.nbi"))


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """(env, cache folder, probe result) of a private package copy and a cache
    freshly filled by one process; tests damage copies of that cache."""
    root = tmp_path_factory.mktemp("pristine")
    env = private_copy(root)
    env["NUMBA_CACHE_DIR"] = str(root / "cache")
    fresh = heal_probe(env, root)
    assert fresh["misses"] >= 3 and not fresh["warnings"]
    return env, root / "cache", fresh


@pytest.mark.parametrize(
    "damage, which",
    [
        (truncate, "data"),
        (truncate, "index"),
        (garble, "data"),
        (garble, "index"),
        (zero_bytes, "data"),
        (zero_bytes, "index"),
        (None, "swap data"),
        (None, "swap index"),
    ],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_a_damaged_cache_heals(tmp_path, pristine, damage, which):
    """Each damaged entry is a miss: one warning naming the file, the same bits
    as a fresh compile, and the next process loads a whole cache again."""
    env, cache, fresh = pristine
    shutil.copytree(cache, tmp_path / "cache")
    env = dict(env, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "numbacast"
    data, index = cache_files(folder)
    assert len(data) >= 3
    if which == "swap data":
        first, second = data[0].read_bytes(), data[1].read_bytes()
        data[0].write_bytes(second)
        data[1].write_bytes(first)
        damaged = data[:2]
    elif which == "swap index":
        body, index_body = data[0].read_bytes(), index.read_bytes()
        data[0].write_bytes(index_body)
        index.write_bytes(body)
        damaged = [index]
    else:
        damaged = [data[1] if which == "data" else index]
        damage(damaged[0])
    healing = heal_probe(env, tmp_path)
    healed = heal_probe(env, tmp_path)
    assert healing["codes"] == healed["codes"] == fresh["codes"]
    messages = healing["warnings"]
    assert len(messages) == len(damaged), messages
    assert all(any(path.name in message for message in messages) for path in damaged), messages
    assert healing["misses"] >= 1
    assert healed["warnings"] == [] and healed["misses"] == 0 and healed["hits"] >= 3


def test_cache_files_are_written_whole_and_sealed(pristine):
    from numbacast.engine.cache_files import MAGIC_DATA, MAGIC_INDEX

    folder = pristine[1] / "numbacast"
    data, index = cache_files(folder)
    assert index.read_bytes().startswith(MAGIC_INDEX)
    assert all(path.read_bytes().startswith(MAGIC_DATA) for path in data)
    assert not list(folder.glob("*.tmp"))  # the temporary files were renamed into place
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_unseal_checks_magic_length_and_checksum():
    from numbacast.engine.cache_files import MAGIC_DATA, DamagedFile, seal, unseal

    blob = seal(MAGIC_DATA, b"payload")
    assert unseal(MAGIC_DATA, blob) == b"payload"
    for bad in (blob[:-1], blob + b"x", blob[:-1] + b"X", b"", blob[:10], b"\0" * len(blob)):
        with pytest.raises(DamagedFile):
            unseal(MAGIC_DATA, bad)


# -- A cache that trusts no one else (issue 14) -------------------------------------------------


def evil_index(marker):
    """A cache index, in Numba's format, whose unpickling creates ``marker``."""
    import pickle

    import numba

    class Plant:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    return pickle.dumps(numba.__version__) + pickle.dumps(Plant())


def test_a_planted_cache_folder_is_not_used(tmp_path):
    """The last fallback is a fixed path in the temporary folder: another user
    can create it first and plant a pickle there."""
    from numbacast.engine.kernels import serial_kernel

    env = private_copy(tmp_path)
    (tmp_path / "numbacast" / "__pycache__").write_text("not a folder")
    env["XDG_CACHE_HOME"] = os.devnull
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    user = subprocess.run(
        [sys.executable, "-c", "import getpass; print(getpass.getuser())"], capture_output=True, text=True, check=True
    ).stdout.strip()
    planted = temporary / f"numbacast-cache-{user}"
    planted.mkdir()
    marker = tmp_path / "the pickle ran"
    (planted / serial_kernel._cache._cache_file._index_name).write_bytes(evil_index(marker))
    if os.getuid() == 0:
        for path in (planted, *planted.iterdir()):
            os.chown(path, 65534, 65534)  # another user's
    else:
        planted.chmod(0o777)  # any user's
    result = run_probe(env, tmp_path, f"import tempfile; tempfile.tempdir = {str(temporary)!r}\n")
    assert not marker.exists()
    assert result["codes"] == [0x40, 0x63, 0x80]
    assert result["warnings"].count("CacheWarning") >= 1


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX file owners")
def test_a_folder_numbacast_creates_is_private(tmp_path):
    env = private_copy(tmp_path)
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "elsewhere")
    run_probe(env, tmp_path)
    assert stat.S_IMODE((tmp_path / "elsewhere" / "numbacast").stat().st_mode) == 0o700


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX file owners")
def test_which_folders_are_trusted(tmp_path, monkeypatch):
    from numbacast.engine import cache

    own = tmp_path / "own"
    own.mkdir(mode=0o700)
    assert cache.trust_problem(own) is None
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert "every user may write it" in cache.trust_problem(shared)
    link = tmp_path / "link"
    link.symlink_to(shared)
    assert "every user may write it" in cache.trust_problem(link)
    open_parent = tmp_path / "open"
    open_parent.mkdir()
    open_parent.chmod(0o777)
    (open_parent / "inner").mkdir(mode=0o700)
    assert "above it may be written by every user" in cache.trust_problem(open_parent / "inner")
    open_parent.chmod(0o1777)  # sticky, as /tmp
    assert cache.trust_problem(open_parent / "inner") is None
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real + 1)
    assert "belongs to another user" in cache.trust_problem(own)
    monkeypatch.undo()
    with pytest.raises(cache.UntrustedFolder):
        cache.prepare_folder(shared)
    cache.prepare_folder(tmp_path / "new" / "cache")
    assert stat.S_IMODE((tmp_path / "new" / "cache").stat().st_mode) == 0o700


SAVER = textwrap.dedent("""
    import sys
    from numbacast.engine.cache_files import VerifiedIndexDataCacheFile
    folder, process = sys.argv[1], int(sys.argv[2])
    cache = VerifiedIndexDataCacheFile(folder, "probe-kernel", ("stamp", 1), lambda path, reason: None)
    for i in range(40):
        cache.save(("signature", process, i), b"code")
""")


def test_processes_saving_signatures_at_once_keep_every_entry(tmp_path):
    """Four processes add 40 signatures each to one kernel's index at the same
    time: the index ends with all 160 (each addition reads, adds and writes
    the index under a lock)."""
    from numbacast.engine.cache_files import VerifiedIndexDataCacheFile

    savers = [
        subprocess.Popen([sys.executable, "-c", SAVER, str(tmp_path), str(p)], cwd=PACKAGE.parent) for p in range(4)
    ]
    assert [s.wait(timeout=120) for s in savers] == [0] * 4
    cache = VerifiedIndexDataCacheFile(str(tmp_path), "probe-kernel", ("stamp", 1), lambda path, reason: None)
    assert sorted(cache._load_index()) == sorted(("signature", p, i) for p in range(4) for i in range(40))


GC_PROBE = textwrap.dedent("""
    import gc, json
    import numpy as np
    import numbacast
    from numbacast.engine.kernels import serial_kernel
    numbacast.cast(np.ones(4, np.float32), "float16")  # Numba imported and set up
    starts = []
    gc.callbacks.append(lambda phase, info: starts.append(info["generation"]) if phase == "start" else None)
    gc.collect()
    starts.clear()
    numbacast.cast(np.ones(4, np.float32), "float8e4m3fn")  # a kernel compiled
    collections, enabled_after = len(starts), gc.isenabled()
    gc.disable()
    numbacast.cast(np.ones(4, np.float32), "float8e5m2")  # another, with the collector off
    print(json.dumps({"misses": sum(serial_kernel.stats.cache_misses.values()), "collections": collections,
                      "enabled_after": enabled_after, "still_off": not gc.isenabled()}))
""")


def test_a_kernel_compiles_with_the_garbage_collector_paused(tmp_path):
    """The collector does not run while a kernel compiles (some 40 times
    otherwise), runs again after it, and stays off if the user turned it off."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", GC_PROBE], env=env, capture_output=True, text=True, check=True)
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    assert probe["misses"] == 3  # every kernel compiled, none loaded
    assert probe["collections"] <= 2  # the one after the compilation, at most one more in the cast around it
    assert probe["enabled_after"] and probe["still_off"]


COMPILE_PROBE = textwrap.dedent("""
    import json
    import numpy as np
    import numbacast
    from numba.core import event
    numbacast.cast(np.ones(4, np.float32), "float16")  # Numba imported and set up
    compiled = {}

    class Compilations(event.Listener):
        def on_start(self, ev):
            compiled[target].append(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", Compilations()):
        for target in ("int8", "uint4", "float8e5m2fnuz", "float8e4m3fn", "bfloat16", "float8e8m0"):
            compiled[target] = []
            numbacast.cast(np.ones(4, np.float32), target)
    print(json.dumps(compiled))
""")


def test_a_first_small_cast_compiles_its_kernel_and_element_function_only(tmp_path):
    """A first cast of a small array compiles two functions, the serial
    kernel and the pair's element function: the codecs it goes through are
    typed inside the element function (``codec_njit``), not compiled each
    on its own (which made three or four compilations of a pair)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", COMPILE_PROBE], env=env, capture_output=True, text=True, check=True)
    compiled = json.loads(result.stdout.strip().splitlines()[-1])
    element_function = "_overload_convert_element.<locals>.<lambda>"
    assert compiled == {target: ["serial_kernel", element_function] for target in compiled}
