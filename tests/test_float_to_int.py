"""FLOAT and DOUBLE into the integer types, against NumPy in float64: the
kernels convert through int32 where the target fits one (so that AVX2
vectorises them), which must not change a single result.

Float32 sources: every 4099th bit pattern (a million values over every
exponent) and the neighbours of every bound; float64 sources: those values,
random doubles and the float64 neighbours of every bound.  8- to 64-bit
targets truncate toward zero and saturate (NaN gives 0); 4- and 2-bit targets
round to nearest even and keep the low bits (NaN, inf and magnitudes of 2**62
or more give 0)."""

import numpy as np
import pytest

import numbacast

TARGETS = {
    "int8": (8, True),
    "uint8": (8, False),
    "int16": (16, True),
    "uint16": (16, False),
    "int32": (32, True),
    "uint32": (32, False),
    "int64": (64, True),
    "uint64": (64, False),
    "int4": (4, True),
    "uint4": (4, False),
    "int2": (2, True),
    "uint2": (2, False),
}

BOUNDS = [2.0**k for k in (0, 1, 2, 3, 4, 7, 8, 15, 16, 23, 24, 31, 32, 52, 53, 62, 63, 64)]


def neighbours(dtype, count=40):
    values = []
    for bound in BOUNDS + [b + 0.5 for b in (0.0, 1.0, 2.0, 3.0, 7.0, 127.0)]:
        for sign in (1.0, -1.0):
            x = np.array([sign * bound], dtype)
            up, down = x.copy(), x.copy()
            for _ in range(count):
                values += [up[0], down[0]]
                up, down = np.nextafter(up, dtype.type(np.inf)), np.nextafter(down, dtype.type(-np.inf))
    return np.array(values + [np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0], dtype)


def float32_values():
    bits = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([bits.view(np.float32), neighbours(np.dtype(np.float32))])


def float64_values():
    rng = np.random.default_rng(15)
    random = rng.integers(0, 1 << 64, 1 << 18, dtype=np.uint64, endpoint=False).view(np.float64)
    scaled = rng.standard_normal(1 << 18) * 2.0 ** rng.integers(-4, 70, 1 << 18)
    return np.concatenate([float32_values().astype(np.float64), random, scaled, neighbours(np.dtype(np.float64))])


def reference(x, bits, signed):
    """The exact results, from float64 (exact for both sources), in NumPy: each
    bound is a power of two, exact in float64, and the values between them
    convert exactly once truncated or rounded to integers."""
    d = x.astype(np.float64)
    if bits >= 8:
        dtype = np.dtype(f"{'i' if signed else 'u'}{bits // 8}")
        info = np.iinfo(dtype)
        out = np.zeros(d.size, dtype)  # NaN gives 0
        over, under = d >= 2.0 ** (bits - 1 if signed else bits), d < float(info.min)
        inside = ~(over | under | np.isnan(d))
        out[inside] = np.trunc(d[inside]).astype(dtype)
        out[over], out[under] = info.max, info.min
        return out
    rounded = np.rint(d)  # ties to even
    kept = np.abs(rounded) < 2.0**62  # NaN and infinities not
    out = np.zeros(d.size, np.int64)
    out[kept] = rounded[kept].astype(np.int64) & ((1 << bits) - 1)
    return out


def codes(result, bits):
    return result.view(np.uint8).astype(np.int64) & ((1 << bits) - 1) if bits < 8 else result


@pytest.mark.parametrize("source", ["float32", "float64"])
@pytest.mark.parametrize("target", list(TARGETS))
def test_float_to_int(source, target):
    bits, signed = TARGETS[target]
    with np.errstate(invalid="ignore"):  # the signalling NaNs among the values
        x = float32_values() if source == "float32" else float64_values()
        expected = reference(x, bits, signed)
    for size in (x.size, 1000):  # the parallel and the serial loop
        got = codes(numbacast.cast(x[:size], target), bits)
        assert got.dtype == expected.dtype
        mismatches = np.flatnonzero(got != expected[:size])
        assert not mismatches.size, [(float(x[i]), int(got[i]), int(expected[i])) for i in mismatches[:5]]
