"""The one table-or-compute rule (``numbacast.engine.arrays.uses_table``):
which conversions take which path, and that both paths give the same bits."""

import numpy as np
import pytest

import numbacast as nc
from numbacast.engine.arrays import table, uses_table
from numbacast.engine.conversion import Conversion, kernel_dtype
from numbacast.engine.kernels import NO_TABLE, Launcher

SMALL = [t for t in nc.TYPES if t.storage.itemsize <= 2]


@pytest.mark.parametrize("source", SMALL, ids=str)
def test_the_rule_by_category(source):
    for target in nc.TYPES:
        expected = target not in (nc.FLOAT, nc.DOUBLE) and not (
            (source.is_integer or source.is_bool) and (target.is_integer or target.is_bool)
        )
        assert uses_table(Conversion.make(source, target)) == expected, (source, target)


def test_wide_sources_always_compute():
    for source in (nc.FLOAT, nc.DOUBLE, nc.INT32, nc.INT64, nc.UINT32, nc.UINT64):
        assert not any(uses_table(Conversion.make(source, target)) for target in nc.TYPES)


PAIRS = [
    (nc.FLOAT16, nc.FLOAT8E4M3FN, dict(saturate=False)),
    (nc.BFLOAT16, nc.INT8, {}),
    (nc.FLOAT8E5M2, nc.FLOAT8E8M0, dict(round_mode="nearest")),
    (nc.UINT8, nc.FLOAT4E2M1, {}),
    (nc.INT16, nc.INT4, {}),
    (nc.BOOL, nc.FLOAT16, {}),
    (nc.FLOAT4E2M1, nc.DOUBLE, {}),
]


@pytest.mark.parametrize("source, target, options", PAIRS, ids=str)
def test_table_and_compute_give_the_same_bits(source, target, options):
    conversion = Conversion.make(source, target, **options)
    itemsize = source.storage.itemsize
    codes = np.arange(1 << (8 * itemsize), dtype=f"u{itemsize}")
    if source.bits < 8:
        codes = codes[: 1 << source.bits]
    by_table = np.empty(codes.size, kernel_dtype(target))
    Launcher(None, table(conversion))(codes, by_table)
    computed = np.empty_like(by_table)
    Launcher(conversion, NO_TABLE)(codes.view(kernel_dtype(source)), computed)
    assert by_table.view(f"u{by_table.itemsize}").tolist() == computed.view(f"u{computed.itemsize}").tolist()
