"""Float formats that are not ONNX types (docs/rules.md#rule-user-formats):
their descriptions, P3109 and gfloat's named formats, ml_dtypes' float8 types
ONNX lacks, casts to and from them, and their kernels on disk."""

import re
import subprocess
import sys
import textwrap
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import numbacast
from numbacast import FloatFormat, FloatType, cast, p3109
from numbacast.formats import description

gfloat = pytest.importorskip("gfloat")
from gfloat import formats as gformats  # noqa: E402


@pytest.mark.parametrize("k", range(3, 17))
def test_p3109_descriptions_match_gfloat(k):
    """Rule: docs/rules.md#rule-user-formats"""
    for p in range(1, k + 1):
        for signed in (True, False):
            for extended in (True, False):
                fi = gformats.format_info_p3109(
                    k,
                    p,
                    gfloat.Signedness.Signed if signed else gfloat.Signedness.Unsigned,
                    gfloat.Domain.Extended if extended else gfloat.Domain.Finite,
                )
                try:
                    t = p3109(k, p, signed, extended)
                except ValueError as error:
                    assert "float64" in str(error)
                    exponent_bits = k - p + int(not signed)
                    assert exponent_bits >= 11  # a bias of 1024 or more
                    continue
                fmt = t.format
                assert t.name == fi.name
                assert (fmt.bits, fmt.mantissa_bits + 1, fmt.bias, fmt.signed) == (fi.k, fi.precision, fi.bias, signed)
                assert fmt.largest == Fraction(fi.max) and fmt.smallest == Fraction(fi.smallest)
                assert fmt.max_code == fi.code_of_max
                assert fmt.has_inf == extended and (not extended or fmt.inf_code == fi.code_of_posinf)
                assert fmt.nan_codes == (fi.code_of_nan,) and not fmt.has_negative_zero
                assert t.storage == np.dtype(np.uint8 if k <= 8 else np.uint16)


def test_gfloat_named_formats():
    """Rule: docs/rules.md#rule-user-formats"""
    assert numbacast.gfloat_format("ocp_e4m3") is numbacast.FLOAT8E4M3FN
    assert numbacast.gfloat_format("binary16") is numbacast.FLOAT16
    assert numbacast.gfloat_format("ocp_e8m0") is numbacast.FLOAT8E8M0
    assert numbacast.gfloat_format("p3109_k8p3se") == p3109(8, 3)
    # a P3109 type's own name names it wherever a type is taken
    assert numbacast.resolve("p3109_k8p3se") == p3109(8, 3)
    assert numbacast.resolve("P3109_K5P2UF") == p3109(5, 2, signed=False, extended=False)
    x = np.array([1.0, -3.5, 100.0])
    assert np.array_equal(cast(x, "p3109_k8p3se"), cast(x, p3109(8, 3)))
    with pytest.raises(ValueError, match="p3109_k<K>p<P><s|u><e|f>"):
        numbacast.resolve("p3109_k8p3")
    with pytest.raises(ValueError, match="two's complement"):
        numbacast.gfloat_format("ocp_int8")
    # the ONNX float types are instances of the same description
    assert description.FLOAT8E4M3FN.describe()["largest"] == 448.0
    assert description.FLOAT8E5M2.nan_codes == (0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF)


