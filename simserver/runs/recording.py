"""A recording of `simserver run --record` read back as the run's trace, for `simserver plot`."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simserver.contract import topics
from simserver.io.structs import pose3d_rows
from simserver.io.wpilog import (
    FIELD_LENGTH,
    FIELD_WIDTH,
    TRUTH_HEADING,
    TRUTH_OMEGA,
    TRUTH_VX,
    TRUTH_VY,
    TRUTH_X,
    TRUTH_Y,
    WHEEL_LEFT,
    WHEEL_RIGHT,
    RecordError,
    Series,
    read_doubles,
    read_pieces,
)
from simserver.runs.report import Trace


@dataclass
class Recording:
    """What `simserver plot` needs from a recording: the trace and the field (m, m), None when
    the log does not say."""

    trace: Trace
    field_size: tuple[float, float] | None


# Trace channel -> the entry it is read from.
_CHANNELS = {
    "x": TRUTH_X, "y": TRUTH_Y, "heading": TRUTH_HEADING, "vx": TRUTH_VX, "vy": TRUTH_VY,
    "v_left": WHEEL_LEFT, "v_right": WHEEL_RIGHT, "omega": TRUTH_OMEGA,
    "voltage": topics.BATTERY_VOLTAGE, "current": topics.BATTERY_CURRENT,
    "min_voltage": topics.BATTERY_MIN_VOLTAGE, "max_current": topics.BATTERY_MAX_CURRENT,
}
# Aggregate channel -> the instant one a recording made before the aggregates stands in for.
_BEFORE_AGGREGATES = {"min_voltage": "voltage", "max_current": "current"}
_CURRENTS = topics.current("")


def read_recording(path: str | Path) -> Recording:
    """Read a recording written by :class:`~simserver.io.wpilog.WpilogRecorder`; RecordError
    (naming the file) when it is missing, not a data log, or not a simserver recording."""
    p = Path(path)
    series = read_doubles(p, set(_CHANNELS.values()) | {FIELD_LENGTH, FIELD_WIDTH}, _CURRENTS)
    clock = series.get(TRUTH_X)
    if clock is None or not clock[0]:
        raise RecordError(f"{p}: no {TRUTH_X} values: not a recording of `simserver run "
                          "--record`")
    times = clock[0]
    columns = {ch: _hold(series.get(name), times) for ch, name in _CHANNELS.items()}
    columns["time"] = [t * 1e-6 for t in times]
    for channel, instant in _BEFORE_AGGREGATES.items():
        if _CHANNELS[channel] not in series:
            columns[channel] = columns[instant]
    currents = {name[len(_CURRENTS):]: _hold(s, times) for name, s in sorted(series.items())
                if name.startswith(_CURRENTS)}
    length, width = series.get(FIELD_LENGTH), series.get(FIELD_WIDTH)
    field = (length[1][0], width[1][0]) if length and width else None
    counts, arrays = read_pieces(p)
    scored = topics.pieces_scored("")
    scores = {name[len(scored):]: _hold(s, times) for name, s in counts.items()
              if name.startswith(scored)}
    pieces = {state: _positions([raw for name, raw in arrays.items()
                                 if name.startswith(topics.pieces_in(state, ""))])
              for state in topics.SHOWN} if arrays else {}
    return Recording(Trace.from_columns(columns, currents, scores, pieces), field)


def _positions(arrays: list[bytes]) -> np.ndarray:
    """(n, 2) (x m, y m) of the poses in ``arrays`` (``struct:Pose3d[]`` values)."""
    return np.concatenate([pose3d_rows(raw)[:, :2] for raw in arrays] or [np.empty((0, 2))])


def _hold(series: Series | None, times: list[int]) -> list[float]:
    """``series`` sampled at ``times`` (µs), holding the last value (NaN before the first)."""
    if series is None:
        return [math.nan] * len(times)
    stamps, values = series
    if stamps == times:
        return values
    out = []
    for t in times:
        i = bisect.bisect_right(stamps, t) - 1
        out.append(values[i] if i >= 0 else math.nan)
    return out
