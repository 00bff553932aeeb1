"""The operator versions of the ONNX layer: the tables against ONNX's own
schemas, then for every version of Cast and CastLike one test per type it
accepts (a cast into and out of that type, checked against the exact
reference) and one per type it refuses, then the attributes and the rules
that differ between versions."""

import functools

import exact
import numpy as np
import onnx
import pytest
from conftest import check_against_reference, storage_codes

import numbacast
import numbacast.onnx as nx
from numbacast.onnx import versions

ONNX_NAMES = versions.type_names()


def version_cases(op):
    """(version, type name, accepted) for every version of ``op`` and every type."""
    return [
        pytest.param(v, name, versions.INTRODUCED[name] <= v, id=f"{op}-{v}-{name}")
        for v in versions.VERSIONS[op]
        for name in ONNX_NAMES
    ]


# -- The tables are ONNX's ----------------------------------------------------

#: Versions numbacast has and ONNX 1.23 does not, and the schema they follow.
BEYOND_ONNX = {("CastLike", 28): ("Cast", 28)}


def onnx_schema(op, version):
    """ONNX's schema of ``op``-``version``, or of the operator it follows (:data:`BEYOND_ONNX`)."""
    return onnx.defs.get_schema(*BEYOND_ONNX.get((op, version), (op, version)))


@pytest.mark.parametrize("op", ["Cast", "CastLike"])
def test_every_opset_has_the_version_onnx_has(op):
    for opset in range(versions.VERSIONS[op][0], versions.LATEST_OPSET + 1):
        version = versions.in_force(op, opset).version
        assert onnx_schema(op, version).since_version == (
            opset if (op, opset) in BEYOND_ONNX else onnx.defs.get_schema(op, opset).since_version
        ), opset


@pytest.mark.parametrize(
    "op, version", [(op, v) for op, vs in versions.VERSIONS.items() if op in ("Cast", "CastLike") for v in vs]
)
def test_types_and_attributes_are_those_of_the_onnx_schema(op, version):
    schema = onnx_schema(op, version)
    spec = versions.in_force(op, version)
    expected = {f"tensor({name.lower()})" for name in spec.types}
    for constraint in schema.type_constraints:
        assert set(constraint.allowed_type_strs) == expected
    attributes = schema.attributes
    assert ("saturate" in attributes) == (version >= versions.SATURATE_SINCE)
    assert ("round_mode" in attributes) == (version >= versions.ROUND_MODE_SINCE)
    if op == "Cast":
        string_to = attributes["to"].type == onnx.defs.OpSchema.AttrType.STRING
        assert string_to == (version < versions.TO_AS_ID_SINCE)


@pytest.mark.parametrize("op", ["QuantizeLinear", "DequantizeLinear"])
def test_quantization_versions_are_those_onnx_has(op):
    for opset in range(versions.VERSIONS[op][0], versions.LATEST_OPSET + 1):
        assert versions.in_force(op, opset).version == onnx.defs.get_schema(op, opset).since_version, opset


@pytest.mark.parametrize("op", ["QuantizeLinear", "DequantizeLinear"])
def test_quantization_types_are_those_of_the_onnx_schema(op):
    from numbacast.onnx.quantization import DEQUANTIZE_TYPES, QUANTIZE_TYPES

    table = QUANTIZE_TYPES if op == "QuantizeLinear" else DEQUANTIZE_TYPES
    for version in versions.VERSIONS[op]:
        schema = onnx.defs.get_schema(op, version)
        allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
        inputs, scales, outputs = ({f"tensor({name.lower()})" for name in names} for names in table[version])
        x, scale, y = (
            allowed.get(p.type_str, {p.type_str}) for p in (schema.inputs[0], schema.inputs[1], schema.outputs[0])
        )
        assert inputs <= x and scales <= scale and outputs <= y, version


def test_type_ids_are_onnx_ids():
    for name, type_id in versions.TYPE_IDS.items():
        assert getattr(onnx.TensorProto, name) == type_id


