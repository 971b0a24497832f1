"""Ranges of one key that depend on others, checked once every key is in its own range.

Errors for what cannot be simulated (the robot's centre off the field, a yaw inertia larger
than its mass at the corners of its outline, a tick of more than MAX_SUBSTEPS_PER_TICK
substeps); warnings for what is possible but unlike a robot (its outline across a wall at the
start, wheels outside the frame, a free speed no drivetrain has). Each function appends
ConfigIssues to ``issues``.
"""

from __future__ import annotations

import math

from simserver.config.issues import ConfigIssue
from simserver.config.limits import (
    FRC_OUTLINE_PERIMETER,
    INCH,
    MAX_SUBSTEPS_PER_TICK,
    PSI,
)
from simserver.config.model import Config
from simserver.config.pieces import field_piece_types
from simserver.config.registry import registry
from simserver.config.vision import MAX_PIPELINES, CameraConfig, parse_ids
from simserver.field.seasons import field_size
from simserver.models.battery import DEFAULT_EMPTY_VOLTAGE
from simserver.models.motor import MotorCatalogError, motor_by_name

USUAL_FREE_SPEED = (0.3, 8.0)  # m/s at the wheels: a Romi 0.5, FRC drivetrains 3-6
SMALLEST_AIR_VOLUME = 1e-5  # m³ (10 mL): the pressure of less would jump per substep
# Travel keys of the built-in mechanism types with a position, for limit switches.
_TRAVEL = (("min_height", "max_height"), ("min_angle", "max_angle"),
           ("min_position", "max_position"))


def check(cfg: Config, issues: list[ConfigIssue], own_field: bool = True) -> None:
    """Every cross-key check; ``own_field`` False for a robot of another file's [robots],
    whose start pose is checked on that file's field instead (:func:`check_start`)."""
    _sim(cfg, issues)
    if own_field:
        check_start(cfg, issues)
    _body(cfg, issues)
    _drivetrain(cfg, issues)
    _electrical(cfg, issues)
    _pneumatics(cfg, issues)
    _mechanisms(cfg, issues)
    _cameras(cfg, issues)


def field_dimensions(cfg: Config) -> tuple[float, float]:
    """(length, width) of the field the robot is on, m: the season's unless overridden."""
    length, width = field_size(cfg.field.season)
    return cfg.field.length or length, cfg.field.width or width


def check_start(cfg: Config, issues: list[ConfigIssue]) -> None:
    """The robot must fit on the field with its centre on it; a warning when its outline
    crosses a wall at the start (the walls push it in at the first substep)."""
    length, width = field_dimensions(cfg)
    robot, start = cfg.robot, cfg.robot.start
    c, s = abs(math.cos(start.heading)), abs(math.sin(start.heading))
    half_x = (c * robot.length + s * robot.width) / 2.0
    half_y = (s * robot.length + c * robot.width) / 2.0
    for key, size, half in (("length", length, half_x), ("width", width, half_y)):
        if 2.0 * half > size:
            issues.append(ConfigIssue(
                f"field.{key}", f"a field {size:g} m across cannot hold the robot "
                f"({2.0 * half:g} m across at its start heading)"))
            return
    for key, at, size in (("x", start.x, length), ("y", start.y, width)):
        if not 0.0 <= at <= size:
            issues.append(ConfigIssue(
                f"robot.start.{key}", f"{at:g} m is off the field: the robot's centre must be "
                f"within 0 .. {size:g} m"))
            return
    if not (half_x <= start.x <= length - half_x and half_y <= start.y <= width - half_y):
        issues.append(ConfigIssue(
            "robot.start", f"the robot's outline crosses a wall at ({start.x:g} m, "
            f"{start.y:g} m): the walls push it onto the field at the first step",
            warning=True))


def _sim(cfg: Config, issues: list[ConfigIssue]) -> None:
    substeps = cfg.sim.tick / cfg.sim.substep
    if substeps > MAX_SUBSTEPS_PER_TICK + 0.5:
        issues.append(ConfigIssue(
            "sim.substep", f"a tick of {cfg.sim.tick * 1e3:g} ms would be {substeps:.0f} "
            f"substeps; at most {MAX_SUBSTEPS_PER_TICK} (a tick must finish for Ctrl-C to be "
            f"handled): make the substep at least {cfg.sim.tick / MAX_SUBSTEPS_PER_TICK * 1e3:g}"
            " ms"))