def test_formats_numbacast_cannot_take_are_refused():
    """Rule: docs/rules.md#rule-user-formats"""
    with pytest.raises(ValueError, match="float64"):
        p3109(16, 2)
    with pytest.raises(ValueError, match="IEEE NaNs need infinities"):
        FloatType("x", FloatFormat(4, 3, 7, False, description.NAN_IEEE))
    with pytest.raises(ValueError, match="1 to 16 bits"):
        numbacast.resolve(FloatFormat(8, 10, 127, True, description.NAN_IEEE))
    with pytest.raises(ValueError, match="sign bit"):
        FloatType("x", FloatFormat(4, 3, 7, False, description.NAN_NEGATIVE_ZERO, signed=False))


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda: cast(np.ones(1), FloatFormat(4, 3, 7, False, "IEEE")), ValueError, "unknown NaN encoding 'IEEE'"),
        (lambda: cast(np.ones(1), FloatFormat(4, 3, 7, False, None)), TypeError, "nan must be one of"),
        (lambda: FloatType("x", FloatFormat(4, 3, 7.5, False, "none")), TypeError, "bias must be an integer, not 7.5"),
        (lambda: numbacast.resolve(FloatFormat(4, 3, 7, "yes", "none")), TypeError, "has_inf must be True or False"),
        (lambda: numbacast.resolve(FloatFormat(True, 3, 7, False, "none")), TypeError, "exponent_bits must be an"),
        (lambda: p3109(8, 3, signed="no"), TypeError, "signed must be True or False, not 'no'"),
        (lambda: p3109(8.0, 3), TypeError, "k must be an integer, not 8.0"),
        (lambda: p3109(20, 3), ValueError, "2 <= k <= 16"),
        (lambda: numbacast.gfloat_format(None), TypeError, "takes the name of one of gfloat's formats"),
    ],
)
def test_format_fields_of_the_wrong_type_or_value_are_named(make, error, message):
    """A field of the wrong type is a TypeError naming it, an unknown NaN
    encoding a ValueError listing the known ones, never a KeyError or a value
    quietly taken for another.  Rule: docs/rules.md#rule-user-formats"""
    with pytest.raises(error, match=re.escape(message)):
        make()


def test_integer_types_of_numpy_and_gfloat_format_infos_are_taken():
    assert p3109(np.int64(8), np.int32(3)) == p3109(8, 3)
    assert numbacast.gfloat_format(gformats.format_info_ocp_e5m2) is numbacast.FLOAT8E5M2
    assert numbacast.gfloat_format(gformats.format_info_p3109(8, 3)) == p3109(8, 3)


@pytest.mark.parametrize("name", ["float8_e4m3", "float8_e3m4", "float8_e4m3b11fnuz"])
def test_ml_dtypes_formats_onnx_lacks(name):
    """Rule: docs/rules.md#rule-user-formats"""
    dtype = np.dtype(getattr(ml_dtypes, name))
    t = numbacast.resolve(name)
    assert numbacast.resolve(dtype) is t and t.storage == dtype
    # every code decodes as ml_dtypes decodes it
    codes = np.arange(256, dtype=np.uint8).view(dtype)
    ours, theirs = cast(codes, "float"), codes.astype(np.float32)
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    assert np.array_equal(ours[~np.isnan(ours)].view(np.uint32), theirs[~np.isnan(theirs)].view(np.uint32))
    # finite values in range round as ml_dtypes rounds them (to nearest even)
    rng = np.random.default_rng(0)
    largest = float(t.format.largest)
    x = (rng.standard_normal(20000) * largest / 4).astype(np.float32).clip(-largest, largest)
    x = np.concatenate([x, theirs[np.isfinite(theirs)] * np.float32(1.0001), np.float32([1e-30, -1e-30])])
    out = cast(x, t, saturate=False)
    assert out.dtype == dtype
    assert out.view(np.uint8).tolist() == x.astype(dtype).view(np.uint8).tolist()


