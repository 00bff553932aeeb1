"""The ml_dtypes dtypes as Numba types: arrays and elements of BFLOAT16, the
float8, float6 and float4 types, INT4, UINT4, INT2 and UINT2 inside ``@njit`` code.

Importing numbacast registers, for every numeric type whose NumPy storage is
an ml_dtypes dtype, one Numba type (:class:`FloatElement` or
:class:`IntElement`, a ``numba.types.Number``) whose data model is its
storage code -- a ``uint8``, or a ``uint16`` for BFLOAT16 -- so that an array of
that dtype is a plain Numba array whose elements are loaded and stored as
those codes, with no copy on the way in or out:

* typing: the dtype is added to ``numba.np.numpy_support.FROM_DTYPE``, the
  table Numba reads to type arrays, scalars, dtypes and scalar classes
  (``ml_dtypes.bfloat16`` as ``np.empty(n, ml_dtypes.bfloat16)``'s dtype),
  and the type of an array argument is kept per kind, which Numba's
  dispatcher would build anew on every call (:func:`_typeof_array`);
  ``a.dtype == b.dtype`` gives NumPy's answer where one is an ml_dtypes
  type (:func:`_dtype_equality`);
* boxing: Numba turns a type back into a dtype with
  ``numba.np.numpy_support.as_dtype``, which has no extension point.  A
  hook of this module wraps that function (the module attribute, which is
  what Numba's array and dtype boxing, and its type unification, call) so
  that these types give their ml_dtypes dtype and every other type goes to
  Numba's own function.  :func:`as_dtype_hook_installed` says whether it is
  in place; the test-suite checks it.
* scalars: boxing and unboxing through the storage code, constants, and
  casts to and from every Numba number type (``lower_cast``): what
  ``a[i] = v``, ``np.float32(a[i])`` and ``ml_dtypes.float8_e4m3fn(v)`` compile to.

The other ml_dtypes dtypes, which are no ONNX type (``float8_e3m4``,
``int1`` ...), are :class:`ForeignElement`: their arrays pass through compiled
code unchanged, and any use of an element is a compile-time error that says
what to do instead (``numbacast.cast`` takes the arrays of those it names).

What the elements' values are, how values are stored into them and which
operators they support is :mod:`numbacast.integrations.elements`.
"""

import operator
import sys
import typing

import ml_dtypes
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.core.imputils import lower_constant
from numba.core.typeconv import Conversion
from numba.extending import NativeValue, box, intrinsic, models, overload, register_model, typeof_impl, unbox
from numba.np import arrayobj, numpy_support

from ..engine.cache import OVERLOAD_OPTIONS
from ..engine.kernels import array_key
from ..formats.registry import TYPES, resolve


class Element(types.Number):
    """The Numba type of one element of an ml_dtypes array (one per ONNX type).

    Its value in compiled code is the storage code (``bitwidth`` bits).
    Values of any Numba number type convert *to* it (``a[i] = v``); it
    converts to nothing implicitly -- ``np.float32(x)``, ``float(x)`` and the
    operators of :mod:`~numbacast.integrations.elements` read its value.
    """

    def __init__(self, onnx_name):
        onnx_type = resolve(onnx_name)
        self.onnx_name = onnx_type.name
        self.bitwidth = 8 * onnx_type.storage.itemsize
        super().__init__(name=onnx_type.storage.name)

    @property
    def onnx_type(self):
        """The :class:`~numbacast.formats.registry.OnnxType`."""
        return resolve(self.onnx_name)

    @property
    def numpy_dtype(self):
        """The ml_dtypes dtype."""
        return self.onnx_type.storage

    @property
    def code(self):
        """The Numba type of the storage code: uint8 or uint16."""
        return types.uint16 if self.bitwidth == 16 else types.uint8

    def can_convert_from(self, typingctx, other):
        # Storing a number into an element rounds it (``a[i] = 1.5``): allowed, never implicit elsewhere,
        # since no Numba function signature has an Element argument.
        if isinstance(other, Element) and not has_numpy_cast(other, self):
            return None
        if isinstance(other, (types.Float, types.Integer, types.Boolean, Element)):
            return Conversion.unsafe
        return None

    def unify(self, typingctx, other):
        # NumPy's promotion (``np.promote_types``), None where NumPy has none (float8 with int64).
        if isinstance(other, types.Number):
            try:
                return numpy_support.from_dtype(np.promote_types(as_dtype(self), as_dtype(other)))
            except (TypeError, errors.NumbaNotImplementedError):
                return None
        return None


