"""``rounding=`` (every mode, stochastic with ``seed``, ``stochastic_bits`` and
``random_bits``) in ``numbacast.cast`` called from a user's @njit code: the
exact reference's codes for the deterministic modes and for given random
bits, the Python call's bits for a seed, and the Python call's checks."""

import re

import exact
import numpy as np
import pytest
from conftest import assert_same_error_in_njit, check_against_reference
from numba import njit

import numbacast
from numbacast.engine.kernels import PARALLEL_MIN

EDGES = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.1, -0.1, 464.0, 465.0, 448.0, 449.0, 1e-3, -1e-3, 1e-9, 3e38, -3e38, np.inf, -np.inf]
    + [0.25, 0.75, 2.5, -2.5, 5.0, 1.0625, -1.125, 3.0, np.nan],  # ties of the narrow types among them
    np.float32,
)


def sample(size, seed=0):
    """Edge values, then magnitudes spread over many binades, both signs."""
    rng = np.random.default_rng(seed)
    spread = rng.standard_normal(size) * 2.0 ** rng.integers(-20, 20, size)
    return np.concatenate([EDGES, spread.astype(np.float32)])


def codes(a):
    return a.view(f"u{a.dtype.itemsize}")


def compiled(target, options):
    """An @njit function of ``a`` casting it to ``target`` with literal ``options``."""
    arguments = ", ".join(f"{name}={value!r}" for name, value in options.items())
    return njit(eval(f"lambda a: numbacast.cast(a, {target!r}, {arguments})", {"numbacast": numbacast}))


@pytest.mark.parametrize(
    "target, options",
    [
        ("float8e4m3fn", dict(rounding="toward_zero")),
        ("float6e3m2", dict(rounding="toward_positive")),
        ("bfloat16", dict(rounding="toward_negative", saturate=False)),
        ("float4e2m1", dict(rounding="nearest_away")),
        ("float8e8m0", dict(rounding="toward_zero")),
    ],
)
def test_directed_and_away_modes_give_the_exact_reference(target, options):
    x = sample(3000)
    check_against_reference("float", codes(x), target, options, compiled(target, options)(x))


@njit
def _stochastic(a, seed):
    return numbacast.cast(a, "float8e4m3fn", rounding="stochastic", seed=seed)


