"""Bit-level reinterpretation of scalars inside ``@njit`` code.

``float_bits(x)`` returns the IEEE bits of a float32 (as uint32) or float64
(as uint64); ``float32_from_bits`` and ``float64_from_bits`` go back.
``leading_zeros``, ``trailing_zeros`` and ``ones`` count the leading zero,
trailing zero and set bits of an integer; ``smaller`` and ``larger`` are
``min`` and ``max`` of two integers, ``choose(c, a, b)`` is ``a if c else b``
without a branch.  ``clamp(x, low, high)`` bounds a
float by two constants in one vector min and one vector max, and
``multiply_add(a, b, c)`` is ``a * b + c``, fused where the target can;
``odd_float32(x)`` rounds a float64 to float32 to odd.  ``half_code(direction)``
is the FLOAT16 code of a float32 by the processor's own conversion, rounded
in a direction, and ``half_value(code)`` the value of a code, where
:func:`converts_half_in_hardware` says the compile target has them;
``single_value(direction)`` rounds a float64 to float32 so.
"""

import functools

import llvmlite.binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils, config, errors
from numba.extending import intrinsic

_BITS_OF = {types.float32: types.uint32, types.float64: types.uint64}


@intrinsic
def float_bits(typingctx, x):
    """The bits of a float32 (uint32) or float64 (uint64)."""
    if x not in _BITS_OF:
        raise errors.NumbaTypeError(f"float_bits takes float32 or float64, not {x}")
    result = _BITS_OF[x]

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(result.bitwidth))

    return result(x), codegen


def _from_bits(float_type):
    bits_type = _BITS_OF[float_type]

    @intrinsic
    def from_bits(typingctx, bits):
        if not isinstance(bits, types.Integer):
            raise errors.NumbaTypeError(f"expected an integer, not {bits}")

        def codegen(context, builder, signature, args):
            value = context.cast(builder, args[0], bits, bits_type)
            return builder.bitcast(value, context.get_value_type(float_type))

        return float_type(bits), codegen

    return from_bits


float32_from_bits = _from_bits(types.float32)
float64_from_bits = _from_bits(types.float64)


def _bit_count(name, doc, emit):
    def count(typingctx, x):
        if not isinstance(x, types.Integer):
            raise errors.NumbaTypeError(f"{name} takes an integer, not {x}")

        def codegen(context, builder, signature, args):
            return emit(builder, args[0])

        return x(x), codegen

    count.__name__ = count.__qualname__ = name
    count.__doc__ = doc
    return intrinsic(count)


_DEFINED_AT_ZERO = ir.Constant(ir.IntType(1), 0)
leading_zeros = _bit_count(
    "leading_zeros",
    "Number of leading zero bits of an integer (its width for 0).",
    lambda builder, x: builder.ctlz(x, _DEFINED_AT_ZERO),
)
trailing_zeros = _bit_count(
    "trailing_zeros",
    "Number of trailing zero bits of an integer (its width for 0).",
    lambda builder, x: builder.cttz(x, _DEFINED_AT_ZERO),
)
ones = _bit_count("ones", "Number of set bits of an integer.", lambda builder, x: builder.ctpop(x))


def _pick(name, comparison, doc):
    def pick(typingctx, a, b):
        result = typingctx.unify_types(a, b)
        if not isinstance(result, types.Integer):
            raise errors.NumbaTypeError(f"{name} takes two integers of a common integer type, not {a} and {b}")

        def codegen(context, builder, signature, args):
            x, y = (context.cast(builder, v, t, result) for v, t in zip(args, signature.args))
            compare = builder.icmp_signed if result.signed else builder.icmp_unsigned
            return builder.select(compare(comparison, y, x), y, x)

        return result(a, b), codegen

    pick.__name__ = pick.__qualname__ = name
    pick.__doc__ = doc
    return intrinsic(pick)


smaller = _pick(
    "smaller",
    "<",
    "``min(a, b)`` of two integers, in their common type as Numba unifies them, "
    "without the function Numba's ``min`` compiles for each pair of types (20 ms a first call).",
)
larger = _pick("larger", ">", "``max(a, b)`` of two integers, as :func:`smaller` is ``min``.")


