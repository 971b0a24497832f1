"""The built-in mechanism types that handle game pieces (intake, shooter) and the rotary joint
that turns a shooter's turret, behind the Model API and registered under ``simserver.models``
like the others (see pyproject.toml)."""

from __future__ import annotations

import math
from typing import Any

from wpimath.geometry import Pose3d, Rotation3d

from simserver.config.handling import IntakeConfig, RotaryConfig, ShooterConfig
from simserver.config.model import Config
from simserver.config.registry import registry
from simserver.models.api import Drawing, InputSpec, Ligament, ModelType, OutputSpec
from simserver.models.handling.geometry import Point2, face_zone
from simserver.models.handling.intake import Intake
from simserver.models.handling.roller import FreeRunning
from simserver.models.handling.shooter import Aim, Shooter, Wheel
from simserver.models.mechanisms import Rotary
from simserver.models.motor import motor_by_name
from simserver.models.obstacles import convex_ccw
from simserver.world.mechanisms import (
    _STOPS,
    Driven,
    _check_joint,
    _check_limits,
    _checks,
    _coasting,
    _drive,
    _joint,
    _open,
)


def zone_ccw(points: tuple[Point2, ...]) -> tuple[Point2, ...] | None:
    """A zone polygon counter-clockwise with the first edge it was given kept first (as the
    edge at the robot), or None if it is not convex."""
    ccw = convex_ccw(points)
    if ccw is None or ccw is points:
        return ccw
    return (points[1], points[0], *reversed(points[2:]))


# --- intake -------------------------------------------------------------------------------------


def _intake(name: str, c: IntakeConfig, cfg: Config) -> Intake:
    zone = zone_ccw(c.zone) if c.zone is not None else face_zone(
        c.face, (cfg.robot.length, cfg.robot.width), c.width, c.reach, c.inset)
    if zone is None:
        raise ValueError("zone is not a convex polygon")
    roller = FreeRunning(motor_by_name(cfg.motors[c.motor].type))
    return Intake(c.motor, roller, zone, c.height, c.capacity, (c.hold_x, c.hold_y, c.hold_z),
                  c.spacing, c.eject_speed, c.eject_interval, c.min_duty,
                  1.0 if c.direction == "positive" else -1.0, name)


def _check_intake(c: IntakeConfig, cfg: Config) -> list[tuple[str, str]]:
    if c.preload > c.capacity:
        return [("preload", f"{c.preload} pieces do not fit: the capacity is {c.capacity}")]
    if c.zone is not None:
        if zone_ccw(c.zone) is None:
            return [("zone", "the points must outline a convex polygon, in order around it")]
        return []
    if c.reach + c.inset <= 0.0:
        return [("reach", "the zone has no depth: give a reach beyond the bumper (or an "
                          "inset through it) above 0 m")]
    return []


# --- shooter ------------------------------------------------------------------------------------


def _shooter(name: str, c: ShooterConfig, cfg: Config) -> Shooter:
    axis = (0.0, 0.0)
    if c.turret is not None:
        turret = cfg.mechanisms[c.turret].config
        axis = (getattr(turret, "x", 0.0), getattr(turret, "y", 0.0))
    wheel = Wheel(c.piece_mass, c.flywheel, c.wheel_radius, c.wheel_ratio, c.efficiency,
                  c.speed or 0.0, c.roller)
    aim = Aim((c.x, c.y, c.z), c.pitch, c.yaw, c.hood, c.turret, axis)
    indexer = FreeRunning(motor_by_name(cfg.motors[c.motor].type))
    return Shooter(c.motor, indexer, c.min_duty, c.feed_interval, c.feed, wheel, aim)


def _named(key: str, name: str | None, cfg: Config, want: str, kind: str
           ) -> list[tuple[str, str]]:
    """Mechanism ``name`` exists and is what ``want`` says: "holds" (it holds pieces),
    "angle" (a rotary joint) or a type name; ``kind`` names it in messages."""
    if name is None:
        return []
    section = cfg.mechanisms.get(name)
    if section is None:
        return [(key, f"no mechanism named {name[:40]!r} in [mechanisms]")]
    mt = registry().get("mechanism", section.type)
    if mt is None:
        return []  # an unknown type: reported where the mechanism is declared
    if want == "holds":
        ok = mt.holds
    elif want == "angle":  # a rotary joint that aims, not a roller's shaft
        ok = mt.joint == "angle" and not mt.roller
    else:
        ok = section.type == want
    return [] if ok else [(key, f"{name!r} is a {section.type!r} mechanism, not {kind}")]


