"""Stochastic rounding (docs/rules.md#rule-stochastic, #rule-stochastic-reproducible).

* Bit for bit against gfloat 0.5.2's ``round_ndarray(..., RoundMode.Stochastic,
  srbits=, srnumbits=)`` with the same random numbers, for every float target;
* statistics with the built-in generator: every result is one of the two
  neighbours of its value, P(up) is the fractional distance, and the mean
  error is zero, each within 5 standard deviations of a binomial count (a
  fixed seed makes the test deterministic; a correct implementation fails it
  for a fresh seed with probability below 1e-6);
* the same seed gives the same bits with one thread or all, ``out=``, a
  reversed view, and Dask arrays with uneven chunks.

The converters run in one serial loop each (:func:`conftest.converter_harness`);
the reproducibility tests run the real kernel.  ``NUMBACAST_FULL_SWEEP=1``
checks more random bit widths.
"""

import os
from fractions import Fraction

import exact
import numpy as np
import pytest
from conftest import converter_harness

import numbacast
from numbacast.engine.conversion import Conversion, scalar_converter
from numbacast.engine.rounding import ALIGNED_MIN_SHIFT, CHECK, REDUCE, seed_key
from numbacast.formats.registry import FLOAT

gfloat = pytest.importorskip("gfloat")
from gfloat import formats as gformats  # noqa: E402

FULL_SWEEP = os.environ.get("NUMBACAST_FULL_SWEEP") == "1"

#: numbacast's float targets and the gfloat format that is the same format.
GFLOAT = {
    "float16": gformats.format_info_binary16,
    "bfloat16": gformats.format_info_bfloat16,
    "float8e4m3fn": gformats.format_info_ocp_e4m3,
    "float8e4m3fnuz": gformats.format_info_p3109(8, 4, gfloat.Signedness.Signed, gfloat.Domain.Finite),
    "float8e5m2": gformats.format_info_ocp_e5m2,
    "float8e5m2fnuz": gformats.format_info_p3109(8, 3, gfloat.Signedness.Signed, gfloat.Domain.Finite),
    "float8e8m0": gformats.format_info_ocp_e8m0,
    "float4e2m1": gformats.format_info_ocp_e2m1,
    "float6e2m3": gformats.format_info_ocp_e2m3,
    "float6e3m2": gformats.format_info_ocp_e3m2,
    "float": gformats.format_info_binary32,
}
TARGETS = list(GFLOAT)
ALWAYS_SATURATING = {"float4e2m1", "float6e2m3", "float6e3m2"}
NEVER_SATURATING = {"float16", "bfloat16", "float"}  # IEEE overflow to infinity, whatever saturate says
BIT_WIDTHS = (3, 8, 13, 23, 40)


def source_of(target):
    return "double" if target == "float" else "float"


def random_values(target, size, rng, positive=False):
    """Values of the source of ``target`` spread log-uniformly over the
    target's range and a little beyond (E8M0: positive, from 2**-127)."""
    fi = GFLOAT[target]
    low = -127 if target == "float8e8m0" else int(np.floor(np.log2(fi.smallest))) - 2
    dtype = np.float64 if target == "float" else np.float32
    high = min(int(np.floor(np.log2(fi.max))) + 2, np.finfo(dtype).maxexp)
    mantissa = rng.uniform(1.0, 2.0, size)
    values = (mantissa * np.exp2(rng.integers(low, high, size).astype(np.float64))).astype(dtype)
    if not positive and target != "float8e8m0":
        values *= rng.choice(np.array([-1, 1], dtype), size)
    return values


def gfloat_codes(target, values, saturate, r, n):
    fi = GFLOAT[target]
    rounded = gfloat.round_ndarray(
        fi, values.astype(np.float64), gfloat.RoundMode.Stochastic, saturate, r.astype(np.int64), n
    )
    return gfloat.encode_ndarray(fi, rounded)


def is_nan(target, code):
    return exact.decode(target, int(code)).kind == "nan"


