"""The robot program's own NetworkTables topics: read them as they arrive, with their times.

simserver normally reads only its input topics (``/simserver/...``). Two features need more of
what the robot program publishes: a scenario's ``[expect.odometry]`` check (the robot's belief
of its pose, from a Field2d or a ``struct:Pose2d`` topic) and ``--record`` (every topic, so
AdvantageScope shows the robot's belief beside simserver's truth). :class:`RobotTopicReader`
holds one ``MultiSubscriber`` on the wanted prefixes and a listener poller for remote values,
so every value the server sends is kept, each with its NT server timestamp.

    reader = RobotTopicReader(inst, ["/SmartDashboard/Field/Robot", "/kitbot/"])
    for v in reader.read():            # once per tick
        v.topic, v.type, v.value, v.server_time   # server_time: s on the NT server's clock

Measured with pyntcore 2026.2.2 (tests/io/test_robottopics.py): with ``sendAll`` every value
a server-side publisher sets reaches the client with the timestamp it was set with; values set
before the client's subscription reaches the server are lost except the last; a publisher that
sets the same value again (no ``keepDuplicates``, the default) sends nothing, so a value holds
until the next one. In a robot program in simulation the NT server's clock is the robot's
FPGA clock (ARCHITECTURE.md), which :meth:`simserver.io.nt.NtAdapter.sim_time` turns into
simulated time.

:func:`decode_pose` reads a pose from the two usual wire formats: a Field2d object's
``double[]`` ``[x m, y m, heading deg, ...]`` (the first pose) and a ``struct:Pose2d`` (x m,
y m, heading rad as three little-endian doubles).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import ntcore

# Every value, as soon as ntcore may send it (its 5 ms floor), never merged with the next one.
OPTIONS = ntcore.PubSubOptions(periodic=0.001, sendAll=True)
POSE2D_BYTES = 24  # struct:Pose2d: translation (x, y) and rotation (rad), three doubles
POSE_TYPES = ("double[]", "struct:Pose2d")
_T = ntcore.NetworkTableType
_TYPE_NAMES = {_T.kBoolean: "boolean", _T.kDouble: "double", _T.kString: "string",
               _T.kInteger: "int", _T.kFloat: "float", _T.kRaw: "raw",
               _T.kBooleanArray: "boolean[]", _T.kDoubleArray: "double[]",
               _T.kStringArray: "string[]", _T.kIntegerArray: "int[]",
               _T.kFloatArray: "float[]"}


@dataclass(frozen=True)
class RobotValue:
    """One value of a robot program's topic. type: the NT type string ("double",
    "double[]", "struct:Pose2d", ...); value: the Python value (bytes for raw and struct
    types); server_time: when it was set, s on the NT server's clock (the robot program's
    FPGA time); sim_time: the simulated time (s) that moment corresponds to, NaN while
    unknown (filled in by the NT adapter)."""

    topic: str
    type: str
    value: Any
    server_time: float
    sim_time: float = math.nan


class RobotTopicReader:
    """Receives every value of the topics under ``prefixes`` that other NT peers publish.

    Values this instance publishes itself are not reported. ``exclude``: prefixes to leave
    out (simserver's own input topics, already handled elsewhere)."""

    def __init__(self, inst: ntcore.NetworkTableInstance, prefixes: Iterable[str],
                 exclude: Iterable[str] = ()) -> None:
        self.prefixes = tuple(dict.fromkeys(prefixes))
        self.exclude = tuple(exclude)
        self._sub = ntcore.MultiSubscriber(inst, list(self.prefixes), OPTIONS)
        self._poller = ntcore.NetworkTableListenerPoller(inst)
        self._poller.addListener(self._sub, ntcore.EventFlags.kValueRemote)

    def read(self) -> list[RobotValue]:
        """Every value received since the last call, in arrival order (in time order per
        topic)."""
        out: list[RobotValue] = []
        for event in self._poller.readQueue():
            data = event.data
            if not isinstance(data, ntcore.ValueEventData):
                continue
            name = data.topic.getName()
            if name.startswith(self.exclude):
                continue
            value = data.value
            if value.type() == ntcore.NetworkTableType.kUnassigned:
                continue
            raw = value.value()
            if isinstance(raw, (bytes, bytearray, memoryview)):
                raw = bytes(raw)
            # A topic unpublished before its value is read has lost its type string.
            nt_type = data.topic.getTypeString() or _TYPE_NAMES.get(value.type(), "raw")
            out.append(RobotValue(name, nt_type, raw, value.server_time() * 1e-6))
        return out

    def close(self) -> None:
        """Stop listening (the instance itself belongs to the caller)."""
        self._poller.close()
        self._sub.close()


def decode_pose(nt_type: str, value: Any) -> tuple[float, float, float] | None:
    """(x m, y m, heading rad) from a Field2d ``double[]`` (first pose, heading in degrees)
    or a ``struct:Pose2d``; None for any other type, a short array or a non-finite value."""
    if nt_type == "double[]":
        if not isinstance(value, (list, tuple)) or len(value) < 3:
            return None
        try:
            x, y, deg = (float(v) for v in value[:3])
        except (TypeError, ValueError):
            return None
        pose = (x, y, math.radians(deg))
    elif nt_type == "struct:Pose2d":
        if not isinstance(value, bytes) or len(value) != POSE2D_BYTES:
            return None
        pose = struct.unpack("<3d", value)
    else:
        return None
    return pose if all(math.isfinite(v) for v in pose) else None