def has_numpy_cast(source, target):
    """Whether NumPy with ml_dtypes casts elements of ``source`` to ``target`` (it has no cast
    between some pairs, such as INT4 and UINT2, or FLOAT8E8M0 and most types)."""
    return bool(np.can_cast(source.numpy_dtype, target.numpy_dtype, "unsafe"))


class FloatElement(Element):
    """An element of BFLOAT16, a float8, float6 or float4 type."""


class IntElement(Element):
    """An element of INT4, UINT4, INT2 or UINT2."""


def _is_ml_dtypes(onnx_type):
    return onnx_type.storage.type.__module__.split(".")[0] == "ml_dtypes"


#: The Numba type of every ONNX type stored as an ml_dtypes dtype, by ONNX type.
ELEMENT_TYPES = {t: (IntElement if t.is_integer else FloatElement)(t.name) for t in TYPES if _is_ml_dtypes(t)}


class ForeignElement(types.Number):
    """An element of an ml_dtypes dtype that is no ONNX type (``float8_e3m4``,
    ``int1``, ``complex32`` ...).  Its arrays pass through ``@njit`` code
    unchanged; using an element, or casting such an array with numbacast, is a
    compile-time error that names the type and says what to do instead."""

    def __init__(self, dtype_name):
        self.dtype_name = dtype_name
        self.bitwidth = 8 * self.numpy_dtype.itemsize
        super().__init__(name=dtype_name)

    @property
    def numpy_dtype(self):
        return np.dtype(getattr(ml_dtypes, self.dtype_name))

    def refusal(self):
        return (
            f"numbacast: {self.dtype_name} is an ml_dtypes type but no ONNX type, so numbacast gives its elements "
            f"no values or operators in @njit code. Convert the array before the call (a.astype(np.float32)), or "
            f"store it as one of: {', '.join(element.name for element in ELEMENT_TYPES.values())}"
        )

    def unify(self, typingctx, other):
        return None


# --------------------------------------------------------------------------
# Unification: one type for a variable that holds a number and an element
# --------------------------------------------------------------------------

_numba_number_unify = types.Number.unify


def _number_unify(self, typingctx, other):
    """Numba's unification of a number type with another (NumPy's promotion:
    the one type of a variable given both, ``acc = 0`` then ``acc = acc +
    a[i]``), which asks the number first: with an element, the element's
    (:meth:`Element.unify`), and where NumPy has no type for both (int64 and
    bfloat16), a TypeError that says what to write, where NumPy's own
    DTypePromotionError came out of Numba's typing."""
    if isinstance(other, ForeignElement):
        raise TypeError(other.refusal())
    if not isinstance(other, Element):
        return _numba_number_unify(self, typingctx, other)
    unified = other.unify(typingctx, self)
    if unified is None:
        raise TypeError(
            f"numbacast: NumPy has no type that holds both {types.unliteral(self)} and {other}, so a variable "
            f"of @njit code cannot hold one and then the other (such as acc = 0, then acc = acc + a[i]). "
            f"Write instead: start it as the type it will hold, such as acc = np.float32(0) and "
            f"acc += np.float32(a[i])"
        )
    return unified


types.Number.unify = _number_unify  # type: ignore[method-assign]


def _foreign_dtypes():
    known = {t.storage for t in TYPES}
    for name in dir(ml_dtypes):
        kind = getattr(ml_dtypes, name)
        if isinstance(kind, type) and issubclass(kind, np.generic) and np.dtype(kind) not in known:
            yield np.dtype(kind).name


_BY_DTYPE = {element.numpy_dtype: element for element in ELEMENT_TYPES.values()}
_BY_DTYPE.update({foreign.numpy_dtype: foreign for foreign in map(ForeignElement, sorted(set(_foreign_dtypes())))})

_FROM_DTYPE = typing.cast(dict, numpy_support.FROM_DTYPE)  # Numba's dtype -> type table
for _dtype, _element in _BY_DTYPE.items():
    _FROM_DTYPE.setdefault(_dtype, _element)
del _dtype, _element


def element_type(onnx_type):
    """The :class:`Element` of an ONNX type, or None for a type Numba has natively."""
    return ELEMENT_TYPES.get(resolve(onnx_type))


# --------------------------------------------------------------------------
# Arrays as arguments: their Numba type kept per kind
# --------------------------------------------------------------------------

_numba_typeof_ndarray = typeof_impl.dispatch(np.ndarray)
_ARRAY_TYPES: dict = {}


