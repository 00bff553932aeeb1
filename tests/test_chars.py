"""The character class masks of the text reader (numbacast.text.chars)
against a character-by-character reading in Python, for rows of every width
around the 16-character vector steps: whole steps take plain loads, the last
partial one a masked load that must read nothing past the row."""

import numpy as np
import pytest
from numba import njit

from numbacast.text.chars import WINDOW, classes

CLASSES = (
    lambda c: "0" <= c <= "9",
    lambda c: c == ".",
    lambda c: c in "eE",
    lambda c: c in "+-",
    lambda c: c in " \t\n\v\f\r",
    lambda c: c != "\x00",
    lambda c: c == "0",
)


@njit
def _masks(row):
    return classes(row)


def _expected(text, width):
    row = text.ljust(width, "\x00")[: min(width, WINDOW)]
    return tuple(sum(1 << j for j, c in enumerate(row) if test(c)) for test in CLASSES)


@pytest.mark.parametrize("width", [1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 80])
def test_class_masks_of_rows_of_every_width(width):
    rng = np.random.default_rng(width)
    # and code points above 255 whose low byte is a class's character (or 0): the
    # reader narrows code points to bytes, those above 255 to 255, in no class
    alphabet = list("0123456789.eE+- \t\n\v\f\rxé\x00\u0130\u012e\u0165\u0120\u0100\u012b\uff10")
    texts = ["".join(rng.choice(alphabet, int(rng.integers(0, width + 1)))).rstrip("\x00") for _ in range(200)]
    array = np.array(texts + ["9" * width], f"<U{width}")
    rows = array.view(np.uint32).reshape(len(array), width)
    for text, row in zip(array.tolist(), rows):
        assert tuple(int(m) for m in _masks(row)) == _expected(text, width), (width, text)
    # a row that ends where the array's memory ends: the masked load reads nothing past it
    last = np.ascontiguousarray(rows[-1][: width - 1]) if width > 1 else rows[-1]
    assert tuple(int(m) for m in _masks(last)) == _expected("9" * last.size, last.size)


@pytest.mark.parametrize("width", [17, 32, 33, 48, 64, 80])
def test_blank_windows_between_characters_give_no_bits(width):
    """A window of 16 zeros skips the compares: every choice of blank windows
    (also between non-blank ones) gives the masks of the characters there are."""
    windows = (width + 15) // 16
    for blanks in range(1 << windows):
        text = "".join("\x00" * 16 if blanks >> k & 1 else "1.e+ 0x\t-5E9 7.0"[:16] for k in range(windows))[:width]
        row = np.array([text.rstrip("\x00") or "\x00"], f"<U{width}").view(np.uint32)
        assert tuple(int(m) for m in _masks(row)) == _expected(text, width), (width, blanks)
