"""numbacast.cast on Dask arrays: lazy, chunk by chunk, checked at the call,
and computed on a real dask.distributed cluster that loads kernels from disk."""

import json
import os
import re
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest
from conftest import ROOT, storage_codes

import numbacast
from numbacast.engine.checks import refuse_dask
from numbacast.engine.kernels import PARALLEL_MIN

da = pytest.importorskip(
    "dask.array", reason="the Dask tests need dask[array,distributed] (pip install 'numbacast[dask]')"
)

TARGETS = ("float8e4m3fn", "int4", "float16")


def sample(n, seed=0):
    """Float32 values over the range of every target, with inf, NaN and -0."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(-12, 12, n)).astype(np.float32)
    x[:4] = [np.inf, -np.inf, np.nan, -0.0]
    return x


def unevaluable(shape, chunks, dtype):
    """A Dask array whose chunks fail if anything ever computes them."""

    def fail(block):
        raise AssertionError("a chunk was computed")

    meta = np.empty((0,) * len(shape), dtype)
    return da.zeros(shape, chunks=chunks, dtype=dtype).map_blocks(fail, dtype=dtype, meta=meta)


def test_cast_is_lazy_with_the_same_chunks_and_the_target_dtype():
    x = unevaluable((10, 7), (4, 3), np.float32)
    for to, storage in [
        ("float8e4m3fn", ml_dtypes.float8_e4m3fn),
        ("int4", ml_dtypes.int4),
        (10, np.float16),
        ("bool", np.bool_),
    ]:
        result = numbacast.cast(x, to)
        assert isinstance(result, da.Array)
        assert result.chunks == x.chunks and result.dtype == storage
        assert result._meta.dtype == storage and isinstance(result._meta, np.ndarray)


def test_local_compute_equals_the_numpy_cast_chunk_by_chunk():
    x = sample(3 * PARALLEL_MIN + 1234).reshape(-1, 2)
    dx = da.from_array(x, chunks=(PARALLEL_MIN // 2 + 17, 1))  # an uneven last chunk along axis 0
    for to in TARGETS + ("float8e8m0",):
        got = numbacast.cast(dx, to, round_mode="nearest").compute(scheduler="threads")
        assert got.dtype == numbacast.resolve(to).storage
        assert np.array_equal(storage_codes(got), storage_codes(numbacast.cast(x, to, round_mode="nearest")))


def test_options_and_each_chunk_s_own_dtype_are_honoured():
    x = np.array([1e9, -np.inf, 0.3, 3.0], np.float64)
    dx = da.from_array(x, chunks=2)
    for options in (dict(saturate=False), dict(saturate=True)):
        assert np.array_equal(
            storage_codes(numbacast.cast(dx, "float8e5m2", **options).compute()),
            storage_codes(numbacast.cast(x, "float8e5m2", **options)),
        )
    assert numbacast.cast(dx, "float8e8m0", round_mode="down").compute().astype(np.float64).tolist()[2:] == [0.25, 2]
    zero_d = numbacast.cast(da.from_array(np.float32(2.5)), "int4")
    assert zero_d.shape == () and int(zero_d.compute()) == 2
    assert numbacast.cast(da.zeros((0, 3), chunks=2), "bfloat16").compute().shape == (0, 3)


@pytest.mark.parametrize(
    "bad,error,match",
    [
        (dict(to="float7"), ValueError, "float7"),
        (dict(to="string"), (TypeError, ValueError), "(?i)string"),
        (dict(to="float8e4m3fn", saturate=2), TypeError, "saturate"),
        (dict(to="float8e8m0", round_mode="ceil"), ValueError, "up.*down.*nearest"),
    ],
)
def test_bad_arguments_raise_at_the_call(bad, error, match):
    with pytest.raises(error, match=match):
        numbacast.cast(unevaluable((6,), 2, np.float32), **bad)


@pytest.mark.parametrize("dtype", ["U3", "c8", "M8[s]", object])
def test_a_source_dtype_without_an_onnx_type_raises_at_the_call(dtype):
    with pytest.raises((TypeError, ValueError), match=re.escape(str(np.dtype(dtype)))):
        numbacast.cast(unevaluable((6,), 2, dtype), "float")


def test_out_with_a_dask_array_is_refused():
    x = unevaluable((6,), 2, np.float32)
    out = np.zeros(6, ml_dtypes.float8_e4m3fn)
    for into in (out, unevaluable((6,), 2, ml_dtypes.float8_e4m3fn)):
        with pytest.raises(TypeError, match="out=.*Dask.*dask.array.store"):
            numbacast.cast(x, "float8e4m3fn", out=into)
    assert not storage_codes(out).any()


def test_refuse_dask_rejects_dask_arrays_only():
    message = r"numbacast\.pack does not take Dask arrays.*numbacast\.pack\(x\.compute\(\)"
    with pytest.raises(TypeError, match=message):
        refuse_dask(da.ones(8, chunks=3), "numbacast.pack")
    assert refuse_dask(np.ones(8), "numbacast.pack") is None
    assert refuse_dask([1, 2], "numbacast.pack") is None


def run_python(code, **env):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT), **env),
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_numpy_casts_never_import_dask():
    loaded = run_python("""
        import json, sys
        import numpy as np
        import numbacast
        numbacast.cast(np.ones(3, np.float32), "float8e4m3fn")
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed"))))
    """)
    assert loaded == []


def test_threaded_scheduler_runs_parallel_kernels_one_at_a_time():
    """Numba's workqueue threading layer aborts the process when two threads
    launch parallel kernels at once; Dask's threads must not do that."""
    result = run_python(
        f"""
        import json
        import numpy as np, numba, dask.array as da
        import numbacast
        x = np.arange(8 * {PARALLEL_MIN}, dtype=np.float32) / 7
        got = numbacast.cast(da.from_array(x, chunks={2 * PARALLEL_MIN}), "float8e4m3fn").compute(
            scheduler="threads", num_workers=4)
        same = bool(np.array_equal(got.view(np.uint8), numbacast.cast(x, "float8e4m3fn").view(np.uint8)))
        print(json.dumps([numba.threading_layer(), same]))
    """,
        NUMBA_THREADING_LAYER="workqueue",
    )
    assert result == ["workqueue", True]


