"""The mecanum drivetrain (``type = "mecanum"``): four wheels with 45° rollers, each a motor
output, on :class:`~simserver.models.mecanum.MecanumDrive` (physical, traction-limited roller
forces) or :class:`~simserver.models.mecanum.KinematicMecanum` (pyfrc's), through the shared
holonomic adapter (:mod:`.holonomic`).
"""

from __future__ import annotations

from typing import Any

from wpimath.kinematics import MecanumDriveWheelSpeeds

from simserver.config.drivetrains import MecanumConfig
from simserver.config.model import Config
from simserver.config.plausible import wheel_speed_warning
from simserver.models.api import DriveMotor, ModelType, OutputSpec
from simserver.world.drivetrains.holonomic import (
    Holonomic,
    characterization_problems,
    drive_wheel,
    free_wheel_speed,
    motor_group,
)

WHEELS = ("front_left", "front_right", "rear_left", "rear_right")
WHEEL_SPEEDS = "drive/wheel_speeds"


def _outputs(drive: Holonomic) -> dict[str, Any]:
    return {WHEEL_SPEEDS: MecanumDriveWheelSpeeds(*drive.wheel_speeds())}


def _create(name: str, c: MecanumConfig, cfg: Config) -> Holonomic:
    from simserver.models.mecanum import KinematicMecanum, MecanumDrive, MecanumWheelParams

    r = c.wheel_diameter / 2.0
    hx, hy = c.wheelbase / 2.0, c.track_width / 2.0
    places = ((hx, hy), (hx, -hy), (-hx, hy), (-hx, -hy))
    drive = [motor_group(cfg, getattr(c, w), c.gearing, r) for w in WHEELS]
    moi = cfg.robot.box_inertia()
    model: Any
    if c.fidelity == "kinematic":
        model = KinematicMecanum(list(places),
                                 c.max_speed or free_wheel_speed(drive[0].spec, c.gearing, r),
                                 wheel_radius=r, deadzone=c.deadzone, gearing=c.gearing)
    else:
        wheels = [drive_wheel(c.losses, c.characterization, d, c.wheel_inertia,
                              cfg.robot.mass, 4) for d in drive]
        model = MecanumDrive(
            [MecanumWheelParams(x, y, r, d.spec, d.count, c.gearing, w.inertia, w.losses)
             for (x, y), d, w in zip(places, drive, wheels, strict=True)],
            cfg.robot.mass, moi, c.friction, wheels[0].rolling_resistance,
            1.0 if c.losses.ideal else c.strafe_efficiency)
    return Holonomic(model, drive, (), c.fidelity == "physical", cfg.robot.mass, moi, _outputs)


def _motors(c: MecanumConfig) -> list[DriveMotor]:
    return [DriveMotor(getattr(c, w), w, "length", "a drive wheel") for w in WHEELS]


def _check(c: MecanumConfig, cfg: Config) -> list[tuple[str, str]]:
    if c.fidelity != "physical":
        return []
    return characterization_problems(c.losses, c.characterization, cfg, c.front_left,
                                     c.gearing, c.wheel_diameter / 2.0, 4)


def _warn(c: MecanumConfig, cfg: Config) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    robot = cfg.robot
    for key, size, outline in (("track_width", c.track_width, robot.width),
                               ("wheelbase", c.wheelbase, robot.length)):
        if size > outline:
            out.append((key, f"{size:g} m is more than the robot's outline ({outline:g} m)"))
    if c.max_speed is None:
        out += wheel_speed_warning(cfg, c.front_left, "gearing", c.gearing, c.wheel_diameter)
    return out


MECANUM = ModelType(
    name="mecanum",
    role="drivetrain",
    config=MecanumConfig,
    doc="Mecanum drivetrain: four wheels with 45° rollers, traction-limited roller forces on a "
        "rigid chassis; or kinematic (pyfrc MecanumDrivetrain).",
    create=_create,
    check=_check,
    warn=_warn,
    motors=_motors,
    outputs=(OutputSpec(WHEEL_SPEEDS, "struct:MecanumDriveWheelSpeeds", "m/s",
                        "Measured wheel rim speeds."),),
)
