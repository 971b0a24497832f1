"""Recording a run as a WPILib data log (``.wpilog``), and reading its numbers back
(:func:`read_doubles`; :mod:`simserver.runs.recording` turns them into a run's trace).

``simserver run --record run.wpilog`` writes, after every tick, the inputs (motor duty cycles,
solenoids, Driver Station commands), the sensors and outputs the robot program would see, and
the model's true state, under the names of the NetworkTables topic contract
(:mod:`simserver.contract.topics`), so AdvantageScope shows the same tree as a live connection.
A few values that are not NT topics are recorded under log-only names (``LOG_SPECS``, and the
outputs a drivetrain declares with ``nt=False``): the true pose as plain doubles, body
speeds, wall contact, the field size and the time the robot program was enabled.

Timestamps are simulated time in microseconds, so a ``--fast`` or lock-step run reads like a
real-time one. DataLog reads a timestamp of 0 as "now" (wall clock), so records at simulated
time 0 (entry starts, the field size) are stamped 1 µs. When the world is reset mid-run (a robot
program reconnecting), simulated time restarts at 0 but the log's clock carries on from the
last record: timestamps always increase, and ``/simserver/time`` shows the reset.

Numbers and struct values are appended every tick; booleans, integers, strings, arrays and
Pose3d arrays (game pieces, mechanism components: hundreds of pieces at rest need no record
each tick) only when they change. Each drawn mechanism's Mechanism2d table is recorded under
the names WPILib's Mechanism2d publishes (``/SmartDashboard/<mechanism>/...``), as a robot
program's DataLogManager would capture it from NetworkTables, so AdvantageScope's Mechanism
tab shows it from the file.

With ``--record-robot-topics`` (by default every topic) the robot program's own NetworkTables
topics are recorded too, as AdvantageScope names them when it logs NT itself: ``NT:`` and the
topic (``NT:/SmartDashboard/Field/Robot``), so its belief (odometry, Field2d) shows beside
simserver's truth. Each value is stamped with the simulated time it was published at (its NT
server time converted, see :meth:`simserver.io.nt.NtAdapter.sim_time`), not when it arrived;
since values arrive a little late, their records may come after later-stamped ones in the
file (readers sort by timestamp). Struct schemas the robot program publishes
(``/.schema/struct:...``) become the log's own schemas.

wpiutil 2026.2.2's ``StructLogEntry`` cannot be constructed ("Object is closed"), so the pose
is written as a raw entry of type ``struct:Pose2d`` with its schema registered through
``DataLog.addStructSchema`` and packed with ``wpiutil.wpistruct`` (the same bytes).
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import wpiutil
from wpimath.geometry import Pose2d
from wpiutil import wpistruct
from wpiutil.log import DataLogReader

from simserver import __version__
from simserver.config.model import Config
from simserver.config.registry import registry
from simserver.contract import topics
from simserver.contract.snapshot import SIDE_SPEEDS, Snapshot
from simserver.contract.topics import TopicSpec
from simserver.io import field2d, mechanism2d
from simserver.io.robottopics import RobotValue
from simserver.io.structs import pack, struct_class
from simserver.util.untrusted import FileRefused, open_regular

log = logging.getLogger("simserver.wpilog")

MAX_RECORDING = 2**30  # bytes `simserver plot` reads; a 60 s kitbot run records about 2 MB
TRUTH = f"{topics.PREFIX}/truth"
TRUTH_X = f"{TRUTH}/x"
TRUTH_Y = f"{TRUTH}/y"
TRUTH_HEADING = f"{TRUTH}/heading"
TRUTH_VX = f"{TRUTH}/vx"
TRUTH_VY = f"{TRUTH}/vy"
TRUTH_OMEGA = f"{TRUTH}/omega"
WHEEL_LEFT, WHEEL_RIGHT = (topics.drive_output(n) for n in SIDE_SPEEDS)
TOUCHING_WALL = f"{TRUTH}/touching_wall"
WALL_HITS = f"{TRUTH}/wall_hits"
FIELD_LENGTH = f"{topics.PREFIX}/field/length"
FIELD_WIDTH = f"{topics.PREFIX}/field/width"
ENABLED_AT = f"{topics.PREFIX}/run/enabled_at"
ROBOT_TOPICS = "NT:"  # entry name prefix of the robot program's own topics (as AdvantageScope)
SCHEMA_TOPICS = "/.schema/"

LOG_SPECS = (
    TopicSpec(TRUTH_X, "double", "log", "m", "True x (field frame)."),
    TopicSpec(TRUTH_Y, "double", "log", "m", "True y (field frame)."),
    TopicSpec(TRUTH_HEADING, "double", "log", "rad", "True heading, CCW positive, continuous."),
    TopicSpec(TRUTH_VX, "double", "log", "m/s", "True velocity along field x."),
    TopicSpec(TRUTH_VY, "double", "log", "m/s", "True velocity along field y."),
    TopicSpec(TRUTH_OMEGA, "double", "log", "rad/s", "True yaw rate, CCW positive."),
    TopicSpec(TOUCHING_WALL, "boolean", "log", "", "Touching a field wall in the last substep."),
    TopicSpec(WALL_HITS, "int", "log", "count", "Separate wall contacts since reset."),
    TopicSpec(FIELD_LENGTH, "double", "log", "m", "Field length (x), recorded once."),
    TopicSpec(FIELD_WIDTH, "double", "log", "m", "Field width (y), recorded once."),
    TopicSpec(ENABLED_AT, "double", "log", "s",
              "Log time at which the robot program reported the `--enable` mode."),
)

# NT type -> DataLog type where they differ.
_LOG_TYPES = {"int": "int64"}
# wpiutil's DataLogWriter keeps records in memory until flush() and blocks for good once about
# 1 MiB is waiting (measured with 2026.2.2), so flush well before that, and at least every
# FLUSH_PERIOD of wall time so a file being watched (or a killed process) lags little.
FLUSH_BYTES = 256 * 1024
FLUSH_PERIOD = 1.0  # s, wall time
RECORD_OVERHEAD = 16  # bytes: an upper bound of a record's header
MIN_RECORD = 4  # bytes: the least a record takes in the file (a 4-byte header, no payload)
# DataLogWriter cannot report a failed write: it goes on silently and aborts the process when
# closed ("LLVM ERROR: IO failure on output stream", measured with 2026.2.2 on a full disk).
# So the recorder stops while the disk still has SPACE_RESERVE free beyond what is waiting,
# closes the file cleanly, and keeps simulating; a writer that failed anyway (the disk filled
# faster than that, a quota) is never closed (see ``abandoned``).
SPACE_RESERVE = 8 * 1024 * 1024  # bytes
SPACE_MARGIN = 64 * 1024  # bytes: below this beyond what waits, closing could fail too
_abandoned: list[wpiutil.DataLogWriter] = []  # writers in error: their destructor would abort
FIRST_STAMP = 1  # µs: DataLog reads 0 as "now"

# value, timestamp µs -> payload bytes written (0 when nothing was written)
Writer = Callable[[Any, int], int]


class RecordError(Exception):
    """A recording that cannot be written or read; the message names the file."""


def stamp(t: float) -> int:
    """DataLog timestamp (µs, at least 1) of log time ``t`` s."""
    return max(FIRST_STAMP, round(t * 1e6))


def _infer_type(value: Any) -> str:
    """The NT type of a value with no spec (Driver Station commands)."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int"
    if isinstance(value, Sequence):
        return "boolean[]" if value and isinstance(value[0], bool) else "double[]"
    return "double"


