"""The built-in mechanism types (elevator, arm, flywheel, linear) behind the Model API,
registered under the ``simserver.models`` entry-point group exactly as plugins are (see
pyproject.toml): one path for every model."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from wpimath.geometry import Pose3d, Rotation3d

from simserver.config.handling import RotaryConfig
from simserver.config.losses import losses_from_config, losses_issues
from simserver.config.mechanisms import ArmConfig, ElevatorConfig, FlywheelConfig, LinearConfig
from simserver.config.model import Config
from simserver.models.api import Drawing, InputSpec, Ligament, ModelType, OutputSpec, RobotView
from simserver.models.losses import (
    CharacterizationError,
    Derived,
    Feedforward,
    JointMotors,
    Losses,
    from_feedforward,
)
from simserver.models.mechanisms import (
    GRAVITY,
    Arm,
    Elevator,
    LinearMotion,
    MotorDrive,
    Rotary,
)
from simserver.models.motor import motor_by_name

# --- built-in mechanisms ------------------------------------------------------------------------


class Driven:
    """A motor-driven mechanism model behind the Model API: each substep it runs the motor's
    controller through the RobotView (duty, ramp, noise, current limits, brownout), applies
    firmware soft limits, steps the pure model and reports the motor current for the battery.

    While the controller coasts, the substep is taken by ``twin``, the same mechanism with its
    windings open (no motor torque at all). A stator current limit is held at the end of the
    substep too: if the current would end above it (a mechanism reaching a stop), the substep
    is taken again at the voltage that ends exactly at the limit.

    geometry: (drum radius m or 0, gearing) so encoders can convert joint motion.
    """

    def __init__(self, motor: str, model: Elevator | Arm | Rotary, twin: Elevator | Arm | Rotary,
                 start: float | None, soft: tuple[float | None, float | None], radius: float,
                 gearing: float, stator_limit: float,
                 outputs: Callable[[Any], dict[str, Any]],
                 drawing: Callable[[Any], Drawing] | None = None,
                 components: Callable[[Any], tuple[Pose3d, ...]] | None = None):
        self.motor = motor
        self.model = model
        self.twin = twin
        self.start = start
        self.soft_min, self.soft_max = soft
        self.geometry = (radius, gearing)
        self.stator_limit = stator_limit
        self._outputs = outputs
        self._drawing = drawing
        self._components = components

    def reset(self) -> None:
        self.model.reset(position=self.start)

    def load(self, robot: RobotView) -> tuple[float, float]:
        """Supply current as ``g·V_bus + i0`` (S, A) at the start of the substep, for the
        world's bus solve: linear in V_bus for a steady-state motor, constant with inductance."""
        m, drive = self.model, self.model.drive
        duty = robot.motor(self.motor)
        if drive.inductance > 0.0:
            return 0.0, drive.count * duty * m.current
        spec = drive.motor
        return (drive.count * duty * duty / spec.R,
                -drive.count * duty * m.motor_speed / (spec.kv * spec.R))

    def step(self, dt: float, robot: RobotView) -> None:
        m = self.model
        duty = robot.motor(self.motor)
        if (self.soft_max is not None and m.position >= self.soft_max and duty > 0) or (
                self.soft_min is not None and m.position <= self.soft_min and duty < 0):
            duty = 0.0
        volts = robot.motor_voltage(self.motor, m.motor_speed, dt, duty)
        if robot.motor_coasting(self.motor):
            self.twin.reset(position=m.position, velocity=m.velocity)
            self.twin.step(dt, 0.0)
            m.reset(position=self.twin.position, velocity=self.twin.velocity)
            robot.motor_current(self.motor, 0.0, m.motor_speed)
            return
        limit = self.stator_limit
        if limit > 0.0 and m.drive.inductance == 0.0:
            volts = self._held_at_limit(m, dt, volts, limit)
        else:
            m.step(dt, volts)
        robot.motor_current(self.motor, m.current, m.motor_speed, volts)

    @staticmethod
    def _held_at_limit(m: Elevator | Arm | Rotary, dt: float, volts: float,
                       limit: float) -> float:
        """Step ``m`` by ``dt`` at ``volts``, or, if its current would end above ``limit`` A,
        at the voltage that ends exactly at the limit (a mechanism reaching a stop, or
        friction, can change its speed within the substep): the end current is affine in the
        voltage between events, so secant steps from the first try find it. Returns the
        voltage used."""
        before = (m.position, m.velocity)
        m.step(dt, volts)
        current = m.current
        if abs(current) <= limit * (1.0 + 1e-9):
            return volts
        target = math.copysign(limit, current)
        spec = m.drive.motor
        tried, got = volts, current
        # First guess: the voltage that gives the limit at the speed the first try ended at.
        guess = m.motor_speed / spec.kv + target * spec.R
        for attempt in range(_LIMIT_TRIES):
            if abs(guess) >= abs(volts):
                guess = volts
            m.reset(position=before[0], velocity=before[1])
            m.step(dt, guess)
            current = m.current
            if (abs(current) <= limit * (1.0 + 1e-9) or current == got
                    or attempt == _LIMIT_TRIES - 1):
                break
            tried, got, guess = guess, current, guess + (target - current) * (
                guess - tried) / (current - got)
        return guess

    def joint(self) -> tuple[float, float]:
        """(position, velocity) of the output: m and m/s, or rad and rad/s."""
        return self.model.position, self.model.velocity

    def apply_impulse(self, impulse: float) -> None:
        """An angular impulse on a rotary output, N·m·s (a flywheel shooting a game piece):
        see :meth:`Rotary.apply_impulse`. Raises TypeError for an elevator or an arm."""
        if not isinstance(self.model, Rotary):
            raise TypeError(f"a {type(self.model).__name__} takes no angular impulse")
        self.model.apply_impulse(impulse)

    def outputs(self) -> dict[str, Any]:
        return self._outputs(self.model)

    def drawing(self) -> Drawing | None:
        return None if self._drawing is None else self._drawing(self.model)

    def components(self) -> tuple[Pose3d, ...]:
        """Poses of the moving parts in the robot frame (see ``Model.components``)."""
        return () if self._components is None else self._components(self.model)


