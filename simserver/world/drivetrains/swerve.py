"""The swerve drivetrain (``type = "swerve"``): two or more modules anywhere on the robot, each
a drive and a steer motor output, on :class:`~simserver.models.swerve.SwerveDrive` (physical,
traction-limited) or :class:`~simserver.models.swerve.KinematicSwerve` (pyfrc-style), through
the shared holonomic adapter (:mod:`.holonomic`).
"""

from __future__ import annotations

from typing import Any

from wpimath.geometry import Rotation2d
from wpimath.kinematics import SwerveModuleState

from simserver.config.drivetrains import SwerveConfig
from simserver.config.losses import losses_from_config
from simserver.config.model import Config
from simserver.config.plausible import wheel_speed_warning
from simserver.models.api import DriveMotor, ModelType, OutputSpec
from simserver.world.drivetrains.holonomic import (
    Holonomic,
    characterization_problems,
    drive_wheel,
    free_azimuth_rate,
    free_wheel_speed,
    motor_group,
)

MODULE_STATES = "drive/module_states"


def _outputs(drive: Holonomic) -> dict[str, Any]:
    return {MODULE_STATES: [SwerveModuleState(v, Rotation2d(a))
                            for v, a in drive.model.module_states()]}


def _create(name: str, c: SwerveConfig, cfg: Config) -> Holonomic:
    from simserver.models.swerve import KinematicSwerve, SwerveDrive, SwerveModuleParams

    r = c.wheel_diameter / 2.0
    mods = list(c.modules.values())
    drive = [motor_group(cfg, m.drive, c.drive_gearing, r) for m in mods]
    steer = [motor_group(cfg, m.steer, c.steer_gearing, 0.0) for m in mods]
    moi = cfg.robot.box_inertia()
    model: Any
    if c.fidelity == "kinematic":
        model = KinematicSwerve(
            [(m.x, m.y) for m in mods],
            c.max_speed or free_wheel_speed(drive[0].spec, c.drive_gearing, r),
            c.max_steer_rate or free_azimuth_rate(steer[0].spec, c.steer_gearing),
            wheel_radius=r, drive_gearing=c.drive_gearing, steer_gearing=c.steer_gearing)
    else:
        wheels = [drive_wheel(c.losses, c.characterization, d, c.wheel_inertia,
                              cfg.robot.mass, len(mods)) for d in drive]
        model = SwerveDrive(
            [SwerveModuleParams(m.x, m.y, r, d.spec, d.count, c.drive_gearing, w.inertia,
                                s.spec, s.count, c.steer_gearing, c.steer_inertia, w.losses,
                                losses_from_config(c.losses, s.spec, s.count, c.steer_gearing))
             for m, d, s, w in zip(mods, drive, steer, wheels, strict=True)],
            cfg.robot.mass, moi, c.friction, c.scrub_damping or None,
            wheels[0].rolling_resistance)
    return Holonomic(model, drive, steer, c.fidelity == "physical", cfg.robot.mass,
                     moi, _outputs, coupling=c.coupling_ratio)


def _motors(c: SwerveConfig) -> list[DriveMotor]:
    return [use for n, m in c.modules.items() for use in (
        DriveMotor(m.drive, f"modules.{n}.drive", "length", "a drive wheel"),
        DriveMotor(m.steer, f"modules.{n}.steer", "angle", "a swerve module's azimuth"))]


def _check(c: SwerveConfig, cfg: Config) -> list[tuple[str, str]]:
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
    if c.modules and c.fidelity == "physical":
        first = next(iter(c.modules.values()))
        out += characterization_problems(c.losses, c.characterization, cfg, first.drive,
                                         c.drive_gearing, c.wheel_diameter / 2.0,
                                         len(c.modules))
    return out


def _warn(c: SwerveConfig, cfg: Config) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    robot = cfg.robot
    for name, m in c.modules.items():
        if abs(m.x) > robot.length / 2.0 or abs(m.y) > robot.width / 2.0:
            out.append((f"modules.{name}", f"({m.x:g} m, {m.y:g} m) is outside the robot's "
                                           "outline"))
    if c.modules and c.max_speed is None:
        first = next(iter(c.modules.values()))
        out += wheel_speed_warning(cfg, first.drive, "drive_gearing", c.drive_gearing,
                                   c.wheel_diameter)
    return out


SWERVE = ModelType(
    name="swerve",
    role="drivetrain",
    config=SwerveConfig,
    doc="Swerve drivetrain, 2+ modules anywhere: drive and steer motors with gearboxes and "
        "inertia, traction-limited tire forces per module (slip, scrub) on a rigid chassis; "
        "or kinematic (pyfrc-style).",
    create=_create,
    check=_check,
    warn=_warn,
    motors=_motors,
    outputs=(OutputSpec(MODULE_STATES, "struct:SwerveModuleState[]", "m/s, rad",
                        "Measured swerve module states (wheel rim speed, azimuth), in config "
                        "order; they differ from the chassis motion when wheels slip."),),
)
