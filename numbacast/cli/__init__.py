"""The command line, ``python -m numbacast``.

* ``python -m numbacast`` prints the demo table;
* ``python -m numbacast cast IN --to TYPE [--saturate 0|1] [--round-mode
  up|down|nearest] [--opset N] -o OUT`` casts the tensor in IN (``.npy``, or
  ``.pb`` for an ONNX TensorProto) as the ONNX Cast operator of that opset
  does, and writes it to OUT (``.npy`` or ``.pb``);
* ``python -m numbacast types`` prints which types each operator version takes;
* ``python -m numbacast compile (--to TYPES | --from TYPES | --all)``
  compiles conversions into the disk cache ahead of time, in parallel
  processes (:mod:`numbacast.cli.compile`);
* ``python -m numbacast bench ...`` runs the bench harness of a checkout of
  the repository (``benchmarks/harness/bench.py``).

Errors are one line on stderr and exit status 2.  OUT is written to a
temporary file in its folder and renamed when complete, so a failed run
leaves no partial file; the temporary file is named
``.numbacast-partial-<host>-<pid>-<random>.tmp``, and one left behind by a
killed run is removed by the next run writing into that folder.  OUT is never
IN (nor a link to it), and an existing OUT is kept unless ``--force``.  Inputs
of 100 MB or more are cast in chunks, with a progress bar on stderr.

Input files are checked before they are cast: an empty, cut short or
malformed file is an error naming it, as are negative dimensions or dims that
do not match the data.  A TensorProto whose data is in an external file is
refused unless ``--external-data`` is given; then that file is read only from
IN's own folder, named by a bare file name (no ``..``, no absolute path, not
a link).
"""

import argparse
import importlib
import importlib.util
import os
import re
import socket
import sys
import tempfile
import warnings

import numpy as np

from ..engine.rounding import ROUND_MODES
from ..formats.registry import resolve
from ..onnx import operators, versions
from . import compile as compile_command
from . import demo

#: Inputs of at least this many bytes are cast in chunks under a progress bar.
PROGRESS_MIN_BYTES = 100 * 2**20

#: Bytes of input cast at a time.
CHUNK_BYTES = 16 * 2**20

FILE_KINDS = (".npy", ".pb")

#: The first bytes of every .npy file.
NPY_MAGIC = b"\x93NUMPY"

#: The bench harness, in the repository's benchmarks/ folder.
BENCH_MODULE = "benchmarks.harness.bench"


