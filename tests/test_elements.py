"""Elements of the ml_dtypes types in @njit code against NumPy + ml_dtypes, bit
for bit: values, stores, operators, and the same user loop with and without
@njit over every code of every type."""

import functools
import operator
import warnings

import ml_dtypes
import numpy as np
import pytest
from numba import njit, prange

import numbacast
from numbacast.integrations.numba_types import ELEMENT_TYPES

FLOAT_NAMES = [t.name for t in ELEMENT_TYPES if t.is_float]
INT_NAMES = [t.name for t in ELEMENT_TYPES if t.is_integer]
ALL_NAMES = FLOAT_NAMES + INT_NAMES
RNG = np.random.default_rng(20240613)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def storage(name):
    return numbacast.resolve(name).storage


def every_code(name):
    t = numbacast.resolve(name)
    return np.arange(1 << t.bits, dtype=f"u{t.storage.itemsize}").view(t.storage)


def codes(a):
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind != "b" else a


def assert_same(got, want, nan_sign=True):
    """Same dtype and bits; with ``nan_sign`` False, NaNs of either sign are equal."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    bad = codes(got) != codes(want)
    if not nan_sign:
        bad &= ~(np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32)))
    assert not bad.any(), f"{bad.sum()} differ; first at {np.flatnonzero(bad)[:5]}: {got[bad][:5]} vs {want[bad][:5]}"


# --------------------------------------------------------------------------
# The acceptance loop: read, multiply by 1.5, add 0.25, store
# --------------------------------------------------------------------------


def scale_shift(a, out):
    for i in range(a.size):
        out[i] = a[i] * 1.5 + 0.25


def scale_shift_ints(a, out):  # NumPy computes int4 * 1.5 in float16, which Numba has not
    for i in range(a.size):
        out[i] = np.float32(a[i]) * np.float32(1.5) + np.float32(0.25)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_the_same_loop_gives_the_same_bits_with_and_without_njit(name):
    a = every_code(name)
    loop = scale_shift if name in FLOAT_NAMES else scale_shift_ints
    expected, got = np.empty_like(a), np.empty_like(a)
    loop(a, expected)
    njit(loop)(a, got)
    assert_same(got, expected)


# --------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------


@njit
def _values(a, as32, as64, as_int, as_bool):
    for i in range(a.size):
        as32[i] = np.float32(a[i])
        as64[i] = float(a[i])
        as_int[i] = int(a[i]) if a[i] == a[i] and abs(np.float32(a[i])) < 1e18 else 0
        as_bool[i] = bool(a[i])


@pytest.mark.parametrize("name", ALL_NAMES)
def test_values_are_exact(name):
    a = every_code(name)
    as32, as64 = np.empty(a.size, np.float32), np.empty(a.size, np.float64)
    as_int, as_bool = np.empty(a.size, np.int64), np.empty(a.size, np.bool_)
    _values(a, as32, as64, as_int, as_bool)
    assert_same(as32, a.astype(np.float32))  # NaN payloads included
    assert_same(as64, a.astype(np.float32).astype(np.float64))
    finite = np.isfinite(a.astype(np.float32)) & (np.abs(a.astype(np.float32)) < 1e18)
    assert np.array_equal(as_int[finite], np.array([int(v) for v in a[finite]], np.int64))
    assert np.array_equal(as_bool, np.array([bool(v) for v in a]))


# --------------------------------------------------------------------------
# Stores
# --------------------------------------------------------------------------


@njit
def _store(values, out):
    for i in range(values.size):
        out[i] = values[i]


@njit
def _construct_bf16(values, out):
    for i in range(values.size):
        out[i] = ml_dtypes.bfloat16(values[i])


def interesting_float32(name):
    """Every value of the type, the halfway points and their neighbours, both signs, specials, random bits."""
    values = every_code(name).astype(np.float32)
    values = np.unique(values[np.isfinite(values)])
    halfway = ((values[:-1].astype(np.float64) + values[1:]) / 2).astype(np.float32)
    base = np.concatenate([values, halfway, values * np.float32(1.5), values * np.float32(1e4)])
    bits = base.view(np.uint32).astype(np.int64)
    near = np.concatenate([bits + d for d in (-2, -1, 0, 1, 2)])
    near = np.concatenate([near, near | 0x80000000]) % (1 << 32)
    specials = [0x7F800001, 0x7FC00000, 0xFFC00000, 0x7FFFFFFF, 0xFF800001, 0x7F800000, 0xFF800000, 0, 0x80000000, 1]
    noise = RNG.integers(0, 1 << 32, 50_000)
    return np.concatenate([near, specials, noise]).astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_storing_float32_rounds_as_numpy(name):
    x = interesting_float32(name)
    got = np.empty(x.size, storage(name))
    _store(x, got)
    assert_same(got, x.astype(storage(name)))  # NumPy's astype and a[i] = v agree for float32 (checked below)
    sample = x[:: max(1, x.size // 3000)]
    one_by_one = np.empty(sample.size, storage(name))
    for i, v in enumerate(sample):
        one_by_one[i] = v
    assert_same(got[:: max(1, x.size // 3000)], one_by_one)


@pytest.mark.parametrize("name", ["float4e2m1", "float6e2m3", "float6e3m2"])
def test_storing_every_float32_nan_gives_numpys_zero(name):
    """Every float32 NaN (each payload, both signs) stored into a type without
    NaN: the zero of the other sign, as ml_dtypes' ``astype`` gives."""
    payloads = np.arange(1, 1 << 23, dtype=np.uint32)
    x = np.concatenate([0x7F800000 | payloads, 0xFF800000 | payloads]).view(np.float32)
    got = np.empty(x.size, storage(name))
    _store(x, got)
    with np.errstate(invalid="ignore"):
        assert_same(got, x.astype(storage(name)))


