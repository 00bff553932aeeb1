"""Smoke test of ``python -m numbacast bench``: the table's rows and numbers, not the timings."""

import json
import re

import pytest

from benchmarks.harness import bench
from numbacast.__main__ import main as cli_main

NUMBER = r"\d+(?:\.\d+)?(?:e[+-]\d+)?"


def run_bench(capsys, *args):
    assert bench.main(["--size", "4096", "--repeat", "1", *args]) == 0
    return capsys.readouterr().out


def rows_of(text, pair):
    """The table lines of ``pair``: (numbacast, reference, ratio, spread, target, result) as text."""
    pattern = (
        rf"^{re.escape(pair)}\s+({NUMBER}) (?:ms|us|MB)\s+({NUMBER}) (?:ms|us|MB)\s+({NUMBER})"
        rf"\s+({NUMBER}-{NUMBER}|-)\s+([<>]=? {NUMBER}(?: us)?)\s+(PASS|short)$"
    )
    return re.findall(pattern, text, re.MULTILINE)


def test_rows_of_a_pair(capsys):
    groups = "to-narrow,from-narrow,ml_dtypes,overhead,memory"
    out = run_bench(capsys, "--pairs", "float->float8e4m3fn", "--groups", groups)
    assert "4,096 elements per cast" in out
    to_e4m3 = rows_of(out, "FLOAT -> FLOAT8E4M3FN")
    # trivial kernel, ml_dtypes, call overhead, memory
    assert [row[4] for row in to_e4m3] == ["<= 1.3", ">= 20", "<= 10 us", "<= 1.01"]
    assert not rows_of(out, "FLOAT8E4M3FN -> FLOAT")
    for ours, theirs, ratio, _, _, _ in to_e4m3:
        assert float(ours) > 0 and float(theirs) > 0 and float(ratio) > 0
    trivial, ml_dtypes, _, memory = to_e4m3
    assert float(trivial[2]) == pytest.approx(float(trivial[0]) / float(trivial[1]), rel=0.05)
    # against ml_dtypes, the ratio is a speed-up
    assert float(ml_dtypes[2]) == pytest.approx(float(ml_dtypes[1]) / float(ml_dtypes[0]), rel=0.05)
    assert float(memory[1]) == pytest.approx(4096 / 1e6, rel=1e-2)  # the output: one byte per element
    # one alternated pair of runs (--repeat 1): its ratio is the spread's both ends; untimed rows have none
    low, high = (float(q) for q in trivial[3].split("-"))
    assert low == high == pytest.approx(float(trivial[2]), rel=0.05)
    assert memory[3] == "-"
    assert re.search(r"^\d+ PASS, \d+ short, 0 n/a of 4 rows$", out, re.MULTILINE)


def test_unavailable_rows_say_why(capsys, monkeypatch):
    def unavailable(source, target, size):
        raise bench.baselines.Unavailable("packed path not available")

    monkeypatch.setattr(bench.baselines, "packed_cast", unavailable)
    out = run_bench(capsys, "--groups", "packed", "--pairs", "int4")
    assert re.search(r"^FLOAT -> INT4 \(packed\) .* n/a \(packed path not available\)$", out, re.MULTILINE)
    assert re.search(r"^INT4 -> FLOAT \(packed\) .* n/a \(packed path not available\)$", out, re.MULTILINE)
    assert "0 PASS, 0 short, 2 n/a of 2 rows" in out


def test_command_line_dispatch(capsys):
    assert cli_main(["bench", "--size", "2k", "--repeat", "1", "--pairs", "int32:int8,bool", "--groups", "numpy"]) == 0
    out = capsys.readouterr().out
    assert len(rows_of(out, "INT32 -> INT8")) == len(rows_of(out, "FLOAT -> BOOL")) == 1
    assert "0 n/a of 2 rows" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--pairs", "float->e4m3"], "unknown type name 'e4m3'"),
        (["--groups", "speed"], "unknown group 'speed'"),
        (["--size", "lots"], "--size must be an even number"),
        (["--size", "3"], "--size must be an even number"),
        (["--repeat", "0"], "--repeat must be at least 1"),
        (["--threads", "0"], "--threads must be from 1 to"),
    ],
)
def test_bad_arguments(capsys, args, message):
    with pytest.raises(SystemExit) as exit_:
        bench.main(args)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_rerun_into_replaces_the_rows_it_ran_and_notes_the_rerun(capsys, tmp_path):
    path = tmp_path / "bench.json"
    run_bench(capsys, "--pairs", "int32:int8,float:bool", "--groups", "numpy", "--json", str(path))
    first = json.loads(path.read_text(encoding="utf-8"))
    first["groups"][0]["rows"][0]["numbacast"] = -1.0  # a value no run gives, to see it replaced
    path.write_text(json.dumps(first), encoding="utf-8")
    out = run_bench(capsys, "--pairs", "int32:int8", "--groups", "numpy", "--rerun-into", str(path))
    assert f"rows replaced in {path}" in out
    data = json.loads(path.read_text(encoding="utf-8"))
    [group] = data["groups"]
    assert [row["pair"] for row in group["rows"]] == ["INT32 -> INT8", "FLOAT -> BOOL"]  # in place
    assert group["rows"][0]["numbacast"] > 0  # the re-run's row
    assert group["rows"][1] == first["groups"][0]["rows"][1]  # a row the re-run did not run is kept
    [rerun] = data["reruns"]
    assert rerun["groups"] == ["numpy"] and str(tmp_path) not in json.dumps(data)
    assert rerun["command"] == "python -m numbacast bench --size 4096 --repeat 1 --pairs int32:int8 --groups numpy"
    assert data["summary"]["rows"] == 2 == sum(data["summary"][k] for k in ("PASS", "short", "n/a"))


