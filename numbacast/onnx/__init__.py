"""numbacast for ONNX: the Cast, CastLike, QuantizeLinear and DequantizeLinear operators version by version,
a drop-in for ``onnx.reference``, and casts of TensorProtos.

* :func:`cast`, :func:`castlike`, :func:`quantize_linear`,
  :func:`dequantize_linear`: the operators on arrays, as the version in
  force at an opset (:mod:`numbacast.onnx.operators`, :mod:`numbacast.onnx.versions`);
  they do not need the onnx package;
* :data:`ops`: ``onnx.reference.ReferenceEvaluator(model,
  new_ops=numbacast.onnx.ops)`` runs every Cast, CastLike, QuantizeLinear and DequantizeLinear node of the
  model through numbacast (:mod:`numbacast.onnx.reference`; needs onnx);
* :func:`cast_tensor`, :func:`tensor_to_array`, :func:`array_to_tensor`:
  TensorProtos, packed for the sub-byte types (:mod:`numbacast.onnx.tensors`;
  needs onnx).

The names that need onnx are imported on first use, so that ``numbacast.onnx``
itself works without it.
"""

import importlib

from .operators import cast, castlike
from .quantization import dequantize_linear, quantize_linear

__all__ = [
    "cast",
    "castlike",
    "quantize_linear",
    "dequantize_linear",
    "ops",
    "cast_tensor",
    "tensor_to_array",
    "array_to_tensor",
]

#: The names that need the onnx package, and the module defining each.
_NEEDS_ONNX = {"ops": "reference", "cast_tensor": "tensors", "tensor_to_array": "tensors", "array_to_tensor": "tensors"}


def __getattr__(name):
    if name in _NEEDS_ONNX:
        return getattr(importlib.import_module(f"{__name__}.{_NEEDS_ONNX[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
