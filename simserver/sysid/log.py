"""The routine's data as a WPILib data log with the entries ``SysIdRoutineLog`` writes, so
WPILib's SysId tool opens it, and the same data read back.

Entries (as robotpy's ``wpilib.sysid.SysIdRoutineLog`` 2026 names them, ``<name>`` the routine's
log name, ``<motor>`` a motor output of the config):

- ``sysid-test-state-<name>`` (string): the test's state every sample
  ("quasistatic-forward", "quasistatic-reverse", "dynamic-forward", "dynamic-reverse"), then
  "none" when the test ends;
- ``voltage-<motor>-<name>`` (double, metadata ``volt``);
- ``position-<motor>-<name>`` (double, ``meter``, or ``turn`` for a rotary joint);
- ``velocity-<motor>-<name>`` (double, ``meters_per_second`` or ``turns_per_second``).

Timestamps are the routine's log time in microseconds.

    write_log("lift.wpilog", "lift", runs, angular=False)
    name, runs, angular = read_log("lift.wpilog")
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import wpiutil
from wpiutil.log import DataLogReader, DoubleLogEntry, StringLogEntry

from simserver import __version__
from simserver.sysid.fit import Run

STATE_PREFIX = "sysid-test-state-"
NONE = "none"
UNITS = {False: ("volt", "meter", "meters_per_second"),
         True: ("volt", "turn", "turns_per_second")}
"""Metadata of the voltage, position and velocity entries: linear, rotary."""
TURN = 2.0 * math.pi  # rad


class LogError(ValueError):
    """A file that is not a SysId log this module can read; the message says why."""


def _us(t: float) -> int:
    return max(1, round(t * 1e6))


def write_log(path: str | Path, name: str, runs: Mapping[str, Sequence[Run]],
              angular: bool) -> Path:
    """Write ``runs`` (motor -> its runs, in test order, positions in m or rad) to
    ``path``; parent directories are created. Returns the path. OSError if it cannot be
    written."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "ab"):  # fails here, with the path, rather than inside wpiutil
        pass
    dlog = wpiutil.DataLogWriter(str(out), f"simserver {__version__} sysid")
    volt, pos, vel = UNITS[angular]
    scale = 1.0 / TURN if angular else 1.0
    state = StringLogEntry(dlog, STATE_PREFIX + name, "", 1)
    entries = {m: (DoubleLogEntry(dlog, f"voltage-{m}-{name}", volt, 1),
                   DoubleLogEntry(dlog, f"position-{m}-{name}", pos, 1),
                   DoubleLogEntry(dlog, f"velocity-{m}-{name}", vel, 1)) for m in runs}
    motors = list(runs)
    for i, first in enumerate(runs[motors[0]]):
        for k, t in enumerate(first.time):
            ts = _us(float(t))
            for m in motors:
                run = runs[m][i]
                v_entry, p_entry, s_entry = entries[m]
                v_entry.append(float(run.voltage[k]), ts)
                p_entry.append(float(run.position[k]) * scale, ts)
                s_entry.append(float(run.velocity[k]) * scale, ts)
            state.append(first.state, ts)
        end = float(first.time[-1]) + (float(first.time[-1] - first.time[-2])
                                       if len(first.time) > 1 else 0.0)
        state.append(NONE, _us(end) + 1)
    dlog.flush()
    dlog.stop()
    return out


def read_log(path: str | Path, name: str | None = None
             ) -> tuple[str, dict[str, list[Run]], bool]:
    """The runs of the SysId log ``path``: (log name, motor -> runs in file order, whether
    the positions were rotary). Positions come back in m or rad. ``name`` picks one routine
    when the file holds several."""
    try:
        reader = DataLogReader(str(path))
    except Exception as exc:  # wpiutil raises its own types for unreadable files
        raise LogError(f"{path}: cannot read: {exc}") from None
    if not reader.isValid():
        raise LogError(f"{path}: not a WPILib data log")
    names: dict[int, tuple[str, str]] = {}
    states: dict[str, list[tuple[int, str]]] = {}
    series: dict[str, list[tuple[int, float]]] = {}
    for rec in reader:
        if rec.isStart():
            start = rec.getStartData()
            names[start.entry] = (start.name, start.metadata)
        elif not rec.isControl() and rec.getEntry() in names:
            entry, _ = names[rec.getEntry()]
            if entry.startswith(STATE_PREFIX):
                states.setdefault(entry[len(STATE_PREFIX):], []).append(
                    (rec.getTimestamp(), rec.getString()))
            else:
                series.setdefault(entry, []).append((rec.getTimestamp(), rec.getDouble()))
    if not states:
        raise LogError(f"{path}: no {STATE_PREFIX}<name> entry: not a SysId log")
    if name is None:
        if len(states) > 1:
            raise LogError(f"{path}: several routines ({', '.join(states)}): pick one")
        name = next(iter(states))
    if name not in states:
        raise LogError(f"{path}: no routine {name!r} (found {', '.join(states)})")
    metadata = {entry: meta for entry, meta in names.values()}
    suffix = f"-{name}"
    motors = sorted(e[len("voltage-"):-len(suffix)] for e in series
                    if e.startswith("voltage-") and e.endswith(suffix))
    angular = any(metadata.get(f"position-{m}{suffix}") == "turn" for m in motors)
    scale = TURN if angular else 1.0
    out: dict[str, list[Run]] = {}
    for m in motors:
        try:
            columns = [series[f"{what}-{m}{suffix}"] for what in ("voltage", "position",
                                                                  "velocity")]
        except KeyError as exc:
            raise LogError(f"{path}: motor {m!r} has no {exc.args[0]} entry") from None
        out[m] = _runs(states[name], columns, scale)
    return name, out, angular


def _runs(states: list[tuple[int, str]], columns: list[list[tuple[int, float]]],
          scale: float) -> list[Run]:
    """Split one motor's samples into runs by the state in force at each timestamp."""
    stamps = np.array([t for t, _ in states])
    labels = [s for _, s in states]
    samples: dict[int, list[float]] = {}
    for i, column in enumerate(columns):
        for t, value in column:
            samples.setdefault(t, [math.nan] * 3)[i] = value
    nones = np.cumsum([s == NONE for s in labels])  # a "none" ends a test
    runs: list[Run] = []
    current: list[tuple[int, list[float]]] = []
    key: tuple[str, int] = (NONE, -1)

    def close() -> None:
        if current and key[0] != NONE:
            data = np.array([v for _, v in current])
            runs.append(Run(key[0], np.array([t for t, _ in current]) * 1e-6, data[:, 0],
                            data[:, 1] * scale, data[:, 2] * scale))

    for t in sorted(samples):
        at = int(np.searchsorted(stamps, t, side="right")) - 1
        now = (labels[at], int(nones[at])) if at >= 0 else (NONE, -1)
        if now != key:
            close()
            current, key = [], now
        current.append((t, samples[t]))
    close()
    return runs