def test_rerun_into_refuses_a_record_of_other_runs(capsys, tmp_path):
    path = tmp_path / "bench.json"
    run_bench(capsys, "--pairs", "int32:int8", "--groups", "numpy", "--json", str(path))

    def refused(size):
        with pytest.raises(SystemExit) as exit_:
            bench.main(["--size", size, "--groups", "numpy", "--pairs", "int32:int8", "--rerun-into", str(path)])
        assert exit_.value.code == 2
        return capsys.readouterr().err

    assert "holds runs of 4096 elements" in refused("8192")
    path.write_text("[]", encoding="utf-8")
    assert "is not a record written by --json" in refused("4096")
    path.write_text("[1", encoding="utf-8")
    assert "is not JSON" in refused("4096")


def test_json_writes_the_results_and_the_machine(capsys, tmp_path):
    path = tmp_path / "bench.json"
    out = run_bench(capsys, "--pairs", "int32:int8", "--groups", "numpy", "--json", str(path))
    assert f"results written to {path}" in out
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["size"] == 4096 and data["repeat"] == 1
    assert str(tmp_path) not in json.dumps(data)  # no file names of the machine in the record
    assert data["command"] == "python -m numbacast bench --size 4096 --repeat 1 --pairs int32:int8 --groups numpy"
    assert data["machine"]["cpu"] and data["machine"]["numba_cpu_name"] and data["machine"]["logical_cpus"] >= 1
    assert {"numbacast", "numba", "numpy"} <= set(data["versions"])
    [numpy_group] = data["groups"]
    assert numpy_group["key"] == "numpy" and numpy_group["target"] == "<= 1" and numpy_group["unit"] == "ms"
    [row] = numpy_group["rows"]
    assert row["pair"] == "INT32 -> INT8" and row["result"] in ("PASS", "short")
    assert row["numbacast"] > 0 and row["reference"] > 0
    assert row["ratio"] == pytest.approx(row["numbacast"] / row["reference"], rel=2e-3)
    assert data["summary"] == {"PASS": row["result"] == "PASS", "short": row["result"] == "short", "n/a": 0, "rows": 1}
    assert row["spread"] == [pytest.approx(row["ratio"], rel=2e-3)] * 2


def test_the_spread_is_the_middle_half_of_the_pair_ratios(monkeypatch):
    """Nine alternated pairs of runs: the spread is the quartiles of their
    ratios, inverted for a speed-up."""
    times = iter([2.0, 1.0] * 3 + [3.0, 1.0] * 3 + [4.0, 1.0] * 3)
    monkeypatch.setattr(bench, "seconds", lambda function: next(times))
    monkeypatch.setattr(bench, "WARM_UP", 0)
    timing = bench.alternately(None, None, 9)
    assert timing.pair_ratios == (2.0,) * 3 + (3.0,) * 3 + (4.0,) * 3
    group = bench.Group("g", "title", "ref", (), bench.Target("<=", 5), None, lambda *args: timing)
    row = bench.measure_row(group, bench.FLOAT, bench.FLOAT, 4, 9)
    assert row.spread == (2.0, 4.0) and row.ratio == 3.0