@typeof_impl.register(np.ndarray)
def _typeof_array(value, context):
    """Numba's type of an ndarray (by Numba's own ``typeof``), kept per
    dtype, dimensions, layout and writability for the ml_dtypes dtypes.

    Numba's dispatcher types an argument in C, from a fingerprint of its
    dtype that it computes only for NumPy's own dtypes: for any other, each
    call asks Python, whose ``typeof`` builds the array type anew.  A call
    of an ``@njit`` function taking one bfloat16 array took 7.4 us in that
    (0.16 us with a uint8 array), 2.4 us with the types kept (by the key
    the kernels keep their entry points by, :func:`~numbacast.engine.kernels.array_key`).
    Every other array goes to Numba's own function."""
    if type(value) is not np.ndarray or value.dtype not in _BY_DTYPE:
        return _numba_typeof_ndarray(value, context)
    key = array_key(value)
    array_type = _ARRAY_TYPES.get(key)
    if array_type is None:
        array_type = _ARRAY_TYPES[key] = _numba_typeof_ndarray(value, context)
    return array_type


# --------------------------------------------------------------------------
# The hook of numpy_support.as_dtype
# --------------------------------------------------------------------------

_numba_as_dtype = numpy_support.as_dtype
_UFUNC_LOOP_MATCHING = numpy_support.ufunc_find_matching_loop.__code__


def _called_by_ufunc_loop_matching():
    """Whether Numba's ufunc loop matching (directly, or in a comprehension of it) asks."""
    frame = sys._getframe(2)
    for _ in range(2):
        if frame is None:
            return False
        if frame.f_code is _UFUNC_LOOP_MATCHING:
            return True
        frame = frame.f_back
    return False


def _ml_dtypes_type(nbtype):
    """The :class:`Element` or :class:`ForeignElement` that ``nbtype`` is, or
    is the dtype (``a.dtype``) or scalar class (``ml_dtypes.bfloat16``) of; else None."""
    unliteral = types.unliteral(nbtype)
    if isinstance(unliteral, (types.DType, types.NumberClass)):
        unliteral = unliteral.dtype
    return unliteral if isinstance(unliteral, (Element, ForeignElement)) else None


def as_dtype(nbtype):
    """``numba.np.numpy_support.as_dtype`` that also knows the :class:`Element` types.

    Numba's ufunc loop matching re-reads a dtype from its one-letter code,
    which an ml_dtypes dtype does not have (``bfloat16``'s "E" is no NumPy
    code): it is told that the type, or its dtype or scalar class, has no
    dtype, which makes it find no loop (NumPy ufuncs on these arrays are not
    supported in compiled code, and ``a.dtype == b.dtype`` goes on to
    :func:`_dtype_equality`) instead of failing inside Numba.
    """
    element = _ml_dtypes_type(nbtype)
    if element is not None:
        if _called_by_ufunc_loop_matching():
            raise errors.NumbaNotImplementedError(f"{nbtype} has no NumPy ufunc loop in compiled code")
        return element.numpy_dtype
    return _numba_as_dtype(nbtype)


as_dtype.__wrapped__ = _numba_as_dtype  # type: ignore[attr-defined]
if getattr(numpy_support.as_dtype, "__wrapped__", None) is None:
    numpy_support.as_dtype = as_dtype


def as_dtype_hook_installed():
    """Whether Numba's ``as_dtype`` maps the Element types to their dtypes."""
    return all(numpy_support.as_dtype(e) == e.numpy_dtype for e in ELEMENT_TYPES.values())


def _dtype_equality(op):
    """``a.dtype == b.dtype`` (and ``!=``, with dtypes or scalar classes such
    as ``np.float32`` and ``ml_dtypes.bfloat16``) where one side is an
    ml_dtypes type: NumPy's answer, a constant of the types.  (Numba has no
    comparison of dtypes; its ufunc typing of ``==`` is told these have none,
    :func:`as_dtype`.)"""

    def typer(a, b):
        if not all(isinstance(types.unliteral(t), (types.DType, types.NumberClass)) for t in (a, b)):
            return None
        if _ml_dtypes_type(a) is None and _ml_dtypes_type(b) is None:
            return None
        try:
            answer = op(as_dtype(a), as_dtype(b))
        except errors.NumbaNotImplementedError:
            return None
        return lambda a, b: answer

    overload(op, jit_options=OVERLOAD_OPTIONS)(typer)


