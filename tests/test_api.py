"""numbacast.cast as a NumPy function: shapes, strides, byte order, errors."""

import datetime

import ml_dtypes
import numpy as np
import pytest

import numbacast
from numbacast import cast


def test_resolve_accepts_ids_names_in_any_case_and_dtypes():
    f8 = numbacast.resolve(17)
    for spec in (
        "float8e4m3fn",
        "FLOAT8E4M3FN",
        "Float8E4M3FN",
        "float8_e4m3fn",
        ml_dtypes.float8_e4m3fn,
        np.dtype(ml_dtypes.float8_e4m3fn),
        f8,
    ):
        assert numbacast.resolve(spec) is f8
    assert numbacast.resolve("float").id == numbacast.resolve(np.float32).id == 1
    assert numbacast.resolve("DOUBLE").id == numbacast.resolve(np.dtype(">f8")).id == 11
    assert numbacast.resolve("bfloat16").id == 16
    assert numbacast.resolve(np.int8).name == "int8"


@pytest.mark.parametrize("bad", ["float7", "", 99, 0, -1, 14])
def test_unknown_type_lists_accepted_names(bad):
    with pytest.raises(ValueError) as error:
        cast(np.zeros(2), bad)
    assert repr(bad) in str(error.value) or str(bad) in str(error.value)
    assert "float8e4m3fn" in str(error.value)


@pytest.mark.parametrize("bad", [None, 1.5, True, object()])
def test_non_type_target_is_a_type_error(bad):
    with pytest.raises((TypeError, ValueError)):
        cast(np.zeros(2), bad)


@pytest.mark.parametrize(
    "x",
    [
        np.array([object()], dtype=object),
        np.array(["1.5", 2.5], dtype=object),
        np.array([np.datetime64("2020-01-01")]),
        np.array([datetime.timedelta(1)], dtype="m8[s]"),
        np.array([1 + 2j]),
        np.zeros(2, dtype=[("a", "f4")]),
    ],
)
def test_unsupported_input_dtype_is_refused_clearly(x):
    with pytest.raises((TypeError, ValueError)) as error:
        cast(x, "float")
    assert str(x.dtype) in str(error.value)


@pytest.mark.parametrize("mode", ["UP", "ceil", 1])
def test_bad_round_mode(mode):
    with pytest.raises(ValueError, match="up.*down.*nearest"):
        cast(np.ones(2), "float8e8m0", round_mode=mode)


@pytest.mark.parametrize("saturate", [2, "yes", None, 0.5])
def test_bad_saturate(saturate):
    with pytest.raises(TypeError, match="saturate"):
        cast(np.ones(2), "float8e4m3fn", saturate=saturate)


def test_a_repeated_cast_is_checked_as_its_first_call_was():
    """A cast made before is repeated without its checks (``api._CASTS_MADE``):
    arguments that only look or hash like its own still get their checks
    and their own result."""
    x = np.array([1.0, -2.5, 1e6, 0.1], np.float32)
    assert cast(x, 1).dtype == np.float32  # ONNX id 1 is FLOAT
    for bad in (True, 1.0, np.float64(1.0)):
        with pytest.raises(TypeError, match="a type must be"):
            cast(x, bad)
    assert cast(x, "float8e4m3fn").view(np.uint8).tolist() == [0x38, 0xC2, 0x7E, 0x1D]
    for saturate in (2, 1.0, "yes"):
        with pytest.raises(TypeError, match="saturate"):
            cast(x, "float8e4m3fn", saturate=saturate)
    assert cast(x, "float8e4m3fn", saturate=False).view(np.uint8).tolist() == [0x38, 0xC2, 0x7F, 0x1D]
    with pytest.raises(TypeError, match="cannot read a type from"):
        cast(x, ["float8e4m3fn"])  # unhashable: no key at all
    with pytest.raises(ValueError, match="up.*down.*nearest"):
        cast(x, "float8e8m0", round_mode=["up"])
    x = np.array([1.0, -2.5, 1000.0, 0.1], np.float32)
    expected = x.astype(np.float16)
    for y in (
        x,
        x[::-1],
        x.astype(">f4"),
        x.reshape(2, 2),
        x[::2],
        np.frombuffer(b"-" + x.tobytes(), x.dtype, offset=1),
    ):
        for _ in range(2):  # the first call and its repetition
            result = cast(y, "float16")
            assert result.shape == y.shape
            assert np.array_equal(result, y.astype(np.float16)), y
    read_only = x.copy()
    read_only.flags.writeable = False
    assert np.array_equal(cast(read_only, "float16"), expected)
    out = np.zeros(8, np.float16)
    read_only_out = np.zeros(4, np.float16)
    read_only_out.flags.writeable = False
    for _ in range(2):  # into out=, each checked: its dtype, shape and flags
        assert cast(x, "float16", out=out[::2]) is not None and np.array_equal(out[::2], expected)
        assert np.array_equal(cast(x, "float16", out=out[:4]), expected)
        for bad, error in ((np.zeros(4), TypeError), (out[:3], ValueError), (read_only_out, ValueError)):
            with pytest.raises(error, match="out"):
                cast(x, "float16", out=bad)
        same = x.copy()
        assert cast(same, "float32", out=same) is same and np.array_equal(same, x)  # out may be the input


