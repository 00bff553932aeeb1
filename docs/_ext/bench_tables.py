"""Sphinx extension: the benchmarks page's tables, generated from a JSON record.

``python -m numbacast bench --json FILE`` writes a run's results; a page holding
the line ::

    % bench-tables: _data/bench.json

gets, in place of that line (a MyST comment, so the page reads well without
this extension), the run's settings, its machine, its summary and one Markdown
table per group of rows.  The path is relative to the documentation's folder.
A page holding ::

    % bench-ratios: mx,mx-gfloat

gets one table of those groups' ratios in every record of :data:`RECORDS`
side by side (a row per pair, a column per record, and the target).
The page is rebuilt whenever a JSON file changes.
"""

import json
import os
import re

MARKER = re.compile(r"^% bench-tables: (?P<path>\S+)[ \t]*$", re.MULTILINE)
RATIOS = re.compile(r"^% bench-ratios: (?P<groups>\S+)[ \t]*$", re.MULTILINE)

#: The records that ``bench-ratios`` tables compare: the host's and AVX2 code's.
RECORDS = ("_data/bench.json", "_data/bench-haswell.json")


def amount(value, unit):
    """A figure as the bench prints it: three significant digits, or whole above 100."""
    if value is None:
        return "-"
    return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"


def cell(text):
    """``text`` safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|")


def rerun_lines(data):
    """The lines saying which groups later runs replaced (the record's ``reruns``), if any."""
    lines = []
    for rerun in data.get("reruns", ()):
        groups = ", ".join(f"`{key}`" for key in rerun["groups"])
        when = f"{rerun['created']}: `{rerun['command']}`"
        lines += ["", f"Groups {groups}: a later run, of the code changed since, {when}."]
    return lines


def markdown_tables(data):
    """The Markdown for one bench record (the dict ``--json`` writes)."""
    machine = data["machine"]
    versions = ", ".join(f"{name} {version}" for name, version in data["versions"].items())
    summary = data["summary"]
    lines = [
        f"Run of {data['created']}: `{data['command']}`; {data['size']:,} elements per cast, "
        f"the median of {data['repeat']} timed run(s) after {data['warm_up']} warm-up calls, "
        f"{machine['numba_threads']} Numba threads.",
        *rerun_lines(data),
        "",
        "| machine | |",
        "|---|---|",
        f"| CPU | {cell(machine['cpu'])} ({machine['logical_cpus']} logical CPUs) |",
        f"| Numba compiles for | {cell(machine['numba_cpu_name'])} |",
        f"| CPU features | {cell(machine['numba_cpu_features'].replace(',', ', '))} |",
        f"| threading layer | {cell(machine['numba_threading_layer'])} |",
        f"| system | {cell(machine['system'])}, Python {cell(machine['python'])} |",
        f"| versions | {cell(versions)} |",
        "",
        f"**{summary['PASS']} PASS, {summary['short']} short, {summary['n/a']} n/a of {summary['rows']} rows.**",
        "",
    ]
    for group in data["groups"]:
        unit = group["unit"]
        lines += [
            f"### {group['title']}",
            "",
            f"Group `{group['key']}`: ratio = {group['ratio']}, target {group['target']}.",
            "",
            f"| pair | numbacast | {cell(group['reference'])} | ratio | spread | result |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for row in group["rows"]:
            ratio = "-" if row["ratio"] is None else f"{row['ratio']:.3g}"
            spread = row.get("spread")  # records before the spread was kept have none
            spread = "-" if spread is None else f"{spread[0]:.3g}–{spread[1]:.3g}"
            lines.append(
                f"| {cell(row['pair'])} | {amount(row['numbacast'], unit)} | {amount(row['reference'], unit)} "
                f"| {ratio} | {spread} | {cell(row['result'])} |"
            )
        lines.append("")
    return "\n".join(lines)


def ratio_table(records, keys):
    """One Markdown table of the ratios of the groups ``keys`` in each of
    ``records`` (bench records), a column per record headed by the CPU its
    kernels were compiled for (numbacast's own figure, with its unit, for a
    group whose target bounds it); a row that misses its target is marked."""
    columns = [{g["key"]: g for g in data["groups"]} for data in records]
    heads = " | ".join(cell(data["machine"]["numba_cpu_name"]) for data in records)
    lines = [f"| group | pair | {heads} | target |", "|---|---|" + "---:|" * len(records) + "---|"]
    for key in keys.split(","):
        first = columns[0][key]
        for pair in (row["pair"] for row in first["rows"]):
            rows = [
                next((r for r in groups.get(key, {"rows": ()})["rows"] if r["pair"] == pair), None)
                for groups in columns
            ]
            cells = " | ".join(_ratio_cell(row, first) for row in rows)
            lines.append(f"| `{key}` | {cell(pair)} | {cells} | {cell(first['target'])} |")
    return "\n".join(lines) + "\n"


def _ratio_cell(row, group):
    """A row's ratio, or its own figure where ``group``'s target bounds it (a
    target like "<= 10 us"), as :func:`amount` writes it; "-" for a missing row."""
    on_value = group["target"].endswith(group["unit"])
    figure = None if row is None else row["numbacast" if on_value else "ratio"]
    if figure is None:
        return "-"
    return amount(figure, group["unit"] if on_value else "").strip() + (" (short)" if row["result"] == "short" else "")


def _record(app, path):
    path = os.path.join(app.srcdir, path)
    app.env.note_dependency(path)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def expand(app, docname, source):
    """``source-read``: replace each marker line with the tables of its JSON file(s)."""
    source[0] = MARKER.sub(lambda match: markdown_tables(_record(app, match.group("path"))), source[0])
    source[0] = RATIOS.sub(
        lambda match: ratio_table([_record(app, path) for path in RECORDS], match.group("groups")), source[0]
    )


def setup(app):
    app.connect("source-read", expand)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
