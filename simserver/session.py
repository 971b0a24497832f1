"""A run: builds the World from a Config, owns the clock and the tick loop.

One tick: snapshot inputs -> step the world in fixed substeps -> publish one snapshot -> flush.
Real-time mode sleeps to absolute deadlines (start + k·tick), so timing error never
accumulates; ``fast`` mode never sleeps. Ctrl-C or SIGTERM ends the loop cleanly after the
current tick, and everything recorded so far is kept (the ``--record`` data log is closed
complete).
"""

from __future__ import annotations

import contextlib
import logging
import math
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from simserver.arena import Arena
from simserver.config.model import Config
from simserver.io import topics
from simserver.io.halsim_ws import HalsimWsLink
from simserver.io.nt import Endpoint, NtAdapter
from simserver.io.scripted import Script, load_script
from simserver.io.stepwire import VERSION, Link, LinkError
from simserver.io.validation import InputValidator, decode_inputs
from simserver.io.wpilog import WpilogRecorder
from simserver.report import Summary, Trace
from simserver.scenario import ScenarioCheck
from simserver.world import Snapshot, World

log = logging.getLogger("simserver.session")

# When real time falls this far behind (s), stop trying to catch up: restart the deadlines.
MAX_LAG = 0.25


@dataclass
class RunOptions:
    """How to run.

    duration: simulated seconds (None: until stopped), counted from the moment the robot
    program reports the ``enable`` mode when one is given. enable: a mode the bridge puts the
    robot program's Driver Station in. lockstep: step the robot program's clock through the
    bridge (``endpoint`` host, ``bridge.port``). wait: seconds to wait for the robot program to
    connect and enable before giving up (wall time; in lock-step, the robot program's time
    once connected). check: expectations observed every tick
    after enabling. wpilog: record every tick to this WPILib data log (the file is created
    when the Session is, raising ``wpilog.RecordError`` if it cannot be)."""

    fast: bool = False
    duration: float | None = None
    script: Script | None = None
    endpoint: Endpoint | None = None
    record: bool = True
    enable: str | None = None
    lockstep: bool = False
    wait: float = 60.0
    check: ScenarioCheck | None = None
    halsim_ws: tuple[str, int] | None = None
    wpilog: str | Path | None = None


class RunError(Exception):
    """The run could not go on (robot never enabled, lock-step link lost); exit 1."""