def _body(cfg: Config, issues: list[ConfigIssue]) -> None:
    robot = cfg.robot
    perimeter = 2.0 * (robot.length + robot.width)
    if perimeter > FRC_OUTLINE_PERIMETER:
        issues.append(ConfigIssue(
            "robot", f"the outline's perimeter, {perimeter / INCH:.0f} in, is more than an FRC "
            f"robot's with bumpers ({FRC_OUTLINE_PERIMETER / INCH:.0f} in)", warning=True))
    moi = robot.moment_of_inertia
    if moi is None:
        return
    corners = robot.mass * (robot.length**2 + robot.width**2) / 4.0
    if moi > corners:
        issues.append(ConfigIssue(
            "robot.moment_of_inertia", f"{moi:g} kg*m^2 is more than the robot's mass at the "
            f"corners of its outline would have ({corners:g} kg*m^2)"))
    elif moi < corners / 100.0:
        issues.append(ConfigIssue(
            "robot.moment_of_inertia", f"{moi:g} kg*m^2 is less than a hundredth of the "
            f"robot's mass at the corners of its outline ({corners:g} kg*m^2): no robot "
            "with wheels at its sides is that compact"))
    elif moi < corners / 3.0 / 4.0:
        issues.append(ConfigIssue(
            "robot.moment_of_inertia", f"{moi:g} kg*m^2 is less than a quarter of a uniform "
            f"box's ({corners / 3.0:g} kg*m^2)", warning=True))


def _free_speed(cfg: Config, motor: str, gearing: float, diameter: float) -> float | None:
    """Free speed of the wheels of ``motor`` through ``gearing``, m/s (None if unknown)."""
    m = cfg.motors.get(motor)
    if m is None:
        return None
    try:
        spec = motor_by_name(m.type)
    except MotorCatalogError:
        return None
    return spec.free_speed / gearing * diameter / 2.0


def wheel_speed_warning(cfg: Config, motor: str, key: str, gearing: float,
                        diameter: float) -> list[tuple[str, str]]:
    """(key, warning) when ``motor`` through ``gearing`` (the value of ``key``) gives wheels of
    ``diameter`` m a free speed outside USUAL_FREE_SPEED; none otherwise."""
    speed = _free_speed(cfg, motor, gearing, diameter)
    lo, hi = USUAL_FREE_SPEED
    if speed is None or lo <= speed <= hi:
        return []
    return [(key, f"{gearing:g}:1 gives the wheels a free speed of {speed:.2g} m/s, outside "
                  f"the usual {lo:g} .. {hi:g} m/s")]


def _drivetrain(cfg: Config, issues: list[ConfigIssue]) -> None:
    """The drivetrain type's own warnings (its ``warn``)."""
    dt_type = registry().get("drivetrain", cfg.drivetrain_type)
    if cfg.drivetrain is None or dt_type is None or dt_type.warn is None:
        return
    for key, msg in dt_type.warn(cfg.drivetrain, cfg):
        issues.append(ConfigIssue(f"drivetrain.{key}" if key else "drivetrain", msg,
                                  warning=True))


def _electrical(cfg: Config, issues: list[ConfigIssue]) -> None:
    b = cfg.battery
    if b.discharge_voltage and b.nominal_voltage < DEFAULT_EMPTY_VOLTAGE:
        issues.append(ConfigIssue(
            "battery.discharge_voltage", f"the discharge curve falls from nominal_voltage to "
            f"{DEFAULT_EMPTY_VOLTAGE:g} V (a flat 12 V lead-acid battery): nominal_voltage "
            f"({b.nominal_voltage:g} V) must be at least that"))
    if b.brownout_voltage >= b.nominal_voltage:
        issues.append(ConfigIssue(
            "battery.brownout_voltage", f"{b.brownout_voltage:g} V is not below nominal_voltage "
            f"({b.nominal_voltage:g} V): the robot is browned out from the start", warning=True))


def _pneumatics(cfg: Config, issues: list[ConfigIssue]) -> None:
    p = cfg.pneumatics
    if p is not None:
        if p.switch_on_pressure >= p.switch_off_pressure:
            issues.append(ConfigIssue(
                "pneumatics.switch_on_pressure", f"{p.switch_on_pressure / PSI:g} psi must be "
                f"below switch_off_pressure ({p.switch_off_pressure / PSI:g} psi)"))
        volume = p.tanks * 0.5e-3 + p.extra_volume
        if volume < SMALLEST_AIR_VOLUME:
            issues.append(ConfigIssue(
                "pneumatics.extra_volume", f"tanks and extra_volume hold {volume * 1e3:g} L; "
                f"at least {SMALLEST_AIR_VOLUME * 1e3:g} L"))
    for name, cyl in cfg.cylinders.items():
        if cyl.rod_diameter >= cyl.bore:
            issues.append(ConfigIssue(f"cylinders.{name}.rod_diameter", f"{cyl.rod_diameter:g} "
                                      f"m must be less than the bore ({cyl.bore:g} m)"))


