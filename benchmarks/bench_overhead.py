"""Call overhead: warm casts of 1 and 1,000 elements, and of the block formats."""

from numbacast import FLOAT

from . import OVERHEAD
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

    formats = {f.onnx_name: f for f in (*baselines.MX_FORMATS, baselines.NVFP4_GIVEN_SCALE)}
    params = [list(formats), ["quantize", "dequantize"]]
    param_names = ["format", "direction"]

    def setup(self, name, direction):
        fmt = self.formats[name]
        if fmt.given_tensor_scale and direction == "dequantize":
            raise NotImplementedError("the dequantisation of nvfp4 is the same with a tensor scale given")
        source, target = (FLOAT, fmt) if direction == "quantize" else (fmt, FLOAT)
        self.call = baselines.mx_cast(source, target, MX_OVERHEAD_ELEMENTS)
        self.call()

    def time_call(self, name, direction):
        self.call()
