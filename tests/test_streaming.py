"""Large outputs written by nontemporal stores (numbacast.engine.streaming):
every element written once and right, at every alignment of the output and
at lengths around the run boundaries, against NumPy's and ml_dtypes'
conversions (independent of numbacast); and which conversions stream, into
which outputs."""

import ml_dtypes
import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

import numbacast
from numbacast.engine import arrays, kernels
from numbacast.engine.conversion import Conversion
from numbacast.engine.prefetch import RUN_ELEMENTS
from numbacast.engine.streaming import NEW_PAGES_MIN_BYTES, PAGE_BYTES, STREAM_MIN_BYTES, stream_copy, window

GUARD = 0xA5


def _into_guarded(x, target_dtype, offset):
    """The cast of ``x`` into an output starting ``offset`` bytes into a buffer
    (so aligned to 16 bytes or not), with guard bytes on both sides; returns
    (result, guards untouched)."""
    size = x.size * np.dtype(target_dtype).itemsize
    buffer = np.full(size + offset + 64, GUARD, np.uint8)
    out = buffer[offset : offset + size].view(target_dtype)
    numbacast.cast(x, np.dtype(target_dtype), out=out)
    return out, (buffer[:offset] == GUARD).all() and (buffer[offset + size :] == GUARD).all()


@pytest.mark.parametrize(
    "source, target, expected",
    [
        (np.float32, np.float16, lambda x: x.astype(np.float16)),
        (np.float32, ml_dtypes.bfloat16, lambda x: x.astype(ml_dtypes.bfloat16)),
        (np.float64, np.float32, lambda x: x.astype(np.float32)),
        (np.int32, np.int8, lambda x: x.astype(np.int8)),
        (np.int64, np.int32, lambda x: x.astype(np.int32)),
        ("whole", np.uint8, lambda x: x.astype(np.uint8)),
    ],
    ids=["float-float16", "float-bfloat16", "double-float", "int32-int8", "int64-int32", "float-uint8"],
)
def test_streamed_outputs_hold_every_element_at_every_alignment(source, target, expected):
    """Outputs from STREAM_MIN_BYTES up; the output 16-byte aligned or off by
    each multiple of its item size below 16, the length a whole number of
    runs or not; the bytes around it untouched."""
    itemsize = np.dtype(target).itemsize
    rng = np.random.default_rng(11)
    base = STREAM_MIN_BYTES // itemsize
    for n in (base, base + 1, base + RUN_ELEMENTS - 1, base + 5 * RUN_ELEMENTS + 13):
        if source in (np.int32, np.int64):  # int32's range: INT8 keeps their low bits
            x = rng.integers(-(2**31), 2**31, n).astype(source)
        elif source == "whole":  # float32 whole numbers within uint8: NumPy's astype is exact there
            x = rng.integers(0, 256, n).astype(np.float32)
        else:
            x = (rng.standard_normal(n) * 100).astype(source)
        want = expected(x)
        for offset in range(0, 16, itemsize):
            got, guarded = _into_guarded(x, target, offset)
            assert np.array_equal(got.view(f"u{itemsize}"), want.view(f"u{itemsize}")), (n, offset)
            assert guarded, (n, offset)
    assert np.array_equal(numbacast.cast(x, np.dtype(target)).view(f"u{itemsize}"), want.view(f"u{itemsize}"))


@njit
def _copy(dst, at, values, start, count):
    stream_copy(dst, at, values, start, count)


def test_stream_copy_writes_exactly_its_part():
    """Every place and length around the 16-byte vectors, from any place of
    the values, in a zeroed array."""
    values = np.arange(1, 240, dtype=np.uint16)
    for at in range(0, 20):
        for start in (0, 1, 8, 13):
            for count in (0, 1, 7, 8, 9, 15, 16, 17, 64, 199 - 20):
                dst = np.zeros(256, np.uint16)
                _copy(dst, at, values, start, count)
                want = np.zeros(256, np.uint16)
                want[at : at + count] = values[start : start + count]
                assert np.array_equal(dst, want), (at, start, count)


def test_stream_copy_takes_arrays_of_one_dtype():
    with pytest.raises(TypingError, match="one dtype"):
        _copy(np.zeros(4, np.uint16), 0, np.zeros(4, np.uint8), 0, 1)
    with pytest.raises(TypingError, match="C-contiguous"):
        _copy(np.zeros(8, np.uint16)[::2], 0, np.zeros(4, np.uint16), 0, 1)


@njit
def _window(scratch, dst, first):
    return window(scratch, dst, first)


def test_the_scratch_window_lies_half_a_page_from_the_run():
    """For every run start, the window's address is half a page from the
    run's modulo a page, and the window fits in the scratch array."""
    for dtype in (np.uint8, np.uint16, np.float32, np.float64):
        itemsize = np.dtype(dtype).itemsize
        dst = np.empty(10_000, dtype)
        scratch = np.empty(512 + PAGE_BYTES // itemsize, dtype)
        for first in range(0, 3000, 37):
            at = _window(scratch, dst, np.uint64(first))
            gap = (scratch.ctypes.data + at * itemsize - (dst.ctypes.data + first * itemsize)) % PAGE_BYTES
            assert gap == PAGE_BYTES // 2 and at + 512 <= scratch.size, (dtype, first, at)


def test_the_conversions_that_stream_are_the_light_narrowing_ones():
    """Moves, hardware conversions and truncations into narrower elements
    stream; outputs as wide as their source or wider, and the conversions
    that compute, do not (Conversion.streams_output)."""

    def streams(source, target):
        return Conversion.make(numbacast.resolve(source), numbacast.resolve(target)).streams_output

    light = [("float", "float16"), ("double", "float"), ("int32", "int4"), ("int64", "int32"), ("int32", "uint8")]
    light += [("float", "bfloat16")]  # cut short by one addition
    wide = [("int8", "float"), ("bfloat16", "float"), ("float", "double"), ("int32", "float"), ("int64", "double")]
    wide += [("float8e4m3fn", "double"), ("float4e2m1", "double"), ("uint8", "int32")]
    computed = [("double", "bfloat16"), ("float", "float8e4m3fn"), ("double", "float16"), ("int32", "float16")]
    computed += [("uint64", "float"), ("float", "int4"), ("float", "uint8")]
    for source, target in light:
        assert streams(source, target), (source, target)
    for source, target in wide + computed:
        assert not streams(source, target), (source, target)


def test_new_pages_are_written_by_plain_stores():
    """An output the cast allocates of NEW_PAGES_MIN_BYTES is written by plain
    stores (its pages are new: the system zeroes each as the first store
    faults it in, and streaming stores then wrote the zeroed lines back
    besides); an output given by ``out=``, as large, and a smaller new one
    by nontemporal stores."""
    launch = arrays.plan(Conversion.make(numbacast.FLOAT, numbacast.FLOAT16)).launch
    for elements, given, expected in (
        (NEW_PAGES_MIN_BYTES // 2, False, kernels.parallel_kernel),
        (NEW_PAGES_MIN_BYTES // 2, True, kernels.streaming_kernel),
        (STREAM_MIN_BYTES // 2, False, kernels.streaming_kernel),
    ):
        x = np.ones(elements, np.float32)
        launch._entries.clear()
        numbacast.cast(x, "float16", out=np.empty(x.size, np.float16) if given else None)
        assert {key[0] for key in launch._entries} == {expected}, (elements, given)
