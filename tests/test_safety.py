"""Issue 14: what a user can do that used to corrupt memory, lose data or hang.

Anything that crashed before the fix runs in a subprocess, so that a
regression fails its test instead of killing the test run.  The disk cache's
healing and trust are tested in test_cache.py, the command line's in
test_cli.py.
"""

import itertools
import json
import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import onnx
import pytest
from conftest import ROOT
from numba import typeof
from onnx import helper

import numbacast
from numbacast import scalar
from numbacast.engine import kernels
from numbacast.engine.conversion import Conversion
from numbacast.onnx import tensors

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")

TESTS = ROOT / "tests"


def run_python(code, tmp_path, timeout=600, **env):
    """Run ``code`` in a fresh interpreter importing this checkout; its last
    stdout line as JSON, with the completed process."""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(TESTS)]), **env)
    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1]), completed


# -- Row 1: np.matrix as out=; the kernel key ---------------------------------------------


def test_matrix_out_on_a_cold_pair_then_warm(tmp_path):
    """matrix.reshape(-1) stays 2-D: the kernel was compiled for a 2-D dst under
    the key of a 1-D one, wrote out of bounds, and served later casts."""
    result, _ = run_python(
        """
        import json, numpy as np, numbacast
        x = np.arange(6.0).reshape(2, 3)
        cold = np.matrix(np.zeros((2, 3), np.float16))
        returned = numbacast.cast(x, "float16", out=cold)
        later = numbacast.cast(np.arange(5.0), "float16")
        warm = np.matrix(np.zeros((2, 3), np.float16))
        numbacast.cast(x, "float16", out=warm)
        print(json.dumps({"same": returned is cold, "cold": np.asarray(cold).tolist(),
                          "warm": np.asarray(warm).tolist(), "later": later.tolist()}))
        """,
        tmp_path,
    )
    assert result == {
        "same": True,
        "cold": [[0, 1, 2], [3, 4, 5]],
        "warm": [[0, 1, 2], [3, 4, 5]],
        "later": [0, 1, 2, 3, 4],
    }


def _array_variants():
    """Arrays of every kind Numba types differently: dtype, ndim, layout,
    read-only, unaligned."""
    base = np.arange(24, dtype=np.float64)
    raw = np.zeros(8 * 24 + 1, np.uint8)
    unaligned = raw[1:].view(np.float64)
    readonly = base.copy()
    readonly.flags.writeable = False
    arrays = [
        base,
        base.astype(np.float32),
        base.astype(np.uint8),
        base.astype(np.uint16),
        base.reshape(4, 6),
        base.reshape(4, 6).T,
        base.reshape(2, 3, 4),
        base[::2],
        base.reshape(4, 6)[:, ::2],
        readonly,
        unaligned,
        np.float64(1.0).reshape(()),
        np.matrix(base.reshape(4, 6)).reshape(-1),
        np.zeros(0),
    ]
    return arrays


def test_kernel_key_distinguishes_every_type_numba_compiles_for():
    """Two calls of one Launcher (one conversion and table) with one key of
    their arrays must have one Numba signature: the key is what picks the
    compiled entry point."""
    conversions = [
        Conversion.make(numbacast.DOUBLE, numbacast.FLOAT16),
        Conversion.make(numbacast.DOUBLE, numbacast.FLOAT8E4M3FN, saturate=True),
        Conversion.make(numbacast.DOUBLE, numbacast.FLOAT8E4M3FN, saturate=False),
        Conversion.make(numbacast.DOUBLE, numbacast.FLOAT8E8M0, round_mode="down"),
        Conversion.make(numbacast.DOUBLE, numbacast.FLOAT8E8M0, round_mode="nearest"),
        None,
    ]
    arrays = _array_variants()
    for table, conversion in itertools.product(arrays[:3], conversions):
        signatures = {}
        for src, dst in itertools.product(arrays, arrays[:6] + arrays[9:]):
            key = (kernels.array_key(src), kernels.array_key(dst))
            signature = tuple(typeof(a) for a in (src, dst, conversion, table))
            assert signatures.setdefault(key, signature) == signature, (key, signature, signatures[key])


