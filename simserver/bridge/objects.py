"""The robot program's own device objects, by ``hal`` address.

Some facts live only in the program's vendor objects, not in the HAL: a REV SPARK's
``inverted`` setting is applied by REVLib to what the program reads and writes, while the
SPARK's SimDevice holds the program's setpoint as given. The objects are found by walking the
attributes of the program's RobotBase (:func:`simserver.bridge.discovery.walk`); pybind11
objects are not on the garbage collector's list, so there is no other way to them.

    objects = ProgramObjects()
    spark = objects.get("sparkmax:3")   # the program's rev.SparkMax(3), or None
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from simserver.bridge.discovery import the_robot, walk
from simserver.config.hal import BARE_KINDS

RESCAN = 1.0  # s between searches while an asked-for object is missing
SEARCHES = 10  # searches before an object is given up as unreachable
CLASSES = {"SparkMax": "sparkmax", "SparkFlex": "sparkflex", "TalonFX": "talonfx",
           "CANcoder": "cancoder", "Pigeon2": "pigeon2", "ADIS16470_IMU": "adis16470",
           "ADIS16448_IMU": "adis16448"}


def address_of(obj: Any) -> str | None:
    """The ``hal`` address of a vendor device object (an instance of a class in
    :data:`CLASSES`, or of a subclass), else None."""
    kind = next((CLASSES[c.__name__] for c in type(obj).__mro__ if c.__name__ in CLASSES),
                None)
    if kind is None:
        return None
    if kind in BARE_KINDS:  # one per robot: no id
        return kind
    try:
        can_id = obj.device_id if hasattr(obj, "device_id") else obj.getDeviceId()  # Phoenix, REV
        return f"{kind}:{int(can_id)}"
    except Exception:  # a closed device
        return None


class ProgramObjects:
    """Device objects by address, reachable from ``root()`` (the program's RobotBase), searched
    for again at most every :data:`RESCAN` s while one asked for is missing, :data:`SEARCHES`
    times at most."""

    def __init__(self, root: Callable[[], Any] = the_robot,
                 clock: Callable[[], float] = time.monotonic):
        self._root, self._clock = root, clock
        self._found: dict[str, Any] = {}
        self._searched_at = -RESCAN
        self.searches = 0

    def get(self, address: str) -> Any | None:
        """The program's object for ``address``, or None (not created yet, or unreachable)."""
        obj = self._found.get(address)
        if obj is None and self.searches < SEARCHES and \
                self._clock() - self._searched_at >= RESCAN:
            self._search()
            obj = self._found.get(address)
        return obj

    def given_up(self, address: str) -> bool:
        """Whether ``address`` was searched for :data:`SEARCHES` times and not found."""
        return address not in self._found and self.searches >= SEARCHES

    def _search(self) -> None:
        self._searched_at = self._clock()
        robot = self._root()
        if robot is None:  # before the program built its robot: not a search
            return
        self.searches += 1
        for _, obj in walk(robot, "robot"):
            address = address_of(obj)
            if address is not None:
                self._found.setdefault(address, obj)
