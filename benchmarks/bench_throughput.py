"""Throughput: one cast of 16M elements, and the trivial kernel moving the same bytes."""

from . import PACKED_PAIRS, THROUGHPUT_PAIRS
from .harness import baselines
from .harness.bench import DEFAULT_SIZE


class _Throughput:
    """Times the cast and the trivial kernel that ``casts(source, target, size)`` makes for each pair."""

    param_names = ["pair"]
    timeout = 300

    def setup(self, pair):
        self.cast, self.trivial = self.casts(*self.pairs[pair], DEFAULT_SIZE)
        self.cast(), self.trivial()  # compile, or load from the disk cache

    def time_cast(self, pair):
        self.cast()

    def time_trivial_kernel(self, pair):
        self.trivial()


class Cast(_Throughput):
    """``numbacast.cast`` of 16M elements; ``time_trivial_kernel`` is the practical limit."""

    pairs = THROUGHPUT_PAIRS
    params = [list(pairs)]

    @staticmethod
    def casts(source, target, size):
        return baselines.numbacast_cast(source, target, size), baselines.trivial_cast(source, target, size)


class PackedCast(_Throughput):
    """FLOAT to packed bytes and back, 16M elements (skipped without the packed path)."""

    pairs = PACKED_PAIRS
    params = [list(pairs)]

    @staticmethod
    def casts(source, target, size):
        try:
            packed = baselines.packed_cast(source, target, size)
        except baselines.Unavailable as reason:
            raise NotImplementedError(str(reason)) from None
        return packed, baselines.trivial_packed_cast(source, target, size)
