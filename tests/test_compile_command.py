"""``python -m numbacast compile``: the conversions it names are in the disk
cache afterwards, and a fresh process loads them without compiling."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from numbacast.cli import build_parser
from numbacast.cli.compile import Job, jobs_for, parse_types

PROBE = textwrap.dedent("""
    import json
    import numpy as np
    import numbacast
    from numbacast.engine.kernels import PARALLEL_MIN, parallel_kernel, serial_kernel

    for size in (10, PARALLEL_MIN):
        x = np.linspace(-1e6, 1e6, size, dtype=np.float32)
        numbacast.cast(x, "float8e5m2fnuz")
        numbacast.cast(x, "float8e5m2fnuz", saturate=False)
    print(json.dumps([[sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values())]
                      for k in (serial_kernel, parallel_kernel)]))
""")


def test_the_jobs_cover_every_option_of_each_pair():
    (floats,) = parse_types("float", "--to")
    fnuz, e8m0, int4 = parse_types("float8e5m2fnuz,float8e8m0, INT4", "--to")
    jobs = jobs_for([floats], [fnuz])
    assert set(jobs) == {
        Job("FLOAT", "FLOAT8E5M2FNUZ"),
        Job("FLOAT", "FLOAT8E5M2FNUZ", saturate=False),
        Job("FLOAT", "FLOAT8E5M2FNUZ", inf_to_nan=True),
    }
    assert len(jobs_for([floats], [e8m0])) == 6  # saturate x round_mode
    assert jobs_for([floats], [int4]) == [Job("FLOAT", "INT4")]


def test_the_command_line_takes_its_options():
    args = build_parser().parse_args(["compile", "--to", "int4,float8e4m3fn", "--from", "float", "--jobs", "3"])
    assert (args.command, args.to, args.source, args.jobs, args.all) == (
        "compile",
        "int4,float8e4m3fn",
        "float",
        3,
        False,
    )


def _compile_into(tmp_path, target):
    """``(environment, output)`` of ``compile --to target --from float`` into a cache under ``tmp_path``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    argv = [sys.executable, "-m", "numbacast", "compile", "--to", target, "--from", "float", "--jobs", "1"]
    return env, subprocess.run(argv, env=env, capture_output=True, text=True, check=True)


def test_a_fresh_process_loads_what_compile_saved(tmp_path):
    env, done = _compile_into(tmp_path, "float8e5m2fnuz")
    assert "3 conversions" in done.stdout and "6 kernels compiled" in done.stdout, done.stdout
    probe = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    (serial_hits, serial_misses), (parallel_hits, parallel_misses) = json.loads(probe.stdout)
    assert (serial_hits, serial_misses, parallel_hits, parallel_misses) == (2, 0, 2, 0)


STREAMING_PROBE = textwrap.dedent("""
    import json
    import numpy as np
    import numbacast
    from numbacast.engine.kernels import streaming_kernel
    from numbacast.engine.streaming import STREAM_MIN_BYTES

    numbacast.cast(np.ones(STREAM_MIN_BYTES // 2, np.float32), "float16")
    stats = streaming_kernel.stats
    print(json.dumps([sum(stats.cache_hits.values()), sum(stats.cache_misses.values())]))
""")


def test_compile_saves_the_loop_of_streamed_outputs_too(tmp_path):
    """FLOAT -> FLOAT16 streams a large output (docs/internals.md): compile
    saves its serial, parallel and streaming loops, and a fresh process
    loads the streaming one."""
    env, done = _compile_into(tmp_path, "float16")
    assert "1 conversions" in done.stdout and "3 kernels compiled" in done.stdout, done.stdout
    probe = subprocess.run([sys.executable, "-c", STREAMING_PROBE], env=env, capture_output=True, text=True, check=True)
    assert json.loads(probe.stdout) == [1, 0]


def test_compile_needs_a_choice():
    done = subprocess.run([sys.executable, "-m", "numbacast", "compile"], capture_output=True, text=True)
    assert done.returncode == 2 and "--all" in done.stderr


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--all", "--to", "int4"], "--all compiles every pair of types; give it without --to and --from"),
        (["--all", "--from", "float"], "give it without --to and --from"),
        (["--to", "int4", "--jobs", "0"], "--jobs takes a number of processes, 1 or more, not 0"),
        (["--to", "int4", "--jobs", "-1"], "not -1"),
        (["--to", ""], "--to names no type ('')"),
        (["--from", ",", "--to", "int8"], "--from names no type (',')"),
    ],
)
def test_arguments_that_contradict_or_name_nothing_are_refused(argv, message, capsys):
    """Nothing is compiled: exit status 2 and a one-line message."""
    from numbacast import cli

    assert cli.main(["compile", *argv]) == 2
    assert message in capsys.readouterr().err
