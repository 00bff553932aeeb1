"""STRING to numbers: the exact decimal value rounded once, checked against the
exact reference (``Fraction`` of the text, rounded by exact.encode) on hard
cases for every target; the grammar; the errors; the input kinds."""

import zlib
from fractions import Fraction

import exact
import numba
import numpy as np
import pytest
from conftest import storage_codes, variant_id, variants

import numbacast
from numbacast import cast
from numbacast.engine.kernels import PARALLEL_MIN

FLOAT_TARGETS = [t.name for t in numbacast.TYPES if t.is_float]
INTEGER_TARGETS = [t.name for t in numbacast.TYPES if t.is_integer]


def check_texts(texts, target, options):
    """Cast ``texts`` to ``target`` and compare every code with the reference."""
    got = storage_codes(cast(np.array(texts), target, **options))
    expected = [exact.parse_code(target, text, **options) for text in texts]
    bad = [i for i, code in enumerate(expected) if not exact.same_code(target, int(got[i]), code)]
    assert not bad, f"{len(bad)} of {len(texts)} wrong ({target} {options}); first: " + ", ".join(
        f"{texts[i][:60]!r}: got {int(got[i]):#x} expected {expected[i]:#x}" for i in bad[:4]
    )


def positional(digits, k, leading_zeros=0):
    """digits * 10**k written without an exponent."""
    text = str(digits)
    if k >= 0:
        return "0" * leading_zeros + text + "0" * k
    text = text.rjust(-k + 1, "0")
    return "0" * leading_zeros + text[:k] + "." + text[k:]


def around(value, rng):
    """Texts at and next to an exact dyadic value: written out in full (in
    scientific and positional form, with leading zeros), with the 20th
    significant digit one unit up and down, and a unit far beyond the last
    digit up and down."""
    digits, k = exact.exact_decimal(value)
    n = len(str(digits))
    texts = [
        f"{digits}e{k}",
        positional(digits, k, leading_zeros=int(rng.integers(0, 4))),
        f"{digits * 10**22 + 1}e{k - 22}",
        f"{digits * 10**22 - 1}e{k - 22}",
    ]
    if n < 20:
        twenty, k20 = digits * 10 ** (20 - n), k - (20 - n)
    else:
        twenty, k20 = digits // 10 ** (n - 20), k + n - 20
    texts += [f"{twenty + 1}e{k20}", f"{twenty - 1}e{k20}", f"{twenty}E{k20:+d}"]
    return texts


def float_values(target, rng, count):
    """The positive finite values of a float target (a sample of ``count``
    and the smallest and largest beyond 8 bits)."""
    bits = numbacast.resolve(target).storage.itemsize * 8
    largest = 254 if target == "float8e8m0" else exact._fmt(target).maxcode
    codes = range(1 << bits) if bits <= 8 else rng.integers(0, largest, count).tolist() + [1, largest]
    values = {exact.decode(target, c) for c in codes}
    return sorted({v.mag for v in values if v.kind == "finite" and v.mag > 0})  # each once, not once per sign


def hard_texts(target, seed):
    """Around each value and each tie with its upper neighbour (for
    FLOAT8E8M0 also 1.5 times the value, where "nearest" goes up); half the
    smallest value; the neighbour past the largest."""
    rng = np.random.default_rng(seed)
    values = float_values(target, rng, 150)
    points = [values[0] / 2, values[-1] + exact.gaps(target, values[-1])[1]]
    for value in values:
        points += [value, value + exact.gaps(target, value)[1] / 2]
        if target == "float8e8m0":
            points.append(value * Fraction(3, 2))
    texts = [text for point in points for text in around(point, rng)]
    return texts + [f"-{text}" for text in texts[::7]]


@pytest.mark.parametrize("variant", variants(FLOAT_TARGETS), ids=variant_id)
def test_hard_cases_of_every_float_target(variant):
    target, options = variant
    check_texts(hard_texts(target, zlib.crc32(target.encode())), target, options)


def long_mantissas(rng, count, length=800):
    texts = []
    for _ in range(count):
        digits = "".join(map(str, rng.integers(0, 10, length)))
        texts.append(f"{digits[0]}.{digits[1:]}e{int(rng.integers(-330, 310))}")
    return texts


