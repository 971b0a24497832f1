"""CI scenario checks: run for a while after enabling, then pass or fail on expectations.

A scenario is a small TOML file (docs/scenarios.md) saying which mode to enable, how long to run
and what must hold: the final pose within a tolerance, no wall (or field element) contact, a
minimum battery voltage, how closely the true path followed a WPILib trajectory (PathWeaver
JSON), how closely the robot program's own pose estimate (its odometry, read from one of its
NetworkTables topics) tracked the true pose, and how many game pieces were scored, picked up
and shot.
It is parsed by the config machinery, so its errors read like config errors. Units inside are
SI (m, rad, s, V); strings with units appear only in the file and in the report.

    scenario = load_scenario("auto-check.toml")    # ConfigError on any problem
    check = ScenarioCheck(scenario)                  # loads the trajectory file, if any
    while t < scenario.duration:                     # t: simulated s since the robot was enabled
        ...  # step the world one tick
        check.observe(t, world.snapshot())
        # with [expect.odometry]: the robot's pose from check.robot_topics(), when it arrives
        check.observe_odometry(t_published, (x, y, heading), "struct:Pose2d")
    result = check.result()
    print(result.report())                           # exit code 1 unless result.passed

This module does no I/O besides reading the scenario and trajectory files.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wpimath.trajectory import Trajectory, TrajectoryUtil

from simserver.config.fields import (
    Spec,
    boolean,
    integer,
    optional_quantity,
    optional_section,
    quantity,
    section,
    table,
    text,
)
from simserver.config.loader import ConfigError, ConfigIssue, load_schema_file
from simserver.contract.snapshot import PieceSnapshot, Snapshot
from simserver.runs.report import BatteryExtremes
from simserver.util.untrusted import FileRefused, clip, excerpt, read_text

ENABLE_MODES = ("autonomous", "teleop", "test")
DEFAULT_HEADING_TOLERANCE = math.radians(10.0)  # rad, when `heading` is given alone
TRAJECTORY_KEY = "expect.trajectory.file"
MAX_TRAJECTORY_BYTES = 16 * 2**20  # a 15 s PathWeaver path at 20 ms states is about 200 kB
NEVER_ENABLED = "robot was never enabled: no tick observed"
NO_ROBOT = "no robot program connected during the run"
FIELD2D_ROBOT = "/SmartDashboard/Field/Robot"  # a Field2d named "Field" (pyfrc, RobotPy)
# s of simulated time a tick waits for the robot's pose published at it (NT delivers late,
# above all in --fast lock-step); after that the robot's last pose counts as unchanged.
# A true tick is compared with the latest belief once this much simulated time AND this much
# wall time (s) have passed without a newer belief: the robot program publishes nothing while
# its pose holds, but its values may also be on their way over NT, which takes wall time (a
# --fast run simulates 5 s in a quarter of a second of it).
ODOMETRY_HORIZON = 5.0
HALF_PERIOD = 0.01  # s: half of TimedRobot's 20 ms, until two ticks show the tick length

ScenarioError = ConfigError  # a scenario that cannot be used; same form as config errors


def _optional_choice(choices: tuple[str, ...], doc: str) -> Any:
    """One string out of ``choices`` that may be left out (then None)."""
    return dataclasses.field(default=None, metadata={"spec": Spec("choice", doc,
                                                                  choices=choices)})


# --- file schema ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FinalPose:
    """Where the robot must be when the run ends (`expect.final_pose`). Units: m, rad."""

    x: float = quantity(None, "length", "Expected final x of the robot centre (field frame).")
    y: float = quantity(None, "length", "Expected final y of the robot centre (field frame).")
    heading: float | None = optional_quantity(
        "angle", "Expected final heading, CCW from +x. Default: the heading is not checked.")
    tolerance: float = quantity(
        None, "length", "Largest allowed distance between the final and the expected position.",
        positive=True)
    heading_tolerance: float | None = optional_quantity(
        "angle", "Largest allowed heading difference (wrapped to ±180°); needs `heading`. "
        "When left out: 10 deg.", positive=True)


@dataclass(frozen=True)
class TrajectoryExpectation:
    """How closely the true path must follow a WPILib trajectory (`[expect.trajectory]`).

    Once loaded, ``file`` is an absolute path. Units: m, s."""

    file: str = text(
        None, "WPILib trajectory JSON (PathWeaver export format), relative to the scenario "
        "file's directory.")
    max_error: float | None = optional_quantity(
        "length", "Fail if the largest distance from the trajectory exceeds this. Default: "
        "not checked.", positive=True)
    rms_error: float | None = optional_quantity(
        "length", "Fail if the RMS distance from the trajectory exceeds this. Default: not "
        "checked.", positive=True)
    start: float = quantity(
        "0 s", "time", "Time since enable at which the trajectory starts.", minimum=0.0)


@dataclass(frozen=True)
class OdometryExpectation:
    """How closely the robot program's own pose estimate must track the true pose
    (`[expect.odometry]`). Units: m, rad."""

    topic: str = text(
        FIELD2D_ROBOT, "NetworkTables topic the robot program publishes its pose on: a "
        "Field2d object's `double[]` [x m, y m, heading deg] or a `struct:Pose2d`.")
    max_position_error: float | None = optional_quantity(
        "length", "Fail if the robot's pose is ever farther than this from the true pose. "
        "Default: not checked.", positive=True)
    max_heading_error: float | None = optional_quantity(
        "angle", "Fail if the robot's heading ever differs from the true heading by more "
        "than this (wrapped to ±180°). Default: not checked.", positive=True)


def _at_least(what: str) -> Any:
    return integer(None, f"Fail unless at least this many game pieces {what} after being "
                   "enabled. Default: not checked.", minimum=0, optional=True)


@dataclass(frozen=True)
class GoalExpectation:
    """What must go into one goal (`[expect.pieces.goals.<goal>]`)."""

    min_scored: int = integer(None, "Fail unless at least this many game pieces went into "
                              "this goal after being enabled.", minimum=0)


@dataclass(frozen=True)
class PiecesExpectation:
    """Game pieces scored, picked up and shot over the run (`[expect.pieces]`); counts
    after enabling."""

    min_scored: int | None = _at_least("were scored (every goal of both alliances)")
    min_scored_blue: int | None = _at_least("were scored in the blue alliance's goals")
    min_scored_red: int | None = _at_least("were scored in the red alliance's goals")
    min_picked_up: int | None = _at_least("were taken in by the robot")
    min_shots: int | None = _at_least("were released (shot or dropped) by the robot")
    goals: dict[str, GoalExpectation] = table(
        "Per goal of the season, by its name (`[expect.pieces.goals.<goal>]`): "
        "`min_scored`.")

    def given(self) -> bool:
        """Whether anything is to be checked."""
        return bool(self.goals) or any(v is not None for v in (
            self.min_scored, self.min_scored_blue, self.min_scored_red, self.min_picked_up,
            self.min_shots))


@dataclass(frozen=True)
class Expectations:
    """What must hold over the run (`[expect]`); at least one expectation is required."""

    final_pose: FinalPose | None = optional_section(
        "Where the robot must end (inline table). Default: not checked.")
    no_wall_contact: bool = boolean(
        False, "Fail if the robot touches a field wall after being enabled.")
    no_element_contact: bool = boolean(
        False, "Fail if the robot touches a field wall or a field element (`[field] "
        "elements`, `[field.obstacles]`) after being enabled.")
    min_battery_voltage: float | None = optional_quantity(
        "voltage", "Fail if the battery voltage drops below this at any substep (the "
        "ticks' `/simserver/battery/min_voltage`). Default: not checked.",
        positive=True)
    trajectory: TrajectoryExpectation | None = optional_section(
        "Compare the true path with a trajectory file. Default: no comparison.")
    odometry: OdometryExpectation | None = optional_section(
        "Compare the robot program's own pose estimate with the true pose. Default: no "
        "comparison.")
    pieces: PiecesExpectation | None = optional_section(
        "Game pieces scored, picked up and shot (a field with `[pieces]`). Default: not "
        "checked.")


@dataclass(frozen=True)
class ScenarioFile:
    """Top level of a scenario file."""

    enable: str | None = _optional_choice(
        ENABLE_MODES, "Mode to enable the robot in. Default: never enabled; times count from "
        "the start of the run.")
    duration: float = quantity(
        None, "time", "Simulated time to run after the robot is enabled.", positive=True)
    expect: Expectations = section(Expectations, "The expectations.")


# --- the loaded scenario ----------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """A validated scenario. Units: s, m, rad, V.

    source: the scenario file as named by the caller (used in messages); enable: the mode to
    enable, or None; duration: s to run after enabling; trajectory.file: absolute path."""

    source: str
    enable: str | None
    duration: float
    final_pose: FinalPose | None
    no_wall_contact: bool
    min_battery_voltage: float | None
    trajectory: TrajectoryExpectation | None
    no_element_contact: bool = False
    odometry: OdometryExpectation | None = None
    pieces: PiecesExpectation | None = None


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate a scenario file, including its trajectory file.

    Raises ConfigError naming the file, the key path and what was expected, like the config
    loader (every problem found is listed)."""
    p = Path(path)
    raw: ScenarioFile = load_schema_file(ScenarioFile, p)
    issues: list[ConfigIssue] = []
    exp = raw.expect
    final_pose = _resolve_final_pose(exp.final_pose, issues)
    trajectory = _resolve_trajectory(exp.trajectory, p.parent, issues)
    if exp.odometry is not None and not exp.odometry.topic.startswith("/"):
        issues.append(ConfigIssue("expect.odometry.topic", "a NetworkTables topic name starts "
                                  f"with '/', such as {FIELD2D_ROBOT!r}; got "
                                  f"{exp.odometry.topic!r}"))
    if exp.pieces is not None and not exp.pieces.given():
        issues.append(ConfigIssue("expect.pieces", "nothing to check: give min_scored, "
                                  "min_scored_blue, min_scored_red, min_picked_up, min_shots "
                                  "or a goal's min_scored"))
    if final_pose is None and trajectory is None and not exp.no_wall_contact \
            and not exp.no_element_contact and exp.min_battery_voltage is None \
            and exp.odometry is None and exp.pieces is None:
        issues.append(ConfigIssue("expect", "no expectations: give final_pose, "
                                  "no_wall_contact = true, no_element_contact = true, "
                                  "min_battery_voltage, [expect.trajectory], "
                                  "[expect.odometry] or [expect.pieces]"))
    if issues:
        raise ConfigError(str(p), issues)
    return Scenario(str(p), raw.enable, raw.duration, final_pose, exp.no_wall_contact,
                    exp.min_battery_voltage, trajectory, exp.no_element_contact,
                    exp.odometry, exp.pieces)


