"""512-bit vectors for numbacast's kernels on CPUs with AVX-512.

LLVM vectorises loops for the CPU Numba compiles for, but on every Intel
and AMD CPU with AVX-512 its default is to prefer 256-bit (``ymm``) vectors
(the tuning flag ``prefer-256-bit``), keeping the 512-bit (``zmm``) ones for
code that asks for them: Skylake-era server chips lowered their clock for
heavy 512-bit arithmetic.  An encoder into a narrow float type is a run of
some twenty integer and float instructions per element between one load
and one store, and on the CPUs measured (docs/benchmarks.md) such a kernel
spends its time issuing them, not waiting for memory: 512-bit vectors
halve the instructions per element, and the cast runs 10-30% faster.

Not every kernel gains: a decode (FLOAT8E4M3FN -> FLOAT, INT8 -> FLOAT)
or a conversion the processor does in one instruction (DOUBLE -> FLOAT,
FLOAT -> FLOAT16) has little work per element and writes as many bytes as
it reads or more, and there 512-bit loads and stores, which cross a cache
line at every access of an array NumPy aligned to 16 bytes only, made it
5-30% slower.  So a kernel asks for 512-bit vectors when one of its
compile-time arguments says so (a Numba type whose ``wide_vectors`` is
true: the conversions into the float types whose codes the engine's
generated encoders compute, FLOAT into the one-byte and smaller integer
types, and stochastic rounding into any integer type, see
:attr:`~numbacast.engine.conversion.Conversion.wide_vectors`), and then
every function compiled for it (the kernel, the body of its ``prange``
loop, the helpers linked into it) carries LLVM's function attribute
``"prefer-vector-width"="512"``.  On a CPU without AVX-512, or with kernels
compiled for one (``NUMBA_CPU_NAME=haswell NUMBA_CPU_FEATURES=``), 512-bit
vectors do not exist and the attribute changes nothing: the same ``ymm``
code as without it.  Code a user compiles (``@njit`` functions calling
:func:`numbacast.cast`) is not touched.

The loop of such a kernel that converts element after element (a function
marked by :func:`element_loop`) is also vectorised :data:`LOOP_LANES` elements
at a time when the conversion reads float32 and writes one-byte codes
(:attr:`~numbacast.engine.conversion.Conversion.loop_lanes`; LLVM's loop
hint ``llvm.loop.vectorize.width``).  LLVM would otherwise take as many
lanes as one register holds of the widest type, 8 float32 in a ``ymm``
register, and narrow each 8 codes to bytes by four shuffles and a store;
32 at a time, it narrows four registers by packs and permutes into one
store, and counts the loop's own steps once per 32 elements.  With AVX2
code that made those casts 4-10% faster (stochastic rounding 5-10%); with
512-bit vectors, two registers a step, no slower (16 lanes with AVX2 code,
on the Zen 4 host: FLOAT6E2M3 and FLOAT4E2M1 0.94x the time of 32,
FLOAT8E4M3FN the same, FLOAT8E5M2 1.02-1.04x; not taken).  An element loop
may name lanes of its own: block quantisation's loop over a block of 16
takes 16.

Numba has no option for a function attribute or a loop hint:
:class:`WideVectorCompiler` sets them while it compiles, in the one step
every compiled module passes through after lowering (the target context's
``post_lowering``), for the modules of that compilation only.
"""

import threading

from llvmlite import ir
from numba.core import itanium_mangler
from numba.core.cpu import CPUContext
from numba.core.dispatcher import _FunctionCompiler  # type: ignore[attr-defined]

#: The LLVM function attribute the kernels carry.
PREFER_512 = '"prefer-vector-width"="512"'

#: The elements an element loop converts per step when its conversion asks for it.
LOOP_LANES = 32


class _KernelFunctionAttributes(ir.values.FunctionAttributes):
    """llvmlite's function attributes, which also accept :data:`PREFER_512`."""

    _known = ir.values.FunctionAttributes._known | {PREFER_512}


def prefer_wide_vectors(module):
    """Give every function defined in the llvmlite ``module`` the attribute :data:`PREFER_512`."""
    for function in module.functions:
        if function.is_declaration or PREFER_512 in function.attributes:
            continue
        attributes = _KernelFunctionAttributes(function.attributes)
        attributes.alignstack = function.attributes.alignstack
        attributes.personality = function.attributes.personality
        attributes.add(PREFER_512)
        function.attributes = attributes


#: The symbol prefixes of the functions :func:`element_loop` marked, each with its lanes (0: the kernel's).
_ELEMENT_LOOPS: dict = {}


