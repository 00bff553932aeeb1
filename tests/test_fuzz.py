"""Property-based fuzzing (Hypothesis) of ``numbacast.cast`` and the command line.

Every example either equals the exact oracle (:mod:`exact`) or raises
ValueError/TypeError -- and only the examples that are invalid by design
(a read-only or masked ``out``, a text that is not a number, ...) may raise.
Examples run in a worker process (``fuzz_worker.py``): one that crashes it
(segfault, abort) fails its test, with the example, and the worker restarts.

The examples cover every ONNX numeric type (ml_dtypes ones included) as
source and target, STRING both ways, shapes from 0-d and empty to 8
dimensions, views (transposed, reversed, stepped, Fortran-ordered,
byte-swapped, read-only, unaligned), subclasses (``numpy.matrix``, masked
arrays, ``numpy.memmap``, a plain subclass), every kind of ``out=``, options
(valid and not), ``packed=True``, texts from the grammar of docs/rules.md (rule-string-grammar) and
arbitrary text, and ``.npy``/``.pb`` files -- valid, mutated or random bytes
-- through ``python -m numbacast cast``.

Profiles (environment variable ``NUMBACAST_FUZZ``):

* ``ci`` (the default): a fixed, derandomized set of 540 examples, bounded
  to under two minutes: each test stops running examples once its share of
  the time is spent (on a cold disk cache, where most examples compile a
  kernel, fewer examples run; the number run is printed at the end);
* ``long``: 20 times as many random examples, for a fuzzing session, e.g.
  ``NUMBACAST_FUZZ=long python -m pytest tests/test_fuzz.py``.
"""

import io
import os
import pickle
import select
import subprocess
import sys
import tempfile
import time

import exact
import ml_dtypes
import numpy as np
import onnx
import pytest
from conftest import ROOT
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from onnx import numpy_helper

import numbacast
from numbacast import cli
from numbacast.onnx import tensors

WORKER = ROOT / "tests" / "fuzz_worker.py"

