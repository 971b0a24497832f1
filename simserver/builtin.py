"""Built-in model types, registered under the ``simserver.models`` entry-point group exactly as
plugins are (see pyproject.toml): one path for every model."""

from __future__ import annotations

from simserver.config.model import Config, DrivetrainConfig
from simserver.models.api import ModelType
from simserver.models.differential import (
    CharacterizedLongitudinal,
    DifferentialDrive,
    DifferentialParams,
    KinematicLongitudinal,
    Longitudinal,
    PhysicalLongitudinal,
    SideGains,
    robosim_moment_of_inertia,
)
from simserver.models.motor import motor_by_name


def _differential(name: str, dt: DrivetrainConfig, cfg: Config) -> DifferentialDrive:
    left = cfg.motors[dt.left]
    robot = cfg.robot
    moi = robot.moment_of_inertia or robosim_moment_of_inertia(robot.mass, robot.length,
                                                                dt.track_width)
    params = DifferentialParams(
        mass=robot.mass, moment_of_inertia=moi, track_width=dt.track_width,
        wheel_radius=dt.wheel_diameter / 2.0, gearing=dt.gearing,
        motor=motor_by_name(left.type), motors_per_side=left.count,
        lateral_friction=dt.lateral_friction,
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
        if (a.type, a.count) != (b.type, b.count):
            out.append(("", f"left ({a.count}× {a.type}) and right ({b.count}× {b.type}) must "
                            "have the same motor type and count"))
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
)