def test_settled_runs_time_each_call_right_after_an_untimed_call_of_the_same_function(monkeypatch):
    calls = []
    monkeypatch.setattr(bench, "WARM_UP", 0)
    monkeypatch.setattr(bench, "seconds", lambda function: function() or len(calls))
    bench.alternately(lambda: calls.append("ours"), lambda: calls.append("theirs"), 2, settle=True)
    assert calls == ["ours", "ours", "theirs", "theirs"] * 2
    calls.clear()
    bench.alternately(lambda: calls.append("ours"), lambda: calls.append("theirs"), 2)
    assert calls == ["ours", "theirs"] * 2
    assert [g.key for g in bench.GROUPS if g.settle] == ["ml_dtypes"]


def test_cpu_option_runs_a_child_compiled_for_that_cpu(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env.pop("NUMBA_CPU_NAME", None)
    args = ["--cpu", "haswell", "--size", "2k", "--repeat", "1", "--pairs", "int32:int8", "--groups", "numpy"]
    done = subprocess.run(
        [sys.executable, "-m", "numbacast", "bench", *args], env=env, capture_output=True, text=True, check=True
    )
    assert "kernels compiled for CPU haswell (features: those of haswell)" in done.stdout
    assert len(rows_of(done.stdout, "INT32 -> INT8")) == 1


def test_cpu_option_refuses_a_cpu_numba_cannot_compile_for(capsys):
    """A name LLVM does not know (it warns, then aborts on compiling) or a
    CPU without 64-bit code is a usage error with LLVM's words, not a crash
    of the child."""
    for name in ("nonsense", "i386"):
        with pytest.raises(SystemExit) as stopped:
            bench.main(["--cpu", name, "--groups", "numpy"])
        assert stopped.value.code == 2
        said = capsys.readouterr().err
        assert f"--cpu: Numba cannot compile for the CPU {name!r}" in said and "64-bit code requested" in said


def test_nvfp4_rows_and_their_trivial_kernels(capsys):
    """NVFP4 quantised with its default tensor scale reads its input twice and
    is paired with a trivial kernel that does too; with the scale given, the
    same codes in one pass, paired with the one-pass trivial kernel."""
    import numpy as np

    from benchmarks.harness import baselines

    x = baselines.codes(baselines.sample(bench.FLOAT, 4099))
    assert baselines.largest_code(x) == x.max()
    given, default = baselines.NVFP4_GIVEN_SCALE, baselines.MX_FORMATS[-1]
    assert (default.reads_twice, given.reads_twice) == (True, False)
    ours_given, ours_default = (baselines.mx_cast(bench.FLOAT, f, 4096)() for f in (given, default))
    assert np.array_equal(ours_given.elements, ours_default.elements)
    assert np.array_equal(ours_given.scales, ours_default.scales)
    out = run_bench(capsys, "--groups", "mx")
    assert len(rows_of(out, "FLOAT -> nvfp4")) == len(rows_of(out, "FLOAT -> nvfp4 (tensor_scale given)")) == 1
    assert not rows_of(out, "nvfp4 (tensor_scale given) -> FLOAT")


def test_block_format_overhead_rows_time_one_block_against_a_cast_of_its_elements(capsys):
    import numbacast
    from benchmarks.harness import baselines

    fmt = baselines.MX_FORMATS[0]
    x = baselines.sample(bench.FLOAT, bench.MX_OVERHEAD_ELEMENTS)
    elements = baselines.mx_element_cast(bench.FLOAT, fmt, bench.MX_OVERHEAD_ELEMENTS)()
    assert elements.dtype == numbacast.resolve("float8e4m3fn").storage and elements.shape == x.shape
    assert baselines.mx_element_cast(fmt, bench.FLOAT, bench.MX_OVERHEAD_ELEMENTS)().dtype == "float32"
    out = run_bench(capsys, "--groups", "mx-overhead")
    quantise = rows_of(out, "FLOAT -> mxfp8_e4m3")
    assert [row[4] for row in quantise] == ["<= 20 us"] and len(rows_of(out, "nvfp4 -> FLOAT")) == 1
    assert re.search(r"^\d+ PASS, \d+ short, 0 n/a of 7 rows$", out, re.MULTILINE)


def test_the_block_format_overhead_asv_benchmark_runs():
    """Every (format, direction) of ``BlockFormatOverhead`` runs, but the
    dequantisation of NVFP4 with its tensor scale given, which asv skips
    (the same as NVFP4's)."""
    import itertools

    from benchmarks.bench_overhead import BlockFormatOverhead

    benchmark, skipped = BlockFormatOverhead(), []
    for name, direction in itertools.product(*BlockFormatOverhead.params):
        try:
            benchmark.setup(name, direction)
        except NotImplementedError:
            skipped.append((name, direction))
            continue
        benchmark.time_call(name, direction)
    assert skipped == [("nvfp4 (tensor_scale given)", "dequantize")]
