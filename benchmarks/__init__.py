"""numbacast's asv benchmarks (see asv.conf.json and docs/benchmarks.md).

The pairs are those of ``python -m numbacast bench``, named "source->target"
with ONNX type names.
"""

from .harness.bench import NARROW, NUMPY_PAIRS, OVERHEAD_PAIRS, PACKED, to_and_from_float, unique


def named(pairs):
    """{"float->int4": (FLOAT, INT4), ...} for ``pairs`` of types."""
    return {f"{source.name}->{target.name}": (source, target) for source, target in pairs}


#: The throughput pairs: FLOAT to and from each narrow type, and the standard NumPy pairs.
THROUGHPUT_PAIRS = named(unique(to_and_from_float(NARROW) + NUMPY_PAIRS))
#: FLOAT to packed bytes and back.
PACKED_PAIRS = named(to_and_from_float(PACKED))
#: The call-overhead pairs.
OVERHEAD = named(OVERHEAD_PAIRS)
