"""The process that runs test_fuzz.py's examples, so that one that crashes
(a segfault, an abort) fails its test instead of killing the test run.

It reads jobs from stdin and writes results to stdout, each a pickle preceded
by its length (8 bytes, little-endian).  A job describes its arrays (codes,
shape, views, subclass, ``out``) rather than holding them, so that subclasses
and views the parent could not send are built here.  Anything else the
process prints goes to stderr.
"""

import contextlib
import io
import os
import pickle
import sys
import tempfile
import traceback

import ml_dtypes
import numpy as np

import numbacast
from numbacast import cli


class Tagged(np.ndarray):
    """An ndarray subclass with nothing special about it."""


def storage(name):
    return numbacast.resolve(name).storage


def build_input(job, folder):
    """(x, plain, mask): the input of a cast job, its values as a plain list in
    C order (codes, or texts) and its mask in C order (or None)."""
    source = job["source"]
    if source in ("U", ">U", "S", "O"):
        texts = np.array(job["texts"], dtype=object).reshape(job["shape"])
        if source == "O":
            x = texts
        elif source == "S":
            x = np.array([t.encode("utf-8") for t in texts.reshape(-1)], dtype="S").reshape(texts.shape)
        else:
            x = np.array(texts.reshape(-1).tolist(), dtype=str).reshape(texts.shape)
            if source == ">U":
                x = x.astype(x.dtype.newbyteorder(">"))
    else:
        itemsize = storage(source).itemsize
        codes = np.array(job["codes"], dtype=f"u{itemsize}").reshape(job["shape"])
        x = codes.view(storage(source))
    for op in job["views"]:
        kind = op[0]
        if kind == "transpose":
            x = x.transpose(op[1])
        elif kind == "reverse" and x.ndim:
            x = np.flip(x, op[1] % x.ndim)
        elif kind == "step" and x.ndim:
            index = [slice(None)] * x.ndim
            index[op[1] % x.ndim] = slice(None, None, op[2])
            x = x[tuple(index)]
        elif kind == "fortran":
            x = x.copy(order="F")  # not asfortranarray, which makes a 0-d array 1-d
        elif kind == "byteswap" and x.dtype.kind in "fiuU" and x.dtype.itemsize > 1 and x.dtype.isnative:
            x = x.astype(x.dtype.newbyteorder(">" if sys.byteorder == "little" else "<"))
        elif kind == "readonly":
            x = x.copy() if not x.flags.writeable else x
            x.flags.writeable = False
        elif kind == "unaligned" and x.dtype.kind != "O":
            raw = np.zeros(x.nbytes + 1, np.uint8)[1:].view(x.dtype).reshape(x.shape)
            raw[...] = x
            x = raw
    wrap = job["wrap"]
    mask = None
    if wrap == "matrix" and x.ndim == 2:
        x = np.matrix(x)
    elif wrap == "masked":
        mask = np.array(job["mask"][: x.size] + [False] * max(0, x.size - len(job["mask"])), bool).reshape(x.shape)
        x = np.ma.masked_array(x, mask=mask)
    elif wrap == "memmap" and x.dtype.kind != "O" and x.size:
        m = np.memmap(os.path.join(folder, "input.bin"), dtype=x.dtype, mode="w+", shape=x.shape)
        m[...] = x
        x = m
    elif wrap == "subclass":
        x = x.view(Tagged)
    plain_array = np.ascontiguousarray(np.asarray(x))
    if plain_array.dtype.kind in "USO":
        plain = [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in plain_array.reshape(-1).tolist()]
    else:
        plain_array = plain_array.astype(plain_array.dtype.newbyteorder("="))
        plain = plain_array.reshape(-1).view(f"u{plain_array.dtype.itemsize}").tolist()
    return x, plain, None if mask is None else mask.reshape(-1).tolist()


