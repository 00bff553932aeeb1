"""Kernels use the threads Numba allows: ``numba.set_num_threads`` and
``NUMBA_NUM_THREADS``."""

import functools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import exact
import numba
import numpy as np
import pytest
from conftest import check_against_reference

import numbacast
from numbacast.engine.kernels import PARALLEL_MIN

REPO = Path(__file__).resolve().parents[1]


def large_float32_codes():
    """More than PARALLEL_MIN float32 codes: 509 values (specials included)
    repeated, so the exact reference is computed 509 times only."""
    rng = np.random.default_rng(5)
    values = (rng.standard_normal(509) * 2.0 ** rng.integers(-30, 30, 509)).astype(np.float32)
    values[:5] = [np.inf, -np.inf, np.nan, -0.0, 464.0]
    return np.tile(values, 3 * PARALLEL_MIN // 509 + 1).view(np.uint32)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("target", ["float8e4m3fn", "int4", "float16"])
def test_large_casts_are_exact_under_any_thread_count(threads, target):
    codes = large_float32_codes()
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        out = numbacast.cast(codes.view(np.float32), target)
        assert numba.get_num_threads() == min(threads, numba.config.NUMBA_NUM_THREADS)  # left as the caller set it
    finally:
        numba.set_num_threads(before)
    reference = functools.lru_cache(maxsize=None)(lambda code: exact.cast_code("float", code, target))
    check_against_reference("float", codes, target, {}, out, reference)


# In a fresh process on Linux, with OpenMP threads that sleep while idle: which
# of Numba's pool threads (every thread but the caller's) run while casts of
# large arrays run under each set_num_threads() value.
THREADS_PROBE = textwrap.dedent("""
    import json, os, sys, threading, time
    import numba, numpy as np, numbacast
    from numbacast.engine.kernels import PARALLEL_MIN

    def cpu_ns():
        result = {}
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/schedstat") as stats:
                result[int(tid)] = int(stats.read().split()[0])
        return result

    def idle_cpu_ns():  # cpu_ns() once the pool threads, which leave a region after the caller, are idle
        previous = cpu_ns()
        for _ in range(500):
            time.sleep(0.01)
            current = cpu_ns()
            if all(current[t] == previous.get(t) for t in current if t != caller):
                return current
            previous = current
        raise RuntimeError("Numba's pool threads never went idle")

    caller = threading.get_native_id()
    x = np.arange(32 * PARALLEL_MIN, dtype=np.float64)
    try:
        expected = numbacast.cast(x, "float8e4m3fn")  # starts the thread pool
    except ValueError as error:  # the OpenMP threading layer is not available
        print(json.dumps({"skip": str(error)}))
        sys.exit()
    ran = []
    for threads in json.loads(sys.argv[1]):
        numba.set_num_threads(threads)
        before = idle_cpu_ns()
        for _ in range(3):
            assert np.array_equal(numbacast.cast(x, "float8e4m3fn").view(np.uint8), expected.view(np.uint8))
        after = cpu_ns()
        ran.append(sum(after[t] > before.get(t, 0) for t in after if t != caller))
    print(json.dumps({"layer": numba.threading_layer(), "pool": numba.config.NUMBA_NUM_THREADS, "ran": ran}))
""")


@pytest.mark.skipif(
    not os.path.exists(f"/proc/self/task/{os.getpid()}/schedstat"),
    reason="counting the threads that ran needs Linux's /proc/<pid>/task/<tid>/schedstat",
)
@pytest.mark.parametrize(
    "pool,settings,expected",
    [
        (3, [1, 3, 1], [0, "some", 0]),  # numba.set_num_threads(1): only the calling thread runs the kernel
        (1, [1], [0]),  # NUMBA_NUM_THREADS=1: likewise
    ],
)
def test_kernels_run_on_the_allowed_threads_only(pool, settings, expected):
    env = dict(
        os.environ,
        PYTHONPATH=str(REPO),
        NUMBA_NUM_THREADS=str(pool),
        NUMBA_THREADING_LAYER="omp",
        OMP_WAIT_POLICY="passive",
    )
    completed = subprocess.run(
        [sys.executable, "-c", THREADS_PROBE, json.dumps(settings)], env=env, cwd=REPO, capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    if "skip" in result:
        pytest.skip(f"Numba's OpenMP threading layer is not available: {result['skip']}")
    assert result["layer"] == "omp" and result["pool"] == pool
    assert [("some" if n > 0 else 0) for n in result["ran"]] == expected, result


def test_python_threads_casting_large_arrays_at_once_under_workqueue():
    """Numba's workqueue layer aborts the process when two threads start
    parallel work at once: numbacast's parallel kernels take turns."""
    code = textwrap.dedent(f"""
        import json
        from concurrent.futures import ThreadPoolExecutor
        import numba, numpy as np, numbacast
        x = np.arange(4 * {PARALLEL_MIN}, dtype=np.float32) / 7
        expected = numbacast.cast(x, "float8e4m3fn").view(np.uint8)
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda _: numbacast.cast(x, "float8e4m3fn").view(np.uint8), range(16)))
        print(json.dumps([numba.threading_layer(), all(np.array_equal(r, expected) for r in results)]))
    """)
    completed = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO), NUMBA_THREADING_LAYER="workqueue"),
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert json.loads(completed.stdout.strip().splitlines()[-1]) == ["workqueue", True]
