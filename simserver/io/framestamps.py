"""The time stamps of a camera frame on NetworkTables, as a coprocessor's would be.

A frame goes out stamped with its publish (delivery) time in the robot program's time base,
converted to this instance's clock with the server time offset ntcore applies when it sends
it, so the robot sees exactly that time; the payload carries the capture time in the same
base. ntcore keeps a value only if its time stamp is no older than the topic's last one: a
frame stamped earlier than the one before would be dropped without a word (measured, pyntcore
2026.2), so stamps never go backwards here; a frame that would have is stamped as published at
the same moment as the previous one, its latency longer by as much.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import ntcore

from simserver.models.camera import Frame


class Stamps(NamedTuple):
    """capture, publish: µs of robot time. nt_time: the time stamp (µs of this instance's
    clock) to set the frame's values with, 0 for "now". known: whether the robot's time base
    was known (otherwise the times are "now", less the frame's latency for the capture)."""

    capture: int
    publish: int
    nt_time: int
    known: bool

    @property
    def latency_ms(self) -> float:
        """Capture to publication, ms."""
        return (self.publish - self.capture) / 1000.0


class FrameStamper:
    """Stamps one camera's frames (in delivery order) on ``inst``; ``robot_time`` maps
    simulated time (s) to the robot program's NT server time (s), NaN when unknown."""

    def __init__(self, inst: ntcore.NetworkTableInstance, robot_time: Callable[[float], float]):
        self._inst = inst
        self._robot_time = robot_time
        self._last = 0  # nt_time of the previous frame, µs

    def stamps(self, frame: Frame) -> Stamps:
        """The stamps of ``frame``, never older than the previous frame's."""
        offset = self._inst.getServerTimeOffset() or 0
        capture = self._robot_time(frame.capture_time)
        publish = self._robot_time(frame.delivery_time)
        if not (math.isfinite(capture) and math.isfinite(publish)):
            publish_us = ntcore._now() + offset
            return Stamps(publish_us - round(frame.latency * 1e6), publish_us, 0, False)
        nt_time = max(round(publish * 1e6) - offset, self._last, 1)
        self._last = nt_time
        return Stamps(round(capture * 1e6), nt_time + offset, nt_time, True)
