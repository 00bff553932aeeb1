"""A user's own ``@njit(parallel=True)`` loops over ml_dtypes elements, timed
against ``numbacast.cast`` of the same conversion (the "user-loop" group of
``python -m numbacast bench`` and ``benchmarks/bench_user_loop.py``).

Each loop reads an element (or a float32), computes in float32 -- a multiply
by a scale of 1, passed at run time so that it cannot be folded away -- and
stores into another array, as a quantisation kernel would.  An assignment
``out[i] = v`` rounds as NumPy does, which is ``numbacast.cast`` with
``saturate=False``; that is the cast each loop is compared with, and both
write into an output array allocated once.
"""

import numpy as np
from numba import njit, prange

from numbacast import FLOAT, cast

from .baselines import sample


@njit(parallel=True, nogil=True, cache=True)
def store_loop(x, scale, out):
    """float32 in, elements out."""
    for i in prange(x.size):
        out[i] = x[i] * scale


@njit(parallel=True, nogil=True, cache=True)
def load_loop(a, scale, out):
    """Elements in, float32 out."""
    for i in prange(a.size):
        out[i] = np.float32(a[i]) * scale


@njit(nogil=True, cache=True)
def array_size(a):
    """Next to nothing: a call of it costs what calling an ``@njit`` function
    costs per array argument (typing it included)."""
    return a.size


def call_with(dtype):
    """A warm call of :func:`array_size` on a 1-element array of ``dtype`` (NumPy's or ml_dtypes')."""
    a = np.zeros(1, dtype)
    array_size(a)  # compile, or load from the disk cache
    return lambda: array_size(a)


def cast_options(target):
    """The options that make ``numbacast.cast`` round as an assignment."""
    return {"saturate": False} if target.name.startswith("float8") else {}


def user_loop(source, target, size):
    """The loop for ``source`` -> ``target`` (at least one of them an ml_dtypes type), into a reused output."""
    x = sample(source, size)
    out = np.empty(x.shape, target.storage)
    scale = np.float32(1.0)
    loop = store_loop if source is FLOAT else load_loop
    loop(x, scale, out)  # compile, or load from the disk cache
    return lambda: loop(x, scale, out)


def cast_into(source, target, size):
    """``numbacast.cast`` of the same conversion into a reused output."""
    x = sample(source, size)
    options = cast_options(target)
    out = cast(x, target, **options)
    return lambda: cast(x, target, out=out, **options)


def same_bits(source, target, size):
    """Whether the loop gives the bits of the cast (no NaN in the samples: NaN is where they may differ)."""
    x = sample(source, size)
    expected = cast(x, target, **cast_options(target))
    got = np.empty(x.shape, target.storage)
    (store_loop if source is FLOAT else load_loop)(x, np.float32(1.0), got)
    return np.array_equal(got.view(f"u{got.itemsize}"), expected.view(f"u{expected.itemsize}"))
