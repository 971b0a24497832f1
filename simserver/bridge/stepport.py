"""The bridge's step port: simserver attaches here, in lock-step or in real time.

A thread listens on ``bridge.port``. simserver greets with the mode it wants:

- ``realtime``: the connection is handed to :class:`~simserver.bridge.sync.RealtimeSync`,
  which exchanges one period per robot loop on the robot thread; the robot clock keeps
  running. When simserver leaves, listening goes on and another may attach.
- ``lockstep``: the HAL's timing is paused and each robot period goes:

  1. read the program's outputs and send them with the robot time;
  2. wait for simserver's sensor values for the end of the period, write them into the HAL;
  3. advance the robot clock by one period (:class:`~simserver.bridge.clock.LockstepClock`:
     ``stepTiming``'s order of events without its hangs): the program runs exactly one loop,
     then waits again.

  Timing only advances inside step 3 and the robot thread is parked the rest of the time, so
  outputs and sensors are read and written without racing the program. If simserver does
  not connect within ``connect_timeout`` (with ``lockstep = true``) or stops answering for
  ``timeout``, the robot program exits with code 1 and says why; when simserver ends the run
  it says goodbye and the program exits with code 0.
"""

from __future__ import annotations

import contextlib
import math
import socket
import sys
import threading
import time
from collections.abc import Callable

import ntcore
import wpilib
from wpilib.simulation import (
    isTimingPaused,
    pauseTiming,
    waitForProgramStart,
)

from simserver.bridge.clock import LockstepClock
from simserver.bridge.core import Bridge
from simserver.bridge.sync import RealtimeSync
from simserver.config.model import BridgeConfig
from simserver.io.stepwire import (
    MODES,
    REASON,
    SPIN,
    VERSION,
    Link,
    LinkError,
    ProtocolError,
)
from simserver.util.untrusted import clip

# Wall time the bridge waits for camera frames simserver published over NT, per period.
AWAIT_TIMEOUT = 0.25


def _number(value: ntcore.Value) -> float:
    """A numeric NT value as a float; -inf when unset or not a number."""
    v = value.value()
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else -math.inf


