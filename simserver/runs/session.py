"""A run: builds the World from a Config, owns the clock and the tick loop.

One tick: snapshot inputs -> step the world in fixed substeps -> publish one snapshot -> flush.
Real-time mode sleeps to absolute deadlines (start + k·tick), so timing error never
accumulates; ``fast`` mode never sleeps. Ctrl-C, SIGTERM or SIGHUP (Ctrl-Break, SIGBREAK, on
Windows) ends the loop cleanly after the current tick, and everything recorded so far is kept
(the ``--record`` data log is closed complete).
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from simserver.config.model import Config
from simserver.contract import topics
from simserver.contract.snapshot import Snapshot
from simserver.io.halsim_ws import HalsimWsLink
from simserver.io.nt import Cameras, Endpoint, NtAdapter, photonvision_unavailable
from simserver.io.ntinputs import InputState
from simserver.io.robottopics import RobotValue, decode_pose
from simserver.io.scripted import Script, load_script
from simserver.io.stepwire import (
    SPIN,
    Attacher,
    Link,
    LinkError,
    LinkTimeout,
    ProtocolError,
    Refused,
    attach,
    period_message,
)
from simserver.io.validation import InputValidator, decode_inputs
from simserver.io.wpilog import WpilogRecorder
from simserver.models.camera import Frame
from simserver.runs import stopsignals
from simserver.runs.health import Heartbeat
from simserver.runs.report import BatteryExtremes, Summary, Trace
from simserver.runs.scenario import ScenarioCheck
from simserver.util.lograte import LogLimiter
from simserver.util.untrusted import clip
from simserver.world import ModelBuildError, World
from simserver.world.arena import Arena
from simserver.world.pieces import field_pieces

log = logging.getLogger("simserver.session")

# When real time falls this far behind (s), stop trying to catch up: restart the deadlines.
MAX_LAG = 0.25
# Real time with the bridge: a robot clock jump of more than this many periods between two
# loops (its timing paused or stepped by something else) is not simulated; the world goes on
# from the new time.
MAX_CATCH_UP = 50
# Wall time (s) to wait at the end of a run for the robot program's last topic values over NT
# (odometry check, recording), and at the start of a lock-step run for the first ones.
DRAIN_WAIT = 0.25
AWAIT_TOPICS = 2.0  # for the NT connection
AWAIT_PUBLISHED = 0.3  # once connected, for a first value
# Wall time (s) between "waiting for a robot program" reminders.
WAITING_EVERY = 5.0
MAX_MISSING = 50  # lines of the bridge's "never created" list that are shown
# s between attempts to attach to a robot program's step port that is not listening yet.
ATTACH_RETRY = 0.02


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
    when the Session is, raising ``wpilog.RecordError`` if it cannot be). record_robot: topic
    prefixes of the robot program's own NT topics to record too (under ``NT:``)."""

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
    record_robot: tuple[str, ...] = ()


class RunError(Exception):
    """The run could not go on (robot never enabled, lock-step link lost); exit 1."""