def test_errors_come_before_any_compilation():
    from numbacast.engine.kernels import serial_kernel

    before = len(serial_kernel.overloads)
    with pytest.raises(ValueError):
        cast(np.ones(2, np.float16), "float8e8m0", round_mode="sideways")
    assert len(serial_kernel.overloads) == before


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (7,), (2, 3, 4)])
def test_shapes_including_0d_and_empty(shape):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) * 0.75
    for to in ("float8e5m2", "int32", "float16"):
        out = cast(x, to)
        assert out.shape == shape
        assert np.array_equal(
            out.astype(np.float64), x.astype(to if to != "float8e5m2" else ml_dtypes.float8_e5m2).astype(np.float64)
        )


def test_python_scalars_and_lists():
    assert cast(2.5, "int4").shape == ()
    assert cast([1, 2, 3], "float").tolist() == [1.0, 2.0, 3.0]
    assert cast(True, "float16").item() == 1.0


def test_strided_and_byteswapped_inputs_and_input_untouched():
    rng = np.random.default_rng(0)
    base = rng.standard_normal((40, 30)) * 100
    expected = cast(np.ascontiguousarray(base[::3, 1::2].T), "float8e4m3fn").view(np.uint8)
    strided = base[::3, 1::2].T
    snapshot = base.copy()
    assert np.array_equal(cast(strided, "float8e4m3fn").view(np.uint8), expected)
    swapped = strided.astype(">f8")
    assert np.array_equal(cast(swapped, "float8e4m3fn").view(np.uint8), expected)
    assert np.array_equal(base, snapshot)
    assert np.array_equal(swapped, strided)


def test_parallel_path_equals_serial_path():
    from numbacast.engine.kernels import PARALLEL_MIN

    rng = np.random.default_rng(1)
    x = (rng.standard_normal(3 * PARALLEL_MIN) * 2.0 ** rng.integers(-20, 20, 3 * PARALLEL_MIN)).astype(np.float32)
    for to in ("float8e4m3fn", "bfloat16", "int4", "float8e8m0"):
        whole = cast(x, to).view(np.uint8 if to != "bfloat16" else np.uint16)
        pieces = np.concatenate([cast(x[i : i + 1000], to) for i in range(0, x.size, 1000)])
        assert np.array_equal(whole, pieces.view(whole.dtype))


def test_output_is_a_new_array():
    x = np.ones(5, np.float32)
    out = cast(x, "float")
    assert out is not x and not np.shares_memory(out, x)
    out[0] = 7
    assert x[0] == 1


def test_out_receives_the_result_contiguous_or_not():
    x = np.linspace(-500, 500, 24, dtype=np.float32).reshape(4, 6)
    expected = cast(x, "float8e4m3fn")
    out = np.zeros((4, 6), ml_dtypes.float8_e4m3fn)
    assert cast(x, "float8e4m3fn", out=out) is out
    assert np.array_equal(out.view(np.uint8), expected.view(np.uint8))
    big = np.zeros((8, 12), ml_dtypes.float8_e4m3fn)
    view = big[::2, ::2]
    assert cast(x, "float8e4m3fn", out=view) is view
    assert np.array_equal(view.view(np.uint8), expected.view(np.uint8))
    assert not big.view(np.uint8)[1::2].any() and not big.view(np.uint8)[:, 1::2].any()


def test_out_may_be_the_input_itself():
    x = np.array([1.5, -2.5, 1e9], np.float32)
    assert cast(x, "float", out=x) is x
    y = np.array([1, 2, 3], np.int32)
    as_float = y.view(np.float32)
    cast(y, "float", out=as_float)
    assert as_float.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    "out,error",
    [
        (np.zeros(3, np.float32), TypeError),  # wrong dtype
        (np.zeros(4, ml_dtypes.float8_e4m3fn), ValueError),  # wrong shape
        (np.zeros((3, 1), ml_dtypes.float8_e4m3fn), ValueError),  # wrong shape
        ([0, 0, 0], TypeError),  # not an array
        (np.zeros(3, ml_dtypes.float8_e5m2), TypeError),  # another float8
    ],
)
def test_out_errors_are_raised_before_anything_is_written(out, error):
    x = np.ones(3, np.float32)
    before = np.array(out, copy=True) if isinstance(out, np.ndarray) else None
    with pytest.raises(error, match="out"):
        cast(x, "float8e4m3fn", out=out)
    if before is not None:
        assert np.array_equal(np.asarray(out).view(np.uint8), before.view(np.uint8))


def test_read_only_out_is_refused():
    out = np.zeros(3, np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        cast(np.ones(3), "float", out=out)


def test_threads_casting_a_pair_for_the_first_time_at_once():
    from concurrent.futures import ThreadPoolExecutor

    x = np.arange(-70000, 70000, 7, dtype=np.int64) * 12345
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: cast(x, "float8e5m2fnuz", saturate=False), range(8)))
    expected = cast(x.astype(np.float64), "float8e5m2fnuz", saturate=False)  # exact: |x| < 2**53
    for result in results:
        assert np.array_equal(result.view(np.uint8), expected.view(np.uint8))
