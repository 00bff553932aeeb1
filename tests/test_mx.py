"""numbacast.mx: the API, the corner cases of the block rules, NVFP4 against
gfloat's element and scale rounding, every rounding mode against
``numbacast.cast``, any axis and block size, the wire layout, the ONNX
``DequantizeLinear`` inputs and the errors."""

import re

import numpy as np
import pytest
from conftest import DOCS, nvfp4_tie_block, python_blocks

import numbacast
import numbacast.mx as mx
from numbacast.engine.rounding import random64_py, seed_key
from numbacast.formats.blocks import BLOCK_FORMATS

gfloat = pytest.importorskip("gfloat")
from gfloat import formats as gformats  # noqa: E402

F32 = np.float32
MX = [name for name in mx.FORMATS if name != "nvfp4"]


def codes(a):
    return np.asarray(a).view(f"u{np.asarray(a).dtype.itemsize}")


def sample(shape, seed=0, spread=8):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * np.exp2(rng.integers(-spread, spread, shape))).astype(F32)


def gfloat_codes(fi, values):
    rounded = gfloat.round_ndarray(fi, np.asarray(values, np.float64), gfloat.RoundMode.TiesToEven, sat=True)
    return gfloat.encode_ndarray(fi, rounded)


def test_nvfp4_follows_its_recipe_with_gfloat_rounding():
    """tensor_scale = amax / (448 * 6) in float32; block scale = the block's
    amax / (6 * tensor_scale) rounded to FLOAT8E4M3FN; divisor = block scale
    * tensor_scale rounded to float32; elements = the float32 quotient
    x / divisor rounded to FLOAT4E2M1 (gfloat rounds both, ties to even,
    saturating); a block whose scale rounds to 0 holds zeros; dequantised
    values are element * divisor.
    Rule: docs/rules.md#rule-mx-nvfp4"""
    x = sample((64, 48), 3)
    x[0] = 0.0
    x[1, :16] = 1e-30  # a block far below the tensor's amax: its scale is 0
    q = mx.quantize(x, "nvfp4")
    amax = np.abs(x.astype(np.float64)).max()
    ts = F32(amax / 2688)
    assert q.tensor_scale == ts and q.scales.dtype == numbacast.FLOAT8E4M3FN.storage
    blocks = np.abs(x.astype(np.float64)).reshape(64, 3, 16).max(axis=2)
    expected_scales = gfloat_codes(gformats.format_info_ocp_e4m3, blocks / (6 * float(ts)))
    assert np.array_equal(codes(q.scales), expected_scales)
    scale = (q.scales.astype(np.float64) * float(ts)).astype(F32).astype(np.float64)
    divisor = np.repeat(scale, 16, axis=1)
    scaled = np.where(divisor == 0, x * F32(0), x / np.where(divisor == 0, 1, divisor).astype(F32))
    assert np.array_equal(codes(q.elements), gfloat_codes(gformats.format_info_ocp_e2m1, scaled))
    assert (codes(q.scales)[1, 0], codes(q.elements)[1, :16].tolist()) == (0, [0] * 16)
    assert np.array_equal(mx.dequantize(q), (q.elements.astype(np.float64) * divisor).astype(F32))


def test_nvfp4_elements_round_the_float32_quotient():
    """An element is the float32 quotient x / d rounded to FLOAT4E2M1, not
    x / d rounded once: here x / d lies just below the midpoint 0.75 and its
    float32 quotient on it, which ties to 1.0 (torchao gives 0.5 there, see
    tests/test_mx_torchao.py).  Rule: docs/rules.md#rule-mx-nvfp4"""
    from fractions import Fraction

    x, d = nvfp4_tie_block()
    q = mx.quantize(x, "nvfp4", tensor_scale=d)
    assert (codes(q.scales)[0], float(q.tensor_scale)) == (0x38, float(d))  # block scale 1.0, divisor d
    assert Fraction(float(x[1])) / Fraction(float(d)) < Fraction(3, 4) and x[1] / d == F32(0.75)
    assert q.elements.astype(F32)[:2].tolist() == [6.0, 1.0]


@pytest.mark.parametrize("size, where", [(1 << 18, 0), (1 << 18, 70_000), (1 << 18, -1), (100, 50), (4096, -1)])
def test_nvfp4_tensor_scale_of_an_array_holding_nan_is_one(size, where):
    """The tensor amax is NaN wherever its NaN lies (first, middle or last
    task of an array long enough for the parallel loops; an array of one
    task), so the tensor scale is 1.0.  Rule: docs/rules.md#rule-mx-nvfp4"""
    x = np.ones(size, F32)
    x[where] = np.nan
    assert mx.quantize(x, "nvfp4").tensor_scale == F32(1.0)


