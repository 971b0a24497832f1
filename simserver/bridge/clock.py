"""Lock-step's robot clock: WPILib's ``stepTiming`` without its magicbot hang, never stuck silently.

In lock-step the bridge advances the paused robot clock one period at a time. WPILib's
``stepTiming(dt)`` (the HAL's ``HALSIM_StepTiming``) moves the clock from one notifier alarm to
the next and, at each, waits until every thread that owns a HAL notifier (the robot's loop,
each ``wpilib.Notifier``, vendor libraries' notifiers such as Phoenix 6's enable feed) is back
in ``HAL_WaitForNotifierAlarm``. It tells whether a woken notifier came back by the pair
(handle, count of waits), and the HAL hands a freed notifier's handle to the next notifier
created. magicbot makes a new loop notifier (robotpy_ext's ``NotifierDelay``) at every mode
change: when the mode before lasted one loop, the new notifier gets the old one's handle and
the same count (1) once it waits, so ``stepTiming`` takes it for the old notifier that has not
come back and waits for ever, the robot waiting on its loop alarm (measured: a magicbot robot
enabled at the first lock-step period, ``sim.enable_delay = 0``, hung there at once). It
waits without limit too when a notifier's thread never comes back (a ``wpilib.Notifier``
callback that raised ends robotpy's notifier thread and leaves its notifier active).

:meth:`LockstepClock.step` keeps ``stepTiming``'s order of events, built from parts that see
the notifiers as they are now: wait until every notifier is in its wait (``stepTiming(0)``:
the HAL's own wait, which reads each notifier's current state); move the clock to the next
alarm or the period's end (``stepTimingAsync``: no waiting); wait until no alarm at or before
that time is still pending (each woken notifier has left its wait); again wait until every
notifier is back in its wait. When no alarm falls in what is left of the period, WPILib's
``stepTiming`` itself moves the clock there (it then wakes no notifier, so cannot hang on
one). A watch thread says, after ``REPORT_AFTER`` s of wall time, which of the program's
threads robot time waits for, and ends the program (exit code 1) after ``timeout`` s, as when
simserver stops answering, instead of a silent hang.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from functools import partial

import hal.simulation as halsim
from wpilib import RobotController

REPORT_AFTER = 2.0  # s of wall time a step may wait before the bridge says what it waits for
_SPINS = 500  # looks at the pending alarms before the bridge sleeps between looks
_POLL = 0.0002  # s between those later looks
# s of wall time robot time waits for a new notifier once the program freed its last one:
# magicbot frees its loop's notifier when the mode changes and makes the next one a moment later
NEW_NOTIFIER_GRACE = 0.5


class LockstepClock:
    """Steps the paused robot clock; ``timeout`` (s of wall time) bounds one step."""

    def __init__(self, timeout: float, say: Callable[[str], None],
                 exit_process: Callable[[int], None], report_after: float = REPORT_AFTER):
        self.timeout = timeout
        self.report_after = report_after
        self.say = say
        self.exit_process = exit_process
        self._since: float | None = None  # wall time the current wait began
        self._what = ""
        self._notifiers = 0  # HAL notifiers after the last park
        self._watch = threading.Thread(target=self._watch_steps, name="simserver-clock-watch",
                                       daemon=True)
        self._watch.start()

    def park(self) -> None:
        """Wait until every notifier's thread is in its wait (the robot's loop has ended). When
        the program has just freed its last notifier, first give it NEW_NOTIFIER_GRACE to make
        the next: with none, time would move on a whole period while that thread starts its
        new mode's loop (seen under load: magicbot's first autonomous loop skipped)."""
        self._wait("the robot program's threads with a HAL notifier to finish their loops",
                   lambda: halsim.stepTiming(0))
        if self._notifiers and not halsim.getNumNotifiers():
            self._wait("the robot program to make its next loop's notifier", self._renewed)
        self._notifiers = halsim.getNumNotifiers()

    @staticmethod
    def _renewed() -> None:
        deadline = time.monotonic() + NEW_NOTIFIER_GRACE
        while not halsim.getNumNotifiers() and time.monotonic() < deadline:
            time.sleep(_POLL)
        halsim.stepTiming(0)  # and until its thread waits on it

    def step(self, period: float) -> None:
        """Advance robot time by ``period`` s as ``stepTiming`` does: alarm by alarm, each
        notifier woken at its alarm and back in its wait before time moves on."""
        remaining = round(period * 1e6)
        self.park()
        while remaining > 0:
            now = RobotController.getFPGATime()
            alarm = halsim.getNextNotifierTimeout()
            if now < alarm and alarm - now > remaining:  # no alarm on the way: nothing wakes
                self._wait("the robot clock to advance", partial(halsim.stepTiming, remaining))
                return
            dt = remaining if alarm <= now else alarm - now
            halsim.stepTimingAsync(dt)
            remaining -= dt
            self._wait(f"the notifiers due at robot time {(now + dt) * 1e-6:.6f} s to wake",
                       partial(self._woken, now + dt))
            self.park()

    @staticmethod
    def _woken(t: int) -> None:
        """Until no notifier has an alarm at or before ``t`` (µs) still to fire: each woken
        one has left its wait (a woken thread does within microseconds; the GIL is handed
        over between looks so that it can go on)."""
        while halsim.getNextNotifierTimeout() <= t:
            time.sleep(0)

    def _wait(self, what: str, wait: Callable[[], None]) -> None:
        self._what = what
        self._since = time.monotonic()
        try:
            wait()
        finally:
            self._since = None

    def _watch_steps(self) -> None:
        reported: set[float] = set()  # the waits already described (by start time)
        while True:
            time.sleep(0.25)
            since = self._since
            if since is None:
                continue
            waited = time.monotonic() - since
            if waited >= self.report_after and since not in reported and len(reported) < 3:
                reported.add(since)
                self.say(f"lock-step: robot time has waited {waited:.1f} s for {self._what}. "
                         "A thread that owns a HAL notifier (the robot loop, a wpilib.Notifier, "
                         "a vendor library's) has not come back to wait for its next alarm: a "
                         "callback still running, or one that raised (robotpy then ends that "
                         "thread). The robot program's threads:")
                for line in thread_report():
                    self.say(f"  {line}")
            if waited >= self.timeout:
                self.say(f"lock-step: gave up after {self.timeout:g} s (bridge.timeout); the "
                         "robot program stops")
                self.exit_process(1)
                return


def thread_report(skip: tuple[str, ...] = ("simserver-",)) -> list[str]:
    """One line per Python thread of this process (the bridge's own left out): its name and
    where it is (innermost frames last)."""
    frames = sys._current_frames()
    out = []
    for thread in threading.enumerate():
        if thread.name.startswith(skip) or thread.ident is None:
            continue
        frame = frames.get(thread.ident)
        if frame is None:
            where = "(no Python frame)"
        else:
            stack = traceback.extract_stack(frame)[-4:]
            where = " > ".join(f"{s.name} ({os.path.basename(s.filename)}:{s.lineno})"
                               for s in stack) or "(in native code)"
        out.append(f"{thread.name}: {where}")
    return out
