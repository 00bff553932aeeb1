"""Elements of the ml_dtypes types in ``@njit`` code: their values, how values
are stored into them and the operators they support -- each one as NumPy 2
with ml_dtypes computes it, bit for bit (measured; ``tests/test_elements.py``
compares every code of every type with NumPy, and ``docs/numba-types.md``
states the rules for users).

Values
    ``float(x)``, ``np.float32(x)`` and ``np.float64(x)`` give the exact value
    of an element (BFLOAT16 NaN payloads included), ``int(x)`` and
    ``np.int32(x)`` ... convert that value as Numba converts a float (or an
    integer, for INT4, UINT4, INT2 and UINT2), ``bool(x)`` is ``x != 0``.

Stores
    ``a[i] = v``, ``ml_dtypes.float8_e4m3fn(v)`` and every other conversion
    *into* an element round ``v`` as the same assignment does in NumPy
    (:func:`store_rule`):

    * a float64 goes through float32 first (two roundings), as ml_dtypes
      casts a float64 array, or stores a NumPy float64 scalar (a Python
      float assigned in Python, and the scalar constructor called in
      Python, round once there; compiled code cannot tell them apart and
      follows NumPy's arrays);
    * BFLOAT16, the float8 types, FLOAT4E2M1 and the float6 types round a
      float32 to nearest even and never saturate where the type has NaN or
      infinity: :func:`numbacast.cast` with ``saturate=False`` from FLOAT;
      NaN into FLOAT4E2M1 or a float6 type gives a zero of the opposite sign;
      FLOAT8E8M0 rounds to the nearest power of two with ties up, takes every
      value at or below 2**-127 to 2**-127 and every other one below 2**-126
      to 2**-126, and gives NaN for zero and negative values;
    * INT4, UINT4, INT2 and UINT2 keep the low bits of the value truncated
      toward zero (NaN, infinities and magnitudes of 2**31 or more give 0,
      as NumPy's conversion through int32 does; NumPy raises for a Python
      float out of the type's range, and for NaN);
    * integers go to the float types through float64, booleans as 0 and 1;
    * an element of another type goes through its value where NumPy has a
      cast between the two types, and is refused where it has none.

Operators (``x``, ``y`` elements of one type ``T``; ``k`` a Python int --
in compiled code an ``int64``, literal or not; ``f`` a ``float32``; ``d`` a
Python float -- in compiled code a ``float64``)

    ======================  ==================  ==================================
    operation               float element type  INT4, UINT4, INT2, UINT2
    ======================  ==================  ==================================
    ``x op y``              T                   T (wraps around)
    ``x op f``, ``f op x``  float32             float32
    ``x op d``, ``d op x``  float32 (``d`` is   refused (NumPy: float16)
                            rounded to float32
                            first)
    ``x op k``, ``k op x``  T (``k`` is stored  int8 (``k`` must fit in int8,
                            into T first)       else OverflowError; wraps)
    ``-x``, ``+x``          T                   T
    ``abs(x)``              T                   int8
    ======================  ==================  ==================================

    ``op`` is ``+``, ``-``, ``*`` or ``/`` (``/`` is refused where the table
    gives an integer type) and the comparisons ``== != < <= > >=``, which
    compare the operands converted as for arithmetic.  A float result is the
    float32 operation (no ZeroDivisionError: division by zero gives an
    infinity or NaN, as in NumPy); a T result is that float32 result stored
    into T.  ``-x`` and ``abs(x)`` of a float type work on the sign bit, as
    ml_dtypes does.  One difference remains: where an operand of ``x op y``
    is NaN, the sign of the NaN result is the float32 operation's, which
    ml_dtypes' own compiled loops do not always keep.

    ``d`` and ``k`` are "weak" Python numbers in NumPy 2: an ``np.float64`` or
    ``np.int64`` operand would give a float64 there, but compiled code cannot
    tell them apart from a Python float or int, and takes them as such.  Write
    ``np.float64(x) * w`` to compute in float64.

    Everything else is refused when the function compiles, with the reason
    and what to write instead: ``//``, ``%``, ``**``, ``~`` and the bitwise
    operators, operands of two different element types, integer operands
    other than ``int64``, float16 and bool operands, NumPy operators on whole
    arrays, and any use of an element of an ml_dtypes type that is no ONNX
    type.
"""