@pytest.mark.parametrize("name", ALL_NAMES)
def test_storing_float64_rounds_as_numpy(name):
    """A float64 stores as NumPy casts a float64 array, and as a loop of
    float64 elements stores them: through float32 first (two roundings),
    integers through int32.  Rule: docs/numba-types.md (Stores)"""
    x32 = interesting_float32(name)[::5].astype(np.float64)
    x = np.concatenate(
        [
            x32 * (1 + 2.0**-40),
            x32 * (1 - 2.0**-40),
            x32,
            (RNG.integers(0, 1 << 63, 5000, dtype=np.uint64) | np.uint64(1)).view(np.float64),
            2.0 ** np.arange(-160.0, 140.0, 0.37),
        ]
    )
    values = np.unique(every_code(name).astype(np.float64))
    halfway = (values[:-1] + values[1:])[np.isfinite(values[:-1] + values[1:])] / 2
    x = np.concatenate([x, halfway * (1 - 2.0**-50), halfway * (1 + 2.0**-50)])  # one float64 rounding differs
    x = np.concatenate([x, [2.0**31 - 1, 2.0**31, -(2.0**31), 2.0**31 + 3, 2.0**40 + 5, -(2.0**33) - 1]])
    got = np.empty(x.size, storage(name))
    _store(x, got)
    with np.errstate(invalid="ignore", over="ignore"):
        assert_same(got, x.astype(storage(name)))
        one_by_one = np.empty(x.size // 7 + 1, storage(name))
        for i, v in enumerate(x[::7]):  # NumPy float64 scalars
            one_by_one[i] = v
    assert_same(got[::7], one_by_one)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_storing_integers_and_bools_rounds_as_numpy(name):
    ints = np.array([0, 1, -1, 3, 7, 8, 15, 16, 17, -9, 100, 300, 460, 1000, -1000, 2**24 + 2**16 + 1, 2**62 + 2**40])
    got = np.empty(ints.size, storage(name))
    _store(ints, got)
    expected = np.empty_like(got)
    for i, v in enumerate(ints.tolist()):
        expected[i] = v
    assert_same(got, expected)
    bools = np.array([True, False])
    got = np.empty(2, storage(name))
    _store(bools, got)
    assert_same(got, np.array([1, 0]).astype(storage(name)))


def test_scalar_constructor_rounds_as_a_store():
    x = interesting_float32("bfloat16")[:5000].astype(np.float64) * (1 + 2.0**-30)
    got = np.empty(x.size, ml_dtypes.bfloat16)
    _construct_bf16(x, got)
    assert_same(got, np.array([ml_dtypes.bfloat16(v) for v in x.tolist()]))


@pytest.mark.parametrize("source", ["bfloat16", "float8e4m3fn", "float8e5m2", "int4", "float6e3m2"])
@pytest.mark.parametrize("target", ["float8e5m2", "bfloat16", "uint2", "float4e2m1", "float8e8m0"])
def test_storing_an_element_of_another_type(source, target):
    a = every_code(source)
    if not np.can_cast(a.dtype, storage(target), "unsafe"):  # NumPy has no such cast: neither has @njit code
        with pytest.raises(TypeError, match=f"no cast from {a.dtype} to {storage(target)}"):
            _store(a, np.empty(a.size, storage(target)))
        return
    got = np.empty(a.size, storage(target))
    _store(a, got)
    expected = np.empty_like(got)
    for i, v in enumerate(a):
        expected[i] = v
    assert_same(got, expected)


# --------------------------------------------------------------------------
# Operators
# --------------------------------------------------------------------------

ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}
COMPARISONS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@njit
def _elementwise(a, b, add, sub, mul, div, compared):
    for i in range(a.size):
        x, y = a[i], b[i]
        add[i], sub[i], mul[i], div[i] = x + y, x - y, x * y, x / y
        compared[0, i], compared[1, i], compared[2, i] = x == y, x != y, x < y
        compared[3, i], compared[4, i], compared[5, i] = x <= y, x > y, x >= y