def test_kernel_entries_are_kept_by_every_type_numba_compiles_for():
    """Two calls of one kernel through ``split_run``/``take_turns`` with one
    argument key must have one Numba signature (the key picks the entry
    point called without the dispatcher's typing), for every kind of
    argument the engine passes: arrays, Python and NumPy numbers (ints by
    size), tuples of them, conversions and the other constants of compiled
    code, which are typed by value."""
    from numbacast.engine import blocks

    conversions = [
        Conversion.make(numbacast.DOUBLE, numbacast.FLOAT8E4M3FN, saturate=True),
        Conversion.make(numbacast.DOUBLE, numbacast.FLOAT8E4M3FN, saturate=False),
    ]
    values = (
        _array_variants()
        + conversions
        + [blocks.quantize_plan(32, 64), blocks.quantize_plan(32, 65), blocks.quantize_plan(16, 64)]
        + [None, True, np.bool_(True), 1, -(2**63), 2**63, 2**64 - 1, 1.0, np.float32(1), np.int64(1), np.uint64(1)]
        + [(1, 2.0), (1, np.float32(2)), (np.uint64(1), 2.0), (2**63, 2.0), ((1,), 2.0), ()]
    )
    signatures = {}
    for pair in itertools.product(values, repeat=2):
        key = kernels._arguments_key(None, pair)
        signature = tuple(typeof(a) for a in pair)
        assert signatures.setdefault(key, signature) == signature, (pair, signature, signatures[key])


def test_the_kernels_type_every_array_as_numba_does():
    """The type a kernel is compiled for is ``numba.typeof``'s (spelt out
    in the engine so as not to import ``numpy.ma``), for every kind of array."""
    for a in _array_variants() + [np.zeros(3, ml_dtypes.bfloat16).view(np.uint16), np.asfortranarray(np.ones((2, 3)))]:
        assert kernels._numba_type(a) == typeof(a), a


def test_a_launcher_refuses_arrays_that_are_not_flat():
    matrix = np.matrix(np.zeros((2, 3)))
    launcher = kernels.Launcher(Conversion.make(numbacast.DOUBLE, numbacast.DOUBLE), kernels.NO_TABLE)
    with pytest.raises(ValueError, match="1-D C-contiguous"):
        launcher(np.zeros(6), matrix.reshape(-1))