def test_cast_to_and_from_a_custom_format():
    """Rule: docs/rules.md#rule-user-formats"""
    t = p3109(8, 3)
    codes = np.arange(256, dtype=np.uint8)
    values = cast(codes, "double", source=t)  # the table path of a narrow source
    assert np.isnan(values[0x80]) and values[0x7F] == np.inf and values[0xFF] == -np.inf
    assert values[0x7E] == float(t.format.largest)
    back = cast(values, t, saturate=False)  # every value casts back to itself
    assert back.dtype == np.uint8 and back.tolist() == codes.tolist()
    # into another custom format, with any mode, and from codes of any unsigned type
    u = p3109(8, 4, signed=False, extended=False)
    down = cast(codes, u, source=t, rounding="toward_zero", saturate=True)
    assert down.tolist() == cast(values, u, rounding="toward_zero", saturate=True).tolist()
    with pytest.raises(TypeError, match="dtype"):
        cast(codes.astype(np.uint16), "float", source=t)
    wide = p3109(16, 9)  # codes of either byte order
    wide_codes = cast(np.linspace(-3, 3, 101), wide)
    swapped = cast(wide_codes.astype(">u2"), "double", source=wide)
    assert swapped.tolist() == cast(wide_codes, "double", source=wide).tolist()
    # stochastic rounding into it, with the random bits of gfloat
    x = np.random.default_rng(1).standard_normal(5000).astype(np.float32)
    bits = np.random.default_rng(2).integers(0, 1 << 10, x.size, dtype=np.uint16)
    ours = cast(x, t, rounding="stochastic", random_bits=bits, stochastic_bits=10)
    fi = gformats.format_info_p3109(8, 3)
    rounded = gfloat.round_ndarray(fi, x.astype(np.float64), gfloat.RoundMode.Stochastic, True, bits, 10)
    assert ours.tolist() == gfloat.encode_ndarray(fi, rounded).tolist()


def test_custom_formats_in_dask_arrays():
    """Rule: docs/rules.md#rule-user-formats"""
    da = pytest.importorskip("dask.array")
    t = p3109(8, 3)
    codes = np.arange(256, dtype=np.uint8).reshape(16, 16)
    lazy = cast(da.from_array(codes, chunks=5), "double", source=t)
    assert np.array_equal(lazy.compute(), cast(codes, "double", source=t), equal_nan=True)


def test_kernels_of_a_custom_format_are_cached_on_disk(tmp_path):
    """Rule: docs/rules.md#rule-user-formats"""
    script = textwrap.dedent(
        """
        import numpy as np, numbacast
        from numbacast.engine.kernels import serial_kernel
        t = numbacast.p3109(7, 3, signed=False)
        x = np.linspace(0, 100, 10, dtype=np.float32)
        print(numbacast.cast(x, t, rounding="toward_positive").tolist(), serial_kernel.stats.cache_hits.total())
        """
    )
    env = {"NUMBA_CACHE_DIR": str(tmp_path), "PATH": "", "PYTHONPATH": ":".join(sys.path)}
    runs = [
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True).stdout
        for _ in range(2)
    ]
    first, second = (run.rsplit(" ", 1) for run in runs)
    assert first[0] == second[0]
    assert int(first[1]) == 0 and int(second[1]) > 0


def test_code_bits_above_the_format_width_are_ignored():
    """A code is read by its low ``bits`` bits, as ONNX's sub-byte types are:
    every byte read as a 3-bit and a 5-bit format equals its low bits read.
    Rule: docs/rules.md#rule-user-formats"""
    codes = np.arange(256, dtype=np.uint8)
    for fmt in (p3109(3, 1), p3109(5, 2, signed=False)):
        low = codes & ((1 << fmt.format.bits) - 1)
        assert np.array_equal(cast(codes, "double", source=fmt), cast(low, "double", source=fmt), equal_nan=True)


def test_the_formats_whose_fields_fit_in_float16s():
    """The formats decoded by the processor's FLOAT16 conversion where it has
    one (engine.conversion._half_decoder): each code's fields moved into
    FLOAT16's make a FLOAT16 code of the same value times a power of two;
    not BFLOAT16 and FLOAT (wider exponents), FLOAT8E5M2FNUZ (its top
    binade would land on FLOAT16's infinities) or FLOAT8E8M0 (no sign, no
    subnormals)."""
    half = description.FLOAT16
    fit = {t.name for t in numbacast.TYPES if t.is_float and description.fields_fit_in(t.format, half)}
    assert fit == {"float16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float6e2m3", "float6e3m2", "float4e2m1"}