_dtype_equality(operator.eq)
_dtype_equality(operator.ne)


# --------------------------------------------------------------------------
# Data model, constants, boxing
# --------------------------------------------------------------------------


class _CodeModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.IntType(fe_type.bitwidth))


# Numba looks data models up by the exact class of a type.
register_model(FloatElement)(_CodeModel)
register_model(IntElement)(_CodeModel)
register_model(ForeignElement)(_CodeModel)


def _code_of_scalar(value):
    return int(np.asarray(value).view(f"u{np.asarray(value).dtype.itemsize}"))


@lower_constant(Element)
def _constant(context, builder, ty, pyval):
    return context.get_constant(ty.code, _code_of_scalar(np.asarray(pyval, ty.numpy_dtype)))


@lower_constant(types.Array)
def _constant_array(context, builder, ty, pyval):
    """An array constant of ``@njit`` code (a global array, or one a closure
    captured), as Numba makes it; an array of elements that Numba would copy
    into the compiled code (a small contiguous one) is copied as its storage
    codes: Numba reads the bytes through the buffer protocol, which NumPy
    does not offer for ml_dtypes dtypes ("cannot include dtype 'E' in a
    buffer").  The codes are the same bytes, and an array of codes has the
    same layout in compiled code.  Numba's own implementation for every
    array (:func:`numba.np.arrayobj.constant_array`) is this function's
    first line, which this one replaces: the later registration of a type is
    the one used, and this module imports Numba's first."""
    try:
        return arrayobj.constant_array(context, builder, ty, pyval)
    except ValueError:
        if not isinstance(ty.dtype, Element):
            raise
    codes = ty.copy(dtype=ty.dtype.code)
    return context.make_constant_array(builder, codes, pyval.view(numpy_support.as_dtype(ty.dtype.code)))


def _scalar_of_code(code, dtype):
    return np.array(code, f"u{dtype.itemsize}").view(dtype)[()]


def _constant_object(c, obj):
    """A borrowed reference to ``obj``, kept in the compiled function's environment."""
    return c.env_manager.read_const(c.env_manager.add_const(obj))


@box(ForeignElement)
@box(Element)
def _box(typ, val, c):
    code_obj = c.pyapi.long_from_ulonglong(c.builder.zext(val, ir.IntType(64)))
    maker, dtype = _constant_object(c, _scalar_of_code), _constant_object(c, typ.numpy_dtype)
    result = c.pyapi.call_function_objargs(maker, (code_obj, dtype))
    c.pyapi.decref(code_obj)
    return result


@unbox(ForeignElement)
@unbox(Element)
def _unbox(typ, obj, c):
    reader = c.pyapi.unserialize(c.pyapi.serialize_object(_code_of_scalar))
    code_obj = c.pyapi.call_function_objargs(reader, (obj,))
    c.pyapi.decref(reader)
    failed = cgutils.is_null(c.builder, code_obj)
    slot = cgutils.alloca_once_value(c.builder, ir.Constant(ir.IntType(typ.bitwidth), 0))
    with cgutils.if_likely(c.builder, c.builder.not_(failed)):
        wide = c.pyapi.long_as_ulonglong(code_obj)
        c.pyapi.decref(code_obj)
        c.builder.store(c.builder.trunc(wide, ir.IntType(typ.bitwidth)), slot)
    return NativeValue(c.builder.load(slot), is_error=failed)


# --------------------------------------------------------------------------
# Codes and elements in compiled code
# --------------------------------------------------------------------------


@intrinsic
def code_of(typingctx, element):
    """The storage code of an element (uint8 or uint16), same bits."""
    if not isinstance(element, Element):
        raise errors.NumbaTypeError(f"code_of takes an ml_dtypes element, not {element}")

    def codegen(context, builder, signature, args):
        return args[0]

    return element.code(element), codegen


@intrinsic
def element_of(typingctx, code, kind):
    """The element of type ``kind`` (an ml_dtypes scalar class or dtype) whose storage code is the integer ``code``."""
    target = getattr(kind, "instance_type", None) if isinstance(kind, types.NumberClass) else None
    if isinstance(kind, types.DType):
        target = kind.dtype
    if not isinstance(target, Element) or not isinstance(code, types.Integer):
        raise errors.NumbaTypeError(f"element_of takes an integer code and an ml_dtypes type, not {code}, {kind}")

    def codegen(context, builder, signature, args):
        return context.cast(builder, args[0], code, target.code)

    return target(code, kind), codegen
