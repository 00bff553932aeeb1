"""Which conversions should look their results up in a table, which compute them.

``python -m benchmarks.harness.table_or_compute [--size N] [--repeat R] [--json FILE]``
times every conversion from a source of at most 16 bits to a set of
representative targets both ways -- through the table of all source codes and
computed element by element -- and prints the ratio table/compute (below 1:
the table is faster).  The rule in :func:`numbacast.engine.arrays.uses_table`
was chosen from these figures; the docs' internals page shows them.
"""

import argparse
import json
import statistics
import time

import numpy as np

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
from numbacast.engine.kernels import NO_TABLE, launch

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
    ways = {
        "table": lambda: launch(codes, dst, None, lookup),
        "compute": lambda: launch(codes.view(kernel_dtype(source)), dst, conversion, NO_TABLE),
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
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    rows = []
    print(f"table / compute time, {args.size:,} elements, median of {args.repeat} (below 1: the table is faster)")
    print("source \\ target".ljust(16) + "".join(t.name[:12].rjust(13) for t in TARGETS))
    for source in SOURCES:
        cells = []
        for target in TARGETS:
            if source is target:
                cells.append("-".rjust(13))
                continue
            by_table, by_compute = timings(source, target, args.size, args.repeat)
            rows.append(dict(source=source.name, target=target.name, table=by_table, compute=by_compute))
            cells.append(f"{by_table / by_compute:13.2f}")
        print(source.name.ljust(16) + "".join(cells), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(size=args.size, repeat=args.repeat, rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
