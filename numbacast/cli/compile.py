"""``python -m numbacast compile``: fill the disk cache ahead of time.

Every conversion the command names -- a source type, a target type and its
options -- is cast once on a small array and once on an array of
:data:`~numbacast.engine.kernels.PARALLEL_MIN` elements, in worker processes
(one per core by default), so that both of its loops are compiled and saved
to the disk cache (:mod:`numbacast.engine.cache`).  A later process loads them
instead of compiling: put the command in a Docker image build or a CI warm-up
step, with the ``NUMBA_CACHE_DIR`` (and the CPU, see :envvar:`NUMBA_CPU_NAME`)
the casts will run with.

Numba writes each cache file to a temporary name and renames it, so readers
never see a partial file and the command may run while other processes use
the cache.  Two processes saving kernels of one function at the same moment
may each rewrite its index, one losing the other's entry; that kernel is then
compiled again on its next use.  So when several workers ran, one last worker
loads every conversion again and saves any that went missing.
"""

import concurrent.futures
import itertools
import multiprocessing
import os
import time
from dataclasses import dataclass

from ..engine.rounding import ROUND_MODES
from ..formats.registry import FLOAT8E8M0, TYPES, resolve


@dataclass(frozen=True)
class Job:
    """One conversion to compile: ONNX type names and options."""

    source: str
    target: str
    saturate: bool = True
    round_mode: str = "up"
    inf_to_nan: bool = False

    def __str__(self):
        options = [] if self.saturate else ["saturate=0"]
        options += [f"round_mode={self.round_mode}"] if self.round_mode != "up" else []
        options += ["inf_to_nan"] if self.inf_to_nan else []
        return f"{self.source} -> {self.target}" + (f" ({', '.join(options)})" if options else "")