class Session:
    """Runs a World against its inputs and outputs."""

    def __init__(self, cfg: Config, options: RunOptions):
        self.cfg = cfg
        self.options = options
        unavailable = None if options.endpoint is None else photonvision_unavailable(cfg)
        if unavailable is not None:
            raise ModelBuildError(*unavailable)
        self.world = World(cfg)
        self.others = {name: World(other) for name, other in (cfg.others or {}).items()}
        self.arena = None if not self.others else Arena(
            {"": self.world, **self.others}, cfg.field.restitution, cfg.field.wall_friction)
        self.pieces = field_pieces(cfg, {"": self.world, **self.others})
        self.other_scripts = {
            name: load_script(entry.inputs, list(self.others[name].cfg.motors),
                              list(self.others[name].cfg.solenoids))
            for name, entry in cfg.robots.items() if entry.inputs is not None}
        self.other_nt: dict[str, NtAdapter] = {}
        self.tick = max(1, round(cfg.sim.tick / cfg.sim.substep)) * cfg.sim.substep
        self.trace = Trace() if options.record else None
        self.battery = BatteryExtremes()  # the run's worst, every tick (the summary's figures)
        self.nt: NtAdapter | None = None
        self.ws: HalsimWsLink | None = None
        self.stop_requested = False
        self.overruns = 0
        self.ticks = 0
        self.enabled_at: float | None = None  # world time when the robot reported `enable`
        self.disabled_at: float | None = None  # world time the robot program was first seen
        self.robot_mode: str | None = None
        self.failure: str | None = None  # why the run ended early (RunError), if it did
        self.attached_at: float | None = None  # time.monotonic() when lock-step attached
        self.robot_seen = False  # inputs (or a connection) came from a robot program
        self.validator = InputValidator()
        self._limiter = LogLimiter(log)  # lines a peer can make us write again and again
        self.late_periods: int | None = None  # real time with the bridge: see Summary
        self.clock_gap: float | None = None  # real time with the bridge: see Summary
        self.bridge_seen = False  # a robot program's bridge exchanged periods with us
        self._arrived = False  # the world was reset for the robot program now connected
        self._bad_bridge = False  # a bridge broke the protocol (said once)
        self._wall0 = time.monotonic()
        # $SIMSERVER_HEARTBEAT, refreshed from the tick and waiting loops (container health)
        self.heartbeat = Heartbeat.from_env(
            lambda: f"tick {self.ticks}, simulated {self.world.time:.2f} s")
        walls = self.world.walls
        self.recorder = None if options.wpilog is None else WpilogRecorder(
            options.wpilog, cfg, (walls.length, walls.width),
            {name: other.cfg for name, other in self.others.items()})

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
            if state.robot_left or state.stalled:
                other.zero_inputs()
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
                self._feed(self.nt.poll())  # dashboards only: drain its queues
        elif self.nt is not None:
            state = self.nt.poll()
            self._feed(state)
        else:
            self._apply_script()
            return
        if state.robot_left:
            log.info("robot program disconnected: motors to 0")
            world.zero_inputs()
            self._arrived = False
        if state.stalled:
            self._limiter.log("a frozen robot program", logging.WARNING,
                              "no input from the robot program for %g ms (frozen?): motors "
                              "to 0 until it sends again (sim.input_timeout)",
                              self.cfg.sim.input_timeout * 1e3)
            world.zero_inputs()
        if state.resumed:
            self._limiter.log("a frozen robot program", logging.INFO,
                              "the robot program sends its inputs again")
        if state.robot_arrived:
            self._arrived = True
            if self.cfg.sim.reset_on_connect:
                log.info("robot program connected: world reset")
                self._reset()
                self.enabled_at = self.disabled_at = None
            else:
                log.info("robot program connected")
            world.zero_inputs()  # until its first outputs arrive (this poll or a later one)
        if state.robot_arrived or state.motors or state.solenoids or state.robot_mode:
            self.robot_seen = True
        for name, duty in state.motors.items():
            world.set_motor(name, duty)
        for name, on in state.solenoids.items():
            world.set_solenoid(name, on)
        self._note_mode(state.robot_mode)
        self._apply_script()

    def _feed(self, state: InputState) -> None:
        """Human-player feeding asked for on NetworkTables (``/simserver/pieces/feed``), and
        the settings robot code sent to the cameras (from their next capture)."""
        vision = self.world.vision
        for request in state.cameras:
            if vision is None:
                break
            try:
                vision.apply(request)
            except (IndexError, KeyError, ValueError) as exc:  # checked by io: not expected
                self._limiter.log(f"camera {request.camera} {request.setting}",
                                  logging.WARNING, "camera %s: %s %r not applied (%s)",
                                  request.camera, request.setting, request.value, exc)
        pieces = self.world.field_pieces
        feeder = None if pieces is None else pieces.feeder
        for station in state.feeds:
            if feeder is None or not feeder.feed(station):
                why = ("the field has no game pieces" if feeder is None else
                       "no such station" if station not in feeder.stations else
                       "none left to feed")
                self._limiter.log(f"feed {station}", logging.WARNING,
                                  "feed request for station %r ignored: %s", station[:64], why)

    def _note_mode(self, mode: str | None) -> None:
        if mode is not None and self.disabled_at is None:
            self.disabled_at = self.world.time
        if mode is not None and mode != self.robot_mode:
            self._limiter.log("the robot mode", logging.INFO, "robot program is %s", mode)
            self.robot_mode = mode
        if self.enabled_at is None and mode is not None and mode == self.options.enable:
            self.enabled_at = self.world.time

    def _commands(self) -> dict[str, object]:
        """Driver Station commands for the bridge: the mode and scripted joysticks."""
        opts = self.options
        if opts.enable is None:
            return {}
        waited = self.disabled_at is not None and (
            self.world.time - self.disabled_at >= self.cfg.sim.enable_delay - 1e-9)
        out: dict[str, object] = {topics.DS_MODE: opts.enable if waited else "disabled"}
        if opts.script is not None:
            out.update(opts.script.joysticks(self._script_time()))
        return out

    def reached_end(self) -> bool:
        """Whether the run's duration has elapsed (a robot program that leaves after this left
        because the run ended)."""
        return self._done()

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
        self.battery.observe(snap)
        if self.trace is not None:
            self.trace.record(snap)
        if self.recorder is not None:
            self.recorder.record(snap, self.robot_mode, self.enabled_at, commands,
                                 {name: w.snapshot() for name, w in self.others.items()})
        check = self.options.check
        if check is not None and (self.options.enable is None or self.enabled_at is not None):
            check.observe(snap.time - (self.enabled_at or 0.0), snap)
        self._robot_values(snap)
        self.ticks += 1
        self.heartbeat.beat()
        if progress is not None:
            progress(snap.time - (self.enabled_at or 0.0))
        return commands

    def _await_robot_topics(self) -> None:
        """Lock-step, before the first period: when the robot program's own topics are read
        (odometry check, recording), wait up to AWAIT_TOPICS of wall time for the NT
        subscription to reach its server (shown by the first value it sends back): a --fast
        run would otherwise be over before any of them arrived. The values go to the
        recording and the check like any."""
        nt = self.nt
        if nt is None or nt.robot_topics is None:
            return
        deadline = time.monotonic() + AWAIT_TOPICS
        snap = self.world.snapshot()
        while time.monotonic() < deadline and not self.stop_requested:
            if nt.connected:  # then a little longer, for topics it has not published yet
                deadline = min(deadline, time.monotonic() + AWAIT_PUBLISHED)
                if self._robot_values(snap):
                    return
            self.heartbeat.beat()
            time.sleep(0.005)

    def _drain_robot_values(self) -> None:
        """At the end of a run that reads the robot program's own topics: their values of the
        last periods are still on their way over NT (ntcore sends every 5 ms of wall time at
        best, and a --fast lock-step run goes through several periods meanwhile). Wait up to
        DRAIN_WAIT of wall time for them: with only an odometry check, until the pose for the
        last tick has come (a robot that did not move publishes nothing new, and then the
        whole wait passes); when recording them, the whole wait."""
        nt, check = self.nt, self.options.check
        if nt is None or nt.robot_topics is None:
            return
        wanted = check.robot_topics() if check is not None else ()
        recording = self.recorder is not None and bool(self.options.record_robot)
        snap = self.world.snapshot()
        deadline = time.monotonic() + DRAIN_WAIT
        while time.monotonic() < deadline and not self.stop_requested:
            values = self._robot_values(snap)
            if not recording and any(v.topic in wanted and
                                     v.sim_time >= snap.time - 0.5 * self.tick for v in values):
                return
            time.sleep(0.002)

    def _robot_values(self, snap: Snapshot) -> list[RobotValue]:
        """Hand the robot program's own topic values received since the last tick to the
        recording and the check, at the simulated time each was published; returns them."""
        if self.nt is None:
            return []
        values = self.nt.robot_values(snap.time)
        opts = self.options
        if self.recorder is not None and opts.record_robot:
            self.recorder.record_robot([v for v in values
                                        if v.topic.startswith(opts.record_robot)])
        check = opts.check
        wanted = check.robot_topics() if check is not None else ()
        if check is None or not wanted:
            return values
        start = self.enabled_at if self.enabled_at is not None or opts.enable is not None \
            else 0.0
        for v in values:
            if v.topic in wanted and not math.isnan(v.sim_time):
                # Published before enabling (its time unknown yet): only the last one counts.
                t = -math.inf if start is None else v.sim_time - start
                check.observe_odometry(t, decode_pose(v.type, v.value), v.type)
        return values

    def _watch_robot(self) -> None:
        """Subscribe to the robot program's topics the recording and the check need."""
        opts = self.options
        assert self.nt is not None
        record = opts.record_robot if self.recorder is not None else ()
        wanted = [*record, *(opts.check.robot_topics() if opts.check is not None else ())]
        own = f"{topics.PREFIX}/"  # already read (inputs) and recorded under their names
        exclude = () if any(p.startswith(own) for p in wanted) else (own,)
        self.nt.watch_robot(wanted, exclude)

    def _expects_robot(self) -> bool:
        """Whether the main robot's inputs come from a robot program (not a script)."""
        opts = self.options
        if opts.lockstep or opts.halsim_ws is not None or opts.enable is not None:
            return True
        return opts.endpoint is not None and opts.script is None

    def _judge_robot(self) -> None:
        """A --duration or --check run whose inputs should come from a robot program fails
        when none ever connected (it simulated a robot nobody drove); one stopped by Ctrl-C
        fails only its check."""
        opts = self.options
        if not self._expects_robot() or (opts.duration is None and opts.check is None):
            return
        seen = self.robot_seen or self.bridge_seen or self.robot_mode is not None
        if opts.check is not None:
            opts.check.require_robot()
            if seen:
                opts.check.note_robot()
        if not seen and self.failure is None and not self.stop_requested:
            self.failure = ("no robot program connected during the run: start it beside "
                            "simserver (`python -m robotpy sim --simserver`), or drive the "
                            "robot with --inputs")

    def _open_nt(self) -> None:
        opts = self.options
        if opts.endpoint is None:
            return
        self.nt = NtAdapter(self.cfg, opts.endpoint, cameras=self._cameras())
        log.info("%s", opts.endpoint.describe())
        for name, other in self.others.items():
            if name not in self.other_scripts:
                self.other_nt[name] = NtAdapter(other.cfg, opts.endpoint,
                                                robot=(name, self.nt))
        if opts.check is not None:
            path = opts.check.trajectory_poses()
            if path:
                self.nt.show_trajectory(path)
        self._watch_robot()

    def _cameras(self) -> Cameras:
        """The main robot's cameras as its world built them, for the NT adapter."""
        vision = self.world.vision
        if vision is None:
            return Cameras({}, (), self.world.field_size)
        return Cameras({n: c.spec for n, c in vision.cameras.items()}, vision.fiducials,
                       self.world.field_size)

    def run(self, progress: Callable[[float], None] | None = None) -> Summary:
        """Run until the duration elapses or a stop is requested; return the summary. The
        recording, if any, is closed however the run ends."""
        try:
            return self._run(progress)
        finally:
            self._close_recorder()
            self.heartbeat.stop()

    def _close_recorder(self) -> None:
        if self.recorder is not None:
            self.recorder.close()

    def _run(self, progress: Callable[[float], None] | None) -> Summary:
        opts = self.options
        self.heartbeat.beat()
        # Before anything says it is ready ("serving NT4 on ..."): a stop from then on is a
        # clean one.
        previous = stopsignals.install(self.request_stop)
        try:
            self._open_nt()
            if opts.halsim_ws is not None:
                self.ws = HalsimWsLink(self.cfg, *opts.halsim_ws)
                log.info("halsim_ws client of %s", self.ws.url)
        except BaseException:
            stopsignals.restore(previous)
            raise
        world = self.world
        self._wall0 = time.monotonic()
        try:
            self._publish(world.snapshot())
            if opts.lockstep:
                link = self._connect_lockstep()
                self._await_robot_topics()
                self._exchange(link, self.tick, progress, realtime=False)
            else:
                self._run_realtime(progress)
                self._drain_robot_values()
        except KeyboardInterrupt:
            self.stop_requested = True
        except RunError as exc:
            self.failure = str(exc)
        finally:
            self._close_recorder()  # while a second Ctrl-C is still only a stop request
            stopsignals.restore(previous)
            rejected = self.validator.rejected
            if self.ws is not None:
                rejected += self.ws.validator.rejected
                self.ws.close()
                self.ws = None
            if self.nt is not None:
                rejected += self.nt.validator.rejected
                self.nt.close()
                self.nt = None
        self._judge_robot()
        self._limiter.flush()
        if self.overruns:
            log.warning("fell behind real time %d times (machine too slow for tick %.0f ms)",
                        self.overruns, self.tick * 1e3)
        if self.late_periods:
            log.warning("the robot program ran %d periods on stale sensors: simserver answered "
                        "after the wait the bridge allows (half a period)", self.late_periods)
        snap = world.snapshot()
        battery = self.battery
        if not self.ticks:  # no tick ran: the battery as it stands
            battery.observe(snap)
        return Summary(
            sim_time=world.time, wall_time=time.monotonic() - self._wall0,
            distance=world.distance, x=snap.x, y=snap.y, heading_deg=math.degrees(snap.heading),
            peak_battery_current=battery.peak_current, min_voltage=battery.min_voltage,
            charge_used=world.battery.charge_used, brownout_ticks=battery.brownout_ticks,
            first_brownout=battery.first_brownout, rejected_inputs=rejected,
            late_periods=self.late_periods, clock_gap=self.clock_gap, timing=self._timing(),
        )

    def _timing(self) -> str:
        """How the robot program's periods met the world in this run, for the summary."""
        opts = self.options
        if opts.lockstep:
            return "lock-step with the bridge"
        if self.bridge_seen:
            return "real time, one exchange per robot loop with the bridge"
        if opts.halsim_ws is not None:
            return f"real time, halsim_ws ticks of {self.tick * 1e3:g} ms"
        if opts.endpoint is not None and opts.script is None:
            return f"real time, NetworkTables ticks of {self.tick * 1e3:g} ms"
        return ""

    def _attacher(self) -> Attacher | None:
        """A background search for the robot program's bridge, when one may be there: as an NT
        client of a robot program (not with --serve, halsim_ws or scripted inputs alone)."""
        opts = self.options
        ep = opts.endpoint
        if ep is None or ep.mode != "client" or opts.halsim_ws is not None:
            return None
        attacher = Attacher(ep.host, self.cfg.bridge.port, "realtime",
                            min(self.cfg.bridge.timeout, 2.0), warn=log.warning)
        attacher.start()
        return attacher

    def _run_realtime(self, progress: Callable[[float], None] | None) -> None:
        """Real time: one exchange per robot loop while a robot program's bridge is attached;
        otherwise ticks of ``sim.tick`` against NetworkTables or halsim_ws inputs."""
        opts = self.options
        tick = self.tick
        if not opts.fast:
            for adapter in (self.nt, *self.other_nt.values()):
                if adapter is not None:
                    adapter.watch_inputs(self.cfg.sim.input_timeout)
        attacher = self._attacher()
        deadline = time.monotonic()
        next_reminder = deadline + WAITING_EVERY
        try:
            while not self.stop_requested and not self._done():
                if attacher is not None:
                    found = attacher.take()
                    if attacher.refused is not None:
                        raise RunError(f"the robot program's bridge refused: {attacher.refused}")
                    if found is not None:
                        self._exchange(*found, progress, realtime=True)
                        self.tick = tick
                        deadline = time.monotonic()
                        if not self.stop_requested and not self._done():
                            attacher = self._attacher()
                        continue
                self._apply_inputs()
                if self.enabled_at is None and opts.enable is not None and (
                        time.monotonic() - self._wall0 > opts.wait):
                    raise RunError(self._not_enabled())
                if time.monotonic() >= next_reminder:
                    next_reminder = time.monotonic() + WAITING_EVERY
                    self._remind()
                snap = self._step()
                commands = self._after_step(snap, progress)
                if self.ws is not None:
                    self.ws.send({**topics.sensor_values(snap), **commands})
                if self.nt is not None:
                    self.nt.command(commands)
                    if not opts.fast:
                        self.nt.schedule(snap.time, deadline)
                self._publish(snap)
                if not opts.fast:
                    deadline += tick
                    delay = deadline - time.monotonic()
                    if delay > 0:
                        if attacher is not None:
                            attacher.wait(delay)
                        else:
                            time.sleep(delay)
                    elif delay < -MAX_LAG:
                        self.overruns += 1
                        deadline = time.monotonic()
        finally:
            if attacher is not None:
                attacher.stop()

    def _remind(self) -> None:
        """Say what the run waits for, when it waits for a robot program."""
        opts = self.options
        ep = opts.endpoint
        if opts.script is not None and opts.enable is None:
            return
        if self.ws is not None:
            if self.robot_mode is None:
                log.info("waiting for a robot program's halsim_ws server at %s (Java/C++: "
                         "wpi.sim.addWebsocketsServer(); RobotPy: robotpy sim --ws-server)",
                         self.ws.url)
            return
        if ep is None or ep.mode != "client" or self.nt is None:
            return
        if not self.nt.connected:
            log.info("waiting for a robot program at %s:%d: in your robot project run "
                     "`python -m robotpy sim --simserver` (Java/C++: see --halsim-ws)",
                     ep.host, ep.port)
        elif any(m.hal for m in self.cfg.motors.values()) and not self.nt.publishes_inputs():
            log.warning("robot program connected without --simserver: add it (`python -m "
                        "robotpy sim --simserver`), or publish /simserver/motors/* from robot "
                        "code; until then no motor moves")

    def _not_enabled(self) -> str:
        opts = self.options
        if self.robot_mode is None:
            if opts.halsim_ws is not None:
                host, port = opts.halsim_ws
                return (f"no robot program's halsim_ws server answered at {host}:{port} within "
                        f"{opts.wait:g} s: start it with the WebSocket server extension "
                        "(Java: wpi.sim.addWebsocketsServer(); RobotPy: robotpy sim --ws-server)")
            if self.nt is not None and self.nt.connected:
                return (f"a robot program is connected over NetworkTables but not through "
                        f"simserver's bridge, so it cannot be enabled ({opts.wait:g} s "
                        "waited): restart it with `python -m robotpy sim --simserver`")
            return (f"no robot program connected within {opts.wait:g} s: start it with "
                    "`python -m robotpy sim --simserver` (see --wait)")
        return (f"the robot program did not become {opts.enable} within {opts.wait:g} s "
                f"(it is {self.robot_mode}); is the bridge's Driver Station control working?")

    # --- lock-step ------------------------------------------------------------------------

    def _note_missing(self, lines: object) -> None:
        """The bridge's list of config addresses the robot program never created (first
        message of a link): a warning each, and an error in a scenario run, whose result would
        otherwise be judged on a robot driven at part power or with dead sensors."""
        if not isinstance(lines, list) or not lines:
            return
        for line in lines[:MAX_MISSING]:
            log.warning("%s", clip(str(line), 300))
        if len(lines) > MAX_MISSING:
            log.warning("... and %d more", len(lines) - MAX_MISSING)
        if self.options.check is not None:
            raise RunError(f"{len(lines)} hal address(es) of the config name devices the robot "
                           "program never created (listed above); fix simserver.toml before "
                           "judging a scenario")

    def _connect_lockstep(self) -> Link:
        """Connect to the bridge's step port in lock-step, retrying until ``wait`` runs out."""
        opts, bridge = self.options, self.cfg.bridge
        host = opts.endpoint.host if opts.endpoint is not None else "localhost"
        deadline = time.monotonic() + opts.wait
        while True:
            try:
                link, period = attach(host, bridge.port, "lockstep", bridge.timeout)
                break
            except Refused as exc:
                raise RunError(f"the robot program's bridge at {host}:{bridge.port} refused "
                               f"lock-step: {exc}") from None
            except ProtocolError as exc:  # something answers there, and not as a bridge
                raise RunError(f"lock-step: {host}:{bridge.port} answered, but not as a robot "
                               f"program's bridge: {exc}") from None
            except (OSError, LinkError) as exc:
                if time.monotonic() > deadline or self.stop_requested:
                    raise RunError(f"no robot program's bridge answered on {host}:{bridge.port} "
                                   f"within {opts.wait:g} s ({exc}): start it with "
                                   "`python -m robotpy sim --simserver`") from None
                self.heartbeat.beat()
                time.sleep(ATTACH_RETRY)
        self.attached_at = time.monotonic()
        self.tick = period
        link.spin = SPIN
        log.info("lock-step with the robot program at %s:%d, period %g ms", host, bridge.port,
                 period * 1e3)
        return link

    def _exchange(self, link: Link, period: float,
                  progress: Callable[[float], None] | None, realtime: bool) -> None:
        """Each robot period: receive its outputs, step, send the sensors for the period's
        end.

        Lock-step: the robot program's clock waits for us; with ``fast`` as fast as both can
        go, otherwise paced to real time; the end of the link ends the run. Real time: the
        robot program's loops pace us; the world steps by the robot's clock (one period per
        loop, more when it skipped loops) and the answer goes out before anything else (NT,
        recording); when the link ends, the robot program left and the caller goes on. In
        lock-step too the answer goes out first, unless camera frames must reach the robot
        program over NT before its next period."""
        world, cfg = self.world, self.cfg
        self.tick = period
        self.bridge_seen = True
        if realtime:
            log.info("real time with the robot program's bridge: one exchange per %g ms loop",
                     period * 1e3)
            if self.late_periods is None:
                self.late_periods = 0
        if not realtime:
            self._reset()
            self.enabled_at = self.disabled_at = None
        elif cfg.sim.reset_on_connect and not self._arrived:
            log.info("robot program's bridge attached: world reset")
            self._reset()
            self.enabled_at = self.disabled_at = None
        self._arrived = True  # its NT connection, seen later or not, resets nothing more
        motors, solenoids = list(cfg.motors), list(cfg.solenoids)
        # Lock-step with cameras: their frames travel over NT, so the answer waits until they
        # are published and names them ("await"); the bridge holds the robot's next period
        # until they have reached its NT server. Otherwise the answer goes out as soon as the
        # world has stepped, before recording and NT publishing.
        frames = not realtime and self.nt is not None and self.world.vision is not None
        why = "stopped"
        deadline = time.monotonic()
        clock = LoopClock(period)
        late_base = self.late_periods or 0
        try:
            while True:
                if self.stop_requested:
                    why = "stopped (Ctrl-C)"
                    break
                message = link.receive(cfg.bridge.timeout)
                robot_time, values = period_message(message)
                self._note_missing(message.get("missing"))
                duties, states = decode_inputs(values, motors, solenoids, self.validator)
                for name, duty in duties.items():
                    world.set_motor(name, duty)
                for name, on in states.items():
                    world.set_solenoid(name, on)
                mode = values.get(topics.ROBOT_MODE)
                self._note_mode(mode if mode in topics.MODES else None)
                steps, loop_start = 1, robot_time
                if realtime:
                    late = message.get("late")
                    if isinstance(late, int) and not isinstance(late, bool) and late >= 0:
                        self.late_periods = late_base + late
                    steps = clock.advance(robot_time)
                    self.clock_gap = max(self.clock_gap or 0.0, clock.gap)
                    loop_start = clock.start(steps)
                if self.nt is not None:
                    self._feed(self.nt.poll())  # inputs come over the link
                    self.nt.clock = (world.time, loop_start, period)
                self._apply_script()
                if self._done():
                    why = "duration reached"
                    self._drain_robot_values()  # before "bye" ends the robot program
                    break
                if self.enabled_at is None and self.options.enable is not None and (
                        (time.monotonic() - self._wall0 if realtime else world.time)
                        > self.options.wait):
                    raise RunError(self._not_enabled())
                # Periods the robot program skipped: stepped, not published on their own; their
                # camera frames go out with this loop's.
                skipped: tuple[Frame, ...] = ()
                for _ in range(steps - 1):
                    extra = self._step()
                    self._after_step(extra, progress)
                    skipped += extra.frames
                snap = self._step()
                if skipped:
                    snap.frames = (*skipped, *snap.frames)
                commands = self._commands()
                reply: dict[str, object] = {"values": {**topics.sensor_values(snap),
                                                       **commands}}
                if not frames:  # the robot's next period overlaps recording and NT
                    link.send(reply)
                self._after_step(snap, progress)
                if self.nt is not None:
                    self.nt.command(commands)
                self._publish(snap)
                if frames:
                    assert self.nt is not None
                    if self.nt.heartbeats:
                        reply["await"] = dict(self.nt.heartbeats)
                    link.send(reply)
                if realtime:
                    continue
                if not self.options.fast:  # paced to real time, for watching
                    deadline += self.tick
                    delay = deadline - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                    elif delay < -MAX_LAG:
                        deadline = time.monotonic()
        except ProtocolError as exc:
            if not realtime:
                raise RunError(f"lock-step: bad message from the robot program's bridge "
                               f"({exc}); the run ends") from None
            if not self._bad_bridge:
                log.warning("bad message from the robot program's bridge (%s): link dropped, "
                            "motors to 0; said once", exc)
            self._bad_bridge = True
            world.zero_inputs()
            self._arrived = False
        except LinkTimeout as exc:
            if not realtime:
                raise RunError(f"lock-step link to the robot program lost: {exc}") from None
            log.warning("the robot program sent nothing for %g s (frozen?): motors to 0",
                        cfg.bridge.timeout)
            world.zero_inputs()
        except LinkError as exc:
            if not realtime:
                raise RunError(f"lock-step link to the robot program lost: {exc}") from None
            log.info("robot program disconnected (%s): motors to 0", exc)
            world.zero_inputs()
            self._arrived = False
        finally:
            with contextlib.suppress(LinkError):
                link.send({"bye": why})
            link.close()


