"""The ONNX wire layout of the sub-byte types: pack/unpack against
onnx.numpy_helper and against a bit-stream reference written here, the fused
casts against the exact reference, and the errors."""

import exact
import ml_dtypes
import numpy as np
import pytest
from conftest import cast_in_serial_pieces
from onnx import TensorProto, helper, numpy_helper

import numbacast
from numbacast import pack, unpack
from numbacast.packing import PACKED_TYPES

PACKED = [t.name for t in PACKED_TYPES]
LENGTHS = list(range(10)) + [100_003]  # the large one is split over threads
FLOAT_VALUES = np.array(
    [
        0.0,
        -0.0,
        0.2,
        0.25,
        0.5,
        1.0,
        1.5,
        2.5,
        -2.5,
        3.5,
        5.0,
        7.49,
        7.5,
        100.0,
        -100.0,
        np.inf,
        -np.inf,
        np.nan,
        1e-30,
        -3.0,
    ],
    np.float32,
)


def reference_pack(codes, bits):
    """The ONNX bit stream of ``codes``: element i in bits i*bits.., little-endian, zero-padded."""
    stream = "".join(format(int(c) & ((1 << bits) - 1), f"0{bits}b")[::-1] for c in codes)  # lowest bit first
    stream += "0" * (-len(stream) % 8)
    return bytes(int(stream[i : i + 8][::-1], 2) for i in range(0, len(stream), 8))


def random_codes(t, count, seed=0):
    return np.random.default_rng(seed).integers(0, 1 << t.bits, count).astype(np.uint8)


def test_the_packed_types():
    assert PACKED == ["uint4", "int4", "float4e2m1", "uint2", "int2", "float6e2m3", "float6e3m2"]


@pytest.mark.parametrize("name", PACKED)
def test_pack_and_unpack_agree_with_onnx(name):
    t = numbacast.resolve(name)
    for count in LENGTHS:
        codes = random_codes(t, count, seed=count)
        array = codes.view(t.storage)
        tensor = numpy_helper.from_array(array)
        packed = pack(array)
        assert packed.dtype == np.uint8 and packed.ndim == 1
        assert packed.tobytes() == tensor.raw_data, count
        assert packed.tobytes() == reference_pack(codes, t.bits), count
        back = unpack(packed, name, count)
        assert back.dtype == t.storage and back.shape == (count,)
        assert back.view(np.uint8).tolist() == numpy_helper.to_array(tensor).view(np.uint8).tolist(), count
        assert back.view(np.uint8).tolist() == codes.tolist(), count


@pytest.mark.parametrize("name", ["int4", "uint2", "float6e3m2"])
def test_shapes_and_layouts(name):
    t = numbacast.resolve(name)
    codes = random_codes(t, 4 * 5 * 3).reshape(4, 5, 3)
    array = codes.view(t.storage)
    assert pack(array).tobytes() == reference_pack(codes.reshape(-1), t.bits)
    assert pack(array[:, ::2]).tobytes() == reference_pack(codes[:, ::2].reshape(-1), t.bits)
    assert pack(np.asfortranarray(array)).tobytes() == reference_pack(codes.reshape(-1), t.bits)
    back = unpack(bytearray(pack(array).tobytes()), t.id, (4, 5, 3))
    assert back.shape == (4, 5, 3) and np.array_equal(back.view(np.uint8), codes)
    assert unpack(memoryview(pack(array[0, 0])), name, [3]).view(np.uint8).tolist() == codes[0, 0].tolist()
    scalar = unpack(pack(array[0, 0, :1]), name, ())
    assert scalar.shape == () and int(scalar.view(np.uint8)) == codes[0, 0, 0]


def test_high_bits_of_a_byte_are_ignored():
    raw = np.array([0xF3, 0x2E, 0xA5], np.uint8)
    assert pack(raw.view(ml_dtypes.int4)).tolist() == [0xE3, 0x05]
    assert pack(raw.view(ml_dtypes.uint2)).tolist() == [0b011011]
    assert pack(raw.view(ml_dtypes.float6_e2m3fn)).tobytes() == reference_pack([0x33, 0x2E, 0x25], 6)