def _open(path: Path) -> wpiutil.DataLogWriter:
    """A DataLogWriter on ``path``, parents created; RecordError when it cannot be."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordError(f"{path}: cannot create its directory: {exc.strerror or exc}") from None
    try:
        return wpiutil.DataLogWriter(str(path), f"simserver {__version__}")
    except (RuntimeError, OSError) as exc:
        raise RecordError(f"{path}: cannot write: {exc}") from None


def abandoned() -> bool:
    """Whether a recording's writer failed and was left open: the process must then end with
    ``os._exit`` (its destructor would abort the process)."""
    return bool(_abandoned)


def _free_bytes(directory: Path) -> int | None:
    """Bytes free to this user on the disk of ``directory``; None when it cannot be told."""
    try:
        return shutil.disk_usage(directory).free
    except OSError:
        return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _mechanism_topics(cfg: Config) -> dict[str, dict[str, tuple[str, bool]]]:
    """mechanism -> output -> (topic, whether the output is a list of Field2d poses)."""
    reg = registry()
    out: dict[str, dict[str, tuple[str, bool]]] = {}
    for name, section in cfg.mechanisms.items():
        mt = reg.get("mechanism", section.type)
        if mt is not None:
            out[name] = {o.name: (field2d.output_topic(name, o).name, o.type == "field2d")
                         for o in mt.outputs}
    return out


def under(robot: str, name: str) -> str:
    """Entry ``name`` (a /simserver name) of another robot of the arena: under its prefix."""
    return topics.robot_prefix(robot) + name.removeprefix(topics.PREFIX)


def _field2d(poses: Any) -> list[float]:
    """Poses (x m, y m, heading rad) as the Field2d wire has them: [x, y, deg, ...]."""
    return [v for x, y, h in poses for v in (float(x), float(y), math.degrees(h))]


class WpilogRecorder:
    """Writes one run to a ``.wpilog``: :meth:`record` after every tick, then :meth:`close`
    (also after Ctrl-C: the file is complete once closed)."""

    def __init__(self, path: str | Path, cfg: Config, field_size: tuple[float, float],
                 others: Mapping[str, Config] | None = None):
        """Create ``path`` (and its parents) and record the field size (m); RecordError if the
        file cannot be written. ``others``: the other robots of the arena (``[robots.<name>]``)
        by name, recorded under :func:`~simserver.contract.topics.robot_prefix` with the same
        entries as the main robot's (their Field2d poses are on the SimField, not recorded)."""
        self.path = Path(path)
        self._log = _open(self.path)
        self._mechanisms = _mechanism_topics(cfg)
        pieces = [field2d.PIECES.of(mechanism=m) for m, outputs in self._mechanisms.items()
                  if any(poses for _, poses in outputs.values())]
        self._specs = {s.name: s for s in (*topics.contract_for(cfg), *pieces, *LOG_SPECS)}
        self._others = {name: _mechanism_topics(other) for name, other in (others or {}).items()}
        for name, other in (others or {}).items():
            self._specs.update({under(name, s.name): s for s in (
                *topics.contract_for(other), *LOG_SPECS) if s.name.startswith(topics.PREFIX)})
        self._pieces = False  # the game-piece entries are in _specs
        self._writers: dict[str, Writer] = {}
        self._epoch = 0.0  # s: log time of simulated time 0 (moves on at a world reset)
        self._last_time = 0.0  # s: simulated time of the last snapshot
        self._enabled_at: float | None = None  # s, simulated time, as last recorded
        self._pending = 0  # bytes appended since the last flush (upper bound)
        self._flushed_at = time.monotonic()
        self._flushed_records = 0
        self.records = 0
        self.closed = False
        self.stopped: str | None = None  # why recording stopped before the end of the run
        self._robot: dict[str, tuple[str, Callable[[Any, int], None]]] = {}  # name -> type, append
        self._log.addStructSchema(Pose2d, FIRST_STAMP)
        self._write(FIELD_LENGTH, field_size[0], FIRST_STAMP)
        self._write(FIELD_WIDTH, field_size[1], FIRST_STAMP)

    # --- writing ---------------------------------------------------------------------------

    def record(self, snap: Snapshot, robot_mode: str | None = None,
               enabled_at: float | None = None,
               commands: Mapping[str, object] | None = None,
               others: Mapping[str, Snapshot] | None = None) -> None:
        """Append one tick: ``snap`` (after the step), the robot program's Driver Station mode,
        the simulated time (s) it was enabled at, the Driver Station commands sent to it
        (topic -> mode string or joystick array) and the other robots' snapshots by name
        (those given to the constructor)."""
        if self.closed:
            return
        if snap.time < self._last_time:  # the world was reset: keep the log's clock going
            self._epoch += self._last_time
        self._last_time = snap.time
        ts = stamp(self._epoch + snap.time)
        for name, value in self.values(snap).items():
            self._write(name, value, ts)
        for robot, other in (others or {}).items():
            mechanisms = self._others.get(robot)
            if mechanisms is None:
                continue
            for name, value in self.values(other, mechanisms).items():
                if name.startswith(topics.PREFIX):
                    self._write(under(robot, name), value, ts)
        if robot_mode is not None:
            self._write(topics.ROBOT_MODE, robot_mode, ts)
        for name, value in (commands or {}).items():
            self._write(name, value, ts)
        if enabled_at is not None and enabled_at != self._enabled_at:
            self._write(ENABLED_AT, self._epoch + enabled_at, ts)
        self._enabled_at = enabled_at
        if self._pending > FLUSH_BYTES or time.monotonic() - self._flushed_at > FLUSH_PERIOD:
            self.flush()

    def record_robot(self, values: Sequence[RobotValue]) -> None:
        """Append values of the robot program's own topics as ``NT:<topic>`` entries, each
        stamped with the simulated time it was published at (the last tick's when that is
        unknown). A topic that changes its type keeps its first; values of a type the data
        log has no record for are skipped."""
        if self.closed:
            return
        for v in values:
            if v.topic.startswith(SCHEMA_TOPICS) and isinstance(v.value, bytes):
                self._log.addSchema(v.topic.removeprefix(SCHEMA_TOPICS), v.type, v.value,
                                    FIRST_STAMP)
                continue
            t = v.sim_time if math.isfinite(v.sim_time) else self._last_time
            ts = stamp(self._epoch + t)
            name = ROBOT_TOPICS + v.topic
            entry = self._robot.get(name)
            if entry is None:
                append = _robot_writer(self._log, name, v.type, ts)
                if append is None:
                    continue
                entry = self._robot[name] = (v.type, append)
            if entry[0] != v.type:
                continue
            try:
                entry[1](v.value, ts)
            except (TypeError, ValueError):
                continue
            self.records += 1
            self._pending += RECORD_OVERHEAD + _payload(v.value)

    def values(self, snap: Snapshot,
               mechanisms: dict[str, dict[str, tuple[str, bool]]] | None = None
               ) -> dict[str, Any]:
        """Entry name -> value of everything recorded from one snapshot (of the main robot,
        or of a robot whose mechanisms' topics are ``mechanisms``)."""
        out: dict[str, Any] = {
            TRUTH_X: snap.x, TRUTH_Y: snap.y, TRUTH_HEADING: snap.heading,
            TRUTH_VX: snap.vx, TRUTH_VY: snap.vy, TRUTH_OMEGA: snap.omega,
            TOUCHING_WALL: snap.touching_wall, WALL_HITS: snap.wall_hits,
        }
        out.update({topics.drive_output(n): v for n, v in snap.drive_log.items()})
        out.update({topics.motor(n): v for n, v in snap.duties.items()})
        out.update({topics.solenoid(n): v for n, v in snap.solenoids.items()})
        out.update(topics.output_values(snap))
        for mech, outputs in snap.mechanisms.items():
            names = (self._mechanisms if mechanisms is None else mechanisms).get(mech, {})
            for key, value in outputs.items():
                if key in names:
                    topic, poses = names[key]
                    out[topic] = _field2d(value) if poses else value
        if snap.components:
            out[topics.COMPONENTS] = snap.components
        if mechanisms is None:  # the main robot: the field's pieces, its drawings
            for mech, drawing in snap.drawings.items():
                out.update(mechanism2d.entries(mech, drawing))
            if snap.pieces is not None:
                if not self._pieces:
                    self._specs.update({s.name: s for s in topics.piece_specs(snap.pieces)})
                    self._pieces = True
                out.update(topics.piece_values(snap.pieces))
        return out

    def _write(self, name: str, value: Any, ts: int) -> None:
        writer = self._writers.get(name)
        if writer is None:
            writer = self._writers[name] = self._start(name, value, ts)
        size = writer(value, ts)
        if size:
            self.records += 1
            self._pending += RECORD_OVERHEAD + size

    def _start(self, name: str, value: Any, ts: int) -> Writer:
        """Start entry ``name`` (type from the topic contract, else from ``value``)."""
        spec = self._specs.get(name)
        nt_type = spec.type if spec is not None else _infer_type(value)
        struct = struct_class(nt_type)
        if struct is not None and struct is not Pose2d:
            self._log.addStructSchema(struct, ts)
        meta = json.dumps({"unit": spec.unit, "doc": spec.doc} if spec is not None else {})
        entry = self._log.start(name, _LOG_TYPES.get(nt_type, nt_type), meta, ts)
        return _writer(self._log, entry, nt_type)

    def flush(self) -> None:
        """Write everything appended so far to the file, or stop recording (a warning, the
        file closed whole) when the disk is nearly full; the run goes on either way."""
        if self.closed:
            return
        if self._short_of_space():
            return
        before = _size(self.path)
        self._log.flush()
        appended = self.records - self._flushed_records
        if _size(self.path) - before < MIN_RECORD * appended:
            self._abandon(f"writing {self.path} failed: {appended} values did not reach "
                          "the file (a full disk or a file size limit)")
            return
        self._pending = 0
        self._flushed_records = self.records
        self._flushed_at = time.monotonic()

    def _short_of_space(self) -> bool:
        """Stop recording if the disk cannot take what waits plus SPACE_RESERVE."""
        free = _free_bytes(self.path.parent)
        if free is None or free >= self._pending + SPACE_RESERVE:
            return False
        why = (f"the disk of {self.path} is nearly full ({free / 2**20:.1f} MiB free, "
               f"recording keeps {SPACE_RESERVE // 2**20} MiB): recording stopped at "
               f"{self._epoch + self._last_time:.2f} s")
        if free < self._pending + SPACE_MARGIN:
            self._abandon(why)
        else:
            self.stopped = why
            log.warning("%s; the file is complete up to there and the run goes on", why)
            self._finish()
        return True

    def _abandon(self, why: str) -> None:
        """Leave a writer that cannot finish its file: what it holds is lost, the file ends
        at the last flush."""
        self.stopped = why
        self.closed = True
        self.records = self._flushed_records
        _abandoned.append(self._log)
        log.warning("%s; the file ends where the write failed and the run goes on", why)

    def close(self) -> None:
        """Flush and close the file (idempotent)."""
        if self.closed:
            return
        if not self._short_of_space():  # which closes the file or leaves it
            self._finish()

    def _finish(self) -> None:
        self.closed = True
        self._log.flush()
        self._log.stop()
        log.info("recorded %d values to %s", self.records, self.path)