def parse_types(text, option):
    """The ONNX types named in a comma-separated list (names in any case, or
    ids) given to ``option``; ValueError when it names none."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise ValueError(f"compile: {option} names no type ({text!r}); give type names or ids, comma-separated")
    return [resolve(int(name) if name.isdigit() else name) for name in names]


def option_variants(target):
    """(saturate, round_mode, inf_to_nan) of every conversion into ``target``
    that compiles to a kernel of its own (see ``Conversion.make``)."""
    from ..engine.conversion import SATURATING
    from ..formats import description

    if target.is_string:
        return [(True, "up", False)]
    saturates = (True, False) if target in SATURATING else (True,)
    modes = ROUND_MODES if target is FLOAT8E8M0 else ("up",)
    infinity = (False, True) if target.is_float and target.format.nan == description.NAN_NEGATIVE_ZERO else (False,)
    return list(itertools.product(saturates, modes, infinity))


def jobs_for(sources, targets):
    """Every conversion from a type of ``sources`` to one of ``targets``, with every option."""
    jobs = []
    for source, target in itertools.product(sources, targets):
        if source.is_string and target.is_string:
            continue
        for saturate, round_mode, inf_to_nan in option_variants(target):
            if inf_to_nan and (source.is_string or not saturate):
                continue  # a text cast has no such option; without saturate, infinity already becomes NaN
            jobs.append(Job(source.onnx_name, target.onnx_name, saturate, round_mode, inf_to_nan))
    return jobs


def _kernels():
    """The cached dispatchers a cast may compile."""
    from .. import packing
    from ..engine import kernels
    from ..text import parsing, printing

    return (
        kernels.serial_kernel,
        kernels.parallel_kernel,
        kernels.streaming_kernel,
        *packing.repack_kernel,
        *packing.pack_bytes_kernel,
        *parsing.QUICK_FLOATS,
        *parsing.READ_FLOATS,
        *parsing.EXACT_FLOATS,
        *parsing.QUICK_INTEGERS,
        *parsing.READ_INTEGERS,
        *printing.float_decimal_kernel,
        *printing.integer_decimal_kernel,
        *printing.text_kernel,
    )


def _counts():
    hits = misses = 0
    for kernel in _kernels():
        hits += sum(kernel.stats.cache_hits.values())
        misses += sum(kernel.stats.cache_misses.values())
    return hits, misses


#: 1 + 2**-53, halfway between two float64: a text only the exact reader settles.
HALFWAY = "1.00000000000000011102230246251565404236316680908203125"


def sample(t, size):
    """An array of ``size`` elements of the type ``t``, as a caller would pass it."""
    import numpy as np

    if t.is_string:
        return np.full(size, HALFWAY)  # beyond the quick pass and the fast significand: every text reader
    return np.zeros(size, t.storage)


def run_job(job):
    """Cast as ``job`` says on a small and on a large array (and on one whose
    output streams, where the conversion's does); return
    ``(job, seconds, kernels loaded, kernels compiled)``."""
    from ..engine.arrays import run
    from ..engine.conversion import Conversion
    from ..engine.kernels import PARALLEL_MIN
    from ..engine.streaming import STREAM_MIN_BYTES
    from ..packing import cast_packed

    start = time.perf_counter()
    before = _counts()
    source, target = resolve(job.source), resolve(job.target)
    if source.is_string or target.is_string:
        import numbacast

        for size in (1, PARALLEL_MIN):
            numbacast.cast(sample(source, size), target, saturate=job.saturate, round_mode=job.round_mode)
    else:
        conversion = Conversion.make(source, target, job.saturate, job.round_mode, job.inf_to_nan)
        for size in (1, PARALLEL_MIN):
            run(conversion, sample(source, size))
            if target.bits < 8 and not job.inf_to_nan:
                cast_packed(sample(source, size), target, job.saturate, job.round_mode, None)
        if conversion.streams_output:  # and a large output, which the Launcher streams unless by a table
            run(conversion, sample(source, -(-STREAM_MIN_BYTES // target.storage.itemsize)))
    after = _counts()
    return job, time.perf_counter() - start, after[0] - before[0], after[1] - before[1]


def cache_folder():
    """Where this process saves compiled kernels."""
    from ..engine.kernels import serial_kernel

    return getattr(serial_kernel._cache, "_cache_path", None) or "(nowhere: kernels stay in memory)"


@dataclass
class Summary:
    jobs: int = 0
    loaded: int = 0
    compiled: int = 0
    repaired: int = 0
    seconds: float = 0.0
    workers: int = 0
    folder: str = ""

    def __str__(self):
        return (
            f"{self.jobs} conversions in {self.seconds:.1f} s on {self.workers} processes: "
            f"{self.compiled} kernels compiled, {self.loaded} already cached"
            + (f", {self.repaired} saved again" if self.repaired else "")
            + f"\ncache: {self.folder}"
        )


def compile_all(jobs, workers=None, bar=None):
    """Run every job in ``workers`` processes (default: one per core), showing
    progress on ``bar`` (a :class:`~numbacast.cli.ProgressBar`, closed here);
    return a :class:`Summary`."""
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs) or 1))
    summary = Summary(jobs=len(jobs), workers=workers)
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")  # fresh processes: nothing compiled in memory
    try:
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
            futures = [pool.submit(run_job, job) for job in jobs]
            for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
                _, _, loaded, compiled = future.result()
                summary.loaded += loaded
                summary.compiled += compiled
                if bar:
                    bar.show(done / len(jobs))
        if bar:
            bar.close()
            bar = None
        with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
            if workers > 1:  # entries lost between workers saving at once are saved again
                summary.repaired = pool.submit(_repair, jobs).result()
            summary.folder = pool.submit(cache_folder).result()
    finally:
        if bar:
            bar.close()
    summary.seconds = time.perf_counter() - start
    return summary


def _repair(jobs):
    return sum(run_job(job)[3] for job in jobs)


def main(args, progress_bar=None):
    """``compile``: the conversions named by ``args`` (``--to``, ``--from``,
    ``--all``); ``progress_bar(label)`` makes the progress bar, if any."""
    numeric = [t for t in TYPES if not t.is_string]
    everything = list(TYPES)
    if args.jobs is not None and args.jobs < 1:
        raise ValueError(f"compile: --jobs takes a number of processes, 1 or more, not {args.jobs}")
    if args.all:
        if args.to is not None or args.source is not None:
            raise ValueError("compile: --all compiles every pair of types; give it without --to and --from")
        sources = targets = everything
    else:
        if args.to is None and args.source is None:
            raise ValueError("compile: name the conversions: --to TYPES, --from TYPES, or --all")
        targets = parse_types(args.to, "--to") if args.to is not None else numeric
        sources = parse_types(args.source, "--from") if args.source is not None else numeric
    jobs = jobs_for(sources, targets)
    if not jobs:
        raise ValueError("compile: no conversion between the types named")
    bar = progress_bar(f"compiling {len(jobs)} conversions") if progress_bar else None
    summary = compile_all(jobs, args.jobs, bar)
    print(summary)
    return 0
