"""Sphinx configuration of numbacast's documentation.

The pages are Markdown (MyST); the API reference comes from the docstrings
(autodoc, NumPy style through napoleon).  Build it from the repository's top
folder with::

    python -m sphinx -W -b html docs docs/_build/html

Nothing here reaches the network (no intersphinx).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository: document this checkout's numbacast
sys.path.insert(0, os.path.join(HERE, "_ext"))

import numbacast  # noqa: E402

project = "numbacast"
author = "the numbacast developers"
copyright = "the numbacast developers"
version = release = numbacast.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "bench_tables",
    "api_entries",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_data", "_ext"]

myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "none"
napoleon_google_docstring = False
napoleon_numpy_docstring = True

html_theme = "alabaster"
html_title = f"numbacast {release}"
html_theme_options = {"description": "The ONNX Cast operator for NumPy, compiled with Numba"}