def test_nvfp4_tensor_scale_given_and_defaults():
    """A given tensor_scale is used; an all-zero or non-finite tensor takes
    1.0.  Rule: docs/rules.md#rule-mx-nvfp4"""
    x = sample((2, 32))
    assert mx.quantize(x, "nvfp4", tensor_scale=0.5).tensor_scale == F32(0.5)
    assert mx.quantize(np.zeros((2, 16), F32), "nvfp4").tensor_scale == 1
    assert mx.quantize(np.array([1.0, np.inf], F32), "nvfp4").tensor_scale == 1
    with pytest.raises(ValueError, match="tensor_scale must be a positive finite"):
        mx.quantize(x, "nvfp4", tensor_scale=-1.0)
    for bad in ("a", True, [0.5, 0.5], None.__class__):
        with pytest.raises(TypeError, match="tensor_scale must be a positive finite float32, not"):
            mx.quantize(x, "nvfp4", tensor_scale=bad)
    assert mx.quantize(x, "nvfp4", tensor_scale=np.array(0.5)).tensor_scale == F32(0.5)
    largest, smallest = np.finfo(F32).max, np.finfo(F32).smallest_subnormal
    for edge in (float(largest), float(smallest), np.nextafter(float(largest), np.inf), 2, np.float64(0.25)):
        assert mx.quantize(x, "nvfp4", tensor_scale=edge).tensor_scale == F32(
            edge
        )  # (a hair above the largest rounds to it)
    for beyond in (float(largest) * (1 + 2.0**-24), -1e300, float(smallest) / 4, 10**40):  # inf and 0 as float32
        with pytest.raises(ValueError, match="tensor_scale must be a positive finite"):
            mx.quantize(x, "nvfp4", tensor_scale=beyond)
    with pytest.raises(ValueError, match="tensor_scale is for nvfp4"):
        mx.quantize(x, "mxfp8_e4m3", tensor_scale=1.0)
    with pytest.raises(ValueError, match="one recipe"):
        mx.quantize(x, "nvfp4", scale_rule="ceil")


NAN_ELEMENT = {"mxfp8_e4m3": 0x7F, "mxfp8_e5m2": 0x7E, "mxfp6_e2m3": 0x1F, "mxfp6_e3m2": 0x1F, "mxfp4_e2m1": 0x7}


@pytest.mark.parametrize("name", MX)
def test_special_blocks(name):
    """A block holding NaN gets the NaN scale (0xFF) and every element the
    element type's encoding of +NaN (+max for the types without NaN, 127
    for MXINT8); it dequantises to NaN throughout.  A block holding +/-inf
    (and no NaN) gets the largest scale, 2**127, and its infinities +/-max.
    A block of zeros gets the smallest scale, 2**-127, and keeps the signs
    of its zeros.  Rule: docs/rules.md#rule-mx-special-blocks"""
    fmt = BLOCK_FORMATS[name]
    x = np.ones((4, 32), F32)
    x[0, 3], x[1, 5], x[1, 6] = np.nan, np.inf, -np.inf
    x[2] = -0.0
    x[3, 7] = -np.nan
    q = mx.quantize(x, name)
    scales = codes(q.scales)[:, 0].tolist()
    assert scales == [0xFF, 254, 0, 0xFF]
    nan_element = 127 if fmt.integer_elements else NAN_ELEMENT[name]
    assert codes(q.elements)[0].tolist() == [nan_element] * 32 == codes(q.elements)[3].tolist()
    if fmt.integer_elements:
        assert q.elements[1, 5:7].tolist() == [127, -128]
    else:
        top = fmt.grid.format.max_code
        assert codes(q.elements)[1, 5:7].tolist() == [top, top | 1 << fmt.grid.format.sign_shift]
    assert codes(q.elements)[2].tolist() == [0 if fmt.integer_elements else 1 << fmt.grid.format.sign_shift] * 32
    d = mx.dequantize(q)
    assert np.isnan(d[[0, 3]]).all() and not np.isnan(d[1:3]).any()


def test_element_casts_leave_out_the_nan_test_only_in_the_generated_nearest_even_encoders():
    """The element conversions of the quantisation are NaN-free (a NaN block
    is written as such, see test_special_blocks): the nearest-even encoders
    drop their NaN test, the other roundings keep theirs, and the name that
    keys compiled code says which."""
    from numbacast.engine.blocks import element_conversion

    fmt = BLOCK_FORMATS["mxfp8_e4m3"]
    assert element_conversion(fmt, False).nan_free and str(element_conversion(fmt, True)).endswith(",nan_free=1)")
    for rounding in ("toward_zero", "stochastic"):
        assert not element_conversion(fmt, False, rounding=rounding).nan_free
    assert not element_conversion(BLOCK_FORMATS["mxint8"], False).nan_free


