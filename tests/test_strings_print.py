"""Numbers to STRING: NumPy's ``str()`` for FLOAT16, FLOAT and DOUBLE, the exact
reference for every other type, the layout, the output width, and the round
trip of every type back through text."""

import exact
import ml_dtypes
import numpy as np
import pytest
from conftest import storage_codes

import numbacast
from numbacast import cast

SPECIALS = {"nan": "NaN", "inf": "INF", "-inf": "-INF"}
RANDOM_SAMPLE = 2_000_000


#: Where the conversion rules (docs/rules.md#rule-string-layout) switch to scientific notation
#: (NumPy's own limits in its recent versions).
SCIENTIFIC_FROM = {np.float16: "1e+03", np.float32: "1e+06", np.float64: "1e+16"}


def numpy_texts(values):
    """NumPy's ``str()`` of every value, with the operator's special literals;
    a skip where the installed NumPy's layout is older than that of docs/rules.md."""
    limit = SCIENTIFIC_FROM[values.dtype.type]
    if str(values.dtype.type(limit)) != limit:
        pytest.skip(
            f"NumPy {np.__version__} prints {values.dtype} {float(limit):g} as "
            f"{str(values.dtype.type(limit))!r}, not in the layout of docs/rules.md ({limit!r})"
        )
    texts = values.astype(str)
    for numpy_text, onnx_text in SPECIALS.items():
        texts[texts == numpy_text] = onnx_text
    return texts


def assert_same_texts(got, expected, values):
    assert got.shape == expected.shape
    bad = np.flatnonzero(got.reshape(-1) != expected.reshape(-1))
    assert not bad.size, f"{bad.size} differ; first: " + ", ".join(
        f"{values.reshape(-1)[i]!r}: got {got.reshape(-1)[i]!r} expected {expected.reshape(-1)[i]!r}" for i in bad[:5]
    )


def both_nan(name, a, b):
    return exact.decode(name, a).kind == exact.decode(name, b).kind == "nan"


def assert_reads_back(texts, values, name, **options):
    """``texts`` cast back to ``name`` give ``values`` bit for bit (any NaN for a NaN)."""
    back = cast(texts, name, **options)
    got, expected = storage_codes(back), storage_codes(values)
    bad = [i for i in np.flatnonzero(got != expected) if not both_nan(name, int(got[i]), int(expected[i]))]
    assert not bad, f"{len(bad)} do not read back ({options}); first: " + ", ".join(
        f"{texts.reshape(-1)[i]!r} -> {int(got[i]):#x}, not {int(expected[i]):#x}" for i in bad[:5]
    )


def every_code(name):
    """Every valid storage code of a type of at most 16 bits."""
    t = numbacast.resolve(name)
    count = 2 if t.is_bool else 1 << t.bits
    return np.arange(count, dtype=f"u{t.storage.itemsize}").view(t.storage)


def test_every_float16_is_numpys_str_and_reads_back():
    values = every_code("float16")
    texts = cast(values, "string")
    assert_reads_back(texts, values, "float16")
    assert_same_texts(texts, numpy_texts(values), values)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_random_floats_are_numpys_str_and_read_back(dtype):
    rng = np.random.default_rng(2024)
    bits = rng.integers(
        0,
        np.iinfo(f"u{np.dtype(dtype).itemsize}").max,
        RANDOM_SAMPLE,
        dtype=f"u{np.dtype(dtype).itemsize}",
        endpoint=True,
    )
    values = bits.view(dtype)
    texts = cast(values, "string")
    assert_reads_back(texts, values, numbacast.resolve(dtype).name)
    assert_same_texts(texts, numpy_texts(values), values)