@pytest.mark.parametrize("target", TARGETS)
def test_random_bits_match_gfloat_bit_for_bit(target):
    """Rule: docs/rules.md#rule-stochastic-reproducible"""
    position = TARGETS.index(target)
    widths = BIT_WIDTHS if FULL_SWEEP else (BIT_WIDTHS[position % len(BIT_WIDTHS)],)
    rng = np.random.default_rng(position)
    saturates = (True,) if target in ALWAYS_SATURATING else (False,) if target in NEVER_SATURATING else (True, False)
    for n in widths:
        for saturate in saturates:
            conversion = Conversion.make(
                numbacast.resolve(source_of(target)),
                numbacast.resolve(target),
                saturate,
                rounding="stochastic",
                stochastic_bits=n,
            )
            values = random_values(target, 2500, rng)
            r = rng.integers(0, 1 << n, values.size, dtype=np.uint64)
            ours = converter_harness([conversion])(values, r)
            ours = ours.view(f"u{ours.dtype.itemsize}")
            theirs = gfloat_codes(target, values, saturate, r, n)
            bad = [
                i
                for i in range(values.size)
                if int(ours[i]) != int(theirs[i]) and not (is_nan(target, ours[i]) and is_nan(target, theirs[i]))
            ]
            assert not bad, [(float(values[i]), int(r[i]), hex(ours[i]), hex(theirs[i])) for i in bad[:5]]
            # and the exact reference agrees, for a few
            for i in range(0, values.size, 97):
                expected = exact.encode(
                    target,
                    exact.Exact.from_float(float(values[i])),
                    saturate,
                    rounding="stochastic",
                    random=(int(r[i]), n),
                )
                assert exact.same_code(target, int(ours[i]), expected), (float(values[i]), int(r[i]))


def neighbours(target, values):
    """(lo, hi, p): the codes toward zero and away from zero of each positive
    value and its fractional distance from lo (Fractions)."""
    lo, hi, p = [], [], []
    for v in values.tolist():
        x = exact.Exact.from_float(v)
        a = exact.encode(target, x, rounding="toward_zero")
        b = exact.encode(target, x, rounding="toward_positive")
        va, vb = exact.decode(target, a).mag, exact.decode(target, b).mag
        lo.append(a)
        hi.append(b)
        p.append(Fraction(0) if a == b else (x.mag - va) / (vb - va))
    return lo, hi, p


@pytest.mark.parametrize("target", TARGETS)
def test_up_with_the_fractional_distance_and_no_mean_error(target):
    """Rule: docs/rules.md#rule-stochastic"""
    conversion = Conversion.make(
        numbacast.resolve(source_of(target)), numbacast.resolve(target), True, rounding="stochastic"
    )
    harness = converter_harness([conversion])

    def run(values, key):
        out = harness(values, key)
        return out.view(f"u{out.dtype.itemsize}")

    rng = np.random.default_rng(100 + TARGETS.index(target))
    key = seed_key(12345)
    # P(up) for a few values, each repeated (each repeat has its own index)
    fi = GFLOAT[target]
    dtype = np.float64 if target == "float" else np.float32
    repeats = 20000
    probes = [fi.smallest * 1.3, fi.smallest_normal * 1.7 if target != "float8e8m0" else 1.1, 1.25 * 1.0625, 3.3]
    for probe in probes:
        value = np.full(repeats, probe, dtype)
        out = run(value, key)
        (lo,), (hi,), (p,) = neighbours(target, value[:1])
        assert set(out.tolist()) <= {lo, hi}
        ups = int(np.count_nonzero(out == hi)) if hi != lo else 0
        sigma = float(p * (1 - p) / repeats) ** 0.5
        assert abs(ups / repeats - float(p)) <= 5 * sigma + 1e-12, (probe, ups / repeats, float(p))
    # no mean error over values spread across the range (below the overflow)
    values = random_values(target, 6000, rng, positive=True)
    values = values[values <= dtype(fi.max)]
    out = run(values, key)
    lo, hi, p = neighbours(target, values)
    up = [int(c) == b and a != b for c, a, b in zip(out.tolist(), lo, hi)]
    assert all(int(c) in (a, b) for c, a, b in zip(out.tolist(), lo, hi))
    mean_error = float(sum(u - q for u, q in zip(up, p))) / len(p)  # in steps
    sigma = float(sum(q * (1 - q) for q in p)) ** 0.5 / len(p)
    assert abs(mean_error) <= 5 * sigma, (mean_error, sigma)