def test_input_not_modified():
    array = np.arange(7, dtype=np.uint8).view(ml_dtypes.uint4)
    before = array.copy()
    pack(array)
    data = pack(array)
    data_before = data.copy()
    unpack(data, "uint4", 7)
    assert np.array_equal(array.view(np.uint8), before.view(np.uint8)) and np.array_equal(data, data_before)


@pytest.mark.parametrize(
    "name, shape, size",
    [
        ("int4", 5, 4),
        ("int4", 5, 2),
        ("uint2", (3, 3), 2),
        ("float6e2m3", 5, 3),
        ("float6e2m3", 4, 4),
        ("float4e2m1", 0, 1),
    ],
)
def test_wrong_data_length(name, shape, size):
    with pytest.raises(ValueError, match=f"packed {name.upper()} data of shape .* takes \\d+ bytes .*, not {size}"):
        unpack(np.zeros(size, np.uint8), name, shape)


@pytest.mark.parametrize("data", [[1, 2], np.zeros(2, np.int8), np.zeros(1, np.uint16), "ab"])
def test_data_must_be_bytes(data):
    with pytest.raises(TypeError, match="packed data must be bytes or a uint8 array"):
        unpack(data, "int4", 3)


@pytest.mark.parametrize("shape", [-1, (2, -1), 2.0, "3", None])
def test_bad_shape(shape):
    with pytest.raises(ValueError, match="shape must be a non-negative integer or a tuple of them"):
        unpack(b"\x00", "int4", shape)


def test_only_sub_byte_types():
    with pytest.raises(TypeError, match="pack takes an array of a sub-byte type .* not of dtype float32"):
        pack(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="type must be one of the packed sub-byte types .* not FLOAT8E4M3FN"):
        unpack(b"\x00", "float8e4m3fn", 1)
    with pytest.raises(ValueError, match="unknown type name 'int3'"):
        unpack(b"\x00", "int3", 1)


# -- Casts fused with the layout -------------------------------------------------


def expected_codes(source, values, target, **options):
    """Exact reference codes of the cast of float32 ``values``."""
    codes = np.asarray(values).view(f"u{np.asarray(values).dtype.itemsize}").tolist()
    return [exact.cast_code(source, code, target, **options) for code in codes]


@pytest.mark.parametrize("name", PACKED)
def test_cast_packed_from_float(name):
    t = numbacast.resolve(name)
    for count in (0, 1, 5, len(FLOAT_VALUES)):
        values = FLOAT_VALUES[:count]
        packed = numbacast.cast(values, name, packed=True)
        assert packed.tobytes() == reference_pack(expected_codes("float", values, name), t.bits)


@pytest.mark.parametrize("name", PACKED)
def test_unpack_to_float(name):
    t = numbacast.resolve(name)
    codes = np.arange(1 << t.bits, dtype=np.uint8)
    out = unpack(reference_pack(codes, t.bits), name, codes.size, to="float32")
    assert out.dtype == np.float32
    assert out.view(np.uint32).tolist() == [exact.cast_code(name, int(c), "float") for c in codes]


def test_fused_casts_large_and_from_float16():
    rng = np.random.default_rng(5)
    values = (rng.standard_normal(200_001) * 4).astype(np.float32)
    packed = numbacast.cast(values, "int4", packed=True)
    assert np.array_equal(packed, pack(numbacast.cast(values, "int4")))
    half = values.astype(np.float16)
    packed_half = numbacast.cast(half, "float4e2m1", packed=True)  # through the table of float16 codes
    assert np.array_equal(packed_half, pack(numbacast.cast(half, "float4e2m1")))
    some = rng.integers(0, half.size, 300)
    codes = unpack(packed_half, "float4e2m1", half.size).view(np.uint8)[some].tolist()
    assert codes == expected_codes("float16", half[some], "float4e2m1")
    back = unpack(packed, "int4", values.size, to="double")
    assert np.array_equal(back, numbacast.cast(numbacast.cast(values, "int4"), "double"))
    int4_codes = unpack(packed, "int4", values.size).view(np.uint8)[some].tolist()
    assert back.view(np.uint64)[some].tolist() == [exact.cast_code("int4", c, "double") for c in int4_codes]