import functools
import operator
from typing import Any

import numpy as np
from numba import types
from numba.core.imputils import lower_builtin, lower_cast
from numba.extending import overload, register_jitable

from ..engine.bits import float32_from_bits, float_bits
from ..engine.cache import OVERLOAD_OPTIONS, helper_njit
from ..engine.conversion import Conversion, scalar_converter, source_stage
from ..formats import description as formats
from ..formats.registry import BFLOAT16, FLOAT, FLOAT8E8M0
from .numba_types import (
    Element,
    FloatElement,
    ForeignElement,
    IntElement,
    as_dtype,
    code_of,
    element_of,
    has_numpy_cast,
)

_jit = functools.partial(helper_njit, error_model="numpy")
#: The options of the element operators and casts, and of the reductions: compiled like
#: the kernels' helpers (without the CPython and C wrappers nothing calls, linked into the
#: code that calls them, which optimises them), with NumPy's error model.
JIT_OPTIONS: Any = dict(OVERLOAD_OPTIONS, error_model="numpy")
_overload = functools.partial(overload, jit_options=JIT_OPTIONS)
#: ``register_jitable`` with :data:`JIT_OPTIONS`.
jitable = register_jitable(**JIT_OPTIONS)


# --------------------------------------------------------------------------
# Values and stores
# --------------------------------------------------------------------------


@functools.cache
def value_of(element):
    """``value(x)``: the exact value of an element, as a float32 (float types) or an int64."""
    if element.onnx_type is BFLOAT16:  # the top half of a float32, NaN payloads included

        @_jit
        def bf16_value(x):
            return float32_from_bits(np.uint32(code_of(x)) << np.uint32(16))

        return bf16_value
    decode = source_stage(element.onnx_type)[1]

    @_jit
    def value(x):
        return decode(code_of(x))

    return value


@functools.cache
def store_rule(element, kind):
    """``store(v) -> code``: the storage code that NumPy with ml_dtypes stores
    for ``v``, a float32 (``kind`` "f32"), a float64 ("f64") or an integer ("int")."""
    target = element.onnx_type
    code_type = np.uint16 if element.bitwidth == 16 else np.uint8
    if target.is_integer:
        return _int_store(target.format.mask, code_type, kind)
    if kind == "int":
        via = store_rule(element, "f64")
        return _jit(lambda v: via(np.float64(v)))
    if kind == "f64":  # through float32, as ml_dtypes casts a float64
        via = store_rule(element, "f32")
        return _jit(lambda v: via(np.float32(v)))
    if target is FLOAT8E8M0:
        return _e8m0_store()
    if target.format.nan == formats.NAN_NONE:
        return _nan_free_store(target)
    return scalar_converter(Conversion.make(FLOAT, target, saturate=False))


def _int_store(mask, code_type, kind):
    if kind == "int":
        return _jit(lambda v: code_type(np.int64(v) & mask))
    limit = 2.0**31  # NumPy converts through int32: beyond it, NaN and infinities, INT32_MIN, whose low bits are 0

    @_jit
    def store(v):
        whole = np.int64(v) if abs(v) < limit else np.int64(0)  # NaN compares False
        return code_type(whole & mask)

    return store


def _e8m0_store():
    """FLOAT8E8M0's store of a float32: the nearest power of two, ties up, with ml_dtypes' rules below 2**-126."""
    nearest = scalar_converter(Conversion.make(FLOAT, FLOAT8E8M0, saturate=False, round_mode="nearest"))
    zero, smallest, second = np.float32(0.0), np.float32(2.0**-127), np.float32(2.0**-126)
    nan = np.uint8(FLOAT8E8M0.format.quiet_nan_code)

    @_jit
    def store(v):
        code = np.uint8(nearest(v))
        if zero < v < second:
            code = np.uint8(0) if v <= smallest else np.uint8(1)
        if v < zero:
            code = nan
        return code

    return store


