"""Run records: a per-tick trace, the end-of-run summary table and the PNG plot (RoboSim's
post-processing), drawn headless with matplotlib's Agg backend."""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simserver.contract.snapshot import SIDE_SPEEDS, PieceSnapshot, Snapshot
from simserver.contract.topics import SHOWN

CHANNELS = ("time", "x", "y", "heading", "vx", "vy", "v_left", "v_right", "omega", "voltage",
            "current", "min_voltage", "max_current")


class Trace:
    """Per-tick samples in compact arrays (8 bytes a value). Channels (``CHANNELS``): time s,
    x m, y m, heading rad, field-frame velocity vx/vy m/s, the wheel speeds of a drivetrain
    with sides v_left/v_right m/s (its ``SIDE_SPEEDS`` outputs; NaN without), yaw rate omega
    rad/s, battery voltage V and current A at the tick's end, and the lowest voltage V and
    largest current A during the tick (``Snapshot.min_voltage``, ``max_current``);
    ``motor_currents``: motor name -> stator current A. When the field has game pieces:
    ``scores``: alliance -> pieces scored in its goals, per tick; ``pieces``: state name
    ("floor", "flight", "held") -> (n, 2) array of the pieces' (x m, y m) at the last tick."""

    def __init__(self) -> None:
        self.data = {c: array("d") for c in CHANNELS}
        self.motor_currents: dict[str, array[float]] = {}
        self.scores: dict[str, array[float]] = {}
        self._pieces: dict[str, np.ndarray] = {}  # read from a recording
        self._last_pieces: PieceSnapshot | None = None  # of the last tick recorded

    @classmethod
    def from_columns(cls, columns: Mapping[str, Iterable[float]],
                     motor_currents: Mapping[str, Iterable[float]],
                     scores: Mapping[str, Iterable[float]] | None = None,
                     pieces: Mapping[str, np.ndarray] | None = None) -> Trace:
        """A trace from one sequence per channel (all of ``CHANNELS``), per motor and per
        alliance's score, all of the same length, and the pieces' last positions (units as
        in the class docstring)."""
        trace = cls()
        trace.scores = {n: array("d", v) for n, v in (scores or {}).items()}
        trace._pieces = dict(pieces or {})
        missing = set(CHANNELS) - set(columns)
        if missing:
            raise ValueError(f"missing trace channels: {', '.join(sorted(missing))}")
        for name in CHANNELS:
            trace.data[name].extend(columns[name])
        trace.motor_currents = {n: array("d", v) for n, v in motor_currents.items()}
        lengths = {len(a) for a in (*trace.data.values(), *trace.motor_currents.values(),
                                    *trace.scores.values())}
        if len(lengths) > 1:
            raise ValueError(f"trace channels of different lengths: {sorted(lengths)}")
        return trace

    def record(self, s: Snapshot) -> None:
        """Append one snapshot."""
        d = self.data
        d["time"].append(s.time)
        d["x"].append(s.x)
        d["y"].append(s.y)
        d["heading"].append(s.heading)
        d["vx"].append(s.vx)
        d["vy"].append(s.vy)
        d["v_left"].append(s.drive_log.get(SIDE_SPEEDS[0], math.nan))
        d["v_right"].append(s.drive_log.get(SIDE_SPEEDS[1], math.nan))
        d["omega"].append(s.omega)
        d["voltage"].append(s.battery_voltage)
        d["current"].append(s.battery_current)
        d["min_voltage"].append(s.min_voltage)
        d["max_current"].append(s.max_current)
        for name, amps in s.currents.items():
            self.motor_currents.setdefault(name, array("d")).append(amps)
        if s.pieces is not None:
            before = len(d["time"]) - 1
            for alliance, n in s.pieces.scores.items():
                self.scores.setdefault(alliance, array("d", [0.0] * before)).append(n)
            self._last_pieces = s.pieces

    @property
    def pieces(self) -> dict[str, np.ndarray]:
        """State name -> (n, 2) (x m, y m) of the pieces in that state at the last tick."""
        last = self._last_pieces
        if last is None:
            return self._pieces
        return {name: last.pose[last.state == code][:, :2] for name, code in SHOWN.items()}

    def __len__(self) -> int:
        return len(self.data["time"])


@dataclass
class BatteryExtremes:
    """The battery's worst over a run, from each tick's aggregates (``Snapshot.min_voltage``,
    ``max_current``, ``brownout_in_tick``): the figures the summary shows, the scenario checks
    and the recording holds, so all of them agree. Units: V, A, s (simulated time)."""

    min_voltage: float = math.inf
    min_voltage_time: float = math.nan
    peak_current: float = -math.inf
    peak_current_time: float = math.nan
    brownout_ticks: int = 0
    first_brownout: float | None = None

    def observe(self, snap: Snapshot, t: float | None = None) -> None:
        """Take one tick's snapshot, at time ``t`` s (default: ``snap.time``)."""
        t = snap.time if t is None else t
        if snap.min_voltage < self.min_voltage:
            self.min_voltage, self.min_voltage_time = snap.min_voltage, t
        if snap.max_current > self.peak_current:
            self.peak_current, self.peak_current_time = snap.max_current, t
        if snap.brownout_in_tick:
            self.brownout_ticks += 1
            if self.first_brownout is None:
                self.first_brownout = t