def build_out(kind, shape, target, folder):
    dtype = np.dtype("<U96") if target == "string" else storage(target)  # FLOAT8E8M0 prints up to 94
    if kind == "none":
        return None
    if kind == "c":
        return np.zeros(shape, dtype)
    if kind == "f":
        return np.zeros(shape, dtype, order="F")
    if kind == "strided":
        return np.zeros(shape + (2,), dtype)[..., 0]
    if kind == "matrix":
        return np.matrix(np.zeros(shape, dtype)) if len(shape) == 2 else np.zeros(shape, dtype)
    if kind == "memmap":
        if not int(np.prod(shape)):
            return np.zeros(shape, dtype)
        return np.memmap(os.path.join(folder, "out.bin"), dtype=dtype, mode="w+", shape=shape)
    if kind == "readonly":
        out = np.zeros(shape, dtype)
        out.flags.writeable = False
        return out
    if kind == "masked":
        return np.ma.zeros(shape, dtype)
    if kind == "wrong_dtype":
        return np.zeros(shape, "S96" if target == "string" else (np.int8 if dtype != np.int8 else np.uint8))
    if kind == "wrong_shape":
        return np.zeros(shape + (1,), dtype)
    if kind == "list":
        return np.zeros(shape, dtype).tolist()
    raise ValueError(kind)


def run_cast(job):
    with tempfile.TemporaryDirectory() as folder:
        x, plain, mask = build_input(job, folder)
        out = build_out(job["out"], x.shape, job["target"], folder)
        reply = {"plain": plain, "mask": mask, "shape": list(x.shape)}
        try:
            result = numbacast.cast(x, job["target"], out=out, packed=job["packed"], **job["options"])
        except (ValueError, TypeError) as error:
            reply.update(outcome="error", error=type(error).__name__, message=str(error))
            return reply
        values = np.asarray(result)
        reply.update(
            outcome="ok",
            is_out=out is not None and result is out,
            type=type(result).__name__,
            dtype=values.dtype.str if values.dtype.kind == "U" else str(values.dtype),
            result_shape=list(values.shape),
            result_mask=np.ma.getmaskarray(result).reshape(-1).tolist() if np.ma.isMaskedArray(result) else None,
        )
        flat = np.ascontiguousarray(values).reshape(-1)
        reply["values"] = flat.tolist() if flat.dtype.kind == "U" else flat.view(f"u{flat.dtype.itemsize}").tolist()
        return reply


def run_cli(job):
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "in" + job["kind"])
        target = os.path.join(folder, "out.npy")
        with open(source, "wb") as f:
            f.write(job["data"])
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = cli.main(["cast", source, "--to", job["target"], "-o", target, *job["flags"]])
        output = None
        if os.path.exists(target):
            with open(target, "rb") as f:
                output = f.read()
        return {"status": status, "stderr": err.getvalue(), "output": output, "files": sorted(os.listdir(folder))}


def main():
    try:
        import resource

        limit = 4 << 30  # a runaway allocation fails here, with MemoryError, not the machine
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints go to stderr
    sys.stdout = sys.stderr
    requests = sys.stdin.buffer
    assert ml_dtypes  # imported: numpy reads the ml_dtypes names of .npy headers
    while True:
        head = requests.read(8)
        if len(head) < 8:
            return
        job = pickle.loads(requests.read(int.from_bytes(head, "little")))
        if os.environ.get("FUZZ_LOG"):
            with open(os.environ["FUZZ_LOG"], "a") as log:
                log.write(repr(job) + "\n")
        if job["kind"] == "crash":  # test_fuzz checks that a crash is reported
            os.abort()
        try:
            reply = run_cli(job) if job["kind"] != "cast" else run_cast(job)
        except BaseException:  # anything else is a finding: report it, keep serving
            reply = {"outcome": "exception", "traceback": traceback.format_exc()}
        blob = pickle.dumps(reply)
        protocol.write(len(blob).to_bytes(8, "little") + blob)
        protocol.flush()


if __name__ == "__main__":
    main()