def _resolve_final_pose(pose: FinalPose | None, issues: list[ConfigIssue]) -> FinalPose | None:
    """Fill in the default heading tolerance; a tolerance without a heading is an error."""
    if pose is None:
        return None
    if pose.heading is None:
        if pose.heading_tolerance is not None:
            issues.append(ConfigIssue("expect.final_pose.heading_tolerance",
                                      "given without heading: add heading or remove this"))
        return pose
    if pose.heading_tolerance is None:
        return dataclasses.replace(pose, heading_tolerance=DEFAULT_HEADING_TOLERANCE)
    return pose


def _resolve_trajectory(traj: TrajectoryExpectation | None, base: Path,
                        issues: list[ConfigIssue]) -> TrajectoryExpectation | None:
    """Make the file path absolute (relative to ``base``) and check that the file loads."""
    if traj is None:
        return None
    path = (base / traj.file).resolve()
    try:
        read_trajectory(path)
    except TrajectoryFileError as exc:
        issues.append(ConfigIssue(TRAJECTORY_KEY, str(exc)))
    return dataclasses.replace(traj, file=str(path))


def _json_problem(exc: Exception) -> str:
    """wpimath's complaint about a trajectory file without the file's text it quotes (its
    "last read: '...'", a number it could not parse: anything the file holds) beyond a short
    excerpt."""
    message = str(exc).split("; last read:")[0]
    return clip(re.sub(r"'([^']*)'", lambda m: excerpt(m.group(1)), message), 200)


