"""The Python examples of docs/numba-types.md run, in order, and their asserts hold."""

import warnings

from conftest import DOCS, python_blocks

PAGE = DOCS / "numba-types.md"


def test_the_examples_run():
    blocks = python_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 5  # the introduction, the scalar codecs and the three worked examples
    namespace = {"__name__": "numba_types_page"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for block in blocks:
            exec(compile(block, str(PAGE), "exec"), namespace)
    assert {"linear_fp8", "quantize_rows", "rms_norm"} <= set(namespace)
