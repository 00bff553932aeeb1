"""NumPy's reductions of ml_dtypes arrays in @njit code against NumPy + ml_dtypes
(the same function's py_func), bit for bit and type for type, for every type:
sums, products, their running versions, extrema, arg-extrema and means, with
NaN, -0 and infinities where the type has them, in NumPy's order of the
elements; and the reductions that are refused."""

import re
import warnings

import ml_dtypes
import numpy as np
import pytest
from numba import njit, prange, types

import numbacast
from numbacast.integrations.numba_types import ELEMENT_TYPES

NAMES = [t.name for t in ELEMENT_TYPES]
RNG = np.random.default_rng(20250611)


@pytest.fixture(autouse=True)
def _quiet():  # NumPy warns for the mean of an empty array and for NaN
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def every_code(name):
    t = numbacast.resolve(name)
    return np.arange(1 << t.bits, dtype=f"u{t.storage.itemsize}").view(t.storage)


def with_specials(name, size=600):
    """A shuffled sample of every code (NaN, infinities, -0 included where the type has them)."""
    codes = every_code(name)
    return RNG.permutation(codes)[:size]


def finite(name, size=600):
    """A shuffled sample of the finite codes, small ones weighted so that sums round."""
    codes = every_code(name)
    values = codes.astype(np.float32)
    kept = codes[np.isfinite(values) & (np.abs(values) <= np.nanmax(np.abs(values[np.isfinite(values)])) / 64)]
    return RNG.choice(kept, size)


def has_nan(name):
    return bool(np.isnan(np.float32(np.array([np.nan]).astype(numbacast.resolve(name).storage)[0])))


def bits(x, nan_sign=True):
    """dtype, shape and codes; with ``nan_sign`` False, every NaN as one code."""
    x = np.asarray(x)
    if x.dtype.kind in "biu":
        return x.dtype, x.shape, x.tolist()
    codes = x.view(f"u{x.dtype.itemsize}").tolist()
    if not nan_sign:
        codes = np.where(np.isnan(x.astype(np.float32)), -1, codes).tolist()
    return x.dtype, x.shape, codes


def assert_same(got, want, nan_sign=True):
    """The results of a compiled function against its py_func's: NumPy types and bits; NaN signs
    only with ``nan_sign`` (a NaN from arithmetic has the float32 operation's, see test_elements)."""
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if isinstance(g, int) and not isinstance(g, bool):  # Numba returns a Python int for its integer types
            assert g == w and np.asarray(w).dtype.kind in "iu", (i, g, w)
        else:
            assert bits(g, nan_sign) == bits(w, nan_sign), (i, g, w)


@njit
def _arithmetic(a):
    return (
        np.sum(a),
        a.sum(),
        np.nansum(a),
        np.prod(a),
        a.prod(),
        np.nanprod(a),
        np.cumsum(a),
        a.cumsum(),
        np.nancumsum(a),
        np.cumprod(a),
        a.cumprod(),
        np.nancumprod(a),
        np.mean(a),
        a.mean(),
        np.nanmean(a),
        np.ptp(a),
    )


@njit
def _selections(a):
    return (
        np.max(a),
        a.max(),
        np.amax(a),
        np.min(a),
        a.min(),
        np.amin(a),
        np.nanmax(a),
        np.nanmin(a),
        np.argmax(a),
        a.argmax(),
        np.nanargmax(a),
        np.argmin(a),
        a.argmin(),
        np.nanargmin(a),
    )


def check_reductions(a):
    assert_same(_arithmetic(a), _arithmetic.py_func(a), nan_sign=False)
    assert_same(_selections(a), _selections.py_func(a))


@pytest.mark.parametrize("name", NAMES)
def test_reductions_equal_numpys(name):
    """Rule: docs/numba-types.md (Reductions)"""
    for a in (with_specials(name), finite(name), finite(name, 3)):
        check_reductions(a)
    if not numbacast.resolve(name).is_integer:  # NaN first, last, alone (where the type has it); -0 against +0
        t = numbacast.resolve(name).storage
        for values in ([np.nan, 1, 2], [1, 2, np.nan], [np.nan], [-0.0, 0.0], [0.0, -0.0], [2, -0.0, 0.0, 1]):
            check_reductions(np.array(values, np.float32).astype(t))