class LoopClock:
    """Real time with the bridge: how many periods the world advances for each robot loop.

    Loop *n* of a TimedRobot starts at t0 + n·period, and the bridge stamps it later by the
    time robot code took (0 to about a period). The loop's index is counted from the earliest
    phase seen (the base): a stamp earlier in its period than the base lowers the base, so
    jitter in robot code's time never adds or drops a period, and only a loop that really
    skipped periods (one that overran) advances the world by more than one. A jump of more
    than ``MAX_CATCH_UP`` periods (the robot's timing paused or stepped by something else) is
    not simulated: counting goes on from it."""

    def __init__(self, period: float):
        self.period = period
        self.base: float | None = None  # robot time (s) of loop 0's start, as estimated
        self.index = -1  # index of the last loop
        self.gap = 0.0  # robot time (s) from its loop's start as estimated: |robot - world|

    def advance(self, robot_time: float) -> int:
        """Periods to step for the loop stamped ``robot_time`` (s); at least 1."""
        period = self.period
        expected = self.index + 1
        if self.base is None:
            self.base = robot_time
        index = math.floor((robot_time - self.base) / period + 1e-9)
        if index < expected:
            self.base, index = robot_time - expected * period, expected
        elif index - self.index > MAX_CATCH_UP:
            log.warning("the robot program's clock jumped %.2f s; the world goes on from there",
                        (index - self.index) * period)
            self.base, index = robot_time - expected * period, expected
        steps = index - self.index
        self.index = index
        self.gap = robot_time - self.base - index * period
        return steps

    def start(self, steps: int) -> float:
        """Robot time (s) at which the world stood where it stands before the ``steps``
        periods :meth:`advance` returned for the latest loop: the start of the first of them,
        on the loops' schedule, free of the time robot code took (its stamp's jitter)."""
        assert self.base is not None, "advance() first"
        return self.base + (self.index - steps + 1) * self.period