@intrinsic
def choose(typingctx, condition, if_true, if_false):
    """``if_true if condition else if_false`` (two values of one type) as one
    LLVM ``select``, not branches: Numba copies the whole scope of a function
    it inlines once for each of its blocks, and a conditional expression is
    three blocks (a first cast compiled 0.02 s sooner for two of them)."""
    result = types.unliteral(if_true)
    if not isinstance(condition, types.Boolean) or types.unliteral(if_false) != result:
        raise errors.NumbaTypeError(
            f"choose takes a bool and two values of one type, not {condition}, {if_true}, {if_false}"
        )

    def codegen(context, builder, signature, args):
        values = (context.cast(builder, v, t, result) for v, t in zip(args[1:], signature.args[1:]))
        return builder.select(args[0], *values)

    return result(condition, if_true, if_false), codegen


def _float_intrinsic(builder, name, *operands):
    """A call of LLVM's intrinsic ``llvm.<name>`` on floats of one type (float
    or double, the type of the operands and of the result)."""
    kind = operands[0].type
    suffix = "f32" if isinstance(kind, ir.FloatType) else "f64"
    function_type = ir.FunctionType(kind, [kind] * len(operands))
    return builder.call(
        cgutils.get_or_insert_function(builder.module, function_type, f"llvm.{name}.{suffix}"), operands
    )


@intrinsic
def clamp(typingctx, x, low, high):
    """``x`` bounded to ``[low, high]`` (floats of one type, ``low <= high``, neither
    NaN); NaN gives ``high``.  LLVM's ``minnum``/``maxnum``, which on x86 are one
    ``minps``/``maxps`` each against a bound that is not NaN, where the comparisons
    and selects that spell the same in Python come out as compares and blends."""
    if x not in _BITS_OF or low != x or high != x:
        raise errors.NumbaTypeError(f"clamp takes three float32 or three float64, not {x}, {low}, {high}")

    def codegen(context, builder, signature, args):
        value, lowest, highest = args
        return _float_intrinsic(builder, "maxnum", _float_intrinsic(builder, "minnum", value, highest), lowest)

    return x(x, low, high), codegen


@intrinsic
def multiply_add(typingctx, a, b, c):
    """``a * b + c`` (floats of one type) by LLVM's ``fmuladd``: one fused
    instruction where the compile target has FMA, else a product and a sum,
    so only for operands whose result is the same either way (a product
    that is exact, say)."""
    if a not in _BITS_OF or b != a or c != a:
        raise errors.NumbaTypeError(f"multiply_add takes three float32 or three float64, not {a}, {b}, {c}")

    def codegen(context, builder, signature, args):
        return _float_intrinsic(builder, "fmuladd", *args)

    return a(a, b, c), codegen


@intrinsic
def odd_float32(typingctx, x):
    """The float64 ``x`` rounded to float32 *to odd*: toward zero, and the
    last bit set when that dropped anything (a value beyond float32's
    largest gives it, with the last bit set; NaN stays NaN).  Rounded on to
    a format at least two bits narrower, with ties to even, it gives what
    ``x`` itself rounds to there, as no float32 rounded to odd lies on a
    midpoint of that format unless ``x`` does.  The processor's conversion
    to nearest, then one step toward zero where it went away from it."""
    if x != types.float64:
        raise errors.NumbaTypeError(f"odd_float32 takes a float64, not {x}")

    def codegen(context, builder, signature, args):
        (value,) = args
        toward_zero = _narrowing(builder, value, 2, ir.FloatType(), 32, None)
        # the conversion and its way back as _narrowing made them: LLVM computes them once
        back = builder.fpext(builder.fptrunc(value, ir.FloatType()), ir.DoubleType())
        inexact = builder.zext(builder.fcmp_unordered("!=", back, value), ir.IntType(32))
        return builder.bitcast(builder.or_(toward_zero, inexact), ir.FloatType())

    return types.float32(x), codegen


