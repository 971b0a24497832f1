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
import itertools
import math
import re
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from simserver.contract import topics
from simserver.util.untrusted import FileRefused, excerpt, open_regular, size_text, utf8

XBOX_AXES, XBOX_BUTTONS = 6, 10
_STICK = re.compile(r"^joystick([0-5])/(axis|button)(\d{1,2})$")

# Limits on an inputs CSV. A 20 ms row of a 10-minute match with ten columns is about 3 MB;
# 64 MiB holds hours of 1 ms rows and costs at most about 4 × its size in memory (values are
# kept as 8-byte floats, from as little as 2 bytes of text each).
MAX_BYTES = 64 * 2**20
MAX_LINE = 64 * 2**10  # bytes of one line
MAX_FIELD = 256  # characters of one field: a value or a column name

_TRUE = {"1", "true", "on", "yes"}
_FALSE = {"0", "false", "off", "no"}
_SWITCH = _TRUE | _FALSE


class ScriptError(ValueError):
    """A CSV that cannot be used; the message names file, row and column."""


@dataclass
class Script:
    """Time-indexed inputs. times: s, increasing. motors/solenoids: column name -> values."""

    times: Sequence[float]
    motors: Mapping[str, Sequence[float]]
    solenoids: dict[str, list[bool]]
    axes: Mapping[str, Sequence[float]] = field(default_factory=dict)
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
    """Read and validate a CSV of inputs for the named motors and solenoids.

    The file is read a line at a time and its values kept as 8-byte floats, so memory grows
    with the number of values, not with the file's text; a file over ``MAX_BYTES``, a line
    over ``MAX_LINE`` bytes, a field over ``MAX_FIELD`` characters and text that is not UTF-8
    are refused, as is anything but a regular file (a FIFO or /dev/zero would block or never
    end). Messages name the file and its line ("row"), never echo a file that is not an inputs
    CSV, and show at most an excerpt of a bad value."""
    p = Path(path)
    try:
        fh = open_regular(p, MAX_BYTES, "an inputs CSV")
    except FileRefused as exc:
        raise ScriptError(str(exc)) from None
    with fh:
        try:
            return _parse(p, fh, motors, solenoids)
        except csv.Error as exc:
            raise ScriptError(f"{p}: not a valid CSV file ({exc})") from None
        except OSError as exc:
            raise ScriptError(f"{p}: cannot read: {exc.strerror or exc}") from None


def _lines(p: Path, fh: BinaryIO) -> Iterator[str]:
    """The file's lines as text (a UTF-8 byte order mark dropped); ScriptError at the first
    line longer than MAX_LINE bytes or not UTF-8, and when the file grows past MAX_BYTES."""
    total = 0
    for number in itertools.count(1):
        raw = fh.readline(MAX_LINE + 1)
        if not raw:
            return
        total += len(raw)
        if len(raw) > MAX_LINE:
            raise ScriptError(f"{p}: line {number} is longer than {size_text(MAX_LINE)}; "
                              "not an inputs CSV")
        if total > MAX_BYTES:  # it grew since it was opened
            raise ScriptError(f"{p}: is more than {size_text(MAX_BYTES)}; an inputs CSV may "
                              f"be {size_text(MAX_BYTES)} at most")
        try:
            text = utf8(raw, p, number)
        except FileRefused as exc:
            raise ScriptError(str(exc)) from None
        yield text.removeprefix("\ufeff") if number == 1 else text


def _parse(p: Path, fh: BinaryIO, motors: list[str], solenoids: list[str]) -> Script:
    """The Script in the open file ``fh`` (of ``p``): header, column names, then the rows."""
    rows = _rows(p, fh)
    head_no, header = _header(p, rows, motors + solenoids)
    _check_columns(p, head_no, header, motors + solenoids)
    columns = _Columns(header, motors, solenoids)
    for lineno, row in rows:
        columns.add(p, lineno, row)
    if not columns.times:
        raise ScriptError(f"{p}: needs a header row and at least one data row")
    return Script(columns.times, columns.motors, columns.solenoids, columns.axes,
                  columns.buttons)


def _header(p: Path, rows: Iterator[tuple[int, list[str]]], known: list[str]
            ) -> tuple[int, list[str]]:
    """(line number, column names) of the header row: the first row, whose first column must
    be named 'time' or 't'."""
    first = next(rows, None)
    if first is None:
        raise ScriptError(f"{p}: needs a header row and at least one data row")
    head_no, header = first
    header = [h.strip() for h in header]
    if header[0].lower() not in ("time", "t"):
        # Not echoed: a file given by mistake (/etc/shadow, a config) is not shown.
        example = ",".join(["time", *known[:2]])
        raise ScriptError(f"{p}: not an inputs CSV: its first row (row {head_no}) must be a "
                          f"header whose first column is 'time' (seconds), such as "
                          f"{example!r}")
    return head_no, header


