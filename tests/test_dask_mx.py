"""numbacast.mx on Dask arrays: a lazy quantisation cut at block boundaries,
checked at the call, giving the bits of the NumPy call."""

import ml_dtypes
import numpy as np
import pytest
from test_dask import unevaluable

import numbacast.mx as mx

dask = pytest.importorskip("dask", reason="the Dask tests need dask[array] (pip install 'numbacast[dask]')")
da = pytest.importorskip("dask.array")


def sample(shape, seed=0):
    """Float32 values over many binades, with NaN, infinity and zeros."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, shape))).astype(np.float32)
    x.flat[[3, 50, 77]] = [np.nan, -np.inf, 0.0]
    return x


def codes(a):
    return np.asarray(a).view(np.uint8)


def test_quantize_is_lazy_with_chunks_cut_at_block_boundaries():
    x = unevaluable((40, 100), (10, 45), np.float32)  # 45 is not a multiple of 32: rechunked along axis 1
    for fmt in ("mxfp8_e4m3", "mxint8", "mxfp4_e2m1"):
        q = mx.quantize(x, fmt, axis=1)
        assert isinstance(q.elements, da.Array) and isinstance(q.scales, da.Array)
        assert q.elements.shape == (40, 100) and q.scales.shape == (40, 4)
        assert all(size % 32 == 0 for size in q.elements.chunks[1][:-1])
        assert q.scales.chunks[1] == tuple(-(-size // 32) for size in q.elements.chunks[1])
        assert q.elements.dtype == (np.int8 if fmt == "mxint8" else mx.quantize(np.ones(1), fmt).elements.dtype)
        assert q.scales.dtype == ml_dtypes.float8_e8m0fnu
    q = mx.quantize(x, "nvfp4", tensor_scale=0.5)  # given: nothing to compute
    assert q.tensor_scale == np.float32(0.5) and type(q.tensor_scale) is np.float32
    assert isinstance(mx.dequantize(q), da.Array)


@pytest.mark.parametrize("fmt", mx.FORMATS)
def test_each_chunk_gives_the_bits_of_the_numpy_call(fmt):
    x = sample((48, 200))
    for axis, chunks, options in [
        (1, (16, 50), {}),
        (0, (7, 200), {"block_size": 24, "rounding": "toward_negative"}),
        (1, (48, 200), {"rounding": "nearest_away", "block_size": 1000}),
    ]:
        q = mx.quantize(da.from_array(x, chunks=chunks), fmt, axis=axis, **options)
        expected = mx.quantize(x, fmt, axis=axis, **options)
        elements, scales = dask.compute(q.elements, q.scales)
        assert elements.dtype == expected.elements.dtype and scales.dtype == expected.scales.dtype
        assert np.array_equal(codes(elements), codes(expected.elements)), (axis, chunks, options)
        assert np.array_equal(codes(scales), codes(expected.scales)), (axis, chunks, options)
        assert q.tensor_scale == expected.tensor_scale and type(q.tensor_scale) is np.float32
        values = mx.dequantize(q, "float64")
        assert isinstance(values, da.Array) and values.dtype == np.float64
        assert np.array_equal(values.compute(), mx.dequantize(expected, "float64"), equal_nan=True)


@pytest.mark.parametrize("special", [None, np.nan, np.inf, 0.0])
def test_nvfp4_takes_the_tensor_scale_of_the_whole_array(special):
    x = sample((30, 64), seed=3)
    x[20:, :] *= 1000.0  # the largest magnitudes in the last chunks only
    if special is not None:
        x[25, 9] = special if special == special else np.nan
    if special == 0.0:
        x[:] = 0.0
    q = mx.quantize(da.from_array(x, chunks=(10, 32)), "nvfp4")
    expected = mx.quantize(x, "nvfp4")
    assert q.tensor_scale == expected.tensor_scale
    assert np.array_equal(codes(q.elements.compute()), codes(expected.elements))
    assert np.array_equal(codes(q.scales.compute()), codes(expected.scales))


def test_float16_and_bfloat16_chunks_quantise_as_numpy_arrays_do():
    x = (sample((8, 64)) / 2.0**8).astype(np.float16)  # (float16 holds up to 65504)
    for array in (x, x.astype(ml_dtypes.bfloat16)):
        q = mx.quantize(da.from_array(array, chunks=(3, 64)), "mxfp6_e3m2")
        assert np.array_equal(codes(q.elements.compute()), codes(mx.quantize(array, "mxfp6_e3m2").elements))


def test_dequantize_takes_dask_elements_of_any_chunks_and_numpy_scales_or_the_reverse():
    x = sample((12, 96))
    expected = mx.quantize(x, "mxfp8_e5m2")
    for q in (
        expected._replace(elements=da.from_array(expected.elements, chunks=(5, 41))),
        expected._replace(scales=da.from_array(expected.scales, chunks=(5, 1))),
    ):
        values = mx.dequantize(q)
        assert isinstance(values, da.Array) and values.dtype == np.float32
        assert np.array_equal(values.compute(), mx.dequantize(expected), equal_nan=True)


def test_to_dequantize_linear_keeps_dask_arrays_lazy():
    x = sample((4, 64))
    expected = mx.quantize(x, "mxint8")
    inputs, attributes = mx.to_dequantize_linear(mx.quantize(da.from_array(x, chunks=(2, 32)), "mxint8"))
    wanted, wanted_attributes = mx.to_dequantize_linear(expected)
    assert isinstance(inputs["x_scale"], da.Array) and attributes == wanted_attributes
    assert np.array_equal(inputs["x"].compute(), wanted["x"])
    assert np.array_equal(inputs["x_scale"].compute(), wanted["x_scale"], equal_nan=True)  # (a NaN block)


@pytest.mark.parametrize(
    "call,error,match",
    [
        (
            lambda x: mx.quantize(x, "mxfp8_e4m3", rounding="stochastic", seed=1),
            ValueError,
            "stochastic.*Dask.*nearest",
        ),
        (lambda x: mx.quantize(x.astype(np.int32), "mxfp8_e4m3"), TypeError, "int32"),
        (lambda x: mx.quantize(x, "mxfp8_e4m3", axis=2), ValueError, "axis 2"),
        (lambda x: mx.quantize(x, "mxfp8_e4m3", block_size=0), ValueError, "block_size"),
        (lambda x: mx.quantize(x, "mxfp4_e2m1", tensor_scale=2.0), ValueError, "tensor_scale is for nvfp4"),
        (lambda x: mx.quantize(x, "nvfp4", tensor_scale=-1.0), ValueError, "tensor_scale"),
        (lambda x: mx.quantize(x, "mxfp8_e4m3", scale_rule="round"), ValueError, "scale_rule"),
        (lambda x: mx.to_packed(mx.quantize(x, "mxfp4_e2m1")), TypeError, "to_packed.*Dask.*compute"),
        (lambda x: mx.to_packed(mx.quantize(x, "mxfp8_e4m3")), TypeError, "to_packed.*Dask.*compute"),
    ],
)
def test_bad_arguments_raise_at_the_call_and_compute_nothing(call, error, match):
    with pytest.raises(error, match=match):
        call(unevaluable((6, 64), (3, 32), np.float32))


def test_unknown_chunk_sizes_are_refused_with_the_way_out():
    x = sample((6, 64))
    x[2, 0] = np.nan
    dx = da.from_array(x, chunks=(3, 32))
    unknown = dx[dx[:, 0] == dx[:, 0]]  # rows kept by a test: their count is unknown until computed
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        mx.quantize(unknown, "mxfp8_e4m3", axis=0)
    along_rows = mx.quantize(unknown, "mxfp8_e4m3", axis=1)  # the blocks' axis is known: lazy
    expected = mx.quantize(np.delete(x, 2, axis=0), "mxfp8_e4m3", axis=1)
    assert np.array_equal(codes(along_rows.elements.compute()), codes(expected.elements))
    assert np.array_equal(mx.dequantize(along_rows).compute(), mx.dequantize(expected), equal_nan=True)
    with pytest.raises(ValueError, match="axis 0.*compute_chunk_sizes"):
        mx.dequantize(along_rows._replace(axis=0))