# (DataLogWriter method, conversion of the value, payload bytes of the converted)
_Append = tuple[str, Callable[[Any], Any], Callable[[Any], int]]
_APPEND: dict[str, _Append] = {  # by NT type
    "double": ("appendDouble", float, lambda v: 8),
    "boolean": ("appendBoolean", bool, lambda v: 1),
    "int": ("appendInteger", int, lambda v: 8),
    "string": ("appendString", str, lambda v: len(v.encode())),
    "double[]": ("appendDoubleArray", lambda v: [float(x) for x in v], lambda v: 8 * len(v)),
    "boolean[]": ("appendBooleanArray", lambda v: [bool(x) for x in v], len),
}
_STRUCT_APPEND: _Append = ("appendRaw", wpistruct.pack, len)  # struct types: raw, every tick
# Pose3d arrays (game pieces, components): raw, when they change (pieces at rest do not)
_CHANGING = ("struct:Pose3d[]",)


# NT type of a robot program's topic -> (DataLog type, DataLogWriter method).
_ROBOT_APPEND = {
    "double": ("double", "appendDouble"), "float": ("float", "appendFloat"),
    "int": ("int64", "appendInteger"), "boolean": ("boolean", "appendBoolean"),
    "string": ("string", "appendString"), "json": ("json", "appendString"),
    "double[]": ("double[]", "appendDoubleArray"), "float[]": ("float[]", "appendFloatArray"),
    "int[]": ("int64[]", "appendIntegerArray"), "boolean[]": ("boolean[]", "appendBooleanArray"),
    "string[]": ("string[]", "appendStringArray"),
}


