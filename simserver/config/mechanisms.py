"""Config schemas of the built-in mechanism types (`[mechanisms.<name>]` with `type = ...`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simserver.config.fields import (
    integer,
    number,
    optional_quantity,
    optional_section,
    quantity,
    section,
    text,
)
from simserver.config.limits import DEG, INCH, MECHANISM_GEARING, ROBOT_REACH, TRAVEL
from simserver.config.losses import LinearCharacterization, LossesConfig, RotaryCharacterization

GEARING: dict[str, Any] = {"minimum": MECHANISM_GEARING[0], "maximum": MECHANISM_GEARING[1]}
HEIGHT: dict[str, Any] = {"minimum": -TRAVEL, "maximum": TRAVEL}
ANGLE: dict[str, Any] = {"minimum": -360 * DEG, "maximum": 360 * DEG}
ON_ROBOT: dict[str, Any] = {"minimum": -ROBOT_REACH, "maximum": ROBOT_REACH}
_SHOWN = " For AdvantageScope's 3-D robot (/simserver/robot/components) only."


@dataclass(frozen=True)
class ElevatorConfig:
    """A carriage lifted by a drum and cable (`type = "elevator"`), with gravity and hard stops.
    Soft limits cut the motor output driving further, as controller firmware does."""

    motor: str = text(None, "Motor (in [motors]) driving the drum.")
    gearing: float = number(None, "Reduction from motor to drum (10 for 10:1).", **GEARING)
    drum_radius: float = quantity(None, "length", "Radius the cable winds on.",
                                  minimum=1e-3, maximum=0.5, usual=(None, 3 * INCH))
    carriage_mass: float = quantity(None, "mass", "Mass lifted (carriage and payload).",
                                    minimum=0.01, maximum=200.0, usual=(None, 40.0))
    min_height: float = quantity("0 m", "length", "Lower hard stop.", **HEIGHT)
    max_height: float = quantity(None, "length", "Upper hard stop (FRC robots stand at most "
                                 "about 2 m tall).", **HEIGHT, usual=(None, 3.0))
    start_height: float | None = optional_quantity(
        "length", "Height at start and after a reset. Default: min_height.", **HEIGHT)
    soft_min: float | None = optional_quantity(
        "length", "Below this, output driving down is cut (firmware soft limit).", **HEIGHT)
    soft_max: float | None = optional_quantity(
        "length", "Above this, output driving up is cut (firmware soft limit).", **HEIGHT)
    losses: LossesConfig = section(LossesConfig, "Friction, gearbox and motor losses "
                                   "(static friction in N at the carriage: the voltage × "
                                   "the force per volt).")
    stages: int = integer(1, "Moving parts shown: 1 for the carriage alone; n for n − 1 "
                          "stages under it, stage k rising k/n of the carriage's travel "
                          "(cascade rigging)." + _SHOWN, minimum=1, maximum=6)
    base_x: float = quantity("0 m", "length", "Where the moving parts are at the bottom of "
                             "travel: forward of the robot centre." + _SHOWN, **ON_ROBOT)
    base_y: float = quantity("0 m", "length", "Likewise, left of the robot centre." + _SHOWN,
                             **ON_ROBOT)
    base_z: float = quantity("0 m", "length", "Likewise, above the carpet (the carriage is "
                             "shown at base_z + height − min_height)." + _SHOWN, **ON_ROBOT)
    characterization: LinearCharacterization | None = optional_section(
        "SysId results per metre of carriage travel: kS and kV set the friction, kA the "
        "inertia (carriage_mass is then not used for it), kG the weight (default: "
        "carriage_mass × g). Refused when no friction gives the kV (docs/models.md).")


@dataclass(frozen=True)
class ArmConfig:
    """A single-jointed arm (`type = "arm"`): angle 0 horizontal, CCW (up) positive, gravity,
    centre of gravity anywhere along it, hard stops, optional soft limits."""

    motor: str = text(None, "Motor (in [motors]) turning the arm.")
    gearing: float = number(None, "Reduction from motor to arm.", **GEARING)
    length: float = quantity(None, "length", "Pivot to tip.", minimum=0.01, maximum=5.0,
                             usual=(None, 2.0))
    mass: float = quantity(None, "mass", "Arm mass with payload.", minimum=0.01, maximum=100.0,
                           usual=(None, 30.0))
    cg_distance: float | None = optional_quantity(
        "length", "Pivot to centre of gravity. Default: length/2 (a uniform arm). A warning "
        "beyond the tip.", minimum=1e-3, maximum=5.0)
    moment_of_inertia: float | None = optional_quantity(
        "moment of inertia", "About the pivot. Default: m·cg² + m·length²/12 (exact for a "
        "uniform rod).", minimum=1e-6, maximum=1000.0)
    min_angle: float = quantity("-90 deg", "angle", "Lower hard stop.", **ANGLE)
    max_angle: float = quantity("90 deg", "angle", "Upper hard stop.", **ANGLE)
    start_angle: float | None = optional_quantity(
        "angle", "Angle at start and after a reset. Default: min_angle.", **ANGLE)
    soft_min: float | None = optional_quantity(
        "angle", "Below this, output driving down is cut (firmware soft limit).", **ANGLE)
    soft_max: float | None = optional_quantity(
        "angle", "Above this, output driving up is cut (firmware soft limit).", **ANGLE)
    losses: LossesConfig = section(LossesConfig, "Friction, gearbox and motor losses "
                                   "(static friction in N·m at the pivot).")
    pivot_x: float = quantity("0 m", "length", "Pivot position forward of the robot centre "
                              "(the arm swings in the robot's x-z plane, about an axis "
                              "parallel to y; angle 0 points forward)." + _SHOWN, **ON_ROBOT)
    pivot_y: float = quantity("0 m", "length", "Pivot position left of the robot centre."
                              + _SHOWN, **ON_ROBOT)
    pivot_z: float = quantity("0 m", "length", "Pivot height above the carpet." + _SHOWN,
                              **ON_ROBOT)
    characterization: RotaryCharacterization | None = optional_section(
        "SysId results per radian: kS and kV set the friction, kA the moment of inertia, kG "
        "(the cosine term: the voltage holding it horizontal) the gravity torque (default: "
        "mass × g × cg_distance). Refused when no friction gives the kV (docs/models.md).")


@dataclass(frozen=True)
class FlywheelConfig:
    """A flywheel or any rotating load (`type = "flywheel"`): a moment of inertia on a motor."""

    motor: str = text(None, "Motor (in [motors]) spinning it.")
    gearing: float = number(1.0, "Reduction from motor to flywheel (0.5 for 1:2 up).",
                            **GEARING)
    moment_of_inertia: float = quantity(None, "moment of inertia", "Of the load, about its "
                                        "axis (a 4 in, 1 lb wheel: about 0.0006 kg·m²).",
                                        minimum=1e-6, maximum=10.0, usual=(None, 0.5))
    losses: LossesConfig = section(LossesConfig, "Friction, gearbox and motor losses "
                                   "(static friction in N·m at the flywheel).")
    characterization: RotaryCharacterization | None = optional_section(
        "SysId results per radian: kS and kV set the friction, kA the moment of inertia "
        "(moment_of_inertia is then not used). No kG: a flywheel has no gravity term.")


@dataclass(frozen=True)
class LinearConfig:
    """pyfrc's LinearMotion (`type = "linear"`): position moves at duty × speed, clamped; no
    motor physics (no current drawn, no losses, no characterization). For quick models."""

    motor: str = text(None, "Motor (in [motors]) whose duty drives it.")
    speed: float = quantity(None, "speed", "Travel speed at full duty.", minimum=1e-3,
                            maximum=20.0)
    min_position: float | None = optional_quantity("length", "Lower end of travel (none).",
                                                   **HEIGHT)
    max_position: float | None = optional_quantity("length", "Upper end of travel (none).",
                                                   **HEIGHT)
    start_position: float = quantity("0 m", "length", "Position at start and after a reset.",
                                     **HEIGHT)