#: One of each kind: BFLOAT16, a float8 type, one without NaN, E8M0 (identity NaN), an integer type.
KINDS = ["bfloat16", "float8e4m3fn", "float4e2m1", "float8e8m0", "int4"]


@njit
def _ordered(a):
    return np.sum(a), np.prod(a), np.cumsum(a), np.mean(a), np.max(a), np.nanmin(a), np.argmax(a)


@pytest.mark.parametrize("name", KINDS)
def test_reductions_walk_the_elements_in_numpys_order(name):
    """A transposed, partly reversed array: NumPy reduces in ``a.ravel(order="K")``
    order (axes by decreasing stride, negative strides as they are) and accumulates in C order."""
    a = finite(name, 24 * 25).reshape(24, 25)[::-1, ::2].T
    if has_nan(name):  # the first NaN in NumPy's order is the maximum
        a[3, 5] = a[7, 2] = np.nan
    assert_same(_ordered(a), _ordered.py_func(a))


def test_a_broadcast_array_is_summed_in_numpys_order():
    """An axis of stride 0 keeps its C place in NumPy's order, whatever the other strides."""
    line = (np.linspace(1, 2, 10) * 2.0 ** np.arange(-9, 11, 2)).astype(np.float32).astype(ml_dtypes.bfloat16)
    total = njit(lambda a: np.sum(a))  # 8032 by columns, 8064 by rows as NumPy
    for a in (np.broadcast_to(line, (6, 10)), np.broadcast_to(line[:, None], (10, 6)).T[::-1]):
        assert bits(total(a)) == bits(np.sum(a))


def test_a_three_dimensional_array_is_summed_in_numpys_order():
    """Three axes of mixed strides, some reversed: the sum in NumPy's order, which C order does not give."""
    values = np.linspace(1, 2, 60) * 2.0 ** np.tile(np.arange(-9, 11, 2), 6)
    block = values.astype(np.float32).astype(ml_dtypes.bfloat16).reshape(3, 4, 5)
    total = njit(lambda a: np.sum(a))
    for a in (block.transpose(1, 0, 2), block.transpose(2, 0, 1), block[:, ::-2].transpose(1, 0, 2), block[::-1].T):
        assert bits(total(a)) == bits(np.sum(a))
        assert bits(np.sum(np.ascontiguousarray(a))) != bits(np.sum(a))  # the order matters


@njit
def _mean(a):
    return np.mean(a)


@njit
def _empty_reductions(a):
    return np.sum(a), np.prod(a), np.cumsum(a), np.cumprod(a)


@pytest.mark.parametrize("name", NAMES)
def test_reductions_of_an_empty_array(name):
    a = every_code(name)[:0]
    assert_same(_empty_reductions(a), _empty_reductions.py_func(a))
    if not numbacast.resolve(name).is_integer:  # NaN (0 / 0), its sign included; the integer types raise, below
        assert bits(_mean(a)) == bits(np.mean(a))
    with pytest.raises(ValueError) as numpy_error:
        _selections.py_func(a)
    with pytest.raises(ValueError, match=re.escape(str(numpy_error.value))):
        _selections(a)


@pytest.mark.parametrize("function", [np.min, np.nanmax, np.nanmin, np.argmax, np.argmin])
def test_the_errors_of_an_empty_array_are_numpys(function):
    a = np.zeros(0, ml_dtypes.bfloat16)
    with pytest.raises(ValueError) as numpy_error:
        function(a)
    with pytest.raises(ValueError, match=re.escape(str(numpy_error.value))):
        njit(lambda a: function(a))(a)


@njit
def _along(a):
    return np.sum(a, axis=0), a.sum(axis=1), np.sum(a, -1), np.cumsum(a, axis=0), a.cumsum(axis=2)


@pytest.mark.parametrize("name", KINDS)
def test_reductions_along_an_axis(name):
    a = finite(name, 4 * 5 * 6).reshape(4, 5, 6).transpose(1, 0, 2)[:, ::-1]
    assert_same(_along(a), _along.py_func(a), nan_sign=False)
    line = finite(name, 7)
    of_a_line = njit(lambda a: (np.sum(a, axis=0), np.cumsum(a, axis=-1)))
    assert_same(of_a_line(line), of_a_line.py_func(line))