def _robot_writer(dlog: wpiutil.DataLogWriter, name: str, nt_type: str, ts: int
                  ) -> Callable[[Any, int], None] | None:
    """Start entry ``name`` for a robot topic of NT type ``nt_type`` and return its append
    function (value, timestamp µs); raw, struct, protobuf and other byte types are raw records
    under their own type string. None for a type with no record (an empty type)."""
    if not nt_type:
        return None
    log_type, method = _ROBOT_APPEND.get(nt_type, (nt_type, "appendRaw"))
    entry = dlog.start(name, log_type, json.dumps({"source": "robot program"}), ts)
    append = getattr(dlog, method)
    return lambda value, stamp_us: append(entry, value, stamp_us)


def _payload(value: Any) -> int:
    """Bytes a value takes in a record (an upper bound for arrays of strings)."""
    if isinstance(value, (bytes, str)):
        return len(value)
    if isinstance(value, (list, tuple)):
        return sum(len(v) + 4 if isinstance(v, str) else 8 for v in value)
    return 8


def _writer(dlog: wpiutil.DataLogWriter, entry: int, nt_type: str) -> Writer:
    """The append function of one entry: numbers and poses every time, anything else only
    when it changed."""
    struct = struct_class(nt_type) is not None
    if struct and nt_type.endswith("[]"):
        method, convert, size = "appendRaw", lambda v: pack(nt_type, v), len
    elif struct:
        method, convert, size = _STRUCT_APPEND
    elif nt_type in _APPEND:
        method, convert, size = _APPEND[nt_type]
    else:
        raise ValueError(f"no DataLog writer for type {nt_type!r}")
    append = getattr(dlog, method)
    every_tick = (struct and nt_type not in _CHANGING) or nt_type == "double"
    last: list[Any] = []

    def write(value: Any, ts: int) -> int:
        data = convert(value)
        if not every_tick:
            if last and last[0] == data:
                return 0
            last[:] = [data]
        append(entry, data, ts)
        return int(size(data))
    return write