@pytest.mark.parametrize(
    "name, source", [("uint4", "f4"), ("int4", "f8"), ("float4e2m1", "f4"), ("uint2", "f8"), ("int2", "f4")]
)
def test_fused_packing_across_runs_and_tasks(name, source):
    """The 4- and 2-bit packing encodes PACK_RUN groups at a time in tasks of
    PACK_GROUPS: a length over two tasks and a partial run and group, from
    float32 or float64 (the packing loop is the same for both; each source is
    a kernel to compile), against the bit stream of the unfused cast's codes."""
    from numbacast.packing import PACK_GROUPS, PACK_RUN

    t = numbacast.resolve(name)
    items = 8 // t.bits
    count = (2 * PACK_GROUPS + 3 * PACK_RUN) * items + items - 1
    values = (np.random.default_rng(t.bits).standard_normal(count) * 3).astype(np.float32)
    values[::97] = FLOAT_VALUES[np.arange(values[::97].size) % FLOAT_VALUES.size]
    values = values.astype(source)  # float32 values: the same codes from either source
    expected = reference_pack(cast_in_serial_pieces(values, name).view(np.uint8), t.bits)
    assert numbacast.cast(values, name, packed=True).tobytes() == expected
    assert numbacast.cast(values[:1000], name, packed=True).tobytes() == expected[: 1000 * t.bits // 8]


def test_fused_options_and_byte_order():
    values = np.array([1e9, -1e9, 3.0, 0.3], ">f4")
    assert numbacast.cast(values, "float4e2m1", packed=True).tobytes() == reference_pack(
        expected_codes("float", values.astype("<f4"), "float4e2m1"), 4
    )
    e8m0 = unpack(reference_pack([3, 2, 1], 2), "uint2", 3, to="float8e8m0", round_mode="down")
    assert e8m0.view(np.uint8).tolist() == [
        exact.cast_code("uint2", c, "float8e8m0", round_mode="down") for c in (3, 2, 1)
    ]
    nan = unpack(reference_pack([7, 1], 6), "float6e2m3", 2, to="float8e4m3fnuz", saturate=False)
    assert nan.view(np.uint8).tolist() == [
        exact.cast_code("float6e2m3", c, "float8e4m3fnuz", saturate=False) for c in (7, 1)
    ]


def test_packed_errors():
    with pytest.raises(ValueError, match="with packed=True, the target type must be one of the packed sub-byte"):
        numbacast.cast(np.zeros(2), "float8e4m3fn", packed=True)
    with pytest.raises(TypeError, match="packed must be True or False, not 'yes'"):
        numbacast.cast(np.zeros(2), "int4", packed="yes")
    with pytest.raises(ValueError, match="out= cannot be combined with packed=True"):
        numbacast.cast(np.zeros(2), "int4", packed=True, out=np.zeros(1, np.uint8))
    with pytest.raises(ValueError, match="round_mode must be one of"):
        unpack(b"\x00", "int4", 1, to="float8e8m0", round_mode="sideways")


def test_onnx_typed_fields_agree():
    # ONNX's own 4-bit int32_data holds one packed byte an entry.
    tensor = helper.make_tensor("t", TensorProto.INT4, [5], [1, -2, 3, -8, 7])
    entries = np.asarray(tensor.int32_data, np.int64).astype(np.uint8)
    assert unpack(entries, "int4", 5).astype(np.int8).tolist() == [1, -2, 3, -8, 7]
