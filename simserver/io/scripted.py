"""Scripted inputs from a CSV file: RoboSim's no-hardware mode.

The first column is time in seconds (header ``time`` or ``t``); every other column is a motor
(duty cycle, linearly interpolated between rows) or a solenoid (0/1 or true/false, held until the
next row). Before the first row the first row's values apply; after the last, the last row's.

    time,left,right
    0,0,0
    1,0.5,0.5

With ``simserver run --enable``, columns ``joystick<n>/axis<k>`` (-1..1, interpolated; axis 0
first) and ``joystick<n>/button<k>`` (held; button 1 first) drive Driver Station joystick n
through the robot-side bridge.
"""

from __future__ import annotations

import bisect
import csv
import difflib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from simserver.io import topics

XBOX_AXES, XBOX_BUTTONS = 6, 10
_STICK = re.compile(r"^joystick([0-5])/(axis|button)(\d{1,2})$")

_TRUE = {"1", "true", "on", "yes"}
_FALSE = {"0", "false", "off", "no"}


class ScriptError(ValueError):
    """A CSV that cannot be used; the message names file, row and column."""


@dataclass
class Script:
    """Time-indexed inputs. times: s, increasing. motors/solenoids: column name -> values."""

    times: list[float]
    motors: dict[str, list[float]]
    solenoids: dict[str, list[bool]]
    axes: dict[str, list[float]] = field(default_factory=dict)
    buttons: dict[str, list[bool]] = field(default_factory=dict)

    @property
    def duration(self) -> float:
        """Time of the last row, s."""
        return self.times[-1]

    def at(self, t: float) -> tuple[dict[str, float], dict[str, bool]]:
        """Motor duties (interpolated) and solenoid states (held) at time ``t`` s."""
        times = self.times
        i = bisect.bisect_right(times, t)
        if i == 0:
            return ({k: v[0] for k, v in self.motors.items()},
                    {k: v[0] for k, v in self.solenoids.items()})
        if i >= len(times):
            return ({k: v[-1] for k, v in self.motors.items()},
                    {k: v[-1] for k, v in self.solenoids.items()})
        t0, t1 = times[i - 1], times[i]
        f = (t - t0) / (t1 - t0)
        motors = {k: v[i - 1] + f * (v[i] - v[i - 1]) for k, v in self.motors.items()}
        return motors, {k: v[i - 1] for k, v in self.solenoids.items()}

    def joysticks(self, t: float) -> dict[str, list[float] | list[bool]]:
        """Joystick topic -> axes (interpolated) or buttons (held) at time ``t`` s; axes and
        buttons a column does not name read 0 / released."""
        if not self.axes and not self.buttons:
            return {}
        axes, buttons = self.at_columns(t)
        sticks: dict[str, list[float]] = {}
        for (stick, index), value in sorted(axes.items()):
            values = sticks.setdefault(topics.joystick_axes(stick), [])
            values.extend([0.0] * (index + 1 - len(values)))
            values[index] = value
        pressed: dict[str, list[bool]] = {}
        for (stick, index), on in sorted(buttons.items()):
            states = pressed.setdefault(topics.joystick_buttons(stick), [])
            states.extend([False] * (index - len(states)))
            states[index - 1] = on
        # At least an Xbox controller's 6 axes and 10 buttons, so robot code reading
        # unnamed ones gets 0 / released rather than "axis missing" warnings.
        for values in sticks.values():
            values.extend([0.0] * (XBOX_AXES - len(values)))
        for states in pressed.values():
            states.extend([False] * (XBOX_BUTTONS - len(states)))
        out: dict[str, list[float] | list[bool]] = {**sticks, **pressed}
        return out

    def at_columns(self, t: float) -> tuple[dict[tuple[int, int], float],
                                            dict[tuple[int, int], bool]]:
        """(stick, axis) -> value and (stick, button) -> pressed at time ``t`` s."""
        probe = Script(self.times, self.axes, self.buttons)
        axes, buttons = probe.at(t)
        return ({_stick(k): v for k, v in axes.items()},
                {_stick(k): v for k, v in buttons.items()})


