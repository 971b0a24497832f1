"""The picture of a sweep (``sweep.png``): every run's final pose on the field, coloured by
pass or fail, and a histogram of each value the checks measured."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from simserver.runs.report import draw_field, save_png
from simserver.sweeps.results import Report

#: Histograms drawn at most (one per measured value, in the report's order).
MAX_HISTOGRAMS = 6


def plot(report: Report, path: Path, field_size: tuple[float, float]) -> Path:
    """Write the sweep's PNG to ``path`` (``field_size``: length, width in m)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = [(name, key) for name, info in report.checks.items() for key in info["values"]]
    values = values[:MAX_HISTOGRAMS]
    rows = max(len(values), 1)
    fig = plt.figure(figsize=(12, max(6.0, 2.0 * rows)), constrained_layout=True)
    grid = fig.add_gridspec(rows, 2, width_ratios=(1.6, 1))
    ax = fig.add_subplot(grid[:, 0])
    draw_field(ax, field_size)
    for passed, colour, label in ((True, "tab:green", "passed"), (False, "tab:red", "failed")):
        poses = [r["final_pose"] for r in report.records
                 if bool(r["passed"]) == passed and r.get("final_pose")]
        xs = [p["x"] for p in poses if p["x"] is not None and p["y"] is not None]
        ys = [p["y"] for p in poses if p["x"] is not None and p["y"] is not None]
        ax.scatter(xs, ys, s=10, color=colour, alpha=0.6,
                   label=f"{label} ({sum(bool(r['passed']) == passed for r in report.records)})")
    ax.legend(loc="upper right")
    ax.set_title(f"Final poses of {len(report.records)} runs: {report.pass_rate:.1%} passed "
                 f"(goal {report.pass_rate_goal:.1%})")
    for row, (name, key) in enumerate(values):
        hist = fig.add_subplot(grid[row, 1])
        _histogram(hist, report, name, key)
    fig.suptitle(f"simserver sweep {report.sweep_file}")
    return save_png(fig, path, dpi=100)


def _histogram(ax: Any, report: Report, name: str, key: str) -> None:
    """Histogram of value ``key`` of check ``name``, passed and failed runs stacked."""
    split: dict[bool, list[float]] = {True: [], False: []}
    for r in report.records:
        for c in r.get("checks") or []:
            v = (c.get("values") or {}).get(key) if c["name"] == name else None
            if isinstance(v, (int, float)) and math.isfinite(v):
                split[bool(c["passed"])].append(float(v))
    ax.hist([split[True], split[False]], bins=30, stacked=True,
            color=["tab:green", "tab:red"], label=["check passed", "check failed"])
    ax.set_title(f"{name}: {key} (SI)", fontsize="small")
    ax.tick_params(labelsize="small")
