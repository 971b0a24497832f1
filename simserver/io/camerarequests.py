"""What robot code sends to a camera: its settings topics, read, checked and turned into
requests for the camera model, and every other key it writes reported once.

A camera's publisher (:mod:`simserver.io.limelight`, :mod:`simserver.io.photonvision`) owns a
:class:`RequestReader` on its table: every value another NT peer (the robot program) writes
there arrives with its topic's key (the name below the table). The publisher interprets the
keys it models; model settings (pipeline, tag filter, throttle, driver mode) become
:class:`~simserver.models.camera.CameraRequest` values the session hands to the world before
the next step, so they apply from the next capture. A key nobody models, or a bad value
(wrong type, NaN, a pipeline index out of range), is logged once per camera and key at
warning level and changes nothing.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from typing import Any

import ntcore

from simserver.io.robottopics import RobotTopicReader
from simserver.util import untrusted

log = logging.getLogger("simserver.vision")


class RequestReader:
    """Values other peers write under ``prefix`` (a table, ending in "/"), as (key, NT type,
    value), key being the topic name below the prefix; and the once-per-key log lines of one
    ``camera``."""

    def __init__(self, inst: ntcore.NetworkTableInstance, prefix: str, camera: str):
        self.prefix = prefix
        self.camera = camera
        self._reader = RobotTopicReader(inst, [prefix])
        self._said: set[tuple[str, str]] = set()

    def read(self) -> Iterator[tuple[str, str, Any]]:
        """Every value received since the last call, in arrival order."""
        for v in self._reader.read():
            yield v.topic.removeprefix(self.prefix), v.type, v.value

    def once(self, key: str, cause: str, message: str, *args: object,
             level: int = logging.WARNING) -> None:
        """Log ``message % args`` the first time ``cause`` happens for ``key`` on this
        camera (a cause: "ignored", "bad"...)."""
        if (key, cause) in self._said:
            return
        self._said.add((key, cause))
        log.log(level, "camera %s: " + message, self.camera, *args)

    def unmodelled(self, key: str, value: Any, what: str) -> None:
        """Report once that robot code wrote ``key``, which simserver does not model."""
        self.once(key, "ignored", "robot code set %s%s = %s, which simserver does not model "
                  "(%s): ignored; said once", self.prefix, key[:64], excerpt(value), what)

    def bad(self, key: str, value: Any, expected: str) -> None:
        """Report once that robot code wrote a bad value to a modelled ``key``."""
        self.once(key, "bad", "robot code set %s%s = %s, expected %s: ignored; said once",
                  self.prefix, key[:64], excerpt(value), expected)

    def close(self) -> None:
        """Stop listening."""
        self._reader.close()


def excerpt(value: Any) -> str:
    """A short text of a value robot code sent (bytes, strings and long arrays cut)."""
    return untrusted.clip(repr(value), untrusted.EXCERPT)


def whole(value: Any, lo: int, hi: int) -> int | None:
    """``value`` as an int in lo..hi when it is a finite whole number (an NT double or int);
    None otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value != math.floor(value) or not lo <= value <= hi:
        return None
    return int(value)


def numbers(value: Any, count: int | None = None) -> list[float] | None:
    """``value`` as a list of finite floats (of length ``count`` when given); None when it is
    not one."""
    if not isinstance(value, (list, tuple)) or (count is not None and len(value) != count):
        return None
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return None
        out.append(float(v))
    return out


def ids(value: Any, largest: int) -> list[int] | None:
    """``value`` as a list of tag ids 0..largest (an NT double[] or int[]); None otherwise."""
    got = numbers(value)
    if got is None:
        return None
    out = [whole(v, 0, largest) for v in got]
    return None if any(i is None for i in out) else [int(i) for i in out if i is not None]