def _nan_free_store(target):
    """The store of a float32 into a type without NaN: a NaN gives the zero of the other sign."""
    convert = scalar_converter(Conversion.make(FLOAT, target, nan_free=True))
    zero = np.uint32(0)

    @_jit
    def store(v):
        # A NaN's bits all flipped are a float32 zero or subnormal of the
        # other sign (its exponent field all zeros), which the conversion
        # rounds to that zero: a compare and an XOR in the float lanes, where
        # a select of that zero there was a compare, a sign flip and a
        # vblendvps (a user's loop of float32 stores into FLOAT4E2M1 with
        # AVX2 code took 2.0-2.3x the time of stores into FLOAT8E4M3FN at
        # 16M); selected after the conversion, between codes, LLVM packed
        # the NaN mask down to bytes beside them (1.3x the time again). No
        # NaN reaches the conversion, which is compiled without its NaN test.
        flip = np.uint32(zero - np.uint32(v != v))
        return np.uint8(convert(float32_from_bits(float_bits(v) ^ flip)))

    return store


def store_kind(numba_type):
    """The :func:`store_rule` kind of a Numba number type, and the type its values are passed as."""
    if isinstance(numba_type, types.Float):
        return ("f64", types.float64) if numba_type == types.float64 else ("f32", types.float32)
    if isinstance(numba_type, types.Boolean):
        return "int", types.int64
    if isinstance(numba_type, types.Integer):
        return "int", numba_type
    raise TypeError(f"cannot store a {numba_type} into an ml_dtypes element")


@functools.cache
def storer(element, kind):
    """``to_element(v)``: :func:`store_rule` as an element of type ``element``."""
    rule, scalar_class = store_rule(element, kind), element.numpy_dtype.type
    return _jit(lambda v: element_of(rule(v), scalar_class))


@functools.cache
def converter(source, target):
    """``convert(x)``: an element of type ``source`` stored into type ``target``.
    ml_dtypes casts its float8, float6, float4 and E8M0 types to an integer
    type through a 32-bit integer, NaN giving 0 and infinities its bounds."""
    value = value_of(source)
    if isinstance(target, IntElement) and _casts_own_floats(source):
        to_target = storer(target, "int")  # the low bits of an int32's bounds for the infinities
        bottom, top = np.int64(-(2**31)), np.int64(2**31 - 1)
        return _jit(lambda x: to_target(_bounded_integer(value(x), np.int64, bottom, top)))
    to_target = storer(target, "int" if isinstance(source, IntElement) else "f32")
    return _jit(lambda x: to_target(value(x)))


def _casts_own_floats(element):
    """Whether ml_dtypes converts ``element`` to integers by its own rule
    (:func:`_bounded_integer`): the float8, float6, float4 and E8M0 types;
    BFLOAT16 goes through float32, as NumPy converts a float."""
    return not isinstance(element, IntElement) and element.onnx_type is not BFLOAT16


@jitable
def _bounded_integer(v, convert, bottom, top):
    """The float ``v`` as ml_dtypes converts its own float types to an
    integer type: NaN gives 0, infinities ``top`` and ``bottom``, other
    values ``convert(v)``."""
    if v != v:
        return convert(0)
    if v == np.inf:
        return top
    if v == -np.inf:
        return bottom
    return convert(v)


# --------------------------------------------------------------------------
# Casts, for a[i] = v and the scalar constructors
# --------------------------------------------------------------------------


def _call(context, builder, function, argtypes, args):
    """Call the ``@njit`` ``function`` from lowering code; (value, type)."""
    typing = context.typing_context
    function_type = typing.resolve_value_type(function)
    signature = function_type.get_call_type(typing, tuple(argtypes), {})
    implementation = context.get_function(function_type, signature)
    return implementation(builder, tuple(args)), signature.return_type