@pytest.mark.parametrize("name", ["bfloat16", "float8e8m0", "int4"])
def test_an_axis_out_of_bounds_is_numpys_error(name):
    a = finite(name, 6).reshape(2, 3)
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds for array of dimension 2"):
        njit(lambda a: np.sum(a, axis=2))(a)


def test_cumsum_of_float8e8m0_sums():
    """The reported case: NaN for every element before (a running sum from the code of 0, NaN in FLOAT8E8M0)."""
    a = np.array([2, 4, 8], np.float32).astype(ml_dtypes.float8_e8m0fnu)
    got = njit(lambda a: np.cumsum(a))(a)
    assert got.dtype == np.cumsum(a).dtype == ml_dtypes.float8_e8m0fnu
    assert got.astype(np.float32).tolist() == np.cumsum(a).astype(np.float32).tolist() == [2, 8, 16]


@pytest.mark.parametrize("name", ["int4", "uint4", "int2", "uint2"])
def test_the_extrema_of_the_integer_types_are_int8(name):
    """NumPy computes them in int8, the nearest type with a maximum loop."""
    compiled = njit(lambda a: (np.max(a), a.min(), np.nanmax(a), np.ptp(a)))
    a = finite(name, 50)
    assert compiled(a) == (np.max(a), a.min(), np.nanmax(a), np.ptp(a))
    assert {np.asarray(v).dtype for v in (np.max(a), a.min(), np.ptp(a))} == {np.dtype(np.int8)}
    assert compiled.nopython_signatures[0].return_type == types.UniTuple(types.int8, 4)


def test_the_mean_of_an_int4_array_is_numpys():
    """NumPy sums in INT4 (wrapping around), divides in float64 and truncates
    into INT4; its mean of an empty array is a ValueError."""
    mean = njit(lambda a: a.mean())
    for values in ([1, 2, 4], [7, 7, 7], [-8, -8, 1], [5]):
        a = np.array(values, ml_dtypes.int4)
        got, want = mean(a), a.mean()
        assert type(got) is type(want) is ml_dtypes.int4 and got == want, (values, got, want)
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        np.mean(np.array([], ml_dtypes.int4))
    with pytest.raises(ValueError, match="cannot convert float NaN to integer"):
        mean(np.array([], ml_dtypes.int4))


@pytest.mark.parametrize("name", ["bfloat16", "float8e4m3fn", "float4e2m1"])
def test_the_mean_divides_in_float64_and_rounds_as_numpy(name):
    """A long array: the quotient's one rounding into the type (two for BFLOAT16) is NumPy's."""
    a = finite(name, 70001)
    assert bits(_mean(a)) == bits(np.mean(a))
    for size in range(1, 40):
        assert bits(_mean(a[:size])) == bits(np.mean(a[:size])), size


@pytest.mark.parametrize(
    "call",
    [
        "np.var(a)",
        "a.std()",
        "np.median(a)",
        "np.percentile(a, 50)",
        "np.nanstd(a)",
        "np.average(a)",
        "np.sum(a, dtype=np.float32)",
        "np.sum(a, axis=(0,))",
        "np.argmax(a, axis=0)",
    ],
)
def test_the_other_statistics_are_refused_with_what_to_write(call):
    function = njit(eval(f"lambda a: {call}", {"np": np}))
    with pytest.raises(TypeError, match=r"numbacast: .* of bfloat16 arrays is not supported in @njit code.*Write"):
        function(np.ones(4, ml_dtypes.bfloat16))


def test_parallel_code_uses_numpys_rules():
    """Numba's parallel versions of np.max ... (which did not compile for these arrays) are not used for them."""

    @njit(parallel=True)
    def doubled_then_reduced(a):
        out = np.empty_like(a)
        for i in prange(a.size):
            out[i] = a[i] * 2
        return np.max(out), np.argmin(out), np.sum(out), np.mean(out)

    a = np.array([1, np.nan, 3, -0.0], np.float32).astype(ml_dtypes.bfloat16)
    assert_same(doubled_then_reduced(a), doubled_then_reduced.py_func(a))