@pytest.mark.parametrize("target", ["double", "float", "float16", "bfloat16", "float8e5m2"])
def test_800_digit_mantissas(target):
    rng = np.random.default_rng(800)
    texts = long_mantissas(rng, 150)
    # ties far out: a double midpoint, then 800 zeros and a one, or 800 nines
    half = Fraction(1, 2**1075) * 3
    digits, k = exact.exact_decimal(half)
    texts += [
        f"{digits}{'0' * 800}1e{k - 801}",
        f"{digits - 1}{'9' * 800}e{k - 800}",
        "0." + "0" * 800 + "1",
        "1" + "0" * 800,
    ]
    check_texts(texts, target, {})


def random_decimals(rng, count):
    """Decimal texts of every shape: 1 to 25 digits, a point anywhere or
    none, exponents over the whole float64 range and beyond."""
    texts = []
    for _ in range(count):
        digits = "".join(map(str, rng.integers(0, 10, int(rng.integers(1, 26)))))
        point = int(rng.integers(0, len(digits) + 1))
        mantissa = digits[:point] + "." + digits[point:] if rng.random() < 0.7 else digits
        if mantissa == ".":
            mantissa = "0"
        exponent = f"e{int(rng.integers(-345, 330))}" if rng.random() < 0.6 else ""
        texts.append(("-" if rng.random() < 0.3 else "") + mantissa + exponent)
    return texts


def test_random_decimals_to_double_match_python():
    """Python's float() rounds a decimal correctly to nearest even."""
    texts = random_decimals(np.random.default_rng(7), 200_000)
    got = cast(np.array(texts), "double")
    expected = np.array([float(text) for text in texts])
    bad = np.flatnonzero(got.view(np.uint64) != expected.view(np.uint64))
    assert not bad.size, [(texts[i], got[i], expected[i]) for i in bad[:5]]


@pytest.mark.parametrize("target", ["float", "float16", "bfloat16", "float8e4m3fn", "float4e2m1", "float8e8m0"])
def test_random_decimals_to_narrow_floats(target):
    check_texts(random_decimals(np.random.default_rng(9), 4000), target, {})


def test_no_double_rounding_through_float64():
    # 0.1 to FLOAT is the float32 nearest 1/10; a FLOAT tie just above its
    # float64 rounding: 1 + 2**-24 + 2**-60 rounds up in FLOAT (via float64 it
    # would be the tie 1 + 2**-24 and go to even, 1.0).
    assert cast(["0.1"], "float").view(np.uint32)[0] == np.float32(0.1).view(np.uint32)
    text = positional(*exact.exact_decimal(1 + Fraction(1, 2**24) + Fraction(1, 2**60)))
    assert cast([text], "float")[0] == np.nextafter(np.float32(1), np.float32(2))
    assert cast([text], "double")[0] == 1 + 2.0**-24


INTEGER_TEXTS = [
    "0",
    "-0",
    "+7",
    "0005",
    " 12 ",
    "127",
    "128",
    "255",
    "256",
    "-128",
    "-129",
    "300",
    "-300",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "-18446744073709551615",
    "123456789012345678901",
    "100.5",
    "-0.5",
    "0.5",
    "1.5",
    "2.5",
    "3.5",
    "-2.5",
    "-3.5",
    "7.5",
    "8.5",
    "-7.5",
    "2.5000000000000000001",
    "2.4999999999999999999",
    "1e3",
    "1e30",
    "-1e30",
    "1e-30",
    "-1e-30",
    "5e-1",
    "0.05e2",
    "1e99999",
    "-1e-99999",
    "123456789012345678901.5",
    "123456789012345678902.5",
    "-123456789012345678901.5",
    "18446744073709551615.5",
    "9223372036854775807.9",
    "-9223372036854775808.9",
    "1" + "0" * 30 + ".5",
    "nan",
    "-NaN",
    "inf",
    "-Infinity",
    "255.99",
    "-1.0",
    "1e0",
    "12e-1",
]


@pytest.mark.parametrize("target", INTEGER_TARGETS)
def test_integer_targets(target):
    check_texts(INTEGER_TEXTS, target, {})