def _narrowing(builder, value, direction, narrow, width, quiet_mask):
    """IR: the ``width``-bit code of the float ``value`` converted to the
    narrower IR float type ``narrow`` by the processor (``fptrunc``: to
    nearest even), moved one code in ``direction`` where that lies on the
    wrong side of ``value`` (see :func:`half_code`), a NaN's bits and-ed
    with ``quiet_mask`` (its payload below the quiet bit cleared; None
    leaves them)."""
    word = ir.IntType(width)
    narrowed = builder.fptrunc(value, narrow)
    code = builder.bitcast(narrowed, word)
    if direction:
        back = builder.fpext(narrowed, value.type)  # exact
        if direction == 2:  # toward zero: a magnitude above |value| steps down
            magnitudes = (_float_intrinsic(builder, "fabs", v) for v in (back, value))
            wrong = builder.fcmp_ordered(">", *magnitudes)
            step = word(-1)
        else:  # one code up (direction 1) or down (-1) in value: +-1 by the code's sign
            wrong = builder.fcmp_ordered("<" if direction == 1 else ">", back, value)
            negative = builder.icmp_signed("<", code, word(0))
            step = builder.select(negative, word(-direction), word(direction))
        code = builder.add(code, builder.select(wrong, step, word(0)))
    if quiet_mask is None:
        return code
    if isinstance(narrow, ir.HalfType):  # an integer test, in the code's own 16-bit lanes
        nan = builder.icmp_unsigned(">", builder.and_(code, word(0x7FFF)), word(0x7C00))
    else:  # a float comparison, one AVX2 instruction
        nan = builder.fcmp_unordered("uno", narrowed, narrowed)
    return builder.and_(code, builder.select(nan, word(quiet_mask), word(-1)))


def _narrowing_intrinsics(name, source, result, narrow, width, quiet_mask, finish):
    """``{direction: intrinsic}`` for the directions 0, 1, -1 and 2: ``name(x)``
    of a ``source`` float, :func:`_narrowing`'s code made the ``result`` by
    ``finish(builder, code)``."""

    def make(direction):
        def narrowing(typingctx, x):
            if x != source:
                raise errors.NumbaTypeError(f"{name} takes a {source}, not {x}")

            def codegen(context, builder, signature, args):
                return finish(builder, _narrowing(builder, args[0], direction, narrow, width, quiet_mask))

            return result(x), codegen

        narrowing.__name__ = narrowing.__qualname__ = f"{name}_{direction}"
        return intrinsic(narrowing)

    return {direction: make(direction) for direction in (0, 1, -1, 2)}


#: ``half_code(direction)(x)``: see :func:`half_code`.
_HALF_CODES = _narrowing_intrinsics(
    "half_code",
    types.float32,
    types.uint32,
    ir.HalfType(),
    16,
    ~0x01FF & 0xFFFF,
    lambda builder, code: builder.zext(code, ir.IntType(32)),
)


def half_code(direction):
    """The intrinsic ``f(x)``: the FLOAT16 code (as uint32) of the float32 ``x``
    by LLVM's ``fptrunc`` (to nearest, ties to even, overflow to infinity),
    its NaN made the quiet NaN of its sign (the payload bits below the quiet
    bit cleared); only where :func:`converts_half_in_hardware`, elsewhere
    LLVM calls a runtime function that Numba does not link.

    ``direction`` rounds in another mode instead: 1 toward +inf, -1 toward
    -inf, 2 toward zero.  The nearest value is one of the two neighbours of
    ``x`` (infinity past the largest), so where it lies on the wrong side of
    ``x`` (its value, converted back exactly, compared with ``x``) the other
    neighbour is the next code up or down in value: an overflow toward zero
    gives the largest finite value, a value just past it rounded up gives
    infinity, and infinity, zero and NaN never move.  Written as one piece of
    16-bit IR: in Numba's own arithmetic, which widens to 64 bits, LLVM kept
    part of the loop in 64-bit lanes."""
    return _HALF_CODES[direction]


#: ``single_value(direction)(x)``: see :func:`single_value`.
_SINGLE_VALUES = _narrowing_intrinsics(
    "single_value",
    types.float64,
    types.float32,
    ir.FloatType(),
    32,
    0xFFC00000 - (1 << 32),
    lambda builder, code: builder.bitcast(code, ir.FloatType()),
)


def single_value(direction):
    """The intrinsic ``f(x)``: the float64 ``x`` rounded to float32 by the
    processor's conversion (every x86-64 has it, in vector lanes too) and,
    for ``direction`` 1, -1 or 2 (toward +inf, -inf, zero), moved to the
    neighbour on the other side of ``x`` where the nearest lies on the wrong
    one, as :func:`half_code` does; a NaN is the quiet NaN of its sign (the
    conversion keeps the top of a float64 NaN's payload, the rule keeps
    none)."""
    return _SINGLE_VALUES[direction]