_COMMON = dict(deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
settings.register_profile("numbacast-ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("numbacast-long", **_COMMON)
PROFILE = os.environ.get("NUMBACAST_FUZZ", "ci")
SCALE = {"ci": 1, "long": 20}[PROFILE]


#: Seconds each test may spend running examples in the ci profile (no bound in the long one).
BUDGET = {"numbers": 15.0, "texts": 8.0, "command line": 8.0} if PROFILE == "ci" else {}
_STARTED = {}


def within_budget(name):
    """Whether the test ``name`` may run another example (see :data:`BUDGET`)."""
    started = _STARTED.setdefault(name, time.monotonic())
    if name in BUDGET and time.monotonic() - started > BUDGET[name]:
        event("not run: the time budget is spent")
        return False
    return True


def fuzz(examples):
    """The settings of a fuzz test: ``examples`` examples in the ci profile, 20 times as many in the long one."""
    return settings(settings.get_profile(f"numbacast-{PROFILE}"), max_examples=examples * SCALE)


# -- The worker --------------------------------------------------------------------------------


class Worker:
    """A process running ``fuzz_worker.py``; restarted after a crash."""

    TIMEOUT = 600  # seconds for one example: compiles included

    def __init__(self):
        self.process = None
        self.log = tempfile.TemporaryFile()
        self.examples = 0

    def start(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(WORKER.parent)]))
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env
        )

    def stderr_tail(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-2000:]

    def run(self, job):
        if self.process is not None and self.process.poll() is not None:
            self._discard()
        if self.process is None:
            self.start()
        self.examples += 1
        blob = pickle.dumps(job)
        try:
            self.process.stdin.write(len(blob).to_bytes(8, "little") + blob)
            self.process.stdin.flush()
            head = self._read(8)
            reply = pickle.loads(self._read(int.from_bytes(head, "little")))
        except (BrokenPipeError, EOFError):
            status = self.process.wait()
            self._discard()
            raise AssertionError(f"the worker died (status {status}) on {job!r}:\n{self.stderr_tail()}") from None
        assert reply.get("outcome") != "exception", f"{job!r} raised:\n{reply['traceback']}"
        return reply

    def _read(self, n):
        data = b""
        while len(data) < n:
            ready, _, _ = select.select([self.process.stdout], [], [], self.TIMEOUT)
            if not ready:
                self.process.kill()
                self.process.wait()
                self._discard()
                raise AssertionError(f"the worker hung for {self.TIMEOUT} s")
            chunk = os.read(self.process.stdout.fileno(), n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def _discard(self):
        """Forget a finished process, closing its pipes (no file is left for the collector)."""
        for pipe in (self.process.stdin, self.process.stdout):
            try:
                pipe.close()
            except BrokenPipeError:
                pass
        self.process = None

    def close(self):
        if self.process is not None:
            self.process.stdin.close()
            self.process.wait()
            self._discard()
        self.log.close()


@pytest.fixture(scope="module")
def worker():
    w = Worker()
    yield w
    w.close()
    print(f"\nfuzz ({PROFILE} profile): {w.examples} examples run by the worker")


# -- Strategies ----------------------------------------------------------------------------------

NUMERIC = list(exact.TYPES)
SUB_BYTE = {"int4", "uint4", "int2", "uint2", "float4e2m1", "float6e2m3", "float6e3m2"}
BITS = {"int4": 4, "uint4": 4, "float4e2m1": 4, "int2": 2, "uint2": 2, "float6e2m3": 6, "float6e3m2": 6}
TEXT_KINDS = ["U", ">U", "S", "O"]


def code_range(name):
    if name == "bool":
        return 1
    return (1 << BITS.get(name, exact.STORAGE_BITS[name])) - 1


@st.composite
def shapes(draw):
    ndim = draw(st.integers(0, 8))
    dims, budget = [], 48
    for _ in range(ndim):
        d = draw(st.integers(0, min(4, budget)))
        dims.append(d)
        budget = budget // max(d, 1)
    return tuple(dims)


def interesting_codes(name):
    top = code_range(name)
    edges = sorted(e for e in {0, 1, top, top >> 1, (top >> 1) + 1, top - 1} if 0 <= e <= top)
    return st.one_of(st.sampled_from(edges), st.integers(0, top))


DIGITS = st.text("0123456789", min_size=0, max_size=25)
SPACE = st.text(" \t\n\r\v\f", max_size=2)


@st.composite
def grammar_texts(draw):
    """A text of the grammar of docs/rules.md, rule-string-grammar (and near misses)."""
    sign = draw(st.sampled_from(["", "+", "-"]))
    if draw(st.integers(0, 9)) == 0:
        word = draw(st.sampled_from(["inf", "infinity", "nan", "true", "false"]))
        body = "".join(c.upper() if draw(st.booleans()) else c for c in word)
    else:
        whole, fraction = draw(DIGITS), draw(DIGITS)
        point = draw(st.sampled_from(["", "."]))
        body = whole + point + (fraction if point else "")
        if draw(st.booleans()):
            body += draw(st.sampled_from(["e", "E"])) + draw(st.sampled_from(["", "+", "-"]))
            body += str(draw(st.integers(0, 400)))
    return draw(SPACE) + sign + body + draw(SPACE)


TEXTS = st.one_of(grammar_texts(), st.text(max_size=20))


@st.composite
def views(draw, ndim):
    ops = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["transpose", "reverse", "step", "fortran", "byteswap", "readonly", "unaligned"]))
        if kind == "transpose":
            ops.append((kind, tuple(draw(st.permutations(range(ndim))))))
        elif kind == "reverse":
            ops.append((kind, draw(st.integers(0, 7))))
        elif kind == "step":
            ops.append((kind, draw(st.integers(0, 7)), draw(st.integers(2, 3))))
        else:
            ops.append((kind,))
    return ops


OUT_KINDS = ["none"] * 10 + ["c", "f", "strided", "matrix", "memmap"] * 2 + ["readonly", "masked", "wrong_dtype"]
OUT_KINDS += ["wrong_shape", "list"]
INVALID_OUT = {"readonly", "masked", "wrong_dtype", "wrong_shape", "list"}


