"""numbacast.onnx beyond the backend tests: TensorProto casts (raw and typed
fields, packed types), the reference-evaluator operators at older opsets, and
onnx being an optional extra."""

import importlib
import subprocess
import sys

import exact
import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import numbacast
import numbacast.onnx as nx
import numbacast.onnx.tensors  # noqa: F401  (nx.tensors)

VALUES = [0.0, -0.0, 0.3, 1.5, 2.5, -3.7, 7.0, 100.0, float("inf"), float("-inf"), float("nan")]


def reference(source, values, target, **options):
    """Exact codes of ``values`` (a ``source`` array) cast to ``target``."""
    array = np.asarray(values)
    codes = array.reshape(-1).view(f"u{array.dtype.itemsize}").tolist()
    return [exact.cast_code(source, code, target, **options) for code in codes]


def codes_of(tensor):
    array = numpy_helper.to_array(tensor)
    return array.reshape(-1).view(f"u{array.dtype.itemsize}").tolist()


# -- cast_tensor ----------------------------------------------------------------------


@pytest.mark.parametrize("raw", [True, False])
@pytest.mark.parametrize(
    "target", ["FLOAT8E4M3FN", "INT4", "FLOAT4E2M1", "FLOAT6E3M2", "UINT2", "BFLOAT16", "DOUBLE", "INT32", "BOOL"]
)
def test_cast_tensor_from_float(raw, target):
    values = np.array(VALUES, np.float32).reshape(11, 1)
    tensor = helper.make_tensor("x", TensorProto.FLOAT, values.shape, values if raw else values.reshape(-1), raw=raw)
    assert tensor.HasField("raw_data") == raw
    out = nx.cast_tensor(tensor, getattr(TensorProto, target))
    assert out.name == "x" and list(out.dims) == [11, 1] and out.data_type == getattr(TensorProto, target)
    assert out.HasField("raw_data")
    assert codes_of(out) == reference("float", values, target.lower())


PACKED_SOURCE_CASES = [
    (source, "FLOAT") for source in ("INT4", "UINT4", "FLOAT4E2M1", "INT2", "UINT2", "FLOAT6E2M3", "FLOAT6E3M2")
]
PACKED_SOURCE_CASES += [("INT4", "FLOAT16"), ("FLOAT6E3M2", "INT8"), ("UINT2", "FLOAT6E2M3"), ("FLOAT4E2M1", "INT4")]


@pytest.mark.parametrize("raw", [True, False])
@pytest.mark.parametrize("source, target", PACKED_SOURCE_CASES)
def test_cast_tensor_packed_sources(source, target, raw):
    t = numbacast.resolve(source)
    codes = np.arange(1 << t.bits, dtype=np.uint8)[: 7 if t.bits == 2 else None]
    array = codes.view(t.storage)
    tensor = helper.make_tensor("p", t.id, [codes.size], array if raw else array.tolist(), raw=raw)
    assert tensor.HasField("raw_data") == raw
    assert nx.tensor_to_array(tensor).view(np.uint8).tolist() == codes.tolist()
    out = nx.cast_tensor(tensor, getattr(TensorProto, target))
    expected = [exact.cast_code(source.lower(), int(c), target.lower()) for c in codes]
    assert codes_of(out) == expected
    target_bits = numbacast.resolve(target).bits
    if target_bits < 8:
        assert len(out.raw_data) == (codes.size * target_bits + 7) // 8


def test_cast_tensor_typed_fields_of_every_kind():
    tensors = [
        helper.make_tensor("a", TensorProto.UINT64, [2], [2**64 - 1, 5]),
        helper.make_tensor("b", TensorProto.INT64, [2], [-(2**63), 7]),
        helper.make_tensor("c", TensorProto.DOUBLE, [2], [1e300, -0.1]),
        helper.make_tensor("d", TensorProto.FLOAT16, [2], np.array([65504, -0.5], np.float16)),
        helper.make_tensor("e", TensorProto.BOOL, [2], [True, False]),
    ]
    for tensor in tensors:
        source = nx.tensors.tensor_type_name(tensor).lower()
        array = numpy_helper.to_array(tensor)
        out = nx.cast_tensor(tensor, TensorProto.FLOAT8E5M2, saturate=0)
        assert codes_of(out) == reference(source, array, "float8e5m2", saturate=False), tensor.name