def test_integer_rules_spelled_out():
    assert cast(["300", "300.0", "1e3", "100.5", "-100.5", "-1"], "int8").tolist() == [44, 127, 127, 100, -100, -1]
    assert cast(["-1", "18446744073709551615", "-1.5"], "uint64").tolist() == [2**64 - 1, 2**64 - 1, 0]
    assert cast(["18446744073709551615"], "int64").tolist() == [-1]
    assert cast(["2.5", "3.5", "17", "17.0", "-2.5"], "int4").astype(int).tolist() == [2, 4, 1, 1, -2]


BOOL_TEXTS = [
    "true",
    "FALSE",
    "True",
    " false ",
    "0",
    "-0.0",
    "0e10",
    "00.000",
    "1e-400",
    "nan",
    "-inf",
    "2",
    "0.0000000000000000000000001",
]


def test_bool_target():
    check_texts(BOOL_TEXTS, "bool", {})
    assert cast(BOOL_TEXTS, "bool").tolist() == [
        True,
        False,
        True,
        False,
        False,
        False,
        False,
        False,
        True,
        True,
        True,
        True,
        True,
    ]


VALID = [
    "1.",
    ".5",
    "+.5e-3",
    " \t1\n",
    "\r\v\f1.5\f",
    "INF",
    "-Infinity",
    "nAn",
    "+nan",
    "-NAN",
    "1E5",
    "1e+05",
    "00.00",
    "-0",
    "+0.0e-0",
    "9" * 40,
    "0" * 50 + "1",
]
INVALID = [
    "",
    " ",
    "Hello World!",
    "1.2.3",
    "1e",
    "e5",
    ".",
    "+",
    "-",
    "1 2",
    "--1",
    "+-1",
    "1e+",
    "0x10",
    "1_000",
    "infinit",
    "infinityy",
    "nanx",
    "in f",
    "1,5",
    "\u0661",
    "\uff11",
    "\x001",
    "1\x00 ",
    "1e5.5",
    ". 5",
    "1. 5",
    "inf inity",
    "+ 1",
    "1e 5",
    "1f",
]


@pytest.mark.parametrize("target", ["double", "float8e4m3fn", "int32", "bool"])
def test_grammar(target):
    check_texts(VALID, target, {})
    for text in INVALID:
        with pytest.raises(ValueError):
            cast([text], target)
    for text in ["-true", "+false", "yes", "1true"] + (["true", "false"] if target != "bool" else []):
        with pytest.raises(ValueError):
            cast([text], target)


def placed(texts, width, lead):
    """``texts`` after ``lead`` spaces in a ``<U{width}`` array (those that fit)."""
    fitting = [" " * lead + text for text in texts if lead + len(text) <= width]
    return np.array(fitting, dtype=f"<U{width}")


# Widths and offsets around the parser's 16-character vector steps and 64-character window.
EDGE_WIDTHS = [4, 15, 16, 17, 32, 63, 64, 65, 80]
EDGE_LEADS = [0, 1, 14, 15, 16, 47, 60, 61, 62, 63, 64]


def test_grammar_across_the_character_window():
    numbers = [text for text in VALID if text.strip()[-1:].isdigit() or text.strip().endswith(".")]
    for width in EDGE_WIDTHS:
        for lead in EDGE_LEADS:
            texts = placed(numbers + ["-1.2345678e-05", "12345678901234567.5", "6e-1"], width, lead)
            for target in ("double", "float", "float8e4m3fn"):
                got = storage_codes(cast(texts, target)).tolist()
                assert got == [exact.parse_code(target, text) for text in texts.tolist()], (width, lead, target)
            for text in placed(INVALID, width, lead):
                with pytest.raises(ValueError):
                    cast(np.array([text], dtype=f"<U{width}"), "double")


