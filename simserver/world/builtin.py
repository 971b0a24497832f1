"""Built-in model types, registered under the ``simserver.models`` entry-point group exactly as
plugins are (see pyproject.toml): one path for every model."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from simserver.config.drivetrains import MecanumConfig, SwerveConfig
from simserver.config.mechanisms import ArmConfig, ElevatorConfig, FlywheelConfig, LinearConfig
from simserver.config.model import Config, DrivetrainConfig
from simserver.contract.snapshot import SIDE_SPEEDS
from simserver.models.api import Drawing, InputSpec, Ligament, ModelType, OutputSpec, RobotView
from simserver.models.differential import (
    CharacterizedLongitudinal,
    DifferentialDrive,
    DifferentialParams,
    InductiveLongitudinal,
    KinematicLongitudinal,
    Longitudinal,
    PhysicalLongitudinal,
    SideGains,
    robosim_moment_of_inertia,
)
from simserver.models.mechanisms import Arm, Elevator, LinearMotion, MotorDrive, Rotary
from simserver.models.motor import motor_by_name
from simserver.util.untrusted import excerpt
from simserver.world.holonomic import Holonomic, MotorGroup, free_azimuth_rate, free_wheel_speed


def _differential(name: str, dt: DrivetrainConfig, cfg: Config) -> DifferentialDrive:
    left = cfg.motors[dt.left]
    robot = cfg.robot
    moi = robot.moment_of_inertia or robosim_moment_of_inertia(robot.mass, robot.length,
                                                                dt.track_width)
    params = DifferentialParams(
        mass=robot.mass, moment_of_inertia=moi, track_width=dt.track_width,
        wheel_radius=dt.wheel_diameter / 2.0, gearing=dt.gearing,
        motor=motor_by_name(left.type), motors_per_side=left.count,
        lateral_friction=dt.lateral_friction, inductance=left.inductance,
    )
    longitudinal: Longitudinal
    if dt.fidelity == "kinematic":
        assert dt.kinematic is not None
        longitudinal = KinematicLongitudinal(dt.kinematic.max_speed, dt.kinematic.deadzone)
    elif dt.fidelity == "characterized":
        c = dt.characterized
        assert c is not None
        longitudinal = CharacterizedLongitudinal(
            params, SideGains(c.left.kv, c.left.ka, c.left.ks),
            SideGains(c.right.kv, c.right.ka, c.right.ks))
    elif params.inductance > 0.0:
        longitudinal = InductiveLongitudinal(params)
    else:
        longitudinal = PhysicalLongitudinal(params)
    return DifferentialDrive(params, longitudinal)


def _check_differential(dt: DrivetrainConfig, cfg: Config) -> list[tuple[str, str]]:
    from simserver.config.loader import missing_name

    out: list[tuple[str, str]] = []
    motors = cfg.motors
    for side in ("left", "right"):
        name = getattr(dt, side)
        if name not in motors:
            out.append((side, missing_name("motor", name, list(motors))))
    if dt.left == dt.right:
        out.append(("right", "left and right must be different motors"))
    if dt.left in motors and dt.right in motors:
        a, b = motors[dt.left], motors[dt.right]
        if (a.type, a.count, a.inductance) != (b.type, b.count, b.inductance):
            out.append(("", f"left ({a.count}× {a.type}) and right ({b.count}× {b.type}) must "
                            "have the same motor type, count and inductance"))
    if dt.left in motors and motors[dt.left].inductance > 0 and dt.fidelity != "physical":
        out.append(("fidelity", "winding inductance on drivetrain motors needs "
                                "fidelity = \"physical\""))
    if dt.fidelity == "characterized" and dt.characterized is None:
        out.append(("characterized",
                    "required when fidelity = \"characterized\": add "
                    "[drivetrain.characterized.left] and [drivetrain.characterized.right] with "
                    "kv, ka (and ks)"))
    if dt.fidelity == "kinematic" and dt.kinematic is None:
        out.append(("kinematic",
                    "required when fidelity = \"kinematic\": add [drivetrain.kinematic] with "
                    "max_speed"))
    if dt.shifter is not None:
        if dt.shifter not in cfg.solenoids:
            out.append(("shifter", missing_name("solenoid", dt.shifter, list(cfg.solenoids))))
        if dt.high_gearing is None:
            out.append(("high_gearing", "required when shifter is set"))
    return out


DIFFERENTIAL = ModelType(
    name="differential",
    role="drivetrain",
    config=DrivetrainConfig,
    doc="Tank drivetrain: kinematic, characterized (kV/kA/kS) or physical (motor torque → "
        "rigid body), with lateral skid and battery sag.",
    create=_differential,
    check=_check_differential,
    outputs=(OutputSpec(SIDE_SPEEDS[0], "double", "m/s", "Left wheel surface speed.", nt=False),
             OutputSpec(SIDE_SPEEDS[1], "double", "m/s", "Right wheel surface speed.",
                        nt=False)),
)


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
                 drawing: Callable[[Any], Drawing] | None = None):
        self.motor = motor
        self.model = model
        self.twin = twin
        self.start = start
        self.soft_min, self.soft_max = soft
        self.geometry = (radius, gearing)
        self.stator_limit = stator_limit
        self._outputs = outputs
        self._drawing = drawing

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
            before = (m.position, m.velocity)
            m.step(dt, volts)
            if abs(m.current) > limit * (1.0 + 1e-9):
                spec = m.drive.motor
                capped = m.motor_speed / spec.kv + math.copysign(limit * spec.R, m.current)
                if abs(capped) < abs(volts):
                    volts = capped
                m.reset(position=before[0], velocity=before[1])
                m.step(dt, volts)
        else:
            m.step(dt, volts)
        robot.motor_current(self.motor, m.current, m.motor_speed, volts)

    def joint(self) -> tuple[float, float]:
        """(position, velocity) of the output: m and m/s, or rad and rad/s."""
        return self.model.position, self.model.velocity

    def outputs(self) -> dict[str, Any]:
        return self._outputs(self.model)

    def drawing(self) -> Drawing | None:
        return None if self._drawing is None else self._drawing(self.model)


def _open(drive: MotorDrive) -> MotorDrive:
    """The same drive with its windings open: no torque, no current."""
    return MotorDrive(dataclasses.replace(drive.motor, kt=0.0), drive.count, drive.gearing, 0.0)


def _drive(cfg: Config, motor: str, gearing: float) -> MotorDrive:
    m = cfg.motors[motor]
    return MotorDrive(motor_by_name(m.type), m.count, gearing, m.inductance)


def _elevator(name: str, c: ElevatorConfig, cfg: Config) -> Driven:
    def build(drive: MotorDrive) -> Elevator:
        return Elevator(drive, c.carriage_mass, c.drum_radius, c.min_height, c.max_height,
                        start_height=c.start_height)

    drive = _drive(cfg, c.motor, c.gearing)
    model, twin = build(drive), build(_open(drive))
    top = c.max_height

    def draw(e: Elevator) -> Drawing:
        return Drawing(0.6, top + 0.2, {"base": (0.3, 0.05)},
                       (Ligament("carriage", max(e.position, 0.01), 90.0, weight=10,
                                 color="#FF8000"),))

    def outputs(e: Elevator) -> dict[str, Any]:
        return {"height": e.position, "velocity": e.velocity, "at_lower": e.at_lower,
                "at_upper": e.at_upper}

    return Driven(c.motor, model, twin, c.start_height, (c.soft_min, c.soft_max),
                  c.drum_radius, c.gearing, cfg.motors[c.motor].stator_limit, outputs, draw)


def _arm(name: str, c: ArmConfig, cfg: Config) -> Driven:
    def build(drive: MotorDrive) -> Arm:
        return Arm(drive, c.length, c.mass, c.cg_distance, c.moment_of_inertia, c.min_angle,
                   c.max_angle, c.start_angle)

    drive = _drive(cfg, c.motor, c.gearing)
    model, twin = build(drive), build(_open(drive))
    size = 2.2 * c.length

    def draw(a: Arm) -> Drawing:
        return Drawing(size, size, {"pivot": (size / 2, size / 2)},
                       (Ligament("arm", c.length, math.degrees(a.position), root="pivot",
                                 weight=8, color="#FFC000"),))

    start = c.start_angle if c.start_angle is not None else c.min_angle
    return Driven(c.motor, model, twin, start, (c.soft_min, c.soft_max), 0.0, c.gearing,
                  cfg.motors[c.motor].stator_limit, lambda a: {"angle": math.degrees(a.position),
                             "velocity": math.degrees(a.velocity),
                             "at_lower": a.at_lower, "at_upper": a.at_upper}, draw)


def _flywheel(name: str, c: FlywheelConfig, cfg: Config) -> Driven:
    drive = _drive(cfg, c.motor, c.gearing)
    model, twin = Rotary(drive, c.moment_of_inertia), Rotary(_open(drive), c.moment_of_inertia)

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


_STOPS = (OutputSpec("at_lower", "boolean", "", "Resting on the lower hard stop."),
          OutputSpec("at_upper", "boolean", "", "Resting on the upper hard stop."))
_MOTOR = (InputSpec("motor", "motor", "The motor output driving it."),)

ELEVATOR = ModelType(
    name="elevator", mechanism2d=True,
    config=ElevatorConfig, create=_elevator, joint="length", inputs=_MOTOR,
    doc="Carriage on a drum: motor, gearing, gravity, hard stops and soft limits; exact "
        "between stops (matrix exponential), stops found to the instant.",
    outputs=(OutputSpec("height", "double", "m", "Carriage height."),
             OutputSpec("velocity", "double", "m/s", "Carriage velocity, up positive."),
             *_STOPS),
    check=_check_limits("min_height", "max_height"),
)
ARM = ModelType(
    name="arm", mechanism2d=True,
    config=ArmConfig, create=_arm, joint="angle", inputs=_MOTOR,
    doc="Single-jointed arm: gravity with the centre of gravity anywhere along it, hard stops, "
        "soft limits; exponential integrator, stable with winding inductance.",
    outputs=(OutputSpec("angle", "double", "deg", "Arm angle from horizontal, up positive."),
             OutputSpec("velocity", "double", "deg/s", "Angular velocity."), *_STOPS),
    check=_check_limits("min_angle", "max_angle"),
)
FLYWHEEL = ModelType(
    name="flywheel", mechanism2d=True,
    config=FlywheelConfig, create=_flywheel, joint="angle", inputs=_MOTOR,
    doc="Flywheel or any rotating load: a moment of inertia on a motor; exact.",
    outputs=(OutputSpec("velocity", "double", "rad/s", "Angular velocity."),
             OutputSpec("rpm", "double", "rpm", "Angular velocity in revolutions per minute.")),
)
LINEAR = ModelType(
    name="linear", mechanism2d=True,
    config=LinearConfig, create=lambda _n, c, _cfg: Linear(c.motor, c),
    joint="length", inputs=_MOTOR,
    doc="pyfrc LinearMotion: position moves at duty × speed between optional ends.",
    outputs=(OutputSpec("position", "double", "m", "Position."),
             OutputSpec("velocity", "double", "m/s", "Velocity."), *_STOPS),
    check=_check_limits("min_position", "max_position"),
)


# --- holonomic drivetrains ----------------------------------------------------------------------


def _group(cfg: Config, motor: str, gearing: float, radius: float) -> MotorGroup:
    m = cfg.motors[motor]
    return MotorGroup(motor, motor_by_name(m.type), m.count, gearing, radius)


def _chassis_inertia(cfg: Config) -> float:
    robot = cfg.robot
    return robot.moment_of_inertia or robot.mass / 12.0 * (robot.length**2 + robot.width**2)


def _swerve(name: str, c: SwerveConfig, cfg: Config) -> Holonomic:
    from simserver.models.swerve import KinematicSwerve, SwerveDrive, SwerveModuleParams

    r = c.wheel_diameter / 2.0
    mods = list(c.modules.values())
    drive = [_group(cfg, m.drive, c.drive_gearing, r) for m in mods]
    steer = [_group(cfg, m.steer, c.steer_gearing, 0.0) for m in mods]
    moi = _chassis_inertia(cfg)
    model: Any
    if c.fidelity == "kinematic":
        model = KinematicSwerve(
            [(m.x, m.y) for m in mods],
            c.max_speed or free_wheel_speed(drive[0].spec, c.drive_gearing, r),
            c.max_steer_rate or free_azimuth_rate(steer[0].spec, c.steer_gearing),
            wheel_radius=r, drive_gearing=c.drive_gearing, steer_gearing=c.steer_gearing)
    else:
        model = SwerveDrive(
            [SwerveModuleParams(m.x, m.y, r, d.spec, d.count, c.drive_gearing, c.wheel_inertia,
                                s.spec, s.count, c.steer_gearing, c.steer_inertia)
             for m, d, s in zip(mods, drive, steer, strict=True)],
            cfg.robot.mass, moi, c.friction, c.scrub_damping or None)
    return Holonomic(model, drive, steer, c.fidelity == "physical", cfg.robot.mass,
                     moi, coupling=c.coupling_ratio)


def _mecanum(name: str, c: MecanumConfig, cfg: Config) -> Holonomic:
    from simserver.models.mecanum import KinematicMecanum, MecanumDrive, MecanumWheelParams

    r = c.wheel_diameter / 2.0
    hx, hy = c.wheelbase / 2.0, c.track_width / 2.0
    places = ((hx, hy), (hx, -hy), (-hx, hy), (-hx, -hy))
    names = (c.front_left, c.front_right, c.rear_left, c.rear_right)
    drive = [_group(cfg, n, c.gearing, r) for n in names]
    moi = _chassis_inertia(cfg)
    model: Any
    if c.fidelity == "kinematic":
        model = KinematicMecanum(list(places),
                                 c.max_speed or free_wheel_speed(drive[0].spec, c.gearing, r),
                                 wheel_radius=r, deadzone=c.deadzone, gearing=c.gearing)
    else:
        model = MecanumDrive(
            [MecanumWheelParams(x, y, r, d.spec, d.count, c.gearing, c.wheel_inertia)
             for (x, y), d in zip(places, drive, strict=True)],
            cfg.robot.mass, moi, c.friction)
    return Holonomic(model, drive, (), c.fidelity == "physical", cfg.robot.mass, moi)


def _check_motors(cfg: Config, refs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Problems with the (key, motor name) references of a drivetrain."""
    from simserver.config.loader import missing_name

    out = [(key, missing_name("motor", name, list(cfg.motors))) for key, name in refs
           if name not in cfg.motors]
    seen: dict[str, str] = {}
    for key, name in refs:
        if name in seen:
            out.append((key, f"motor {excerpt(name)} is already used by "
                                  f"drivetrain.{seen[name]}"))
        seen.setdefault(name, key)
    return out


