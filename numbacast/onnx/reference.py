"""numbacast as a drop-in for ``onnx.reference``: the Cast and CastLike nodes of a model.

Needs the onnx package (``pip install "numbacast[onnx]"``).
``onnx.reference.ReferenceEvaluator(model, new_ops=numbacast.onnx.ops)`` runs
every Cast, CastLike, QuantizeLinear and DequantizeLinear node of the model
through numbacast, as the version in force at the model's opset.
"""

try:
    import onnx
    from onnx.reference.op_run import OpRun
except ImportError as error:
    raise ImportError('numbacast.onnx.ops needs the onnx package: pip install "numbacast[onnx]"') from error

from . import versions
from .operators import cast, castlike
from .quantization import dequantize_linear, quantize_linear


class _VersionedOp(OpRun):
    """An operator of the main domain run by numbacast as the version in force
    at the opset of the model (or function) it belongs to."""

    op_domain = ""

    def __init__(self, onnx_node, run_params, schema=None):
        self.spec = versions.in_force(type(self).__name__, run_params["opsets"][onnx_node.domain])
        # The attributes and their defaults are those of that version.
        super().__init__(onnx_node, run_params, schema or onnx.defs.get_schema(self.spec.op, self.spec.version))


class Cast(_VersionedOp):
    def _run(self, x, to=None, saturate=None, round_mode=None):
        return (cast(x, to, opset=self.spec.opset, saturate=saturate, round_mode=round_mode),)


class CastLike(_VersionedOp):
    def _run(self, x, like, saturate=None, round_mode=None):
        return (castlike(x, like, opset=self.spec.opset, saturate=saturate, round_mode=round_mode),)


class QuantizeLinear(_VersionedOp):
    def _run(self, x, y_scale, y_zero_point=None, **attributes):
        return (quantize_linear(x, y_scale, y_zero_point, opset=self.spec.opset, **attributes),)


class DequantizeLinear(_VersionedOp):
    def _run(self, x, x_scale, x_zero_point=None, **attributes):
        return (dequantize_linear(x, x_scale, x_zero_point, opset=self.spec.opset, **attributes),)


#: The operators to give ``onnx.reference.ReferenceEvaluator(..., new_ops=ops)``.
ops = [Cast, CastLike, QuantizeLinear, DequantizeLinear]
