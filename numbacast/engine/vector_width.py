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
generated encoders compute, see
:attr:`~numbacast.engine.conversion.Conversion.wide_vectors`), and then
every function compiled for it (the kernel, the body of its ``prange``
loop, the helpers linked into it) carries LLVM's function attribute
``"prefer-vector-width"="512"``.  On a CPU without AVX-512, or with kernels
compiled for one (``NUMBA_CPU_NAME=haswell NUMBA_CPU_FEATURES=``), 512-bit
vectors do not exist and the attribute changes nothing: the same ``ymm``
code as without it.  Code a user compiles (``@njit`` functions calling
:func:`numbacast.cast`) is not touched.

Numba has no option for a function attribute; :class:`WideVectorCompiler`
sets it while it compiles, in the one step every compiled module passes
through after lowering (the target context's ``post_lowering``), for the
modules of that compilation only.
"""

import threading

from llvmlite import ir
from numba.core.cpu import CPUContext
from numba.core.dispatcher import _FunctionCompiler  # type: ignore[attr-defined]

#: The LLVM function attribute the kernels carry.
PREFER_512 = '"prefer-vector-width"="512"'


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


class _Compiling(threading.local):
    """For each compilation of a numbacast kernel under way in this thread,
    innermost last, whether it asks for 512-bit vectors (Numba compiles one
    thing at a time, under its global compiler lock; a kernel's compilation
    may compile others inside it)."""

    def __init__(self):
        self.wide = []


_compiling = _Compiling()
_numba_post_lowering = CPUContext.post_lowering


def _post_lowering(self, mod, library):
    """Numba's ``post_lowering``, then :func:`prefer_wide_vectors` when the
    innermost compilation under way asks for it (installed once, on import)."""
    _numba_post_lowering(self, mod, library)
    if _compiling.wide and _compiling.wide[-1]:
        prefer_wide_vectors(mod)


CPUContext.post_lowering = _post_lowering  # type: ignore[method-assign]


def asks_for_wide_vectors(args):
    """Whether a kernel compiled for the Numba types ``args`` asks for 512-bit vectors."""
    return any(getattr(arg, "wide_vectors", False) for arg in args)


class WideVectorCompiler(_FunctionCompiler):
    """Numba's compiler of a dispatcher's functions, giving every module it
    lowers :data:`PREFER_512` (:func:`prefer_wide_vectors`) when its
    arguments ask for it (:func:`asks_for_wide_vectors`)."""

    def _compile_core(self, args, return_type):
        _compiling.wide.append(asks_for_wide_vectors(args))
        try:
            return super()._compile_core(args, return_type)
        finally:
            _compiling.wide.pop()
