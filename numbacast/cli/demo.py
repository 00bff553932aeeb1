"""``python -m numbacast``: a built-in sample cast into every type, STRING included."""

import numpy as np

from ..api import cast
from ..formats.registry import STRING, TYPES

#: The built-in sample: ordinary values, a tie, tiny and huge values, specials.
SAMPLE = np.array([0.0, -0.0, 0.1, 1.0, -2.5, 3.14159, 464.0, 1e5, 6e-8, np.inf, np.nan], dtype=np.float32)


def _format(value):
    if isinstance(value, (bool, np.bool_, int)):
        return str(int(value))
    number = float(value)
    if number != number:
        return "NaN"
    if number in (np.inf, -np.inf):
        return "INF" if number > 0 else "-INF"
    if number == int(number) and abs(number) < 1e7:
        return str(int(number)) if number or np.copysign(1, number) > 0 else "-0"
    return f"{number:.6g}"


def table(sample=SAMPLE):
    """Rows of text: each type's cast of ``sample`` and the largest relative
    round-trip error back to FLOAT over the finite sample values."""
    finite = np.isfinite(sample) & (sample != 0)
    header = ["type"] + [_format(v) for v in sample] + ["max rel. error"]
    rows = [header]
    for t in (*TYPES, STRING):
        values = cast(sample, t)
        back = cast(values, "float").astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            error = np.abs(back[finite] - sample[finite]) / np.abs(sample[finite].astype(np.float64))
        if t.is_string:
            cells = values.tolist()
        else:
            shown = (
                values.astype(np.int64 if t.bits < 64 else t.storage).tolist()
                if t.is_integer
                else values.astype(np.float64)
            )
            cells = [_format(v) for v in shown]
        rows.append([t.name] + cells + [f"{np.nanmax(error):.3g}" if error.size else "-"])
    return rows


def main():
    rows = table()
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print("numbacast: the built-in FLOAT sample cast into every ONNX type (STRING last)\n")
    for number, row in enumerate(rows):
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths)))
        if number == 0:
            print("  ".join("-" * width for width in widths))