def brownout_text(ticks: int, first: float | None) -> str:
    """"none", or in how many ticks the robot browned out and the first one's time (s)."""
    return "none" if first is None else f"in {ticks} ticks, first at {first:.2f} s"


@dataclass
class Summary:
    """End-of-run figures. Units: s, m, deg, A, V, Ah. peak_battery_current, min_voltage and
    the brownouts come from :class:`BatteryExtremes` (each tick's aggregates)."""

    sim_time: float
    wall_time: float
    distance: float
    x: float
    y: float
    heading_deg: float
    peak_battery_current: float
    min_voltage: float
    charge_used: float
    brownout_ticks: int = 0
    first_brownout: float | None = None  # s; None: no brownout
    rejected_inputs: int = 0
    # Real time with the bridge: robot periods whose sensors came after their loop's budget
    # (the robot program then ran that loop on the previous sensors). None: not such a run.
    late_periods: int | None = None
    # Real time with the bridge: the largest difference (s) between the world's time and the
    # robot program's clock, both counted from the first exchange. None: not such a run.
    clock_gap: float | None = None
    timing: str = ""  # how the robot program's periods met the world (see docs/bridge.md)

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) rows for the table."""
        factor = self.sim_time / self.wall_time if self.wall_time > 0 else math.inf
        return [
            ("simulated time", f"{self.sim_time:.2f} s"),
            ("wall time", f"{self.wall_time:.2f} s ({factor:.0f}× real time)"),
            ("distance driven", f"{self.distance:.2f} m"),
            ("final pose", f"x {self.x:.2f} m, y {self.y:.2f} m, heading {self.heading_deg:.1f}°"),
            ("peak battery current", f"{self.peak_battery_current:.1f} A"),
            ("minimum battery voltage", f"{self.min_voltage:.2f} V"),
            ("brownout", brownout_text(self.brownout_ticks, self.first_brownout)),
            ("battery charge used", f"{self.charge_used * 1000:.1f} mAh"),
            ("rejected input values", f"{self.rejected_inputs}"),
            *([("timing", self.timing)] if self.timing else []),
            *([("late robot periods", f"{self.late_periods}")]
              if self.late_periods is not None else []),
            *([("world vs robot clock", f"within {self.clock_gap * 1e3:.1f} ms")]
              if self.clock_gap is not None else []),
        ]

    def as_dict(self) -> dict[str, float | int | None]:
        """The figures for a JSON summary (SI units, heading in degrees)."""
        return {k: (v if not isinstance(v, float) or math.isfinite(v) else None)
                for k, v in vars(self).items()}

    def table(self) -> str:
        """A plain-text two-column table."""
        rows = self.rows()
        width = max(len(k) for k, _ in rows)
        line = "-" * (width + 2 + max(len(v) for _, v in rows))
        return "\n".join([line, *(f"{k.ljust(width)}  {v}" for k, v in rows), line])


def write_trace(trace: Trace, path: str | Path) -> Path:
    """Write the per-tick pose trace as CSV (time s, x m, y m, heading rad), floats in their
    shortest exact form, so two runs compare bit for bit."""
    d = trace.data
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        fh.write("time,x,y,heading\n")
        for row in zip(d["time"], d["x"], d["y"], d["heading"], strict=True):
            fh.write(",".join(repr(v) for v in row) + "\n")
    return out


def battery_caption(trace: Trace) -> str:
    """What the plot says of the battery: the lowest voltage and the largest current of the
    run, from the tick aggregates (the summary's and the recording's figures)."""
    d = trace.data
    low = min(d["min_voltage"], default=math.nan)
    high = max(d["max_current"], default=math.nan)
    return (f"end of tick (solid), worst within each tick (dotted): lowest {low:.2f} V, "
            f"peak {high:.1f} A")


def plot(trace: Trace, path: str | Path, field_size: tuple[float, float],
         title: str = "simserver run") -> Path:
    """Write a PNG of ``trace`` (:func:`figure`)."""
    return save_png(figure(trace, field_size, title), path, dpi=110)


def save_png(fig: Any, path: str | Path, dpi: int) -> Path:
    """Write matplotlib figure ``fig`` to ``path`` (its folder made if need be) at ``dpi``
    dots per inch, then free it; returns the path."""
    import matplotlib.pyplot as plt

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        fig.savefig(out, dpi=dpi)
    finally:
        plt.close(fig)
    return out


def draw_field(ax: Any, field_size: tuple[float, float]) -> None:
    """The field's walls (``field_size``: length, width in m) on matplotlib axes ``ax``, to
    scale, in field coordinates."""
    length, width = field_size
    ax.plot([0, length, length, 0, 0], [0, 0, width, width, 0], color="0.3", lw=2)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")


def figure(trace: Trace, field_size: tuple[float, float], title: str = "simserver run"
           ) -> Any:
    """The matplotlib Figure of ``trace`` (Agg, headless): path on the field
    (``field_size``: length, width in m), wheel speeds, yaw rate, motor currents, battery
    voltage and current; with game pieces, their last positions on the field (coloured by
    state), the scores in the field's title and the scores over time. Close it with
    ``matplotlib.pyplot.close``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = trace.data
    scores = trace.scores
    rows = 5 if scores else 4
    fig = plt.figure(figsize=(11, 9.5 + 2.0 * (rows - 4)), constrained_layout=True)
    grid = fig.add_gridspec(rows, 2, width_ratios=(1.4, 1))
    ax = fig.add_subplot(grid[:, 0])
    draw_field(ax, field_size)
    ax.plot(d["x"], d["y"], color="tab:blue", lw=1.5, label="path")
    if len(trace):
        ax.plot(d["x"][0], d["y"][0], "o", color="tab:green", label="start")
        ax.plot(d["x"][-1], d["y"][-1], "s", color="tab:red", label="end")
        h = d["heading"][-1]
        ax.annotate("", xy=(d["x"][-1] + 0.6 * math.cos(h), d["y"][-1] + 0.6 * math.sin(h)),
                    xytext=(d["x"][-1], d["y"][-1]), arrowprops={"arrowstyle": "->"})
    field_title = "Path on the field (blue alliance wall at x = 0)"
    if scores:
        _draw_pieces(ax, trace.pieces)
        field_title += "\nscored: " + ", ".join(f"{a} {v[-1] if v else 0:.0f}"
                                                for a, v in scores.items())
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, fontsize="small")
    else:
        ax.legend(loc="upper right")
    ax.set_title(field_title)
    t = d["time"]
    ax1 = fig.add_subplot(grid[0, 1])
    if any(not math.isnan(v) for v in d["v_left"]):
        ax1.plot(t, d["v_left"], label="left wheels")
        ax1.plot(t, d["v_right"], label="right wheels")
    else:
        ax1.plot(t, d["vx"], label="vx (field)")
        ax1.plot(t, d["vy"], label="vy (field)")
    ax1.set_ylabel("speed (m/s)")
    ax1.legend()
    ax2 = fig.add_subplot(grid[1, 1], sharex=ax1)
    ax2.plot(t, [math.degrees(w) for w in d["omega"]], color="tab:purple")
    ax2.set_ylabel("yaw rate (deg/s)")
    ax_m = fig.add_subplot(grid[2, 1], sharex=ax1)
    for name, amps in trace.motor_currents.items():
        ax_m.plot(t, amps, lw=0.8, label=name)
    ax_m.set_ylabel("motor current (A)")
    if trace.motor_currents:
        ax_m.legend(fontsize="small")
    ax3 = fig.add_subplot(grid[3, 1], sharex=ax1)
    ax3.plot(t, d["voltage"], color="tab:orange", lw=0.8)
    ax3.plot(t, d["min_voltage"], color="tab:orange", lw=1.4, ls=":")
    ax3.set_ylabel("battery (V)", color="tab:orange")
    ax3.set_xlabel("time (s)")
    ax4 = ax3.twinx()
    ax4.plot(t, d["current"], color="tab:red", lw=0.8)
    ax4.plot(t, d["max_current"], color="tab:red", lw=1.4, ls=":")
    ax4.set_ylabel("battery current (A)", color="tab:red")
    ax3.set_title(battery_caption(trace), fontsize="small")
    panels = [ax1, ax2, ax_m, ax3]
    if scores:
        ax3.set_xlabel("")
        ax_s = fig.add_subplot(grid[4, 1], sharex=ax1)
        for alliance, counts in scores.items():
            ax_s.step(t, counts, where="post", label=alliance,
                      color=ALLIANCE_COLOURS.get(alliance))
        ax_s.set_ylabel("pieces scored")
        ax_s.set_xlabel("time (s)")
        ax_s.legend(fontsize="small")
        panels.append(ax_s)
    for a in panels:
        a.grid(alpha=0.3)
    fig.suptitle(title)
    return fig


ALLIANCE_COLOURS = {"blue": "tab:blue", "red": "tab:red"}
PIECE_STYLE = {"floor": ("tab:orange", "o"), "flight": ("tab:cyan", "^"),
               "held": ("tab:purple", "s")}
"""Colour and marker of the pieces in each state on the plot's field."""


def _draw_pieces(ax: Any, pieces: Mapping[str, np.ndarray]) -> None:
    """The pieces' last positions on the field axes ``ax``, one scatter per state shown."""
    for state, xy in pieces.items():
        if len(xy):
            colour, marker = PIECE_STYLE.get(state, ("0.5", "o"))
            ax.scatter(xy[:, 0], xy[:, 1], s=14, c=colour, marker=marker, alpha=0.8,
                       edgecolors="none", zorder=3, label=f"pieces {state} ({len(xy)})")
