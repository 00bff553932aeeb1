"""The casts ``python -m numbacast bench`` times, numbacast's and the others'.

Each ``*_cast(source, target, size)`` function prepares everything a cast
needs (input array, tensors, sessions) and returns a callable of no argument
doing one cast of ``size`` elements, so that only the cast is timed.  A
baseline that cannot run a pair on this machine raises :class:`Unavailable`
with the reason.

The trivial kernels are the practical limit: parallel Numba loops that read
every input element and write one output element of the target's width (or,
packed, one byte per two float32) with no more work than a truncating copy of
the low bits.  Like every cast timed here they allocate their output.
"""

import functools
import importlib
from dataclasses import dataclass

import numpy as np
from numba import get_num_threads, njit, prange

from numbacast import FLOAT, UINT8, cast

#: The trivial kernels: compiled like numbacast's (parallel, no GIL), cached beside this file.
cached_njit = functools.partial(njit, cache=True)


class Unavailable(Exception):
    """This cast cannot be run here; the message says why."""


@functools.cache
def sample(t, size):
    """``size`` elements of type ``t`` for timing (read-only).

    Floats are standard normal, as machine-learning data mostly is; integers
    and bools are uniform over their storage; the narrow types hold the cast
    of the normal FLOAT sample.
    """
    rng = np.random.default_rng(size)
    if t.name in ("float", "double"):
        values = rng.standard_normal(size, dtype=np.float64 if t.name == "double" else np.float32)
    elif t.is_bool:
        values = rng.integers(0, 2, size, dtype=np.uint8).view(np.bool_)
    elif t.is_integer and t.bits >= 8:
        values = rng.integers(np.iinfo(t.storage).min, np.iinfo(t.storage).max, size, dtype=t.storage, endpoint=True)
    else:
        values = cast(sample(FLOAT, size), t)
    values.flags.writeable = False
    return values


def codes(array):
    """The storage of ``array`` as unsigned integers of its item size."""
    return array.view(f"u{array.dtype.itemsize}")


def numbacast_cast(source, target, size, **options):
    x = sample(source, size)
    return lambda: cast(x, target, **options)


def numbacast_cast_into(source, target, size, **options):
    """numbacast writing into one reused ``out=`` array, as a runtime reuses
    the output buffers of its memory arena (no fresh pages to fault in)."""
    x = sample(source, size)
    out = cast(x, target, **options)
    return lambda: cast(x, target, out=out, **options)


def astype_cast(source, target, size):
    """NumPy's ``astype`` (ml_dtypes' for the ml_dtypes types)."""
    x = sample(source, size)
    return lambda: x.astype(target.storage)


@cached_njit(parallel=True, nogil=True)
def copy_low_bits(src, dst):
    for i in prange(src.size):
        dst[i] = src[i]


#: Parts :func:`largest_code` cuts its input into, one a task of its parallel loop.
LARGEST_CODE_PARTS = 64


@cached_njit(parallel=True, nogil=True)
def largest_code(src):
    """The largest of the unsigned codes ``src``: a trivial pass reading them once."""
    step = (src.size + LARGEST_CODE_PARTS - 1) // LARGEST_CODE_PARTS
    largest = np.zeros(LARGEST_CODE_PARTS, src.dtype)
    for part in prange(LARGEST_CODE_PARTS):
        chunk = src[part * step : (part + 1) * step]  # a loop to its size runs in vector lanes
        value = largest[part]
        for i in range(chunk.size):
            value = max(value, chunk[i])
        largest[part] = value
    return largest.max()


@cached_njit(parallel=True, nogil=True)
def pack_pairs(src, dst):
    for i in prange(dst.size):
        dst[i] = (src[2 * i] & 15) | ((src[2 * i + 1] & 15) << 4)


@cached_njit(parallel=True, nogil=True)
def unpack_pairs(src, dst):
    for i in prange(src.size):
        dst[2 * i] = src[i] & 15
        dst[2 * i + 1] = src[i] >> 4