def _stick(column: str) -> tuple[int, int]:
    m = _STICK.match(column)
    assert m is not None
    return int(m.group(1)), int(m.group(3))


def load_script(path: str | Path, motors: list[str], solenoids: list[str]) -> Script:
    """Read and validate a CSV of inputs for the named motors and solenoids."""
    p = Path(path)
    try:
        with p.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            # Row numbers are the file's line numbers, counting comment and blank lines.
            numbered = [(reader.line_num, r) for r in reader]
    except OSError as exc:
        raise ScriptError(f"{p}: cannot read: {exc.strerror or exc}") from None
    numbered = [(n, r) for n, r in numbered if r and not r[0].lstrip().startswith("#")]
    if len(numbered) < 2:
        raise ScriptError(f"{p}: needs a header row and at least one data row")
    head_no = numbered[0][0]
    header = [h.strip() for h in numbered[0][1]]
    if header[0].lower() not in ("time", "t"):
        raise ScriptError(f"{p}: row {head_no}: the first column must be 'time' (seconds), got "
                          f"{header[0]!r}")
    known = motors + solenoids
    for name in header[1:]:
        if name not in known and not _STICK.match(name):
            hint = difflib.get_close_matches(name, known, n=1)
            msg = f"{p}: row {head_no}: column {name!r} is not a motor or solenoid in the config"
            msg += f"; did you mean {hint[0]!r}?" if hint else (
                f" (known: {', '.join(known)}; joystick columns are joystick<n>/axis<k> and "
                "joystick<n>/button<k>)")
            raise ScriptError(msg)
    if len(set(header)) != len(header):
        raise ScriptError(f"{p}: row {head_no}: duplicate column names")
    times: list[float] = []
    cols: dict[str, list[float]] = {n: [] for n in header[1:] if n in motors}
    sols: dict[str, list[bool]] = {n: [] for n in header[1:] if n in solenoids}
    axes: dict[str, list[float]] = {n: [] for n in header[1:] if "/axis" in n}
    buttons: dict[str, list[bool]] = {n: [] for n in header[1:] if "/button" in n}
    for name in buttons:
        if _stick(name)[1] < 1:
            raise ScriptError(f"{p}: row {head_no}: column {name!r}: buttons count from 1")
    for lineno, row in numbered[1:]:
        if len(row) != len(header):
            raise ScriptError(f"{p}: row {lineno}: {len(row)} values, expected {len(header)}")
        for col, (name, cell) in enumerate(zip(header, row, strict=True), start=1):
            cell = cell.strip()
            where = f"{p}: row {lineno}, column {col} ({name})"
            if name in sols or name in buttons:
                low = cell.lower()
                if low not in _TRUE | _FALSE:
                    raise ScriptError(f"{where}: expected 0/1 or true/false, got {cell!r}")
                (sols[name] if name in sols else buttons[name]).append(low in _TRUE)
                continue
            try:
                value = float(cell)
            except ValueError:
                raise ScriptError(f"{where}: expected a number, got {cell!r}") from None
            if not math.isfinite(value):
                raise ScriptError(f"{where}: expected a finite number, got {cell!r}")
            if col == 1:
                if times and value <= times[-1]:
                    raise ScriptError(f"{where}: times must increase, {value} follows "
                                      f"{times[-1]}")
                if value < 0:
                    raise ScriptError(f"{where}: time must be ≥ 0 s")
                times.append(value)
            else:
                what = "an axis" if name in axes else "duty cycle"
                if not -1.0 <= value <= 1.0:
                    raise ScriptError(f"{where}: {what} must be within -1..1, got {value}")
                (axes if name in axes else cols)[name].append(value)
    return Script(times, cols, sols, axes, buttons)