def element_loop(compiled, lanes=0):
    """Mark ``compiled``, an ``@njit`` dispatcher or the function an
    ``@overload`` returns, as an element loop (see the module's text): its
    loops take ``lanes`` vector lanes, or (0) the lanes of the kernel
    compiling it, in a kernel that asks for lanes.  Functions are told
    apart by their qualified names.  Returns ``compiled``."""
    function = getattr(compiled, "py_func", compiled)
    qualified = itanium_mangler.mangle_identifier(f"{function.__module__}.{function.__qualname__}")
    _ELEMENT_LOOPS["_Z" + qualified.removesuffix("E")] = lanes  # then its ABI tags ("B") or its arguments ("E")
    return compiled


def _element_loop_lanes(function):
    """The lanes :func:`element_loop` gave the function whose code is the
    llvmlite ``function`` (0: the kernel's), or None for one it did not mark."""
    name = function.name
    for prefix, lanes in _ELEMENT_LOOPS.items():
        if name.startswith(prefix) and name[len(prefix) : len(prefix) + 1] in ("B", "E"):
            return lanes
    return None


def vectorize_loops(module, lanes):
    """Hint LLVM to vectorise each loop of the element loops defined in the
    llvmlite ``module`` ``lanes`` elements at a time (or as many as
    :func:`element_loop` gave one): the branch back to a loop's head gets
    the loop metadata ``llvm.loop.vectorize.width``.

    Numba names the blocks of a function by the bytecode offset of the
    statements they lower, ``B<offset>``, and the blocks it adds inside one
    statement after it (``B<offset>.if``, ...): a branch back to a loop's
    head is one to a ``B<offset>`` from a block of that offset or a later one.
    Returns whether it hinted any loop."""
    hinted = False
    for function in module.functions:
        own = None if function.is_declaration else _element_loop_lanes(function)
        if own is None:
            continue
        for block in function.blocks:
            source = _offset(block.name)
            targets = [target for target in block.terminator.operands if isinstance(target, ir.Block)]
            if source is not None and any(_is_head(target.name, source) for target in targets):
                block.terminator.set_metadata("llvm.loop", _loop_hint(module, own or lanes))
                hinted = True
    return hinted


def _offset(name):
    """The bytecode offset of the statement a Numba block named ``name`` lowers, or None."""
    head = name.split(".", 1)[0]
    return int(head[1:]) if head[:1] == "B" and head[1:].isdigit() else None


def _is_head(name, source):
    """Whether a branch from a block of offset ``source`` to the block ``name`` goes back to a statement's head."""
    offset = _offset(name)
    return offset is not None and name == f"B{offset}" and offset <= source


def _loop_hint(module, lanes):
    """A new loop's metadata (whose first operand is itself, as LLVM requires)
    asking for ``lanes`` vector lanes."""
    width = module.add_metadata(
        [ir.MetaDataString(module, "llvm.loop.vectorize.width"), ir.Constant(ir.IntType(32), lanes)]
    )
    loop = ir.values.MDValue(module, [width], name=str(len(module.metadata)))
    loop.operands = (loop, width)
    return loop


class _Compiling(threading.local):
    """For each compilation of a numbacast kernel under way in this thread,
    innermost last, ``(wide, lanes)``: whether it asks for 512-bit vectors
    and the lanes of its element loops, 0 for LLVM's choice (Numba compiles
    one thing at a time, under its global compiler lock; a kernel's
    compilation may compile others inside it)."""

    def __init__(self):
        self.kernels = []


_compiling = _Compiling()
_numba_post_lowering = CPUContext.post_lowering


def _post_lowering(self, mod, library):
    """Numba's ``post_lowering``, then :func:`prefer_wide_vectors` and
    :func:`vectorize_loops` as the innermost compilation under way asks
    (installed once, on import)."""
    _numba_post_lowering(self, mod, library)
    if _compiling.kernels:
        wide, lanes = _compiling.kernels[-1]
        if wide:
            prefer_wide_vectors(mod)
        if lanes and vectorize_loops(mod, lanes):
            library.keeps_loop_hints = True  # see linking.LinkedOnlyLibrary


CPUContext.post_lowering = _post_lowering  # type: ignore[method-assign]


def asks_for_wide_vectors(args):
    """Whether a kernel compiled for the Numba types ``args`` asks for 512-bit vectors."""
    return any(getattr(arg, "wide_vectors", False) for arg in args)


def loop_lanes(args):
    """The lanes of the element loops of a kernel compiled for the Numba types ``args`` (0: LLVM's choice)."""
    return max((getattr(arg, "loop_lanes", 0) for arg in args), default=0)


class WideVectorCompiler(_FunctionCompiler):
    """Numba's compiler of a dispatcher's functions, giving every module it
    lowers :data:`PREFER_512` (:func:`prefer_wide_vectors`) when its
    arguments ask for it (:func:`asks_for_wide_vectors`), and the loop hints
    of :func:`vectorize_loops` when they ask for lanes (:func:`loop_lanes`)."""

    def _compile_core(self, args, return_type):
        _compiling.kernels.append((asks_for_wide_vectors(args), loop_lanes(args)))
        try:
            return super()._compile_core(args, return_type)
        finally:
            _compiling.kernels.pop()
