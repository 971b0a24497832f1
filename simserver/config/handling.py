"""Config schemas of the mechanisms that handle game pieces (`type = "intake"`, `"shooter"`,
`"rotary"`). Robot-frame points: x forward, y left of the robot centre, z up from the carpet."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simserver.config.fields import (
    choice,
    integer,
    number,
    optional_quantity,
    optional_section,
    points,
    quantity,
    section,
    text,
)
from simserver.config.limits import ROBOT_REACH
from simserver.config.losses import LossesConfig, RotaryCharacterization
from simserver.config.mechanisms import ANGLE, GEARING

ON_ROBOT: dict[str, Any] = {"minimum": -ROBOT_REACH, "maximum": ROBOT_REACH}
ABOVE_CARPET: dict[str, Any] = {"minimum": 0.0, "maximum": ROBOT_REACH}
FACES = ("front", "back", "left", "right")


@dataclass(frozen=True)
class IntakeConfig:
    """A roller intake (`type = "intake"`): takes loose game pieces whose footprint reaches
    its zone while its roller runs inward, holds up to `capacity`, lets one out at the mouth
    each `eject_interval` while the roller runs outward. Needs game pieces on the field."""

    motor: str = text(None, "Roller motor (in [motors]). |duty| ≥ `min_duty` in the intake "
                      "`direction` takes pieces in; the other way ejects them.")
    direction: str = choice("positive", ("positive", "negative"),
                            "Which sign of the roller's duty takes pieces in.")
    min_duty: float = number(0.3, "Roller duty needed to take a piece in or let one out.",
                             positive=True, maximum=1.0)
    face: str = choice("front", FACES, "Side of the robot outline the mouth is on (not used "
                       "with `zone`).")
    width: float | None = optional_quantity(
        "length", "Width of the mouth along its face, centred. Default: the whole face.",
        positive=True, maximum=2 * ROBOT_REACH)
    reach: float = quantity("4 in", "length", "How far beyond the bumper the zone reaches: a "
                            "piece whose footprint overlaps it is taken.", minimum=0.0,
                            maximum=ROBOT_REACH)
    inset: float = quantity("0 in", "length", "How far inside the bumper the zone begins: 0 "
                            "for an intake at the frame edge (over the bumper), the bumper's "
                            "depth or more for one that takes pieces through a gap in the "
                            "bumpers.", minimum=0.0, maximum=ROBOT_REACH)
    zone: tuple[tuple[float, float], ...] | None = points(
        "The zone as a robot-frame polygon instead of `face`, `width`, `reach` and `inset`: "
        "convex, corners in order, e.g. `[[\"0.4 m\", \"0.2 m\"], [\"0.4 m\", \"-0.2 m\"], "
        "[\"0.6 m\", \"-0.2 m\"], [\"0.6 m\", \"0.2 m\"]]`. Its first edge is the one at "
        "the robot: pieces nearest it go in first; ejected pieces leave from the zone's "
        "middle, away from it.",
        optional=True, **ON_ROBOT)
    height: float = quantity("0.3 m", "length", "Pieces are taken up to this height of "
                             "their centre above the carpet (low fliers too).", positive=True,
                             maximum=ROBOT_REACH)
    capacity: int = integer(1, "How many pieces it holds.", minimum=1, maximum=100)
    preload: int = integer(
        0, "Pieces it holds at the start (the game's preload, e.g. up to 8 FUEL in 2026): "
        "pieces of the field's first type, added to the field's pieces; at most `capacity`. "
        "Only on a field with game pieces.", minimum=0, maximum=100)
    hold_x: float = quantity("0 m", "length", "Where held pieces sit: forward of the robot "
                             "centre.", **ON_ROBOT)
    hold_y: float = quantity("0 m", "length", "Where held pieces sit: left of the robot "
                             "centre.", **ON_ROBOT)
    hold_z: float = quantity("0.2 m", "length", "Where held pieces sit: height above the "
                             "carpet (ejected pieces leave at this height too).",
                             **ABOVE_CARPET)
    spacing: float = quantity("0 m", "length", "Each further held piece sits this far "
                              "behind (−x) the one before.", minimum=0.0, maximum=ROBOT_REACH)
    eject_speed: float = quantity("2 m/s", "speed", "Speed of an ejected piece relative to "
                                  "the robot, outward through the mouth.", minimum=0.0,
                                  maximum=50.0)
    eject_interval: float = quantity("0.2 s", "time", "Time between ejected pieces while the "
                                     "roller runs outward (the first leaves at once).",
                                     positive=True, maximum=60.0)


@dataclass(frozen=True)
class ShooterConfig:
    """A shooter (`type = "shooter"`): while its indexer motor runs, feeds one piece each
    `feed_interval` from the intake named by `feed` and launches it from the exit point, at
    the speed of a `flywheel` mechanism's surface (or a fixed `speed`), aimed by `pitch` and
    `yaw` (or a `hood` and a `turret` mechanism). Each shot takes the piece's momentum out of
    the flywheel."""

    motor: str = text(None, "Indexer motor (in [motors]): |duty| ≥ `min_duty`, positive, feeds "
                      "pieces to the shooter.")
    min_duty: float = number(0.3, "Indexer duty needed to feed.", positive=True, maximum=1.0)
    feed_interval: float = quantity("0.25 s", "time", "Time the indexer takes to bring each "
                                    "piece to the wheel (the first leaves this long after it "
                                    "starts).", positive=True, maximum=60.0)
    feed: str = text(None, "The mechanism the pieces come from (an `intake`: the robot's "
                     "storage).")
    flywheel: str | None = text(None, "A `flywheel` mechanism whose wheel launches the pieces "
                                "(leave out for a fixed `speed`).", optional=True)
    wheel_radius: float = quantity("2 in", "length", "Radius of the wheel that touches the "
                                   "piece.", positive=True, maximum=0.5)
    wheel_ratio: float = number(1.0, "Turns of the wheel per turn of the flywheel mechanism "
                                "(2 for a wheel geared up 1:2 from it), or per turn of the "
                                "`roller`'s motor.", positive=True, maximum=100.0)
    efficiency: float = number(
        0.5, "Exit speed per surface speed of the wheel: about 0.5 for a piece rolled along a "
        "hood by one wheel (its centre moves at half the rim speed), near 1 between two "
        "counter-rotating wheels.", positive=True, maximum=1.0)
    roller: str | None = text(
        None, "An `intake` whose roller is also the wheel that launches the pieces (the 2026 "
        "KitBot: one roller takes FUEL in and launches it): the exit speed is `efficiency` × "
        "the roller's surface speed (`wheel_radius`; `wheel_ratio` turns per turn of its "
        "motor). The roller runs free (no inertia), so shots do not slow it. Leave out for a "
        "`flywheel` or a fixed `speed`.", optional=True)
    speed: float | None = optional_quantity(
        "speed", "Fixed exit speed, relative to the robot, when there is no `flywheel`.",
        positive=True, maximum=50.0)
    piece_mass: float | None = optional_quantity(
        "mass", "Mass of a shot piece: each shot takes its momentum (mass × exit speed × wheel "
        "radius) out of the flywheel's angular momentum. Default: each piece's own (its "
        "type's `mass`).", positive=True, maximum=10.0)
    pitch: float = quantity("45 deg", "angle", "Launch angle above horizontal; with a "
                            "`hood`, added to the hood's angle.", **ANGLE)
    hood: str | None = text(None, "An `arm` (or any rotary mechanism) whose angle adds to "
                            "`pitch`.", optional=True)
    yaw: float = quantity("0 deg", "angle", "Launch direction on the robot, CCW from "
                          "forward; with a `turret`, added to the turret's angle.", **ANGLE)
    turret: str | None = text(None, "A `rotary` (or any rotary mechanism) whose angle adds to "
                              "`yaw`; the exit point turns with it about the turret's axis.",
                              optional=True)
    x: float = quantity("0 m", "length", "Exit point forward of the robot centre (at turret "
                        "angle 0).", **ON_ROBOT)
    y: float = quantity("0 m", "length", "Exit point left of the robot centre (at turret "
                        "angle 0).", **ON_ROBOT)
    z: float = quantity("0.5 m", "length", "Exit point height above the carpet.",
                        **ABOVE_CARPET)


@dataclass(frozen=True)
class RotaryConfig:
    """A rotary joint without gravity (`type = "rotary"`), such as a turret: a motor turns a
    load about a vertical axis, between hard stops, exactly as a `flywheel` with stops (angle
    0 forward, CCW positive)."""

    motor: str = text(None, "Motor (in [motors]) turning it.")
    gearing: float = number(None, "Reduction from motor to the joint.", **GEARING)
    moment_of_inertia: float = quantity(
        None, "moment of inertia", "Of everything that turns, about the axis.", minimum=1e-6,
        maximum=10.0, usual=(None, 1.0))
    min_angle: float = quantity("-180 deg", "angle", "Lower hard stop (clockwise).", **ANGLE)
    max_angle: float = quantity("180 deg", "angle", "Upper hard stop (counter-clockwise).",
                                **ANGLE)
    start_angle: float = quantity("0 deg", "angle", "Angle at start and after a reset.",
                                  **ANGLE)
    soft_min: float | None = optional_quantity(
        "angle", "Below this, output turning clockwise is cut (firmware soft limit).", **ANGLE)
    soft_max: float | None = optional_quantity(
        "angle", "Above this, output turning counter-clockwise is cut (firmware soft limit).",
        **ANGLE)
    x: float = quantity("0 m", "length", "Axis forward of the robot centre.", **ON_ROBOT)
    y: float = quantity("0 m", "length", "Axis left of the robot centre.", **ON_ROBOT)
    z: float = quantity("0.4 m", "length", "Height of its base above the carpet "
                        "(its component pose).", **ABOVE_CARPET)
    losses: LossesConfig = section(LossesConfig, "Friction, gearbox and motor losses "
                                   "(static friction in N·m at the joint).")
    characterization: RotaryCharacterization | None = optional_section(
        "SysId results per radian: kS and kV set the friction, kA the moment of inertia "
        "(moment_of_inertia is then not used). No kG.")

