"""QuantizeLinear and DequantizeLinear in numbacast's ONNX layer: each version's
types and attributes, the blocked MX layout through ``ReferenceEvaluator``,
and agreement with ONNX's own reference operators on random inputs.
Rule: docs/rules.md#rule-mx-onnx-quantize-linear"""

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from exact import Exact, decode, encode
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import numbacast.mx as mx
import numbacast.onnx as nx

F32 = np.float32


def model(op, inputs, opset, **attributes):
    """A one-node model of ``op`` taking ``inputs`` ({name: array})."""
    from onnx.helper import np_dtype_to_tensor_dtype

    node = helper.make_node(op, list(inputs), ["y"], **attributes)
    graph = helper.make_graph(
        [node],
        op,
        [helper.make_tensor_value_info(name, np_dtype_to_tensor_dtype(a.dtype), a.shape) for name, a in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.UNDEFINED, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run_both(op, inputs, opset, **attributes):
    m = model(op, inputs, opset, **attributes)
    ours = ReferenceEvaluator(m, new_ops=nx.ops).run(None, inputs)[0]
    theirs = ReferenceEvaluator(m).run(None, inputs)[0]
    return ours, theirs


def codes(a):
    return np.asarray(a).view(f"u{np.asarray(a).dtype.itemsize}")


def test_mx_blocks_dequantize_through_the_reference_evaluator():
    """The inputs of to_dequantize_linear, run as a blocked DequantizeLinear-24
    node by numbacast's operator, give numbacast.mx.dequantize's values, for
    an MX float format with FLOAT8E8M0 scales, MXINT8 and NVFP4 (float32 scales).
    Rule: docs/rules.md#rule-mx-onnx"""
    x = np.random.default_rng(0).standard_normal((4, 70)).astype(F32)
    for name in ("mxfp4_e2m1", "mxint8", "nvfp4"):
        q = mx.quantize(x, name, axis=1)
        inputs, attributes = mx.to_dequantize_linear(q)
        m = model(
            "DequantizeLinear", {"x": inputs["x"], "x_scale": inputs["x_scale"]}, 24, output_dtype=1, **attributes
        )
        (y,) = ReferenceEvaluator(m, new_ops=nx.ops).run(None, inputs)
        assert np.array_equal(y, mx.dequantize(q))


@pytest.mark.parametrize(
    "x_dtype, scale_dtype, zero, block_size, opset",
    [
        (F32, F32, np.uint8(3), 0, 19),
        (F32, F32, np.int8(-2), 2, 21),
        (F32, np.float16, ml_dtypes.int4(1), 3, 23),
        (F32, F32, ml_dtypes.float8_e4m3fn(0), 2, 23),
        (np.float16, np.float16, ml_dtypes.int2(0), 0, 25),
        (F32, F32, ml_dtypes.float6_e2m3fn(0), 2, 28),
    ],
)
def test_quantize_linear_equals_the_reference_on_random_inputs(x_dtype, scale_dtype, zero, block_size, opset):
    """Per-axis and blocked QuantizeLinear over random values (ties included)
    equals ONNX's reference operator code for code.
    Rule: docs/rules.md#rule-mx-onnx-quantize-linear"""
    rng = np.random.default_rng(1)
    x = (rng.integers(-40, 40, (3, 7)) / 4).astype(x_dtype)
    axis = 1
    n = -(-7 // block_size) if block_size else 7
    scale = (rng.integers(1, 4, (3, n) if block_size else (7,)) / 2).astype(scale_dtype)
    zero_point = np.full(scale.shape, zero, dtype=np.asarray(zero).dtype)
    attributes = dict(axis=axis, **({"block_size": block_size} if block_size else {}))
    ours, theirs = run_both(
        "QuantizeLinear", {"x": x, "y_scale": scale, "y_zero_point": zero_point}, opset, **attributes
    )
    assert ours.dtype == theirs.dtype and np.array_equal(codes(ours), codes(theirs))
    back, reference = run_both(
        "DequantizeLinear", {"x": ours, "x_scale": scale, "x_zero_point": zero_point}, opset, **attributes
    )
    assert back.dtype == reference.dtype and np.array_equal(codes(back), codes(reference))


def test_versions_refuse_what_they_do_not_have():
    """A type or an attribute the version in force lacks is a ValueError naming
    the version; shapes of scale that fit no granularity are ValueErrors.
    Rule: docs/rules.md#rule-mx-onnx-quantize-linear"""
    x = np.ones((2, 4), F32)
    cases = [
        (dict(opset=10, axis=0), "QuantizeLinear-10 .* has no axis attribute; it came with QuantizeLinear-13"),
        (dict(opset=13, saturate=0), "has no saturate attribute; it came with QuantizeLinear-19"),
        (dict(opset=19, block_size=2), "has no block_size attribute"),
        (dict(opset=21, precision=1), "has no precision attribute"),
        (dict(opset=21, output_dtype=TensorProto.FLOAT4E2M1), "does not take FLOAT4E2M1 as its output_dtype"),
        (dict(opset=25, output_dtype=TensorProto.FLOAT6E2M3), "does not take FLOAT6E2M3 as its output_dtype"),
        (dict(opset=24, output_dtype=TensorProto.INT2), "does not take INT2"),
    ]
    for options, message in cases:
        with pytest.raises(ValueError, match=message):
            nx.quantize_linear(x, F32(1), **options)
    with pytest.raises(ValueError, match="does not take FLOAT16 as its input x"):
        nx.quantize_linear(x.astype(np.float16), F32(1), opset=13)
    with pytest.raises(ValueError, match="needs y_scale of shape \\(2, 2\\)"):
        nx.quantize_linear(x, np.ones((2, 3), F32), axis=1, block_size=2)
    with pytest.raises(ValueError, match="fits neither per-tensor"):
        nx.quantize_linear(x, np.ones(3, F32))
    with pytest.raises(ValueError, match="differs from the type of y_zero_point"):
        nx.quantize_linear(x, F32(1), np.uint8(0), output_dtype=TensorProto.INT8)
    e8m0 = np.ones((2, 2), ml_dtypes.float8_e8m0fnu)
    codes4 = np.zeros((2, 4), ml_dtypes.float4_e2m1fn)
    with pytest.raises(ValueError, match="needs output_dtype"):
        nx.dequantize_linear(codes4, e8m0, axis=1, block_size=2)
    with pytest.raises(ValueError, match="does not take FLOAT8E8M0 as its x_scale"):
        nx.dequantize_linear(codes4, e8m0, axis=1, block_size=2, opset=23, output_dtype=1)
    y = nx.dequantize_linear(codes4 + ml_dtypes.float4_e2m1fn(1.5), e8m0, axis=1, block_size=2, output_dtype=1)
    assert y.dtype == F32 and (y == 1.5).all()


def test_integer_quantisation_rounds_ties_to_even_and_nan_gives_the_zero_point():
    """Integer outputs: x / scale rounded to nearest, ties to even, plus the
    zero point, clamped; NaN gives the zero point.
    Rule: docs/rules.md#rule-mx-onnx-quantize-linear"""
    x = np.array([0.5, 1.5, 2.5, -0.5, 1000.0, -1000.0, np.nan], F32)
    assert nx.quantize_linear(x, F32(1), np.uint8(10)).tolist() == [10, 12, 12, 10, 255, 0, 10]
    assert nx.quantize_linear(x[:3], F32(1)).dtype == np.uint8  # the default output type
    assert nx.quantize_linear(x[:3], F32(2), opset=10).tolist() == [0, 1, 1]
    assert nx.dequantize_linear(np.array([3, 4], np.int8), F32(0.5), np.int8(1), opset=10).tolist() == [1.0, 1.5]


@pytest.mark.parametrize(
    "scale_dtype, name", [(np.float16, "float16"), (ml_dtypes.bfloat16, "bfloat16"), (F32, "float")]
)
def test_the_quotient_is_the_exact_one_rounded_once_to_the_scale_type(scale_dtype, name):
    """x / y_scale is the exact quotient rounded once to the scale's type (not
    x first rounded to it: 70000 does not become FLOAT16's infinity), then
    to the nearest integer; int32 inputs beyond 2**24 are not rounded to
    float32 first.  Oracle: the exact quotient (fractions) rounded by the
    tests' reference encoder.
    Rule: docs/rules.md#rule-mx-onnx-quantize-linear"""
    rng = np.random.default_rng(5)
    x = np.concatenate([[70000.0, 100000.0, 136.43316650390625], rng.standard_normal(3000) * 300]).astype(F32)
    scale = np.asarray(3 if name == "bfloat16" else 2, scale_dtype)
    got = nx.quantize_linear(x, scale, np.uint16(0), opset=23)
    s = decode(name, int(scale.view(f"u{scale.itemsize}")))
    expected = []
    for v in x.tolist():
        q = decode(name, encode(name, Exact.from_fraction(Fraction(v) / s.mag)))
        expected.append(65535 if q.kind == "inf" else min(max(round(q.value()), 0), 65535))
    assert got.tolist() == expected
    big = nx.quantize_linear(np.array([1413299297], np.int32), F32(70001.7), np.uint16(0), opset=23)
    exact = Fraction(1413299297) / Fraction(float(F32(70001.7)))
    assert big.tolist() == [round(decode("float", encode("float", Exact.from_fraction(exact))).value())] == [20189]


def test_arguments_the_operator_texts_refuse():
    """Types, shapes and attribute values the operator texts do not allow
    are ValueErrors or TypeErrors naming them: a y_scale of another type than
    x (versions 19 and 21 constrain both to one type), a zero point of
    another shape than the scale, an INT32 input to DequantizeLinear with a
    non-zero zero point, a saturate other than 0/1, type attributes that are
    not TensorProto ids, inputs that are not numbers.
    Rule: docs/rules.md#rule-mx-onnx-quantize-linear"""
    x = np.ones(3, F32)
    with pytest.raises(ValueError, match="QuantizeLinear-21 .* needs y_scale of the type of x, FLOAT, not FLOAT16"):
        nx.quantize_linear(x, np.float16(1), opset=21)
    assert nx.quantize_linear(x, np.float16(1), opset=23).tolist() == [1, 1, 1]
    with pytest.raises(ValueError, match="y_zero_point must have the shape of the scale, \\(3,\\), not \\(2,\\)"):
        nx.quantize_linear(x, np.ones(3, F32), np.zeros(2, np.uint8), axis=0)
    with pytest.raises(ValueError, match="an INT32 input has no zero point"):
        nx.dequantize_linear(np.ones(3, np.int32), F32(2), np.int32(1), opset=21)
    assert nx.dequantize_linear(np.ones(3, np.int32), F32(2), np.int32(0), opset=21).tolist() == [2, 2, 2]
    with pytest.raises(TypeError, match="saturate must be True/False \\(or 1/0\\), not 5"):
        nx.quantize_linear(x, F32(1), saturate=5)
    for attribute, value in (("output_dtype", 3.7), ("output_dtype", "INT8"), ("precision", 11.2)):
        with pytest.raises(TypeError, match=f"{attribute} is a TensorProto.DataType id .*, not {value!r}; accepted: "):
            nx.quantize_linear(x, F32(1), **{attribute: value})
    with pytest.raises(TypeError, match="output_dtype is a TensorProto.DataType id"):
        nx.dequantize_linear(np.ones(3, np.int8), F32(1), output_dtype=1.0)
    with pytest.raises(TypeError, match="QuantizeLinear's input x must be a numeric array, not None"):
        nx.quantize_linear(None, F32(1))
    with pytest.raises(TypeError, match="DequantizeLinear's x_scale must be a numeric array, not 'a'"):
        nx.dequantize_linear(np.ones(3, np.int8), "a")


def test_a_block_longer_than_the_axis_is_the_whole_axis_and_a_block_size_beyond_int64_is_refused():
    """block_size > n makes one block of the axis (as block_size = n; the
    scale was once repeated block_size times: a MemoryError for 10**12), and
    a block_size of 2**63 or more, which no int64 attribute holds, is a
    ValueError (it was an OverflowError).  Rule: docs/rules.md#rule-mx-onnx-quantize-linear"""
    x = np.linspace(-3, 3, 96, dtype=F32).reshape(3, 32)
    scale = np.array([[0.5], [0.25], [2.0]], F32)
    for block_size in (32, 33, 10**12, 2**63 - 1):
        codes = nx.quantize_linear(x, scale, axis=1, block_size=block_size)
        assert codes.tolist() == nx.quantize_linear(x, scale, axis=1, block_size=32).tolist()
        assert nx.dequantize_linear(codes, scale, axis=1, block_size=block_size).tolist() == (
            (codes.astype(np.float64) * scale).astype(F32).tolist()
        )
    for call in (nx.quantize_linear, nx.dequantize_linear):
        with pytest.raises(
            ValueError, match=r"non-negative integer below 2\*\*63 \(an int64\), not 9223372036854775808"
        ):
            call(x if call is nx.quantize_linear else np.zeros((3, 32), np.uint8), scale, axis=1, block_size=2**63)
