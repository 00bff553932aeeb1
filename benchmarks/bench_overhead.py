"""Call overhead: warm casts of 1 and 1,000 elements, and of the block formats."""

from . import BLOCK_DIRECTIONS, BLOCK_FORMATS, OVERHEAD, block_format_pair
from .harness import baselines
from .harness.bench import MX_OVERHEAD_ELEMENTS


class CallOverhead:
    params = [list(OVERHEAD), [1, 1000]]
    param_names = ["pair", "size"]

    def setup(self, pair, size):
        self.cast = baselines.numbacast_cast(*OVERHEAD[pair], size)
        self.cast()

    def time_cast(self, pair, size):
        self.cast()


class BlockFormatOverhead:
    """Warm ``numbacast.mx.quantize`` of one MX block (two NVFP4 blocks) to
    each block format, and ``dequantize`` back."""

    params = [list(BLOCK_FORMATS), list(BLOCK_DIRECTIONS)]
    param_names = ["format", "direction"]

    def setup(self, name, direction):
        self.call = baselines.mx_cast(*block_format_pair(name, direction), MX_OVERHEAD_ELEMENTS)
        self.call()

    def time_call(self, name, direction):
        self.call()
