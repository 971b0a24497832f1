"""Config schemas of the holonomic drivetrain types (`[drivetrain]` with `type = "swerve"` or
`type = "mecanum"`). The differential (tank) schema lives in ``simserver.config.model``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simserver.config.fields import (
    choice,
    number,
    optional_quantity,
    optional_section,
    quantity,
    section,
    table,
    text,
)
from simserver.config.limits import (
    DRIVE_GEARING,
    INCH,
    LARGEST_ROBOT,
    LARGEST_WHEEL,
    ROBOT_REACH,
    SMALLEST_WHEEL,
)
from simserver.config.losses import DriveLossesConfig, LinearCharacterization

WHEEL: dict[str, Any] = {"minimum": SMALLEST_WHEEL, "maximum": LARGEST_WHEEL,
                         "usual": (None, 8 * INCH)}
GEARING: dict[str, Any] = {"minimum": DRIVE_GEARING[0], "maximum": DRIVE_GEARING[1]}
WHEEL_INERTIA: dict[str, Any] = {"minimum": 1e-5, "maximum": 1.0, "usual": (None, 0.1)}

HOLONOMIC_FIDELITIES = ("kinematic", "physical")

#: Strafe speed / forward speed of a mecanum drive at the same voltage: an estimate. Chief
#: Delphi reports range from about 60 % for typical wheels ("max speed in one direction and
#: 60 % in another", thread 1396506, 2014) to nearly 100 % for wheels with free, true-45°
#: rollers (post 655109, 2007); the middle of that range.
DEFAULT_STRAFE_EFFICIENCY = 0.8

LOSSES_DOC = ("Losses of every drive wheel (and swerve azimuth: efficiency, free current, "
              "static friction, viscous loss): defaults are documented estimates; "
              "`ideal = true` gives the ideal machine.")
CHARACTERIZATION_DOC = (
    "SysId results of the drive (per wheel, distance in wheel metres): the wheels then have "
    "exactly these kS, kV, kA with their motors, currents and traction kept. kS sets the "
    "Coulomb friction (rolling resistance included), kV the viscous friction, kA the inertia "
    "each wheel moves beyond its share of the robot's mass (replaces wheel_inertia). "
    "Refused: kV below the motors' free speed, kA below the robot's mass alone.")


@dataclass(frozen=True)
class SwerveModuleConfig:
    """One swerve module (`[drivetrain.modules.<name>]`): where it sits and which motor
    outputs drive and steer it. Modules are listed (and published) in file order."""

    x: float = quantity(None, "length", "Module centre from the robot centre, forward positive "
                        "(a warning outside the robot's outline).", minimum=-ROBOT_REACH,
                        maximum=ROBOT_REACH)
    y: float = quantity(None, "length", "Module centre from the robot centre, left positive.",
                        minimum=-ROBOT_REACH, maximum=ROBOT_REACH)
    drive: str = text(None, "Motor (in [motors]) turning the wheel.")
    steer: str = text(None, "Motor (in [motors]) turning the module (azimuth).")


@dataclass(frozen=True)
class SwerveConfig:
    """A swerve drivetrain (`type = "swerve"`): two or more modules anywhere on the robot, each
    with a drive and a steer motor. `physical`: every motor is a DC motor with its gearbox and
    inertia, the chassis a rigid body pushed by traction-limited tire forces per module (wheels
    slip and scrub). `kinematic`: pyfrc-style, module speed ∝ duty, steer rate ∝ duty, chassis
    from wpimath's forward kinematics."""

    fidelity: str = choice("physical", HOLONOMIC_FIDELITIES,
                           "Model level: `physical` (forces, traction, slip) or `kinematic`.")
    wheel_diameter: float = quantity("4 in", "length", "Drive wheel diameter.", **WHEEL)
    drive_gearing: float = number(6.75, "Reduction from drive motor to wheel (6.75 for an "
                                  "SDS MK4i L2). A warning when the wheels' free speed it gives "
                                  "is outside 0.3-8 m/s.", **GEARING)
    steer_gearing: float = number(150 / 7, "Reduction from steer motor to module azimuth "
                                  "(150/7 ≈ 21.43 for an MK4i).", minimum=1.0, maximum=200.0)
    coupling_ratio: float = number(
        0.0, "Drive motor turns per module azimuth turn with the wheel held still: in a "
        "coaxial module the azimuth's turning rolls the drive gears, so the drive motor's "
        "rotor sensor reads rotor = drive_gearing·wheel + coupling_ratio·azimuth (turns). "
        "CTRE's swerve odometry subtracts it (Tuner X's `_couple_ratio`, 50/14 ≈ 3.57 for an "
        "SDS MK4i); set it to the same value or that odometry drifts whenever the modules "
        "steer. Only the rotor sensor sees it: the drive motor's torque and back-EMF do not "
        "include the azimuth's motion.", minimum=0.0, maximum=20.0)
    wheel_inertia: float = quantity(
        "0.005 kg*m^2", "moment of inertia",
        "Inertia turning with the wheel, seen at the wheel: wheel, gears and the drive motor's "
        "rotor (rotor inertia × gearing²; a Kraken X60 at 6.75:1 adds about 0.004 kg·m²).",
        **WHEEL_INERTIA)
    steer_inertia: float = quantity(
        "0.004 kg*m^2", "moment of inertia",
        "Inertia turning with the module about its steering axis, rotor included.",
        **WHEEL_INERTIA)
    friction: float = number(
        1.1, "Tire friction coefficient μ (traction limit per module: μ·mass·g / modules). "
        "Typical planning values on carpet: Colson 1.0, blue nitrile 1.2, neoprene 1.3 "
        "(±20 %: measure yours).", minimum=0.01, maximum=3.0)
    scrub_damping: float = quantity(
        "5000 N*s/m", "damping",
        "Sideways force of a module per m/s of sideways slip, until it reaches the traction "
        "limit (a tire's lateral compliance; an estimate: full friction at a few cm/s of slip). "
        "0 makes the sideways contact rigid: exact no-slip rolling, but modules even slightly "
        "off a common centre of rotation (a steering loop's lag) then bind and skid.",
        minimum=0.0, maximum=1e6)
    max_speed: float | None = optional_quantity(
        "speed", "`kinematic` only: wheel speed at full duty. Default: the drive motor's free "
        "speed at the wheel.", minimum=0.01, maximum=20.0, usual=(None, 8.0))
    max_steer_rate: float | None = optional_quantity(
        "angular speed", "`kinematic` only: azimuth rate at full duty. Default: the steer motor's "
        "free speed through steer_gearing.", minimum=0.1, maximum=200.0)
    losses: DriveLossesConfig = section(DriveLossesConfig, LOSSES_DOC)
    characterization: LinearCharacterization | None = optional_section(CHARACTERIZATION_DOC)
    modules: dict[str, SwerveModuleConfig] = table(
        "The modules by name, in the order wpimath kinematics and the published module states "
        "use (front-left, front-right, back-left, back-right is the usual one).")


