"""Config schemas of the built-in mechanism types (`[mechanisms.<name>]` with `type = ...`)."""

from __future__ import annotations

from dataclasses import dataclass

from simserver.config.fields import number, optional_quantity, quantity, text


@dataclass(frozen=True)
class ElevatorConfig:
    """A carriage lifted by a drum and cable (`type = "elevator"`), with gravity and hard stops.
    Soft limits cut the motor output driving further, as controller firmware does."""

    motor: str = text(None, "Motor (in [motors]) driving the drum.")
    gearing: float = number(None, "Reduction from motor to drum (10 for 10:1).", positive=True)
    drum_radius: float = quantity(None, "length", "Radius the cable winds on.", positive=True)
    carriage_mass: float = quantity(None, "mass", "Mass lifted (carriage and payload).",
                                    positive=True)
    min_height: float = quantity("0 m", "length", "Lower hard stop.")
    max_height: float = quantity(None, "length", "Upper hard stop.")
    start_height: float | None = optional_quantity(
        "length", "Height at start and after a reset. Default: min_height.")
    soft_min: float | None = optional_quantity(
        "length", "Below this, output driving down is cut (firmware soft limit).")
    soft_max: float | None = optional_quantity(
        "length", "Above this, output driving up is cut (firmware soft limit).")


@dataclass(frozen=True)
class ArmConfig:
    """A single-jointed arm (`type = "arm"`): angle 0 horizontal, CCW (up) positive, gravity,
    centre of gravity anywhere along it, hard stops, optional soft limits."""

    motor: str = text(None, "Motor (in [motors]) turning the arm.")
    gearing: float = number(None, "Reduction from motor to arm.", positive=True)
    length: float = quantity(None, "length", "Pivot to tip.", positive=True)
    mass: float = quantity(None, "mass", "Arm mass with payload.", positive=True)
    cg_distance: float | None = optional_quantity(
        "length", "Pivot to centre of gravity. Default: length/2 (a uniform arm).",
        positive=True)
    moment_of_inertia: float | None = optional_quantity(
        "moment of inertia", "About the pivot. Default: m·cg² + m·length²/12 (exact for a "
        "uniform rod).", positive=True)
    min_angle: float = quantity("-90 deg", "angle", "Lower hard stop.")
    max_angle: float = quantity("90 deg", "angle", "Upper hard stop.")
    start_angle: float | None = optional_quantity(
        "angle", "Angle at start and after a reset. Default: min_angle.")
    soft_min: float | None = optional_quantity(
        "angle", "Below this, output driving down is cut (firmware soft limit).")
    soft_max: float | None = optional_quantity(
        "angle", "Above this, output driving up is cut (firmware soft limit).")


@dataclass(frozen=True)
class FlywheelConfig:
    """A flywheel or any rotating load (`type = "flywheel"`): a moment of inertia on a motor."""

    motor: str = text(None, "Motor (in [motors]) spinning it.")
    gearing: float = number(1.0, "Reduction from motor to flywheel (0.5 for 1:2 up).",
                            positive=True)
    moment_of_inertia: float = quantity(None, "moment of inertia", "Of the load, about its "
                                        "axis.", positive=True)


@dataclass(frozen=True)
class LinearConfig:
    """pyfrc's LinearMotion (`type = "linear"`): position moves at duty × speed, clamped; no
    motor physics (no current drawn). For quick models."""

    motor: str = text(None, "Motor (in [motors]) whose duty drives it.")
    speed: float = quantity(None, "speed", "Travel speed at full duty.", positive=True)
    min_position: float | None = optional_quantity("length", "Lower end of travel (none).")
    max_position: float | None = optional_quantity("length", "Upper end of travel (none).")
    start_position: float = quantity("0 m", "length", "Position at start and after a reset.")
