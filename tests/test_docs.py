"""The documentation: it builds without a warning, documents every public name,
names a rule for every test of test_decisions.py, and links only to files of
the repository; the README stays a landing page."""

import ast
import html
import inspect
import re
import subprocess
import sys

import pytest
from conftest import DOCS, ROOT

import numbacast
import numbacast.integrations.scalar
import numbacast.onnx

README = ROOT / "README.md"
RULES = DOCS / "rules.md"
README_MAX_BYTES = 8 * 1024

#: A MyST label line, ``(rule-name)=``.
LABEL = re.compile(r"^\(([A-Za-z0-9_-]+)\)=[ \t]*$", re.MULTILINE)
#: How a test names its rule: ``Rule: docs/rules.md#rule-name``.
RULE_REFERENCE = re.compile(r"docs/rules\.md#([A-Za-z0-9_-]+)")
#: Inline Markdown links and images ``[text](target "title")``, and reference definitions ``[name]: target``.
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.MULTILINE)
#: Fenced code blocks, whose text is not Markdown.
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)


def public_names():
    """{full name: object} of every public name: numbacast, numbacast.mx, numbacast.onnx and the scalar codecs."""
    names = {f"numbacast.{name}": getattr(numbacast, name) for name in numbacast.__all__}
    for module in (numbacast.mx, numbacast.onnx):
        names.update({f"{module.__name__}.{name}": getattr(module, name) for name in module.__all__})
    scalar = numbacast.integrations.scalar
    names.update({f"numbacast.scalar.{name}": getattr(scalar, name) for name in scalar.__all__})
    return names


def markdown_files():
    return [README, *sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)]


def links(path):
    """The link targets of a Markdown file, outside code blocks and inline code."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    return INLINE_LINK.findall(text) + REFERENCE_LINK.findall(text)


def relative_links(path):
    """(target file, fragment) of each link of ``path`` to a file rather than a URL."""
    found = []
    for target in links(path):
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target) or target.startswith(("#", "//")):
            continue  # a URL (http:, mailto:, ...) or a place in the same page
        file, _, fragment = target.partition("#")
        found.append(((path.parent / file).resolve(), fragment))
    return found


def rule_labels():
    return LABEL.findall(RULES.read_text(encoding="utf-8"))


def decision_tests():
    """{test name: docstring} of every test function in tests/test_decisions.py."""
    tree = ast.parse((ROOT / "tests" / "test_decisions.py").read_text(encoding="utf-8"))
    return {
        node.name: ast.get_docstring(node) or ""
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_")
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The HTML build of the docs, warnings as errors (the folder it is in)."""
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    out = tmp_path_factory.mktemp("docs")
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    command += ["-d", str(out / "doctrees"), str(DOCS), str(out / "html")]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert result.returncode == 0, f"sphinx-build failed:\n{result.stdout}\n{result.stderr}"
    return out / "html"


def inventory(folder):
    """{object name} of every Python object the build's objects.inv lists."""
    from sphinx.util.inventory import InventoryFile

    with open(folder / "objects.inv", "rb") as f:
        inv = InventoryFile.load(f, "", lambda base, uri: uri)
    return {name for role, entries in inv.items() if role.startswith("py:") for name in entries}


def description(page, name):
    """The text an HTML page gives the object ``name`` (its <dd>), or None."""
    match = re.search(rf'<dt[^>]*\bid="{re.escape(name)}"[^>]*>.*?</dt>\s*<dd>(.*?)</dd>', page, re.DOTALL)
    return None if match is None else html.unescape(re.sub(r"<[^>]+>", " ", match.group(1))).strip()


def test_docs_build_without_warnings(built):
    assert (built / "index.html").is_file() and (built / "api.html").is_file()


def test_every_public_name_is_in_the_api_reference(built):
    documented = inventory(built)
    missing = [name for name in public_names() if name not in documented]
    assert not missing, f"not in the API reference (docs/api.md): {missing}"
    page = (built / "api.html").read_text(encoding="utf-8")
    undescribed = [name for name in public_names() if not description(page, name)]
    assert not undescribed, f"documented without a description: {undescribed}"


def test_every_public_function_and_class_has_a_docstring():
    objects = {name: obj for name, obj in public_names().items() if callable(obj)}
    assert len(objects) > 30
    missing = [name for name, obj in objects.items() if not (inspect.getdoc(obj) or "").strip()]
    assert not missing, f"no docstring: {missing}"


