"""The disk cache: a second process loads kernels instead of compiling, and an
unwritable package directory never breaks a cast."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

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
