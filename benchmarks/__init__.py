"""numbacast's asv benchmarks (see asv.conf.json and docs/benchmarks.md).

The pairs are those of ``python -m numbacast bench``, named "source->target"
with ONNX type names.
"""

from numbacast import DOUBLE, FLOAT

from .harness import baselines
from .harness.bench import NARROW, NUMPY_PAIRS, OVERHEAD_PAIRS, PACKED, ROUNDING_TARGETS, to_and_from_float, unique


def named(pairs):
    """{"float->int4": (FLOAT, INT4), ...} for ``pairs`` of types."""
    return {f"{source.name}->{target.name}": (source, target) for source, target in pairs}


#: The throughput pairs: FLOAT to and from each narrow type, and the standard NumPy pairs.
THROUGHPUT_PAIRS = named(unique(to_and_from_float(NARROW) + NUMPY_PAIRS))
#: FLOAT to packed bytes and back.
PACKED_PAIRS = named(to_and_from_float(PACKED))
#: The call-overhead pairs.
OVERHEAD = named(OVERHEAD_PAIRS)
#: The rounding-mode pairs: the bench's, FLOAT to a float8, FLOAT16, FLOAT4E2M1 and INT8 (whose
#: modes round to an integer first: a stochastic one was once a call per element), and DOUBLE to
#: FLOAT, whose directed modes take the processor's conversion (they once took 2-3x its time).
ROUNDING_PAIRS = named(tuple((FLOAT, t) for t in ROUNDING_TARGETS) + ((DOUBLE, FLOAT),))
#: The block formats of the ``mx`` rows, by name (NVFP4 also with its tensor scale given).
BLOCK_FORMATS = {target.onnx_name: target for source, target in baselines.MX_PAIRS if source is FLOAT}
#: What the block-format suites time of each.
BLOCK_DIRECTIONS = ("quantize", "dequantize")


def block_format_pair(name, direction):
    """``(source, target)`` of the ``direction`` ("quantize" or "dequantize")
    of the block format ``name``; NotImplementedError (asv's skip) for the
    dequantisation of NVFP4 with its tensor scale given, the same as NVFP4's."""
    fmt = BLOCK_FORMATS[name]
    if fmt.given_tensor_scale and direction == "dequantize":
        raise NotImplementedError("the dequantisation of nvfp4 is the same with a tensor scale given")
    return (FLOAT, fmt) if direction == "quantize" else (fmt, FLOAT)
