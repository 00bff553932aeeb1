"""``python -m numbacast bench --plot FILE.png``: the bench table as bar charts.

One panel per group of rows: a bar per pair with its ratio (or numbacast's
own figure where the target bounds it), green where it meets the target and
red where it falls short, and the target as a dashed line.  Speed-up panels
use a logarithmic scale.  Needs matplotlib.
"""


def check_plotting(parser):
    """Exit through ``parser`` with a clear message unless matplotlib is installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        parser.error("--plot needs matplotlib: pip install matplotlib (or numbacast[compare])")


def plot(results, path, title):
    """Draw ``results`` ((group, rows) from the bench) to the image file ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    panels = [(group, [row for row in rows if row.ratio is not None]) for group, rows in results]
    panels = [(group, rows) for group, rows in panels if rows]
    heights = [0.8 + 0.28 * len(rows) for _, rows in panels]
    figure, axes = pyplot.subplots(
        len(panels), 1, figsize=(9, 1.2 + sum(heights)), squeeze=False, gridspec_kw={"height_ratios": heights}
    )
    for ax, (group, rows) in zip(axes[:, 0], panels):
        values = [row.ours if group.target.on_value else row.ratio for row in rows]
        colours = ["tab:green" if row.result == "PASS" else "tab:red" for row in rows]
        ax.barh(range(len(rows)), values, color=colours)
        ax.set_yticks(range(len(rows)), [row.pair for row in rows], fontsize=7)
        ax.invert_yaxis()
        ax.axvline(group.target.limit, color="black", linestyle="--", linewidth=1)
        if group.speedup:
            ax.set_xscale("log")
        shown = f"numbacast ({group.unit})" if group.target.on_value else group.ratio.format(group.reference)
        ax.set_title(f"{group.title}\n{shown}, target {group.target}", fontsize=8, loc="left")
        ax.tick_params(axis="x", labelsize=7)
    top_inches = 0.5
    figure.suptitle(title, fontsize=8, y=1 - 0.1 / figure.get_figheight())
    figure.tight_layout(rect=(0, 0, 1, 1 - top_inches / figure.get_figheight()))
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
