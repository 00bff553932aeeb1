"""ONNX STRING: numbers to text (:mod:`~numbacast.text.printing`), text to
numbers (:mod:`~numbacast.text.parsing`, :mod:`~numbacast.text.chars`,
:mod:`~numbacast.text.wide`), and the array layer (:mod:`~numbacast.text.strings`)."""