@st.composite
def cast_jobs(draw, text=False):
    shape = draw(shapes())
    size = int(np.prod(shape))
    if text:
        source = draw(st.sampled_from(TEXT_KINDS))
        values = {"texts": draw(st.lists(TEXTS, min_size=size, max_size=size))}
        target = draw(st.sampled_from(NUMERIC + ["string"] * 3))
    else:
        source = draw(st.sampled_from(NUMERIC))
        values = {"codes": draw(st.lists(interesting_codes(source), min_size=size, max_size=size))}
        target = draw(st.sampled_from(NUMERIC + ["string"]))
    options = {"saturate": draw(st.booleans()), "round_mode": draw(st.sampled_from(exact.ROUND_MODES))}
    if draw(st.integers(0, 19)) == 7:  # rare (Hypothesis favours the bounds)
        options = draw(st.sampled_from([{"saturate": 2}, {"round_mode": "sideways"}, {"saturate": "yes"}]))
    wrap = draw(st.sampled_from([None, None, None, "matrix", "masked", "memmap", "subclass"]))
    packed = draw(st.integers(0, 7)) == 5
    if packed and draw(st.booleans()):
        target = draw(st.sampled_from(sorted(SUB_BYTE)))
    return dict(
        kind="cast",
        source=source,
        shape=shape,
        views=draw(views(len(shape))),
        wrap=wrap,
        mask=draw(st.lists(st.booleans(), min_size=size, max_size=size)) if wrap == "masked" else [],
        target=target,
        options=options,
        out=draw(st.sampled_from(OUT_KINDS)),
        packed=packed,
        **values,
    )


# -- The oracle ----------------------------------------------------------------------------------


def packed_bytes(codes, bits):
    stream = 0
    for i, code in enumerate(codes):
        stream |= (code & ((1 << bits) - 1)) << (i * bits)
    return list(stream.to_bytes((len(codes) * bits + 7) // 8, "little"))


def expected_cast(job, reply):
    """("error", None) when the job is invalid by design, else ("ok", values)."""
    text_source = job["source"] in TEXT_KINDS
    target, options, masked = job["target"], job["options"], job["wrap"] == "masked"
    valid_options = options.get("saturate", True) in (True, False) and options.get("round_mode", "up") in (
        exact.ROUND_MODES
    )
    if not valid_options or job["out"] in INVALID_OUT or (masked and (job["out"] != "none" or job["packed"])):
        return "error", None
    if job["packed"] and (job["out"] != "none" or target not in SUB_BYTE or text_source):
        return "error", None
    mask = reply["mask"] or [False] * len(reply["plain"])
    if text_source:
        texts = [("0" if m and target != "string" else t).rstrip("\0") for t, m in zip(reply["plain"], mask)]
        if target == "string":
            return "ok", texts
        try:
            return "ok", [exact.parse_code(target, t, **options) for t in texts]
        except ValueError:
            return "error", None
    if target == "string":
        return "ok", [exact.format_code(job["source"], c) for c in reply["plain"]]
    codes = [exact.cast_code(job["source"], c, target, **options) for c in reply["plain"]]
    return "ok", packed_bytes(codes, BITS[target]) if job["packed"] else codes


def check_cast(job, reply):
    outcome, expected = expected_cast(job, reply)
    error = f" ({reply['error']})" if reply["outcome"] == "error" else ""
    event(f"expected {outcome}, got {reply['outcome']}{error}")
    if outcome == "error":
        assert reply["outcome"] == "error", f"an invalid example was accepted: {job!r}"
        assert reply["error"] in ("ValueError", "TypeError")
        return
    assert reply["outcome"] == "ok", f"{reply.get('error')}: {reply.get('message')}"
    target = job["target"]
    got = reply["values"]
    assert len(got) == len(expected)
    if target == "string":
        assert got == expected
        assert reply["dtype"].startswith("<U")
    else:
        bad = [i for i, (g, w) in enumerate(zip(got, expected)) if g != w and not exact.same_code(target, g, w)]
        assert not bad, [(reply["plain"][i] if not job["packed"] else i, got[i], expected[i]) for i in bad[:5]]
    if job["packed"]:
        assert reply["dtype"] == "uint8" and len(reply["result_shape"]) == 1
        return
    assert reply["result_shape"] == reply["shape"]
    if target != "string":
        assert reply["dtype"] == str(numbacast.resolve(target).storage)
    if job["out"] != "none":
        assert reply["is_out"]
    if job["wrap"] == "masked":
        assert reply["type"] == "MaskedArray" and reply["result_mask"] == reply["mask"]
    else:
        assert reply["result_mask"] is None


# -- The tests -----------------------------------------------------------------------------------


@fuzz(220)
@given(job=cast_jobs(text=False))
def test_fuzz_numbers(worker, job):
    if within_budget("numbers"):
        check_cast(job, worker.run(job))


@fuzz(120)
@given(job=cast_jobs(text=True))
def test_fuzz_texts(worker, job):
    if within_budget("texts"):
        check_cast(job, worker.run(job))


# -- The command line ----------------------------------------------------------------------------


@st.composite
def valid_files(draw):
    source = draw(st.sampled_from(NUMERIC))
    shape = draw(shapes())
    size = int(np.prod(shape))
    codes = draw(st.lists(interesting_codes(source), min_size=size, max_size=size))
    t = numbacast.resolve(source)
    array = np.array(codes, f"u{t.storage.itemsize}").reshape(shape).view(t.storage)
    kind = draw(st.sampled_from([".npy", ".pb"]))
    f = io.BytesIO()
    if kind == ".npy":
        cli.write_npy(f, array)
    else:
        cli.write_pb(f, array, "t")
    return kind, f.getvalue()


@st.composite
def mutated(draw, files):
    kind, data = draw(files)
    data = bytearray(data)
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["truncate", "flip", "insert", "delete"]))
        at = draw(st.integers(0, max(len(data), 1)))
        if op == "truncate":
            del data[at:]
        elif op == "flip" and data:
            data[at % len(data)] ^= draw(st.integers(1, 255))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 8))]
    return kind, bytes(data)