def test_cast_tensor_version_rules():
    tensor = numpy_helper.from_array(np.array([np.inf, -np.inf, 3.0], np.float32), "x")
    assert codes_of(nx.cast_tensor(tensor, TensorProto.FLOAT8E4M3FNUZ, opset=21)) == [0x80, 0x80, 0x4C]
    assert codes_of(nx.cast_tensor(tensor, TensorProto.FLOAT8E4M3FNUZ)) == [0x7F, 0xFF, 0x4C]
    assert codes_of(nx.cast_tensor(tensor, "INT32", opset=1)) == [2**31 - 1, 2**31, 3]
    with pytest.raises(ValueError, match="Cast-19 .* does not take INT4 as its output type"):
        nx.cast_tensor(tensor, TensorProto.INT4, opset=20)
    with pytest.raises(ValueError, match="Cast-21 .* has no round_mode attribute"):
        nx.cast_tensor(tensor, TensorProto.INT4, opset=21, round_mode="up")
    with pytest.raises(ValueError, match="COMPLEX64 \\(id 14\\) is refused"):
        nx.cast_tensor(helper.make_tensor("z", TensorProto.COMPLEX64, [1], [1j]), TensorProto.FLOAT)


def test_cast_tensor_packed_length_error():
    tensor = helper.make_tensor("p", TensorProto.INT4, [5], b"\x00\x11\x22", raw=True)
    tensor.raw_data = b"\x00\x11"
    with pytest.raises(ValueError, match="packed INT4 data of shape \\(5,\\) takes 3 bytes .*, not 2"):
        nx.cast_tensor(tensor, TensorProto.FLOAT)
    with pytest.raises(ValueError, match="packed INT4 data"):
        nx.tensor_to_array(tensor)


def test_array_to_tensor_round_trip():
    for array in (
        np.arange(5, dtype=np.uint8).view(ml_dtypes.uint4).reshape(5, 1),
        np.array([[1.5, -2.0]], ml_dtypes.float8_e8m0fnu),
        np.array(3.0, np.float64),
        np.zeros((0, 3), ml_dtypes.float6_e2m3fn),
    ):
        tensor = nx.array_to_tensor(array, "t")
        assert tensor.name == "t" and list(tensor.dims) == list(array.shape)
        assert numpy_helper.to_array(tensor).tobytes() == array.tobytes()
        assert nx.tensor_to_array(tensor).tobytes() == array.tobytes()


def test_cast_tensor_strings():
    tensor = helper.make_tensor("s", TensorProto.STRING, [2], [b"1.5", b"-inf"])
    assert numpy_helper.to_array(nx.cast_tensor(tensor, TensorProto.FLOAT)).tolist() == [1.5, -np.inf]
    out = nx.cast_tensor(numpy_helper.from_array(np.array([0.5], np.float32)), TensorProto.STRING)
    assert list(out.string_data) == [b"0.5"]


# -- The reference evaluator ----------------------------------------------------------


def model(nodes, opset, inputs, outputs):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def tensor_info(name, elem_type):
    return helper.make_tensor_value_info(name, elem_type, None)


@pytest.mark.parametrize(
    "opset, expected", [(19, [0x80, 0x80, 0x40]), (23, [0x80, 0x80, 0x40]), (24, [0x7F, 0xFF, 0x40])]
)
def test_evaluator_honours_the_opset(opset, expected):
    nodes = [
        helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E5M2FNUZ),
        helper.make_node("CastLike", ["y", "like"], ["z"]),
    ]
    m = model(
        nodes,
        opset,
        [tensor_info("x", TensorProto.DOUBLE), tensor_info("like", TensorProto.FLOAT)],
        [tensor_info("z", TensorProto.FLOAT)],
    )
    x = np.array([np.inf, -np.inf, 1.0])
    y, z = ReferenceEvaluator(m, new_ops=nx.ops).run(["y", "z"], {"x": x, "like": np.zeros(1, np.float32)})
    assert y.view(np.uint8).tolist() == expected
    assert z.dtype == np.float32 and z[2] == 1.0


def test_evaluator_cast1_with_a_type_name():
    m = model(
        [helper.make_node("Cast", ["x"], ["y"], to="INT8")],
        5,
        [tensor_info("x", TensorProto.FLOAT)],
        [tensor_info("y", TensorProto.INT8)],
    )
    (y,) = ReferenceEvaluator(m, new_ops=nx.ops).run(None, {"x": np.array([1.9, -130.0], np.float32)})
    assert y.dtype == np.int8 and y.tolist() == [1, -128]