@dataclass(frozen=True)
class MecanumConfig:
    """A mecanum drivetrain (`type = "mecanum"`): four wheels with 45° rollers in the usual X
    pattern seen from above. `physical`: motor torque → roller-contact forces limited by
    traction → rigid body; `kinematic`: pyfrc's MecanumDrivetrain (speed ∝ duty)."""

    fidelity: str = choice("physical", HOLONOMIC_FIDELITIES,
                           "Model level: `physical` (forces, traction, slip) or `kinematic`.")
    front_left: str = text("front_left", "Motor (in [motors]) of the front-left wheel.")
    front_right: str = text("front_right", "Motor (in [motors]) of the front-right wheel.")
    rear_left: str = text("rear_left", "Motor (in [motors]) of the rear-left wheel.")
    rear_right: str = text("rear_right", "Motor (in [motors]) of the rear-right wheel.")
    track_width: float = quantity("22 in", "length", "Left to right wheel distance (a warning "
                                  "when wider than the robot).", minimum=0.05,
                                  maximum=LARGEST_ROBOT)
    wheelbase: float = quantity("20 in", "length", "Front to rear wheel distance (a warning "
                                "when longer than the robot).", minimum=0.05,
                                maximum=LARGEST_ROBOT)
    wheel_diameter: float = quantity("6 in", "length", "Wheel diameter.", **WHEEL)
    gearing: float = number(10.71, "Reduction from motor to wheel. A warning when the wheels' "
                            "free speed it gives is outside 0.3-8 m/s.", **GEARING)
    wheel_inertia: float = quantity(
        "0.01 kg*m^2", "moment of inertia", "Inertia turning with each wheel, seen at the wheel, "
        "rotor included (rotor inertia × gearing²).", **WHEEL_INERTIA)
    friction: float = number(
        0.7, "Friction coefficient μ at the rollers, along the roller-perpendicular direction "
        "(traction limit per wheel: μ·mass·g / 4).", minimum=0.01, maximum=3.0)
    max_speed: float | None = optional_quantity(
        "speed", "`kinematic` only: wheel speed at full duty (pyfrc's `speed`). Default: the "
        "motor's free speed at the wheel.", minimum=0.01, maximum=20.0, usual=(None, 8.0))
    deadzone: float = number(0.0, "`kinematic` only: pyfrc linear_deadzone width.",
                             minimum=0.0, maximum=0.99)
    strafe_efficiency: float = number(
        DEFAULT_STRAFE_EFFICIENCY, "Steady strafe speed / steady forward speed at the same "
        "voltage (roller friction; 1: free rollers, the ideal mecanum). An estimate: teams "
        "report 60 % for typical wheels to nearly 100 % for good ones. `losses.ideal = true` "
        "turns it off (1).", minimum=0.2, maximum=1.0)
    losses: DriveLossesConfig = section(DriveLossesConfig, LOSSES_DOC)
    characterization: LinearCharacterization | None = optional_section(CHARACTERIZATION_DOC)