class TrajectoryFileError(Exception):
    """A trajectory file that is missing or not a WPILib trajectory; str() names the file."""


def read_trajectory(path: Path) -> Trajectory:
    """Load a PathWeaver-format trajectory JSON file. Raises TrajectoryFileError."""
    try:
        text = read_text(path, MAX_TRAJECTORY_BYTES, "a trajectory file")
    except FileRefused as exc:
        raise TrajectoryFileError(f"trajectory file {exc}") from None
    try:
        traj = TrajectoryUtil.deserializeTrajectory(text)
    except Exception as exc:  # wpimath raises RuntimeError (JSON) and ValueError (no states)
        raise TrajectoryFileError(f"trajectory file {path} is not a WPILib trajectory JSON "
                                  f"(PathWeaver export: a list of states): "
                                  f"{_json_problem(exc)}") from None
    last = -math.inf
    for i, st in enumerate(traj.states()):
        values = (st.t, st.pose.X(), st.pose.Y(), st.pose.rotation().radians())
        if not all(math.isfinite(v) for v in values):
            raise TrajectoryFileError(f"trajectory file {path}: state {i} has a non-finite "
                                      "time or pose")
        if st.t < last:
            raise TrajectoryFileError(f"trajectory file {path}: state {i} has time "
                                      f"{st.t:g} s, before the previous state's {last:g} s")
        last = st.t
    return traj