@lower_cast(types.Float, Element)
@lower_cast(types.Integer, Element)
@lower_cast(types.Boolean, Element)
def _number_to_element(context, builder, fromty, toty, value):
    kind, passed = store_kind(fromty)
    value = context.cast(builder, value, fromty, passed)
    return _call(context, builder, storer(toty, kind), (passed,), (value,))[0]


def no_cast_message(source, target):
    return (
        f"numbacast: NumPy with ml_dtypes has no cast from {source} to {target}, so neither has @njit code; "
        f"write np.float32(x) (np.int64(x) for the integer types) to store the value"
    )


@lower_cast(Element, Element)
def _element_to_element(context, builder, fromty, toty, value):
    if not has_numpy_cast(fromty, toty):
        raise TypeError(no_cast_message(fromty, toty))
    return _call(context, builder, converter(fromty, toty), (fromty,), (value,))[0]


@lower_cast(Element, types.Float)
@lower_cast(Element, types.Integer)
@lower_cast(Element, types.Boolean)
def _element_to_number(context, builder, fromty, toty, value):
    """``np.float32(x)``, ``np.uint8(x)`` ... of an element, and its store into
    an array of that type: its value, converted as NumPy converts it
    (:func:`integer_of` into an integer type)."""
    if isinstance(toty, types.Integer) and not isinstance(fromty, IntElement):
        function = integer_of(fromty, toty)
    else:
        function = value_of(fromty)
    result, result_type = _call(context, builder, function, (fromty,), (value,))
    return context.cast(builder, result, result_type, toty)


@functools.cache
def integer_of(element, integer):
    """``to_integer(x)``: an element of a float type converted to the Numba
    integer type ``integer`` as NumPy converts it on x86-64 (its scalar
    constructors and its array casts alike): the float8, float6, float4 and
    E8M0 types give 0 for NaN and the type's bounds for infinities
    (:func:`_bounded_integer`); into int8, uint8, int16, uint16 and uint32
    through a wider signed type (:func:`_through_signed`), into uint64 by
    :func:`_to_uint64` (a float converted straight to a narrower or
    unsigned type is undefined out of its range, and LLVM's code differed
    between CPUs)."""
    value, target = value_of(element), as_dtype(integer)
    convert = target.type
    bottom, top = convert(np.iinfo(target).min), convert(np.iinfo(target).max)
    if target.kind == "u" and target.itemsize == 8:
        convert = _to_uint64
    elif target.itemsize < 4 or target.kind == "u":
        convert = _through_signed(convert, target.itemsize)
    if _casts_own_floats(element):
        return _jit(lambda x: _bounded_integer(value(x), convert, bottom, top))
    return _jit(lambda x: convert(value(x)))  # BFLOAT16: its float32 value, as NumPy converts a float


# --------------------------------------------------------------------------
# Operators
# --------------------------------------------------------------------------

_ARITHMETIC = {
    operator.add: "+",
    operator.iadd: "+",
    operator.sub: "-",
    operator.isub: "-",
    operator.mul: "*",
    operator.imul: "*",
    operator.truediv: "/",
    operator.itruediv: "/",
}
_PLAIN = {
    operator.iadd: operator.add,
    operator.isub: operator.sub,
    operator.imul: operator.mul,
    operator.itruediv: operator.truediv,
}
_COMPARISONS = {
    operator.eq: "==",
    operator.ne: "!=",
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
}
_REFUSED = {
    operator.floordiv: "//",
    operator.ifloordiv: "//",
    operator.mod: "%",
    operator.imod: "%",
    operator.pow: "**",
    operator.ipow: "**",
    operator.matmul: "@",
    operator.lshift: "<<",
    operator.rshift: ">>",
    operator.and_: "&",
    operator.or_: "|",
    operator.xor: "^",
}

INT8_MIN, INT8_MAX = -128, 127


def _is_python_int(t):
    return isinstance(t, types.Integer) and types.unliteral(t) == types.int64


def _scalar(t):
    return isinstance(t, (types.Number, types.Boolean))


