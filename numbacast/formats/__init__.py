"""The number formats as data (:mod:`~numbacast.formats.description`) and the
ONNX types built on them (:mod:`~numbacast.formats.registry`)."""
