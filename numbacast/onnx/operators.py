"""The ONNX ``Cast`` and ``CastLike`` operators on NumPy arrays, version by version.

:func:`cast` and :func:`castlike` (exported as ``numbacast.onnx.cast`` and
``numbacast.onnx.castlike``) apply the operator version in force at the opset
given: its type constraints, its attributes and its rules (see
:mod:`numbacast.versions`).  The values follow numbacast's one set of rules
(the conversion rules, docs/rules.md), with one version difference: Cast-19 to Cast-23 turn +/-inf
into NaN when casting into the FNUZ float8 types, where later versions give
+/-max.

Strings (ONNX STRING) are handed to :func:`numbacast.cast` as they are.

This module does not need onnx.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..api import cast as numbacast_cast
from ..engine.arrays import run
from ..engine.checks import refuse_masked
from ..engine.conversion import Conversion
from ..formats.registry import resolve
from . import versions

#: What the string literals of an infinity look like (docs/rules.md#rule-string-grammar).
INFINITY_LITERALS = frozenset(sign + word for sign in ("", "+", "-") for word in ("inf", "infinity"))


def type_name(dtype):
    """The ONNX name of the type of elements of ``dtype`` ("STRING" for text)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "USO":
        return "STRING"
    return resolve(dtype).onnx_name


@dataclass(frozen=True)
class Caster:
    """One cast, its version's rules applied: ``caster(array)`` casts an array
    of the source type (``out=`` as in :func:`numbacast.cast`)."""

    source: str
    target: str
    options: dict
    infinity_to_nan: bool  # Cast-19..23 into an FNUZ type

    @property
    def conversion(self):
        """The numeric :class:`Conversion`, or None when a side is STRING."""
        if "STRING" in (self.source, self.target):
            return None
        return Conversion.make(
            resolve(self.source), resolve(self.target), inf_to_nan=self.infinity_to_nan, **self.options
        )

    def __call__(self, array, out=None):
        conversion = self.conversion
        if conversion is not None:
            return run(conversion, array, out)
        result = numbacast_cast(array, versions.TYPE_IDS[self.target], out=out, **self.options)
        if self.infinity_to_nan:
            result[infinity_literals(array)] = np.nan
        return result


def caster(spec, source, target, saturate=None, round_mode=None):
    """The :class:`Caster` of operator version ``spec`` from type ``source`` to
    type ``target`` (names); ValueError for a type or attribute that version
    does not have."""
    spec.check_types(source, target)
    return Caster(
        source, target, spec.options(saturate, round_mode), spec.infinity_into_fnuz_is_nan and target in versions.FNUZ
    )


def infinity_literals(strings):
    """Where an array of strings holds an infinity ("inf", "-Infinity", ...)."""
    words = np.char.lower(np.char.strip(np.asarray(strings, dtype=str)))
    return np.isin(words, list(INFINITY_LITERALS))


def cast(
    x: npt.ArrayLike,
    to: int | str,
    *,
    opset: int = versions.LATEST_OPSET,
    saturate: int | bool | None = None,
    round_mode: str | None = None,
) -> np.ndarray:
    """Cast ``x`` as the ONNX ``Cast`` operator in force at ``opset`` does.

    Parameters
    ----------
    x : array_like
        Of a type that Cast version accepts (strings for STRING).
    to : int or str
        The ``to`` attribute: a ``TensorProto.DataType`` id (``1``,
        ``onnx.TensorProto.FLOAT``), or for Cast-1 (opsets 1 to 5) a type name
        (``"FLOAT"``).
    opset : int
        The opset of the model, 1 to 28: Cast-1, 6, 9, 13, 19, 21, 23, 24,
        25 or 28 is in force.
    saturate : {0, 1}, optional
        The ``saturate`` attribute, from Cast-19 (default 1).
    round_mode : {"up", "down", "nearest"}, optional
        The ``round_mode`` attribute, from Cast-24 (default "up").

    Returns
    -------
    numpy.ndarray
        As :func:`numbacast.cast` returns.

    Raises ValueError naming the version for a type or an attribute that the
    version does not have, and the version that brought it.
    """
    spec = versions.in_force("Cast", opset)
    refuse_masked(x, "numbacast.onnx.cast")
    array = np.asarray(x)
    return caster(spec, type_name(array.dtype), spec.target(to), saturate, round_mode)(array)


def castlike(
    x: npt.ArrayLike,
    like: npt.ArrayLike,
    *,
    opset: int = versions.LATEST_OPSET,
    saturate: int | bool | None = None,
    round_mode: str | None = None,
) -> np.ndarray:
    """Cast ``x`` to the type of the array ``like``, as the ONNX ``CastLike``
    operator in force at ``opset`` (15 to 28) does.  As :func:`cast`
    otherwise; ``saturate`` exists from CastLike-19, ``round_mode`` from
    CastLike-24."""
    spec = versions.in_force("CastLike", opset)
    refuse_masked(x, "numbacast.onnx.castlike")
    array = np.asarray(x)
    return caster(spec, type_name(array.dtype), type_name(np.asarray(like).dtype), saturate, round_mode)(array)