def test_saturate_false_and_subnormal_amax():
    """saturate=False: elements beyond the element type's range give what a
    cast without saturation gives (E5M2: inf).  A block of
    float32 subnormals takes the smallest scale, 2**-127 (the floor rule's
    2**(floor(log2 amax) - emax) clamped), and keeps what the element type
    holds of the values over it.  Rule: docs/rules.md#rule-mx-scale-rules"""
    x = np.array([[np.inf] + [1.0] * 31], F32)
    assert codes(mx.quantize(x, "mxfp8_e5m2", saturate=False).elements)[0, :2].tolist() == [0x7C, 0]
    sub = np.array([[2.0**-130, -(2.0**-133), 3 * 2.0**-135, 2.0**-149]], F32)  # the scale 2**-127 is clamped
    q = mx.quantize(sub, "mxfp8_e4m3")
    assert codes(q.scales)[0, 0] == 0
    assert mx.dequantize(q).tolist() == [[2.0**-130, -(2.0**-133), 3 * 2.0**-135, 0.0]]


@pytest.mark.parametrize("name, rounding", [("mxfp8_e4m3", "nearest_away"), ("mxint8", "toward_negative")])
def test_element_rounding_is_the_cast_of_the_scaled_values(name, rounding):
    """Elements round in every mode of numbacast.cast: the cast of each
    value over its block's (power-of-two, exact) scale (two modes here, with
    the two kinds of element grid; the modes share one generated encoder).
    Rule: docs/rules.md#rule-mx-element-rounding"""
    x = sample((8, 64), 1)
    fmt = BLOCK_FORMATS[name]
    q = mx.quantize(x, name, rounding=rounding)
    scale = np.repeat(q.scales.astype(np.float64), 32, axis=1)
    expected = numbacast.cast((x / scale).astype(F32), fmt.grid, rounding=rounding)
    if fmt.integer_elements:  # sign and magnitude in the grid's code
        magnitude = codes(expected).astype(np.int64) & 0xFF
        expected = np.where(codes(expected) >> 8, -np.minimum(magnitude, 128), np.minimum(magnitude, 127))
        assert np.array_equal(q.elements, expected.astype(np.int8))
    else:
        assert np.array_equal(codes(q.elements), codes(expected))


def test_stochastic_rounding_draws_as_cast_does():
    """Stochastic rounding: element i (C order, the axis moved last) draws
    the i-th random number of the seed's stream (random64, as numbacast.cast
    does), and rounds as gfloat's ``RoundMode.Stochastic`` with those
    numbers; the same seed gives the same bits.
    Rule: docs/rules.md#rule-mx-element-rounding"""
    x = sample((4, 64), 2)
    q = mx.quantize(x, "mxfp4_e2m1", rounding="stochastic", seed=7, stochastic_bits=16)
    scale = np.repeat(q.scales.astype(np.float64), 32, axis=1)
    key = seed_key(7)
    r = np.array([random64_py(key, i) >> 48 for i in range(x.size)], np.int64).reshape(x.shape)
    fi = gformats.format_info_ocp_e2m1
    rounded = gfloat.round_ndarray(fi, x / scale, gfloat.RoundMode.Stochastic, True, r, 16)
    assert np.array_equal(codes(q.elements), gfloat.encode_ndarray(fi, rounded))
    again = mx.quantize(x, "mxfp4_e2m1", rounding="stochastic", seed=7, stochastic_bits=16)
    assert np.array_equal(codes(q.elements), codes(again.elements))