@njit
def _with_scalar(a, k, add, sub, mul, div, compared):
    for i in range(a.size):
        x = a[i]
        add[i], sub[i], mul[i], div[i] = x + k, k - x, x * k, k / x
        compared[0, i], compared[1, i], compared[2, i] = x == k, k != x, x < k
        compared[3, i], compared[4, i], compared[5, i] = k <= x, x > k, x >= k


@njit
def _int_elementwise(a, b, add, sub, mul, compared):
    for i in range(a.size):
        x, y = a[i], b[i]
        add[i], sub[i], mul[i] = x + y, x - y, x * y
        compared[0, i], compared[1, i], compared[2, i] = x == y, x != y, x < y
        compared[3, i], compared[4, i], compared[5, i] = x <= y, x > y, x >= y


@njit
def _int_with_scalar(a, k, add, sub, mul, compared):
    for i in range(a.size):
        x = a[i]
        add[i], sub[i], mul[i] = x + k, k - x, x * k
        compared[0, i], compared[1, i], compared[2, i] = x == k, k != x, x < k
        compared[3, i], compared[4, i], compared[5, i] = k <= x, x > k, x >= k


def pairs(name):
    """Every pair of codes of an 8-bit or narrower type; 200,000 random pairs of BFLOAT16."""
    a = every_code(name)
    if a.size > 256:
        return RNG.choice(a, 200_000), RNG.choice(a, 200_000)
    x, y = np.meshgrid(a, a)
    return x.reshape(-1), y.reshape(-1)


def expected_with_scalar(a, k, int_type=False):
    """What NumPy gives for the expressions of _with_scalar (arrays and scalars follow one rule)."""
    results = [a + k, k - a, a * k] + ([] if int_type else [k / a])
    compared = np.array([a == k, k != a, a < k, k <= a, a > k, a >= k])
    return results, compared


def run(kernel, a, other, results_like, n):
    outputs = [np.empty(r.shape, r.dtype) for r in results_like]
    compared = np.empty((6, n), np.bool_)
    kernel(a, other, *outputs, compared)
    return outputs, compared


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_operators_of_two_elements(name):
    a, b = pairs(name)
    want = [op(a, b) for op in ARITHMETIC.values()]
    want_compared = np.array([op(a, b) for op in COMPARISONS.values()])
    got, compared = run(_elementwise, a, b, want, a.size)
    for g, w in zip(got, want):
        assert g.dtype == a.dtype
        assert_same(g, w, nan_sign=False)  # ml_dtypes' compiled loops pick NaN signs of their own
    assert np.array_equal(compared, want_compared)