def _refuse(symbol, a, b, reason, instead):
    """A TypeError saying what to write instead: Python's own class, which
    leaves the user's compile as it is (Numba wraps only its own errors, see
    :mod:`~numbacast.integrations.njit_arguments`)."""
    raise TypeError(f"numbacast: {a} {symbol} {b} is not supported in @njit code: {reason}. Write instead: {instead}")


@_jit
def _identity(v):
    return v


@_jit
def _to_float32(v):
    return np.float32(v)


@_jit
def _int8_operand(k):
    if k < INT8_MIN or k > INT8_MAX:
        raise OverflowError("Python integer out of bounds for int8")
    return np.int64(k)


@_jit
def _to_int8(v):
    return np.int8(v)


@functools.cache
def _pyint_reader(element):
    """A Python int operand of a float element type: stored into it, then read (NumPy's weak int)."""
    value, store = value_of(element), storer(element, "int")
    return _jit(lambda k: value(store(k)))


def _element_array(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, Element)


def _plan(symbol, a, b, comparison):
    """(read_a, read_b, write) for ``a symbol b``, or None when neither operand is an element."""
    if _element_array(a) or _element_array(b):
        array = a if _element_array(a) else b
        raise TypeError(
            f"numbacast: NumPy operators on whole {array.dtype} arrays ({a} {symbol} {b}) are not supported in "
            f"@njit code. Loop over the elements (out[i] = a[i] {symbol} b[i]), or cast the array first: "
            f"numbacast.cast(a, 'float') {symbol} ..."
        )
    for operand in (a, b):
        if isinstance(operand, ForeignElement):
            raise TypeError(operand.refusal())
    element = a if isinstance(a, Element) else b if isinstance(b, Element) else None
    if element is None or not (_scalar(a) and _scalar(b)):
        return None
    other = b if element is a else a
    name = element.name
    if isinstance(other, Element) and other != element:
        _refuse(
            symbol,
            a,
            b,
            "two different ml_dtypes types have no common type here",
            f"np.float32(x) {symbol} np.float32(y)",
        )
    value = value_of(element)
    if isinstance(element, FloatElement):
        result_is_element = isinstance(other, Element) or _is_python_int(other)
        if other == element:
            read_other = value
        elif other == types.float32:
            read_other = _identity
        elif other == types.float64:
            read_other = _to_float32
        elif _is_python_int(other):
            read_other = _pyint_reader(element)
        else:
            _refuse(
                symbol,
                a,
                b,
                f"NumPy gives {name} with {other} a type this module does not reproduce (float64 for most integers)",
                f"np.float32(x) {symbol} y, or np.float64(x) {symbol} y",
            )
        write = _identity if comparison or not result_is_element else storer(element, "f32")
    else:
        if other == element:
            if symbol == "/":
                _refuse(
                    symbol,
                    a,
                    b,
                    f"NumPy divides {name} in float16, which Numba has no arithmetic for",
                    f"np.float32(x) {symbol} np.float32(y)",
                )
            read_other = value
            write = _identity if comparison else storer(element, "int")
        elif other == types.float32:
            read_other, value = _identity, _then(_to_float32, value)
            write = _identity
        elif _is_python_int(other):
            if symbol == "/":
                _refuse(symbol, a, b, "NumPy divides it in float16", f"np.float32(x) {symbol} y")
            read_other = _int8_operand
            write = _identity if comparison else _to_int8
        elif isinstance(other, types.Float):
            _refuse(
                symbol,
                a,
                b,
                f"NumPy computes {name} with a Python float in float16 (and with np.float64 in float64), "
                "which this module does not reproduce",
                f"np.float32(x) {symbol} y",
            )
        else:
            _refuse(
                symbol,
                a,
                b,
                f"NumPy gives {name} with {other} a type this module does not reproduce",
                f"np.int64(x) {symbol} y",
            )
    if element is a:
        return value, read_other, write
    return read_other, value, write


@functools.cache
def _then(second, first):
    return _jit(lambda v: second(first(v)))