def _mechanisms(cfg: Config, issues: list[ConfigIssue]) -> None:
    for name, section in cfg.mechanisms.items():
        c = section.config
        cg, length = getattr(c, "cg_distance", None), getattr(c, "length", None)
        if cg is not None and length is not None and cg > length:
            issues.append(ConfigIssue(f"mechanisms.{name}.cg_distance", f"{cg:g} m is beyond "
                                      f"the arm's tip ({length:g} m)", warning=True))
    for name, sw in cfg.switches.items():
        sensed = cfg.mechanisms.get(sw.mechanism)
        travel = next(((getattr(sensed.config, lo), getattr(sensed.config, hi))
                       for lo, hi in _TRAVEL if hasattr(sensed.config, lo)), None) \
            if sensed is not None else None
        if travel is None or sw.position is None:
            continue
        lo, hi = (-math.inf if travel[0] is None else travel[0],
                  math.inf if travel[1] is None else travel[1])
        if not lo <= sw.position[1] <= hi:
            issues.append(ConfigIssue(f"switches.{name}.position", "outside the travel of "
                                      f"{sw.mechanism!r}: the switch never changes",
                                      warning=True))


def _cameras(cfg: Config, issues: list[ConfigIssue]) -> None:
    for name, cam in cfg.cameras.items():
        names = cam.class_names()
        if names is not None and not names:
            issues.append(ConfigIssue(f"cameras.{name}.classes", "no piece type named: give "
                                      "names separated by commas, or \"all\""))
        elif names is not None and cam.pipeline != "pieces" and not any(
                p.type == "pieces" for p in cam.pipelines.values()):
            issues.append(ConfigIssue(f"cameras.{name}.classes", "ignored: the camera's "
                                      "pipeline is \"apriltag\"", warning=True))
        elif cam.pipeline == "pieces":
            types = field_piece_types(cfg.pieces, cfg.field.season)
            try:
                cam.detector({t.name: t.class_id for t in types.values()})
            except ValueError as exc:
                issues.append(ConfigIssue(f"cameras.{name}.classes", str(exc).removeprefix(
                    "classes: ")))
            if not types:
                issues.append(ConfigIssue(f"cameras.{name}.pipeline", "an object detector on a "
                                          "field without game pieces sees nothing: add "
                                          "[pieces]", warning=True))
        _pipelines(cfg, name, cam, issues)
        intr = cam.intrinsics
        if intr is not None and not (intr.cx <= cam.width and intr.cy <= cam.height):
            issues.append(ConfigIssue(f"cameras.{name}.intrinsics", f"the principal point "
                                      f"({intr.cx:g}, {intr.cy:g}) px is outside the "
                                      f"{cam.width}×{cam.height} image", warning=True))


def _pipelines(cfg: Config, name: str, cam: CameraConfig, issues: list[ConfigIssue]) -> None:
    """A camera's ``tag_ids`` and ``pipelines``: ids 0..586, indexes 0..N-1 without gaps (at
    most MAX_PIPELINES), known piece types."""
    path = f"cameras.{name}"
    try:
        parse_ids(cam.tag_ids)
    except ValueError as exc:
        issues.append(ConfigIssue(f"{path}.tag_ids", str(exc).removeprefix("tag_ids: ")))
    if not cam.pipelines:
        return
    wrong = [k for k in cam.pipelines if not (k.isdigit() and int(k) < MAX_PIPELINES)]
    if wrong:
        issues.append(ConfigIssue(f"{path}.pipelines.{wrong[0][:20]}", "a pipeline index "
                                  f"must be 0..{MAX_PIPELINES - 1}"))
        return
    types = field_piece_types(cfg.pieces, cfg.field.season)
    try:
        cam.pipeline_specs({t.name: t.class_id for t in types.values()})
    except ValueError as exc:
        key, _, message = str(exc).partition(": ")
        issues.append(ConfigIssue(f"{path}.{key}", message))