def _check_shooter(c: ShooterConfig, cfg: Config) -> list[tuple[str, str]]:
    out = _named("feed", c.feed, cfg, "holds", "one that holds game pieces (an intake)")
    out += _named("flywheel", c.flywheel, cfg, "flywheel", "a flywheel")
    out += _named("roller", c.roller, cfg, "intake", "an intake")
    out += _named("hood", c.hood, cfg, "angle", "a rotary mechanism (an arm)")
    out += _named("turret", c.turret, cfg, "angle", "a rotary mechanism (a `rotary`)")
    given = [key for key in ("flywheel", "roller", "speed") if getattr(c, key) is not None]
    if not given:
        out.append(("speed", "give the exit speed, or a flywheel or an intake's roller the "
                             "pieces leave from"))
    elif len(given) > 1:
        out.append((given[-1], f"not used with a {given[0]} (the exit speed comes from its "
                               f"wheel): give one of {', '.join(given)}"))
    return out


# --- rotary joint (a turret) ----------------------------------------------------------------------


class RotaryJoint(Driven):
    """A motor-driven :class:`Rotary` load between hard stops (a turret), with its component
    pose."""

    def __init__(self, c: RotaryConfig, cfg: Config):
        losses, derived = _joint(c, cfg, c.gearing, "rad")
        inertia = c.moment_of_inertia if derived is None else derived.inertia
        drive = _drive(cfg, c.motor, c.gearing)
        model = Rotary(drive, inertia, c.start_angle, losses, c.min_angle, c.max_angle)
        twin = Rotary(_open(drive), inertia, c.start_angle, _coasting(model.joint),
                      c.min_angle, c.max_angle)
        super().__init__(c.motor, model, twin, c.start_angle, (c.soft_min, c.soft_max), 0.0,
                         c.gearing, cfg.motors[c.motor].stator_limit, _rotary_outputs,
                         _rotary_drawing)
        self.base = (c.x, c.y, c.z)

    def components(self) -> tuple[Pose3d, ...]:
        """Its pose on the robot (AdvantageScope's articulated components): at its axis,
        turned by its angle about z."""
        x, y, z = self.base
        return (Pose3d(x, y, z, Rotation3d(0.0, 0.0, self.model.position)),)


def _rotary_outputs(r: Any) -> dict[str, Any]:
    return {"angle": math.degrees(r.position), "velocity": math.degrees(r.velocity),
            "at_lower": r.at_lower, "at_upper": r.at_upper}


def _rotary_drawing(r: Any) -> Drawing:
    return Drawing(0.6, 0.6, {"axis": (0.3, 0.3)},
                   (Ligament("barrel", 0.25, math.degrees(r.position), root="axis", weight=8,
                             color="#C080FF"),))


# --- registration -------------------------------------------------------------------------------

INTAKE = ModelType(
    name="intake", holds=True, joint="angle", roller=True,
    config=IntakeConfig, create=_intake, check=_check_intake,
    inputs=(InputSpec("motor", "motor", "The roller."),),
    doc="Roller intake: takes loose game pieces through a zone of the robot outline while its "
        "roller runs inward, holds up to `capacity`, ejects them outward; a beam break "
        "(`[switches]` with `trigger = \"holding\"`) can watch it. Needs game pieces.",
    outputs=(OutputSpec("held", "int", "pieces", "How many pieces it holds."),
             OutputSpec("beam_break", "boolean", "", "True while it holds a piece.")),
)
SHOOTER = ModelType(
    name="shooter", joint="angle", roller=True,
    config=ShooterConfig, create=_shooter, check=_check_shooter,
    inputs=(InputSpec("motor", "motor", "The indexer feeding the wheel."),),
    doc="Shooter: its indexer feeds pieces from an intake to a flywheel (or a fixed speed) "
        "that launches them, aimed by pitch and yaw or a hood and a turret; each shot slows "
        "the flywheel by the momentum the piece takes.",
    outputs=(OutputSpec("shots", "int", "pieces", "Pieces launched since the last reset."),
             OutputSpec("exit_speed", "double", "m/s", "Speed of the last shot, relative to "
                        "the robot.")),
)
ROTARY = ModelType(
    name="rotary", mechanism2d=True,
    config=RotaryConfig, create=lambda _n, c, cfg: RotaryJoint(c, cfg), joint="angle",
    inputs=(InputSpec("motor", "motor", "The motor turning it."),),
    doc="Rotary joint without gravity (a turret): a load turned about a vertical axis by a "
        "motor between hard stops (the flywheel's exact model with stops); its pose is a "
        "robot component.",
    outputs=(OutputSpec("angle", "double", "deg", "Angle from forward, CCW positive."),
             OutputSpec("velocity", "double", "deg/s", "Angular velocity."), *_STOPS),
    check=_checks(_check_limits("min_angle", "max_angle"),
                  _check_joint(lambda c: c.gearing, "rad", gravity=False)),
)
