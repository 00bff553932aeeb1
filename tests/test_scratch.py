"""The stack scratch arrays of compiled code (numbacast.engine.scratch)."""

import pytest
from numba import njit
from numba.core.errors import TypingError

from numbacast.engine.scratch import stack_bytes


@njit
def _fill_and_sum(n, seed):
    buffer = stack_bytes(300)
    for i in range(n):
        buffer[i] = (seed + 7 * i) & 255
    total = 0
    for i in range(n):
        total += buffer[i]
    return total, buffer.size, buffer.shape[0], buffer.strides[0]


@njit
def _in_a_loop(rounds):
    total = 0
    for r in range(rounds):  # each call's buffer is its own, reused frame after frame
        total += _fill_and_sum(300, r)[0]
    return total


def test_a_stack_buffer_holds_what_is_written():
    total, size, length, stride = _fill_and_sum(300, 3)
    assert (size, length, stride) == (300, 300, 1)
    assert total == sum((3 + 7 * i) & 255 for i in range(300))
    assert _in_a_loop(1000) == sum(sum((r + 7 * i) & 255 for i in range(300)) for r in range(1000))


def test_the_size_must_be_a_positive_literal():
    @njit
    def run_time(n):
        return stack_bytes(n).size

    @njit
    def empty():
        return stack_bytes(0).size

    with pytest.raises(TypingError, match="positive integer literal"):
        run_time(4)
    with pytest.raises(TypingError, match="positive integer literal"):
        empty()
