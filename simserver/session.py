"""A run: builds the World from a Config, owns the clock and the tick loop.

One tick: snapshot inputs -> step the world in fixed substeps -> publish one snapshot -> flush.
Real-time mode sleeps to absolute deadlines (start + k·tick), so timing error never
accumulates; ``fast`` mode never sleeps. Ctrl-C or SIGTERM ends the loop cleanly after the
current tick, and everything recorded so far is kept.
"""

from __future__ import annotations

import contextlib
import logging
import math
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType

from simserver.config.model import Config
from simserver.io.nt import Endpoint, NtAdapter
from simserver.io.scripted import Script
from simserver.report import Summary, Trace
from simserver.world import World

log = logging.getLogger("simserver.session")

# When real time falls this far behind (s), stop trying to catch up: restart the deadlines.
MAX_LAG = 0.25


@dataclass
class RunOptions:
    """How to run. duration: simulated seconds (None: until stopped)."""

    fast: bool = False
    duration: float | None = None
    script: Script | None = None
    endpoint: Endpoint | None = None
    record: bool = True


class Session:
    """Runs a World against its inputs and outputs."""

    def __init__(self, cfg: Config, options: RunOptions):
        self.cfg = cfg
        self.options = options
        self.world = World(cfg)
        self.tick = max(1, round(cfg.sim.tick / cfg.sim.substep)) * cfg.sim.substep
        self.trace = Trace() if options.record else None
        self.nt: NtAdapter | None = None
        self.stop_requested = False
        self.overruns = 0
        self.ticks = 0

    def request_stop(self, *_: object) -> None:
        """Ask the loop to end after the current tick (safe from a signal handler)."""
        self.stop_requested = True

    def _apply_inputs(self) -> None:
        world, opts = self.world, self.options
        if opts.script is not None:
            motors, solenoids = opts.script.at(world.time)
            for name, duty in motors.items():
                world.set_motor(name, duty)
            for name, on in solenoids.items():
                world.set_solenoid(name, on)
            if self.nt is not None:
                self.nt.poll()  # drain queues; the script is the input source
            return
        if self.nt is None:
            return
        state = self.nt.poll()
        if state.robot_left:
            log.info("robot program disconnected: motors to 0")
            world.zero_inputs()
        if state.robot_arrived:
            if self.cfg.sim.reset_on_connect:
                log.info("robot program connected: world reset")
                world.reset()
            else:
                log.info("robot program connected")
            world.zero_inputs()  # until its first outputs arrive (this poll or a later one)
        for name, duty in state.motors.items():
            world.set_motor(name, duty)
        for name, on in state.solenoids.items():
            world.set_solenoid(name, on)

    def run(self, progress: Callable[[float], None] | None = None) -> Summary:
        """Run until the duration elapses or a stop is requested; return the summary."""
        opts = self.options
        if opts.endpoint is not None:
            self.nt = NtAdapter(self.cfg, opts.endpoint)
            log.info("%s", opts.endpoint.describe())
        previous = _install_signal_handlers(self.request_stop)
        world = self.world
        tick = self.tick
        wall0 = time.monotonic()
        deadline = wall0
        try:
            if self.nt is not None:
                self.nt.publish(world.snapshot())
            while not self.stop_requested:
                if opts.duration is not None and world.time >= opts.duration - 1e-9:
                    break
                self._apply_inputs()
                world.step(tick)
                snap = world.snapshot()
                if self.trace is not None:
                    self.trace.record(snap)
                if self.nt is not None:
                    self.nt.publish(snap)
                self.ticks += 1
                if progress is not None:
                    progress(world.time)
                if not opts.fast:
                    deadline += tick
                    delay = deadline - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                    elif delay < -MAX_LAG:
                        self.overruns += 1
                        deadline = time.monotonic()
        except KeyboardInterrupt:
            self.stop_requested = True
        finally:
            _restore_signal_handlers(previous)
            if self.nt is not None:
                rejected = self.nt.validator.rejected
                self.nt.close()
                self.nt = None
            else:
                rejected = 0
        if self.overruns:
            log.warning("fell behind real time %d times (machine too slow for tick %.0f ms)",
                        self.overruns, tick * 1e3)
        snap = world.snapshot()
        return Summary(
            sim_time=world.time, wall_time=time.monotonic() - wall0, distance=world.distance,
            x=snap.x, y=snap.y, heading_deg=math.degrees(snap.heading),
            peak_current=world.peak_current, min_voltage=world.min_voltage,
            charge_used=world.battery.charge_used, rejected_inputs=rejected,
        )


Handler = Callable[[int, FrameType | None], object] | int | None


def _install_signal_handlers(stop: Callable[..., None]) -> dict[int, Handler]:
    previous: dict[int, Handler] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # not the main thread: no handlers
            previous[sig] = signal.signal(sig, stop)
    return previous


def _restore_signal_handlers(previous: dict[int, Handler]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)