def _check_swerve(c: SwerveConfig, cfg: Config) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if len(c.modules) < 2:
        out.append(("modules", f"a swerve drivetrain needs at least 2 modules, got "
                               f"{len(c.modules)}: add [drivetrain.modules.<name>] tables"))
    if c.fidelity == "kinematic" and len(c.modules) not in (2, 3, 4, 6):
        out.append(("fidelity", "the kinematic level uses wpimath kinematics, which has 2, 3, "
                                "4 or 6 modules"))
    places = [(m.x, m.y) for m in c.modules.values()]
    if len(set(places)) != len(places):
        out.append(("modules", "two modules share a location"))
    refs = [(f"modules.{n}.{k}", getattr(m, k)) for n, m in c.modules.items()
            for k in ("drive", "steer")]
    out += _check_motors(cfg, refs)
    return out


def _check_mecanum(c: MecanumConfig, cfg: Config) -> list[tuple[str, str]]:
    return _check_motors(cfg, [(k, getattr(c, k)) for k in
                               ("front_left", "front_right", "rear_left", "rear_right")])


SWERVE = ModelType(
    name="swerve",
    role="drivetrain",
    config=SwerveConfig,
    doc="Swerve drivetrain, 2+ modules anywhere: drive and steer motors with gearboxes and "
        "inertia, traction-limited tire forces per module (slip, scrub) on a rigid chassis; "
        "or kinematic (pyfrc-style).",
    create=_swerve,
    check=_check_swerve,
    outputs=(OutputSpec("drive/module_states", "struct:SwerveModuleState[]", "m/s, rad",
                        "Measured swerve module states (wheel rim speed, azimuth), in config "
                        "order; they differ from the chassis motion when wheels slip."),),
)
MECANUM = ModelType(
    name="mecanum",
    role="drivetrain",
    config=MecanumConfig,
    doc="Mecanum drivetrain: four wheels with 45° rollers, traction-limited roller forces on a "
        "rigid chassis; or kinematic (pyfrc MecanumDrivetrain).",
    create=_mecanum,
    check=_check_mecanum,
    outputs=(OutputSpec("drive/wheel_speeds", "struct:MecanumDriveWheelSpeeds", "m/s",
                        "Measured wheel rim speeds."),),
)
