"""Shared helpers of the test-suite: the exact reference and code comparison."""

import atexit
import os
import re
import sys
from pathlib import Path

import exact
import numpy as np

import numbacast

TYPE_NAMES = [t.name for t in numbacast.TYPES]

#: The repository's top folder and its documentation.
ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: The test files that take longest (each a minute or more from a cold cache on
#: a 2-core machine), longest first.  pytest-xdist hands each worker whole files
#: in collection order (``--dist loadfile --no-loadscope-reorder``): long files
#: first and short ones last keeps both workers busy to the end, where a long
#: file handed out last kept one worker busy while the other stood idle.
LONGEST_FIRST = [
    "test_mx.py",
    "test_elements.py",
    "test_njit_matrix.py",
    "test_reductions.py",
    "test_stochastic.py",
    "test_codegen.py",
    "test_exhaustive.py",
    "test_wide_sources.py",
    "test_cache.py",
    "test_rounding.py",
    "test_strings_print.py",
    "test_scalar.py",
    "test_njit_rounding.py",
    "test_packing.py",
    "test_float_to_int.py",
]


def pytest_configure(config):
    """A pytest-xdist worker ends without the interpreter's last cleanup (see :func:`_end_now`)."""
    if hasattr(config, "workerinput"):
        atexit.register(_end_now)


def _end_now():
    """End the process here, skipping the interpreter's cleanup, which freed
    the worker's thousands of compiled functions one by one: 7-8 s at the
    end of a run on two cores, the controller waiting.  The worker's results
    are sent by then; the exit handlers it skips, those registered before it,
    only mark the process as ending (Numba's, llvmlite's) or flush logs the
    suite does not write."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def pytest_collection_modifyitems(items):
    """The files of :data:`LONGEST_FIRST` first, in that order; the others after them as collected."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def options_for(target):
    """Every (saturate, round_mode) that gives ``target`` a different cast."""
    if target == "float8e8m0":
        return [dict(saturate=s, round_mode=m) for s in (True, False) for m in exact.ROUND_MODES]
    if target.startswith("float8"):
        return [dict(saturate=True), dict(saturate=False)]
    return [dict()]


def variants(targets=TYPE_NAMES):
    """(target, options) pairs covering every target and option."""
    return [(t, o) for t in targets for o in options_for(t)]


def variant_id(variant):
    target, options = variant
    return "-".join([target] + [f"{k}={v}" for k, v in options.items()])


def storage_codes(array):
    """The storage codes of an array as unsigned integers."""
    return array.reshape(-1).view(f"u{array.dtype.itemsize}")


def cast_in_serial_pieces(x, target, **options):
    """``numbacast.cast`` of a 1-D ``x`` in pieces below PARALLEL_MIN: each pair
    compiles its serial loop only (the parallel loop runs the same converter)."""
    from numbacast.engine.kernels import PARALLEL_MIN

    pieces = [x[i : i + PARALLEL_MIN - 1] for i in range(0, x.size, PARALLEL_MIN - 1)]
    return np.concatenate([numbacast.cast(piece, target, **options) for piece in pieces])


def check_against_reference(source, codes, target, options, out, reference=None):
    """Assert that ``out`` (the cast of the source ``codes``) matches the exact
    reference code by code; report the first mismatches."""
    if reference is None:
        expected = np.array(exact.cast_codes(source, codes.tolist(), target, **options), dtype=np.uint64)
    else:
        expected = np.array([reference(c) for c in codes.tolist()], dtype=np.uint64)
    got = storage_codes(out).astype(np.uint64)
    bad = [i for i in np.flatnonzero(got != expected) if not exact.same_code(target, int(got[i]), int(expected[i]))]
    assert not bad, f"{len(bad)} mismatches {source}->{target} {options}; first: " + ", ".join(
        f"code {int(codes[i]):#x}: got {int(got[i]):#x} expected {int(expected[i]):#x}" for i in bad[:5]
    )


def converter_harness(conversions):
    """``apply(values) -> (len(conversions), n)`` array: the scalar converters
    of one to three conversions of one source, run by one serial loop that
    compiles them together (far cheaper than a parallel kernel each).  Rows
    hold the target's kernel representation (its codes for narrow types)."""
    from numba import njit

    from numbacast.engine.conversion import kernel_dtype, scalar_converter

    fs = [scalar_converter(c) for c in conversions] + [None] * (3 - len(conversions))
    f0, f1, f2 = fs
    count = len(conversions)
    dtype = kernel_dtype(conversions[0].target)
    if conversions[0].stochastic:
        return _random_harness(f0, conversions[0], dtype)

    @njit
    def run(x, out):
        for i in range(x.size):
            v = x[i]
            out[0, i] = f0(v)
            if count > 1:
                out[1, i] = f1(v)
            if count > 2:
                out[2, i] = f2(v)

    def apply(values):
        out = np.empty((count, values.size), dtype)
        run(np.ascontiguousarray(values).reshape(-1).view(kernel_dtype(conversions[0].source)), out)
        return out

    return apply


def _random_harness(f, conversion, dtype):
    """``apply(values, r)``: a stochastic converter with each element's random
    number ``r[i]``, or with ``r`` an int key, the numbers a seed's key gives
    (:func:`numbacast.engine.rounding.random64` of the index)."""
    from numba import njit

    from numbacast.engine.conversion import kernel_dtype
    from numbacast.engine.rounding import random64

    drop = np.uint64(64 - conversion.stochastic_bits)

    @njit
    def given(x, r, out):
        for i in range(x.size):
            out[i] = f(x[i], np.uint64(r[i]))

    @njit
    def drawn(x, key, out):
        for i in range(x.size):
            out[i] = f(x[i], random64(key, np.uint64(i)) >> drop)

    def apply(values, r):
        x = np.ascontiguousarray(values).reshape(-1).view(kernel_dtype(conversion.source))
        out = np.empty(x.size, dtype)
        if isinstance(r, int):
            drawn(x, np.uint64(r), out)
        else:
            given(x, np.ascontiguousarray(r).reshape(-1), out)
        return out

    return apply


def check_harness(values, source, target, rounding, saturates=(True,)):
    """The conversion of ``values`` against the reference, for each of ``saturates``."""
    from numbacast.engine.conversion import Conversion

    s, t = numbacast.resolve(source), numbacast.resolve(target)
    found = [Conversion.make(s, t, saturate, rounding=rounding) for saturate in saturates]
    rows = converter_harness(found)(values)
    codes = values.reshape(-1).view(f"u{values.dtype.itemsize}")
    for conversion, row in zip(found, rows):
        options = dict(saturate=conversion.saturate, rounding=rounding)
        check_against_reference(source, codes, target, options, row.view(f"u{row.dtype.itemsize}"))


def assert_same_error_in_njit(call, name, value, scope):
    """The expression ``call`` of ``name`` raises the same TypeError or
    ValueError, class and message, evaluated in Python with ``name`` =
    ``value`` and compiled in ``@njit`` code as ``lambda <name>: <call>``
    called with it (Numba's TypingError, which would wrap it, is neither)."""
    import pytest
    from numba import njit

    with pytest.raises((TypeError, ValueError)) as python_error:
        eval(call, {**scope, name: value})
    compiled = njit(eval(f"lambda {name}: {call}", scope))
    with pytest.raises((TypeError, ValueError)) as njit_error:
        compiled(value)
    assert (type(njit_error.value), str(njit_error.value)) == (type(python_error.value), str(python_error.value))


def every_16_bit_value(source):
    """Every code of the 16-bit ``source``, as exact float64 values."""
    storage = numbacast.resolve(source).storage
    with np.errstate(invalid="ignore"):  # ml_dtypes warns on its NaNs
        return np.arange(1 << 16, dtype=np.uint16).view(storage).astype(np.float64)


def nvfp4_tie_block():
    """``(x, d)``: one NVFP4 block whose divisor is ``d`` when ``d`` is the
    tensor scale (its block scale is 1.0, from the 6.0 it holds), and whose
    element ``x[1] = 0.75 + 2**-24`` has an exact quotient ``x[1] / d`` just
    below the FLOAT4E2M1 midpoint 0.75 and a float32 quotient on it."""
    d = np.float32(1 + 2**-23)
    x = np.zeros(16, np.float32)
    x[:2] = [6.0, np.float32(0.75) + np.float32(2**-24)]
    return x, d


def onnx_node_cases(*op_types):
    """ONNX's own backend node test cases of the operators ``op_types`` whose
    model is that one node.  Only those operators' case modules are imported
    (each generates its cases as it is imported, into the list that onnx's
    ``collect_testcases`` returns): ``collect_testcases`` imports every
    operator's, which computes all of ONNX's test data (some 12 s a process,
    paid again by each pytest worker while it collects)."""
    import importlib
    import warnings

    from onnx.backend.test.case import node

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the generators' own overflow warnings
        for op_type in op_types:
            importlib.import_module(f"{node.__name__}.{op_type.lower()}")
    return [
        case
        for case in node._NodeTestCases
        if len(case.model.graph.node) == 1 and case.model.graph.node[0].op_type in op_types
    ]


def python_blocks(text):
    """The fenced ``python`` code blocks of a Markdown page's ``text``, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
