"""Which conversions should look their results up in a table, which compute them.

``python -m benchmarks.harness.table_or_compute [--size N] [--repeat R] [--markdown FILE]``
times every conversion from a source of at most 16 bits to a set of
representative targets both ways -- through the table of all source codes and
computed element by element -- and prints the ratio table/compute (below 1:
the table is faster); ``--markdown`` also writes that table as a Markdown
file, which the docs' internals page includes.  The rule in :func:`numbacast.engine.arrays.uses_table`
was chosen from these figures; the docs' internals page shows them.
"""

import argparse
import statistics
import time

import numpy as np
from numba import get_num_threads

from numbacast import (
    BFLOAT16,
    BOOL,
    DOUBLE,
    FLOAT,
    FLOAT4E2M1,
    FLOAT8E4M3FN,
    FLOAT8E5M2,
    FLOAT8E8M0,
    FLOAT16,
    INT4,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT8,
)
from numbacast.engine.arrays import table
from numbacast.engine.conversion import Conversion, kernel_dtype
from numbacast.engine.kernels import NO_TABLE, Launcher

from .bench import cpu_model

SOURCES = (UINT8, INT16, BOOL, INT4, FLOAT16, BFLOAT16, FLOAT8E4M3FN, FLOAT8E5M2, FLOAT4E2M1, FLOAT8E8M0)
TARGETS = (
    FLOAT,
    DOUBLE,
    UINT8,
    INT8,
    INT32,
    INT64,
    BOOL,
    FLOAT16,
    BFLOAT16,
    FLOAT8E4M3FN,
    FLOAT8E8M0,
    FLOAT4E2M1,
    INT4,
)


def codes_of(source, size, seed=0):
    """``size`` random codes of ``source`` (every code equally likely)."""
    rng = np.random.default_rng(seed)
    itemsize = source.storage.itemsize
    codes = rng.integers(0, 1 << (8 * itemsize), size, dtype=np.uint64).astype(f"u{itemsize}")
    if source.bits < 8:
        codes &= (1 << source.bits) - 1
    return codes


def timings(source, target, size, repeat):
    """(table, compute) medians in seconds of one conversion of ``size`` elements."""
    conversion = Conversion.make(source, target)
    codes = codes_of(source, size)
    dst = np.empty(size, kernel_dtype(target))
    lookup = table(conversion)
    by_table, computing = Launcher(None, lookup), Launcher(conversion, NO_TABLE)
    ways = {
        "table": lambda: by_table(codes, dst),
        "compute": lambda: computing(codes.view(kernel_dtype(source)), dst),
    }
    results = {name: [] for name in ways}
    for way in ways.values():
        way()
    for _ in range(repeat):
        for name, way in ways.items():  # interleaved, so a slow spell hits both
            start = time.perf_counter()
            way()
            results[name].append(time.perf_counter() - start)
    return statistics.median(results["table"]), statistics.median(results["compute"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1 << 22)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--markdown", metavar="FILE", help="write the table as Markdown to FILE")
    args = parser.parse_args(argv)
    title = f"table / compute time, {args.size:,} elements, median of {args.repeat} (below 1: the table is faster)"
    print(title)
    print("source \\ target".ljust(16) + "".join(t.name[:12].rjust(13) for t in TARGETS))
    table_rows = []
    for source in SOURCES:
        cells = []
        for target in TARGETS:
            if source is target:
                cells.append("-")
                continue
            by_table, by_compute = timings(source, target, args.size, args.repeat)
            cells.append(f"{by_table / by_compute:.2f}")
        table_rows.append(cells)
        print(source.name.ljust(16) + "".join(cell.rjust(13) for cell in cells), flush=True)
    if args.markdown:
        lines = [
            f"{title}; {cpu_model()}, {get_num_threads()} Numba threads.",
            "",
            "| source \\ target | " + " | ".join(t.name for t in TARGETS) + " |",
            "|---|" + "---:|" * len(TARGETS),
        ]
        lines += [f"| {s.name} | " + " | ".join(cells) + " |" for s, cells in zip(SOURCES, table_rows)]
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