@pytest.mark.parametrize(
    "target,bits",
    [("float8e4m3fn", 64), ("float", 40), ("float8e4m3fn", 8), ("float16", 8), ("float4e2m1", 3), ("float", 12)],
)
def test_the_kernel_rounds_as_the_scalar_converter(target, bits):
    """Rule: docs/rules.md#rule-stochastic

    The kernel rounds most values with a fast encoder that vectorises and the
    values deep in the target's subnormal range with the full one: the result
    is that of the full encoder, with the generator's numbers and with given
    ones (float32 lanes with all 64 bits and with fewer random bits than the
    target drops in its normal range; float64 lanes with 40 and with 12)."""
    rng = np.random.default_rng(11)
    dtype = np.float64 if target == "float" else np.float32
    scale = np.exp2(rng.integers(-160 if target != "float" else -1100, 20, 40000)).astype(dtype)
    values = (rng.standard_normal(40000) * scale).astype(dtype)
    if target == "float8e8m0":
        values = np.abs(values)
    conversion = Conversion.make(
        numbacast.resolve(source_of(target)),
        numbacast.resolve(target),
        False,
        rounding="stochastic",
        stochastic_bits=bits,
    )
    harness = converter_harness([conversion])
    r = rng.integers(0, 1 << min(bits, 63), values.size, dtype=np.uint64)
    given = numbacast.cast(values, target, saturate=False, rounding="stochastic", random_bits=r, stochastic_bits=bits)
    expected = harness(values, r)
    assert given.view(f"u{given.dtype.itemsize}").tolist() == expected.view(f"u{expected.dtype.itemsize}").tolist()
    # the generator's numbers (the kernel of the reproducibility tests below)
    drawn = numbacast.cast(values, target, saturate=False, rounding="stochastic", seed=3, stochastic_bits=bits)
    expected = harness(values, seed_key(3))
    assert drawn.view(f"u{drawn.dtype.itemsize}").tolist() == expected.view(f"u{expected.dtype.itemsize}").tolist()


@pytest.mark.parametrize("target,bits", [("float8e4m3fn", 8), ("float16", 8), ("float4e2m1", 3)])
def test_few_random_bits_leave_the_normal_range_to_the_fast_encoder(target, bits):
    """The fast encoder rounds the target's normal range exactly whatever the
    number of random bits, so the check sends none of those values to the
    full encoder (with fewer random bits than the normal range drops, it sent
    one in 2**bits of those below 2**bits steps of the smallest subnormal, and a
    kernel's block of 4,096 then took the full encoder, 18 times slower);
    below the normal range it still sends those in doubt."""
    from numba import njit

    t = numbacast.resolve(target)
    conversion = Conversion.make(FLOAT, t, False, rounding="stochastic", stochastic_bits=bits)
    check, reduce = scalar_converter(conversion, CHECK), scalar_converter(conversion, REDUCE)

    @njit
    def settled(x, r, out):
        for i in range(x.size):
            out[i] = check(x[i], reduce(r[i]))

    rng = np.random.default_rng(bits)
    smallest_normal = float(2.0**t.format.min_normal_exponent)
    normal = np.exp2(rng.uniform(np.log2(smallest_normal), np.log2(float(t.format.largest)), 20000))
    below = rng.uniform(0, smallest_normal, 20000)
    for values, in_doubt in ((normal, False), (below, True)):
        x = (values * rng.choice([-1, 1], values.size)).astype(np.float32)
        out = np.empty(x.size, np.uint32)
        settled(x, rng.integers(0, 1 << bits, x.size, dtype=np.uint64), out)
        assert (np.count_nonzero(out == 0) > 0) == in_doubt


def assert_kernel_rounds_as_the_full_encoder(x, r, target):
    """The kernel's cast of float32 ``x`` with the random numbers ``r`` equals the
    full encoder's, code for code, and some values went up."""
    conversion = Conversion.make(numbacast.resolve("float"), numbacast.resolve(target), rounding="stochastic")
    given = numbacast.cast(x, target, rounding="stochastic", random_bits=r)
    expected = converter_harness([conversion])(x, r)
    assert given.view(f"u{given.dtype.itemsize}").tolist() == expected.view(f"u{expected.dtype.itemsize}").tolist()
    assert len(set(given.view(f"u{given.dtype.itemsize}").tolist())) > 2  # some went up