@pytest.mark.parametrize("size", [1000, PARALLEL_MIN + 5])
def test_a_seeded_stochastic_cast_is_the_python_call(size):
    """The same bits as the Python call for a seed given at run time, from
    the serial loop and the parallel one, and from a reversed 2-D view."""
    x = sample(size - EDGES.size, seed=1)
    seed = 2**63 + 12345
    want = numbacast.cast(x, "float8e4m3fn", rounding="stochastic", seed=seed)
    assert np.array_equal(codes(_stochastic(x, np.uint64(seed))), codes(want))
    view = x[: (x.size // 8) * 8].reshape(8, -1)[::-1, ::-1]
    want = numbacast.cast(view, "float8e4m3fn", rounding="stochastic", seed=7)
    assert np.array_equal(codes(_stochastic(view, 7)), codes(want))


def test_stochastic_rounding_in_njit_code_needs_a_seed_or_random_bits():
    """numbacast draws no seed of its own in @njit code (it would use up the
    user's np.random draws): a TypeError, when the function compiles, saying what to give."""

    @njit
    def unseeded(a):
        return numbacast.cast(a, "bfloat16", rounding="stochastic")

    with pytest.raises(TypeError, match=re.escape("needs seed= (an integer) or random_bits=")):
        unseeded(EDGES)

    @njit
    def into_integers(a):  # floats round stochastically into integer types too
        return numbacast.cast(a, "int8", rounding="stochastic")

    with pytest.raises(TypeError, match=re.escape("needs seed= (an integer) or random_bits=")):
        into_integers(EDGES)

    @njit
    def from_integers(a):  # nothing rounds: no seed needed
        return numbacast.cast(a, "int8", rounding="stochastic")

    integers = np.arange(-300, 300, 7, dtype=np.int32)
    assert np.array_equal(from_integers(integers), numbacast.cast(integers, "int8"))


@njit
def _given_bits(a, r):
    return numbacast.cast(a, "float4e2m1", rounding="stochastic", random_bits=r, stochastic_bits=6)


def test_given_random_bits_give_the_exact_reference():
    x = sample(2000, seed=2)
    r = np.random.default_rng(3).integers(0, 64, x.shape).astype(np.uint8)
    got = codes(_given_bits(x, r))
    want = [
        exact.cast_code("float", c, "float4e2m1", rounding="stochastic", random=(int(b), 6))
        for c, b in zip(codes(x).tolist(), r.tolist())
    ]
    assert got.tolist() == want


def test_a_stochastic_cast_into_out_any_strides():
    @njit
    def into(a, out):
        return numbacast.cast(a, "bfloat16", rounding="stochastic", seed=11, out=out)

    x = sample(3000, seed=4).reshape(-1)[:3000].reshape(60, 50)
    want = numbacast.cast(x, "bfloat16", rounding="stochastic", seed=11)
    for out in (np.empty_like(want), np.empty((50, 60), want.dtype).T):
        assert np.shares_memory(into(x, out), out)
        assert np.array_equal(codes(np.ascontiguousarray(out)), codes(want))


@njit
def _given_bits_into(a, r, out):
    return numbacast.cast(a, "float4e2m1", rounding="stochastic", random_bits=r, stochastic_bits=6, out=out)


@njit
def _seeded_into(a, seed, out):
    return numbacast.cast(a, "float8e4m3fn", rounding="stochastic", seed=seed, out=out)


@njit
def _seeded_exact(a, seed):
    return numbacast.cast(a, "double", rounding="stochastic", seed=seed)


def test_run_time_checks_raise_the_python_errors_before_writing():
    x = sample(100)
    wide = np.full(x.shape, 64, np.uint8)
    calls = [
        (lambda out: _seeded_into(x, -1, out), dict(seed=-1), "float8e4m3fn"),
        (lambda out: _given_bits_into(x, wide, out), dict(random_bits=wide, stochastic_bits=6), "float4e2m1"),
        (lambda out: _given_bits_into(x, wide[1:], out), dict(random_bits=wide[1:], stochastic_bits=6), "float4e2m1"),
    ]
    for call, options, target in calls:
        with pytest.raises(ValueError) as python_error:
            numbacast.cast(x, target, rounding="stochastic", **options)
        out = np.zeros(x.shape, numbacast.cast(x[:1], target).dtype)
        with pytest.raises(ValueError) as njit_error:
            call(out)
        assert str(njit_error.value) == str(python_error.value)
        assert not codes(out).any()
    # a seed is checked even where every value is exact and no random number is drawn
    with pytest.raises(ValueError, match=re.escape("seed must be in 0 .. 2**64 - 1, not -1")):
        _seeded_exact(x, -1)


def test_random_bits_that_are_also_out_are_read_before_they_are_written():
    """An out= that is a view of the random numbers gets the bits of a cast
    from a copy of them (values below the smallest normal, which the exact
    pass redoes, re-read theirs after the fast pass wrote out)."""
    rng = np.random.default_rng(6)
    x = (rng.random(20_000) * rng.choice([-1, 1], 20_000)).astype(np.float32)
    bits = rng.integers(0, 64, x.shape).astype(np.uint8)
    want = numbacast.cast(x, "float4e2m1", rounding="stochastic", random_bits=bits.copy(), stochastic_bits=6)
    out = bits.view(want.dtype)
    _given_bits_into(x, bits, out)
    assert np.array_equal(codes(out), codes(want))


@pytest.mark.parametrize(
    "target, options",
    [
        ("float8e4m3fn", 'rounding="sideways"'),
        ("float8e4m3fn", 'rounding="stochastic", seed=-1'),
        ("float8e4m3fn", 'rounding="stochastic", stochastic_bits=0'),
        ("float8e4m3fn", "seed=3"),
        ("float8e4m3fn", 'rounding="stochastic", seed=1, random_bits=np.zeros(4, np.uint8)'),
        ("float8e4m3fn", 'rounding="stochastic", random_bits=np.zeros(4, np.int8)'),
        ("float8e8m0", 'rounding="toward_zero", round_mode="up"'),
    ],
)
def test_rounding_options_are_checked_as_in_python(target, options):
    call = f"numbacast.cast(a, {target!r}, {options})"
    assert_same_error_in_njit(call, "a", np.ones(4, np.float32), {"numbacast": numbacast, "np": np})


def test_a_non_literal_rounding_is_a_clear_type_error():
    @njit
    def variable(a, rounding):
        return numbacast.cast(a, "float8e4m3fn", rounding=rounding)

    with pytest.raises(TypeError, match="needs rounding as a literal constant"):
        variable(EDGES, "toward_zero")
