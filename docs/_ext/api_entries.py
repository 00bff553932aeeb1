"""Sphinx extension: API reference entries generated from the package itself.

Two marker lines (MyST comments) in a page are replaced before it is parsed:

``% type-constants``
    one ``py:data`` entry per ONNX type constant (``numbacast.FLOAT`` ...
    ``numbacast.FLOAT6E3M2`` and ``numbacast.STRING``), from
    ``numbacast.TYPES``;
``% scalar-codecs``
    one ``autofunction`` entry per public function of ``numbacast.scalar``
    (its ``__all__``), so that codecs added or removed there are documented
    without editing the page.
"""

import re

import numbacast

MARKER = re.compile(r"^% (?P<what>type-constants|scalar-codecs)[ \t]*$", re.MULTILINE)


def type_constants():
    """MyST ``py:data`` entries for the type constants, in id order, STRING last."""
    entries = []
    for t in (*numbacast.TYPES, numbacast.STRING):
        storage = "`<U` (text)" if t.is_string else f"`{t.storage}`"
        entries += [
            f"```{{py:data}} {t.onnx_name}",
            ":module: numbacast",
            ":type: numbacast.OnnxType",
            "",
            f"ONNX {t.onnx_name} (id {t.id}), stored in NumPy as {storage}.",
            "```",
            "",
        ]
    return "\n".join(entries)


def scalar_codecs():
    """An ``autofunction`` entry for every function of ``numbacast.scalar``."""
    import numbacast.integrations.scalar as scalar

    names = [name for name in scalar.__all__ if callable(getattr(scalar, name))]
    lines = ["```{eval-rst}"]
    for name in names:
        lines += [f".. autofunction:: numbacast.scalar.{name}", ""]
    lines.append("```")
    return "\n".join(lines)


def expand(app, docname, source):
    """``source-read``: replace each marker line with its entries."""
    makers = {"type-constants": type_constants, "scalar-codecs": scalar_codecs}
    source[0] = MARKER.sub(lambda match: makers[match.group("what")](), source[0])


def setup(app):
    app.connect("source-read", expand)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
