"""The perf map of ``benchmarks.harness.perf_map``: the names and spans of
the functions of the kernels a process compiled, in the format Linux
``perf`` reads (start and size in hexadecimal, then the name)."""

import os
import subprocess
import sys

from conftest import ROOT

from benchmarks.harness.perf_map import LONGEST, map_lines


def test_each_function_spans_to_the_next_and_no_further_than_the_longest():
    lines = map_lines([(0x1000, "first"), (0x1400, "second"), (0x9_0000, "third")])
    assert lines == ["1000 400 first", f"1400 {LONGEST:x} second", f"90000 {LONGEST:x} third"]


def test_a_process_writes_the_names_of_the_kernels_it_compiled(tmp_path):
    path = tmp_path / "kernels.map"
    command = [sys.executable, "-m", "benchmarks.harness.perf_map", "float8e4m3fn", "--size", "1000"]
    subprocess.run([*command, "--seconds", "0", "--map", str(path)], cwd=ROOT, env=dict(os.environ), check=True)
    entries = [line.split(" ", 2) for line in path.read_text().splitlines()]
    assert any("serial_kernel" in name for _, _, name in entries)  # 1,000 elements: the serial loop
    starts = [int(start, 16) for start, _, _ in entries]
    assert starts == sorted(starts) and all(0 < int(size, 16) <= LONGEST for _, size, _ in entries)
