"""Throughput: one cast of 16M elements, and the trivial kernel moving the same bytes."""

from . import BLOCK_DIRECTIONS, BLOCK_FORMATS, PACKED_PAIRS, ROUNDING_PAIRS, THROUGHPUT_PAIRS, block_format_pair
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


class _AgainstGfloat:
    """Times ``self.cast``, ``self.trivial`` and ``self.gfloat`` (None where
    gfloat cannot run the row: ``gfloat_missing`` says why), made by ``setup``."""

    gfloat_missing = ""

    def time_cast(self, *params):
        self.cast()

    def time_trivial_kernel(self, *params):
        self.trivial()

    def time_gfloat(self, *params):
        if self.gfloat is None:
            raise NotImplementedError(self.gfloat_missing)
        self.gfloat()


class Rounding(_AgainstGfloat):
    """``numbacast.cast(..., rounding=mode)`` of 16M elements for each mode
    (``stochastic_8_bits``: stochastic with ``stochastic_bits=8``, whose
    blocks once took the full encoder element by element);
    ``time_trivial_kernel`` is the practical limit, ``time_gfloat`` (stochastic
    rounding into FLOAT8E4M3FN only, where gfloat is installed) gfloat's
    ``round_ndarray`` + ``encode_ndarray``."""

    pairs = ROUNDING_PAIRS
    modes = {
        "toward_zero": dict(rounding="toward_zero"),
        "nearest_away": dict(rounding="nearest_away"),
        "stochastic": dict(rounding="stochastic", seed=0),
        "stochastic_8_bits": dict(rounding="stochastic", seed=0, stochastic_bits=8),
    }
    gfloat_missing = "gfloat: stochastic rounding (all random bits) into a float8 type, with gfloat installed"
    param_names = ["pair", "mode"]
    params = [list(pairs), list(modes)]
    timeout = 600

    def setup(self, pair, mode):
        source, target = self.pairs[pair]
        self.cast = baselines.numbacast_cast(source, target, DEFAULT_SIZE, **self.modes[mode])
        self.trivial = baselines.trivial_cast(source, target, DEFAULT_SIZE)
        self.cast(), self.trivial()  # compile, or load from the disk cache
        self.gfloat = None
        if mode == "stochastic":
            try:
                self.gfloat = baselines.gfloat_stochastic_cast(source, target, DEFAULT_SIZE)
            except baselines.Unavailable:
                pass


class BlockFormats(_AgainstGfloat):
    """``numbacast.mx.quantize`` of 16M float32 elements to each block format
    and ``dequantize`` back; ``time_trivial_kernel`` reads float32 and writes
    one byte per element (or back; reading float32 twice for NVFP4's
    default tensor scale), ``time_gfloat`` (MX formats, where gfloat is
    installed) runs gfloat's ``quantize_block`` on 1/512 of the data (its
    time is that share of gfloat's).  NVFP4 with its tensor scale given is
    a quantisation only."""

    gfloat_missing = "gfloat: quantising to an MX format, with gfloat installed"
    param_names = ["format", "direction"]
    params = [list(BLOCK_FORMATS), list(BLOCK_DIRECTIONS)]
    timeout = 600

    def setup(self, name, direction):
        source, target = block_format_pair(name, direction)
        self.cast = baselines.mx_cast(source, target, DEFAULT_SIZE)
        self.trivial = baselines.trivial_mx_cast(source, target, DEFAULT_SIZE)
        self.cast(), self.trivial()  # compile, or load from the disk cache
        self.gfloat = None
        if direction == "quantize":
            try:
                self.gfloat, _ = baselines.gfloat_quantize_blocks(source, target, DEFAULT_SIZE)
            except baselines.Unavailable:
                pass