_LIMIT_TRIES = 4  # secant steps toward the voltage that ends a substep at the stator limit


def _open(drive: MotorDrive) -> MotorDrive:
    """The same drive with its windings open: no torque, no current."""
    return MotorDrive(dataclasses.replace(drive.motor, kt=0.0), drive.count, drive.gearing, 0.0)


def _coasting(joint: JointMotors) -> Losses:
    """The losses of ``joint`` with its windings open: the friction, and the motors' no-load
    losses (their free-current load) as the damping they are, since the rotors still turn."""
    losses = joint.losses
    return Losses(losses.efficiency, losses.coulomb, joint.loss_damping, False)


def _drive(cfg: Config, motor: str, gearing: float) -> MotorDrive:
    m = cfg.motors[motor]
    return MotorDrive(motor_by_name(m.type), m.count, gearing, m.inductance)


def _joint(c: ElevatorConfig | ArmConfig | FlywheelConfig | RotaryConfig, cfg: Config,
           ratio: float, per: str = "m") -> tuple[Losses, Derived | None]:
    """The joint's losses from its `losses` table, or from its `characterization` with what
    that derives (inertia, gravity). ratio: motor rad per ``per`` (m or rad) of the joint.
    Raises CharacterizationError for constants no friction gives."""
    m = cfg.motors[c.motor]
    spec = motor_by_name(m.type)
    losses = losses_from_config(c.losses, spec, m.count, ratio)
    ch = c.characterization
    if ch is None:
        return losses, None
    derived = from_feedforward(JointMotors(spec, m.count, ratio, losses),
                               Feedforward(ch.ks, ch.kv, ch.ka, ch.kg or 0.0), per)
    return derived.losses, derived


def _elevator(name: str, c: ElevatorConfig, cfg: Config) -> Driven:
    losses, derived = _joint(c, cfg, c.gearing / c.drum_radius)
    mass = c.carriage_mass if derived is None else derived.inertia
    weight = c.carriage_mass * GRAVITY
    if derived is not None and c.characterization is not None \
            and c.characterization.kg is not None:
        weight = derived.gravity

    def build(drive: MotorDrive, losses: Losses) -> Elevator:
        return Elevator(drive, mass, c.drum_radius, c.min_height, c.max_height,
                        start_height=c.start_height, losses=losses, weight=weight)

    drive = _drive(cfg, c.motor, c.gearing)
    model = build(drive, losses)
    twin = build(_open(drive), _coasting(model.joint))
    top = c.max_height

    def draw(e: Elevator) -> Drawing:
        return Drawing(0.6, top + 0.2, {"base": (0.3, 0.05)},
                       (Ligament("carriage", max(e.position, 0.01), 90.0, weight=10,
                                 color="#FF8000"),))

    def outputs(e: Elevator) -> dict[str, Any]:
        return {"height": e.position, "velocity": e.velocity, "at_lower": e.at_lower,
                "at_upper": e.at_upper}

    def parts(e: Elevator) -> tuple[Pose3d, ...]:
        return elevator_components(e.position - c.min_height, c.stages,
                                   (c.base_x, c.base_y, c.base_z))

    return Driven(c.motor, model, twin, c.start_height, (c.soft_min, c.soft_max),
                  c.drum_radius, c.gearing, cfg.motors[c.motor].stator_limit, outputs, draw,
                  parts)