@pytest.mark.parametrize("target", ["float8e4m3fn", "float4e2m1", "float6e3m2", "float16"])
def test_values_below_the_normal_range_with_the_random_numbers_at_the_edge(target):
    """Rule: docs/rules.md#rule-stochastic

    Into a target whose normal range drops at least ALIGNED_MIN_SHIFT bits
    of a float32, the kernel's fast encoder rounds a value below that range
    to the grid of ``shift`` fraction bits of a step (nearest even),
    adds the top ``shift`` random bits and cuts; the full encoder redoes an
    element when that sum is one below a carry or a carry with nothing left.
    Random numbers on either side of that edge, and on it with every kind of
    low bits, for values with few and with many bits below a step, and for
    values halfway between two points of the grid, round as the full encoder
    rounds them."""
    shift = 23 - numbacast.resolve(target).format.mantissa_bits
    assert shift >= ALIGNED_MIN_SHIFT
    step = exact.decode(target, 1).mag  # the smallest subnormal
    rng = np.random.default_rng(5)
    deep = rng.uniform(1, 2, 400) * np.exp2(rng.integers(-40, -1, 400)) * float(step)
    shallow = rng.uniform(0, 2 ** numbacast.resolve(target).format.mantissa_bits, 400) * float(step)
    halfway = (rng.integers(0, 1 << shift, 200) + 0.5) * 2.0**-shift * float(step)
    values = np.concatenate([deep, shallow, halfway]).astype(np.float32)
    values *= rng.choice(np.array([-1, 1], np.float32), values.size)
    x, r = [], []
    low_bits = (0, 1, 1 << (63 - shift), (1 << (64 - shift)) - 1)
    for i, v in enumerate(values.tolist()):
        grid = round(abs(Fraction(v)) / step % 1 * 2**shift)  # the fraction on the grid, ties to even
        for top in range((1 << shift) - grid - 2, (1 << shift) - grid + 2):
            if 0 <= top < 1 << shift:
                x.append(v)
                r.append(top << (64 - shift) | low_bits[(i + len(r)) % 4])
    assert_kernel_rounds_as_the_full_encoder(np.array(x, np.float32), np.array(r, np.uint64), target)


@pytest.mark.parametrize("target", ["float8e4m3fn", "float4e2m1", "float16", numbacast.p3109(16, 12)])
def test_values_far_below_a_step_with_the_random_numbers_at_the_edge(target):
    """Rule: docs/rules.md#rule-stochastic

    Into a target whose normal range drops fewer than ALIGNED_MIN_SHIFT bits
    of a float32 (binary16p12: 12), a float32 whose step drops more than 31 bits is
    rounded by the kernel's fast encoder from the top 31 of its 64 random
    bits, and again by the full encoder when those bits leave the decision
    open: when the fraction of a step, cut to 31 bits, plus them is 2**31 - 1.
    Random numbers on either side of that edge, and on it with every kind of
    low bits, round as the full encoder rounds them; so do they into targets
    that round below the normal range on a grid (the test above)."""
    fmt = numbacast.resolve(target).format
    step = Fraction(2) ** (fmt.min_normal_exponent - fmt.mantissa_bits)  # the smallest subnormal
    rng = np.random.default_rng(5)
    values = (rng.uniform(1, 2, 600) * np.exp2(rng.integers(-40, -9, 600)) * float(step)).astype(np.float32)
    values *= rng.choice(np.array([-1, 1], np.float32), values.size)
    x, r = [], []
    for i, v in enumerate(values.tolist()):
        edge = 2**31 - 1 - int(abs(Fraction(v)) / step % 1 * 2**31)  # the top 31 bits on the edge
        for top in (edge - 1, edge, edge, edge + 1):
            if 0 <= top < 2**31:
                x.append(v)
                r.append(top << 33 | (0, 1, 1 << 32, (1 << 33) - 1)[(i + len(r)) % 4])
    assert_kernel_rounds_as_the_full_encoder(np.array(x, np.float32), np.array(r, np.uint64), target)


@pytest.fixture(scope="module")
def grid():
    rng = np.random.default_rng(7)
    return (rng.standard_normal((300, 257)) * 100).astype(np.float32)  # above the parallel threshold