def trivial_cast(source, target, size):
    """The trivial kernel: as many bytes read and written as a cast, into a fresh output."""
    x = codes(sample(source, size))
    out_dtype = np.dtype(f"u{target.storage.itemsize}")

    def run():
        out = np.empty(x.size, out_dtype)
        copy_low_bits(x, out)
        return out

    return run


def trivial_cast_into(source, target, size):
    """The trivial kernel writing into one reused output."""
    x = codes(sample(source, size))
    out = np.empty(x.size, np.dtype(f"u{target.storage.itemsize}"))
    return lambda: copy_low_bits(x, out)


def trivial_packed_cast(source, target, size):
    """The trivial kernel of a packed cast: 2 float32 to one byte, or back."""
    if source is FLOAT:
        x = codes(sample(FLOAT, size))

        def run():
            out = np.empty(x.size // 2, np.uint8)
            pack_pairs(x, out)
            return out
    else:
        x = codes(sample(source, size))[: size // 2]

        def run():
            out = np.empty(2 * x.size, np.uint32)
            unpack_pairs(x, out)
            return out

    return run


def packed_cast(source, target, size):
    """numbacast's fused packed path: FLOAT to packed bytes, or packed bytes to FLOAT."""
    import numbacast

    if not hasattr(numbacast, "unpack"):
        raise Unavailable("packed path not available")
    x = sample(FLOAT, size)
    if source is FLOAT:
        return lambda: numbacast.cast(x, target, packed=True)
    data = numbacast.cast(x, source, packed=True)
    return lambda: numbacast.unpack(data, source, x.shape, to=FLOAT)


def numpy_native(t):
    """Whether NumPy itself has ``t``'s storage dtype (not ml_dtypes)."""
    return t.storage.isbuiltin == 1


def optional_module(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        raise Unavailable(f"{name} not installed") from None


@functools.cache
def torch_module():
    """torch, with as many threads as Numba uses."""
    torch = optional_module("torch")
    torch.set_num_threads(get_num_threads())
    return torch


#: gfloat's twins of the ONNX float8 types, for the stochastic rounding rows.
GFLOAT_FORMATS = {"float8e4m3fn": "format_info_ocp_e4m3", "float8e5m2": "format_info_ocp_e5m2"}


def gfloat_stochastic_cast(source, target, size):
    """gfloat's ``round_ndarray(..., RoundMode.Stochastic, srbits=, srnumbits=)``
    then ``encode_ndarray`` (NumPy arrays; the random bits drawn by NumPy)."""
    try:
        gfloat = importlib.import_module("gfloat")
        formats = importlib.import_module("gfloat.formats")
    except ImportError:
        raise Unavailable("gfloat not installed") from None
    if source is not FLOAT or target.name not in GFLOAT_FORMATS:
        raise Unavailable("a FLOAT source and a float8 target only")
    fi = getattr(formats, GFLOAT_FORMATS[target.name])
    x = sample(source, size).astype(np.float64)
    bits = np.random.default_rng(0).integers(0, 1 << 20, size)

    def run():
        rounded = gfloat.round_ndarray(fi, x, gfloat.RoundMode.Stochastic, True, bits, 20)
        return gfloat.encode_ndarray(fi, rounded)

    return run


def torch_cast(source, target, size):
    """PyTorch CPU ``tensor.to(dtype)`` from a tensor over a NumPy input."""
    torch = torch_module()
    x = sample(source, size).copy()  # writeable, as torch wants
    dtype = torch_dtype(torch, target)
    if numpy_native(source):
        tensor = torch.from_numpy(x)
    else:
        tensor = torch.from_numpy(x.view(f"i{x.dtype.itemsize}")).view(torch_dtype(torch, source))
    return lambda: tensor.to(dtype)


def torch_dtype(torch, t):
    name = {
        "float": "float32",
        "double": "float64",
        "float8e4m3fn": "float8_e4m3fn",
        "float8e4m3fnuz": "float8_e4m3fnuz",
        "float8e5m2": "float8_e5m2",
        "float8e5m2fnuz": "float8_e5m2fnuz",
        "float8e8m0": "float8_e8m0fnu",
    }.get(t.name, t.name)
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise Unavailable(f"torch has no {t.onnx_name}")
    return dtype


#: ONNX opsets tried, newest first, for a one-node Cast model.
ORT_OPSETS = (25, 24, 23, 21, 19)


def onnxruntime_cast(source, target, size):
    """onnxruntime's CPU Cast: a one-node model, input and output kept as OrtValues.

    The input is a NumPy array handed to onnxruntime as is (its raw codes with
    the ONNX type for the types NumPy lacks).  Sub-byte tensors are packed in
    onnxruntime, so it reads or writes fewer bytes than numbacast's one element
    per byte.
    """
    ort = optional_module("onnxruntime")
    x = sample(source, size)
    try:
        if numpy_native(source):
            value = ort.OrtValue.ortvalue_from_numpy(x)
        else:
            value = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(codes(x), source.id)
    except RuntimeError:
        raise Unavailable(f"onnxruntime takes no {source.onnx_name} from NumPy") from None
    options = ort.SessionOptions()
    options.intra_op_num_threads = get_num_threads()
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    for opset in ORT_OPSETS:
        try:
            session = ort.InferenceSession(
                cast_model(source, target, opset), options, providers=["CPUExecutionProvider"]
            )
            session.run_with_ort_values(["y"], {"x": value})
        except Exception:  # onnxruntime raises its own exception types
            continue
        return lambda: session.run_with_ort_values(["y"], {"x": value})
    raise Unavailable(f"onnxruntime has no Cast for it at opsets {ORT_OPSETS[-1]}-{ORT_OPSETS[0]}")


def cast_model(source, target, opset):
    """A serialized ONNX model ``y = Cast(x, to=target)`` of one dimension."""
    helper = optional_module("onnx.helper")
    node = helper.make_node("Cast", ["x"], ["y"], to=target.id)
    graph = helper.make_graph(
        [node],
        "cast",
        [helper.make_tensor_value_info("x", source.id, [None])],
        [helper.make_tensor_value_info("y", target.id, [None])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = helper.find_min_ir_version_for(model.opset_import)
    return model.SerializeToString()


@dataclass(frozen=True)
class BlockFormatName:
    """A block format as one side of a bench pair (``numbacast.mx``); NVFP4
    with ``given_tensor_scale`` is quantised with its tensor scale given
    (one pass over the data), else with the default taken from the data."""

    name: str
    given_tensor_scale: bool = False

    @property
    def onnx_name(self):
        return f"{self.name} (tensor_scale given)" if self.given_tensor_scale else self.name

    @property
    def reads_twice(self):
        """Whether quantising reads the input twice: NVFP4's default tensor
        scale needs the whole tensor's largest magnitude before any block."""
        return self.name == "nvfp4" and not self.given_tensor_scale


#: The block formats of the ``mx`` bench rows.
MX_FORMATS = tuple(map(BlockFormatName, ("mxfp8_e4m3", "mxfp4_e2m1", "nvfp4")))

#: NVFP4 quantised in one pass, its tensor scale given (``mx`` rows only).
NVFP4_GIVEN_SCALE = BlockFormatName("nvfp4", given_tensor_scale=True)

#: The pairs of the block-format rows: FLOAT quantised to each format (NVFP4
#: also with its tensor scale given), and each dequantised back.
MX_PAIRS = tuple((FLOAT, f) for f in (*MX_FORMATS, NVFP4_GIVEN_SCALE)) + tuple((f, FLOAT) for f in MX_FORMATS)

#: gfloat's per-block functions run on ``size // GFLOAT_BLOCK_SHARE`` elements, their time scaled up.
GFLOAT_BLOCK_SHARE = 512


def mx_cast(source, target, size):
    """``numbacast.mx.quantize`` of a FLOAT sample (``target`` a block format),
    or ``numbacast.mx.dequantize`` of its result to FLOAT (``source`` one)."""
    import numbacast.mx

    x = sample(FLOAT, size)
    if source is FLOAT and target.given_tensor_scale:
        tensor_scale = numbacast.mx.quantize(x, target.name).tensor_scale
        return lambda: numbacast.mx.quantize(x, target.name, tensor_scale=tensor_scale)
    if source is FLOAT:
        return lambda: numbacast.mx.quantize(x, target.name)
    q = numbacast.mx.quantize(x, source.name)
    return lambda: numbacast.mx.dequantize(q)


def mx_element_cast(source, target, size):
    """``numbacast.cast`` of the FLOAT sample of :func:`mx_cast` to the block
    format's element type (``target`` a block format), or of those elements
    back to FLOAT (``source`` one): a quantisation's work but its scales."""
    from numbacast.formats.blocks import block_format

    element = block_format((target if source is FLOAT else source).name).element
    x = sample(FLOAT, size)
    if source is FLOAT:
        return lambda: cast(x, element)
    codes = cast(x, element)
    return lambda: cast(codes, FLOAT)


def trivial_mx_cast(source, target, size):
    """The trivial kernel of the same traffic: FLOAT to one byte per element,
    or back; for a quantisation that reads its input twice, a pass taking
    the largest code first."""
    if source is not FLOAT:
        return trivial_cast(UINT8, FLOAT, size)
    copy = trivial_cast(FLOAT, UINT8, size)
    if not target.reads_twice:
        return copy
    x = codes(sample(FLOAT, size))

    def run():
        largest_code(x)
        return copy()

    return run


def gfloat_quantize_blocks(source, target, size):
    """gfloat's ``quantize_block`` with ``compute_scale_amax`` over blocks of 32
    (MX formats only), on ``size // GFLOAT_BLOCK_SHARE`` elements: returns
    ``(run, share)``, the time of ``run`` to be multiplied by ``share``."""
    gfloat = optional_module("gfloat")
    formats = optional_module("gfloat.formats")
    fi = getattr(formats, f"format_info_{target.name}", None)
    if source is not FLOAT or fi is None:
        raise Unavailable("MX formats from FLOAT only")
    blocks = sample(FLOAT, size)[: size // GFLOAT_BLOCK_SHARE].astype(np.float64).reshape(-1, 32)

    def run():
        return [gfloat.quantize_block(fi, block, gfloat.compute_scale_amax) for block in blocks]

    return run, GFLOAT_BLOCK_SHARE


#: torchao's element dtypes of the MX formats, by the names of :data:`MX_FORMATS`.
TORCHAO_ELEMENTS = {"mxfp8_e4m3": "float8_e4m3fn", "mxfp4_e2m1": "float4_e2m1fn_x2"}


def torchao_mx_cast(source, target, size):
    """torchao's eager CPU quantise of a FLOAT sample: ``to_mx`` to an MX format
    (blocks of 32); for NVFP4, ``NVFP4Tensor.to_nvfp4`` (blocks of 16, one row)
    with the per-tensor scale of the sample's largest magnitude, computed in
    the timed call as numbacast computes its default."""
    optional_module("torchao")
    torch = torch_module()
    if source is not FLOAT or target.name not in (*TORCHAO_ELEMENTS, "nvfp4"):
        raise Unavailable("FLOAT to mxfp8_e4m3, mxfp4_e2m1 and nvfp4 only")
    x = torch.from_numpy(sample(FLOAT, size).copy())
    if target.name == "nvfp4":
        nvfp4 = optional_module("torchao.prototype.mx_formats.nvfp4_tensor")
        row = x.reshape(1, -1)
        return lambda: nvfp4.NVFP4Tensor.to_nvfp4(row, 16, nvfp4.per_tensor_amax_to_scale(row.abs().max()))
    mx_tensor = optional_module("torchao.prototype.mx_formats.mx_tensor")
    dtype = getattr(torch, TORCHAO_ELEMENTS[target.name])
    return lambda: mx_tensor.to_mx(x, dtype, 32)