def test_every_kind_of_input_and_out_matches_the_oracle(tmp_path):
    """Every input layout and kind of ``out`` a user can pass, for casts that
    compute, look up a table, and print; in a subprocess, so a kernel that
    writes out of bounds fails this test rather than the run."""
    result, _ = run_python(
        """
        import itertools, json, tempfile
        import exact, ml_dtypes, numpy as np, numbacast

        def expected_codes(x, source, target, options):
            codes = np.ascontiguousarray(x).reshape(-1).view(f"u{x.dtype.itemsize}")
            return [exact.cast_code(source, int(c), target, **options) for c in codes.tolist()]

        def inputs(x):
            yield "c", x
            yield "f", np.asfortranarray(x)
            yield "transposed", x.T
            yield "strided", np.repeat(x, 2, axis=-1)[..., ::2]
            yield "reversed", x[::-1]
            swapped = x.dtype.itemsize > 1 and x.dtype.kind in "fiu"
            yield "byteswapped", x.astype(x.dtype.newbyteorder(">")) if swapped else x
            readonly = x.copy(); readonly.flags.writeable = False
            yield "readonly", readonly
            raw = np.zeros(x.nbytes + 1, np.uint8)[1:].view(x.dtype).reshape(x.shape); raw[...] = x
            yield "unaligned", raw
            yield "matrix", np.matrix(x)
            yield "masked-none", np.ma.masked_array(x)

        def outs(shape, dtype):
            yield "none", None
            yield "c", np.zeros(shape, dtype)
            yield "f", np.asfortranarray(np.zeros(shape, dtype))
            yield "strided", np.zeros(shape[:-1] + (2 * shape[-1],), dtype)[..., ::2]
            yield "matrix", np.matrix(np.zeros(shape, dtype))
            path = tempfile.mktemp(suffix=".bin")
            yield "memmap", np.memmap(path, dtype=dtype, mode="w+", shape=shape)

        rng = np.random.default_rng(7)
        pairs = [
            ("float", np.float32, "float8e5m2", dict(saturate=False)),
            ("float16", np.float16, "int4", {}),
            ("bfloat16", ml_dtypes.bfloat16, "float8e4m3fn", {}),
            ("int8", np.int8, "float16", {}),
            ("double", np.float64, "float8e8m0", dict(round_mode="nearest")),
            ("uint16", np.uint16, "bfloat16", {}),
        ]
        bad = []
        count = 0
        for source, dtype, target, options in pairs:
            values = (rng.standard_normal((3, 4)) * 300).astype(dtype)
            storage = numbacast.resolve(target).storage
            for (iname, x), (oname, out) in itertools.product(inputs(values), outs((3, 4), storage)):
                if x.shape != (3, 4) and out is not None:
                    out = np.zeros(x.shape, storage)
                count += 1
                if iname == "masked-none" and out is not None:
                    try:
                        numbacast.cast(x, target, out=out, **options)
                        bad.append([source, target, iname, oname, "accepted"])
                    except TypeError:
                        pass
                    continue
                result = numbacast.cast(x, target, out=out, **options)
                if out is not None and result is not out:
                    bad.append([source, target, iname, oname, "not out"])
                    continue
                got = np.asarray(result).reshape(-1).view(f"u{result.dtype.itemsize}").tolist()
                plain = np.asarray(x)
                want = expected_codes(plain.astype(plain.dtype.newbyteorder("=")), source, target, options)
                if [int(g) for g in got] != want and not all(exact.same_code(target, g, w) for g, w in zip(got, want)):
                    bad.append([source, target, iname, oname, got[:4], want[:4]])
        print(json.dumps({"count": count, "bad": bad}))
        """,
        tmp_path,
    )
    assert result["bad"] == [] and result["count"] == 6 * 10 * 6


# -- Rows 7 and 8: masked arrays -------------------------------------------------------------


def test_a_masked_input_gives_a_masked_result_with_its_mask():
    x = np.ma.masked_array([1e6, 2.0, -3.0], mask=[True, False, False])
    result = numbacast.cast(x, "float8e4m3fn")
    assert isinstance(result, np.ma.MaskedArray) and result.dtype == ml_dtypes.float8_e4m3fn
    assert result.mask.tolist() == [True, False, False]
    assert result.data.astype(np.float32).tolist() == [448.0, 2.0, -3.0]  # as x.astype would: the data cast
    assert result.mask is not x.mask  # a copy
    texts = np.ma.masked_array(["not a number", "2.5"], mask=[True, False])
    parsed = numbacast.cast(texts, "float")
    assert parsed.mask.tolist() == [True, False] and parsed[1] == 2.5  # the masked text is not read
    printed = numbacast.cast(np.ma.masked_array([1.5, 2.0], mask=[False, True]), "string")
    assert printed.mask.tolist() == [False, True] and printed[0] == "1.5"
    plain = numbacast.cast(np.ma.masked_array([1.0, 2.0]), "int8")
    assert isinstance(plain, np.ma.MaskedArray) and not plain.mask.any()


