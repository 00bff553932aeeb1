"""ONNX's own backend node tests for QuantizeLinear and DequantizeLinear, run by
``onnx.reference.ReferenceEvaluator`` with numbacast's operators.

Every single-node QuantizeLinear/DequantizeLinear test case of ONNX's
(``conftest.onnx_node_cases``; 27 with onnx 1.23)
must produce its expected outputs bit for bit.
Rule: docs/rules.md#rule-mx-onnx-quantize-linear
"""

import numpy as np
import onnx
import pytest
from conftest import onnx_node_cases
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

import numbacast.onnx as nx

OPS = ("QuantizeLinear", "DequantizeLinear")


CASES = onnx_node_cases(*OPS)


def as_array(value):
    return numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else np.asarray(value)


def test_all_the_cases_are_collected():
    if onnx.__version__.startswith("1.23."):
        assert len(CASES) == 27
    assert {"test_quantizelinear_blocked_symmetric", "test_dequantizelinear_float4e2m1"} <= {c.name for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_backend_case(case):
    evaluator = ReferenceEvaluator(case.model, new_ops=nx.ops)
    assert [type(node).__name__ for node in evaluator.rt_nodes_] == [case.model.graph.node[0].op_type]
    assert type(evaluator.rt_nodes_[0]) in nx.ops
    for inputs, outputs in case.data_sets:
        feeds = {info.name: as_array(value) for info, value in zip(case.model.graph.input, inputs)}
        (got,) = evaluator.run(None, feeds)
        expected = as_array(outputs[0])
        assert got.dtype == expected.dtype and got.shape == expected.shape
        codes = got.reshape(-1).view(f"u{got.dtype.itemsize}")
        assert np.array_equal(codes, expected.reshape(-1).view(f"u{expected.dtype.itemsize}")), (got, expected)