def elevator_components(travel: float, stages: int, base: tuple[float, float, float]
                        ) -> tuple[Pose3d, ...]:
    """An elevator's moving parts, ``travel`` m above the bottom of travel: the
    ``stages − 1`` stages under the carriage, lowest first, stage k risen k/stages of the
    travel (cascade rigging), then the carriage; each at ``base`` (robot frame, m) raised by
    its rise, unrotated."""
    x, y, z = base
    return tuple(Pose3d(x, y, z + travel * k / stages, Rotation3d())
                 for k in range(1, stages + 1))


def arm_component(angle: float, pivot: tuple[float, float, float]) -> Pose3d:
    """An arm's segment at ``angle`` rad (0 pointing forward, up positive) about its pivot at
    ``pivot`` (robot frame, m): the pose at the pivot whose x axis points along the arm, as
    AdvantageScope's articulated components expect (pitch is positive nose-down in WPILib,
    so the pitch is −angle)."""
    return Pose3d(*pivot, Rotation3d(0.0, -angle, 0.0))


def _arm(name: str, c: ArmConfig, cfg: Config) -> Driven:
    losses, derived = _joint(c, cfg, c.gearing, "rad")
    inertia = c.moment_of_inertia if derived is None else derived.inertia
    torque = None
    if derived is not None and c.characterization is not None \
            and c.characterization.kg is not None:
        torque = derived.gravity

    def build(drive: MotorDrive, losses: Losses) -> Arm:
        return Arm(drive, c.length, c.mass, c.cg_distance, inertia, c.min_angle,
                   c.max_angle, c.start_angle, losses=losses, gravity_torque=torque)

    drive = _drive(cfg, c.motor, c.gearing)
    model = build(drive, losses)
    twin = build(_open(drive), _coasting(model.joint))
    size = 2.2 * c.length

    def draw(a: Arm) -> Drawing:
        return Drawing(size, size, {"pivot": (size / 2, size / 2)},
                       (Ligament("arm", c.length, math.degrees(a.position), root="pivot",
                                 weight=8, color="#FFC000"),))

    start = c.start_angle if c.start_angle is not None else c.min_angle
    pivot = (c.pivot_x, c.pivot_y, c.pivot_z)
    return Driven(c.motor, model, twin, start, (c.soft_min, c.soft_max), 0.0, c.gearing,
                  cfg.motors[c.motor].stator_limit, lambda a: {"angle": math.degrees(a.position),
                             "velocity": math.degrees(a.velocity),
                             "at_lower": a.at_lower, "at_upper": a.at_upper}, draw,
                  lambda a: (arm_component(a.position, pivot),))


def _flywheel(name: str, c: FlywheelConfig, cfg: Config) -> Driven:
    losses, derived = _joint(c, cfg, c.gearing, "rad")
    inertia = c.moment_of_inertia if derived is None else derived.inertia
    drive = _drive(cfg, c.motor, c.gearing)
    model = Rotary(drive, inertia, losses=losses)
    twin = Rotary(_open(drive), inertia, losses=_coasting(model.joint))

    def draw(r: Rotary) -> Drawing:
        return Drawing(0.5, 0.5, {"hub": (0.25, 0.25)},
                       (Ligament("spoke", 0.2, math.degrees(r.position) % 360.0, root="hub",
                                 weight=6, color="#00C0FF"),))

    def outputs(r: Rotary) -> dict[str, Any]:
        return {"velocity": r.velocity, "rpm": r.velocity * 60 / (2 * math.pi)}

    return Driven(c.motor, model, twin, 0.0, (None, None), 0.0, c.gearing,
                  cfg.motors[c.motor].stator_limit, outputs, draw)


class Linear:
    """pyfrc's LinearMotion behind the Model API (no motor physics, no current)."""

    def __init__(self, motor: str, c: LinearConfig):
        self.motor = motor
        self.model = LinearMotion(c.speed, c.min_position, c.max_position, c.start_position)
        self.start = c.start_position
        self.geometry = (0.0, 1.0)
        lo = c.min_position if c.min_position is not None else min(0.0, c.start_position)
        hi = c.max_position if c.max_position is not None else max(1.0, c.start_position)
        self._span = (lo, hi)

    def drawing(self) -> Drawing:
        lo, hi = self._span
        length = max(self.model.position - lo, 0.01)
        return Drawing(hi - lo + 0.2, 0.4, {"base": (0.1, 0.2)},
                       (Ligament("slide", length, 0.0, weight=10, color="#80FF80"),))

    def reset(self) -> None:
        self.model.reset(position=self.start)

    def step(self, dt: float, robot: RobotView) -> None:
        self.model.step(dt, robot.motor(self.motor))

    def joint(self) -> tuple[float, float]:
        return self.model.position, self.model.velocity

    def outputs(self) -> dict[str, Any]:
        m = self.model
        return {"position": m.position, "velocity": m.velocity, "at_lower": m.at_lower,
                "at_upper": m.at_upper}