def test_quick_scan_reads_as_scan():
    """The vector reader of plain numbers returns what the general scanner
    does, whenever it takes a text, and it takes the usual ones."""
    from numbacast.text.parsing import quick_scan, scan

    both = numba.njit(lambda row: (quick_scan(row), scan(row, False)))  # helpers are for @njit code

    rng = np.random.default_rng(5)
    samples = [
        f"{value:.{int(rng.integers(0, 12))}{form}}"
        for value, form in zip(rng.standard_normal(300) * 10.0 ** rng.integers(-30, 30, 300), "eEfg" * 75)
    ]
    shapes = [
        "1e123456789012345",
        "1e1234567890123456",
        "-1e-00000000000001",
        "12345678901234567890",
        "1234567890123456789",
        "0.0000000000000000001",
        "1.5 ",
        " 1.5",
        "1. 5",
        "1\x005",
        "\x00",
        "+",
        "-.",
        ".e1",
        "1e",
        "1e-",
        "1ee5",
        "1e5e5",
        "1.5.",
        "e",
        "--1",
        "+-1",
    ]
    accepted = 0
    for width in EDGE_WIDTHS:
        for lead in EDGE_LEADS:
            texts = placed(VALID + INVALID + samples + shapes, width, lead)
            for row in texts.view(np.uint32).reshape(texts.size, width):
                quick, scanned = both(row)
                if quick[0]:
                    accepted += 1
                    assert quick[1:] == scanned, row.tobytes().decode("utf-32-le")
    assert accepted > 5000
    leading_zeros = ["0.000" + "1" * 19, "-00" + "9" * 19 + "e-3", "0." + "0" * 30 + "1" * 19]
    for text in leading_zeros:
        row = np.array([text]).view(np.uint32)
        quick, scanned = both(row)
        assert quick[1:] == scanned, text
    for text, width in [("-1.5e-05", 32), ("1" * 19, 19), (" " * 48 + "1.5", 64)] + [(t, 64) for t in leading_zeros]:
        assert both(np.array([text], f"<U{width}").view(np.uint32))[0][0], text
    refused = [("1.5", 65), ("1" * 20, 20), ("0.0" + "1" * 20, 23), ("inf", 3), ("1\x002", 3), ("1e" + "1" * 16, 18)]
    for text, width in refused:
        assert not both(np.array([text], f"<U{width}").view(np.uint32))[0][0], text


def test_mantissas_within_the_first_16_characters():
    """The quick reader takes the digits of a mantissa that ends within the
    first 16 characters from the window's bytes in one go: every place of the
    point (or none), every length and every start, against the scanner."""
    from numbacast.text.parsing import quick_scan, scan

    both = numba.njit(lambda row: (quick_scan(row), scan(row, False)))
    rng = np.random.default_rng(16)
    texts = []
    for start in range(16):
        for length in range(1, 17 - start):
            digits = "".join(map(str, rng.integers(0, 10, length)))
            for point in range(-1, length + 1):
                mantissa = digits if point < 0 else digits[:point] + "." + digits[point:]
                text = (" " * (start - 1) + "-" if start else "") + mantissa
                texts += [text, text + "e-7"]
    array = np.array(texts, "<U24")
    for text, row in zip(texts, array.view(np.uint32).reshape(len(texts), 24)):
        quick, scanned = both(row)
        assert quick[0] and quick[1:] == scanned, text


#: Texts the quick pass reads (plain numbers of at most 19 digits, words
#: with nothing around them) and texts it leaves to the full reader.
QUICK_TEXTS = ["1.5", " -2e3 ", "7", "-9223372036854775808", "0.00013458754237823047", "nan", "-INF", "+infinity"]
FULL_TEXTS = ["12345678901234567890", "0.1" + "0" * 30 + "1", "-9223372036854775809", "1e-400", "1.5\t", " nan"]


@pytest.mark.parametrize("target", ["double", "float", "float8e4m3fn", "int64", "uint8", "int4", "bool"])
def test_the_quick_pass_and_the_full_reader_in_one_large_array(target):
    """A text cast reads every text with a quick pass and the texts it leaves
    with the full reader, each over the thread pool once the array (or the
    texts left) are large enough: every element must still match the
    reference, wherever it sits."""
    rng = np.random.default_rng(5)
    pool = np.array(QUICK_TEXTS + FULL_TEXTS + ["true", "False"] * (target == "bool"))
    picks = rng.integers(0, pool.size, 3 * PARALLEL_MIN)
    got = storage_codes(cast(pool[picks], target))
    expected = np.array([exact.parse_code(target, text) for text in pool], dtype=object)[picks]
    bad = [i for i in range(picks.size) if not exact.same_code(target, int(got[i]), expected[i])]
    assert not bad, [(pool[picks[i]], int(got[i]), expected[i]) for i in bad[:4]]


