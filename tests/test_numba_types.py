"""Arrays of the ml_dtypes types in @njit code: in and out unchanged and without
copies, slices and views, array creation, scalars, and clear errors."""

import ml_dtypes
import numpy as np
import pytest
from numba import njit, typeof, types
from numba.np import numpy_support

import numbacast
from numbacast.integrations.numba_types import ELEMENT_TYPES, as_dtype_hook_installed

ELEMENT_NAMES = [t.name for t in ELEMENT_TYPES]


def every_code(name):
    t = numbacast.resolve(name)
    return np.arange(1 << t.bits, dtype=f"u{t.storage.itemsize}").view(t.storage)


def codes(a):
    return a.view(f"u{a.dtype.itemsize}")


@njit
def _identity(a):
    return a


@njit
def _slices(a):
    return a[::2, 1:], a.T, a[1], a[:, ::-1], a.reshape(-1)


@njit
def _views(a):
    raw = a.view(np.uint8)
    return raw, raw.view(ml_dtypes.float8_e5m2)


@njit
def _element(a, i):
    return a[i]


@njit
def _store(a, i, value):
    a[i] = value


@njit
def _created(n):
    return (
        np.empty(n, ml_dtypes.bfloat16),
        np.zeros((n, 2), ml_dtypes.float8_e8m0fnu),
        np.ones(n, ml_dtypes.int4),
        np.full(n, 1.7, ml_dtypes.float8_e4m3fn),
        np.full(n, np.float32(1.7), ml_dtypes.bfloat16),
    )


def test_every_ml_dtypes_type_is_registered():
    assert set(ELEMENT_NAMES) == {
        "bfloat16",
        "float8e4m3fn",
        "float8e4m3fnuz",
        "float8e5m2",
        "float8e5m2fnuz",
        "float8e8m0",
        "float4e2m1",
        "float6e2m3",
        "float6e3m2",
        "int4",
        "uint4",
        "int2",
        "uint2",
    }
    assert as_dtype_hook_installed()
    for t, element in ELEMENT_TYPES.items():
        assert numpy_support.from_dtype(t.storage) is element
        assert numpy_support.as_dtype(element) == t.storage


@pytest.mark.parametrize("name", ELEMENT_NAMES)
def test_an_array_comes_back_unchanged_and_uncopied(name):
    a = every_code(name)
    back = _identity(a)
    assert back.dtype == a.dtype and np.array_equal(codes(back), codes(a))
    assert np.shares_memory(back, a) and back.ctypes.data == a.ctypes.data


def test_array_arguments_are_typed_by_their_dtype_dimensions_layout_and_writability():
    """The type of an ml_dtypes array argument, kept per kind for speed, is
    the one its dtype, dimensions, layout and writability give, in any
    order of calls (a key that left one out would hand back another's)."""
    base = np.zeros((4, 6), ml_dtypes.bfloat16)
    read_only = base.copy()
    read_only.flags.writeable = False
    variants = [
        base,
        base.T,
        base[:, ::2],
        base[0],
        base[0, 0:1],
        base.reshape(2, 2, 6),
        read_only,
        read_only.T,
        np.zeros((), ml_dtypes.bfloat16),
        np.zeros(5, ml_dtypes.int4),
        np.zeros(5, ml_dtypes.float8_e3m4),
    ]
    for a in variants + variants[::-1]:
        layout = "C" if a.flags.c_contiguous else "F" if a.flags.f_contiguous else "A"
        want = types.Array(numpy_support.from_dtype(a.dtype), a.ndim, layout, readonly=not a.flags.writeable)
        assert typeof(a) == want, (a.shape, a.strides, a.flags.writeable)

    @njit
    def second(a):
        return a[0, 1]

    base[:] = np.arange(24).reshape(4, 6)
    read_only = base.copy()
    read_only.flags.writeable = False
    for a in (base, read_only, base.T, base[:, ::2]):
        assert codes(second(a)) == codes(a[0, 1])
    assert {sig[0].layout for sig in second.signatures} == {"C", "F", "A"}
    assert {sig[0].mutable for sig in second.signatures} == {True, False}


@pytest.mark.parametrize("name", ["bfloat16", "float8e4m3fn", "int4", "float6e2m3"])
def test_slices_and_views_behave_as_for_float32(name):
    t = numbacast.resolve(name)
    a = np.resize(every_code(name), 6 * 5).reshape(6, 5)
    f = codes(a).astype(np.float32)  # a float32 array of the same shape, to compare the layouts
    for got, want, like in zip(_slices(a), _slices.py_func(a), _slices(f)):
        assert got.dtype == t.storage and got.shape == want.shape == like.shape
        assert got.strides == want.strides if got.itemsize == want.itemsize else True
        assert np.array_equal(codes(np.ascontiguousarray(got)), codes(np.ascontiguousarray(want)))
        assert np.shares_memory(got, a)


def test_views_to_codes_and_back():
    a = every_code("float8e5m2")
    raw, again = _views(a)
    assert raw.dtype == np.uint8 and again.dtype == ml_dtypes.float8_e5m2
    assert np.array_equal(raw, codes(a)) and np.array_equal(codes(again), codes(a))
    assert np.shares_memory(raw, a) and np.shares_memory(again, a)


def test_strided_input():
    a = every_code("bfloat16")[3::7]
    back = _identity(a)
    assert back.strides == a.strides and np.array_equal(codes(back), codes(a))