def _check_limits(lo_key: str, hi_key: str) -> Callable[[Any, Config], list[tuple[str, str]]]:
    def check(c: Any, cfg: Config) -> list[tuple[str, str]]:
        lo, hi = getattr(c, lo_key), getattr(c, hi_key)
        out = []
        if lo is not None and hi is not None and not lo < hi:
            out.append((hi_key, f"must be above {lo_key}"))
        start = getattr(c, "start_" + lo_key.split("_")[1], None)
        if start is not None and lo is not None and hi is not None and not lo <= start <= hi:
            out.append((f"start_{lo_key.split('_')[1]}", f"must lie between {lo_key} and "
                                                         f"{hi_key}"))
        return out

    return check


Check = Callable[[Any, Config], list[tuple[str, str]]]


def _check_joint(ratio: Callable[[Any], float], per: str, gravity: bool = True) -> Check:
    """The `losses` table's keys agree with `ideal`; the `characterization` is one that
    friction, inertia (and gravity, when ``gravity``) can give these motors. per: the unit of
    the joint ("m" or "rad"), for messages."""
    def check(c: Any, cfg: Config) -> list[tuple[str, str]]:
        out = [(f"losses.{key}", msg) for key, msg in losses_issues(c.losses)]
        ch = c.characterization
        if ch is None or c.motor not in cfg.motors:
            return out
        if not gravity and ch.kg:
            out.append(("characterization.kg", "a flywheel has no gravity term: leave kg out "
                        "(or 0 V)"))
        try:
            _joint(c, cfg, ratio(c), per)
        except CharacterizationError as e:
            out.append((f"characterization.{e.key}", str(e)))
        except (KeyError, ValueError):
            pass  # an unknown motor type: reported where the motor is declared
        return out

    return check


def _checks(*checks: Check) -> Check:
    return lambda c, cfg: [issue for check in checks for issue in check(c, cfg)]


_STOPS = (OutputSpec("at_lower", "boolean", "", "Resting on the lower hard stop."),
          OutputSpec("at_upper", "boolean", "", "Resting on the upper hard stop."))
_MOTOR = (InputSpec("motor", "motor", "The motor output driving it."),)

ELEVATOR = ModelType(
    name="elevator", mechanism2d=True, components=True,
    config=ElevatorConfig, create=_elevator, joint="length", inputs=_MOTOR,
    doc="Carriage on a drum: motor, gearing, gravity, hard stops and soft limits; exact "
        "between stops (matrix exponential), stops found to the instant.",
    outputs=(OutputSpec("height", "double", "m", "Carriage height."),
             OutputSpec("velocity", "double", "m/s", "Carriage velocity, up positive."),
             *_STOPS),
    check=_checks(_check_limits("min_height", "max_height"),
                  _check_joint(lambda c: c.gearing / c.drum_radius, "m")),
)
ARM = ModelType(
    name="arm", mechanism2d=True, components=True,
    config=ArmConfig, create=_arm, joint="angle", inputs=_MOTOR,
    doc="Single-jointed arm: gravity with the centre of gravity anywhere along it, hard stops, "
        "soft limits; exponential integrator, stable with winding inductance.",
    outputs=(OutputSpec("angle", "double", "deg", "Arm angle from horizontal, up positive."),
             OutputSpec("velocity", "double", "deg/s", "Angular velocity."), *_STOPS),
    check=_checks(_check_limits("min_angle", "max_angle"),
                  _check_joint(lambda c: c.gearing, "rad")),
)
FLYWHEEL = ModelType(
    name="flywheel", mechanism2d=True,
    config=FlywheelConfig, create=_flywheel, joint="angle", inputs=_MOTOR,
    doc="Flywheel or any rotating load: a moment of inertia on a motor; exact.",
    outputs=(OutputSpec("velocity", "double", "rad/s", "Angular velocity."),
             OutputSpec("rpm", "double", "rpm", "Angular velocity in revolutions per minute.")),
    check=_check_joint(lambda c: c.gearing, "rad", gravity=False),
)
LINEAR = ModelType(
    name="linear", mechanism2d=True,
    config=LinearConfig, create=lambda _n, c, _cfg: Linear(c.motor, c),
    joint="length", inputs=_MOTOR,
    doc="pyfrc LinearMotion: position moves at duty × speed between optional ends (no motor "
        "physics, no losses).",
    outputs=(OutputSpec("position", "double", "m", "Position."),
             OutputSpec("velocity", "double", "m/s", "Velocity."), *_STOPS),
    check=_check_limits("min_position", "max_position"),
)
