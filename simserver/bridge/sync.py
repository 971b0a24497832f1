"""Real time, robot side: one step exchange per robot loop, the robot's clock never paused.

When ``simserver run`` attaches in real time, every robot loop (the HAL's SimPeriodicAfter
callback, on the robot thread, right after the program's periodic code and its physics.py)
goes:

1. send the outputs the program just set, with the robot time (the first message of a link
   also lists the config's addresses the program never created: ``Bridge.missing``);
2. wait at most ``budget`` (wall time) for simserver's answer: the sensors of the world
   advanced to the next period;
3. write them into the HAL, so the next loop's robot code reads the world its outputs made,
   exactly as in lock-step and as with WPILib's in-process simulation.

simserver steps its world by the robot's clock (one period per loop; more when the robot
program skipped loops), so world time follows robot time. When the answer is late, the robot
program keeps running on the last sensors: the late answer is applied at the next loop and
no new period is sent until it has come, so nothing queues up. Late periods are counted,
said once here, and reported by simserver (log, summary, ``--json``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import wpilib

from simserver.bridge.core import Bridge
from simserver.io.stepwire import REASON, Link, LinkError, LinkTimeout, ProtocolError
from simserver.util.untrusted import clip


class RealtimeSync:
    """The real-time exchange; ``attach`` is called from the listening thread, ``periodic``
    from the robot thread."""

    def __init__(self, bridge: Bridge, budget: float, say: Callable[[str], None]):
        self.bridge = bridge
        self.budget = budget
        self.say = say
        self.late = 0  # periods whose answer did not come within the budget
        self._link: Link | None = None
        self._pending = False
        self._first = True  # the first message of a link also lists missing devices
        self._lock = threading.Lock()

    @property
    def attached(self) -> bool:
        """Whether a simserver exchanges periods with this program now."""
        return self._link is not None

    def attach(self, link: Link) -> bool:
        """Take ``link`` for the following robot loops; False when one is already attached."""
        with self._lock:
            if self._link is not None:
                return False
            self._link, self._pending, self._first = link, False, True
            return True

    def periodic(self) -> bool:
        """One robot loop; False when no simserver is attached (the caller then carries the
        values over NetworkTables)."""
        link = self._link
        if link is None:
            return False
        try:
            if self._pending and not self._collect(link, 0.0):
                self._count_late()
                return True
            message = {"time": wpilib.Timer.getFPGATimestamp(),
                       "values": self.bridge.outputs(), "late": self.late}
            if self._first:
                message["missing"] = self.bridge.missing()
                self._first = False
            link.send(message)
            self._pending = True
            if not self._collect(link, self.budget):
                self._count_late()
        except LinkError as exc:
            self._detach(link, str(exc))
            return False
        return True

    def _collect(self, link: Link, timeout: float) -> bool:
        """Apply simserver's answer if it comes within ``timeout`` s."""
        try:
            reply = link.receive(timeout)
        except LinkTimeout:
            return False
        if "bye" in reply:
            raise LinkError(f"simserver ended its run ({clip(str(reply['bye']), REASON)})")
        values = reply.get("values")
        if not isinstance(values, dict):
            raise ProtocolError("simserver sent a message without values")
        self.bridge.apply(values)
        self._pending = False
        return True

    def _count_late(self) -> None:
        self.late += 1
        if self.late == 1:
            self.say(f"real time: simserver did not answer within {self.budget * 1e3:g} ms; "
                     "the robot program goes on with the last sensors (late periods are "
                     "counted in simserver's summary)")

    def _detach(self, link: Link, why: str) -> None:
        with self._lock:
            self._link = None
        link.close()
        self.say(f"real time: {why}; sensors now come over NetworkTables, if at all")