def test_masked_arrays_where_a_mask_cannot_be_kept_are_refused():
    x = np.ma.masked_array([1.0, 2.0], mask=[True, False])
    with pytest.raises(TypeError, match="packed=True cannot keep a mask"):
        numbacast.cast(x, "int4", packed=True)
    with pytest.raises(TypeError, match="out= cannot keep the mask"):
        numbacast.cast(x, "float16", out=np.zeros(2, np.float16))
    with pytest.raises(TypeError, match="masked"):
        numbacast.pack(np.ma.masked_array(np.zeros(2, ml_dtypes.int4), mask=[1, 0]))
    with pytest.raises(TypeError, match="masked"):
        numbacast.onnx.cast(x, onnx.TensorProto.FLOAT16)


def test_a_masked_out_is_refused_on_a_cold_and_a_warm_pair(tmp_path):
    result, _ = run_python(
        """
        import json, numpy as np, numbacast
        x = np.arange(4.0)
        def attempt():
            try:
                numbacast.cast(x, "float16", out=np.ma.zeros(4, np.float16))
                return "accepted"
            except Exception as error:
                return type(error).__name__
        cold = attempt()
        numbacast.cast(x, "float16")
        print(json.dumps([cold, attempt()]))
        """,
        tmp_path,
    )
    assert result == ["TypeError", "TypeError"]


# -- Row 4: fork after a parallel cast ---------------------------------------------------------

FORK_PROBE = """
    import json, multiprocessing as mp, os
    import numba, numpy as np, numbacast
    from numbacast.engine import kernels
    x = np.arange(4 * kernels.PARALLEL_MIN, dtype=np.float64) / 7
    try:
        expected = numbacast.cast(x, "float8e4m3fn").view(np.uint8)  # parallel, in the parent
    except ValueError as error:  # the threading layer asked for is not available
        print(json.dumps({"skip": str(error)}))
        raise SystemExit
    numbacast.cast(np.array([1.5, 2.0]), "string")  # a text kernel too

    def job(i, small=False):
        n, n_texts = (16, 16) if small else (x.size, kernels.PARALLEL_MIN)
        same = np.array_equal(numbacast.cast(x[:n], "float8e4m3fn").view(np.uint8), expected[:n])
        texts = numbacast.cast(np.full(n_texts, 1.5, np.float32), "string")
        packed = numbacast.cast(x[:n], "int4", packed=True)
        return bool(same and (texts == "1.5").all() and packed.size == n // 2), kernels._ProcessState.serial_only

    job(0, small=True)  # the serial loops the children take, compiled here once rather than in each child

    pid = os.fork()
    if pid == 0:
        os._exit(0 if job(0)[0] else 3)
    _, status = os.waitpid(pid, 0)
    with mp.get_context("fork").Pool(2) as pool:
        results = pool.map(job, range(4))
    print(json.dumps({"layer": numba.threading_layer(), "child": os.waitstatus_to_exitcode(status),
                      "pool": results, "parent": job(0)}))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("layer", ["omp", "workqueue"])
def test_fork_after_a_parallel_cast(tmp_path, layer):
    """GNU OpenMP ended every forked child that started a parallel region after
    its parent had run one, and Pool.map waited for them forever."""
    result, completed = run_python(FORK_PROBE, tmp_path, timeout=300, NUMBA_THREADING_LAYER=layer)
    if "skip" in result:
        pytest.skip(f"the {layer} threading layer is not available: {result['skip']}")
    assert result["layer"] == layer and result["child"] == 0
    assert [ok for ok, _ in result["pool"]] == [True] * 4 and result["parent"] == [True, False]
    assert all(serial == (layer == "omp") for _, serial in result["pool"])  # workqueue children keep their pool
    assert "fork()" not in completed.stderr


# -- Row 9: Ctrl-C during a first compilation ------------------------------------------------

INTERRUPT_PROBE = """
    import json, os, signal
    from numba.core import codegen

    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, even if started in the background
    original = codegen.CPUCodeLibrary._object_compiled_hook.__func__
    sent = []

    def hook(cls, ll_module, buf):  # LLVM calls this back through ctypes during a compilation
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, as it arrives in the middle of the callback
            for _ in range(100):
                pass
        return original(cls, ll_module, buf)

    codegen.CPUCodeLibrary._object_compiled_hook = classmethod(hook)
    import numpy as np, numbacast

    x = np.array([1.0, 464.0, 1e9], np.float32)
    try:
        numbacast.cast(x, "float8e5m2fnuz", saturate=False)
        outcome = "finished"
    except KeyboardInterrupt:
        outcome = "KeyboardInterrupt"
    again = numbacast.cast(x, "float8e5m2fnuz", saturate=False).view(np.uint8).tolist()
    print(json.dumps({"sent": bool(sent), "outcome": outcome, "again": again}))
