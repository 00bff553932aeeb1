"""House rules checked in CI: ruff lint and format, mypy on the package, and
the type stub of the generated scalar codecs."""

import ast
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from numbacast.integrations import scalar


def run_tool(*args):
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_lint_and_format():
    lint = run_tool("ruff", "check", ".")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    layout = run_tool("ruff", "format", "--check", ".")
    assert layout.returncode == 0, layout.stdout + layout.stderr


def test_mypy_is_clean_on_the_package():
    result = run_tool("mypy", "--no-incremental")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_scalar_stub_lists_every_generated_codec():
    stub = ast.parse((Path(scalar.__file__).with_suffix(".pyi")).read_text())
    stubbed = {node.name for node in stub.body if isinstance(node, ast.FunctionDef)}
    generated = {name for name in scalar.__all__ if name.startswith(("encode", "decode"))}
    assert stubbed == generated
