"""A user's ``@njit(parallel=True)`` loop over ml_dtypes elements, and
``numbacast.cast`` of the same conversion, 16M elements into a reused output
(the "user-loop" group of ``python -m numbacast bench``; target: the loop
within 1.5x of the cast), and what a call of a user's function costs per
array argument of an ml_dtypes dtype, beside one of uint8."""

import ml_dtypes
import numpy as np

from . import named
from .harness import user_loops
from .harness.bench import DEFAULT_SIZE, USER_LOOP_PAIRS

PAIRS = named(USER_LOOP_PAIRS)


class UserLoop:
    """``time_user_loop`` over ``time_cast`` is the bench's ratio."""

    params = [list(PAIRS)]
    param_names = ["pair"]
    timeout = 300

    def setup(self, pair):
        source, target = PAIRS[pair]
        self.loop = user_loops.user_loop(source, target, DEFAULT_SIZE)
        self.cast = user_loops.cast_into(source, target, DEFAULT_SIZE)
        self.loop(), self.cast()  # compile, or load from the disk cache

    def time_user_loop(self, pair):
        self.loop()

    def time_cast(self, pair):
        self.cast()


class UserCallOverhead:
    """A warm call of an ``@njit`` function taking a 1-element array: Numba
    types a uint8 array in C, an ml_dtypes one in Python (numbacast keeps
    the types it gives)."""

    params = [["uint8", "bfloat16", "float4_e2m1fn"]]
    param_names = ["dtype"]

    def setup(self, dtype):
        self.call = user_loops.call_with(
            np.dtype(np.uint8) if dtype == "uint8" else np.dtype(getattr(ml_dtypes, dtype))
        )

    def time_call(self, dtype):
        self.call()