@intrinsic
def half_value(typingctx, code):
    """The float32 value of the FLOAT16 code in the low 16 bits of an integer
    (the bits above ignored), by LLVM's ``fpext`` (exact), a NaN made the quiet NaN of its
    sign (the payload bits below the quiet bit cleared, as
    :func:`~numbacast.engine.codecs.float_decoder` gives it); only where
    :func:`converts_half_in_hardware`."""
    if not isinstance(code, types.Integer):
        raise errors.NumbaTypeError(f"half_value takes an integer, not {code}")

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        bits = builder.bitcast(_half_as_float(builder, args[0], code.bitwidth), i32)
        nan = builder.icmp_unsigned(">", builder.and_(bits, i32(0x7FFFFFFF)), i32(0x7F800000))
        bits = builder.and_(bits, builder.select(nan, i32(0xFFC00000), i32(0xFFFFFFFF)))
        return builder.bitcast(bits, ir.FloatType())

    return types.float32(code), codegen


@intrinsic
def half_to_float(typingctx, code):
    """The float32 value of the FLOAT16 code in the low 16 bits of an integer
    (the bits above ignored), by LLVM's ``fpext`` alone: a NaN keeps its
    payload, so only for codes whose NaNs are FLOAT16's quiet NaN of their
    sign (which becomes FLOAT32's); only where :func:`converts_half_in_hardware`."""
    if not isinstance(code, types.Integer):
        raise errors.NumbaTypeError(f"half_to_float takes an integer, not {code}")

    def codegen(context, builder, signature, args):
        return _half_as_float(builder, args[0], code.bitwidth)

    return types.float32(code), codegen


def _half_as_float(builder, code, width):
    """IR: the float32 of the FLOAT16 code in the low 16 bits of the ``width``-bit integer ``code`` (``fpext``)."""
    i16 = ir.IntType(16)
    bits16 = builder.trunc(code, i16) if width > 16 else builder.zext(code, i16) if width < 16 else code
    return builder.fpext(builder.bitcast(bits16, ir.HalfType()), ir.FloatType())


def _probe_assembly(function_ir):
    """The assembly LLVM makes of the function ``function_ir`` (LLVM IR text)
    for the CPU Numba compiles for (``NUMBA_CPU_NAME`` and
    ``NUMBA_CPU_FEATURES``, else the host)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    name = config.CPU_NAME or llvm.get_host_cpu_name()
    features = config.CPU_FEATURES if config.CPU_FEATURES is not None else llvm.get_host_cpu_features().flatten()
    machine = llvm.Target.from_triple(llvm.get_process_triple()).create_target_machine(cpu=name, features=features)
    return machine.emit_assembly(llvm.parse_assembly(function_ir))


@functools.cache
def converts_half_in_hardware():
    """Whether the CPU Numba compiles for converts float32 to FLOAT16 by an
    instruction (F16C, AVX-512 FP16): LLVM compiles a probe for it and is
    asked whether it calls a runtime function instead."""
    assembly = _probe_assembly(
        "define i16 @probe(float %x) {\n  %h = fptrunc float %x to half\n"
        "  %b = bitcast half %h to i16\n  ret i16 %b\n}\n"
    )
    return not any(word in assembly for word in _HALF_RUNTIME_CALLS)


@functools.cache
def narrows_to_bytes_by_packs():
    """Whether the CPU Numba compiles for narrows a vector of int32 to bytes
    by saturating packs (AVX2: ``vpackusdw``, ``vpackuswb``), which need the
    values known to fit a byte or masked first, rather than by a truncating
    instruction (AVX-512's ``vpmovdb``): LLVM compiles a probe and is asked
    whether it packs."""
    assembly = _probe_assembly(
        "define <16 x i8> @probe(<16 x i32> %x) {\n  %t = trunc <16 x i32> %x to <16 x i8>\n  ret <16 x i8> %t\n}\n"
    )
    return "packus" in assembly


@functools.cache
def converts_to_int64_in_vectors():
    """Whether the CPU Numba compiles for converts a vector of float64 to
    int64 by an instruction (AVX-512DQ's ``vcvttpd2qq``), where AVX2 has
    none and a loop that converts does so element by element: LLVM compiles
    a probe and is asked whether it converted one element at a time
    (``cvttsd2si``, as for every x86-64 without AVX-512DQ)."""
    assembly = _probe_assembly(
        "define <4 x i64> @probe(<4 x double> %x) {\n  %t = fptosi <4 x double> %x to <4 x i64>\n"
        "  ret <4 x i64> %t\n}\n"
    )
    return "cvttsd2si" not in assembly


#: What the probe's assembly holds where the conversion is a runtime function (the
#: names compiler-rt and libgcc give it, x86's call instruction).
_HALF_RUNTIME_CALLS = ("__truncsfhf2", "__gnu_f2h_ieee", "call")
