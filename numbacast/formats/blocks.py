"""Block-scaled formats as data: OCP Microscaling (MX) and NVIDIA's NVFP4.

A block format stores a tensor as *elements* of a narrow type and, for each
block of ``block_size`` consecutive elements along one axis, a *scale*: the
value of an element is its decoded value times its block's scale (times a
per-tensor float32 scale for NVFP4).  The rules are in docs/rules.md
(``rule-mx-*``) and docs/mx.md.

Each :class:`BlockFormat` says everything the engine needs: the element type
(whose codec rounds the scaled values), the scale type, the default block
size, the exponent of the element's largest power of two (``emax``, the
reference of the OCP scale rule), its largest value and its mantissa bits.

MXINT8's elements are int8 codes worth ``code * 2**-6``.  Their rounding is
that of :data:`MXINT8_GRID`, a float format whose values below 2 are the
multiples of ``2**-6`` (an exponent of two bits, six mantissa bits, bias 1:
its subnormals are ``m / 64``, its first binade ``1 + m / 64``), so MXINT8
reuses the generated codecs and every rounding mode; the engine then clamps
the magnitude to the int8 range.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from . import description as f
from .custom import FloatType
from .registry import FLOAT4E2M1, FLOAT6E2M3, FLOAT6E3M2, FLOAT8E4M3FN, FLOAT8E5M2, FLOAT8E8M0, INT8, AnyType

#: The rounding grid of MXINT8 elements (see the module's text).
MXINT8_GRID = FloatType("mxint8_grid", f.FloatFormat(2, 6, 1, False, f.NAN_NONE))

#: How MXINT8 element codes are worth: ``code * 2**MXINT8_EXPONENT``.
MXINT8_EXPONENT = -6


@dataclass(frozen=True, eq=False)
class BlockFormat:
    """One block-scaled format (one instance per format, compared and
    hashed by identity, as a key of the engine's caches).

    ``element`` is the type elements are stored in (an ml_dtypes type, or
    INT8 for MXINT8) and ``grid`` the type whose codec rounds them (the
    element type itself but for MXINT8); ``scale`` is FLOAT8E8M0 (MX) or
    FLOAT8E4M3FN (NVFP4, with a float32 per-tensor scale when
    ``tensor_scale`` is True).  ``emax`` is the exponent of the largest power
    of two of the element type, ``largest`` its largest value and
    ``mantissa_bits`` its precision less one."""

    name: str
    element: AnyType
    grid: AnyType
    scale: AnyType
    block_size: int
    emax: int
    largest: Fraction
    mantissa_bits: int
    tensor_scale: bool = False

    @property
    def integer_elements(self) -> bool:
        """Whether the elements are int8 codes (MXINT8)."""
        return self.element is INT8

    @property
    def element_bits(self) -> int:
        return self.element.bits

    def __reduce__(self):
        # Unpickled as the one instance of its process.
        return block_format, (self.name,)


def _mx_float(name, element, block_size=32, scale=FLOAT8E8M0, tensor_scale=False):
    fmt = element.format
    largest = fmt.largest
    emax = largest.numerator.bit_length() - largest.denominator.bit_length()
    return BlockFormat(name, element, element, scale, block_size, emax, largest, fmt.mantissa_bits, tensor_scale)


MXFP8_E4M3 = _mx_float("mxfp8_e4m3", FLOAT8E4M3FN)
MXFP8_E5M2 = _mx_float("mxfp8_e5m2", FLOAT8E5M2)
MXFP6_E2M3 = _mx_float("mxfp6_e2m3", FLOAT6E2M3)
MXFP6_E3M2 = _mx_float("mxfp6_e3m2", FLOAT6E3M2)
MXFP4_E2M1 = _mx_float("mxfp4_e2m1", FLOAT4E2M1)
MXINT8 = BlockFormat("mxint8", INT8, MXINT8_GRID, FLOAT8E8M0, 32, 0, Fraction(127, 64), 6)
NVFP4 = _mx_float("nvfp4", FLOAT4E2M1, block_size=16, scale=FLOAT8E4M3FN, tensor_scale=True)

#: Every block format by name.
BLOCK_FORMATS = {fmt.name: fmt for fmt in (MXFP8_E4M3, MXFP8_E5M2, MXFP6_E2M3, MXFP6_E3M2, MXFP4_E2M1, MXINT8, NVFP4)}


def block_count(n, block_size):
    """The blocks of a line of ``n`` elements, ``ceil(n / block_size)``, the
    last maybe shorter (one for a block longer than the line): by a floor
    division of ``-n``, as ``n + block_size - 1`` overflows int64 for a block
    size near 2**63 in compiled code (the engine compiles this function too)."""
    return -(-n // block_size)


def scales_shape(shape, axis, block_size):
    """The shape of the scales of a tensor of ``shape`` cut along ``axis``
    into blocks of ``block_size``: ``shape`` with ``axis`` cut to its
    :func:`block_count`."""
    return tuple(block_count(d, block_size) if i == axis else d for i, d in enumerate(shape))


def block_format(fmt: str | BlockFormat) -> BlockFormat:
    """The :class:`BlockFormat` named ``fmt`` (any case); ValueError naming
    the accepted names for anything else."""
    if isinstance(fmt, BlockFormat):
        return fmt
    if isinstance(fmt, str) and fmt.strip().lower() in BLOCK_FORMATS:
        return BLOCK_FORMATS[fmt.strip().lower()]
    raise ValueError(f"unknown block format {fmt!r}; accepted: {', '.join(BLOCK_FORMATS)}")
