"""First calls in a fresh process: ``import numbacast``, and the first cast of
a pair, compiling it or loading it from the disk cache.

Each sample is a new Python process (asv's ``timeraw_``); its untimed setup
points ``NUMBA_CACHE_DIR`` at a cache directory, imports NumPy and ml_dtypes
and makes the source array with them (not with numbacast, which would compile
or load kernels and set Numba up before the timed statement).  The timed
statement imports numbacast and casts once.  ``timeraw_compile`` uses an
empty directory, so the kernels are compiled; ``timeraw_load`` uses one that
``setup_cache`` filled, so they are loaded.

The cases: a small array of a pair that computes (one serial loop), a 16-bit
source (the two serial loops that fill its table, then the lookup), a 16M
array (the parallel loop), and the two directions of text.
"""

import os
import subprocess
import sys
import textwrap

#: case: (source dtype expression, target, elements)
CASES = {
    "float->float8e5m2fnuz": ("np.float32", "float8e5m2fnuz", 1000),
    "bfloat16->int2": ("ml_dtypes.bfloat16", "int2", 1000),
    "float->float8e5m2fnuz-16M": ("np.float32", "float8e5m2fnuz", 1 << 24),
    "float->string": ("np.float32", "string", 1000),
    "string->float": ("str", "float", 1000),
}

CHILD_SETUP = """
    import atexit, os, shutil, tempfile
    cache = {cache!r} or tempfile.mkdtemp(prefix="numbacast-asv-")
    if not {cache!r}:
        atexit.register(shutil.rmtree, cache, True)
    os.environ["NUMBA_CACHE_DIR"] = cache
    import ml_dtypes
    import numpy as np
    x = np.linspace(-4, 4, {size}).astype({source})
"""

FIRST_CAST = "import numbacast\nnumbacast.cast(x, {target!r}, saturate=False)"


def first_cast(case, cache=""):
    source, target, size = CASES[case]
    setup = textwrap.dedent(CHILD_SETUP.format(cache=cache, source=source, size=size))
    return FIRST_CAST.format(target=target), setup


def setup_cache():
    """A disk cache holding every case's kernels, filled by a separate process."""
    cache = os.path.abspath("numba-cache")  # asv runs this in a directory it removes afterwards
    statements = []
    for case in CASES:
        statement, setup = first_cast(case, cache)
        statements += [setup, statement]
    subprocess.run([sys.executable, "-c", "\n".join(statements)], check=True)
    return cache


def timeraw_compile(cache, case):
    return first_cast(case)


def timeraw_load(cache, case):
    return first_cast(case, cache)


def timeraw_import(cache):
    """``import numbacast`` alone (it does not import Numba)."""
    return "import numbacast", "import numpy, ml_dtypes"


for benchmark in (timeraw_compile, timeraw_load):
    benchmark.params = [list(CASES)]
    benchmark.param_names = ["case"]
    benchmark.timeout = 300