def test_the_exact_pass_reads_what_the_fast_significand_leaves():
    """A number whose significand the fast path cannot settle (1 + 2**-53,
    halfway between two float64) is read by a pass of its own, over the
    thread pool too; the texts around it keep their values and errors."""
    halfway = "1.00000000000000011102230246251565404236316680908203125"
    texts = [halfway, "-" + halfway, " 1.5 ", halfway + "1", "2"]
    assert cast(texts, "double").tolist() == [float(t) for t in texts] == [1.0, -1.0, 1.5, 1.0000000000000002, 2.0]
    assert cast(texts, "float").tolist() == [1.0, -1.0, 1.5, 1.0, 2.0]
    with pytest.raises(ValueError, match=r"element 2 \('x'\)"):
        cast([halfway, "3", "x", halfway], "float")
    many = np.array([halfway, "0.5", "-" + halfway + "1"] * PARALLEL_MIN)
    assert cast(many, "double").tolist() == [1.0, 0.5, -1.0000000000000002] * PARALLEL_MIN


def test_exponents_far_beyond_any_type():
    texts = ["1e999999999999999999999", "-1e999999999999999999999", "1e-999999999999999999999", "0e99999999999999"]
    assert cast(texts, "double").tolist() == [np.inf, -np.inf, 0.0, 0.0]
    assert cast(texts, "int32").tolist() == [2**31 - 1, -(2**31), 0, 0]
    assert cast(texts, "int4").astype(int).tolist() == [0, 0, 0, 0]


def test_error_names_the_first_bad_element_and_writes_nothing():
    texts = np.array([["1.5", "2"], ["x1", "3"], ["4", "Hello World!"]])
    snapshot = texts.copy()
    out = np.full((3, 2), 7.0, np.float32)
    with pytest.raises(ValueError, match=r"element \(1, 0\) \('x1'\)") as error:
        cast(texts, "float", out=out)
    assert "FLOAT" in str(error.value) and "inf" in str(error.value)
    assert (out == 7.0).all() and np.array_equal(texts, snapshot)
    with pytest.raises(ValueError, match=r"element 3 \(''\)"):
        cast(["1", "2", "3", "", "x"], "int8")
    with pytest.raises(ValueError, match="true/false"):
        cast(["maybe"], "bool")
    out = np.zeros(2, np.int16)
    with pytest.raises(ValueError, match=r"element 1 \(b'1\.2\.3'\)"):
        cast(np.array([b"5", b"1.2.3"]), "int16", out=out)
    assert not out.any()


def test_every_kind_of_text_array():
    expected = [1.5, -2.0, np.inf]
    texts = ["1.5", "-2", "inf"]
    for array in (
        np.array(texts),
        np.array(texts, dtype="S"),
        np.array(texts, dtype=object),
        np.array(texts, dtype=">U5"),
        np.array([text for text in texts for _ in "ab"])[::2],
    ):
        assert cast(array, "double").tolist() == expected, array.dtype
    assert cast(np.array("2.5"), "float16").shape == ()
    assert cast(np.array([], dtype="<U3"), "float").shape == (0,)
    assert cast(np.array([["1", "2"], ["3", "4"]]).T, "int8").tolist() == [[1, 3], [2, 4]]
    with pytest.raises(TypeError, match="object"):
        cast(np.array(["1", 2], dtype=object), "float")
    with pytest.raises(TypeError, match="object"):
        cast(np.array([None], dtype=object), "string")


def test_out_for_numeric_targets():
    out = np.zeros((2, 2), np.float16)
    assert cast([["1", "2"], ["0.1", "inf"]], "float16", out=out) is out
    assert out.tolist() == [[1.0, 2.0], [np.float16(0.1), np.inf]]
    with pytest.raises(TypeError, match="out"):
        cast(["1"], "float16", out=np.zeros(1, np.float32))


def test_string_to_string_is_a_copy():
    texts = np.array(["a", "1.5"])
    result = cast(texts, "string")
    assert result.tolist() == ["a", "1.5"] and not np.shares_memory(result, texts)
    assert cast(np.array([b"x", "\u00e9".encode()]), "string").tolist() == ["x", "\u00e9"]  # UTF-8
    with pytest.raises(ValueError, match="UTF-8"):
        cast(np.array([b"\xff"]), "string")