def test_evaluator_reports_what_the_version_lacks():
    m = model(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E4M3FN)],
        17,
        [tensor_info("x", TensorProto.FLOAT)],
        [tensor_info("y", TensorProto.FLOAT8E4M3FN)],
    )
    with pytest.raises(ValueError, match="Cast-13 \\(in force at opset 17\\) does not take FLOAT8E4M3FN"):
        ReferenceEvaluator(m, new_ops=nx.ops).run(None, {"x": np.zeros(2, np.float32)})
    m = model(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT, saturate=0)],
        28,
        [tensor_info("x", TensorProto.FLOAT)],
        [tensor_info("y", TensorProto.FLOAT)],
    )
    m.opset_import[0].version = 18
    with pytest.raises(ValueError, match="Cast-13 .* has no saturate attribute"):
        ReferenceEvaluator(m, new_ops=nx.ops).run(None, {"x": np.zeros(2, np.float32)})


def test_evaluator_attributes_saturate_and_round_mode():
    nodes = [
        helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E8M0, saturate=0, round_mode="nearest"),
        helper.make_node("CastLike", ["x", "like"], ["z"], saturate=0),
    ]
    m = model(
        nodes,
        25,
        [tensor_info("x", TensorProto.FLOAT), tensor_info("like", TensorProto.FLOAT8E4M3FN)],
        [tensor_info("y", TensorProto.FLOAT8E8M0), tensor_info("z", TensorProto.FLOAT8E4M3FN)],
    )
    x = np.array([0.0, 3.0, 5.0, 1e6], np.float32)
    y, z = ReferenceEvaluator(m, new_ops=nx.ops).run(None, {"x": x, "like": np.zeros(1, ml_dtypes.float8_e4m3fn)})
    assert y.view(np.uint8).tolist() == reference("float", x, "float8e8m0", saturate=False, round_mode="nearest")
    assert z.view(np.uint8).tolist() == reference("float", x, "float8e4m3fn", saturate=False)


# -- onnx is optional -------------------------------------------------------------------


def test_numbacast_onnx_without_onnx(monkeypatch):
    """Without the onnx package the operators on arrays work; what needs onnx
    (the evaluator ops, TensorProtos) raises an ImportError saying what to install."""
    monkeypatch.setitem(sys.modules, "onnx", None)
    for name in ("numbacast.onnx", "numbacast.onnx.reference", "numbacast.onnx.tensors"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    without = importlib.import_module("numbacast.onnx")
    assert without.cast(np.float32([1.5, 500]), 17, opset=19).tolist() == [1.5, 448]
    for name in ("ops", "cast_tensor", "tensor_to_array", "array_to_tensor"):
        with pytest.raises(ImportError, match='pip install "numbacast\\[onnx\\]"'):
            getattr(without, name)


def test_importing_numbacast_does_not_import_onnx():
    code = "import sys, numbacast; numbacast.pack; print(sorted(m for m in sys.modules if m.split('.')[0] == 'onnx'))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_ops_are_named_for_the_evaluator():
    assert [op.__name__ for op in nx.ops] == ["Cast", "CastLike", "QuantizeLinear", "DequantizeLinear"]
    assert all(op.op_domain == "" for op in nx.ops)
    assert onnx.defs.get_schema("Cast", 28).since_version == 28


@pytest.mark.parametrize("dtype", ["float8_e4m3", "float8_e4m3b11fnuz", "float8_e3m4"])
def test_ml_dtypes_types_that_onnx_lacks_are_a_value_error_saying_so(dtype):
    """Rule: docs/onnx.md (a type the version does not know is a ValueError)"""
    odd = np.zeros(2, getattr(ml_dtypes, dtype))
    for call in (lambda: numbacast.onnx.cast(odd, 1), lambda: numbacast.onnx.castlike(np.ones(2, np.float32), odd)):
        with pytest.raises(ValueError, match=f"{dtype} is not an ONNX type"):
            call()


def test_array_to_tensor_takes_either_byte_order_and_refuses_types_onnx_lacks():
    swapped = nx.array_to_tensor(np.arange(5).astype(">i4"))
    assert numpy_helper.to_array(swapped).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="float8_e4m3 is not an ONNX type"):
        nx.array_to_tensor(np.zeros(2, ml_dtypes.float8_e4m3))
