"""The versions of the ONNX ``Cast`` and ``CastLike`` operators, as data
(and the opsets of ``QuantizeLinear`` and ``DequantizeLinear``, whose
types are in :mod:`numbacast.onnx.quantization`).

An operator version is in force from its opset until the next version: at
opset 22, Cast-21 is in force.  Each version differs from the one before in
the types it accepts (for both its input and its output) or its attributes:

* every type came with one Cast version (:data:`INTRODUCED`) and is accepted
  by every version from then on, for CastLike as for Cast;
* Cast-1 takes ``to`` as a type name (``"FLOAT"``), later versions as a
  ``TensorProto.DataType`` id (``1``);
* ``saturate`` exists from version 19, ``round_mode`` from version 24;
* in versions 19 to 23, +/-inf cast into FLOAT8E4M3FNUZ or FLOAT8E5M2FNUZ
  gives NaN even when saturating (from version 24 it gives +/-max).

The tables hold what ONNX 1.23 defines, plus CastLike-28: ONNX 1.23 added
the float6 types to Cast-28 only, but CastLike has always taken the types of
the Cast of its opset, so numbacast's CastLike-28 takes the float6 types too.

This module does not need onnx.
"""

from dataclasses import dataclass

import numpy as np

from ..engine.checks import check_round_mode, check_saturate
from ..formats.registry import REFUSED, TYPES

#: The opsets at which a new version of each operator came.
VERSIONS = {
    "Cast": (1, 6, 9, 13, 19, 21, 23, 24, 25, 28),
    "CastLike": (15, 19, 21, 23, 24, 25, 28),
    "QuantizeLinear": (10, 13, 19, 21, 23, 24, 25, 28),
    "DequantizeLinear": (10, 13, 19, 21, 23, 24, 25, 28),
}

#: The newest opset whose operators this module describes.
LATEST_OPSET = 28

#: The ``TensorProto.DataType`` id of every type a Cast version knows.
TYPE_IDS = {**{t.onnx_name: t.id for t in TYPES}, "STRING": 8}

TYPE_NAMES = {type_id: name for name, type_id in TYPE_IDS.items()}

#: The Cast version that introduced each type.
INTRODUCED = {
    **dict.fromkeys(
        [
            "BOOL",
            "DOUBLE",
            "FLOAT",
            "FLOAT16",
            "INT8",
            "INT16",
            "INT32",
            "INT64",
            "UINT8",
            "UINT16",
            "UINT32",
            "UINT64",
        ],
        1,
    ),
    "STRING": 9,
    "BFLOAT16": 13,
    **dict.fromkeys(["FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ"], 19),
    **dict.fromkeys(["INT4", "UINT4"], 21),
    "FLOAT4E2M1": 23,
    "FLOAT8E8M0": 24,
    **dict.fromkeys(["INT2", "UINT2"], 25),
    **dict.fromkeys(["FLOAT6E2M3", "FLOAT6E3M2"], 28),
}

#: Where Cast-19 to Cast-23 turn +/-inf into NaN even when saturating.
FNUZ = frozenset({"FLOAT8E4M3FNUZ", "FLOAT8E5M2FNUZ"})

SATURATE_SINCE = 19
ROUND_MODE_SINCE = 24
TO_AS_ID_SINCE = 6


def name_of_id(type_id):
    """The name of the type of ``TensorProto.DataType`` id ``type_id``; ValueError
    for a complex or unknown id."""
    type_id = int(type_id)
    if type_id in TYPE_NAMES:
        return TYPE_NAMES[type_id]
    if type_id in REFUSED:
        raise ValueError(
            f"{REFUSED[type_id]} (id {type_id}) is refused: the Cast operator does not cast complex numbers"
        )
    raise ValueError(
        f"unknown TensorProto.DataType id {type_id}; accepted: "
        + ", ".join(f"{TYPE_IDS[n]} ({n})" for n in type_names())
    )


def is_integer(value):
    """Whether ``value`` is a Python or NumPy integer (bool is not)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def type_names():
    """Every type name a Cast version knows, in id order."""
    return sorted(TYPE_IDS, key=TYPE_IDS.get)


@dataclass(frozen=True)
class OperatorVersion:
    """One version of Cast or CastLike, as in force at ``opset``."""

    op: str
    version: int
    opset: int

    def __str__(self):
        return f"{self.op}-{self.version}"

    @property
    def types(self):
        """The names of the types this version accepts, as input and as output."""
        return frozenset(name for name, since in INTRODUCED.items() if since <= self.version)

    @property
    def infinity_into_fnuz_is_nan(self):
        return SATURATE_SINCE <= self.version < ROUND_MODE_SINCE

    def check_types(self, source, target):
        """ValueError unless this version casts from type ``source`` to type ``target`` (names)."""
        for role, name in (("input", source), ("output", target)):
            if name not in self.types:
                raise ValueError(
                    f"{self} (in force at opset {self.opset}) does not take {name} as its {role} "
                    f"type; {self._came_with(name)}"
                )

    def _came_with(self, name):
        since = INTRODUCED.get(name)
        if since is None:
            return f"{name} is not an ONNX type (no {self.op} version takes it)"
        later = [v for v in VERSIONS[self.op] if v >= since]
        if later:
            return f"{name} came with {self.op}-{later[0]} (opset {later[0]})"
        return f"no {self.op} version takes {name} (Cast-{since} does)"

    def target(self, to):
        """The name of the type that the ``to`` attribute of this (Cast) version names."""
        if self.version < TO_AS_ID_SINCE:
            if not isinstance(to, str):
                raise TypeError(f"{self} takes 'to' as a type name such as 'FLOAT', not {to!r}")
            name = to.strip().upper()
            if name not in TYPE_IDS:
                raise ValueError(f"unknown type name {to!r} for {self}; accepted: {', '.join(type_names())}")
            return name
        if not is_integer(to):
            raise TypeError(f"{self} takes 'to' as a TensorProto.DataType id such as 1 (FLOAT), not {to!r}")
        return name_of_id(to)

    def options(self, saturate=None, round_mode=None):
        """``dict(saturate=..., round_mode=...)`` for a cast by this version:
        the values given, checked, or the defaults (1 and "up").  ValueError
        for an attribute this version does not have."""
        for name, value, since in (
            ("saturate", saturate, SATURATE_SINCE),
            ("round_mode", round_mode, ROUND_MODE_SINCE),
        ):
            if value is not None and self.version < since:
                raise ValueError(
                    f"{self} (in force at opset {self.opset}) has no {name} attribute; it came with {self.op}-{since}"
                )
        return dict(
            saturate=True if saturate is None else check_saturate(saturate),
            round_mode="up" if round_mode is None else check_round_mode(round_mode),
        )


def in_force(op, opset):
    """The :class:`OperatorVersion` of ``op`` (a name of :data:`VERSIONS`) in force at ``opset``."""
    if not is_integer(opset):
        raise TypeError(f"opset must be an integer, not {opset!r}")
    opset = int(opset)
    versions = VERSIONS[op]
    if not versions[0] <= opset <= LATEST_OPSET:
        raise ValueError(
            f"{op} is defined from opset {versions[0]} to {LATEST_OPSET} (the latest numbacast "
            f"knows), not at opset {opset}"
        )
    return OperatorVersion(op, max(v for v in versions if v <= opset), opset)