# --- a real dask.distributed cluster ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    """(client, worker addresses): two worker processes with one thread each,
    sharing this process's kernel cache on disk."""
    distributed = pytest.importorskip(
        "distributed", reason="the cluster tests need dask[distributed] (pip install 'numbacast[dask]')"
    )
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as local_cluster,
        distributed.Client(local_cluster) as client,
    ):
        workers = sorted(client.scheduler_info()["workers"])
        assert len(workers) == 2
        yield client, workers


def test_cluster_compute_equals_the_in_process_cast(cluster):
    client, _ = cluster
    x = sample(9 * PARALLEL_MIN + 555, seed=1).reshape(-1, 3)
    dx = da.from_array(x, chunks=(PARALLEL_MIN // 2, 2))  # 7 x 2 chunks, uneven at the ends of both axes
    assert dx.npartitions > 4
    for to in TARGETS:
        expected = numbacast.cast(x, to)
        lazy = numbacast.cast(dx, to)
        got = client.compute(lazy).result()
        assert type(got) is np.ndarray and got.dtype == lazy.dtype
        assert np.array_equal(storage_codes(got), storage_codes(expected))


def test_cluster_quantises_block_formats_as_in_process(cluster):
    """The lazy ``numbacast.mx`` tasks (functions with their options bound) travel to worker processes."""
    from numbacast import mx

    client, _ = cluster
    x = sample(64 * 40, seed=2).reshape(40, 64)
    for fmt, options in (("nvfp4", {}), ("mxfp4_e2m1", {"axis": 0, "rounding": "toward_zero"})):
        expected = mx.quantize(x, fmt, **options)
        q = mx.quantize(da.from_array(x, chunks=(13, 24)), fmt, **options)
        elements, scales, values = client.compute([q.elements, q.scales, mx.dequantize(q)], sync=True)
        assert np.array_equal(storage_codes(elements), storage_codes(expected.elements))
        assert np.array_equal(storage_codes(scales), storage_codes(expected.scales))
        assert np.array_equal(values, mx.dequantize(expected), equal_nan=True)


def kernel_cache_stats(conversion_text):
    """On a worker: (disk cache hits, compilations) of ``serial_kernel`` for the
    signatures of one conversion."""
    from numbacast.engine.kernels import serial_kernel

    stats = serial_kernel.stats

    def count(counter):
        return sum(n for signature, n in counter.items() if conversion_text in str(signature))

    return count(stats.cache_hits), count(stats.cache_misses)


def test_workers_load_the_kernel_from_the_disk_cache(cluster):
    """This process compiles (or loads) a conversion no worker has used; then
    every worker, running many tasks of it, loads it once and never compiles."""
    client, workers = cluster
    conversion_text = "float->float8e5m2fnuz(saturate=0"
    assert all(tuple(s) == (0, 0) for s in client.run(kernel_cache_stats, conversion_text).values())
    for seed, worker in enumerate(workers):
        x = sample(6 * PARALLEL_MIN, seed=seed)
        expected = numbacast.cast(x, "float8e5m2fnuz", saturate=False)  # in this process: saved to disk
        numbacast.cast(x[: PARALLEL_MIN // 2], "float8e5m2fnuz", saturate=False)  # the serial loop, as a chunk's
        lazy = numbacast.cast(da.from_array(x, chunks=PARALLEL_MIN // 2), "float8e5m2fnuz", saturate=False)
        assert np.array_equal(storage_codes(client.compute(lazy, workers=[worker]).result()), storage_codes(expected))
    stats = client.run(kernel_cache_stats, conversion_text)
    assert all(tuple(s) == (1, 0) for s in stats.values()), stats