def test_array_creation_inside_njit():
    empty, zeros, ones, full, full32 = _created(3)
    assert empty.dtype == ml_dtypes.bfloat16 and empty.shape == (3,)
    assert zeros.dtype == ml_dtypes.float8_e8m0fnu and not codes(zeros).any()  # as np.zeros: code 0
    assert np.array_equal(codes(ones), codes(np.ones(3, ml_dtypes.int4)))
    assert np.array_equal(codes(full), codes(np.full(3, 1.7, ml_dtypes.float8_e4m3fn)))
    assert np.array_equal(codes(full32), codes(np.full(3, np.float32(1.7), ml_dtypes.bfloat16)))


@pytest.mark.parametrize("name", ELEMENT_NAMES)
def test_scalars_in_and_out(name):
    a = every_code(name)
    for i in (0, 1, a.size // 2 + 1, a.size - 1):
        got = _element(a, i)
        assert type(got) is a.dtype.type and codes(np.array(got)) == codes(a)[i]
        b = np.zeros_like(a)
        _store(b, 0, a[i])  # a scalar passed in, stored unchanged
        assert codes(b)[0] == codes(a)[i]


def test_global_scalar_constant():
    half = ml_dtypes.bfloat16(0.5)

    @njit
    def scale(a, i):
        return a[i] * half

    a = np.array([3.0, 5.0], ml_dtypes.bfloat16)
    assert scale(a, 1) == scale.py_func(a, 1) == ml_dtypes.bfloat16(2.5)


TABLE = np.array([1.5, -2.25, 3.0, 0.5, np.nan], ml_dtypes.bfloat16)
GRID = np.arange(-6, 6, dtype=np.float32).reshape(3, 4).astype(ml_dtypes.float8_e4m3fn)
LARGE = np.linspace(-1, 1, 1 << 20, dtype=np.float32).astype(ml_dtypes.bfloat16)  # 2 MB: Numba refers to it
PLAIN = np.array([0.5, 0.25], np.float32)


def test_global_and_captured_element_arrays_are_constants_of_compiled_code():
    """Numba copies a small contiguous global array into the compiled code
    through the buffer protocol, which ml_dtypes dtypes lack ("cannot
    include dtype 'E' in a buffer"): such arrays are copied as their codes
    (docs/numba-types.md, Arrays)."""
    indices = np.arange(TABLE.size)

    @njit
    def read(i, j):
        return TABLE[i], GRID[j // 4, j % 4], LARGE[j * 80_000], PLAIN[i % 2]

    def bits(values):  # each value's dtype and bytes (NaN included)
        return [(np.asarray(v).dtype, np.asarray(v).tobytes()) for v in values]

    for i, j in zip(indices, indices * 2):
        got, want = read(i, j), read.py_func(i, j)
        assert bits(got[:3]) == bits(want[:3]) and got[3] == want[3]  # a float32 comes out as a Python float

    def captured():
        steps = np.array([0.25, 8, -448], ml_dtypes.float8_e5m2)
        return njit(lambda i: np.float32(steps[i]))

    assert [captured()(i) for i in range(3)] == [0.25, 8.0, -448.0]

    @njit
    def whole():
        return TABLE

    assert np.array_equal(whole(), TABLE, equal_nan=True) and whole().dtype == TABLE.dtype


@pytest.mark.parametrize("use", ["a[0] * 2", "np.float32(a[0])", "float(a[0])", "-a[0]", "bool(a[0])"])
def test_an_ml_dtypes_type_numbacast_does_not_know_is_a_clear_compile_time_error(use):
    a = np.ones(3, ml_dtypes.float8_e3m4)
    assert _identity(a).dtype == a.dtype  # its arrays pass through unchanged
    function = njit(eval(f"lambda a: {use}", {"np": np, "numbacast": numbacast}))
    with pytest.raises(Exception) as error:
        function(a)
    message = str(error.value)
    assert "float8_e3m4" in message
    assert "a.astype(np.float32)" in message or "unsupported dtype float8_e3m4; accepted:" in message


def test_cast_takes_the_arrays_of_the_ml_dtypes_formats_onnx_lacks():
    """Rule: docs/rules.md#rule-user-formats"""
    a = np.array([0.3, -1.7, 15.5, 100.0], ml_dtypes.float8_e3m4)
    to_float = njit(lambda a: numbacast.cast(a, "float"))
    assert to_float(a).tolist() == numbacast.cast(a, "float").tolist() == a.astype(np.float32).tolist()


def test_ufuncs_on_whole_arrays_are_refused_with_what_to_do():
    @njit
    def whole(a):
        return a * 1.5

    with pytest.raises(TypeError, match=r"NumPy operators on whole bfloat16 arrays .* Loop over the elements"):
        whole(np.zeros(3, ml_dtypes.bfloat16))


def test_dtypes_compare_as_in_numpy():
    """``a.dtype == b.dtype`` and ``!=``, with dtypes or scalar classes, where one is an ml_dtypes type: NumPy's
    answer (a TypeError "data type 'E' not understood" from Numba's ufunc typing before).
    Rule: docs/numba-types.md (Arrays)"""

    @njit
    def compare(a, b):
        return (
            a.dtype == b.dtype,
            a.dtype != b.dtype,
            a.dtype == a.dtype,
            a.dtype != a.dtype,
            a.dtype == ml_dtypes.bfloat16,
            np.float32 != a.dtype,
            ml_dtypes.int4 == a.dtype,
        )

    arrays = [np.zeros(2, dtype) for dtype in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.int4, np.float32)]
    for a in arrays[:3] + [np.zeros(2, ml_dtypes.float8_e3m4)]:
        for b in arrays:
            assert compare(a, b) == compare.py_func(a, b), (a.dtype, b.dtype)
