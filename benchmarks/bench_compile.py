"""First call of a new pair in a fresh process: compiling it, or loading it from the disk cache.

Each sample is a new Python process (asv's ``timeraw_``); its untimed setup
points ``NUMBA_CACHE_DIR`` at a cache directory and imports numbacast, and the
timed statement is the first cast of 1,000 elements.  ``timeraw_compile`` uses
an empty directory, so the kernels are compiled; ``timeraw_load`` uses one that
``setup_cache`` filled, so they are loaded.  FLOAT -> FLOAT8E5M2FNUZ compiles
one kernel; BFLOAT16 -> INT2, a 16-bit source, compiles the two kernels that
build its table.
"""

import os
import subprocess
import sys
import textwrap

PAIRS = {"float->float8e5m2fnuz": ("float", "float8e5m2fnuz"), "bfloat16->int2": ("bfloat16", "int2")}

CHILD_SETUP = """
    import atexit, os, shutil, tempfile
    cache = {cache!r} or tempfile.mkdtemp(prefix="numbacast-asv-")
    if not {cache!r}:
        atexit.register(shutil.rmtree, cache, True)
    os.environ["NUMBA_CACHE_DIR"] = cache
    import numpy as np
    import numbacast
    x = numbacast.cast(np.linspace(-4, 4, 1000, dtype=np.float32), {source!r})
"""

FIRST_CAST = "numbacast.cast(x, {target!r}, saturate=False)"


def first_cast(pair, cache=""):
    source, target = PAIRS[pair]
    return FIRST_CAST.format(target=target), textwrap.dedent(CHILD_SETUP.format(cache=cache, source=source))


def setup_cache():
    """A disk cache holding every pair's kernels, filled by a separate process."""
    cache = os.path.abspath("numba-cache")  # asv runs this in a directory it removes afterwards
    statements = []
    for pair in PAIRS:
        statement, setup = first_cast(pair, cache)
        statements += [setup, statement]
    subprocess.run([sys.executable, "-c", "\n".join(statements)], check=True)
    return cache


def timeraw_compile(cache, pair):
    return first_cast(pair)


def timeraw_load(cache, pair):
    return first_cast(pair, cache)


for benchmark in (timeraw_compile, timeraw_load):
    benchmark.params = [list(PAIRS)]
    benchmark.param_names = ["pair"]
    benchmark.timeout = 300
