"""The command line, run in-process through ``numbacast.cli.main`` (and once
as ``python -m numbacast``)."""

import os
import re
import subprocess
import sys

import exact
import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import numbacast
from numbacast import cli
from numbacast.cli import demo

VALUES = np.array([[0.3, 1.7, -7.0, np.nan], [np.inf, 3.0, 465.0, -0.0], [1e-9, 2.5, -1e9, 100.0]], np.float32)


def run(argv, capsys):
    status = cli.main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def reference(values, target, **options):
    """Exact codes of float32 ``values`` cast to ``target``."""
    return [exact.cast_code("float", code, target, **options) for code in codes(values)]


def codes(array):
    return array.reshape(-1).view(f"u{array.dtype.itemsize}").tolist()


def read_pb(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return tensor


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "x.npy"
    np.save(path, VALUES)
    return path


@pytest.mark.parametrize("target", ["float8e4m3fn", "INT4", "float6e3m2", "BFLOAT16"])
def test_round_trip_npy_pb_npy(source, tmp_path, capsys, target):
    middle, back = tmp_path / "y.pb", tmp_path / "z.NPY"
    assert run(["cast", str(source), "--to", target, "-o", str(middle)], capsys) == (0, "", "")
    tensor = read_pb(middle)
    assert onnx.TensorProto.DataType.Name(tensor.data_type) == target.upper() and list(tensor.dims) == [3, 4]
    expected = reference(VALUES, target.lower())
    assert codes(numpy_helper.to_array(tensor)) == expected
    assert run(["cast", str(middle), "--to", "1", "-o", str(back)], capsys)[0] == 0
    result = np.load(back)
    assert result.dtype == np.float32 and result.shape == (3, 4)
    assert codes(result) == [exact.cast_code(target.lower(), code, "float") for code in expected]


@pytest.mark.parametrize("target", ["float8e5m2", "float8e4m3fn", "bfloat16", "int4", "float4e2m1", "float8e8m0"])
def test_npy_of_an_ml_dtypes_type_reads_back(source, tmp_path, capsys, target):
    """A .npy file the command wrote (an ml_dtypes dtype, NumPy's kind "V" for
    all but float8_e5m2) is read back as that type; raw bytes are refused."""
    out = tmp_path / "y.npy"
    assert run(["cast", str(source), "--to", target, "-o", str(out)], capsys)[0] == 0
    result = np.load(out)
    assert result.dtype == numbacast.resolve(target).storage and codes(result) == reference(VALUES, target)
    assert run(["cast", str(out), "--to", "DOUBLE", "-o", str(tmp_path / "z.npy")], capsys) == (0, "", "")
    assert np.array_equal(np.load(tmp_path / "z.npy"), result.astype(np.float64), equal_nan=True)
    np.save(tmp_path / "raw.npy", result.view("V1"))
    status, _, error = run(["cast", str(tmp_path / "raw.npy"), "--to", "DOUBLE", "-o", str(tmp_path / "w.npy")], capsys)
    assert status == 2 and "holds raw bytes (|V1) of no known type" in error


@pytest.mark.parametrize(
    "flags, target, options",
    [
        (["--saturate", "0"], "float8e4m3fn", dict(saturate=False)),
        (["--saturate", "1", "--opset", "19"], "float8e4m3fnuz", dict(fnuz_inf_to_nan=True)),
        (["--opset", "24"], "float8e4m3fnuz", dict()),
        (["--round-mode", "down"], "float8e8m0", dict(round_mode="down")),
        (["--round-mode", "nearest", "--saturate", "0"], "float8e8m0", dict(round_mode="nearest", saturate=False)),
        (["--opset", "1"], "int16", dict()),
    ],
)
def test_flags(source, tmp_path, capsys, flags, target, options):
    out = tmp_path / "y.npy"
    assert run(["cast", str(source), "--to", target, *flags, "-o", str(out)], capsys)[0] == 0
    assert codes(np.load(out)) == reference(VALUES, target, **options)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["cast", "{missing}", "--to", "float", "-o", "{out}"], "No such file or directory"),
        (["cast", "{source}", "--to", "float9", "-o", "{out}"], "unknown type name 'float9'"),
        (["cast", "{source}", "--to", "99", "-o", "{out}"], "unknown TensorProto.DataType id 99"),
        (
            ["cast", "{source}", "--to", "float8e4m3fn", "--opset", "18", "-o", "{out}"],
            "Cast-13 \\(in force at opset 18\\) does not take FLOAT8E4M3FN as its output type",
        ),
        (
            ["cast", "{source}", "--to", "int8", "--saturate", "1", "--opset", "13", "-o", "{out}"],
            "Cast-13 .* has no saturate attribute",
        ),
        (["cast", "{source}", "--to", "int8", "--opset", "29", "-o", "{out}"], "Cast is defined from opset 1 to 28"),
        (["cast", "{source}", "--to", "int8", "--saturate", "2", "-o", "{out}"], "argument --saturate: invalid choice"),
        (["cast", "{source}", "--to", "int8", "--round-mode", "up-ish", "-o", "{out}"], "argument --round-mode"),
        (["cast", "{source}", "--to", "int8", "-o", "{tmp}/y.txt"], "unknown file kind '.txt'"),
        (["cast", "{source}", "--to", "int8"], "the following arguments are required: -o/--output"),
        (["cast", "{source}", "--to", "int8", "-o", "{tmp}/no/such/dir/y.npy"], "No such file or directory"),
        (["convert", "x"], "invalid choice: 'convert'"),
        (["cast", "{source}", "--to", "float8_e4m3", "-o", "{out}"], "float8_e4m3 is not an ONNX type"),
    ],
)
def test_errors_are_one_line_and_leave_no_file(source, tmp_path, capsys, argv, message):
    names = dict(source=source, missing=tmp_path / "missing.npy", out=tmp_path / "y.npy", tmp=tmp_path)
    before = sorted(os.listdir(tmp_path))
    status, out, err = run([arg.format(**names) for arg in argv], capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("numbacast: error: ")
    assert re.search(message, err), err
    assert sorted(os.listdir(tmp_path)) == before


def test_bad_input_files(tmp_path, capsys):
    void = tmp_path / "void.npy"
    np.save(void, np.zeros(3, ml_dtypes.bfloat16))  # numpy writes these as raw bytes ('<V2')
    garbage = tmp_path / "garbage.pb"
    garbage.write_bytes(b"\xff\xff\xff\xff")
    complex_npy = tmp_path / "complex.npy"
    np.save(complex_npy, np.zeros(2, np.complex64))
    for path, message in (
        (void, "holds raw bytes"),
        (garbage, "is not a serialized ONNX TensorProto"),
        (complex_npy, "complex"),
    ):
        status, _, err = run(["cast", str(path), "--to", "float", "-o", str(tmp_path / "y.npy")], capsys)
        assert status == 2 and message in err
    assert not (tmp_path / "y.npy").exists()


def test_a_failed_write_leaves_no_file(source, tmp_path, capsys, monkeypatch):
    def failing(f, array, name=""):
        f.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(cli, "write_npy", failing)
    status, _, err = run(["cast", str(source), "--to", "int8", "-o", str(tmp_path / "y.npy")], capsys)
    assert status == 2 and "disk full" in err
    assert sorted(os.listdir(tmp_path)) == ["x.npy"]


def test_an_existing_output_is_kept_unless_force(source, tmp_path, capsys):
    out = tmp_path / "y.npy"
    out.write_bytes(b"old")
    status, _, err = run(["cast", str(source), "--to", "int8", "-o", str(out)], capsys)
    assert status == 2 and "exists: pass --force" in err and out.read_bytes() == b"old"
    assert run(["cast", str(source), "--to", "int8", "-o", str(out), "--force"], capsys)[0] == 0
    assert np.load(out).dtype == np.int8 and sorted(os.listdir(tmp_path)) == ["x.npy", "y.npy"]


def test_large_inputs_are_cast_in_chunks_with_a_progress_bar(tmp_path, capsys, monkeypatch):
    values = np.random.default_rng(3).standard_normal((50, 41)).astype(np.float32) * 100
    path = tmp_path / "big.npy"
    np.save(path, values)
    monkeypatch.setattr(cli, "PROGRESS_MIN_BYTES", 1000)
    monkeypatch.setattr(cli, "CHUNK_BYTES", 1024)  # 256 elements a chunk, 9 chunks
    status, out, err = run(["cast", str(path), "--to", "float8e4m3fn", "-o", str(tmp_path / "y.pb")], capsys)
    assert status == 0
    assert err.count("\r") == 10 and err.rstrip("\n").endswith("[" + "#" * 40 + "] 100%")
    result = numpy_helper.to_array(read_pb(tmp_path / "y.pb"))
    assert result.shape == (50, 41) and codes(result) == reference(values, "float8e4m3fn")


def test_types(capsys):
    status, out, _ = run(["types"], capsys)
    assert status == 0
    lines = out.splitlines()
    assert any(line.split("|")[0].strip() == "type (id)" for line in lines)
    row = next(line for line in lines if line.startswith("FLOAT8E8M0 (24)"))
    assert row.split("|")[1].split() == ["."] * 7 + ["x"] * 3
    assert row.split("|")[2].split() == ["."] * 4 + ["x"] * 3
    float6 = next(line for line in lines if line.startswith("FLOAT6E2M3 (27)"))
    assert float6.split("|")[1].split() == ["."] * 9 + ["x"] and float6.split("|")[2].split() == ["."] * 6 + ["x"]
    string = next(line for line in lines if line.startswith("STRING (8)"))
    assert string.split("|")[1].split() == [".", "."] + ["x"] * 8
    header = lines[2].split("|")
    assert [cell.strip() for cell in header[1:]] == ["Cast", "CastLike"]  # the quantisation operators take other types


def test_a_reader_that_goes_away_stops_the_output_quietly():
    """``numbacast types | head -1``: the pipe closed before the output, no error message."""
    child = subprocess.Popen(
        [sys.executable, "-m", "numbacast", "types"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    child.stdout.close()
    assert child.wait(timeout=120) == 1 and child.stderr.read() == ""
    child.stderr.close()


def test_an_output_that_cannot_be_written_is_named(source, tmp_path, capsys):
    """The error names OUT, not the temporary file written first."""
    missing = tmp_path / "no" / "y.npy"
    status, _, error = run(["cast", str(source), "--to", "int8", "-o", str(missing)], capsys)
    assert status == 2 and f"cannot write {missing}" in error and "partial" not in error
    folder = tmp_path / "folder.npy"
    folder.mkdir()
    status, _, error = run(["cast", str(source), "--to", "int8", "-o", str(folder), "--force"], capsys)
    assert status == 2 and f"cannot write {folder}" in error and "partial" not in error


def test_a_tensor_holding_its_values_twice_is_refused(tmp_path, capsys):
    tensor = numpy_helper.from_array(np.ones(3, np.float32))
    tensor.float_data.extend([2.0, 2.0, 2.0])
    (tmp_path / "x.pb").write_bytes(tensor.SerializeToString())
    status, _, error = run(["cast", str(tmp_path / "x.pb"), "--to", "int8", "-o", str(tmp_path / "y.npy")], capsys)
    assert status == 2 and "holds its values twice, in raw_data and in float_data" in error


def test_no_command_prints_the_demo(capsys, monkeypatch):
    monkeypatch.setattr(demo, "main", lambda: print("the demo"))
    assert run([], capsys) == (0, "the demo\n", "")


def test_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["cast", "--help"])
    assert exit_.value.code == 0
    assert "--round-mode" in capsys.readouterr().out


def test_python_dash_m(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "numbacast",
            "cast",
            str(tmp_path / "missing.pb"),
            "--to",
            "float",
            "-o",
            str(tmp_path / "y.npy"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("numbacast: error: ") and result.stderr.count("\n") == 1
    assert os.listdir(tmp_path) == []


# -- Keeping data safe (issue 14) ---------------------------------------------------------------


def one_line_error(status, err, *fragments):
    assert status == 2 and err.startswith("numbacast: error: ") and err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err, err


@pytest.mark.parametrize("how", ["same path", "other spelling", "hard link", "symbolic link"])
@pytest.mark.parametrize("force", [False, True])
def test_never_writes_over_its_input(source, tmp_path, capsys, monkeypatch, how, force):
    before = source.read_bytes()
    monkeypatch.chdir(tmp_path)
    output = {"same path": str(source), "other spelling": "./sub/../x.npy"}.get(how)
    (tmp_path / "sub").mkdir()
    if how == "hard link":
        os.link(source, tmp_path / "y.npy")
        output = str(tmp_path / "y.npy")
    elif how == "symbolic link":
        os.symlink(source, tmp_path / "y.npy")
        output = str(tmp_path / "y.npy")
    status, _, err = run(["cast", str(source), "--to", "float16", "-o", output] + ["--force"] * force, capsys)
    one_line_error(status, err, "is the input file")
    assert source.read_bytes() == before


def test_output_appears_only_complete_and_stale_temporaries_are_removed(source, tmp_path, capsys):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = cli._host()
    stale = tmp_path / f"{cli.TEMPORARY_PREFIX}{host}-{dead.stdout.strip()}-abc123.tmp"
    alive = tmp_path / f"{cli.TEMPORARY_PREFIX}{host}-{os.getppid()}-abc123.tmp"
    elsewhere = tmp_path / f"{cli.TEMPORARY_PREFIX}otherhost-{dead.stdout.strip()}-abc123.tmp"
    for path in (stale, alive, elsewhere):
        path.write_bytes(b"partial")
    assert run(["cast", str(source), "--to", "int8", "-o", str(tmp_path / "y.npy")], capsys)[0] == 0
    assert sorted(os.listdir(tmp_path)) == sorted([alive.name, elsewhere.name, "x.npy", "y.npy"])


def npy_bytes(shape, data, descr="<f4"):
    import io

    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, {"descr": descr, "fortran_order": False, "shape": shape})
    return f.getvalue() + data


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("empty.npy", b"", "the file is empty"),
        ("empty.pb", b"", "the file is empty"),
        ("text.npy", b"hello, world\n", "not a valid .npy file"),
        ("short.npy", npy_bytes((3,), b"\0" * 8), "not a valid .npy file"),
        ("long.npy", npy_bytes((1,), b"\0" * 8), "the header describes 4 bytes of data"),
        ("negative.npy", npy_bytes((2, -1), b"\0" * 8), "negative dimensions"),
        ("huge.npy", npy_bytes((2**62, 2**62), b""), "not a valid .npy file"),
        ("header.npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': <f4 }\n", "not a valid .npy file"),
        ("pickle.npy", npy_bytes((2,), b"\0" * 16, descr="|O"), "not a valid .npy file"),
        ("zip.npy", b"PK\x03\x04" + b"\0" * 30, "not a valid .npy file"),
        ("undefined.pb", onnx.TensorProto(dims=[1]).SerializeToString(), "not a valid ONNX tensor"),
    ],
)
def test_malformed_inputs_are_one_line_naming_the_file(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    status, _, err = run(["cast", str(path), "--to", "float", "-o", str(tmp_path / "out.npy")], capsys)
    one_line_error(status, err, str(path), message)
    assert sorted(os.listdir(tmp_path)) == [name]


def pb_file(path, tensor):
    path.write_bytes(tensor.SerializeToString())
    return path


def test_negative_and_inconsistent_dims_in_a_pb_are_refused(tmp_path, capsys):
    tensor = onnx.helper.make_tensor("t", onnx.TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    tensor.dims[:] = [2, -1]
    status, _, err = run(["cast", str(pb_file(tmp_path / "neg.pb", tensor)), "--to", "int8", "-o", "x.npy"], capsys)
    one_line_error(status, err, "neg.pb", "dims [2, -1]", "cannot be negative")
    tensor.dims[:] = [5]
    status, _, err = run(["cast", str(pb_file(tmp_path / "bad.pb", tensor)), "--to", "int8", "-o", "x.npy"], capsys)
    one_line_error(status, err, "bad.pb", "needs 5 entries of float_data, not 4")


def external_tensor(location, values=(1.5, -2.0, 3.0)):
    tensor = onnx.TensorProto(name="e", data_type=onnx.TensorProto.FLOAT, dims=[len(values)])
    tensor.data_location = onnx.TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value=location)
    return tensor


def test_external_data_needs_the_flag_and_stays_in_the_input_folder(tmp_path, capsys, monkeypatch):
    values = np.array([1.5, -2.0, 3.0], np.float32)
    models = tmp_path / "models"
    models.mkdir()
    (models / "weights.bin").write_bytes(values.tobytes())
    (tmp_path / "weights.bin").write_bytes(np.zeros(3, np.float32).tobytes())  # in the current folder
    monkeypatch.chdir(tmp_path)
    source = pb_file(models / "t.pb", external_tensor("weights.bin"))
    out = tmp_path / "y.npy"
    status, _, err = run(["cast", str(source), "--to", "float16", "-o", str(out)], capsys)
    one_line_error(status, err, "t.pb", "--external-data")
    assert run(["cast", str(source), "--to", "float16", "-o", str(out), "--external-data"], capsys)[0] == 0
    assert np.load(out).tolist() == values.tolist()  # from the input's folder, not the current one


@pytest.mark.parametrize("location", ["../weights.bin", "{tmp}/weights.bin", "sub/weights.bin", "link.bin", ".."])
def test_external_data_cannot_leave_the_input_folder(tmp_path, capsys, location):
    models = tmp_path / "models"
    (models / "sub").mkdir(parents=True)
    for path in (tmp_path / "weights.bin", models / "sub" / "weights.bin"):
        path.write_bytes(np.ones(3, np.float32).tobytes())
    os.symlink(tmp_path / "weights.bin", models / "link.bin")
    source = pb_file(models / "t.pb", external_tensor(location.format(tmp=tmp_path)))
    status, _, err = run(
        ["cast", str(source), "--to", "float16", "-o", str(tmp_path / "y.npy"), "--external-data"], capsys
    )
    one_line_error(status, err, "t.pb")
    assert not (tmp_path / "y.npy").exists()


def test_external_data_past_the_end_of_its_file_is_refused(tmp_path, capsys):
    (tmp_path / "w.bin").write_bytes(b"\0" * 8)
    tensor = external_tensor("w.bin")
    tensor.external_data.add(key="length", value="12")
    source = pb_file(tmp_path / "t.pb", tensor)
    status, _, err = run(
        ["cast", str(source), "--to", "int8", "-o", str(tmp_path / "y.npy"), "--external-data"], capsys
    )
    one_line_error(status, err, "runs past the end")


@pytest.mark.parametrize("kind", [".npy", ".pb"])
def test_a_0d_tensor_stays_0d(tmp_path, capsys, kind):
    """Found by the fuzz suite: ascontiguousarray made 0-d results 1-d in .npy outputs."""
    source = tmp_path / f"x{kind}"
    if kind == ".npy":
        np.save(source, np.float32(2.5))
    else:
        source.write_bytes(numpy_helper.from_array(np.array(2.5, np.float32), "s").SerializeToString())
    assert run(["cast", str(source), "--to", "float16", "-o", str(tmp_path / "y.npy")], capsys)[0] == 0
    result = np.load(tmp_path / "y.npy")
    assert result.shape == () and result == 2.5