class CommandError(Exception):
    """A failure of the command line, reported as one line and exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise CommandError(f"{self.prog}: {message}")


def build_parser():
    parser = _Parser(
        prog="python -m numbacast",
        description="The ONNX Cast operator for NumPy arrays and ONNX tensors. "
        "Without a command: print the demo table.",
    )
    commands = parser.add_subparsers(dest="command", metavar="{cast,types,compile,bench}", parser_class=_Parser)
    cast = commands.add_parser(
        "cast",
        help="cast a .npy or .pb tensor to a type, as the ONNX Cast operator",
        description="Cast the tensor in IN as the ONNX Cast operator in force at --opset "
        "does, and write it to OUT. IN and OUT are .npy files or .pb files "
        "(ONNX TensorProto; packed for the sub-byte types).",
    )
    cast.add_argument("input", metavar="IN", help="a .npy or .pb file")
    cast.add_argument(
        "--to",
        required=True,
        metavar="TYPE",
        help="the target type: an ONNX type name (FLOAT, float8e4m3fn, ...) or id (1, 17, ...)",
    )
    cast.add_argument("--saturate", type=int, choices=(0, 1), help="the saturate attribute (Cast-19 on; default 1)")
    cast.add_argument("--round-mode", choices=ROUND_MODES, help="the round_mode attribute (Cast-24 on; default up)")
    cast.add_argument(
        "--opset",
        type=int,
        default=versions.LATEST_OPSET,
        help=f"the opset whose Cast version applies (default {versions.LATEST_OPSET})",
    )
    cast.add_argument("-o", "--output", required=True, metavar="OUT", help="a .npy or .pb file")
    cast.add_argument("--force", action="store_true", help="replace OUT if it exists (never IN itself)")
    cast.add_argument(
        "--external-data",
        action="store_true",
        help="read the external data of a .pb TensorProto, from a file in IN's folder only",
    )
    commands.add_parser("types", help="print the types each Cast and CastLike version takes")
    add_compile_parser(commands)
    commands.add_parser("bench", help="time numbacast (from a checkout of the repository)", add_help=False)
    return parser


def main(argv=None):
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv:
        demo.main()
        return 0
    try:
        if argv[0] == "bench":
            return run_bench(argv[1:])
        args = build_parser().parse_args(argv)
        if args.command == "cast":
            return cast_file(args)
        if args.command == "types":
            print(types_table())
            return 0
        if args.command == "compile":
            return compile_command.main(args, None if args.quiet else lambda label: ProgressBar(label, sys.stderr))
        raise CommandError(f"unknown command {args.command!r}")
    except BrokenPipeError:  # the reader of the output went away (| head): stop quietly, as Python's docs advise
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # a stdout without a file descriptor
            pass
        return 1
    except (CommandError, ValueError, TypeError, OSError, ImportError) as error:
        message = " ".join(str(error).split())
        print(f"numbacast: error: {message}", file=sys.stderr)
        return 2


def add_compile_parser(commands):
    compile_parser = commands.add_parser(
        "compile",
        help="compile conversions into the disk cache ahead of time",
        description="Compile the conversions named (every option of each) into the disk cache, in parallel "
        "processes, so that later processes load them instead of compiling: a step for a Docker image or a CI "
        "warm-up. Run it with the NUMBA_CACHE_DIR (and NUMBA_CPU_NAME) the casts will use.",
    )
    compile_parser.add_argument("--to", metavar="TYPES", help="target types, comma-separated (default: every number)")
    compile_parser.add_argument(
        "--from", dest="source", metavar="TYPES", help="source types, comma-separated (default: every number)"
    )
    compile_parser.add_argument("--all", action="store_true", help="every pair of types (STRING too), every option")
    compile_parser.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: one per core)")
    compile_parser.add_argument("--quiet", action="store_true", help="no progress bar")


def run_bench(argv):
    """``bench``: the bench harness of the repository's ``benchmarks/`` folder.

    The harness is tooling, not part of the installed package: it runs from a
    checkout of the repository (the current directory is on ``sys.path`` under
    ``python -m``)."""
    try:
        found = importlib.util.find_spec(BENCH_MODULE) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        raise CommandError(
            "the bench runs from a checkout of the numbacast repository: run "
            "'python -m numbacast bench' in its top folder (it needs benchmarks/harness)"
        )
    return importlib.import_module(BENCH_MODULE).main(argv)


def types_table():
    """The table of the types (rows) that each Cast and CastLike version (columns) takes."""
    cast_versions = {op: versions.VERSIONS[op] for op in ("Cast", "CastLike")}
    labels = {name: f"{name} ({versions.TYPE_IDS[name]})" for name in versions.type_names()}
    width = max(len(label) for label in labels.values())

    def row(first, groups):
        return first.ljust(width) + "".join("  |" + "".join(cell.rjust(3) for cell in cells) for cells in groups)

    lines = [
        "The types each operator version takes, as input and as output (x):",
        "",
        " " * width + "".join("  |" + op.center(3 * len(vs)) for op, vs in cast_versions.items()),
        row("type (id)", [[str(v) for v in vs] for vs in cast_versions.values()]),
    ]
    for name, label in labels.items():
        lines.append(
            row(
                label,
                [["x" if versions.INTRODUCED[name] <= v else "." for v in vs] for vs in cast_versions.values()],
            )
        )
    return "\n".join(lines)


def parse_type(text):
    """The ONNX name of the type called ``text``: a name in any case, or an id."""
    key = text.strip()
    if key.isdigit():
        return versions.name_of_id(int(key))
    if key.upper() in versions.TYPE_IDS:
        return key.upper()
    name = resolve(key).onnx_name
    if name not in versions.TYPE_IDS:
        raise CommandError(f"{text} is not an ONNX type: the cast command casts as the ONNX Cast operator does")
    return name


def file_kind(path):
    kind = os.path.splitext(path)[1].lower()
    if kind not in FILE_KINDS:
        raise CommandError(f"{path}: unknown file kind {kind or '(none)'!r}; IN and OUT must end in .npy or .pb")
    return kind


def cast_file(args):
    """``cast``: read IN, cast it as Cast at ``--opset``, write OUT."""
    source_kind, target_kind = file_kind(args.input), file_kind(args.output)
    spec = versions.in_force("Cast", args.opset)
    target = parse_type(args.to)
    to = target if spec.version < versions.TO_AS_ID_SINCE else versions.TYPE_IDS[target]
    check_output(args.input, args.output, args.force)
    if source_kind == ".npy":
        array, name = read_npy(args.input)
    else:
        array, name = read_pb(args.input, external_data=args.external_data)
    job = operators.caster(spec, operators.type_name(array.dtype), spec.target(to), args.saturate, args.round_mode)
    result = cast_array(job, array, f"{args.input} -> {target}")
    write = write_npy if target_kind == ".npy" else write_pb
    write_atomically(args.output, lambda f: write(f, result, name), replace=args.force)
    return 0


def check_output(source, output, force):
    """CommandError if writing ``output`` would overwrite ``source`` (the same
    path, or a link to the same file) or, without ``force``, an existing file."""
    try:
        same = os.path.samefile(source, output)
    except OSError:  # one of them does not exist (or cannot be looked at)
        same = False
    if same or os.path.abspath(source) == os.path.abspath(output):
        raise CommandError(f"{output} is the input file {source}: write the result to another file")
    if os.path.lexists(output) and not force:
        raise CommandError(f"{output} exists: pass --force to replace it")


def _bad_file(path, what, error=None):
    detail = f" ({type(error).__name__}: {error})" if error is not None and str(error) else ""
    return CommandError(f"{path}: {what}{detail}")


def read_npy(path):
    """(array, name) of a .npy file, memory-mapped; CommandError naming the
    file when it is empty, cut short or not a .npy file."""
    with open(path, "rb") as f:  # OSError (missing, unreadable) as it is: it names the file
        size = os.fstat(f.fileno()).st_size
        magic = f.read(len(NPY_MAGIC))
    if size == 0:
        raise CommandError(f"{path}: the file is empty, not a .npy file")
    if magic != NPY_MAGIC:  # also keeps numpy.load from opening zip (.npz) or pickle files
        raise CommandError(f"{path}: not a valid .npy file (it does not start with the .npy magic string)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's overflow warnings on absurd shapes: the error follows
            array = np.load(path, mmap_mode="r", allow_pickle=False)
    except Exception as error:  # whatever NumPy raises for a malformed file
        raise _bad_file(path, "not a valid .npy file", error) from None
    if not isinstance(array, np.ndarray):
        raise CommandError(f"{path}: not a .npy file holding one array ({type(array).__name__})")
    if isinstance(array, np.memmap) and array.offset + array.nbytes != size:
        raise CommandError(
            f"{path}: the header describes {array.nbytes} bytes of data (shape {array.shape}, dtype {array.dtype}) "
            f"but the file holds {size - array.offset}"
        )
    if array.dtype.kind == "V" and not _is_known_dtype(array.dtype):
        raise ValueError(
            f"{path} holds raw bytes ({array.dtype.str}) of no known type; numbacast writes "
            "ml_dtypes arrays to .npy under their dtype names, e.g. float8_e4m3fn"
        )
    return array, ""


def _is_known_dtype(dtype):
    """Whether numbacast knows ``dtype`` (the ml_dtypes types are of NumPy's kind "V")."""
    try:
        resolve(dtype)
    except (TypeError, ValueError):
        return False
    return True


def read_pb(path, external_data=False):
    """(array, name) of a file holding one serialized ONNX TensorProto; CommandError
    naming the file when it is empty, malformed or inconsistent.  Its external
    data, if any, is read only when ``external_data`` is True, and only from
    the file's own folder (:func:`numbacast.onnx.tensors.load_external_data`)."""
    from ..onnx import tensors as numbacast_onnx

    tensor = numbacast_onnx.onnx.TensorProto()
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise CommandError(f"{path}: the file is empty, not a serialized ONNX TensorProto")
    try:
        tensor.ParseFromString(data)
    except Exception as error:  # protobuf's DecodeError
        raise ValueError(f"{path} is not a serialized ONNX TensorProto ({error})") from None
    try:
        if tensor.data_location == numbacast_onnx.onnx.TensorProto.EXTERNAL:
            if not external_data:
                raise CommandError(
                    f"{path}: the tensor keeps its data in an external file; pass --external-data to read it "
                    "(from this file's folder only)"
                )
            numbacast_onnx.load_external_data(tensor, os.path.dirname(os.path.abspath(path)))
        return numbacast_onnx.tensor_to_array(tensor), tensor.name
    except CommandError:
        raise
    except Exception as error:  # ValueError, TypeError, or whatever onnx raises for a malformed tensor
        raise _bad_file(path, "not a valid ONNX tensor", error) from None


def cast_array(job, array, label, stream=None):
    """``job(array)``; in chunks under a progress bar on ``stream`` (stderr)
    when ``array`` takes :data:`PROGRESS_MIN_BYTES` or more."""
    if job.conversion is None or array.nbytes < PROGRESS_MIN_BYTES:
        return job(array)
    out = np.empty(array.shape, job.conversion.target.storage)
    source, target = np.ravel(array), out.reshape(-1)
    step = max(1, CHUNK_BYTES // array.itemsize)
    bar = ProgressBar(label, stream or sys.stderr)
    try:
        for start in range(0, source.size, step):
            job(source[start : start + step], out=target[start : start + step])
            bar.show(min(start + step, source.size) / source.size)
    finally:
        bar.close()
    return out


class ProgressBar:
    """A progress bar drawn on one line of a text stream."""

    WIDTH = 40

    def __init__(self, label, stream):
        self.label, self.stream = label, stream
        self.show(0.0)

    def show(self, fraction):
        done = int(fraction * self.WIDTH)
        self.stream.write(f"\r{self.label} [{'#' * done}{'.' * (self.WIDTH - done)}] {fraction:4.0%}")
        self.stream.flush()

    def close(self):
        self.stream.write("\n")
        self.stream.flush()


#: The temporary files of :func:`write_atomically`: ``.numbacast-partial-<host>-<pid>-<random>.tmp``.
TEMPORARY_PREFIX = ".numbacast-partial-"
_TEMPORARY = re.compile(re.escape(TEMPORARY_PREFIX) + r"(?P<host>.*)-(?P<pid>\d+)-[^-]+\.tmp\Z")


def _host():
    return re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"


def remove_stale_temporaries(folder):
    """Remove the temporary files of :func:`write_atomically` in ``folder`` that
    were left by a run on this host that no longer runs (best effort)."""
    host = _host()
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        match = _TEMPORARY.match(name)
        if match is None or match["host"] != host or int(match["pid"]) == os.getpid():
            continue
        try:
            os.kill(int(match["pid"]), 0)
            continue  # still running (or another user's process)
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, OSError):
            continue
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass


def write_atomically(path, write, replace=True):
    """Call ``write(file)`` on a temporary file next to ``path``, then rename it
    to ``path``; on any failure remove the temporary file and re-raise.  With
    ``replace`` False an existing ``path`` is kept: CommandError."""
    folder = os.path.dirname(os.path.abspath(path))
    remove_stale_temporaries(folder)
    prefix = f"{TEMPORARY_PREFIX}{_host()}-{os.getpid()}-"
    try:
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=".tmp")
    except OSError as error:
        raise CommandError(f"cannot write {path}: {error.strerror}") from None
    try:
        with os.fdopen(descriptor, "wb") as f:
            write(f)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        try:
            if replace:
                os.replace(temporary, path)
            else:
                _rename_no_replace(temporary, path)
        except OSError as error:  # the temporary file's name in NumPy's message means nothing to the user
            raise CommandError(f"cannot write {path}: {error.strerror}") from None
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def _rename_no_replace(temporary, path):
    """Rename ``temporary`` to ``path`` unless ``path`` exists (CommandError),
    atomically where the file system has hard links."""
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise CommandError(f"{path} exists: pass --force to replace it") from None
    except OSError:  # no hard links here: check, then rename
        if os.path.lexists(path):
            raise CommandError(f"{path} exists: pass --force to replace it") from None
        os.replace(temporary, path)
        return
    os.unlink(temporary)


def npy_descr(dtype):
    """The .npy header ``descr`` of ``dtype``: NumPy's own, or for the ml_dtypes
    types their name (which ``numpy.load`` reads once ml_dtypes is imported)."""
    descr = np.lib.format.dtype_to_descr(dtype)
    try:
        if np.lib.format.descr_to_dtype(descr) == dtype:
            return descr
    except TypeError:
        pass
    return dtype.name


def write_npy(f, array, name=""):
    """Write ``array`` to the binary file ``f`` in the .npy format."""
    array = np.asarray(array, order="C")  # not ascontiguousarray, which makes a 0-d array 1-d
    header = {"descr": npy_descr(array.dtype), "fortran_order": False, "shape": array.shape}
    np.lib.format.write_array_header_2_0(f, header)
    f.write(array.reshape(-1).view(np.uint8).data)


def write_pb(f, array, name=""):
    """Write ``array`` to the binary file ``f`` as one serialized ONNX TensorProto."""
    from ..onnx.tensors import array_to_tensor

    f.write(array_to_tensor(array, name).SerializeToString())