"""


def test_ctrl_c_during_a_first_compilation_is_not_lost(tmp_path):
    result, completed = run_python(INTERRUPT_PROBE, tmp_path, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    assert result == {"sent": True, "outcome": "KeyboardInterrupt", "again": [0x40, 0x63, 0x80]}
    assert "Exception ignored" not in completed.stderr


def test_interrupts_deferred_delivers_after_the_block():
    import signal

    from numbacast.engine.interrupts import interrupts_deferred

    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)  # ignored when run in the background
    try:
        reached = False
        with pytest.raises(KeyboardInterrupt):
            with interrupts_deferred():
                signal.raise_signal(signal.SIGINT)
                reached = True
        assert reached and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, inherited)


# -- Row 10: messages that were NumPy's, AttributeError, or silent cuts -------------------------


def test_unpack_to_string_says_what_to_do():
    with pytest.raises(TypeError, match="numeric types only, not to STRING"):
        numbacast.unpack(b"\x12\x34", "int4", 4, to="string")


@pytest.mark.parametrize("tensor", [b"abc", "x", None, np.zeros(3)])
def test_cast_tensor_of_something_else_is_a_type_error(tensor):
    with pytest.raises(TypeError, match="expected an onnx.TensorProto"):
        tensors.cast_tensor(tensor, 1)
    with pytest.raises(TypeError, match="expected an onnx.TensorProto"):
        tensors.tensor_to_array(tensor)


@pytest.mark.parametrize(
    "data_type, values, bad",
    [
        (onnx.TensorProto.INT4, [0x21, 256], 256),
        (onnx.TensorProto.UINT2, [-1], -1),
        (onnx.TensorProto.FLOAT16, [15360, 70000], 70000),
        (onnx.TensorProto.INT8, [127, -129], -129),
        (onnx.TensorProto.BOOL, [1, 2], 2),
    ],
)
def test_int32_data_out_of_range_is_refused(data_type, values, bad):
    tensor = onnx.TensorProto(name="t", data_type=data_type, dims=[len(values)])
    tensor.int32_data.extend(values)
    if data_type in (onnx.TensorProto.INT4, onnx.TensorProto.UINT2):  # one packed byte an entry
        tensor.dims[:] = [len(values) * (2 if data_type == onnx.TensorProto.INT4 else 4)]
    with pytest.raises(ValueError, match=f"= {bad}, outside"):
        tensors.tensor_to_array(tensor)
    with pytest.raises(ValueError, match=f"= {bad}, outside"):
        tensors.cast_tensor(tensor, onnx.TensorProto.FLOAT)


def test_tensors_with_negative_or_inconsistent_dims_are_refused():
    tensor = helper.make_tensor("t", onnx.TensorProto.FLOAT, [2, 2], [1.0, 2.0, 3.0, 4.0])
    tensor.dims[:] = [2, -1]
    with pytest.raises(ValueError, match="cannot be negative"):
        tensors.tensor_to_array(tensor)
    tensor.dims[:] = [3]
    with pytest.raises(ValueError, match="needs 3 entries of float_data, not 4"):
        tensors.tensor_to_array(tensor)
    raw = helper.make_tensor("r", onnx.TensorProto.FLOAT, [2], np.ones(2, np.float32).tobytes(), raw=True)
    raw.dims[:] = [5]
    with pytest.raises(ValueError, match="needs 20 bytes of raw_data, not 8"):
        tensors.tensor_to_array(raw)


def test_external_data_is_not_read_from_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "data.bin").write_bytes(np.arange(3, dtype=np.float32).tobytes())
    monkeypatch.chdir(tmp_path)
    tensor = onnx.TensorProto(name="e", data_type=onnx.TensorProto.FLOAT, dims=[3])
    tensor.data_location = onnx.TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value="data.bin")
    with pytest.raises(ValueError, match="external file"):
        tensors.tensor_to_array(tensor)
    loaded = tensors.load_external_data(onnx.TensorProto.FromString(tensor.SerializeToString()), str(tmp_path))
    assert tensors.tensor_to_array(loaded).tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("code", [256, 300, -1, 2**40])
def test_scalar_decode_refuses_codes_outside_the_storage(code):
    with pytest.raises(ValueError, match="takes a storage code from 0 to 255"):
        scalar.decode_float8e4m3fn(code)
    assert scalar.decode_float8e4m3fn(255) != scalar.decode_float8e4m3fn(255)  # NaN, still decoded
    assert scalar.decode_float16(65535) != scalar.decode_float16(65535)
    with pytest.raises(ValueError, match="0 to 65535"):
        scalar.decode_float16(65536)


def test_a_kernel_helper_called_from_python_is_a_type_error_not_a_crash():
    """The helpers compiled into the kernels have no CPython wrapper (they
    compile faster): a call from Python says so instead of jumping nowhere."""
    from numbacast.engine.rounding import random64
    from numbacast.text.parsing import scan

    with pytest.raises(TypeError, match=r"scan\(\) is compiled into numbacast's kernels: call it from @njit code"):
        scan(np.zeros(4, np.uint32), False)
    with pytest.raises(TypeError, match="random64"):
        random64(np.uint64(1), np.uint64(2))


def test_a_helper_has_no_machine_code_of_its_own_and_works_inside_its_callers():
    """A helper's code is only linked into the kernels that call it, which
    optimise and emit it; its errors still reach the caller's caller."""
    from numba import njit

    from numbacast.engine.cache import helper_njit

    @helper_njit
    def half(x):
        if x < 0:
            raise ValueError("half takes x >= 0, not", x)
        return x / 2

    @njit
    def caller(x):
        return half(x) + 1.0

    assert caller(3.0) == 2.5
    with pytest.raises(ValueError, match="half takes x >= 0"):
        caller(-1.0)
    compiled = half.overloads[half.signatures[0]]
    assert compiled.library.get_pointer_to_function(compiled.fndesc.mangled_name) == 0
    called = caller.overloads[caller.signatures[0]]
    assert called.library.get_pointer_to_function(called.fndesc.mangled_name) != 0


