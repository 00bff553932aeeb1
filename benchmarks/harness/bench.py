"""``python -m numbacast bench``: numbacast's speed beside the practical limit
and beside NumPy, ml_dtypes, PyTorch and onnxruntime, against the project's
speed targets.

Each group of rows is one target.  A timed row runs numbacast's cast and the
group's reference cast :data:`WARM_UP` times each to warm up (compiling and
touching memory), then ``--repeat`` times each, alternately, and compares the
medians (fresh output pages now and then take ten times as long to fault in
on this kind of virtual machine, in runs of a few calls, for every library;
the warm-up and a median of 9 keep most such runs out of the result):

* against the trivial kernel and NumPy, the ratio is numbacast's time over the
  reference's (lower is better);
* against ml_dtypes, PyTorch and onnxruntime, it is the reference's time over
  numbacast's, a speed-up (higher is better).

The "spread" of a timed row is the middle half (the quartiles) of the ratios
of its alternated pairs of runs, one ratio per pair: on a shared machine a
row's median moves from run to run, and the spread shows by how much within
one run.

Call overhead is the median time of many warm calls on a 1-element array;
peak memory is the peak of what tracemalloc traces during a cast of a
``--size`` array that already exists, over the output's size.  The baselines
for optional libraries run only where the library is installed.

``--json FILE`` also writes the results and the machine they were measured on
(:func:`results_json`); the documentation renders its benchmarks page from such
a file (``docs/_data/bench.json``).
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass
from importlib import metadata
from typing import NamedTuple

from numba import config, get_num_threads, set_num_threads, threading_layer

from numbacast import FLOAT, cast, resolve

from . import baselines, user_loops

DEFAULT_SIZE = 1 << 24
QUICK_SIZE = 1 << 20
DEFAULT_REPEAT = 9
QUICK_REPEAT = 3
#: Untimed calls of each side of a timed row before its timed runs.
WARM_UP = 3
#: Warm calls timed for each call-overhead row.
OVERHEAD_CALLS = 2000

#: Elements of the block formats' call-overhead rows: one block of OCP MX, two of NVFP4.
MX_OVERHEAD_ELEMENTS = 32

NARROW = tuple(
    map(
        resolve,
        (
            "float16",
            "bfloat16",
            "float8e4m3fn",
            "float8e4m3fnuz",
            "float8e5m2",
            "float8e5m2fnuz",
            "float8e8m0",
            "float4e2m1",
            "float6e2m3",
            "float6e3m2",
            "int4",
            "uint4",
            "int2",
            "uint2",
            "int8",
        ),
    )
)
ML_DTYPES_FLOATS = tuple(t for t in NARROW if t.name.startswith(("float8", "float6", "float4")))
TORCH_TYPES = tuple(t for t in NARROW if t.name.startswith(("float16", "bfloat16", "float8")))
NUMPY_PAIRS = tuple(
    (resolve(a), resolve(b))
    for a, b in (
        ("double", "float"),
        ("float", "double"),
        ("float", "float16"),
        ("float16", "float"),
        ("double", "int32"),
        ("double", "int64"),
        ("float", "uint64"),
        ("int64", "float"),
        ("int32", "int8"),
        ("float", "bool"),
    )
)
PACKED = tuple(map(resolve, ("int4", "float4e2m1")))
OVERHEAD_PAIRS = (
    (FLOAT, resolve("float16")),
    (FLOAT, resolve("float8e4m3fn")),
    (resolve("float8e4m3fn"), FLOAT),
    (FLOAT, resolve("int4")),
)
MEMORY_PAIRS = OVERHEAD_PAIRS
#: A user's prange loop over ml_dtypes elements against numbacast.cast: quantising, dequantising, requantising.
USER_LOOP_PAIRS = tuple(
    (resolve(a), resolve(b))
    for a, b in (
        ("float", "float8e4m3fn"),
        ("float8e4m3fn", "float"),
        ("float", "bfloat16"),
        ("bfloat16", "float"),
        ("float", "float4e2m1"),
        ("float4e2m1", "float"),
        ("bfloat16", "float8e4m3fn"),
    )
)
#: The targets of the rounding-mode rows (rounding=): a float8, FLOAT16, FLOAT4E2M1 and an integer type.
ROUNDING_TARGETS = tuple(map(resolve, ("float8e4m3fn", "float16", "float4e2m1", "int8")))


def to_and_from_float(types):
    return tuple((FLOAT, t) for t in types) + tuple((t, FLOAT) for t in types)


@dataclass(frozen=True)
class Target:
    """A row passes when ``value op limit``; ``value`` is the ratio unless ``on_value``."""

    op: str  # "<=", ">=" or ">"
    limit: float
    unit: str = ""
    on_value: bool = False  # the target bounds numbacast's own measurement, not the ratio

    def passes(self, ratio, value):
        x = value if self.on_value else ratio
        return {"<=": x <= self.limit, ">=": x >= self.limit, ">": x > self.limit}[self.op]

    def __str__(self):
        return f"{self.op} {self.limit:g}{self.unit}"


@dataclass(frozen=True)
class Group:
    """One target of the table: its pairs, what they are compared with and how."""

    key: str
    title: str
    reference: str  # the compared column's heading
    pairs: tuple
    target: Target
    ratio: str  # how the ratio is computed, for the heading
    measure: object  # measure(group, source, target, size, repeat) -> Timing
    baseline: object = None  # baseline(source, target, size) -> callable, for timed groups
    speedup: bool = False  # the ratio is theirs / ours
    unit: str = "ms"
    packed: bool = False
    reuse_output: bool = False  # numbacast writes into one out= array, as the reference reuses its buffers
    settle: bool = False  # each timed call comes right after an untimed one of the same function (see alternately)
    options: tuple = ()  # numbacast's keyword arguments, as (name, value) pairs

    def label(self, source, target):
        mode = dict(self.options).get("rounding")
        return (
            f"{source.onnx_name} -> {target.onnx_name}"
            + (" (packed)" if self.packed else "")
            + (f" ({mode})" if mode else "")
        )


@dataclass
class Row:
    pair: str
    ours: float = None
    theirs: float = None
    ratio: float = None
    result: str = ""
    spread: tuple = None  # the quartiles of the ratios of the alternated pairs of runs


class Timing(NamedTuple):
    """Numbacast's figure and the reference's (median times, or what an
    untimed row measures), and for timed rows the ratio ``ours / theirs`` of
    each alternated pair of runs."""

    ours: float
    theirs: float
    pair_ratios: tuple = ()


def seconds(function):
    """The time one call of ``function`` takes."""
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def timed(group, source, target, size, repeat):
    """Median milliseconds of numbacast's cast and of the baseline, run alternately after a warm-up."""
    if group.packed:
        ours_cast = baselines.packed_cast(source, target, size)
    else:
        into = baselines.numbacast_cast_into if group.reuse_output else baselines.numbacast_cast
        ours_cast = into(source, target, size, **dict(group.options))
    return alternately(ours_cast, group.baseline(source, target, size), repeat, group.settle)