# --- results ----------------------------------------------------------------------------------

Value = float | bool | str | None


@dataclass
class CheckResult:
    """One expectation's verdict. ``values``: measured figures in SI (m, rad, s, V), None when
    not measured."""

    name: str
    passed: bool
    expected: str
    measured: str
    values: dict[str, Value] = field(default_factory=dict)


@dataclass
class ScenarioResult:
    """Every check's verdict. sim_time: s since enable at the last observed tick (None if no
    tick was observed); final_pose: (x m, y m, heading rad) at that tick; reason: why the run
    failed as a whole when no check says so (no robot program connected), else None."""

    passed: bool
    checks: list[CheckResult]
    scenario: str = ""
    sim_time: float | None = None
    final_pose: tuple[float, float, float] | None = None
    ticks: int = 0
    reason: str | None = None

    def report(self) -> str:
        """A plain-text table: one line per check (PASS/FAIL, expected, measured), then an
        overall line."""
        when = "no tick observed" if self.sim_time is None else \
            f"{self.ticks} ticks observed, up to {_s(self.sim_time)}"
        rows = [("check", "result", "expected", "measured")]
        rows += [(c.name, "PASS" if c.passed else "FAIL", c.expected, c.measured)
                 for c in self.checks]
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        lines = [f"scenario {self.scenario}: {when}"]
        lines += ["  " + "  ".join(r[i].ljust(widths[i]) for i in range(3)) + "  " + r[3]
                  for r in rows]
        failed = sum(not c.passed for c in self.checks)
        verdict = "PASS" if self.passed else "FAIL"
        detail = f"{failed} of {len(self.checks)} checks failed" if failed else \
            f"all {len(self.checks)} checks passed"
        if self.ticks == 0:
            detail = NEVER_ENABLED
        elif self.reason is not None:
            detail = self.reason
        lines.append(f"overall: {verdict} ({detail})")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """Machine-readable summary (docs/scenarios.md gives the schema); json.dumps-able, with
        None in place of any non-finite number."""
        pose = None
        if self.final_pose is not None:
            x, y, heading = self.final_pose
            pose = {"x": _finite(x), "y": _finite(y), "heading": _finite(heading)}
        return {
            "passed": self.passed,
            "scenario": self.scenario,
            "sim_time": _finite(self.sim_time),
            "ticks": self.ticks,
            "reason": self.reason,
            "final_pose": pose,
            "checks": [{"name": c.name, "passed": c.passed, "expected": c.expected,
                        "measured": c.measured,
                        "values": {k: _finite(v) for k, v in c.values.items()}}
                       for c in self.checks],
        }