LINKED_ONLY_PROBE = """
import json
import numpy as np
from numba import njit, prange
import numbacast
from numbacast.engine import linking
made = []
numba_made = linking.linked_only_library
def recorded(codegen, name):
    made.append(name)
    return numba_made(codegen, name)
linking.linked_only_library = recorded
codes = numbacast.cast(np.full(1 << 16, 448.0, np.float32), "float8e4m3fn")
for_kernel = list(made)
made.clear()
@njit(parallel=True)
def total(x):
    s = 0.0
    for i in prange(x.size):
        s += x[i]
    return s
print(json.dumps({"codes": sorted(set(codes.view(np.uint8).tolist())), "kernel": for_kernel,
                  "user": made, "total": total(np.arange(100000.0))}))
"""


def test_a_parallel_kernels_loop_is_linked_only_and_a_users_parallel_code_is_not(tmp_path):
    """The body of a numbacast parallel kernel's ``prange`` loop and the two
    wrappers that hand it to the thread pool are compiled linked-only (the
    kernel optimises and emits them); a user's own ``parallel=True``
    function, compiled in the same process, is compiled as Numba does."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))  # empty: the kernel compiles
    result = subprocess.run([sys.executable, "-c", LINKED_ONLY_PROBE], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    assert probe["codes"] == [0x7E]
    # (with numbacast's helpers the kernel calls, whose libraries are linked-only
    # too, and made here too once the engine is imported after the probe's hook)
    parfor_parts = [name for name in probe["kernel"] if "gufunc" in name.lower()]
    assert sum("numba_parfor_gufunc" in name for name in parfor_parts) == 1
    assert "parallelgufuncwrapper" in parfor_parts and len(parfor_parts) == 3
    assert probe["user"] == [] and probe["total"] == 4999950000.0


def test_kernels_type_operators_on_numbers_without_numpys_array_rules(monkeypatch):
    """While a kernel compiles, Numba's template typing a binary operator by
    NumPy's ufunc rules rejects two numbers before looking up the ufunc's
    loops (it rejects them after the lookup otherwise); with an array it
    gives the types it gives outside a kernel, and outside a kernel (a
    user's code) it works as Numba's."""
    import operator

    from numba import types
    from numba.core.registry import cpu_target
    from numba.core.typing import npydecl

    from numbacast.engine.scalar_operators import scalar_operators_typed_directly

    lookups = []
    numba_lookup = npydecl.Numpy_rules_ufunc.generic

    def recorded(self, args, kws):
        lookups.append(args)
        return numba_lookup(self, args, kws)

    monkeypatch.setattr(npydecl.Numpy_rules_ufunc, "generic", recorded)
    (add,) = [c for c in npydecl.NumpyRulesArrayOperator.__subclasses__() if getattr(c, "key", None) is operator.add]
    template = add(cpu_target.typing_context)
    numbers, with_array = (types.int64, types.uint32), (types.float32[::1], types.int64)
    assert template.generic(numbers, {}) is None and lookups == [numbers]
    outside = template.generic(with_array, {})
    lookups.clear()
    with scalar_operators_typed_directly():
        assert template.generic(numbers, {}) is None and lookups == []
        assert template.generic(with_array, {}) == outside and lookups == [with_array]
    assert isinstance(outside.return_type, types.Array)


def test_the_text_reader_compiles_its_scan_once_for_floats_and_integers():
    """A helper is typed without the literal values of its arguments: the
    integer reader's ``scan(row, False)`` and the float reader's
    ``scan(row, words)`` share one compilation of it and of all it calls."""
    from numba import njit, types

    from numbacast.text.parsing import read_float, read_integer, scan

    @njit
    def read_both(row, no):  # compiled here whatever the disk cache holds; literals and a variable
        return read_integer(row, 32, True), read_float(row, False, no)

    row = np.array([ord(c) for c in "-0.000000000000000000000000012e28"], np.uint32)
    (code, ok), (value, kind) = read_both(row, False)
    assert ok and np.int64(code) - (1 << 32) == -120 and value == -120.0
    assert scan.signatures
    for signature in scan.signatures:
        assert not any(isinstance(t, types.Literal) for t in signature), signature


def test_numba_disable_jit_is_a_clear_error():
    """With NUMBA_DISABLE_JIT=1 the import works and a cast says why it cannot run.
    (docs/safety.md, "Compiled kernels")"""
    probe = textwrap.dedent("""
        import numpy as np
        import numbacast
        for call in (lambda: numbacast.cast(np.ones(3, np.float32), "float8e4m3fn"),
                     lambda: numbacast.mx.quantize(np.ones(32, np.float32), "mxfp8_e4m3")):
            try:
                call()
            except RuntimeError as error:
                print(error)
    """)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all("NUMBA_DISABLE_JIT is set: unset it" in line for line in lines), done.stdout