def alternately(ours_cast, their_cast, repeat, settle=False):
    """The :class:`Timing` (milliseconds) of two casts run alternately after a warm-up.

    With ``settle``, each timed call comes right after an untimed call of the
    same function: for a reference that runs long on one thread (ml_dtypes,
    some 100 ms a cast), after which the other cores have been idle long
    enough for a parallel kernel's next call to pay for waking them (on this
    kind of virtual machine a few milliseconds, as much as the cast itself:
    docs/benchmarks.md) -- a cost of idling, not of either conversion."""
    for _ in range(WARM_UP):
        ours_cast(), their_cast()

    def timed_call(cast):
        if settle:
            cast()
        return seconds(cast)

    ours, theirs = zip(*[(timed_call(ours_cast), timed_call(their_cast)) for _ in range(repeat)])
    ratios = tuple(o / t for o, t in zip(ours, theirs))
    return Timing(1e3 * statistics.median(ours), 1e3 * statistics.median(theirs), ratios)


def mx_timed(group, source, target, size, repeat):
    """Median milliseconds of a block-format quantise (or dequantise) and of the trivial kernel."""
    return alternately(baselines.mx_cast(source, target, size), baselines.trivial_mx_cast(source, target, size), repeat)


def mx_gfloat_timed(group, source, target, size, repeat):
    """Median milliseconds of numbacast's quantise and of gfloat's per-block
    ``quantize_block`` on a share of the data, scaled up to ``size``."""
    ours_cast = baselines.mx_cast(source, target, size)
    their_cast, share = baselines.gfloat_quantize_blocks(source, target, size)
    ours, theirs, ratios = alternately(ours_cast, their_cast, max(repeat // 3, 1))
    return Timing(ours, theirs * share, tuple(r / share for r in ratios))


def mx_torchao_timed(group, source, target, size, repeat):
    """Median milliseconds of numbacast's quantise and of torchao's (``to_mx``, ``to_nvfp4``)."""
    return alternately(baselines.mx_cast(source, target, size), baselines.torchao_mx_cast(source, target, size), repeat)


def user_loop_timed(group, source, target, size, repeat):
    """Median milliseconds of a user's prange loop over ml_dtypes elements and of
    ``numbacast.cast`` of the same conversion, both into a reused output."""
    return alternately(user_loops.user_loop(source, target, size), user_loops.cast_into(source, target, size), repeat)


def warm_calls(ours_call, their_call, repeat):
    """The :class:`Timing` (microseconds) of many warm calls of each, medians."""
    calls = max(OVERHEAD_CALLS * repeat // DEFAULT_REPEAT, 100)
    ours = statistics.median(seconds(ours_call) for _ in range(calls))
    theirs = statistics.median(seconds(their_call) for _ in range(calls))
    return Timing(1e6 * ours, 1e6 * theirs)


def overhead(group, source, target, size, repeat):
    """Median microseconds of a warm numbacast cast and NumPy ``astype`` of one element."""
    x = baselines.sample(source, 1)
    return warm_calls(lambda: cast(x, target), lambda: x.astype(target.storage), repeat)


def mx_overhead(group, source, target, size, repeat):
    """Median microseconds of a warm block-format quantise (or dequantise) of
    one MX block and of ``numbacast.cast`` of the same elements to (or from)
    the element type."""
    ours = baselines.mx_cast(source, target, MX_OVERHEAD_ELEMENTS)
    return warm_calls(ours, baselines.mx_element_cast(source, target, MX_OVERHEAD_ELEMENTS), repeat)


def peak_memory(group, source, target, size, repeat):
    """(MB allocated at the peak of a warm cast, MB of its output)."""
    x = baselines.sample(source, size)
    cast(x, target)
    tracemalloc.start()
    try:
        out = cast(x, target)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return Timing(peak / 1e6, out.nbytes / 1e6)


def make_groups():
    at_most = "numbacast / {}"
    speedup = "{} / numbacast"
    return (
        *(
            Group(
                key + suffix,
                f"{title}, against a trivial kernel moving the same bytes; {how}",
                "trivial",
                pairs,
                Target("<=", limit),
                at_most,
                timed,
                baseline,
                reuse_output=not suffix,
            )
            for suffix, how, limit, baseline in (
                ("", "both into a reused output", 1.3, baselines.trivial_cast_into),
                ("-fresh", "both allocate a fresh output", 1.5, baselines.trivial_cast),
            )
            for key, title, pairs in (
                ("to-narrow", "FLOAT to narrow types", tuple((FLOAT, t) for t in NARROW)),
                ("from-narrow", "narrow types to FLOAT", tuple((t, FLOAT) for t in NARROW)),
            )
        ),
        Group(
            "packed",
            "FLOAT to packed bytes and back, against a trivial kernel (2 float32 <-> 1 byte)",
            "trivial",
            to_and_from_float(PACKED),
            Target("<=", 1.5),
            at_most,
            timed,
            baselines.trivial_packed_cast,
            packed=True,
        ),
        *(
            Group(
                f"rounding-{mode}",
                f"FLOAT to narrow types rounding {mode.replace('_', ' ')}, against the trivial kernel",
                "trivial",
                tuple((FLOAT, t) for t in ROUNDING_TARGETS),
                Target("<=", 1.3),
                at_most,
                timed,
                baselines.trivial_cast_into,
                reuse_output=True,
                options=(("rounding", mode),),
            )
            for mode in ("toward_zero", "toward_positive", "toward_negative", "nearest_away")
        ),
        Group(
            "stochastic",
            "FLOAT to narrow types, stochastic rounding (seeded), against the trivial kernel",
            "trivial",
            tuple((FLOAT, t) for t in ROUNDING_TARGETS),
            Target("<=", 2),
            at_most,
            timed,
            baselines.trivial_cast_into,
            reuse_output=True,
            options=(("rounding", "stochastic"), ("seed", 0)),
        ),
        Group(
            "gfloat",
            "FLOAT to float8, stochastic rounding, against gfloat's round_ndarray and encode_ndarray",
            "gfloat",
            ((FLOAT, resolve("float8e4m3fn")),),
            Target(">=", 100),
            speedup,
            timed,
            baselines.gfloat_stochastic_cast,
            speedup=True,
            options=(("rounding", "stochastic"), ("seed", 0)),
        ),
        Group(
            "mx",
            "FLOAT to block formats (numbacast.mx.quantize) and back (dequantize), against the trivial kernel "
            "reading float32 and writing one byte per element (or back; reading twice, the first time for the "
            "largest, where NVFP4 takes its tensor scale from the data); both allocate a fresh output",
            "trivial",
            baselines.MX_PAIRS,
            Target("<=", 1.5),
            at_most,
            mx_timed,
        ),
        Group(
            "mx-gfloat",
            "FLOAT to MX formats, against gfloat's quantize_block per block of 32 (run on 1/512 of the data, "
            "its time scaled up)",
            "gfloat",
            tuple((FLOAT, f) for f in baselines.MX_FORMATS if f.name != "nvfp4"),
            Target(">=", 100),
            speedup,
            mx_gfloat_timed,
            speedup=True,
        ),
        Group(
            "mx-torchao",
            "FLOAT to block formats, against torchao's to_mx and NVFP4Tensor.to_nvfp4 (eager, CPU; where torchao "
            "is installed: the compare extra)",
            "torchao",
            tuple((FLOAT, f) for f in baselines.MX_FORMATS),
            Target(">", 1),
            speedup,
            mx_torchao_timed,
            speedup=True,
        ),
        Group(
            "ml_dtypes",
            "FLOAT to float8, float6 and float4 types, against ml_dtypes astype (encodes; the decodes are "
            "bounded by faulting in their fresh output, see from-narrow-fresh)",
            "ml_dtypes",
            tuple((FLOAT, t) for t in ML_DTYPES_FLOATS),
            Target(">=", 20),
            speedup,
            timed,
            baselines.astype_cast,
            speedup=True,
            settle=True,
        ),
        Group(
            "torch",
            "FLOAT16, BFLOAT16 and float8, against PyTorch CPU tensor.to",
            "torch",
            to_and_from_float(TORCH_TYPES),
            Target(">", 1),
            speedup,
            timed,
            baselines.torch_cast,
            speedup=True,
        ),
        Group(
            "onnxruntime",
            "against onnxruntime's CPU Cast (a one-node model; both reuse their output buffer)",
            "onnxrt",
            unique(to_and_from_float(NARROW) + NUMPY_PAIRS),
            Target(">", 1),
            speedup,
            timed,
            baselines.onnxruntime_cast,
            speedup=True,
            reuse_output=True,
        ),
        Group(
            "numpy",
            "standard NumPy pairs, against NumPy astype",
            "numpy",
            NUMPY_PAIRS,
            Target("<=", 1),
            at_most,
            timed,
            baselines.astype_cast,
        ),
        Group(
            "user-loop",
            "a user's @njit(parallel=True) loop reading and storing ml_dtypes elements (computing in float32), "
            "against numbacast.cast of the same conversion; both into a reused output",
            "cast",
            USER_LOOP_PAIRS,
            Target("<=", 1.5),
            "user loop / {}",
            user_loop_timed,
        ),
        Group(
            "overhead",
            "call overhead, warm, 1-element array (target on numbacast's time)",
            "numpy",
            OVERHEAD_PAIRS,
            Target("<=", 10, " us", on_value=True),
            at_most,
            overhead,
            unit="us",
        ),
        Group(
            "mx-overhead",
            f"block formats' call overhead, warm, {MX_OVERHEAD_ELEMENTS} elements, against numbacast.cast of "
            "them to (or from) the element type (target on numbacast's time: a quantisation writes two arrays, "
            "and NVFP4 reads its input twice for its tensor scale)",
            "cast",
            baselines.MX_PAIRS,
            Target("<=", 20, " us", on_value=True),
            at_most,
            mx_overhead,
            unit="us",
        ),
        Group(
            "memory",
            "peak memory of a cast beyond its input, over the output's size",
            "output",
            MEMORY_PAIRS,
            Target("<=", 1.01),
            "peak / output",
            peak_memory,
            unit="MB",
        ),
    )


def unique(pairs):
    return tuple(dict.fromkeys(pairs))


GROUPS = make_groups()
GROUP_KEYS = tuple(g.key for g in GROUPS)


def measure_row(group, source, target, size, repeat):
    row = Row(group.label(source, target))
    try:
        row.ours, row.theirs, pair_ratios = group.measure(group, source, target, size, repeat)
    except baselines.Unavailable as reason:
        row.result = f"n/a ({reason})"
        return row
    row.ratio = row.theirs / row.ours if group.speedup else row.ours / row.theirs
    if pair_ratios:
        row.spread = middle_half([1 / r if group.speedup else r for r in pair_ratios])
    row.result = "PASS" if group.target.passes(row.ratio, row.ours) else "short"
    return row


def middle_half(values):
    """The lower and upper quartiles of ``values`` (both the value, for one)."""
    if len(values) == 1:
        return values[0], values[0]
    low, _, high = statistics.quantiles(values, n=4, method="inclusive")
    return low, high


COLUMNS = (
    ("pair", 32),
    ("numbacast", 11),
    ("reference", 11),
    ("ratio", 8),
    ("spread", 11),
    ("target", 9),
    ("result", 0),
)


def format_line(cells):
    return "  ".join(
        cell.ljust(width) if i in (0, 6) else cell.rjust(width)
        for i, (cell, (_, width)) in enumerate(zip(cells, COLUMNS))
    ).rstrip()


def format_spread(spread):
    """The quartiles of a row's pair ratios, as ``low-high`` (``-`` without)."""
    return "-" if spread is None else f"{spread[0]:.3g}-{spread[1]:.3g}"


def format_row(group, row):
    def amount(value):
        return "-" if value is None else f"{value:.3g} {group.unit}" if value < 100 else f"{value:.0f} {group.unit}"

    ratio = "-" if row.ratio is None else f"{row.ratio:.3g}"
    cells = [row.pair, amount(row.ours), amount(row.theirs), ratio, format_spread(row.spread), str(group.target)]
    return format_line([*cells, row.result])


def group_heading(group):
    ratio = group.ratio.format(group.reference)
    return f"{group.title}\n  ratio = {ratio}; reference = {group.reference}\n" + format_line(
        [name for name, _ in COLUMNS]
    )


def selected_pairs(group, wanted):
    """The group's pairs that ``wanted`` (from :func:`parse_pairs`) selects."""
    if not wanted:
        return group.pairs
    return tuple(p for p in group.pairs if any(w == p or (len(w) == 1 and w[0] in p) for w in wanted))


def parse_pairs(text):
    """``"float:int4,bfloat16"`` -> ((FLOAT, INT4), (BFLOAT16,)): pairs (``A:B`` or
    ``A->B``) or single types."""
    return tuple(tuple(resolve(name) for name in re.split("->|:", item)) for item in text.split(",") if text)


def parse_size(text):
    """``"16M"``, ``"4k"`` or ``"4096"`` -> a number of elements."""
    scale = {"k": 1 << 10, "m": 1 << 20}.get(text[-1:].lower(), 1)
    try:
        size = int(text[:-1] if scale > 1 else text) * scale
    except ValueError:
        size = 0
    if size < 2 or size % 2:
        raise argparse.ArgumentTypeError(
            f"--size must be an even number of elements >= 2 like 4096 or 16M, not {text!r}"
        )
    return size


def parser():
    p = argparse.ArgumentParser(prog="python -m numbacast bench", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--size",
        type=parse_size,
        help=f"elements per timed cast (default {DEFAULT_SIZE >> 20}M; "
        f"{QUICK_SIZE >> 20}M with --quick); suffixes k and M",
    )
    p.add_argument(
        "--repeat",
        type=int,
        help=f"timed runs per cast, after a warm-up; the median is kept "
        f"(default {DEFAULT_REPEAT}; {QUICK_REPEAT} with --quick)",
    )
    p.add_argument(
        "--threads",
        type=int,
        help="threads for numbacast (numba.set_num_threads) and for PyTorch and onnxruntime (default: Numba's)",
    )
    p.add_argument(
        "--pairs",
        default="",
        help="comma-separated pairs 'A:B' (or 'A->B', quoted) or types 'A' "
        "(ONNX names): only the rows of those pairs or involving those types",
    )
    p.add_argument("--groups", default="", help=f"comma-separated groups to run, of: {', '.join(GROUP_KEYS)}")
    p.add_argument("--plot", metavar="FILE.png", help="also draw the ratios to this image (needs matplotlib)")
    p.add_argument(
        "--json",
        metavar="FILE.json",
        help="also write the results and the machine's description to this file (the docs render it)",
    )
    p.add_argument(
        "--rerun-into",
        metavar="FILE.json",
        help="put this run's rows into the record FILE.json (written by --json on the same CPU target and size) "
        "in place of the same pairs' rows, and note the re-run in its 'reruns'",
    )
    p.add_argument("--quick", action="store_true", help="a smaller, shorter run to check that everything works")
    p.add_argument(
        "--cpu",
        metavar="NAME",
        help="run with kernels compiled for the CPU NAME (LLVM's name: haswell for AVX2, skylake-avx512, znver3, "
        "...): in a child process with NUMBA_CPU_NAME=NAME and NUMBA_CPU_FEATURES empty (that CPU's own features)",
    )
    return p


#: A child's check that Numba compiles for the CPU it is given (LLVM only
#: warns of a name it does not know, then aborts the process on compiling).
CPU_PROBE = "import numba; assert numba.njit(lambda v: v + 1)(1) == 2"


def run_for_cpu(name, argv, parser):
    """The bench in a child process whose kernels Numba compiles for the CPU
    ``name``, once a first child has compiled a small function for it (else
    ``parser``'s error with LLVM's words).  ``NUMBA_CPU_FEATURES`` must be
    set and empty: unset, Numba adds the host's features (AVX-512 on such a
    host) to any CPU name."""
    import subprocess

    env = dict(os.environ, NUMBA_CPU_NAME=name, NUMBA_CPU_FEATURES="")
    probe = subprocess.run([sys.executable, "-c", CPU_PROBE], env=env, capture_output=True, text=True)
    if probe.returncode != 0:
        said = "; ".join(
            dict.fromkeys(line.strip() for line in probe.stderr.splitlines() if "LLVM" in line or "processor" in line)
        )
        parser.error(
            f"--cpu: Numba cannot compile for the CPU {name!r} ({said or f'exit status {probe.returncode}'}); "
            "LLVM names x86-64 CPUs such as haswell (AVX2), skylake-avx512, znver3, znver4"
        )
    args = list(argv) if argv is not None else sys.argv[1:]
    return subprocess.run([sys.executable, "-m", "numbacast", "bench", *args], env=env).returncode


def targeted_cpu():
    """(name, features) that Numba compiles kernels for in this process."""
    from llvmlite import binding

    if config.CPU_NAME:
        features = config.CPU_FEATURES
        return config.CPU_NAME, features if features else f"those of {config.CPU_NAME}"
    host = binding.get_host_cpu_features().flatten().split(",")
    return binding.get_host_cpu_name(), config.CPU_FEATURES or ",".join(sorted(f[1:] for f in host if f[:1] == "+"))


def main(argv=None):
    """Run the benchmark; print the table; return the exit status."""
    p = parser()
    args = p.parse_args(argv)
    if args.cpu and (config.CPU_NAME != args.cpu or config.CPU_FEATURES != ""):
        return run_for_cpu(args.cpu, argv, p)
    size = args.size or (QUICK_SIZE if args.quick else DEFAULT_SIZE)
    repeat = (QUICK_REPEAT if args.quick else DEFAULT_REPEAT) if args.repeat is None else args.repeat
    if repeat < 1:
        p.error(f"--repeat must be at least 1, not {repeat}")
    if args.threads is not None:
        if not 1 <= args.threads <= config.NUMBA_NUM_THREADS:
            p.error(f"--threads must be from 1 to {config.NUMBA_NUM_THREADS}, not {args.threads}")
        set_num_threads(args.threads)
    try:
        wanted = parse_pairs(args.pairs)
    except (ValueError, TypeError) as error:
        p.error(f"--pairs: {error}")
    keys = [k.strip() for k in args.groups.split(",") if k.strip()] or GROUP_KEYS
    unknown = [k for k in keys if k not in GROUP_KEYS]
    if unknown:
        p.error(f"--groups: unknown group {unknown[0]!r}; groups are {', '.join(GROUP_KEYS)}")
    if args.plot:
        from .plot import check_plotting

        check_plotting(p)
    record = None
    if args.rerun_into:
        try:
            record = record_to_rerun(args.rerun_into, size)
        except (OSError, ValueError) as error:
            p.error(f"--rerun-into: {error}")
    heading = describe_run(size, repeat)
    print(heading)
    results = []
    for group in GROUPS:
        pairs = selected_pairs(group, wanted)
        if group.key not in keys or not pairs:
            continue
        print("\n" + group_heading(group), flush=True)
        rows = []
        for source, target in pairs:
            rows.append(measure_row(group, source, target, size, repeat))
            print(format_row(group, rows[-1]), flush=True)
        results.append((group, rows))
    print("\n" + summary(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results_json(results, size, repeat, argv_for_record(argv)), f, indent=1)
            f.write("\n")
        print(f"results written to {args.json}")
    if record is not None:
        with open(args.rerun_into, "w", encoding="utf-8") as f:
            json.dump(with_rerun(record, results_json(results, size, repeat, argv_for_record(argv))), f, indent=1)
            f.write("\n")
        print(f"rows replaced in {args.rerun_into}")
    if args.plot:
        from .plot import plot

        plot(results, args.plot, heading)
        print(f"plot written to {args.plot}")
    return 0


def describe_run(size, repeat):
    name, features = targeted_cpu()
    return (
        f"numbacast bench: {size:,} elements per cast, {get_num_threads()} Numba threads, "
        f"median of {repeat} runs after a warm-up\n"
        f"kernels compiled for CPU {name} (features: {features}); host CPU: {cpu_model()}\n" + versions()
    )


#: The libraries whose versions a run reports, where installed.
LIBRARIES = ("numbacast", "numba", "llvmlite", "numpy", "ml_dtypes", "torch", "onnxruntime")


def library_versions():
    """{name: version} of numbacast and of the libraries it is compared with, where installed."""
    found = {}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


def versions():
    """The versions of numbacast and of the libraries it is compared with, where installed."""
    return ", ".join(f"{name} {version}" for name, version in library_versions().items() if name != "llvmlite")


def cpu_model():
    """The CPU's model name: from /proc/cpuinfo where there is one, else what :mod:`platform` says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def machine():
    """What the results were measured on: the CPU, what Numba compiles for, the system and Python."""
    name, features = targeted_cpu()
    return {
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "numba_cpu_name": name,
        "numba_cpu_features": features,
        "numba_threads": get_num_threads(),
        "numba_threading_layer": threading_layer_name(),
        "system": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": platform.python_version(),
    }


def threading_layer_name():
    """The threading layer Numba's parallel kernels ran on (the one configured, before any ran)."""
    try:
        return threading_layer()
    except ValueError:
        return config.THREADING_LAYER


#: The options that name a file of this machine, which a record leaves out.
_FILE_OPTIONS = ("--json", "--plot", "--rerun-into")


def argv_for_record(argv):
    """The command-line arguments of this run as a record shows them: without file names."""
    args = list(argv) if argv is not None else sys.argv[1:]
    shown = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in _FILE_OPTIONS:
            skip = True
            continue
        if arg.startswith(tuple(option + "=" for option in _FILE_OPTIONS)):
            continue
        shown.append(arg)
    return shown


def significant(value, digits=4):
    """``value`` to ``digits`` significant digits (None stays None): the record keeps no timing noise."""
    return None if value is None else float(f"{value:.{digits}g}")


def results_json(results, size, repeat, argv=()):
    """The run as a JSON-ready dict: settings, machine, versions, and each group's rows.

    A row holds its pair, numbacast's and the reference's figures (in the
    group's unit, None where the row could not run), the ratio (all three to
    four significant digits), the spread (the quartiles of the ratios of the
    alternated pairs of runs, None for untimed rows) and the result ("PASS",
    "short" or "n/a (why)")."""
    return {
        "format": 1,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(["python -m numbacast bench", *argv]),
        "size": size,
        "repeat": repeat,
        "warm_up": WARM_UP,
        "machine": machine(),
        "versions": library_versions(),
        "groups": [
            {
                "key": group.key,
                "title": group.title,
                "reference": group.reference,
                "ratio": group.ratio.format(group.reference),
                "target": str(group.target),
                "unit": group.unit,
                "speedup": group.speedup,
                "rows": [
                    {
                        "pair": row.pair,
                        "numbacast": significant(row.ours),
                        "reference": significant(row.theirs),
                        "ratio": significant(row.ratio),
                        "spread": None if row.spread is None else [significant(q) for q in row.spread],
                        "result": row.result,
                    }
                    for row in rows
                ],
            }
            for group, rows in results
        ],
        "summary": outcome_counts(row.result for _, rows in results for row in rows),
    }


def record_to_rerun(path, size):
    """The record at ``path`` (written by ``--json``), checked to be of runs
    like this one: the same elements per cast and the same CPU target."""
    with open(path, encoding="utf-8") as f:
        try:
            record = json.load(f)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not JSON ({error})") from None
    if not isinstance(record, dict) or record.get("format") != 1 or "groups" not in record:
        raise ValueError(f"{path} is not a record written by --json")
    cpu = list(targeted_cpu())
    measured_on = record.get("machine") if isinstance(record.get("machine"), dict) else {}
    recorded = [measured_on.get("numba_cpu_name"), measured_on.get("numba_cpu_features")]
    if record.get("size") != size or recorded != cpu:
        raise ValueError(
            f"{path} holds runs of {record.get('size')} elements for the CPU target {recorded[0]}; "
            f"this run is of {size} elements for {cpu[0]}"
        )
    return record


def with_rerun(record, rerun):
    """``record`` with the rows of the run ``rerun`` (both as
    :func:`results_json` makes them) in place of the same groups' rows of the
    same pairs (rows and groups it lacks added at the end), ``rerun`` noted in
    its ``reruns`` (the groups, when, the command) and its summary counted
    again: a re-run replaces what it ran, whatever it gives."""
    groups = {group["key"]: group for group in record["groups"]}
    for group in rerun["groups"]:
        if group["key"] not in groups:
            groups[group["key"]] = group
            record["groups"].append(group)
            continue
        rows = groups[group["key"]]["rows"]
        at = {row["pair"]: i for i, row in enumerate(rows)}
        for row in group["rows"]:
            if row["pair"] in at:
                rows[at[row["pair"]]] = row
            else:
                rows.append(row)
    record.setdefault("reruns", []).append(
        {
            "groups": [group["key"] for group in rerun["groups"]],
            "created": rerun["created"],
            "command": rerun["command"],
        }
    )
    record["summary"] = outcome_counts(row["result"] for group in record["groups"] for row in group["rows"])
    return record


def outcome_counts(results):
    """How many of the rows' ``results`` ("PASS", "short", "n/a (why)") are of each kind, and of all."""
    outcomes = [result.split(" ")[0] for result in results]
    counts = {kind: outcomes.count(kind) for kind in ("PASS", "short", "n/a")}
    return {**counts, "rows": len(outcomes)}


def summary(results):
    counts = outcome_counts(row.result for _, rows in results for row in rows)
    return f"{counts['PASS']} PASS, {counts['short']} short, {counts['n/a']} n/a of {counts['rows']} rows"