# --- reading ---------------------------------------------------------------------------------

Series = tuple[list[int], list[float]]  # timestamps µs, values


def _reader(path: Path) -> DataLogReader:
    """A reader of the data log ``path``; RecordError (naming the file) when it is missing or
    not a data log."""
    try:
        open_regular(path, MAX_RECORDING, "a recording").close()  # a FIFO would block
    except FileRefused as exc:
        raise RecordError(str(exc)) from None
    try:
        reader = DataLogReader(str(path))
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not reader.isValid():
        raise RecordError(f"{path}: not a WPILib data log (.wpilog)")
    return reader


def read_doubles(path: Path, names: set[str], prefix: str) -> dict[str, Series]:
    """Every double record of the entries named ``names`` or starting with ``prefix``, by
    entry name; RecordError (naming the file) when it is missing or not a data log."""
    wanted: dict[int, Series] = {}
    out: dict[str, Series] = {}
    for rec in _reader(path):
        if rec.isStart():
            start = rec.getStartData()
            if start.type == "double" and (start.name in names or
                                           start.name.startswith(prefix)):
                wanted[start.entry] = out.setdefault(start.name, ([], []))
            continue
        target = None if rec.isControl() else wanted.get(rec.getEntry())
        if target is not None and rec.getSize() == 8:
            target[0].append(rec.getTimestamp())
            target[1].append(rec.getDouble())
    return out


def read_pieces(path: Path) -> tuple[dict[str, Series], dict[str, bytes]]:
    """The game pieces of a recording: the records of every integer entry under
    ``/simserver/pieces/`` by entry name (the scores, as floats), and the last value of each
    ``struct:Pose3d[]`` entry there (the pose arrays); empty without pieces. RecordError as
    :func:`read_doubles`."""
    prefix = topics.PIECES + "/"
    counts: dict[int, Series] = {}
    arrays: dict[int, str] = {}
    series: dict[str, Series] = {}
    last: dict[str, bytes] = {}
    for rec in _reader(path):
        if rec.isStart():
            start = rec.getStartData()
            if start.name.startswith(prefix):
                if start.type == "int64":
                    counts[start.entry] = series.setdefault(start.name, ([], []))
                elif start.type == "struct:Pose3d[]":
                    arrays[start.entry] = start.name
            continue
        if rec.isControl():
            continue
        entry = rec.getEntry()
        if entry in counts and rec.getSize() == 8:
            counts[entry][0].append(rec.getTimestamp())
            counts[entry][1].append(float(rec.getInteger()))
        elif entry in arrays:
            last[arrays[entry]] = bytes(rec.getRaw())
    return series, last