FILES = st.one_of(
    mutated(valid_files()),
    valid_files(),
    st.tuples(st.sampled_from([".npy", ".pb"]), st.binary(max_size=300)),
)


def parse_input(kind, data):
    """The array in a file the command line accepted, read independently of numbacast."""
    if kind == ".npy":
        return np.load(io.BytesIO(data), allow_pickle=False)
    tensor = onnx.TensorProto.FromString(data)
    return numpy_helper.to_array(tensor)


def check_cli(job, reply):
    name = "in" + job["kind"]
    event(f"exit status {reply['status']}")
    if reply["status"] == 2:
        err = reply["stderr"]
        assert err.startswith("numbacast: error: ") and err.count("\n") == 1, err
        assert reply["files"] == [name], reply["files"]
        return
    assert reply["status"] == 0, reply
    assert reply["files"] == sorted([name, "out.npy"])
    array = parse_input(job["kind"], job["data"])
    result = np.load(io.BytesIO(reply["output"]))
    assert result.shape == array.shape and result.dtype == numbacast.resolve(job["target"]).storage
    flat = np.ascontiguousarray(array).reshape(-1)
    got = np.ascontiguousarray(result).reshape(-1).view(f"u{result.dtype.itemsize}").tolist()
    if flat.dtype.kind in "OSU":
        texts = [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in flat.tolist()]
        expected = [exact.parse_code(job["target"], t) for t in texts]
    else:
        source = numbacast.resolve(flat.dtype).name
        flat = flat.astype(flat.dtype.newbyteorder("="))
        expected = [exact.cast_code(source, c, job["target"]) for c in flat.view(f"u{flat.dtype.itemsize}").tolist()]
    bad = [i for i, (g, w) in enumerate(zip(got, expected)) if g != w and not exact.same_code(job["target"], g, w)]
    assert not bad, [(got[i], expected[i]) for i in bad[:5]]


@fuzz(200)
@given(file=FILES, target=st.sampled_from(NUMERIC))
def test_fuzz_command_line(worker, file, target):
    kind, data = file
    job = dict(kind=kind, data=data, target=target, flags=[])
    if within_budget("command line"):
        check_cli(job, worker.run(job))


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the killed worker's pipe
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_a_crash_fails_the_example_and_the_worker_restarts(worker):
    with pytest.raises(AssertionError, match="the worker died"):
        worker.run(dict(kind="crash"))
    assert worker.run(dict(kind=".npy", data=b"", target="float", flags=[]))["status"] == 2


ml_dtypes, tensors  # noqa: B018  (imported: numpy reads the ml_dtypes names of .npy headers)