@pytest.mark.parametrize("bits", [3, 31])  # few random bits and nearly all
@pytest.mark.parametrize("shape", [(513, 128), (2, 70001)])
@pytest.mark.parametrize("size", [32, 24])  # whole blocks in lanes; blocks by a weights array, in chunks
def test_stochastic_rounding_of_halfway_and_grid_values_draws_as_cast_does(shape, bits, size):
    """The whole blocks' fast encoder, the elements it leaves to the full
    one and the blocks across a window of the generator (rows of 70,001:
    blocks from any index, a short one last; a window is 2**16 consecutive
    indices), with values on the element grid and halfway between two of
    its values, whose rounding the reduced random number decides at its
    edges: against gfloat with the elements' ``random64`` numbers.
    Rule: docs/rules.md#rule-mx-element-rounding"""
    rng = np.random.default_rng(bits)
    rows, n = shape
    blocks = -(-n // size)
    steps = np.array([0.25, 0.5, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0, 0.0, 1e-3, 4.9])  # halfway, on the grid, other
    x = rng.choice(steps, (rows, blocks * size)) * rng.choice([-1.0, 1.0], (rows, blocks * size))
    x *= 2.0 ** rng.integers(-10, 10, (rows, blocks)).repeat(size, axis=1)
    x[:, ::size] = 6.0 * 2.0 ** np.log2(np.abs(x[:, 1::size]) + 1).round()  # each block's largest: its scale exact
    x = x[:, :n].astype(F32)
    q = mx.quantize(x, "mxfp4_e2m1", block_size=size, rounding="stochastic", seed=3, stochastic_bits=bits)
    scale = np.repeat(q.scales.astype(np.float64), size, axis=1)[:, :n]
    key = seed_key(3)
    r = np.array([random64_py(key, i) >> (64 - bits) for i in range(x.size)], np.int64).reshape(x.shape)
    fi = gformats.format_info_ocp_e2m1
    rounded = gfloat.round_ndarray(fi, x / scale, gfloat.RoundMode.Stochastic, True, r, bits)
    assert np.array_equal(codes(q.elements), gfloat.encode_ndarray(fi, rounded))


def test_any_axis_block_size_and_partial_blocks():
    """Blocks run along ``axis``; the scales have the shape of the input
    with that axis cut to ceil(n / block_size); the last block of a line may
    be shorter and is scaled by its own amax.  Rule: docs/rules.md#rule-mx-partial-block"""
    x = sample((5, 7, 9), 4)
    for axis in (0, 1, 2, -1, -3):
        q = mx.quantize(x, "mxfp6_e3m2", axis=axis, block_size=4)
        moved = mx.quantize(np.moveaxis(x, axis, -1), "mxfp6_e3m2", block_size=4)
        assert q.axis == axis % 3 and q.block_size == 4 and q.elements.shape == x.shape
        assert q.scales.shape == tuple(-(-d // 4) if i == axis % 3 else d for i, d in enumerate(x.shape))
        assert np.array_equal(codes(q.elements), codes(np.moveaxis(moved.elements, -1, axis)))
        assert np.array_equal(codes(q.scales), codes(np.moveaxis(moved.scales, -1, axis)))
        assert np.array_equal(mx.dequantize(q), np.moveaxis(mx.dequantize(moved), -1, axis))
    one = mx.quantize(x[0, 0], "mxfp8_e4m3", block_size=1)
    assert np.array_equal(
        mx.dequantize(one),
        numbacast.cast(x[0, 0] / np.exp2(np.floor(np.log2(np.abs(x[0, 0]))) - 8), "float8e4m3fn").astype(F32)
        * np.exp2(np.floor(np.log2(np.abs(x[0, 0]))) - 8),
    )
    empty = mx.quantize(np.zeros((3, 0), F32), "mxfp4_e2m1")
    assert empty.elements.shape == (3, 0) and empty.scales.shape == (3, 0)
    for name, size in (("mxfp8_e4m3", 10**12), ("nvfp4", 10**12), ("mxfp8_e4m3", 2**63 - 1)):
        # a block longer than the line: its scratch was allocated at its length (10**12), and
        # n + size - 1 overflowed near 2**63 (no blocks: the output left unwritten)
        whole, longer = mx.quantize(x, name, block_size=9), mx.quantize(x, name, block_size=size)
        assert longer.scales.shape == (5, 7, 1) and np.array_equal(codes(longer.scales), codes(whole.scales))
        assert np.array_equal(codes(longer.elements), codes(whole.elements))
        assert np.array_equal(mx.dequantize(longer), mx.dequantize(whole))


def test_inputs_of_other_float_types_and_the_input_is_not_modified():
    """float64 inputs are scaled in float64; float16 and bfloat16 are widened
    exactly; the input is left as it was.  Rule: docs/rules.md#rule-mx-element-rounding"""
    x64 = sample((3, 32), 5).astype(np.float64) * (1 + 2.0**-40)
    kept = x64.copy()
    q = mx.quantize(x64, "mxfp8_e5m2")
    assert np.array_equal(x64, kept)
    scale = np.repeat(q.scales.astype(np.float64), 32, axis=1)
    assert np.array_equal(codes(q.elements), codes(numbacast.cast(x64 / scale, "float8e5m2")))
    x16 = sample((2, 32), 6).astype(np.float16)
    assert np.array_equal(
        codes(mx.quantize(x16, "mxfp4_e2m1").elements), codes(mx.quantize(x16.astype(F32), "mxfp4_e2m1").elements)
    )
    bf = x16.astype(numbacast.BFLOAT16.storage)
    assert mx.quantize(bf, "mxint8").elements.dtype == np.int8


@pytest.mark.parametrize(
    "name, to", [("mxfp8_e5m2", "float32"), ("mxint8", "float64"), ("nvfp4", "float16"), ("mxfp4_e2m1", "bfloat16")]
)
def test_dequantize_rounds_the_exact_product_once(name, to):
    """dequantize: element times scale (times the tensor scale), exact, then
    rounded once to ``to``.  Rule: docs/rules.md#rule-mx-dequantize"""
    x = sample((4, 64), 8, spread=6 if to == "float16" else 30)
    q = mx.quantize(x, name)
    fmt = BLOCK_FORMATS[name]
    scales = q.scales.astype(np.float64) * (2.0**-6 if fmt.integer_elements else 1.0)
    if fmt.tensor_scale:
        scales = (scales * float(q.tensor_scale)).astype(F32).astype(np.float64)
    exact = q.elements.astype(np.float64) * np.repeat(scales, fmt.block_size, axis=1)
    assert np.array_equal(
        codes(mx.dequantize(q, to)),
        codes(exact.astype(np.dtype(to) if to != "bfloat16" else numbacast.BFLOAT16.storage)),
    )


def test_a_parallel_run_equals_the_serial_one():
    """Arrays of more than 2**15 elements run parallel over blocks and give the
    same bits.  Rule: docs/rules.md#rule-mx-partial-block"""
    x = sample((1, 40_000), 9)
    q = mx.quantize(x, "mxfp4_e2m1")
    parts = [mx.quantize(x[:, i : i + 8000], "mxfp4_e2m1") for i in range(0, 40_000, 8000)]
    assert np.array_equal(codes(q.elements), np.concatenate([codes(p.elements) for p in parts], axis=1))
    assert np.array_equal(codes(q.scales), np.concatenate([codes(p.scales) for p in parts], axis=1))
    assert np.array_equal(mx.dequantize(q), np.concatenate([mx.dequantize(p) for p in parts], axis=1))


def test_every_scale_rule_runs_in_one_compiled_kernel():
    """The scale rule is read at run time: quantising by another rule
    compiles nothing, and each rule gives its own scales.  Rows of amax 1.5,
    1.97 and 1.8 times 2**-3 into E4M3 (emax 8, max 448): floor 2**-11 for
    all; ceil 2**-10 for all; even 2**-11, 2**-10 (1.97 rounds to 2), 2**-11
    (1.8 to 1.75); rceil 2**-11, 2**-10, 2**-10 (448 * 2**-11 < 0.225).
    Rule: docs/rules.md#rule-mx-scale-rules"""
    from numbacast.engine.blocks import SCALE_RULES, quantize_serial

    x = np.repeat(np.array([[1.5], [1.97], [1.8]], F32) * F32(2**-3), 64, axis=1)
    mx.quantize(x, "mxfp8_e4m3")
    compiled = len(quantize_serial.signatures)
    got = {rule: codes(mx.quantize(x, "mxfp8_e4m3", scale_rule=rule).scales)[:, 0].tolist() for rule in SCALE_RULES}
    assert len(quantize_serial.signatures) == compiled
    assert got == {"floor": [116, 116, 116], "ceil": [117, 117, 117], "even": [116, 117, 116], "rceil": [116, 117, 117]}


@pytest.mark.parametrize("name", mx.FORMATS)
def test_wire_layout_and_dequantize_linear_inputs_round_trip(name):
    """to_packed gives the elements packed as numbacast.pack packs their type
    and the scales as bytes; to_dequantize_linear gives DequantizeLinear's
    inputs and attributes; both come back unchanged.
    Rule: docs/rules.md#rule-mx-wire-layout"""
    x = sample((6, 20), 10)
    q = mx.quantize(x, name, axis=0, block_size=4)
    elements, scales = mx.to_packed(q)
    bits = BLOCK_FORMATS[name].element_bits
    assert elements.dtype == np.uint8 and elements.size == -(-x.size * bits // 8) and scales.size == q.scales.size
    if bits < 8:
        assert np.array_equal(elements, numbacast.pack(q.elements))
    back = mx.from_packed(elements, scales, x.shape, name, axis=0, block_size=4, tensor_scale=q.tensor_scale)
    inputs, attributes = mx.to_dequantize_linear(q)
    assert attributes == {"axis": 0, "block_size": 4}
    tensor_scale = q.tensor_scale if name == "nvfp4" else None
    again = mx.from_dequantize_linear(inputs["x"], inputs["x_scale"], tensor_scale=tensor_scale, **attributes)
    for other in (back, again):
        assert other.format == name and np.array_equal(mx.dequantize(other), mx.dequantize(q))
    with pytest.raises(ValueError, match="bytes"):
        mx.from_packed(elements[:-1], scales, x.shape, name, axis=0, block_size=4)


def test_bad_arguments_are_named():
    """Unknown formats, bad axes, block sizes, dtypes, rules and roundings are
    ValueError or TypeError naming the value and what is accepted.
    Rule: docs/rules.md#rule-errors"""
    x = sample((2, 32))
    cases = [
        (ValueError, "unknown block format 'mxfp9'.*mxfp8_e4m3", dict(fmt="mxfp9")),
        (ValueError, "axis 2 is out of range.*-2 to 1", dict(axis=2)),
        (TypeError, "axis must be an integer", dict(axis=1.0)),
        (ValueError, r"block_size must be a positive integer below 2\*\*63, not 0", dict(block_size=0)),
        (ValueError, r"block_size must be a positive integer below 2\*\*63, not -3", dict(block_size=-3)),
        (ValueError, r"below 2\*\*63, not 9223372036854775808", dict(block_size=2**63)),  # was an OverflowError
        (TypeError, "block_size must be a positive integer, not True", dict(block_size=True)),
        (ValueError, "scale_rule must be one of .*'round'", dict(scale_rule="round")),
        (ValueError, "rounding", dict(rounding="up")),
    ]
    for error, message, options in cases:
        with pytest.raises(error, match=message):
            mx.quantize(x, **{"fmt": "mxfp8_e4m3", **options})
    with pytest.raises(TypeError, match="not int32"):
        mx.quantize(np.ones((2, 32), np.int32), "mxfp4_e2m1")
    with pytest.raises(ValueError, match="0-d"):
        mx.quantize(np.float32(1.0), "mxfp4_e2m1")
    q = mx.quantize(x, "mxfp4_e2m1")
    with pytest.raises(ValueError, match="gives float, double"):
        mx.dequantize(q, "int8")
    with pytest.raises(TypeError, match="Quantized"):
        mx.dequantize(x)
    with pytest.raises(ValueError, match="do not fit"):
        mx.dequantize(q._replace(block_size=16))
    with pytest.raises(TypeError, match="holds elements of dtype"):
        mx.dequantize(q._replace(format="mxfp8_e4m3"))
    with pytest.raises(ValueError, match="no block format has elements of float32"):
        mx.from_dequantize_linear(x, x)


def test_quantize_and_dequantize_in_njit_code_give_the_python_bits():
    """In @njit code, quantize (blocks along the last axis) and dequantize
    run the kernels of the Python calls: the same elements, scales and
    values; an axis that is not the last is a compile-time error saying so.
    Rule: docs/rules.md#rule-mx-partial-block"""
    from numba import njit

    @njit
    def roundtrip(x, size):
        q = mx.quantize(x, "mxfp4_e2m1", block_size=size, scale_rule="rceil")
        return q, mx.dequantize(q)

    x = sample((3, 5, 70), 11)
    q, values = roundtrip(x, 16)
    expected = mx.quantize(x, "mxfp4_e2m1", block_size=16, scale_rule="rceil")
    assert (q.axis, q.block_size, q.format) == (2, 16, "mxfp4_e2m1")
    assert np.array_equal(codes(q.elements), codes(expected.elements))
    assert np.array_equal(codes(q.scales), codes(expected.scales))
    assert np.array_equal(values, mx.dequantize(expected)) and np.array_equal(mx.dequantize(q), values)

    rows = q._replace(elements=q.elements[::2], scales=q.scales[::2])  # strided: copied to C order first
    assert np.array_equal(njit(lambda q: mx.dequantize(q))(rows), mx.dequantize(rows))
    longest = roundtrip(x, 2**63 - 1)  # one block a line; n + size - 1 overflowed: no blocks, nothing written
    whole = mx.quantize(x, "mxfp4_e2m1", block_size=70, scale_rule="rceil")
    assert np.array_equal(codes(longest[0].elements), codes(whole.elements))
    assert np.array_equal(codes(longest[0].scales), codes(whole.scales))
    assert np.array_equal(longest[1], mx.dequantize(whole))

    @njit
    def along_first(x):
        return mx.quantize(x, "mxfp4_e2m1", axis=0)

    with pytest.raises(ValueError, match="along the last axis"):
        along_first(x)
    with pytest.raises(ValueError, match=re.escape("gives 'float32' or 'float64', not 'float16'")):
        njit(lambda q: mx.dequantize(q, "float16"))(q)


@pytest.mark.parametrize("shape", [(3, 5, 70), (40, 1000)])  # the serial loops, the parallel ones
def test_nvfp4_in_njit_code_gives_the_python_bits(shape):
    """NVFP4 in @njit code: the tensor scale from the blocks' amaxes, the
    same elements, scales and values as the Python calls, a NaN included.
    Rule: docs/rules.md#rule-mx-nvfp4"""
    from numba import njit

    @njit
    def roundtrip(x):
        q = mx.quantize(x, "nvfp4")
        return q, mx.dequantize(q)

    x = sample(shape, 12)
    x.reshape(-1)[x.size // 3] = np.nan
    q, values = roundtrip(x)
    expected = mx.quantize(x, "nvfp4")
    assert q.tensor_scale == expected.tensor_scale == F32(1.0)  # the NaN's
    assert np.array_equal(codes(q.elements), codes(expected.elements))
    assert np.array_equal(codes(q.scales), codes(expected.scales))
    assert np.array_equal(values, mx.dequantize(expected), equal_nan=True)
    finite = np.nan_to_num(x, nan=0.0)
    q, _ = roundtrip(finite)
    assert q.tensor_scale == mx.quantize(finite, "nvfp4").tensor_scale == F32(np.abs(finite).max() / 2688)


def test_stochastic_rounding_and_a_given_tensor_scale_in_njit_code_give_the_python_bits():
    """In @njit code, quantize takes a run-time seed (and literal
    stochastic_bits) and NVFP4's tensor_scale as the Python call does, and
    checks them as it does."""
    from numba import njit

    @njit
    def stochastic(x, seed):
        return mx.quantize(x, "mxfp8_e4m3", rounding="stochastic", seed=seed, stochastic_bits=12)

    @njit
    def scaled(x, tensor_scale):
        return mx.quantize(x, "nvfp4", tensor_scale=tensor_scale)

    x = sample((6, 1000), 13)
    for got, want in [
        (stochastic(x, 5), mx.quantize(x, "mxfp8_e4m3", rounding="stochastic", seed=5, stochastic_bits=12)),
        (scaled(x, 0.01), mx.quantize(x, "nvfp4", tensor_scale=0.01)),
    ]:
        assert np.array_equal(codes(got.elements), codes(want.elements))
        assert np.array_equal(codes(got.scales), codes(want.scales))
        assert got.tensor_scale == want.tensor_scale
    assert not np.array_equal(codes(stochastic(x, 6).elements), codes(stochastic(x, 5).elements))
    with pytest.raises(ValueError, match="seed must be in"):
        stochastic(x, -1)
    with pytest.raises(ValueError, match=r"tensor_scale must be a positive finite float32, not -1\.0$"):
        scaled(x, -1.0)

    @njit
    def scaled_mx(x):
        return mx.quantize(x, "mxfp4_e2m1", tensor_scale=0.5)

    with pytest.raises(ValueError, match="tensor_scale is for nvfp4, not for mxfp4_e2m1"):
        scaled_mx(x)

    @njit
    def unseeded(x):
        return mx.quantize(x, "mxfp4_e2m1", rounding="stochastic")

    with pytest.raises(TypeError, match=re.escape("needs seed= (an integer):")):
        unseeded(x)


def test_a_bad_or_misplaced_tensor_scale_is_refused_by_every_entry_point():
    """dequantize, to_packed, from_packed and to/from_dequantize_linear check
    the tensor scale as quantize does: NVFP4's positive and finite, an MX
    format's 1.0.  Rule: docs/rules.md#rule-errors"""
    x = sample((2, 64), 14)
    q, qm = mx.quantize(x, "nvfp4"), mx.quantize(x, "mxfp8_e4m3")
    for bad in (None, -1.0, 0.0, np.inf, np.nan, "1", 1e300):  # 1e300: beyond float32, no overflow warning
        with pytest.raises((TypeError, ValueError), match="tensor_scale must be a positive finite float32"):
            mx.dequantize(q._replace(tensor_scale=bad))
        with pytest.raises((TypeError, ValueError), match="tensor_scale must be a positive finite float32"):
            mx.quantize(x, "nvfp4", tensor_scale=bad if bad is not None else "none")  # None: the default
        with pytest.raises((TypeError, ValueError), match="tensor_scale must be a positive finite float32"):
            mx.from_packed(*mx.to_packed(q), (2, 64), "nvfp4", tensor_scale=bad)
    for call in (mx.dequantize, mx.to_packed, mx.to_dequantize_linear):
        with pytest.raises(ValueError, match="tensor_scale is for nvfp4, not for mxfp8_e4m3"):
            call(qm._replace(tensor_scale=2.0))
    for one in (1, np.asarray(np.float32(1))):  # checked alike for MX and NVFP4
        assert np.array_equal(mx.dequantize(qm._replace(tensor_scale=one)), mx.dequantize(qm))
    with pytest.raises(TypeError, match="tensor_scale must be a positive finite float32, not None"):
        mx.dequantize(qm._replace(tensor_scale=None))
    inputs, attributes = mx.to_dequantize_linear(q)
    with pytest.raises(ValueError, match="nvfp4 needs its tensor_scale"):
        mx.from_dequantize_linear(inputs["x"], inputs["x_scale"], attributes["axis"], attributes["block_size"])


def test_big_endian_input_is_quantised_as_native_and_a_fractional_shape_is_refused():
    """Either byte order, as numbacast.cast takes; from_packed's shape must
    be integers, not truncated.  Rule: docs/rules.md#rule-errors"""
    x = sample((4, 64), 15)
    q = mx.quantize(x, "mxfp8_e4m3")
    swapped = mx.quantize(x.astype(">f4"), "mxfp8_e4m3")
    assert np.array_equal(codes(swapped.elements), codes(q.elements))
    assert np.array_equal(codes(swapped.scales), codes(q.scales))
    with pytest.raises(TypeError, match=re.escape("shape must be a tuple of integers from 0 up, not (3.7, 64)")):
        mx.from_packed(*mx.to_packed(q), (3.7, 64), "mxfp8_e4m3")
    assert mx.from_packed(*mx.to_packed(q), (np.int64(4), 64), "mxfp8_e4m3").elements.shape == (4, 64)


def test_the_worked_example_of_the_docs_prints_the_figures_of_its_table():
    """docs/mx.md's weight matrix: its code, run as written, gives the errors its table shows."""
    page = (DOCS / "mx.md").read_text()
    section = page.split("## A worked example")[1].split("\n## ")[0]
    (code,) = python_blocks(section)
    table = re.findall(r"^\| (\w+) \| ([0-9.]+) \| ([0-9.e+-]+) \|$", section, re.MULTILINE)
    printed = []
    exec(code, {"np": np, "numbacast": numbacast, "print": lambda *values: printed.append(values)})
    assert len(table) == len(mx.FORMATS) == len(printed)
    assert [(fmt, f"{rms:.4f}", f"{largest:.2e}") for fmt, rms, largest in printed] == table


def test_run_time_errors_in_njit_code_name_their_values_as_the_python_calls_do():
    """A block size, a tensor scale, a scales array or an axis that @njit
    code meets at run time is the ValueError of the Python call, naming the
    value (dequantize checks the tensor scale as the Python call does).
    Rule: docs/rules.md#rule-errors"""
    from numba import njit

    x = sample((4, 64), 16)
    q, qn = mx.quantize(x, "mxfp8_e4m3"), mx.quantize(x, "nvfp4")
    quantize_by = njit(lambda x, size: mx.quantize(x, "mxfp8_e4m3", block_size=size))
    dequantize = njit(lambda q: mx.dequantize(q))
    cases = [
        (lambda: quantize_by(x, -3), r"^block_size must be a positive integer below 2\*\*63, not -3$"),
        (lambda: dequantize(q._replace(block_size=0)), r"^block_size must be a positive integer below 2\*\*63, not 0$"),
        (
            lambda: dequantize(q._replace(block_size=16)),
            r"^scales of shape \(4, 2\) do not fit elements of shape \(4, 64\) cut along axis 1 into blocks of 16: "
            r"expected \(4, 4\)$",
        ),
        (
            lambda: dequantize(q._replace(axis=0)),
            r"^numbacast.mx.dequantize in @njit code takes blocks along the last axis \(1\), not axis 0$",
        ),
        (
            lambda: dequantize(qn._replace(tensor_scale=F32(-2))),
            r"^tensor_scale must be a positive finite float32, not -2\.0$",
        ),
        (
            lambda: dequantize(q._replace(tensor_scale=F32(2))),
            r"^tensor_scale is for nvfp4, not for mxfp8_e4m3: its tensor scale is 1\.0, not 2\.0$",
        ),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
    for python_call, message in [
        (lambda: mx.dequantize(q._replace(block_size=16)), cases[2][1]),
        (lambda: mx.dequantize(q._replace(tensor_scale=2.0)), cases[5][1]),
    ]:
        with pytest.raises(ValueError, match=message):
            python_call()


def test_small_calls_run_the_loop_compiled_for_their_input():
    """Small quantisations and dequantisations find their compiled loop by
    the input's dtype and flags, the format and the conversions (not by
    every argument): float32, float64 and read-only inputs and two roundings
    in turn, each the bits of the same rows inside an array large enough
    for the parallel loop."""
    from numbacast.engine.kernels import PARALLEL_MIN

    x = sample((4, 64), 29)
    readonly = x.copy()
    readonly.flags.writeable = False
    for fmt in ("mxfp8_e4m3", "mxint8", "nvfp4"):
        for a in (x, x.astype(np.float64), readonly, x.astype(np.float64)[:, ::2]):
            large = np.tile(a, (PARALLEL_MIN // a.size + 1, 1))  # the same rows, the same largest magnitude
            for rounding in ("nearest_even", "toward_zero"):
                q, q_large = mx.quantize(a, fmt, rounding=rounding), mx.quantize(large, fmt, rounding=rounding)
                rows = len(a)
                assert np.array_equal(codes(q.elements), codes(q_large.elements[:rows]))
                assert np.array_equal(codes(q.scales), codes(q_large.scales[:rows]))
                for to in ("float32", "float64"):
                    assert np.array_equal(mx.dequantize(q, to), mx.dequantize(q_large, to)[:rows])
