"""WPILib's SysId routine played on a simulated robot, with no robot program.

The four tests of ``SysIdRoutine`` in its order: quasistatic forward and reverse (the voltage
ramps from 0 at ``ramp_rate`` V/s), dynamic forward and reverse (a ``step_voltage`` step), each
ending after ``timeout`` s. Every ``period`` (a robot loop) the routine sets the duty cycle
that gives the commanded voltage at the battery voltage last measured (what
``MotorController.setVoltage`` does), steps the world through the period's substeps and
records, as ``SysIdRoutineLog`` does, each motor's position and velocity at the start of the
period and the voltage its motors actually got during it (duty × bus voltage with sag, averaged
over the substeps).

The subject is the drivetrain (every wheel motor driven with the same voltage, swerve modules
held at their start azimuth, forward; on an open floor: no field walls or elements, the robot
at its centre) or one mechanism. Before each test the world is reset (robot at its start, at
rest, battery fresh), except the reverse tests of a mechanism with a travel range (elevator,
arm, linear): those start where the forward test of the same kind stopped, once the
mechanism came to rest or turned back with no voltage. A test on such a mechanism stops
``STOP_MARGIN`` of its range before the end it drives toward, as teams stop theirs short of the
hard stops; a drivetrain test stops if the robot touches a wall.

    subject = subject_of(cfg, "lift")
    runs = run_routine(World(prepare(cfg, subject)), subject, Settings())
    runs["lift"][0].state  # "quasistatic-forward"
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from simserver.config.limits import LARGEST_FIELD
from simserver.config.model import Config
from simserver.config.registry import registry
from simserver.sysid.fit import Gravity, Run
from simserver.world import World

TESTS = (("quasistatic-forward", 1.0), ("quasistatic-reverse", -1.0),
         ("dynamic-forward", 1.0), ("dynamic-reverse", -1.0))
"""SysIdRoutineLog's state strings of the four tests, in the routine's order, and their
direction."""

SLIP = 0.05  # a wheel whose rim speed differs from the ground speed by more than this share slips
SLIP_FLOOR = 0.02  # m/s of rim-ground difference always tolerated (rounding, scrub)
STOP_MARGIN = 0.1  # share of a mechanism's travel range a test stops short of its end
SETTLE_LIMIT = 3.0  # s a mechanism may take to come to rest before a reverse test
KINDS = ("elevator", "arm", "flywheel", "linear")
"""The mechanism types the routine can characterize."""


class SysIdError(ValueError):
    """A subject or setting the routine cannot use; the message says why."""


@dataclass(frozen=True)
class Settings:
    """The routine's voltages and timing (SysIdRoutine.Config's defaults).

    ramp_rate: V/s of the quasistatic tests. step_voltage: V of the dynamic tests. timeout: s
    each test lasts at most. period: s between samples (the robot loop), rounded to whole
    substeps of the config.
    """

    ramp_rate: float = 1.0
    step_voltage: float = 7.0
    timeout: float = 10.0
    period: float = 0.02

    def check(self) -> None:
        """SysIdError naming the first setting out of range."""
        for name, value, low, high in (("ramp rate", self.ramp_rate, 0.0, 12.0),
                                       ("step voltage", self.step_voltage, 0.0, 24.0),
                                       ("timeout", self.timeout, 0.0, 600.0),
                                       ("period", self.period, 0.0, 1.0)):
            if not (math.isfinite(value) and low < value <= high):
                raise SysIdError(f"{name} must be above {low:g} and at most {high:g}, "
                                 f"not {value:g}")


@dataclass(frozen=True)
class Subject:
    """What the routine characterizes.

    name: the SysIdRoutineLog name (``"drivetrain"`` or the mechanism's name). kind:
    ``"drivetrain"`` or a mechanism type. driven: motor outputs given the test voltage. held:
    motor outputs held at 0 (swerve steering). sensed: motor outputs whose joints are logged.
    angular: positions in rad (else m). gravity: the fit's gravity term. window: (low, high)
    joint positions where a test stops, or None.
    """

    name: str
    kind: str
    driven: tuple[str, ...]
    held: tuple[str, ...] = ()
    angular: bool = False
    gravity: Gravity = "none"
    window: tuple[float, float] | None = None

    @property
    def sensed(self) -> tuple[str, ...]:
        return self.driven


def subject_of(cfg: Config, mechanism: str | None = None) -> Subject:
    """The drivetrain of ``cfg`` (``mechanism`` None) or its mechanism ``mechanism``;
    SysIdError when there is none or it cannot be characterized."""
    if mechanism is None:
        return _drivetrain(cfg)
    section = cfg.mechanisms.get(mechanism)
    if section is None:
        names = ", ".join(cfg.mechanisms) or "none"
        raise SysIdError(f"no mechanism {mechanism!r} in the config (mechanisms: {names})")
    kind = section.type
    if kind not in KINDS:
        raise SysIdError(f"mechanism {mechanism!r} is of type {kind!r}, which cannot be "
                         f"characterized (only {', '.join(KINDS)})")
    c = section.config
    window: tuple[float, float] | None = None
    if kind == "elevator":
        window = _window(c.min_height, c.max_height, c.soft_min, c.soft_max)
    elif kind == "arm":
        window = _window(c.min_angle, c.max_angle, c.soft_min, c.soft_max)
    elif kind == "linear" and c.min_position is not None and c.max_position is not None:
        window = _window(c.min_position, c.max_position, None, None)
    gravity: Gravity = "constant" if kind == "elevator" else "cosine" if kind == "arm" \
        else "none"
    return Subject(mechanism, kind, (c.motor,), angular=kind in ("arm", "flywheel"),
                   gravity=gravity, window=window)


def _window(low: float, high: float, soft_low: float | None, soft_high: float | None
            ) -> tuple[float, float]:
    """Where tests stop: STOP_MARGIN of the range inside the hard (or soft) limits."""
    lo = low if soft_low is None else max(low, soft_low)
    hi = high if soft_high is None else min(high, soft_high)
    margin = STOP_MARGIN * (hi - lo)
    return lo + margin, hi - margin


def _drivetrain(cfg: Config) -> Subject:
    if cfg.drivetrain is None:
        names = ", ".join(cfg.mechanisms)
        hint = f"; give --mechanism ({names})" if names else ""
        raise SysIdError(f"the config has no [drivetrain] to characterize{hint}")
    kind = registry().get("drivetrain", cfg.drivetrain_type)
    if kind is None or kind.motors is None:
        raise SysIdError(f"drivetrain type {cfg.drivetrain_type!r} does not say which motors "
                         "turn its wheels; it cannot be characterized")
    motors = list(kind.motors(cfg.drivetrain))
    wheels = tuple(dict.fromkeys(m.motor for m in motors if m.joint == "length"))
    steer = tuple(dict.fromkeys(m.motor for m in motors if m.joint == "angle"))
    if not wheels:
        raise SysIdError(f"drivetrain type {cfg.drivetrain_type!r} has no wheel motors to "
                         "characterize")
    return Subject("drivetrain", "drivetrain", wheels, held=steer)


def prepare(cfg: Config, subject: Subject) -> Config:
    """``cfg`` as the routine runs it: without cameras (they do not move anything) and, for
    the drivetrain, on an open floor (the largest field, no elements or obstacles, the robot
    at its centre facing +x)."""
    cfg = dataclasses.replace(cfg, cameras={})
    if subject.kind != "drivetrain":
        return cfg
    field = dataclasses.replace(cfg.field, length=LARGEST_FIELD, width=LARGEST_FIELD,
                                elements=False, obstacles={})
    start = dataclasses.replace(cfg.robot.start, x=LARGEST_FIELD / 2, y=LARGEST_FIELD / 2,
                                heading=0.0)
    return dataclasses.replace(cfg, field=field,
                               robot=dataclasses.replace(cfg.robot, start=start))


class _Sampler:
    """Reads a subject's joints and the voltage its motors get, and steps the world."""

    def __init__(self, world: World, subject: Subject, period: float):
        self.world = world
        self.subject = subject
        self.substeps = max(1, round(period / world.substep))
        self.period = self.substeps * world.substep
        mech = world.mechanisms.get(subject.name) if subject.kind != "drivetrain" else None
        self._mech_joint = None if mech is None else getattr(mech, "joint", None)
        if subject.kind != "drivetrain" and self._mech_joint is None:
            raise SysIdError(f"mechanism {subject.name!r} reports no joint position")
        self._sign = {m: -1.0 if world.cfg.motors[m].inverted else 1.0 for m in subject.driven}

    def joint(self, motor: str) -> tuple[float, float]:
        """(position, velocity) of what ``motor`` moves: m, m/s or rad, rad/s."""
        if self._mech_joint is not None:
            position, velocity = self._mech_joint()
            return float(position), float(velocity)
        found = self.world.drivetrain.joint(motor)
        assert found is not None
        return found.position, found.velocity

    def drive(self, volts: float) -> None:
        """Duty cycles for ``volts`` at the last measured bus voltage (setVoltage)."""
        world = self.world
        bus = world.bus_voltage
        duty = max(-1.0, min(1.0, volts / bus)) if bus > 0.0 else 0.0
        for m in self.subject.driven:
            world.set_motor(m, duty * self._sign[m])
        for m in self.subject.held:
            world.set_motor(m, 0.0)

    def applied(self, motor: str) -> tuple[float, bool]:
        """Voltage across ``motor``'s terminals in the last substep, V, in the direction that
        moves its joint forward, and whether it was held over the substep (True) or is the
        duty times the bus voltage at the substep's end (a drivetrain that solves the bus
        with its speeds and reports no terminal voltage: the tank)."""
        world = self.world
        kind = self.subject.kind
        if kind not in ("drivetrain", "linear"):
            return world.applied_voltage[motor], True  # reported by the mechanism per substep
        if kind == "drivetrain":
            if world.battery.brownout:
                return 0.0, True
            reported = world.drivetrain.motor_states().get(motor, (0.0, 0.0))[1]
            if reported != 0.0:
                return reported, True
        ctrl = world.controller(motor)
        if kind == "linear" or ctrl.passthrough:
            duty = max(-1.0, min(1.0, world.motor(motor)))
        else:
            duty = ctrl.output.duty
        return duty * world.bus_voltage, False

    def slipping(self) -> bool:
        """Whether a driven wheel's rim speed differs from the robot's ground speed (forward)
        by more than SLIP of it (never for a mechanism)."""
        if self.subject.kind != "drivetrain":
            return False
        ground = self.world.chassis_speeds[0]
        for m in self.subject.driven:
            rim = self.joint(m)[1]
            if abs(rim - ground) > SLIP * max(abs(rim), abs(ground)) + SLIP_FLOOR:
                return True
        return False

    def step(self) -> tuple[dict[str, float], bool]:
        """One period: each driven motor's mean applied voltage over it, V, and whether the
        wheels slipped at a substep's end. Voltages held per substep are averaged; voltages
        known at substep ends are integrated by the trapezoid rule, the period's first value
        extrapolated from the next two."""
        world, n = self.world, self.substeps
        values: dict[str, list[float]] = {m: [] for m in self.subject.driven}
        held = True
        slipped = False
        world.begin_tick()
        for _ in range(n):
            world.advance()
            for m, seen in values.items():
                volts, exact = self.applied(m)
                seen.append(volts)
                held = held and exact
            slipped = slipped or self.slipping()
        world.end_tick(n)
        if held or n < 2:
            return {m: sum(v) / n for m, v in values.items()}, slipped
        return {m: (0.5 * (2.0 * v[0] - v[1]) + sum(v[:-1]) + 0.5 * v[-1]) / n
                for m, v in values.items()}, slipped


def run_routine(world: World, subject: Subject, settings: Settings) -> dict[str, list[Run]]:
    """Play the four tests on ``world``; each sensed motor's runs in test order. Run times
    are log times, s: the tests follow each other with a one-second pause."""
    settings.check()
    sampler = _Sampler(world, subject, settings.period)
    out: dict[str, list[Run]] = {m: [] for m in subject.sensed}
    clock = 1.0
    for state, sign in TESTS:
        if sign > 0 or subject.window is None:
            world.reset()
        else:
            clock += _settle(sampler)
        runs = _test(sampler, state, sign, settings, clock)
        for m, run in runs.items():
            out[m].append(run)
        clock += len(next(iter(runs.values())).time) * sampler.period + 1.0
    return out


def _settle(sampler: _Sampler) -> float:
    """With no voltage, wait until the mechanism stops or turns back (at most SETTLE_LIMIT);
    the time it took, s."""
    motor = sampler.subject.driven[0]
    _, v0 = sampler.joint(motor)
    waited = 0.0
    while waited < SETTLE_LIMIT:
        sampler.drive(0.0)
        sampler.step()
        waited += sampler.period
        _, v = sampler.joint(motor)
        if v == 0.0 or v * v0 <= 0.0:
            break
    return waited


def _test(sampler: _Sampler, state: str, sign: float, settings: Settings, clock: float
          ) -> dict[str, Run]:
    """One test from the world's present state."""
    subject, world = sampler.subject, sampler.world
    motors = subject.sensed
    times: list[float] = []
    samples: dict[str, list[tuple[float, float, float]]] = {m: [] for m in motors}
    walls = world.wall_hits
    slipped = 0
    steps = int(settings.timeout / sampler.period + 1e-9)
    for k in range(steps):
        t = k * sampler.period
        joints = {m: sampler.joint(m) for m in motors}
        if _stopped(subject, sign, joints[motors[0]][0]) or world.wall_hits > walls:
            break
        volts = sign * (settings.ramp_rate * t if state.startswith("quasistatic")
                        else settings.step_voltage)
        sampler.drive(volts)
        applied, slip = sampler.step()
        slipped += slip
        times.append(clock + t)
        for m in motors:
            samples[m].append((applied[m], *joints[m]))
    sampler.drive(0.0)
    out = {}
    for m in motors:
        data = np.array(samples[m], dtype=float).reshape(-1, 3)
        out[m] = Run(state, np.array(times, dtype=float), data[:, 0], data[:, 1], data[:, 2],
                     slipped / max(1, len(times)))
    return out


def _stopped(subject: Subject, sign: float, position: float) -> bool:
    """Whether a test driving in direction ``sign`` has reached the end of its window."""
    if subject.window is None:
        return False
    low, high = subject.window
    return position >= high if sign > 0 else position <= low
