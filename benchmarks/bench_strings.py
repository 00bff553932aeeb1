"""STRING in and out against NumPy's ``astype`` on 1M float32 and float64 values
(asv benchmarks: ``setup`` builds the data, ``time_*`` methods are timed)."""

import numpy as np

import numbacast

SIZE = 1_000_000


def sample(dtype, size=SIZE, seed=0):
    """Values over many magnitudes: a random significand times 10**(-10..10)."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(size) * 10.0 ** rng.integers(-10, 11, size)).astype(dtype)


class StringsFloat32:
    """float32 to text and back."""

    dtype = np.float32

    def setup(self):
        self.values = sample(self.dtype)
        self.texts = self.values.astype(str)
        numbacast.cast(self.values[:10], "string")  # compile (or load) outside the timing
        numbacast.cast(self.texts[:10], self.dtype)

    def time_numbacast_to_string(self):
        numbacast.cast(self.values, "string")

    def time_numpy_to_string(self):
        self.values.astype(str)

    def time_numbacast_from_string(self):
        numbacast.cast(self.texts, self.dtype)

    def time_numpy_from_string(self):
        self.texts.astype(self.dtype)


class StringsFloat64(StringsFloat32):
    """float64 to text and back."""

    dtype = np.float64


def ratios(repeat=5):
    """{(dtype, direction): NumPy time / numbacast time}, best of ``repeat``."""
    import timeit

    results = {}
    for case in (StringsFloat32(), StringsFloat64()):
        case.setup()
        for direction in ("to_string", "from_string"):
            ours = min(timeit.repeat(getattr(case, f"time_numbacast_{direction}"), number=1, repeat=repeat))
            numpy = min(timeit.repeat(getattr(case, f"time_numpy_{direction}"), number=1, repeat=repeat))
            results[np.dtype(case.dtype).name, direction] = (numpy / ours, ours, numpy)
    return results


if __name__ == "__main__":
    for (dtype, direction), (ratio, ours, numpy) in ratios().items():
        print(f"{dtype:8} {direction:12} numbacast {ours * 1e3:7.1f} ms  NumPy {numpy * 1e3:7.1f} ms  {ratio:5.1f}x")


class StringsExact:
    """Texts that only the exact pass settles (long mantissas at a tie of
    float64, written out in full), read into DOUBLE."""

    def setup(self):
        tie = "1.00000000000000011102230246251565404236316680908203125"  # 1 + 2**-53: a tie
        self.texts = np.array([tie, "-" + tie + "0000001e-3"] * 50_000)
        numbacast.cast(self.texts[:10], np.float64)  # compile (or load) outside the timing

    def time_numbacast_from_string(self):
        numbacast.cast(self.texts, np.float64)
