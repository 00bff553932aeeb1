"""ONNX's own backend node tests for Cast and CastLike, run by
``onnx.reference.ReferenceEvaluator`` with numbacast's operators.

Every single-node Cast/CastLike test case of ONNX's
(``conftest.onnx_node_cases``) must produce its
expected outputs bit for bit (NaN for NaN in float types with several NaN
codes), with one recorded deviation: at the NaN inputs of FLOAT/FLOAT16 to
FLOAT4E2M1, ONNX's generated data holds -0, where the ONNX float4 note and
the conversion rules (docs/rules.md#rule-float4-nan-backend-data) give
+max (+6, code 0x7).
"""

import numpy as np
import onnx
import pytest
from conftest import onnx_node_cases
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

import numbacast.onnx as nx

CASES = onnx_node_cases("Cast", "CastLike")
FLOAT4E2M1 = onnx.TensorProto.FLOAT4E2M1


def test_all_the_cases_are_collected():
    if onnx.__version__.startswith("1.23."):
        assert len(CASES) == 172
    names = {case.name for case in CASES}
    assert {
        "test_cast_FLOAT_to_FLOAT4E2M1",
        "test_castlike_INT2_to_INT8_expanded",
        "test_cast_e8m0_FLOAT_to_FLOAT8E8M0",
        "test_cast_no_saturate_FLOAT16_to_FLOAT8E5M2FNUZ",
    } <= names


def codes(array):
    return array.reshape(-1).view(f"u{array.dtype.itemsize}")


def nan_positions(array):
    return np.isnan(array.astype(np.float64)).reshape(-1)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_backend_case(case):
    evaluator = ReferenceEvaluator(case.model, new_ops=nx.ops)
    assert [type(node) for node in evaluator.rt_nodes_] in ([nx.ops[0]], [nx.ops[1]])
    for inputs, outputs in case.data_sets:
        feeds = {info.name: numpy_helper.to_array(tensor) for info, tensor in zip(case.model.graph.input, inputs)}
        (got,) = evaluator.run(None, feeds)
        expected = numpy_helper.to_array(outputs[0])
        assert got.dtype == expected.dtype and got.shape == expected.shape
        different = codes(got) != codes(expected)
        different &= ~(nan_positions(got) & nan_positions(expected))
        if outputs[0].data_type == FLOAT4E2M1:
            source_nan = nan_positions(feeds[case.model.graph.input[0].name])
            assert source_nan.any()
            assert codes(got)[source_nan].tolist() == [0x7] * source_nan.sum()  # +6, docs/rules.md
            assert codes(expected)[source_nan].tolist() == [0x8] * source_nan.sum()  # -0 in ONNX's data
            different &= ~source_nan
        assert not different.any(), (
            f"{different.sum()} differences at {np.flatnonzero(different)[:5]}: got "
            f"{codes(got)[different][:5]}, expected {codes(expected)[different][:5]}"
        )
