"""Compiled code that is only ever linked into a kernel: no optimisation or
machine code of its own.

Numba optimises each library it compiles as a whole and emits its machine
code, then links it into every library that calls it, whose own
compilation optimises the linked whole again and emits it again.  Code
that never runs on its own pays for both twice.  Two kinds of it are
compiled into a :class:`LinkedOnlyLibrary`, which skips them:

* the helpers the kernels call (:func:`~numbacast.engine.cache.helper_njit`)
  and numbacast's ``@overload`` implementations;
* the parts Numba compiles for the ``prange`` loop of a numbacast parallel
  kernel (:func:`parfor_parts_linked_only`): the loop's body, a function of
  its own, and the two wrappers that hand it to the thread pool.  The
  kernel links all three and emits them once, in its own machine code; the
  body also goes without the CPython wrapper Numba gives it (0.3-0.45 s off
  each parallel kernel's compilation on the Zen 1 EPYC of
  docs/contributing.md, the vector code of its loops the same).

Numba has no option for either: :func:`parfor_parts_linked_only` marks a
numbacast parallel kernel's compilation, and two of Numba's functions,
wrapped once on import, make their libraries linked-only while it runs:
the compilation of a ``prange`` loop's body (``compile_ir`` with Numba's
``ParforGufuncCompiler``) and the lowering of the call to it
(``call_parallel_gufunc``).  Every other ``parallel=True`` function,
a user's included, compiles as Numba does.
"""

import contextlib
import threading

from llvmlite import binding as llvm
from numba.core import compiler
from numba.core.codegen import JITCodeLibrary
from numba.parfors import parfor_lowering


class LinkedOnlyLibrary(JITCodeLibrary):
    """Compiled code that never runs on its own, only linked into the
    kernels that call it, whose compilation optimises the linked whole and
    emits its machine code.  So its own compilation skips both.  A helper
    whose loops carry hints (``keeps_loop_hints``, set by
    :mod:`~numbacast.engine.vector_width`) also skips the passes Numba runs
    on each function as it is added: they may merge a loop's blocks and drop
    its hint before the kernel's optimisation reads it."""

    keeps_loop_hints = False

    def _optimize_functions(self, ll_module):
        if self.keeps_loop_hints:
            ll_module.data_layout = self._codegen._data_layout
        else:
            super()._optimize_functions(ll_module)

    def _optimize_final_module(self):
        pass

    def _finalize_final_module(self):
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        # Numba stores each function's environment pointer in a global of the
        # machine code; linked-only code never reads its own (a kernel loaded
        # from the disk cache leaves it null too), so only the globals are emitted.
        environments = "".join(
            f'@"{variable.name}" = common global i8* null\n'
            for variable in self._final_module.global_variables
            if variable.name.startswith("_ZN08NumbaEnv")
        )
        self._codegen._add_module(llvm.parse_assembly(environments))
        self._finalized = True


def linked_only_library(codegen, name):
    """A new :class:`LinkedOnlyLibrary` of Numba's ``codegen``, named ``name``."""
    library = LinkedOnlyLibrary(codegen, name)
    library.enable_object_caching()
    return library


class _Marks(threading.local):
    #: How many numbacast parallel kernels are compiling in this thread.
    parallel_kernels = 0


_marks = _Marks()


@contextlib.contextmanager
def parfor_parts_linked_only():
    """While a numbacast parallel kernel compiles in this thread: its
    ``prange`` loop's body and wrappers go into linked-only libraries."""
    _marks.parallel_kernels += 1
    try:
        yield
    finally:
        _marks.parallel_kernels -= 1


_numba_compile_ir = compiler.compile_ir
_numba_call_parallel_gufunc = parfor_lowering.call_parallel_gufunc


def _compile_ir(typingctx, targetctx, func_ir, args, return_type, flags, locals, **options):
    """Numba's ``compile_ir``; a numbacast ``prange`` loop's body into a
    linked-only library, and without the CPython wrapper Numba gives it (it
    is only ever called from its own wrapper, compiled code)."""
    pipeline = options.get("pipeline_class")
    if (
        _marks.parallel_kernels
        and options.get("library") is None
        and getattr(pipeline, "__name__", "") == "ParforGufuncCompiler"
    ):
        options["library"] = linked_only_library(targetctx.codegen(), func_ir.func_id.func_qualname)
        flags = flags.copy()
        flags.no_cpython_wrapper = True
    return _numba_compile_ir(typingctx, targetctx, func_ir, args, return_type, flags, locals, **options)


def _call_parallel_gufunc(lowerer, *args, **kwargs):
    """Numba's ``call_parallel_gufunc``; in a numbacast kernel, the libraries
    of the wrappers it builds linked-only."""
    codegen = lowerer.context.codegen()
    if not _marks.parallel_kernels or "create_library" in vars(codegen):  # not numbacast's, or already linked-only
        return _numba_call_parallel_gufunc(lowerer, *args, **kwargs)
    codegen.create_library = lambda name, **options: linked_only_library(codegen, name)
    try:
        return _numba_call_parallel_gufunc(lowerer, *args, **kwargs)
    finally:
        del codegen.create_library


compiler.compile_ir = _compile_ir  # type: ignore[assignment]
parfor_lowering.call_parallel_gufunc = _call_parallel_gufunc
