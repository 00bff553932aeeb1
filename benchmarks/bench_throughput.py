"""Throughput: one cast of 16M elements, and the trivial kernel moving the same bytes."""

from numbacast import baselines
from numbacast.bench import DEFAULT_SIZE

from . import PACKED_PAIRS, THROUGHPUT_PAIRS


class Cast:
    """``numbacast.cast`` of 16M elements; ``time_trivial_kernel`` is the practical limit."""

    params = [list(THROUGHPUT_PAIRS)]
    param_names = ["pair"]
    timeout = 300

    def setup(self, pair):
        source, target = THROUGHPUT_PAIRS[pair]
        self.cast = baselines.numbacast_cast(source, target, DEFAULT_SIZE)
        self.trivial = baselines.trivial_cast(source, target, DEFAULT_SIZE)
        self.cast(), self.trivial()  # compile, or load from the disk cache

    def time_cast(self, pair):
        self.cast()

    def time_trivial_kernel(self, pair):
        self.trivial()


class PackedCast:
    """FLOAT to packed bytes and back, 16M elements (skipped without the packed path)."""

    params = [list(PACKED_PAIRS)]
    param_names = ["pair"]
    timeout = 300

    def setup(self, pair):
        source, target = PACKED_PAIRS[pair]
        try:
            self.cast = baselines.packed_cast(source, target, DEFAULT_SIZE)
        except baselines.Unavailable as reason:
            raise NotImplementedError(str(reason)) from None
        self.trivial = baselines.trivial_packed_cast(source, target, DEFAULT_SIZE)
        self.cast(), self.trivial()

    def time_cast(self, pair):
        self.cast()

    def time_trivial_kernel(self, pair):
        self.trivial()