@pytest.mark.parametrize("op, opset", [("Cast", 0), ("Cast", 29), ("CastLike", 14), ("CastLike", -1)])
def test_opset_out_of_range(op, opset):
    with pytest.raises(ValueError, match=f"{op} is defined from opset .* not at opset {opset}"):
        versions.in_force(op, opset)


@pytest.mark.parametrize("opset", ["28", 28.0, None, True])
def test_opset_must_be_an_integer(opset):
    with pytest.raises(TypeError, match="opset must be an integer"):
        nx.cast(np.zeros(2, np.float32), 1, opset=opset)


# -- One test per version and type ----------------------------------------------

FLOAT_SAMPLE = np.concatenate(
    [
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 0.5, 1.5, 2.5, 464.0, 465.0, 1e30, -1e-30], np.float32),
        np.linspace(-600, 600, 4801, dtype=np.float32),
        np.float32(2.0) ** np.arange(-150, 128, dtype=np.float32),
        np.random.default_rng(1).integers(0, 2**32, 2000, dtype=np.uint64).astype(np.uint32).view(np.float32),
    ]
)


def sample(name):
    """(codes, array): storage codes of type ``name`` and the array holding them --
    every code of the types of at most 8 bits, a spread of the wider ones."""
    t = numbacast.resolve(name)
    if name == "FLOAT":
        return storage_codes(FLOAT_SAMPLE), FLOAT_SAMPLE
    if t.is_bool:
        codes = np.array([0, 1], np.uint8)
    elif t.storage.itemsize == 1:
        codes = np.arange(1 << t.bits, dtype=np.uint8)
    elif t.storage.itemsize == 2:
        codes = np.arange(0, 1 << 16, 97, dtype=np.uint16)
    else:
        unsigned = np.dtype(f"u{t.storage.itemsize}")
        top = np.iinfo(unsigned).max
        chosen = np.array([0, 1, 2, 255, top, top - 1, top // 2, top // 2 + 1], unsigned)
        spread = np.random.default_rng(2).integers(0, top, 500, dtype=unsigned, endpoint=True)
        codes = np.concatenate([chosen, spread])
    return codes, codes.view(t.storage)


def to_attribute(name, version):
    """The ``to`` attribute naming type ``name`` in Cast-``version``."""
    return name if version < versions.TO_AS_ID_SINCE else versions.TYPE_IDS[name]


def cast_by(op, version, x, target):
    """``x`` cast to the type called ``target`` by ``op`` at opset ``version``."""
    if op == "Cast":
        return nx.cast(x, to_attribute(target, version), opset=version)
    like = np.array(["x"]) if target == "STRING" else np.zeros(1, numbacast.resolve(target).storage)
    return nx.castlike(x, like, opset=version)


@functools.cache
def reference_codes(source, target, fnuz_inf_to_nan=False):
    """{code: expected code} over the sample of ``source`` cast to ``target``."""
    codes = sample(source)[0]
    return {
        code: exact.cast_code(source.lower(), code, target.lower(), fnuz_inf_to_nan=fnuz_inf_to_nan)
        for code in codes.tolist()
    }


def check_accepted(op, version, name):
    if name == "STRING":
        assert cast_by(op, version, np.array(["1.5", "-2"]), "FLOAT").tolist() == [1.5, -2.0]
        assert cast_by(op, version, np.array([1.5, -2.0], np.float32), "STRING").tolist() == ["1.5", "-2.0"]
        return
    codes, x = sample(name)
    check_against_reference(
        name.lower(),
        codes,
        "float",
        {},
        cast_by(op, version, x, "FLOAT"),
        reference=reference_codes(name, "FLOAT").__getitem__,
    )
    out = cast_by(op, version, FLOAT_SAMPLE, name)
    assert out.dtype == numbacast.resolve(name).storage
    fnuz_inf_to_nan = versions.SATURATE_SINCE <= version < versions.ROUND_MODE_SINCE and name in versions.FNUZ
    check_against_reference(
        "float",
        sample("FLOAT")[0],
        name.lower(),
        {},
        out,
        reference=reference_codes("FLOAT", name, fnuz_inf_to_nan).__getitem__,
    )


def check_refused(op, version, name):
    source = np.array(["1"]) if name == "STRING" else np.zeros(2, numbacast.resolve(name).storage)
    introduced = versions.INTRODUCED[name]
    later = [v for v in versions.VERSIONS[op] if v >= introduced]
    reason = f"{name} came with {op}-{later[0]} " if later else f"no {op} version takes {name} \\(Cast-{introduced}"
    with pytest.raises(ValueError, match=f"{op}-{version} .* does not take {name} as its input type; {reason}"):
        cast_by(op, version, source, "FLOAT")
    with pytest.raises(ValueError, match=f"{op}-{version} .* does not take {name} as its output type; {reason}"):
        cast_by(op, version, np.zeros(2, np.float32), name)


@pytest.mark.parametrize("version, name, accepted", version_cases("Cast"))
def test_cast_version_type(version, name, accepted):
    (check_accepted if accepted else check_refused)("Cast", version, name)


@pytest.mark.parametrize("version, name, accepted", version_cases("CastLike"))
def test_castlike_version_type(version, name, accepted):
    (check_accepted if accepted else check_refused)("CastLike", version, name)


# -- The to attribute -------------------------------------------------------------


@pytest.mark.parametrize("opset", [1, 5])
def test_cast1_takes_to_as_a_name(opset):
    out = nx.cast(np.array([1.5, 300.0]), "int16", opset=opset)
    assert out.dtype == np.int16 and out.tolist() == [1, 300]
    with pytest.raises(TypeError, match="Cast-1 takes 'to' as a type name such as 'FLOAT', not 5"):
        nx.cast(np.zeros(2), 5, opset=opset)
    with pytest.raises(ValueError, match="unknown type name 'float32' for Cast-1"):
        nx.cast(np.zeros(2), "float32", opset=opset)


@pytest.mark.parametrize("opset", [6, 28])
def test_later_casts_take_to_as_an_id(opset):
    assert nx.cast(np.array([1.5]), np.int64(onnx.TensorProto.INT32), opset=opset).dtype == np.int32
    with pytest.raises(TypeError, match=r"Cast-\d+ takes 'to' as a TensorProto.DataType id"):
        nx.cast(np.zeros(2), "FLOAT", opset=opset)


@pytest.mark.parametrize(
    "to, message",
    [
        (14, "COMPLEX64 \\(id 14\\) is refused"),
        (0, "unknown TensorProto.DataType id 0"),
        (29, "unknown TensorProto.DataType id 29"),
    ],
)
def test_to_refused_ids(to, message):
    with pytest.raises(ValueError, match=message):
        nx.cast(np.zeros(2), to)


def test_complex_input_refused():
    with pytest.raises(ValueError, match="(?i)complex"):
        nx.cast(np.zeros(2, np.complex64), 1)


# -- saturate and round_mode ----------------------------------------------------------


@pytest.mark.parametrize("op, opset", [("Cast", 13), ("Cast", 18), ("CastLike", 15)])
def test_saturate_does_not_exist_before_19(op, opset):
    with pytest.raises(ValueError, match=f"{op}-1[35] .* has no saturate attribute; it came with {op}-19"):
        (nx.cast if op == "Cast" else nx.castlike)(
            np.zeros(2, np.float32), np.zeros(1, np.float16) if op == "CastLike" else 10, opset=opset, saturate=1
        )


@pytest.mark.parametrize("op, opset", [("Cast", 19), ("Cast", 23), ("CastLike", 21)])
def test_round_mode_does_not_exist_before_24(op, opset):
    with pytest.raises(ValueError, match=f"{op}-(19|21|23) .* has no round_mode attribute; it came with {op}-24"):
        if op == "Cast":
            nx.cast(np.zeros(2, np.float32), 1, opset=opset, round_mode="up")
        else:
            nx.castlike(np.zeros(2, np.float32), np.zeros(1, np.float32), opset=opset, round_mode="up")


@pytest.mark.parametrize("saturate, round_mode", [(0, "up"), (1, "down"), (1, "nearest"), (True, "up")])
@pytest.mark.parametrize("opset", [24, 28])
def test_e8m0_attributes(opset, saturate, round_mode):
    options = dict(saturate=bool(saturate), round_mode=round_mode)
    out = nx.cast(FLOAT_SAMPLE, 24, opset=opset, **options)
    check_against_reference("float", storage_codes(FLOAT_SAMPLE), "float8e8m0", options, out)
    like = nx.castlike(FLOAT_SAMPLE, np.zeros(0, out.dtype), opset=opset, **options)
    assert storage_codes(like).tolist() == storage_codes(out).tolist()


@pytest.mark.parametrize("saturate, error", [(2, ValueError), ("yes", TypeError), (None, None)])
def test_saturate_values(saturate, error):
    if error is None:
        assert nx.cast(np.array([1e6], np.float32), 17, saturate=saturate).view(np.uint8).tolist() == [0x7E]
    else:
        with pytest.raises((TypeError, ValueError), match="saturate must be"):
            nx.cast(np.array([1e6], np.float32), 17, saturate=saturate)


def test_round_mode_values():
    with pytest.raises(ValueError, match="round_mode must be one of 'up', 'down', 'nearest', not 'UP'"):
        nx.cast(np.zeros(2, np.float32), 24, round_mode="UP")


# -- Infinities into the FNUZ types ---------------------------------------------------


@pytest.mark.parametrize("target", ["FLOAT8E4M3FNUZ", "FLOAT8E5M2FNUZ"])
@pytest.mark.parametrize("opset", [19, 20, 21, 22, 23, 24, 25, 28])
@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("op", ["Cast", "CastLike"])
def test_infinity_into_fnuz_by_version(op, opset, saturate, target):
    x = np.array([np.inf, -np.inf, 1e9, -1e9, 1.0, np.nan], np.float32)
    if op == "Cast":
        out = nx.cast(x, versions.TYPE_IDS[target], opset=opset, saturate=saturate)
    else:
        out = nx.castlike(x, np.zeros(0, numbacast.resolve(target).storage), opset=opset, saturate=saturate)
    options = dict(saturate=bool(saturate), fnuz_inf_to_nan=opset < 24)
    check_against_reference("float", storage_codes(x), target.lower(), options, out)
    infinity = storage_codes(out)[:2].tolist()
    assert infinity == ([0x80, 0x80] if opset < 24 or not saturate else [0x7F, 0xFF])


def test_infinity_into_fnuz_from_double_and_float16():
    for x in (np.array([np.inf, -np.inf, 2.0]), np.array([np.inf, -np.inf, 2.0], np.float16)):
        assert storage_codes(nx.cast(x, 18, opset=21)).tolist()[:2] == [0x80, 0x80]
        assert storage_codes(nx.cast(x, 18, opset=24)).tolist()[:2] == [0x7F, 0xFF]


def test_infinity_literals():
    words = np.array(["inf", " -Infinity ", "+INF", "1e999", "nan", "infinite", "-inf"], dtype=object)
    assert nx.operators.infinity_literals(words).tolist() == [True, True, True, False, False, False, True]


def test_string_infinity_into_fnuz_by_version():
    x = np.array(["inf", "-INF", "1e9", "1"])
    assert storage_codes(nx.cast(x, 18, opset=19)).tolist() == [0x80, 0x80, 0x7F, 0x40]
    assert storage_codes(nx.cast(x, 18, opset=24)).tolist() == [0x7F, 0xFF, 0x7F, 0x40]


def test_input_not_modified_and_any_layout():
    x = np.arange(24, dtype=">f8").reshape(4, 6)[:, ::2]
    before = x.copy()
    out = nx.cast(x, 6, opset=13)
    assert out.dtype == np.int32 and out.shape == (4, 3)
    assert out.tolist() == before.astype(np.int32).tolist()
    assert np.array_equal(x, before)


def test_exact_reference_is_what_the_sample_checks():
    # The reference helper compares codes: a wrong code must be reported.
    codes, x = sample("FLOAT8E4M3FN")
    wrong = nx.cast(x, 1).copy()
    wrong[5] = 42.0
    with pytest.raises(AssertionError, match="1 mismatches"):
        check_against_reference("float8e4m3fn", codes, "float", {}, wrong)
