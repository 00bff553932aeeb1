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
    """The exact results, computed on Python integers from float64 (exact for both sources)."""
    d = x.astype(np.float64)
    out = []
    if bits >= 8:
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        for v in d.tolist():
            out.append(0 if v != v else hi if v >= hi + 1 else lo if v < lo else int(v))
        return out
    for v in np.rint(d).tolist():
        out.append(int(v) & ((1 << bits) - 1) if abs(v) < 2.0**62 else 0)
    return out


def codes(result, bits, signed):
    if bits < 8:
        return (result.view(np.uint8).astype(np.int64) & ((1 << bits) - 1)).tolist()
    return result.astype(object).tolist()


@pytest.mark.parametrize("source", ["float32", "float64"])
@pytest.mark.parametrize("target", list(TARGETS))
def test_float_to_int(source, target):
    bits, signed = TARGETS[target]
    with np.errstate(invalid="ignore"):  # the signalling NaNs among the values
        x = float32_values() if source == "float32" else float64_values()
        expected = reference(x, bits, signed)
    for size in (x.size, 1000):  # the parallel and the serial loop
        got = codes(numbacast.cast(x[:size], target), bits, signed)
        mismatches = [i for i, (a, b) in enumerate(zip(got, expected[:size])) if a != b]
        assert not mismatches, [(float(x[i]), got[i], expected[i]) for i in mismatches[:5]]
