"""Call overhead: warm casts of 1 and 1,000 elements."""

from . import OVERHEAD
from .harness import baselines


class CallOverhead:
    params = [list(OVERHEAD), [1, 1000]]
    param_names = ["pair", "size"]

    def setup(self, pair, size):
        self.cast = baselines.numbacast_cast(*OVERHEAD[pair], size)
        self.cast()

    def time_cast(self, pair, size):
        self.cast()