def _finite(v: Value) -> Value:
    """``v`` with NaN and infinities replaced by None (JSON has no such numbers)."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _wrap(angle: float) -> float:
    """``angle`` wrapped to [-π, π], rad."""
    return math.remainder(angle, math.tau)


def _m(v: float) -> str:
    return f"{v:.2f} m"


def _deg(rad: float) -> str:
    return f"{math.degrees(rad):.1f}°"


def _s(v: float) -> str:
    return f"{v:.2f} s"


# --- the checker ------------------------------------------------------------------------------


@dataclass
class _ErrorStats:
    """Running distance statistics: count, sum of squares (m²), largest (m) and its time (s)."""

    count: int = 0
    sum_sq: float = 0.0
    largest: float = 0.0
    largest_time: float = 0.0

    def add(self, t: float, error: float) -> None:
        self.count += 1
        self.sum_sq += error * error
        if self.count == 1 or error > self.largest:
            self.largest, self.largest_time = error, t

    @property
    def rms(self) -> float:
        return math.sqrt(self.sum_sq / self.count) if self.count else math.nan


@dataclass
class _Odometry:
    """Compares the robot program's pose (its belief) with the true pose, tick by tick.

    The robot's poses arrive late and only when they change (NT suppresses a repeated value),
    so a belief holds from the time it was published until the next one: a true tick at t is
    compared with the latest belief published at or before t, once a belief published after
    t has arrived (or ODOMETRY_HORIZON of simulated time and of wall time, by ``clock`` (s),
    have passed, or the run ended).
    Ticks before the robot's first pose are not compared. A pose stamped within half a tick
    of a tick describes that tick (the robot's clock and the world's need not agree to the
    microsecond: in lock-step the kitbot's poses are stamped 0.3 ms before the tick they
    describe). Times: s since enable; poses: (x m, y m, heading rad)."""

    clock: Callable[[], float] = time.monotonic  # wall time, s
    held: tuple[float, float, float, float] | None = None  # (t, x, y, heading) believed
    # (t, x, y, heading) of the true ticks not compared yet, and the wall time each came at
    pending: deque[tuple[float, float, float, float]] = field(default_factory=deque)
    pending_wall: deque[float] = field(default_factory=deque)
    compared: int = 0
    position: _ErrorStats = field(default_factory=lambda: _ErrorStats())
    heading: _ErrorStats = field(default_factory=lambda: _ErrorStats())
    values: int = 0  # robot poses received
    rejected: int = 0  # values of the topic that are not a pose
    rejected_type: str = ""
    half_tick: float = 0.0  # s, half the latest interval between true ticks
    last_tick: float | None = None  # s, time of the latest true tick

    def truth(self, t: float, x: float, y: float, heading: float) -> None:
        """One true tick; settles the ticks older than the horizon."""
        if self.last_tick is not None and t > self.last_tick:
            self.half_tick = 0.5 * (t - self.last_tick)
        self.last_tick = t
        now = self.clock()
        self.pending.append((t, x, y, heading))
        self.pending_wall.append(now)
        pending, walls = self.pending, self.pending_wall
        aged = 0
        while (aged < len(pending) and pending[aged][0] < t - ODOMETRY_HORIZON
               and walls[aged] < now - ODOMETRY_HORIZON):
            aged += 1
        if aged:
            self._settle(pending[aged - 1][0] + 1e-9)

    def belief(self, t: float, pose: tuple[float, float, float]) -> None:
        """A robot pose published at ``t``: every tick before ``t`` is now settled."""
        self.values += 1
        if self.held is not None and t < self.held[0]:
            return  # older than one already used (late beyond the horizon): ignore
        self._settle(t - (self.half_tick or HALF_PERIOD))
        self.held = (t, *pose)

    def finish(self) -> None:
        """The run ended: the last belief holds for the remaining ticks."""
        self._settle(math.inf)

    def _settle(self, before: float) -> None:
        """Compare every pending tick earlier than ``before`` with the held belief."""
        pending, held = self.pending, self.held
        while pending and pending[0][0] < before:
            t, x, y, heading = pending.popleft()
            self.pending_wall.popleft()
            if held is None:
                continue
            self.compared += 1
            self.position.add(t, math.hypot(held[1] - x, held[2] - y))
            self.heading.add(t, abs(_wrap(held[3] - heading)))


class ScenarioCheck:
    """Watches a run tick by tick and judges it against a Scenario.

    Call ``observe`` once per tick after the step, from the first tick after enabling; then
    ``result``. Wall contacts already counted at the first observed tick are not counted.

    With ``[expect.odometry]``, also hand in every value of the topics :meth:`robot_topics`
    names with :meth:`observe_odometry`, at the time it describes. When the run's inputs come
    from a robot program, say so with :meth:`require_robot` before it starts and call
    :meth:`note_robot` when one connects; a run with no robot program then fails."""

    def __init__(self, scenario: Scenario,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """Load the trajectory file, if any; raises ConfigError naming it when it cannot.
        ``clock``: wall time (s), for how long a robot pose may be on its way."""
        self.scenario = scenario
        self._trajectory: Trajectory | None = None
        if scenario.trajectory is not None:
            try:
                self._trajectory = read_trajectory(Path(scenario.trajectory.file))
            except TrajectoryFileError as exc:
                raise ConfigError(scenario.source, [ConfigIssue(TRAJECTORY_KEY, str(exc))]) \
                    from None
        self._ticks = 0
        self._t = 0.0
        self._last: Snapshot | None = None
        self._hits_at_start = 0
        self._first_hit_time: float | None = None
        self._battery = BatteryExtremes()
        self._errors = _ErrorStats()
        self._contacts_at_start = 0
        self._first_contact: tuple[float, str] | None = None  # (t s, what was touched)
        self._odometry = None if scenario.odometry is None else _Odometry(clock)
        self._robot_required = False
        self._robot_seen = False
        self._pieces_at_start: dict[str, int] | None = None  # counts at the first tick

    def robot_topics(self) -> tuple[str, ...]:
        """The robot program's NetworkTables topics this check reads (the odometry topic)."""
        odo = self.scenario.odometry
        return () if odo is None else (odo.topic,)

    def require_robot(self) -> None:
        """The run's inputs come from a robot program: fail unless one connects."""
        self._robot_required = True

    def note_robot(self) -> None:
        """A robot program connected (or its inputs arrived)."""
        self._robot_seen = True

    def observe_odometry(self, t: float, pose: tuple[float, float, float] | None,
                         nt_type: str = "") -> None:
        """A value of the odometry topic: ``t`` s since enable that it describes (the time
        the robot program published it, negative before enabling), ``pose`` (x m, y m,
        heading rad), or None when the value was not a pose (its NT type ``nt_type``).
        Values of one topic must come in the order they were published."""
        odo = self._odometry
        if odo is None:
            return
        if pose is None:
            odo.rejected += 1
            odo.rejected_type = nt_type
            return
        odo.belief(t, pose)

    def observe(self, t: float, snap: Snapshot) -> None:
        """Record one tick: ``t`` s since enable, ``snap`` the world state after the step."""
        contacts = snap.wall_hits + snap.obstacle_hits
        if self._ticks == 0:
            self._hits_at_start = snap.wall_hits
            self._contacts_at_start = contacts
            if snap.pieces is not None:
                self._pieces_at_start = piece_counts(snap.pieces)
        self._ticks += 1
        self._t, self._last = t, snap
        if self._first_hit_time is None and snap.wall_hits > self._hits_at_start:
            self._first_hit_time = t
        if self._first_contact is None and contacts > self._contacts_at_start:
            self._first_contact = (t, snap.last_contact or "a field wall or element")
        if self._odometry is not None:
            self._odometry.truth(t, snap.x, snap.y, snap.heading)
        self._battery.observe(snap, t)
        error = self._trajectory_error(t, snap)
        if error is not None:
            self._errors.add(t, error)

    def _trajectory_error(self, t: float, snap: Snapshot) -> float | None:
        """Distance (m) from the trajectory at ``t``; after its end, from its final state;
        None before it starts or without one."""
        traj, spec = self._trajectory, self.scenario.trajectory
        if traj is None or spec is None or t < spec.start:
            return None
        ref = traj.sample(min(t - spec.start, traj.totalTime())).pose
        return math.hypot(snap.x - ref.X(), snap.y - ref.Y())

    def trajectory_poses(self) -> list[tuple[float, float, float]]:
        """(x m, y m, heading rad) of every trajectory state, for drawing; [] without one."""
        if self._trajectory is None:
            return []
        return [(s.pose.X(), s.pose.Y(), s.pose.rotation().radians())
                for s in self._trajectory.states()]

    def result(self) -> ScenarioResult:
        """The verdict of every expectation over the ticks observed so far."""
        sc = self.scenario
        checks: list[CheckResult] = []
        if sc.final_pose is not None:
            checks.append(self._check_final_pose(sc.final_pose))
        if sc.no_wall_contact:
            checks.append(self._check_walls())
        if sc.no_element_contact:
            checks.append(self._check_contacts())
        if sc.min_battery_voltage is not None:
            checks.append(self._check_voltage(sc.min_battery_voltage))
        if sc.trajectory is not None:
            checks.append(self._check_trajectory(sc.trajectory))
        if sc.odometry is not None:
            checks.append(self._check_odometry(sc.odometry))
        if sc.pieces is not None:
            checks += self._check_pieces(sc.pieces)
        last = self._last
        reason = NO_ROBOT if self._robot_required and not self._robot_seen else None
        return ScenarioResult(
            passed=self._ticks > 0 and reason is None and all(c.passed for c in checks),
            checks=checks,
            scenario=sc.source,
            sim_time=self._t if last is not None else None,
            final_pose=(last.x, last.y, _wrap(last.heading)) if last is not None else None,
            ticks=self._ticks,
            reason=reason,
        )

    @staticmethod
    def _never(name: str, expected: str, keys: tuple[str, ...]) -> CheckResult:
        return CheckResult(name, False, expected, NEVER_ENABLED, dict.fromkeys(keys))

    def _check_final_pose(self, pose: FinalPose) -> CheckResult:
        expected = f"({_m(pose.x)}, {_m(pose.y)}) ± {_m(pose.tolerance)}"
        if pose.heading is not None and pose.heading_tolerance is not None:
            expected += f", heading {_deg(pose.heading)} ± {_deg(pose.heading_tolerance)}"
        last = self._last
        if last is None:
            return self._never("final_pose", expected, ("x", "y", "heading", "position_error",
                                                        "heading_error"))
        dist = math.hypot(last.x - pose.x, last.y - pose.y)
        passed = dist <= pose.tolerance
        measured = f"({_m(last.x)}, {_m(last.y)}), heading {_deg(_wrap(last.heading))}: " \
                   f"{_m(dist)}"
        heading_error: float | None = None
        if pose.heading is not None and pose.heading_tolerance is not None:
            heading_error = abs(_wrap(last.heading - pose.heading))
            passed = passed and heading_error <= pose.heading_tolerance
            measured += f" and {_deg(heading_error)}"
        measured += " off"
        return CheckResult("final_pose", passed, expected, measured, {
            "x": last.x, "y": last.y, "heading": _wrap(last.heading), "position_error": dist,
            "heading_error": heading_error})

    def _check_walls(self) -> CheckResult:
        expected = "no wall contact"
        last = self._last
        if last is None:
            return self._never("no_wall_contact", expected, ("wall_hits", "first_hit_time"))
        hits = last.wall_hits - self._hits_at_start
        measured = "no wall contact"
        if hits:
            first = _s(self._first_hit_time or 0.0)
            measured = f"{hits} wall contact{'s' if hits > 1 else ''}, first at {first}"
        return CheckResult("no_wall_contact", hits == 0, expected, measured,
                           {"wall_hits": hits, "first_hit_time": self._first_hit_time})

    def _check_contacts(self) -> CheckResult:
        expected = "no wall or field element contact"
        keys = ("contacts", "first_contact_time", "first_contact")
        last = self._last
        if last is None:
            return self._never("no_element_contact", expected, keys)
        n = last.wall_hits + last.obstacle_hits - self._contacts_at_start
        first = self._first_contact
        measured = "no contact"
        if first is not None:
            measured = f"{n} contact{'s' if n != 1 else ''}, first at {_s(first[0])} with " \
                       f"{first[1]}"
        return CheckResult("no_element_contact", first is None, expected, measured, {
            "contacts": n, "first_contact_time": None if first is None else first[0],
            "first_contact": None if first is None else first[1]})

    def _check_odometry(self, spec: OdometryExpectation) -> CheckResult:
        limits = [f"position ≤ {_m(spec.max_position_error)}"
                  if spec.max_position_error is not None else "",
                  f"heading ≤ {_deg(spec.max_heading_error)}"
                  if spec.max_heading_error is not None else ""]
        expected = f"{spec.topic}: " + (", ".join(x for x in limits if x) or "(report only)")
        keys = ("max_position_error", "max_position_error_time", "max_heading_error",
                "max_heading_error_time", "compared", "values")
        odo = self._odometry
        if self._last is None or odo is None:
            return self._never("odometry", expected, keys)
        odo = copy.deepcopy(odo)  # the run may go on: settle a copy
        odo.finish()
        if odo.compared == 0:
            why = f"no pose received on {spec.topic}"
            if odo.rejected:
                why = f"{odo.rejected} values of type {odo.rejected_type or '?'} on " \
                      f"{spec.topic}, none a pose (Field2d double[] or struct:Pose2d)"
            return CheckResult("odometry", False, expected, why,
                               {**dict.fromkeys(keys), "compared": 0, "values": odo.values})
        pos, head = odo.position, odo.heading
        passed = (spec.max_position_error is None or pos.largest <= spec.max_position_error) \
            and (spec.max_heading_error is None or head.largest <= spec.max_heading_error)
        measured = f"max {_m(pos.largest)} at {_s(pos.largest_time)}, " \
                   f"{_deg(head.largest)} at {_s(head.largest_time)} over {odo.compared} " \
                   f"ticks ({odo.values} poses)"
        return CheckResult("odometry", passed, expected, measured, {
            "max_position_error": pos.largest, "max_position_error_time": pos.largest_time,
            "max_heading_error": head.largest, "max_heading_error_time": head.largest_time,
            "compared": odo.compared, "values": odo.values})

    def _check_pieces(self, spec: PiecesExpectation) -> list[CheckResult]:
        """One check per count given: at least that many since the first observed tick."""
        wanted = [(f"pieces.{key}", key.removeprefix("min_"), limit) for key, limit in (
            ("min_scored", spec.min_scored), ("min_scored_blue", spec.min_scored_blue),
            ("min_scored_red", spec.min_scored_red), ("min_picked_up", spec.min_picked_up),
            ("min_shots", spec.min_shots)) if limit is not None]
        wanted += [(f"pieces.goals.{goal}", f"goal:{goal}", g.min_scored)
                   for goal, g in spec.goals.items()]
        last, start = self._last, self._pieces_at_start
        out = []
        for name, count, limit in wanted:
            expected = f"≥ {limit}"
            if last is None:
                out.append(self._never(name, expected, ("count",)))
                continue
            if last.pieces is None or start is None:
                out.append(CheckResult(name, False, expected, "the field has no game pieces",
                                       {"count": None}))
                continue
            now = piece_counts(last.pieces)
            if count not in now:
                out.append(CheckResult(name, False, expected, f"the field has no goal "
                                       f"{count.removeprefix('goal:')!r}", {"count": None}))
                continue
            n = now[count] - start.get(count, 0)
            out.append(CheckResult(name, n >= limit, expected, f"{n}", {"count": n}))
        return out

    def _check_voltage(self, minimum: float) -> CheckResult:
        expected = f"battery ≥ {minimum:.2f} V"
        if self._last is None:
            return self._never("min_battery_voltage", expected, ("min_voltage", "time"))
        v, at = self._battery.min_voltage, self._battery.min_voltage_time
        return CheckResult("min_battery_voltage", v >= minimum, expected,
                           f"lowest {v:.2f} V at {_s(at)}", {"min_voltage": v, "time": at})

    def _check_trajectory(self, spec: TrajectoryExpectation) -> CheckResult:
        limits = [f"max ≤ {_m(spec.max_error)}" if spec.max_error is not None else "",
                  f"RMS ≤ {_m(spec.rms_error)}" if spec.rms_error is not None else ""]
        expected = ", ".join(x for x in limits if x) or "(report only)"
        expected = f"{Path(spec.file).name}: {expected}"
        keys = ("max_error", "max_error_time", "rms_error", "samples")
        if self._last is None:
            return self._never("trajectory", expected, keys)
        st = self._errors
        if st.count == 0:
            return CheckResult("trajectory", False, expected,
                               f"no tick at or after the trajectory start ({_s(spec.start)})",
                               {**dict.fromkeys(keys), "samples": 0})
        passed = (spec.max_error is None or st.largest <= spec.max_error) and \
            (spec.rms_error is None or st.rms <= spec.rms_error)
        measured = f"max {_m(st.largest)} at {_s(st.largest_time)}, RMS {_m(st.rms)} " \
                   f"over {st.count} ticks"
        return CheckResult("trajectory", passed, expected, measured, {
            "max_error": st.largest, "max_error_time": st.largest_time, "rms_error": st.rms,
            "samples": st.count})


def piece_counts(pieces: PieceSnapshot) -> dict[str, int]:
    """The counts the piece checks compare: ``scored`` (every goal), ``scored_blue``,
    ``scored_red``, ``picked_up`` and ``shots`` of the main robot, ``goal:<name>`` per goal."""
    out = {"scored": sum(pieces.scores.values()),
           "scored_blue": pieces.scores.get("blue", 0),
           "scored_red": pieces.scores.get("red", 0),
           "picked_up": pieces.picked_up.get("", 0), "shots": pieces.shots.get("", 0)}
    out.update({f"goal:{g}": n for g, n in pieces.goals.items()})
    return out