def test_same_seed_same_bits_whatever_the_threads_layout_and_out(grid):
    """Rule: docs/rules.md#rule-stochastic-reproducible"""
    from numba import get_num_threads, set_num_threads

    options = dict(rounding="stochastic", seed=2024, saturate=False)
    reference = numbacast.cast(grid, "float8e4m3fn", **options)
    threads = get_num_threads()
    set_num_threads(1)
    try:
        one_thread = numbacast.cast(grid, "float8e4m3fn", **options)
    finally:
        set_num_threads(threads)
    assert one_thread.tobytes() == reference.tobytes()
    reversed_view = grid[::-1, ::-1]
    assert (
        numbacast.cast(reversed_view, "float8e4m3fn", **options).tobytes()
        == numbacast.cast(np.ascontiguousarray(reversed_view), "float8e4m3fn", **options).tobytes()
    )
    transposed = np.asfortranarray(grid)
    assert numbacast.cast(transposed, "float8e4m3fn", **options).tobytes() == reference.tobytes()
    out = np.zeros((257, 300), reference.dtype).T  # a non-contiguous out
    assert numbacast.cast(grid, "float8e4m3fn", out=out, **options) is out
    assert out.tobytes() == reference.tobytes()
    assert numbacast.cast(grid, "float8e4m3fn", **{**options, "seed": 2025}).tobytes() != reference.tobytes()
    # not every element rounds the same way: the values are not all exact
    assert numbacast.cast(grid, "float8e4m3fn", saturate=False).tobytes() != reference.tobytes()


def test_same_seed_same_bits_with_dask_chunks(grid):
    """Rule: docs/rules.md#rule-stochastic-reproducible"""
    da = pytest.importorskip("dask.array")
    options = dict(rounding="stochastic", seed=99, saturate=False)
    cube = grid[:288].reshape(6, 48, 257)
    reference = numbacast.cast(cube, "float8e4m3fn", **options)
    for chunks in [((1, 2, 3), (5, 43), (100, 157)), ((6,), (48,), (3, 254)), ((2, 4), (48,), (257,))]:
        lazy = numbacast.cast(da.from_array(cube, chunks=chunks), "float8e4m3fn", **options)
        assert lazy.compute().tobytes() == reference.tobytes(), chunks
    bits = np.random.default_rng(3).integers(0, 256, cube.shape, dtype=np.uint8)
    given = numbacast.cast(cube, "float8e4m3fn", rounding="stochastic", random_bits=bits)
    lazy = numbacast.cast(
        da.from_array(cube, chunks=((1, 5), (30, 18), (257,))), "float8e4m3fn", rounding="stochastic", random_bits=bits
    )
    assert lazy.compute().tobytes() == given.tobytes()