class StepPort(threading.Thread):
    """The listening thread of the step port; ``active`` is set while a lock-step session runs."""

    def __init__(self, bridge: Bridge, cfg: BridgeConfig, sync: RealtimeSync,
                 exit_process: Callable[[int], None], say: Callable[[str], None]):
        super().__init__(name="simserver-lockstep", daemon=True)
        self.bridge = bridge
        self.cfg = cfg
        self.sync = sync
        self.exit_process = exit_process
        self.say = say
        self.active = threading.Event()
        self._pause_wanted = threading.Event()
        self._paused = threading.Event()
        self.loop_time = 0.0  # FPGA s of the last robot loop (set on the robot thread)
        self.sock = socket.create_server((cfg.bind, cfg.port))
        self._beats: dict[str, ntcore.GenericSubscriber] = {}
        self._late: set[str] = set()

    def run(self) -> None:
        while True:
            accepted = self._accept()
            if accepted is None:
                return
            link, mode = accepted
            if mode == "realtime":
                self._attach_realtime(link)
            elif self.sync.attached:
                self._refuse(link, "a simserver is attached in real time; stop it first")
            else:
                self._run_lockstep(link)
                return

    def _refuse(self, link: Link, why: str) -> None:
        self.say(f"refused a simserver: {why}")
        with contextlib.suppress(LinkError):
            link.send({"hello": "bridge", "version": VERSION, "refused": why})
        link.close()

    def _attach_realtime(self, link: Link) -> None:
        cfg = self.cfg
        if cfg.lockstep:
            self._refuse(link, "this robot program waits for lock-step (bridge.lockstep = "
                         "true): run `simserver run --lockstep`")
        elif not self.sync.attach(link):
            self._refuse(link, "another simserver is attached to this robot program")
        else:
            link.send({"hello": "bridge", "version": VERSION, "period": cfg.period,
                       "mode": "realtime"})
            self.say(f"real time: each robot loop exchanges its outputs and sensors with "
                     f"simserver (period {cfg.period * 1e3:g} ms)")

    def _run_lockstep(self, link: Link) -> None:
        cfg = self.cfg
        self.sock.close()
        link.spin = SPIN
        clock = LockstepClock(cfg.timeout, self.say, self.exit_process)
        try:
            waitForProgramStart()
            self._pause_at_loop_end()
            clock.park()  # the loop that was running (or the program's first) has ended
            link.send({"hello": "bridge", "version": VERSION, "period": cfg.period,
                       "mode": "lockstep"})
            self.active.set()
            self._loop(link, clock)
        except ProtocolError as exc:
            self.say(f"lock-step: bad message from simserver ({exc}). The robot program stops, "
                     "since its clock cannot advance without simserver.")
            self.exit_process(1)
        except LinkError as exc:
            self.say(f"lock-step: simserver stopped answering: {exc} (bridge.timeout "
                     f"{cfg.timeout:g} s). The robot program stops, since its clock cannot "
                     "advance without simserver.")
            self.exit_process(1)
        finally:
            link.close()

    def _pause_at_loop_end(self) -> None:
        """Pause the robot program's clock right after one of its loops (on the robot thread,
        in the SimPeriodicAfter callback: :meth:`loop_ended`), so lock-step starts at a loop
        boundary whenever simserver attaches; its loops then fall on the same grid of robot
        times (the notifier's) run after run. A program started paused is already there."""
        if isTimingPaused():
            return
        self._pause_wanted.set()
        while not self._paused.wait(0.1):
            if isTimingPaused():  # paused by something else meanwhile
                break
        self._pause_wanted.clear()

    def loop_ended(self) -> bool:
        """Robot thread, end of a loop: pause here if lock-step asked for it. True once the
        loop belongs to lock-step (the caller then leaves the HAL to this thread)."""
        self.loop_time = wpilib.Timer.getFPGATimestamp()
        if self._pause_wanted.is_set() and not self._paused.is_set():
            pauseTiming()
            self._paused.set()
        return self._paused.is_set() or self.active.is_set()

    def _accept(self) -> tuple[Link, str] | None:
        """The next connection that greets like simserver, with the mode it asks for; others
        (port probes, health checks) are closed and listening goes on. None after
        ``connect_timeout`` when lock-step is required (the process is then ending)."""
        cfg = self.cfg
        deadline = time.monotonic() + cfg.connect_timeout if cfg.lockstep else None
        while True:
            self.sock.settimeout(None if deadline is None else max(0.0, deadline -
                                                                    time.monotonic()))
            try:
                conn, peer = self.sock.accept()
            except TimeoutError:
                self.say(f"lock-step: no simserver connected to {cfg.bind}:{cfg.port} within "
                         f"{cfg.connect_timeout:g} s (bridge.connect_timeout). Start `simserver "
                         "run --lockstep` beside the robot program, or set bridge.lockstep = "
                         "false.")
                self.exit_process(1)
                return None
            link = Link(conn)
            try:
                hello = link.receive(min(cfg.timeout, 2.0))
            except LinkError:
                link.close()
                continue
            mode = hello.get("mode")
            if hello.get("hello") == "simserver" and hello.get("version") == VERSION and (
                    mode in MODES):
                self.say(f"simserver attached from {peer[0]}:{peer[1]} ({mode})")
                return link, str(mode)
            if hello.get("hello") == "simserver":
                version = clip(repr(hello.get("version")), 40)
                self._refuse(link, f"simserver speaks step-wire version {version}, this bridge "
                             f"{VERSION}: install the same simserver on both sides")
                continue
            self.say(f"ignored a connection from {peer[0]} that did not greet as "
                     f"simserver {VERSION}: {clip(repr(hello), 80)}")
            link.close()

    def _await(self, heartbeats: dict[str, object]) -> None:
        """Wait (up to AWAIT_TIMEOUT of wall time) until each NT heartbeat topic (camera
        frames) holds at least the value simserver last published on it, so robot code sees
        frames at the robot time they were due, not an NT send period later."""
        inst = ntcore.NetworkTableInstance.getDefault()
        deadline = time.monotonic() + AWAIT_TIMEOUT
        for topic, value in heartbeats.items():
            if not isinstance(value, (int, float)):
                continue
            sub = self._beats.get(topic)
            if sub is None:
                sub = self._beats[topic] = inst.getTopic(topic).genericSubscribe()
            while _number(sub.get()) < value:
                if time.monotonic() > deadline:
                    if topic not in self._late:
                        self._late.add(topic)
                        self.say(f"lock-step: {clip(topic, 100)} lagged more than "
                                 f"{AWAIT_TIMEOUT * 1e3:g} ms behind simserver; frames may "
                                 "reach robot code late")
                    break
                time.sleep(0.0002)

    def _loop(self, link: Link, clock: LockstepClock) -> None:
        bridge, period, timeout = self.bridge, self.cfg.period, self.cfg.timeout
        extra: dict[str, object] = {"missing": bridge.missing()}
        while True:
            # The loop's own time: a step ends a period after the pause, which may lie
            # up to a period after the loop's notifier time (the time its NT values carry).
            link.send({"time": self.loop_time, "values": bridge.outputs(), **extra})
            extra = {}
            reply = link.receive(timeout)
            if "bye" in reply:
                self.say(f"simserver ended the run ({clip(str(reply['bye']), REASON)}); robot "
                         "program exits")
                self.exit_process(0)
                return
            values = reply.get("values")
            if not isinstance(values, dict):
                raise ProtocolError("message without values")
            bridge.apply(values)
            awaited = reply.get("await")
            if isinstance(awaited, dict):
                self._await(awaited)
            for line in bridge.warnings:
                self.say(line)
            bridge.warnings.clear()
            clock.step(period)


def fail_fast(code: int) -> None:
    """End the robot process now (the robot thread is parked in the HAL and cannot be
    unwound from this thread)."""
    import os

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