@pytest.mark.parametrize("name", FLOAT_NAMES)
@pytest.mark.parametrize("k", [np.float32(1.7), np.float32(-0.3), 0.1, -3.0e5, 3, -7, 0], ids=repr)
def test_operators_with_a_number(name, k):
    a = every_code(name)
    want, want_compared = expected_with_scalar(a, k)
    got, compared = run(_with_scalar, a, k, want, a.size)
    # an int operand is stored into the type first: x op k is an operation of two elements (NaN signs differ)
    for g, w in zip(got, want):
        assert_same(g, w, nan_sign=not isinstance(k, int))
    assert np.array_equal(compared, want_compared)


@pytest.mark.parametrize("name", INT_NAMES)
def test_integer_operators(name):
    a, b = pairs(name)
    want = [a + b, a - b, a * b]
    got, compared = run(_int_elementwise, a, b, want, a.size)
    for g, w in zip(got, want):
        assert_same(g, w)
    assert np.array_equal(compared, np.array([op(a, b) for op in COMPARISONS.values()]))
    for k in (np.float32(1.7), 3, -100, 127):
        want, want_compared = expected_with_scalar(a, k, int_type=True)
        got, compared = run(_int_with_scalar, a, k, want, a.size)
        for g, w in zip(got, want):
            assert_same(g, w)
        assert np.array_equal(compared, want_compared)


def test_integer_operand_out_of_int8_raises_as_in_numpy():
    a = every_code("int4")
    with pytest.raises(OverflowError):
        a[0] + 1000
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        run(_int_with_scalar, a, 1000, [a + 1, a + 1, a + 1], a.size)


@njit
def _unary(a, negated, absolute):
    for i in range(a.size):
        negated[i] = -a[i]
        absolute[i] = abs(a[i])


@pytest.mark.parametrize("name", ALL_NAMES)
def test_negation_and_absolute_value(name):
    a = every_code(name)
    want_neg, want_abs = np.array([-v for v in a]), np.array([abs(v) for v in a])
    got_neg, got_abs = np.empty_like(want_neg), np.empty_like(want_abs)
    _unary(a, got_neg, got_abs)
    assert_same(got_neg, want_neg)
    assert_same(got_abs, want_abs)


def test_builtin_max_and_min():
    @njit
    def extremes(a, b):
        return max(a[0], b[0]), min(a[0], b[0])

    a, b = np.array([1.5], ml_dtypes.bfloat16), np.array([-2.0], ml_dtypes.bfloat16)
    assert extremes(a, b) == extremes.py_func(a, b)


@pytest.mark.parametrize(
    "expression, message",
    [
        ("a[0] ** 2", r"bfloat16 \*\* .* is not supported"),
        ("a[0] // a[1]", "bfloat16 // bfloat16 is not supported"),
        ("a[0] % a[1]", "bfloat16 % bfloat16 is not supported"),
        ("~a[0]", "~ is not supported"),
        ("a[0] + b[0]", "two different ml_dtypes types"),
        ("a[0] * np.int32(2)", "float64 for most integers"),
        ("i[0] * 1.5", "in float16"),
        ("i[0] / i[1]", "in float16"),
    ],
)
def test_unsupported_operators_are_compile_time_errors_with_what_to_do(expression, message):
    function = njit(eval(f"lambda a, b, i: {expression}", {"np": np}))
    a, b, i = np.ones(2, ml_dtypes.bfloat16), np.ones(2, ml_dtypes.float8_e4m3fn), np.ones(2, ml_dtypes.int4)
    with pytest.raises(TypeError, match=message) as error:
        function(a, b, i)
    assert "Write instead" in str(error.value) or "write ~" in str(error.value)


def _accumulate(a):
    acc = 0
    for i in range(a.size):
        acc = acc + a[i]
    return acc


def _either(a, flag):
    v = np.int8(3)
    if flag:
        v = a[0]
    return v