def test_the_generator_is_the_one_the_rules_write_out():
    """The seed's key and each element's 64 random bits are the formulas of
    the rules page, spelt here from its text: SplitMix64 twice for the key,
    the two-round hash ``h`` for the number.  Rule: docs/rules.md#rule-stochastic-reproducible"""
    from numba import njit

    from numbacast.engine.rounding import random64, random64_py

    compiled = njit(lambda key, i: random64(key, i))
    m32, m64 = 2**32 - 1, 2**64 - 1

    def mix(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m64
        return z ^ (z >> 31)

    def h(x):
        x ^= x >> 16
        x = (x * 0x21F0AAAD) & m32
        x ^= x >> 15
        x = (x * 0xD35A2D97) & m32
        return x ^ (x >> 15)

    for seed in (0, 41, 2**64 - 1):
        key = mix((mix(seed) + 0x9E3779B97F4A7C15) & m64)
        assert seed_key(seed) == key
        k1, k2 = key & m32, key >> 32
        k3 = h(k1 ^ k2 ^ 0x9E3779B9)
        for i in (0, 1, 2**16 - 1, 2**16, 2**32 - 1, 2**32 + 5, 2**63 + 2**40 + 3):
            lo, hi = i & m32, i >> 32
            expected = h(lo ^ h(hi ^ k1)) << 32 | h(h(lo ^ h(hi ^ k2)) ^ k3)
            assert random64_py(key, i) == expected
            assert int(compiled(np.uint64(key), np.uint64(i))) == expected


@pytest.mark.parametrize("bits", [64, 8])
@pytest.mark.parametrize("offset", [3 * 2**17 - 1500, 2**32 - 1500])
def test_the_generator_across_its_windows_and_the_high_index_bits(offset, bits):
    """The kernel draws the numbers of consecutive indices by runs inside
    windows of 2**16 of the generator (and of 2**32, where the index's high
    bits change): a chunk whose indices cross such a boundary, placed by
    Dask after ``offset`` elements of a lazy array never computed, gets the
    numbers of the generator's Python reference for its indices, in the fast
    loop and where the full encoder redoes elements (with 8 random bits,
    one in 256 of the values below the normal range).
    Rule: docs/rules.md#rule-stochastic-reproducible"""
    da = pytest.importorskip("dask.array")
    from numbacast.engine.rounding import random64_py

    values = random_values("float8e4m3fn", 5000, np.random.default_rng(5))
    lazy = da.concatenate([da.zeros(offset, np.float32, chunks=offset), da.from_array(values, chunks=values.size)])
    options = dict(rounding="stochastic", seed=41, saturate=False, stochastic_bits=bits)
    got = numbacast.cast(lazy, "float8e4m3fn", **options)[offset:].compute()
    conversion = Conversion.make(
        FLOAT, numbacast.resolve("float8e4m3fn"), False, rounding="stochastic", stochastic_bits=bits
    )
    drop, key = 64 - conversion.stochastic_bits, seed_key(41)
    r = np.array([random64_py(key, offset + i) >> drop for i in range(values.size)], np.uint64)
    expected = converter_harness([conversion])(values, r)
    assert got.view(np.uint8).tolist() == expected.view(np.uint8).tolist()


def test_dask_chunks_of_unknown_size_are_refused_then_known_give_the_same_bits(grid):
    """A chunk whose place in the array is unknown (after boolean indexing)
    cannot draw its elements' random numbers: a ValueError at the call, not
    other bits.  Rule: docs/rules.md#rule-stochastic-reproducible"""
    da = pytest.importorskip("dask.array")
    square = grid.reshape(-1)[:1200].reshape(40, 30)
    kept = da.from_array(square, chunks=(10, 30))[da.ones(40, dtype=bool, chunks=10)]  # every row, sizes unknown
    options = dict(rounding="stochastic", seed=1)
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        numbacast.cast(kept, "float8e4m3fn", **options)
    kept.compute_chunk_sizes()
    got = numbacast.cast(kept, "float8e4m3fn", **options).compute()
    assert got.tobytes() == numbacast.cast(square, "float8e4m3fn", **options).tobytes()


def test_random_bits_that_are_also_out_are_read_before_they_are_written():
    """A cast into the array of its own random numbers (uint8 codes of a
    format of 8 bits) gives the bits of a cast from a copy of them: the
    values the fast pass leaves to the exact one, below the smallest
    normal, re-read their random numbers after the pass wrote ``out``."""
    target = numbacast.p3109(8, 3)
    rng = np.random.default_rng(0)
    x = (rng.random(100_000) * 2.0**-14 * rng.choice([-1, 1], 100_000)).astype(np.float32)
    bits = rng.integers(0, 256, x.size).astype(np.uint8)
    options = dict(rounding="stochastic", stochastic_bits=8)
    want = numbacast.cast(x, target, random_bits=bits.copy(), **options)
    assert numbacast.cast(x, target, random_bits=bits, out=bits, **options) is bits
    assert np.array_equal(bits, want)


def test_stochastic_arguments_are_checked():
    """Rule: docs/rules.md#rule-errors"""
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="stochastic"):
        numbacast.cast(x, "float16", seed=1)
    with pytest.raises(ValueError, match="from 1 to 64"):
        numbacast.cast(x, "float16", rounding="stochastic", stochastic_bits=65)
    with pytest.raises(ValueError, match="not both"):
        numbacast.cast(x, "float16", rounding="stochastic", seed=1, random_bits=np.zeros(3, np.uint8))
    with pytest.raises(ValueError, match="shape"):
        numbacast.cast(x, "float16", rounding="stochastic", random_bits=np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match="more than"):
        numbacast.cast(x, "float16", rounding="stochastic", stochastic_bits=4, random_bits=np.full(3, 16, np.uint8))
    with pytest.raises(TypeError, match="unsigned"):
        numbacast.cast(x, "float16", rounding="stochastic", random_bits=np.zeros(3, np.int8))
    with pytest.raises(TypeError, match="texts"):
        numbacast.cast(np.array(["1.5"]), "float16", rounding="stochastic")