class Session:
    """Runs a World against its inputs and outputs."""

    def __init__(self, cfg: Config, options: RunOptions):
        self.cfg = cfg
        self.options = options
        self.world = World(cfg)
        self.others = {name: World(other) for name, other in (cfg.others or {}).items()}
        self.arena = None if not self.others else Arena(
            {"": self.world, **self.others}, cfg.field.restitution, cfg.field.wall_friction)
        self.other_scripts = {
            name: load_script(entry.inputs, list(self.others[name].cfg.motors),
                              list(self.others[name].cfg.solenoids))
            for name, entry in cfg.robots.items() if entry.inputs is not None}
        self.other_nt: dict[str, NtAdapter] = {}
        self.tick = max(1, round(cfg.sim.tick / cfg.sim.substep)) * cfg.sim.substep
        self.trace = Trace() if options.record else None
        self.nt: NtAdapter | None = None
        self.ws: HalsimWsLink | None = None
        self.stop_requested = False
        self.overruns = 0
        self.ticks = 0
        self.enabled_at: float | None = None  # world time when the robot reported `enable`
        self.robot_mode: str | None = None
        self.failure: str | None = None  # why the run ended early (RunError), if it did
        self.validator = InputValidator()
        walls = self.world.walls
        self.recorder = None if options.wpilog is None else WpilogRecorder(
            options.wpilog, cfg, (walls.length, walls.width))

    def request_stop(self, *_: object) -> None:
        """Ask the loop to end after the current tick (safe from a signal handler)."""
        self.stop_requested = True

    def _step(self) -> Snapshot:
        """Advance every robot one tick; the main robot's snapshot."""
        if self.arena is not None:
            self.arena.step(self.tick)
        else:
            self.world.step(self.tick)
        return self.world.snapshot()

    def _reset(self) -> None:
        """Every robot back to its start."""
        if self.arena is not None:
            self.arena.reset()
        else:
            self.world.reset()

    def _apply_others(self) -> None:
        """Inputs of the other robots: their scripts (read at the main script's time) or their
        NetworkTables topics."""
        t = self._script_time()
        for name, script in self.other_scripts.items():
            motors, solenoids = script.at(t)
            other = self.others[name]
            for motor, duty in motors.items():
                other.set_motor(motor, duty)
            for sol, on in solenoids.items():
                other.set_solenoid(sol, on)
        for name, adapter in self.other_nt.items():
            state = adapter.poll()
            other = self.others[name]
            for motor, duty in state.motors.items():
                other.set_motor(motor, duty)
            for sol, on in state.solenoids.items():
                other.set_solenoid(sol, on)

    def _publish(self, snap: Snapshot) -> None:
        """Every robot's outputs on NT, one flush."""
        if self.nt is None:
            return
        for name, adapter in self.other_nt.items():
            adapter.publish(self.others[name].snapshot(), flush=False)
        self.nt.publish(snap)

    def _apply_script(self) -> None:
        self._apply_others()
        script = self.options.script
        if script is None:
            return
        motors, solenoids = script.at(self._script_time())
        for name, duty in motors.items():
            self.world.set_motor(name, duty)
        for name, on in solenoids.items():
            self.world.set_solenoid(name, on)

    def _script_time(self) -> float:
        """Time the script is read at: since enabling when the robot is enabled by us."""
        if self.options.enable is None:
            return self.world.time
        return 0.0 if self.enabled_at is None else self.world.time - self.enabled_at

    def _apply_inputs(self) -> None:
        world = self.world
        if self.ws is not None:
            state = self.ws.poll()
            if self.nt is not None:
                self.nt.poll()  # dashboards only: drain its queues
        elif self.nt is not None:
            state = self.nt.poll()
        else:
            self._apply_script()
            return
        if state.robot_left:
            log.info("robot program disconnected: motors to 0")
            world.zero_inputs()
        if state.robot_arrived:
            if self.cfg.sim.reset_on_connect:
                log.info("robot program connected: world reset")
                self._reset()
                self.enabled_at = None
            else:
                log.info("robot program connected")
            world.zero_inputs()  # until its first outputs arrive (this poll or a later one)
        for name, duty in state.motors.items():
            world.set_motor(name, duty)
        for name, on in state.solenoids.items():
            world.set_solenoid(name, on)
        self._note_mode(state.robot_mode)
        self._apply_script()

    def _note_mode(self, mode: str | None) -> None:
        if mode is not None and mode != self.robot_mode:
            log.info("robot program is %s", mode)
            self.robot_mode = mode
        if self.enabled_at is None and mode is not None and mode == self.options.enable:
            self.enabled_at = self.world.time

    def _commands(self) -> dict[str, object]:
        """Driver Station commands for the bridge: the mode and scripted joysticks."""
        opts = self.options
        if opts.enable is None:
            return {}
        out: dict[str, object] = {topics.DS_MODE: opts.enable}
        if opts.script is not None:
            out.update(opts.script.joysticks(self._script_time()))
        return out

    def _done(self) -> bool:
        duration = self.options.duration
        if duration is None:
            return False
        start = 0.0
        if self.options.enable is not None:
            if self.enabled_at is None:
                return False
            start = self.enabled_at
        return self.world.time - start >= duration - 1e-9

    def _after_step(self, snap: Snapshot,
                    progress: Callable[[float], None] | None) -> dict[str, object]:
        """Record, check and report one tick; return the Driver Station commands to send."""
        commands = self._commands()
        if self.trace is not None:
            self.trace.record(snap)
        if self.recorder is not None:
            self.recorder.record(snap, self.robot_mode, self.enabled_at, commands)
        check = self.options.check
        if check is not None and (self.options.enable is None or self.enabled_at is not None):
            check.observe(snap.time - (self.enabled_at or 0.0), snap)
        self.ticks += 1
        if progress is not None:
            progress(snap.time - (self.enabled_at or 0.0))
        return commands

    def _open_nt(self) -> None:
        opts = self.options
        if opts.endpoint is None:
            return
        self.nt = NtAdapter(self.cfg, opts.endpoint)
        log.info("%s", opts.endpoint.describe())
        for name, other in self.others.items():
            if name not in self.other_scripts:
                self.other_nt[name] = NtAdapter(other.cfg, opts.endpoint,
                                                robot=(name, self.nt))
        if opts.check is not None:
            path = opts.check.trajectory_poses()
            if path:
                self.nt.show_path("Trajectory", path)

    def run(self, progress: Callable[[float], None] | None = None) -> Summary:
        """Run until the duration elapses or a stop is requested; return the summary. The
        recording, if any, is closed however the run ends."""
        try:
            return self._run(progress)
        finally:
            self._close_recorder()

    def _close_recorder(self) -> None:
        if self.recorder is not None:
            self.recorder.close()

    def _run(self, progress: Callable[[float], None] | None) -> Summary:
        opts = self.options
        self._open_nt()
        if opts.halsim_ws is not None:
            self.ws = HalsimWsLink(self.cfg, *opts.halsim_ws)
            log.info("halsim_ws client of %s", self.ws.url)
        previous = _install_signal_handlers(self.request_stop)
        world = self.world
        tick = self.tick
        wall0 = time.monotonic()
        deadline = wall0
        try:
            self._publish(world.snapshot())
            if opts.lockstep:
                self._run_lockstep(progress)
            while not opts.lockstep and not self.stop_requested and not self._done():
                self._apply_inputs()
                if self.enabled_at is None and opts.enable is not None and (
                        time.monotonic() - wall0 > opts.wait):
                    raise RunError(self._not_enabled())
                snap = self._step()
                commands = self._after_step(snap, progress)
                if self.ws is not None:
                    self.ws.send({**topics.sensor_values(snap), **commands})
                if self.nt is not None:
                    self.nt.command(commands)
                self._publish(snap)
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
        except RunError as exc:
            self.failure = str(exc)
        finally:
            self._close_recorder()  # while a second Ctrl-C is still only a stop request
            _restore_signal_handlers(previous)
            rejected = self.validator.rejected
            if self.ws is not None:
                rejected += self.ws.validator.rejected
                self.ws.close()
                self.ws = None
            if self.nt is not None:
                rejected += self.nt.validator.rejected
                self.nt.close()
                self.nt = None
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


    def _not_enabled(self) -> str:
        opts = self.options
        if self.robot_mode is None:
            if opts.halsim_ws is not None:
                host, port = opts.halsim_ws
                return (f"no robot program's halsim_ws server answered at {host}:{port} within "
                        f"{opts.wait:g} s: start it with the WebSocket server extension "
                        "(Java: wpi.sim.addWebsocketsServer(); RobotPy: robotpy sim --ws-server)")
            return (f"no robot program connected within {opts.wait:g} s: start it with "
                    "`python -m robotpy sim --simserver` (see --wait)")
        return (f"the robot program did not become {opts.enable} within {opts.wait:g} s "
                f"(it is {self.robot_mode}); is the bridge's Driver Station control working?")

    # --- lock-step ------------------------------------------------------------------------

    def _connect_lockstep(self) -> Link:
        """Connect to the bridge's lock-step port, retrying until ``wait`` runs out."""
        opts, bridge = self.options, self.cfg.bridge
        host = opts.endpoint.host if opts.endpoint is not None else "localhost"
        deadline = time.monotonic() + opts.wait
        while True:
            try:
                sock = socket.create_connection((host, bridge.port), timeout=1.0)
                break
            except OSError as exc:
                if time.monotonic() > deadline or self.stop_requested:
                    raise RunError(f"no robot program's bridge answered on {host}:{bridge.port} "
                                   f"within {opts.wait:g} s ({exc}): start it with "
                                   "`python -m robotpy sim --simserver`") from None
                time.sleep(0.2)
        link = Link(sock)
        link.send({"hello": "simserver", "version": VERSION})
        try:
            hello = link.receive(bridge.timeout)
        except LinkError as exc:
            link.close()
            raise RunError(f"the bridge at {host}:{bridge.port} did not greet: {exc}") from None
        period = hello.get("period")
        if hello.get("hello") != "bridge" or not isinstance(period, float) or period <= 0:
            link.close()
            raise RunError(f"unexpected greeting from {host}:{bridge.port}: {hello!r}")
        self.tick = period
        log.info("lock-step with the robot program at %s:%d, period %g ms", host, bridge.port,
                 period * 1e3)
        return link

    def _run_lockstep(self, progress: Callable[[float], None] | None) -> None:
        """Each robot period: receive its outputs, step, send the sensors for the period's
        end. The robot program's clock waits for us: with ``fast`` as fast as both can go,
        otherwise paced to real time."""
        world, cfg = self.world, self.cfg
        link = self._connect_lockstep()
        self._reset()
        motors, solenoids = list(cfg.motors), list(cfg.solenoids)
        why = "stopped"
        deadline = time.monotonic()
        try:
            while True:
                if self.stop_requested:
                    why = "stopped (Ctrl-C)"
                    break
                message = link.receive(cfg.bridge.timeout)
                values = message.get("values")
                if not isinstance(values, dict):
                    raise RunError("the bridge sent a message without values")
                duties, states = decode_inputs(values, motors, solenoids, self.validator)
                for name, duty in duties.items():
                    world.set_motor(name, duty)
                for name, on in states.items():
                    world.set_solenoid(name, on)
                mode = values.get(topics.ROBOT_MODE)
                self._note_mode(mode if mode in topics.MODES else None)
                robot_time = message.get("time")
                if self.nt is not None and isinstance(robot_time, (int, float)) and \
                        math.isfinite(robot_time):
                    self.nt.clock = (world.time, float(robot_time))
                self._apply_script()
                if self._done():
                    why = "duration reached"
                    break
                if self.enabled_at is None and self.options.enable is not None and (
                        world.time > self.options.wait):
                    raise RunError(self._not_enabled())
                snap = self._step()
                commands = self._after_step(snap, progress)
                if self.nt is not None:
                    self.nt.command(commands)
                self._publish(snap)
                reply: dict[str, object] = {"values": {**topics.sensor_values(snap),
                                                       **commands}}
                if self.nt is not None and self.nt.heartbeats:
                    # Camera frames travel over NT: the bridge holds the robot's next period
                    # until they have reached its NT server.
                    reply["await"] = dict(self.nt.heartbeats)
                link.send(reply)
                if not self.options.fast:  # paced to real time, for watching
                    deadline += self.tick
                    delay = deadline - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                    elif delay < -MAX_LAG:
                        deadline = time.monotonic()
        except LinkError as exc:
            raise RunError(f"lock-step link to the robot program lost: {exc}") from None
        finally:
            with contextlib.suppress(LinkError):
                link.send({"bye": why})
            link.close()


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
