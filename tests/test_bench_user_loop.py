"""Smoke test of the bench's "user-loop" group: its rows, and that each loop gives the cast's bits."""

import re

import pytest

from benchmarks import bench_user_loop
from benchmarks.harness import bench, user_loops


@pytest.mark.parametrize("source, target", bench.USER_LOOP_PAIRS, ids=lambda t: t.name)
def test_each_loop_gives_the_bits_of_the_cast(source, target):
    assert user_loops.same_bits(source, target, 1 << 16)


def test_the_group_rows(capsys):
    assert bench.main(["--size", "4096", "--repeat", "1", "--groups", "user-loop"]) == 0
    out = capsys.readouterr().out
    assert "ratio = user loop / cast" in out
    for source, target in bench.USER_LOOP_PAIRS:
        label = re.escape(f"{source.onnx_name} -> {target.onnx_name}")
        assert re.search(rf"^{label}\s+\S+ ms\s+\S+ ms\s+\S+\s+\S+\s+<= 1.5\s+(PASS|short)$", out, re.MULTILINE), label
    assert f"of {len(bench.USER_LOOP_PAIRS)} rows" in out


def test_the_asv_benchmark_runs(monkeypatch):
    monkeypatch.setattr(bench_user_loop, "DEFAULT_SIZE", 4096)
    benchmark = bench_user_loop.UserLoop()
    for pair in bench_user_loop.PAIRS:
        benchmark.setup(pair)
        benchmark.time_user_loop(pair)
        benchmark.time_cast(pair)


def test_the_call_overhead_asv_benchmark_runs():
    benchmark = bench_user_loop.UserCallOverhead()
    for dtype in benchmark.params[0]:
        benchmark.setup(dtype)
        assert benchmark.call() == 1
        benchmark.time_call(dtype)