def test_rule_labels_are_unique():
    labels = rule_labels()
    assert len(labels) >= 20
    assert len(labels) == len(set(labels)), sorted(label for label in labels if labels.count(label) > 1)
    assert all(label.startswith("rule-") for label in labels)


def test_every_decision_test_names_a_rule_of_the_rules_page():
    labels = set(rule_labels())
    tests = decision_tests()
    assert len(tests) >= 20
    unnamed = [name for name, doc in tests.items() if not RULE_REFERENCE.search(doc)]
    assert not unnamed, f"tests whose docstring names no rule (Rule: docs/rules.md#rule-...): {unnamed}"
    unknown = {name: ref for name, doc in tests.items() for ref in RULE_REFERENCE.findall(doc) if ref not in labels}
    assert not unknown, f"rules named by tests but not labelled in docs/rules.md: {unknown}"


def test_rule_anchors_are_in_the_built_page(built):
    page = (built / "rules.html").read_text(encoding="utf-8")
    assert [label for label in rule_labels() if f'id="{label}"' not in page] == []


def test_readme_is_a_landing_page():
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes; at most {README_MAX_BYTES} (move text to docs/)"
    first = README.read_text(encoding="utf-8")
    test_command = 'python3 -m venv .venv && .venv/bin/pip install ".[test]" && .venv/bin/python -m pytest -q'
    assert test_command in first[:600]


def test_relative_links_point_at_files_of_the_repository():
    broken = []
    for path in markdown_files():
        for target, _ in relative_links(path):
            if not target.exists() or ROOT not in (target, *target.parents):
                broken.append(f"{path.relative_to(ROOT)} -> {target}")
    assert not broken, broken
    assert any(links(README)), "README.md links into the docs"


def test_links_into_the_docs_reach_their_anchors(built):
    missing = []
    for path in markdown_files():
        for target, fragment in relative_links(path):
            if not fragment or target.suffix != ".md" or DOCS not in target.parents:
                continue
            page = built / target.relative_to(DOCS).with_suffix(".html")
            if f'id="{fragment}"' not in page.read_text(encoding="utf-8"):
                missing.append(f"{path.relative_to(ROOT)} -> {target.name}#{fragment}")
    assert not missing, missing


def test_nothing_mentions_the_private_decisions_file():
    name = "DECI" + "SIONS"  # a private file of rules; spelled apart so that this file does not name it
    places = [README, ROOT / "pyproject.toml", ROOT / "asv.conf.json", *(ROOT / ".ci").glob("*")]
    for folder in ("numbacast", "tests", "benchmarks", "docs"):
        places += [p for p in (ROOT / folder).rglob("*") if p.is_file() and "_build" not in p.parts]
    mentions = [
        str(p.relative_to(ROOT))
        for p in places
        if p.suffix not in (".pyc", ".nbi", ".nbc") and name in p.read_text(encoding="utf-8", errors="replace")
    ]
    assert not mentions, f"{name} is not in the repository; point at docs/rules.md instead: {mentions}"


def test_bench_ratio_tables_put_each_record_beside_the_other():
    """``% bench-ratios:`` tables (docs/_ext/bench_tables.py): a column per
    record, a pair missing from one record shown as "-", a row that misses
    its target marked, and a group whose target bounds numbacast's own time
    shown in that time's unit."""
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import bench_tables
    finally:
        sys.path.remove(str(DOCS / "_ext"))

    def record(cpu, rows):
        groups = [
            {"key": "mx", "unit": "ms", "target": "<= 1.5", "rows": rows},
            {"key": "mx-overhead", "unit": "us", "target": "<= 20 us", "rows": [_row("a", 10.7, 4.6, "PASS")]},
        ]
        return {"machine": {"numba_cpu_name": cpu}, "groups": groups}

    host = record("znver4", [_row("a", 3.0, 1.4, "PASS"), _row("b", 4.0, 1.58, "short")])
    avx2 = record("haswell", [_row("a", 3.1, 1.56, "short")])
    table = bench_tables.ratio_table([host, avx2], "mx,mx-overhead").splitlines()
    assert table[0] == "| group | pair | znver4 | haswell | target |"
    assert table[2:] == [
        "| `mx` | a | 1.4 | 1.56 (short) | <= 1.5 |",
        "| `mx` | b | 1.58 (short) | - | <= 1.5 |",
        "| `mx-overhead` | a | 10.7 us | 10.7 us | <= 20 us |",
    ]


def _row(pair, ours, ratio, result):
    return {"pair": pair, "numbacast": ours, "reference": ours / ratio, "ratio": ratio, "result": result}