def _binary(op, symbol, comparison):
    plain = _PLAIN.get(op, op)

    def typer(a, b):
        plan = _plan(symbol, a, b, comparison)
        if plan is None:
            return None
        read_a, read_b, write = plan
        return lambda a, b: write(plain(read_a(a), read_b(b)))

    typer.__name__ = f"_element_{plain.__name__}"
    _overload(op)(typer)


for _op, _symbol in _ARITHMETIC.items():
    _binary(_op, _symbol, comparison=False)
for _op, _symbol in _COMPARISONS.items():
    _binary(_op, _symbol, comparison=True)


@functools.cache
def _comparison(op, element):
    value = value_of(element)
    return _jit(lambda a, b: op(value(a), value(b)))


def _comparison_lowering(op):
    """A comparison of two elements of one type for Numba's own lowering code (``max``, ``min``)."""

    def lower(context, builder, signature, args):
        function = _comparison(op, signature.args[0])
        return _call(context, builder, function, signature.args, args)[0]

    lower_builtin(op, Element, Element)(lower)


for _op in _COMPARISONS:
    _comparison_lowering(_op)


def _refused(op, symbol):
    def typer(a, b):
        if (isinstance(a, Element) or isinstance(b, Element)) and _scalar(a) and _scalar(b):
            _refuse(
                symbol,
                a,
                b,
                "numbacast supports + - * / and comparisons on ml_dtypes elements",
                f"np.float32(x) {symbol} np.float32(y) (or np.int64 for the integer types)",
            )

    _overload(op)(typer)


for _op, _symbol in _REFUSED.items():
    _refused(_op, _symbol)


@lower_cast(ForeignElement, types.Any)
@lower_cast(types.Any, ForeignElement)
def _foreign_cast(context, builder, fromty, toty, value):
    raise TypeError((fromty if isinstance(fromty, ForeignElement) else toty).refusal())


@lower_builtin(bool, ForeignElement)
def _foreign_bool(context, builder, signature, args):
    raise TypeError(signature.args[0].refusal())


def _refuse_foreign(*operands):
    for operand in operands:
        if isinstance(operand, ForeignElement):
            raise TypeError(operand.refusal())
        if isinstance(operand, types.Array) and isinstance(operand.dtype, ForeignElement):
            raise TypeError(operand.dtype.refusal())


@_overload(operator.setitem)
def _setitem(array, index, value):
    """``a[i] = x`` of an element ``x``: into an element array where NumPy has
    the cast; into an array of Numba numbers (float, integer, bool) as NumPy
    stores it -- the element's value converted as the scalar constructor
    ``np.float32(x)``, ``np.int64(x)``, ``np.bool_(x)`` of the array's type does."""
    _refuse_foreign(array, value)
    if not isinstance(array, types.Array) or not isinstance(value, Element):
        return None
    if isinstance(array.dtype, Element) and not has_numpy_cast(value, array.dtype):
        raise TypeError(no_cast_message(value, array.dtype))
    if isinstance(array.dtype, (types.Float, types.Integer, types.Boolean)):
        target = as_dtype(array.dtype)
        if not np.can_cast(value.numpy_dtype, target, "unsafe"):
            raise TypeError(no_cast_message(value, array.dtype))
        convert = target.type  # the element's cast to the array's type: _element_to_number
        return lambda array, index, value: operator.setitem(array, index, convert(value))
    return None


def _through_signed(convert, itemsize):
    """``convert`` for a float into an integer type of ``itemsize`` bytes
    (1 or 2, or an unsigned 4) as NumPy's C cast does it on x86-64: through
    int32 (int8, uint8, int16, uint16) or int64 (uint32), whose low bits are
    kept, 0 beyond that range (-1.0 gives 255 in uint8, 300.0 gives 44 in
    int8).  A float converted straight to a narrower type is undefined out of
    its range: LLVM's code gave 255 for 256.0 into uint8 with AVX2 and 0 with
    AVX-512."""
    signed, limit = (np.int32, np.float32(2.0**31)) if itemsize < 4 else (np.int64, np.float32(2.0**63))
    return jitable(lambda v: convert(signed(v)) if abs(v) < limit else convert(0))


_TOP_BIT = np.uint64(1 << 63)