def edge_values(dtype):
    """Subnormals, powers of ten and of two, the range ends, the layout
    thresholds and their neighbours."""
    info = np.finfo(dtype)
    tiny = info.smallest_subnormal
    values = [tiny, tiny * 2, tiny * 3, tiny * 1000, info.smallest_normal, info.max, info.eps, 1.0, 0.1, 1 / 3]
    values += [10.0**k for k in range(int(np.log10(info.smallest_normal)) - 1, int(np.log10(info.max)) + 1)]
    values += [2.0**k for k in range(int(np.log2(info.smallest_normal)), int(np.log2(info.max)) + 1, 7)]
    values += [1e-4, 1e3, 1e6, 1e16, 999.0, 999999.0, 9999999999999998.0]
    with np.errstate(over="ignore"):
        x = np.array([v for v in values if np.isfinite(dtype(v))], dtype)
        x = np.concatenate([x, np.nextafter(x, dtype(0)), np.nextafter(x, dtype(np.inf))])
    return np.concatenate([x, -x, np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype)])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_edge_values_are_numpys_str_and_read_back(dtype):
    values = edge_values(dtype)
    texts = cast(values, "string")
    assert_reads_back(texts, values, numbacast.resolve(dtype).name)
    assert_same_texts(texts, numpy_texts(values), values)
    assert_same_texts(texts, np.array([SPECIALS.get(str(v), str(v)) for v in values]), values)


NARROW = [t.name for t in numbacast.TYPES if t.storage.itemsize <= 2 and t.name != "float16"]


@pytest.mark.parametrize("name", NARROW)
def test_every_code_of_the_small_types_matches_the_exact_reference(name):
    values = every_code(name)
    texts = cast(values, "string")
    expected = np.array([exact.format_code(name, c) for c in storage_codes(values).tolist()])
    assert_same_texts(texts, expected, storage_codes(values))


@pytest.mark.parametrize("name", [t.name for t in numbacast.TYPES if t.storage.itemsize <= 2])
def test_every_code_of_the_small_types_reads_back(name):
    """Back through text, every code is itself -- or, with ``saturate``, what
    the cast of the type to itself makes of it (FLOAT8E5M2's infinities)."""
    values = every_code(name)
    texts = cast(values, "string")
    assert_reads_back(texts, values, name, saturate=False)
    for round_mode in exact.ROUND_MODES if name == "float8e8m0" else ["up"]:
        for saturate in (True, False):
            options = dict(saturate=saturate, round_mode=round_mode)
            expected = [exact.cast_code(name, c, name, **options) for c in storage_codes(values).tolist()]
            expected = np.array(expected, f"u{values.dtype.itemsize}").view(values.dtype)
            assert_reads_back(texts, expected, name, **options)


def test_narrow_floats_print_their_own_shortest_digits():
    assert cast(np.array([0.1], np.float16), "string")[0] == "0.1"
    assert cast(np.array([0.1], ml_dtypes.bfloat16), "string")[0] == "0.1"
    assert cast(np.array([3.14159], ml_dtypes.bfloat16), "string")[0] == "3.14"
    assert cast(np.array([448, -0.0, 0.1015625], ml_dtypes.float8_e4m3fn), "string").tolist() == [
        "450.0",
        "-0.0",
        "0.1",
    ]
    assert cast(np.array([57344, 1024], ml_dtypes.float8_e5m2), "string").tolist() == ["6e+04", "1e+03"]
    assert cast(np.array([6, 0.5], ml_dtypes.float4_e2m1fn), "string").tolist() == ["6.0", "0.5"]
    assert cast(np.array([1, 0.125, 1024, 2.0**-127], ml_dtypes.float8_e8m0fnu), "string").tolist() == [
        "1.0",
        "0.125",
        "1.024e+03",
        "5.8774717541114375398436826861112283890933277838604376075437585313920862972736358642578125e-39",
    ]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64])