def _check_columns(p: Path, head_no: int, header: list[str], known: list[str]) -> None:
    """Every column after time names a motor or solenoid in ``known`` or a joystick axis or
    button (buttons count from 1), and no name comes twice."""
    for name in header[1:]:
        if name not in known and not _STICK.match(name):
            hint = difflib.get_close_matches(name, known, n=1)
            msg = (f"{p}: row {head_no}: column {excerpt(name)} is not a motor or solenoid "
                   "in the config")
            msg += f"; did you mean {hint[0]!r}?" if hint else (
                f" (known: {', '.join(known)}; joystick columns are joystick<n>/axis<k> and "
                "joystick<n>/button<k>)")
            raise ScriptError(msg)
    if len(set(header)) != len(header):
        raise ScriptError(f"{p}: row {head_no}: duplicate column names")
    for name in header[1:]:
        if "/button" in name and _stick(name)[1] < 1:
            raise ScriptError(f"{p}: row {head_no}: column {name!r}: buttons count from 1")


class _BadCell(ValueError):
    """A cell that cannot be used; the message says why, without file, row or column."""


class _Columns:
    """The values of an inputs CSV's columns (header ``header``), read a row at a time."""

    def __init__(self, header: list[str], motors: list[str], solenoids: list[str]):
        self.header = header
        self.times = array("d")
        self.motors = {n: array("d") for n in header[1:] if n in motors}
        self.solenoids: dict[str, list[bool]] = {n: [] for n in header[1:] if n in solenoids}
        self.axes = {n: array("d") for n in header[1:] if "/axis" in n}
        self.buttons: dict[str, list[bool]] = {n: [] for n in header[1:] if "/button" in n}
        self.readers = [self._time, *map(self._reader, header[1:])]

    def add(self, p: Path, lineno: int, row: list[str]) -> None:
        """Append the values of ``row``, line ``lineno`` of ``p``; ScriptError naming the row
        and the column of a bad value."""
        if len(row) != len(self.header):
            raise ScriptError(f"{p}: row {lineno}: {len(row)} values, expected "
                              f"{len(self.header)}")
        for col, (read, cell) in enumerate(zip(self.readers, row, strict=True), start=1):
            try:
                read(cell.strip())
            except _BadCell as exc:
                raise ScriptError(f"{p}: row {lineno}, column {col} ({self.header[col - 1]}): "
                                  f"{exc}") from None

    def _reader(self, name: str) -> Callable[[str], None]:
        """What reads a cell of column ``name`` (not time) into its values."""
        if name in self.solenoids or name in self.buttons:
            switches = self.solenoids[name] if name in self.solenoids else self.buttons[name]
            return lambda cell: switches.append(_switch(cell))
        numbers, what = ((self.axes[name], "an axis") if name in self.axes else
                         (self.motors[name], "duty cycle"))
        return lambda cell: numbers.append(_duty(cell, what))

    def _time(self, cell: str) -> None:
        value = _number(cell)
        if self.times and value <= self.times[-1]:
            raise _BadCell(f"times must increase, {value} follows {self.times[-1]}")
        if value < 0:
            raise _BadCell("time must be ≥ 0 s")
        self.times.append(value)


def _switch(cell: str) -> bool:
    """A solenoid's or button's cell: 0/1, true/false, on/off or yes/no."""
    low = cell.lower()
    if low not in _SWITCH:
        raise _BadCell(f"expected 0/1 or true/false, got {excerpt(cell)}")
    return low in _TRUE


def _number(cell: str) -> float:
    """A finite number."""
    try:
        value = float(cell)
    except ValueError:
        raise _BadCell(f"expected a number, got {excerpt(cell)}") from None
    if not math.isfinite(value):
        raise _BadCell(f"expected a finite number, got {excerpt(cell)}")
    return value


def _duty(cell: str, what: str) -> float:
    """A motor's duty cycle or a joystick axis (``what``), -1..1."""
    value = _number(cell)
    if not -1.0 <= value <= 1.0:
        raise _BadCell(f"{what} must be within -1..1, got {value}")
    return value


def _rows(p: Path, fh: BinaryIO) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each row that is not blank or a comment; ScriptError at a
    field longer than MAX_FIELD characters. Line numbers count comment and blank lines."""
    reader = csv.reader(_lines(p, fh))
    for row in reader:
        if not row or row[0].lstrip().startswith("#"):
            continue
        for col, cell in enumerate(row, start=1):
            if len(cell) > MAX_FIELD:
                raise ScriptError(f"{p}: row {reader.line_num}, column {col}: a field of "
                                  f"{len(cell)} characters; fields hold at most {MAX_FIELD}")
        yield reader.line_num, row
