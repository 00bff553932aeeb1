"""Draw docs/_static/mx-errors.png, the histogram of each block format's
quantisation error on the weight matrix of docs/mx.md's worked example.

Run by hand from the repository's top folder (needs matplotlib, the
``compare`` extra): ``python docs/_ext/plot_mx_errors.py``.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import numbacast  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "_static" / "mx-errors.png"


def main():
    rng = np.random.default_rng(0)
    weights = (rng.standard_normal((256, 1024)) * 0.02).astype(np.float32)
    figure, axes = plt.subplots(figsize=(8, 4.5))
    bins = np.linspace(-0.016, 0.016, 161)
    for fmt in numbacast.mx.FORMATS:
        error = numbacast.mx.dequantize(numbacast.mx.quantize(weights, fmt, axis=1)) - weights
        axes.hist(error.ravel(), bins=bins, histtype="step", label=fmt, density=True)
    axes.set_yscale("log")
    axes.set_xlabel("dequantised weight - weight (weights ~ N(0, 0.02), blocks along the input axis)")
    axes.set_ylabel("density")
    axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(OUT, dpi=100)
    print(f"wrote {OUT.name}")


if __name__ == "__main__":
    main()
