"""The arguments of numbacast's functions in ``@njit`` code, as its overloads read and check them.

An overload (:mod:`~numbacast.integrations.njit`, :mod:`~numbacast.integrations.scalar`,
:mod:`~numbacast.integrations.mx_njit`) sees the types of a call's arguments
when the user's function compiles: the options numbacast compiles in
(``saturate``, ``rounding``, ``stochastic_bits``, ...) must be literal
constants there (:func:`literal`), and are checked by the checks of the
Python call.  Their TypeError or ValueError reaches the user as the Python
call raises it, the same class and message: Numba lets an exception that is
not one of its own leave the typing of a call as it is (it wraps only its
own errors into a TypingError, whose text buries the message under the
candidates it tried).  Every overload here that checks options is declared
``prefer_literal=True``: Numba types the call with its literal arguments
first, so a value is judged as written (``saturate=2``, not ``int64``), and
an error raised then is final.  Values known only when the function runs (a
seed, a block size, a tensor scale) are checked in the compiled code, which
raises :class:`WordedError` with the Python call's message.
"""

import numpy as np
from numba import types
from numba.extending import overload

from ..engine.cache import OVERLOAD_OPTIONS, helper_jitable
from ..engine.checks import SEED_RANGE, check_stochastic
from ..engine.rounding import seed_key
from ..engine.stochastic import check_random_bits
from .numba_types import as_dtype


def literal(value, name):
    """The Python value of a literal (or omitted) argument; TypeError for a
    value known only when the function runs (in an overload typed with its
    literal arguments first, nothing better can come)."""
    if not isinstance(value, types.Type):  # the default of an omitted argument
        return value
    if isinstance(value, types.Omitted):
        return value.value
    if isinstance(value, types.Literal):
        return value.literal_value
    if isinstance(value, types.NoneType):
        return None
    raise TypeError(f"numbacast in @njit code needs {name} as a literal constant (written in the call), not {value}")


def absent(value):
    """Whether an optional argument was left out (or is None)."""
    return value is None or isinstance(value, (types.NoneType, types.Omitted))


class WordedError(ValueError):
    """A ValueError whose message Python words, ``template.format(*values)``,
    from the values ``@njit`` code raises it with: the Python call's message,
    where writing it in compiled code compiled Numba's integer-to-text and
    string joining (2.2 s of a first ``@njit`` stochastic cast)."""

    def __init__(self, template, *values):
        super().__init__(template.format(*values))


def check_seed(seed):
    """ValueError, as the Python call raises it, for a negative ``seed`` (``@njit`` only)."""


@overload(check_seed, jit_options=OVERLOAD_OPTIONS)
def _overload_check_seed(seed):
    if isinstance(seed, types.Integer) and seed.signed:

        def check(seed):
            if seed < 0:
                raise WordedError(SEED_RANGE, seed)

        return check
    return lambda seed: None


@helper_jitable
def key(seed):
    """The stochastic key of the integer ``seed``, checked (``@njit`` only)."""
    check_seed(seed)
    return seed_key(np.uint64(seed))


@helper_jitable
def no_key(seed):
    """The key of a cast that draws no random numbers of its own (unused)."""
    return np.uint64(0)


def stochastic_options(rounding, seed, stochastic_bits, random_bits, x):
    """``stochastic_bits`` checked as the Python call checks it (None when not
    stochastic): ``seed`` and ``random_bits`` are types here, their values
    are checked at run time."""
    if not (absent(seed) or isinstance(seed, types.Integer)):
        raise TypeError(f"seed must be an integer, not {seed}")
    seed_value = None if absent(seed) else literal(seed, "seed") if isinstance(seed, types.Literal) else 0
    random_value = None
    if not absent(random_bits):
        if not isinstance(random_bits, types.Array):
            raise TypeError(f"random_bits must be an array of unsigned integers, not {random_bits}")
        random_value = np.empty((0,) * random_bits.ndim, as_dtype(random_bits.dtype))
        check_random_bits(random_value, random_value.shape, 64)  # its dtype, as in Python
        if random_bits.ndim != x.ndim:
            raise ValueError(f"random_bits has {random_bits.ndim} dimensions; the input has {x.ndim}")
    bits_value = literal(stochastic_bits, "stochastic_bits")
    return check_stochastic(rounding, seed_value, bits_value, random_value)[1]


def require_random_source(conversion, seed, random_bits, wanted="seed= (an integer) or random_bits="):
    """A stochastic ``conversion`` in ``@njit`` code needs ``seed`` (or
    ``random_bits``): numbacast draws no seed there (the only source would be
    the user's ``np.random``, whose draws it would use up)."""
    if conversion.stochastic and absent(seed) and absent(random_bits):
        raise TypeError(
            f"rounding='stochastic' in @njit code needs {wanted}: numbacast does not draw a seed of its own "
            "there, which would use up draws of your np.random"
        )