def test_a_variable_of_a_number_and_an_element_has_numpys_common_type_or_is_refused():
    """``v`` of an int8 and a bfloat16 is a bfloat16 (NumPy's promotion) of
    Python's value; an int64 and a bfloat16 have no common type in NumPy: a
    TypeError saying what to write (it was NumPy's DTypePromotionError from
    inside Numba's typing)."""
    a = np.array([2.5, 1.0], ml_dtypes.bfloat16)
    for flag in (True, False):
        got, want = njit(_either)(a, flag), _either(a, flag)
        assert type(got) is ml_dtypes.bfloat16 and float(got) == float(want)
    with pytest.raises(TypeError, match="no type that holds both int64 and bfloat16") as error:
        njit(_accumulate)(a)
    assert "Write instead" in str(error.value) and type(error.value) is TypeError
    assert _accumulate(a) == 3.5  # Python's 0 is a Python int, which takes the element's type


# --------------------------------------------------------------------------
# A parallel user loop: the same bits as numbacast.cast
# --------------------------------------------------------------------------


@njit(parallel=True)
def _quantize(x, out):
    for i in prange(x.size):
        out[i] = x[i]


@njit(parallel=True)
def _dequantize(a, out):
    for i in prange(a.size):
        out[i] = np.float32(a[i])


@pytest.mark.parametrize("name", ["bfloat16", "float8e4m3fn", "float8e5m2fnuz", "float4e2m1"])
def test_prange_loop_equals_cast_with_saturate_false(name):
    x = np.concatenate([interesting_float32(name), np.zeros(1 << 15, np.float32)])  # long enough to run in parallel
    x = x[~np.isnan(x)]  # float4 and float6: NaN stores give zero, cast gives the largest value
    out = np.empty(x.size, storage(name))
    _quantize(x, out)
    assert_same(out, numbacast.cast(x, name, saturate=False))
    back = np.empty(x.size, np.float32)
    _dequantize(out, back)
    assert_same(back, numbacast.cast(out, "float"), nan_sign=True)


@pytest.mark.parametrize("name", ["bfloat16", "float8e5m2", "float8e8m0", "float4e2m1", "int4"])
@pytest.mark.parametrize(
    "target", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8, np.uint16, np.uint32, np.uint64, np.bool_]
)
def test_storing_an_element_into_an_array_of_numbers_as_numpy(name, target):
    """``o[i] = a[i]`` into a float, integer or bool array: NumPy's astype,
    every code (the float8, float6, float4 and E8M0 types take NaN to 0 and
    infinities to the integer type's bounds, as ml_dtypes casts them).
    Rule: docs/numba-types.md (Stores)"""
    a = every_code(name)
    if not np.can_cast(a.dtype, target, "unsafe"):
        pytest.skip("NumPy has no such cast")
    if name == "bfloat16" and target == np.uint32:
        pytest.skip("NumPy's own loops disagree: NaN gives 0 alone, 2**31 among 64; 2**32 + 2**25 gives 2**25, 0")
    got = np.empty(a.size, target)
    _store(a, got)
    with np.errstate(invalid="ignore", over="ignore"):
        want = a.astype(target)
    same = (got == want) | ((got != got) & (want != want))
    assert same.all(), [(float(a[i]), got[i], want[i]) for i in np.flatnonzero(~same)[:5]]


@functools.cache
def _constructor_loop(integer_type):
    @njit
    def construct(values, out):
        for i in range(values.size):
            out[i] = integer_type(values[i])

    return construct


@pytest.mark.parametrize("name", ["bfloat16", "float8e5m2", "float8e8m0", "float4e2m1"])
@pytest.mark.parametrize("target", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64, np.uint64])
def test_integer_constructors_of_an_element_as_numpy(name, target):
    """``np.uint8(x)`` ... of an element in ``@njit`` code gives what the same
    constructor gives in Python, every code (NaN, infinities, values beyond
    the type's range included); the same rule as a store into such an array.
    Rule: docs/numba-types.md (Stores)"""
    a = every_code(name)
    got = np.empty(a.size, target)
    _constructor_loop(target)(a, got)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.array([target(x) for x in a], target)
    assert np.array_equal(got, want), [(float(a[i]), got[i], want[i]) for i in np.flatnonzero(got != want)[:5]]
