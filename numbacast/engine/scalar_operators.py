"""Binary operators on numbers typed without NumPy's array rules while
numbacast's kernels compile.

Numba types an operator such as ``a >> b`` by trying each typing template
registered for it.  One of them types the operator as the NumPy ufunc it
stands for (``right_shift``), for arrays: it looks the arguments' types up
in NumPy's table of the ufunc's loops and only then rejects a call without
an array.  Numba's own templates of the unary and in-place operators
reject such calls first; the binary one does not, so every operator on two
numbers pays for the lookup.  The kernels' code is operators on numbers,
none of which takes an array: a first FLOAT -> STRING cast types some
1,100 of them, and on the Zen 1 EPYC of docs/contributing.md (in a fresh
process with an empty cache, Numba imported) it took 2.95-3.05 s and takes
2.65-2.8 s; a first STRING -> FLOAT cast 3.8-3.9 s and 3.5 s.

:func:`scalar_operators_typed_directly` marks a numbacast kernel's
compilation (and the helpers compiled inside it): while it runs, that
template rejects a binary operator without an array argument before the
lookup, as it would after it (the types it gives are the same).  Code a user
compiles is typed as Numba types it.
"""

import contextlib
import threading

from numba.core import types
from numba.core.typing import npydecl


class _Marks(threading.local):
    #: How many numbacast kernels are compiling in this thread.
    kernels = 0


_marks = _Marks()


@contextlib.contextmanager
def scalar_operators_typed_directly():
    """While a numbacast kernel compiles in this thread: binary operators
    without an array argument skip NumPy's ufunc rules."""
    _marks.kernels += 1
    try:
        yield
    finally:
        _marks.kernels -= 1


_numba_generic = npydecl.NumpyRulesArrayOperator.generic


def _generic(self, args, kws):
    """Numba's typing of a binary operator by NumPy's ufunc rules, which
    accepts only calls with an array: without one, None at once in a
    numbacast kernel."""
    if _marks.kernels and not any(isinstance(arg, types.ArrayCompatible) for arg in args):
        return None
    return _numba_generic(self, args, kws)


npydecl.NumpyRulesArrayOperator.generic = _generic  # type: ignore[method-assign]