def test_integers_print_plain_decimal(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(5)
    values = np.concatenate(
        [
            np.array([info.min, info.max, 0, 1, 9, 10, 99, 100], dtype),
            rng.integers(info.min, info.max, 5000, dtype=dtype, endpoint=True),
        ]
    )
    if info.min < 0:
        values = np.concatenate([values, np.array([-1, -9, -10], dtype)])
    powers = [10**k for k in range(20) if 10**k <= info.max]
    values = np.concatenate([values, np.array(powers + [p - 1 for p in powers], dtype)])
    texts = cast(values, "string")
    assert texts.tolist() == [str(v) for v in values.tolist()]
    assert_reads_back(texts, values, numbacast.resolve(dtype).name)


def test_bool_prints_one_and_zero():
    assert cast(np.array([True, False]), "string").tolist() == ["1", "0"]


def test_output_is_just_wide_enough():
    assert cast(np.array([1.0, 0.5]), "string").dtype == np.dtype("<U3")
    assert cast(np.array([-1.5e-300]), "string").dtype == np.dtype("<U9")
    assert cast(np.array([-2.2250738585072014e-308]), "string").dtype == np.dtype("<U24")
    assert cast(np.zeros(0), "string").dtype == np.dtype("<U1")
    assert cast(np.zeros(3, np.uint8), "string").dtype == np.dtype("<U1")


def test_shapes_strides_byte_order_and_input_untouched():
    base = np.linspace(-3, 3, 60).reshape(6, 10)
    strided = base[::2, 1::3].T
    expected = np.array([[str(v) for v in row] for row in strided])
    snapshot = base.copy()
    assert cast(strided, "string").tolist() == expected.tolist()
    assert cast(strided.astype(">f8"), "string").tolist() == expected.tolist()
    assert cast(strided.astype(">i4"), "string").tolist() == [[str(v) for v in r] for r in strided.astype(int).tolist()]
    assert np.array_equal(base, snapshot)
    assert cast(np.float32(2.5), "string").shape == () and cast(np.float32(2.5), "string")[()] == "2.5"
    assert cast([1.5, 2], 8).tolist() == ["1.5", "2.0"]
    e8m0 = np.array([[1, 2, 0.5]], ml_dtypes.float8_e8m0fnu)
    assert cast(e8m0[:, ::-2], "string").tolist() == [["0.5", "1.0"]]
    assert cast(e8m0[0, 1], "string").shape == ()
    assert cast(np.array([1.5], np.float32), str).tolist() == ["1.5"]


def test_one_large_array_equals_its_pieces():
    x = np.random.default_rng(3).standard_normal(100_000)
    whole = cast(x, "string")
    pieces = [cast(x[i : i + 999], "string") for i in range(0, x.size, 999)]
    assert whole.tolist() == [t for piece in pieces for t in piece.tolist()]


def test_out_takes_any_wide_enough_str_array():
    x = np.array([[1.5, -2.0], [1e-7, np.nan]])
    out = np.full((2, 2), "unchanged", dtype="<U20")
    assert cast(x, "string", out=out) is out
    assert out.tolist() == [["1.5", "-2.0"], ["1e-07", "NaN"]]
    view = np.full((4, 4), "-", dtype="<U8")[::2, 1::2]
    cast(x, "string", out=view)
    assert view.tolist() == out.tolist()


@pytest.mark.parametrize(
    "out,error",
    [
        (np.full(2, "x", "<U3"), ValueError),  # too narrow for "-2.25"
        (np.full(3, "x", "<U9"), ValueError),  # wrong shape
        (np.zeros(2, np.float64), TypeError),  # not str
        (np.full(2, "x", ">U9"), TypeError),  # not native
        (["x", "y"], TypeError),
    ],
)
def test_string_out_errors_leave_out_untouched(out, error):
    before = np.array(out, copy=True)
    with pytest.raises(error, match="out"):
        cast(np.array([1.5, -2.25]), "string", out=out)
    assert np.array_equal(np.asarray(out), before)


def test_complex_and_object_inputs_are_still_refused():
    with pytest.raises(ValueError, match="complex"):
        cast(np.array([1 + 2j]), "string")
    with pytest.raises(TypeError, match="object"):
        cast(np.array([1, "2"], dtype=object), "string")