@jitable
def _to_uint64(v):
    """The float ``v`` into uint64 as NumPy's C cast does it on x86-64 (a
    float straight to uint64 is undefined out of range; LLVM's code differed
    between CPUs): from 2**63 on, ``v - 2**63`` through int64 with the top
    bit set (2**64 and beyond, and infinity, give 0); below, through int64,
    whose bits are kept (-1.0 gives 2**64 - 1), int64's overflow value 2**63
    below -2**63 and for NaN."""
    if v >= 2.0**63:
        rest = v - 2.0**63
        return np.uint64(np.int64(rest)) ^ _TOP_BIT if rest < 2.0**63 else np.uint64(0)
    return np.uint64(np.int64(v)) if v >= -(2.0**63) else _TOP_BIT


@_overload(operator.invert)
def _invert(x):
    if isinstance(x, Element):
        raise TypeError(
            f"numbacast: ~ is not supported on {x} elements in @njit code; for the storage code's bits, "
            "write ~a.view(np.uint8)[i]"
        )


@functools.cache
def _negation(element):
    """``-x`` as ml_dtypes computes it: the sign bit flipped (FNUZ zero and NaN unchanged, FLOAT8E8M0 NaN)."""
    fmt, scalar_class = element.onnx_type.format, element.numpy_dtype.type
    code_type = np.uint16 if element.bitwidth == 16 else np.uint8
    if isinstance(element, IntElement):
        store = storer(element, "int")
        value = value_of(element)
        return _jit(lambda x: store(-value(x)))
    if element.onnx_type is FLOAT8E8M0:
        nan = code_type(fmt.quiet_nan_code)
        return _jit(lambda x: element_of(nan, scalar_class))
    sign = code_type(1 << fmt.sign_shift)
    keep_zero = fmt.nan == formats.NAN_NEGATIVE_ZERO
    zero = code_type(0)

    @_jit
    def negate(x):
        code = code_of(x)
        flipped = code_type(code ^ sign)
        if keep_zero and (code & code_type(sign - code_type(1))) == zero:
            flipped = code  # 0 and the NaN (the code of -0) are their own negation
        return element_of(flipped, scalar_class)

    return negate


@functools.cache
def _absolute(element):
    """``abs(x)`` as ml_dtypes computes it: the sign bit cleared (FNUZ NaN unchanged); int8 for the integer types."""
    fmt, scalar_class = element.onnx_type.format, element.numpy_dtype.type
    if isinstance(element, IntElement):
        value = value_of(element)
        return _jit(lambda x: np.int8(abs(value(x))))
    if element.onnx_type is FLOAT8E8M0:
        return _identity
    code_type = np.uint16 if element.bitwidth == 16 else np.uint8
    magnitude = code_type((1 << fmt.sign_shift) - 1)
    nan = code_type(1 << fmt.sign_shift)
    keep_nan = fmt.nan == formats.NAN_NEGATIVE_ZERO

    @_jit
    def absolute(x):
        code = code_of(x)
        cleared = code_type(code & magnitude)
        if keep_nan and code == nan:
            cleared = code
        return element_of(cleared, scalar_class)

    return absolute


@_overload(operator.neg)
def _neg(x):
    _refuse_foreign(x)
    if isinstance(x, Element):
        negate = _negation(x)
        return lambda x: negate(x)


@_overload(operator.pos)
def _pos(x):
    _refuse_foreign(x)
    if isinstance(x, Element):
        return lambda x: x


@_overload(abs)
def _abs(x):
    _refuse_foreign(x)
    if isinstance(x, Element):
        absolute = _absolute(x)
        return lambda x: absolute(x)


@_overload(float)
def _float(x):
    _refuse_foreign(x)
    if isinstance(x, Element):
        return lambda x: np.float64(x)


@_overload(int)
def _int(x):
    _refuse_foreign(x)
    if isinstance(x, Element):
        return lambda x: np.int64(x)


@lower_builtin(bool, Element)
def _bool(context, builder, signature, args):
    return context.cast(builder, args[0], signature.args[0], types.boolean)
