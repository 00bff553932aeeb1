"""The asv benchmarks of the text casts (benchmarks/bench_strings.py) run and read what they time."""

import numbacast
from benchmarks.bench_strings import StringsExact


def test_the_exact_pass_benchmark_reads_its_texts():
    benchmark = StringsExact()
    benchmark.setup()
    benchmark.time_numbacast_from_string()
    values = numbacast.cast(benchmark.texts[:2], numbacast.DOUBLE)
    assert values[0] == 1.0  # 1 + 2**-53, a tie, to even
    assert values[1] == -float("1.00000000000000011102230246251565404236316680908203125" + "0000001e-3")
