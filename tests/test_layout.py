"""The house rules of the package layout: imports run one way, ``import
numbacast`` loads only the runtime, and the kernel cache is keyed on the
compiled layers only."""

import ast
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import numbacast
from numbacast.engine import cache

PACKAGE = Path(numbacast.__file__).resolve().parent

#: The layers, lowest first: a module may import only from its own layer or lower ones.
LAYERS = (
    ("numbacast.formats",),
    ("numbacast.engine",),
    ("numbacast.text", "numbacast.packing", "numbacast.integrations.dask_array"),
    ("numbacast.api", "numbacast.mx"),
    ("numbacast.onnx", "numbacast.integrations"),
    ("numbacast.cli", "numbacast.__main__", "numbacast"),
)


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path):
    """The numbacast modules that the module at ``path`` imports, anywhere in its body."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("numbacast"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("numbacast"):
                continue
            for alias in node.names:  # "from . import codecs" imports the submodule
                candidate = f"{target}.{alias.name}"
                found.add(candidate if candidate in MODULES else target)
    return found - {name}


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {name: imports_of(path) for name, path in MODULES.items()}


def layer_of(name):
    best = None
    for rank, layer in enumerate(LAYERS):
        for prefix in layer:
            if name == prefix or name.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (rank, len(prefix))
    return best[0]


def test_the_import_graph_has_no_cycle():
    state = {}

    def visit(node, trail):
        if state.get(node) == "done":
            return
        assert state.get(node) != "open", "import cycle: " + " -> ".join(trail + [node])
        state[node] = "open"
        for child in sorted(GRAPH.get(node, ())):
            visit(child, trail + [node])
        state[node] = "done"

    for name in sorted(GRAPH):
        visit(name, [])


def test_imports_run_from_the_public_surface_down_to_the_engine():
    upward = [
        f"{name} imports {target}"
        for name, targets in GRAPH.items()
        for target in targets
        if target in MODULES and layer_of(target) > layer_of(name)
    ]
    assert not upward, upward


def test_the_graph_sees_the_known_imports():
    """The checker itself: it finds relative, absolute and submodule imports."""
    assert "numbacast.engine.codecs" in GRAPH["numbacast.engine.conversion"]
    assert "numbacast.formats.description" in GRAPH["numbacast.engine.conversion"]
    assert "numbacast.api" in GRAPH["numbacast.integrations.njit"]
    assert layer_of("numbacast.integrations.dask_array") < layer_of("numbacast.api")


def test_import_numbacast_loads_only_the_runtime():
    code = "import sys, numbacast\nprint('\\n'.join(sorted(sys.modules)))\n"
    loaded = set(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    )
    assert "numbacast.api" in loaded
    unwanted = {
        "benchmarks",
        "matplotlib",
        "dask",
        "onnx",
        "onnxruntime",
        "torch",
        "numbacast.onnx.reference",
        "numbacast.onnx.tensors",
        "numbacast.cli",
        "numbacast.integrations.scalar",
    }
    assert not {m for m in loaded if m.split(".")[0] in unwanted or m in unwanted}


def test_import_numbacast_does_not_import_numba():
    """Numba (a third of a second) is imported by the first cast, not by ``import numbacast``."""
    code = "import sys, numbacast\nprint(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_first_cast_does_not_import_numpy_ma(tmp_path):
    """``numpy.ma`` (7 ms) is not imported by a first cast: the engine tells
    masked arrays apart without it, and the ``@njit`` layer writes its table
    type out rather than asking ``numba.typeof`` of an array, which imports it."""
    code = "import sys, numpy as np, numbacast\nnumbacast.cast(np.ones(3, np.float32), 'int8')\n"
    code += "print('numpy.ma' in sys.modules)"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip() == "False"


def test_the_unused_table_type_is_the_type_of_no_table():
    from numba import typeof

    from numbacast.engine.kernels import NO_TABLE
    from numbacast.integrations.flat_arrays import _UNUSED_TABLE

    assert typeof(NO_TABLE) == _UNUSED_TABLE


@pytest.mark.parametrize("numba_first", [False, True], ids=["numbacast-first", "numba-first"])
def test_a_cast_leaves_the_njit_integrations_to_the_first_user_compilation(tmp_path, numba_first):
    """Whichever of Numba and numbacast is imported first, ``@njit`` code and
    a ``cfunc`` can call ``numbacast.cast``; neither ``import numbacast``
    nor numbacast's own kernels register the ``@njit`` integrations (0.02 s
    of a first cast, 0.05 s of the import when Numba was imported before
    numbacast): the first function of the user's that Numba compiles does."""
    code = textwrap.dedent(f"""
        import ctypes, sys
        import numpy as np
        {"import numba" if numba_first else ""}
        import numbacast

        print("numbacast.integrations.njit" in sys.modules)
        x = np.array([1.0, -2.0, 0.3], np.float32)
        numbacast.cast(x, "int8")
        print("numbacast.integrations.njit" in sys.modules)

        from numba import carray, cfunc, njit, types

        @cfunc(types.float32(types.CPointer(types.float32)))
        def c(p):
            a = numbacast.cast(carray(p, (3,)), "float8e4m3fn")
            return np.float32(a[2])

        print(c.ctypes(x.ctypes.data_as(ctypes.POINTER(ctypes.c_float))))

        @njit
        def f(a):
            return numbacast.cast(a, "float8e4m3fn")

        print(f(x).view(np.uint8).tolist())
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["False", "False", "0.3125", "[56, 192, 42]"]


def test_a_cast_leaves_the_block_kernels_to_the_first_quantisation(tmp_path):
    """A process that casts does not import the block kernels (12 ms of Numba's
    first compilation, which registers ``numbacast.mx`` for ``@njit`` code); the
    first ``@njit`` quantisation imports them, and gives the Python call's bits."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        from numba import njit
        import numbacast
        from numbacast import mx

        numbacast.cast(np.ones(3, np.float32), "int8")
        print("numbacast.engine.blocks" in sys.modules)

        @njit
        def f(x):
            q = mx.quantize(x, "nvfp4")
            return q.elements.view(np.uint8), q.scales.view(np.uint8), q.tensor_scale

        x = np.linspace(-7, 7, 40).astype(np.float32)
        got = f(x)  # before the Python call, which imports the block kernels too
        q = mx.quantize(x, "nvfp4")
        same_elements = got[0].tolist() == q.elements.view(np.uint8).tolist()
        print(same_elements, got[1].tolist() == q.scales.view(np.uint8).tolist(), got[2] == q.tensor_scale)
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["False", "True", "True", "True"]


def test_tooling_is_not_installed_with_the_package():
    assert not list(PACKAGE.rglob("bench*.py"))
    assert not list(PACKAGE.rglob("baselines.py"))


def copy_package(tmp_path):
    target = tmp_path / "numbacast"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_the_cache_key_ignores_everything_but_the_compiled_layers(tmp_path):
    package = copy_package(tmp_path)
    before = cache.digest_of(package)
    for tooling in ("cli/demo.py", "cli/__init__.py", "api.py", "onnx/operators.py", "integrations/dask_array.py"):
        with open(package / tooling, "a") as f:
            f.write("\n# an edit\n")
    assert cache.digest_of(package) == before


def test_the_cache_key_changes_with_a_codec(tmp_path):
    package = copy_package(tmp_path)
    before = cache.digest_of(package)
    with open(package / "engine" / "codecs.py", "a") as f:
        f.write("\n# an edit\n")
    assert cache.digest_of(package) != before


def test_every_compiled_layer_exists():
    assert all((PACKAGE / layer).exists() for layer in cache.COMPILED_LAYERS)
    assert len(cache.compiled_sources()) > 10


def test_cache_file_names_are_unique():
    """Every function cached on disk gets a file name of its own: the name
    carries the module path inside the package and the line."""
    from numba.core.dispatcher import Dispatcher

    names = []
    for name in MODULES:
        module = sys.modules.get(name) or __import__(name, fromlist=["_"])
        for value in vars(module).values():
            if isinstance(value, Dispatcher) and value._cache.__class__.__name__ != "NullCache":
                if getattr(value.py_func, "__module__", None) == name:
                    names.append(value._cache._cache_file._index_name)
    assert len(names) >= 5
    assert len(names) == len(set(names)), sorted(names)


def test_the_wheel_holds_the_runtime_only(tmp_path):
    """What ``pip install .`` installs: every subpackage, the type information,
    and no tooling (benchmarks, tests, docs)."""
    import zipfile

    root = PACKAGE.parent
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path),
            str(root),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("numbacast-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for expected in (
        "numbacast/engine/kernels.py",
        "numbacast/text/parsing.py",
        "numbacast/onnx/tensors.py",
        "numbacast/cli/demo.py",
        "numbacast/py.typed",
        "numbacast/integrations/scalar.pyi",
    ):
        assert expected in names
    assert not [n for n in names if n.startswith(("benchmarks/", "tests/", "docs/"))]


def test_a_type_unpickles_as_the_one_instance_of_its_process():
    """Types are compared by identity; a Dask worker receives them pickled."""
    import pickle

    for t in (*numbacast.TYPES, numbacast.STRING):
        assert pickle.loads(pickle.dumps(t)) is t
