"""Hypothesis strategies for configs inside the declared ranges: every numeric key is drawn
from its own declaration (``simserver.config.fields.Spec``: minimum, maximum), so the
strategies follow the schema as it changes; the structure (which drivetrain, mechanisms,
pneumatics, cameras) and the cross-key rules the loader enforces (a tick of at most
MAX_SUBSTEPS_PER_TICK substeps, the start pose on the field, the yaw inertia between a
hundredth of and all the mass at the outline's corners, rod < bore, ...) are built here.

Values are drawn with weight on the ends of each range (where models break) and log-uniformly
between them when a range spans decades (wheel diameters, inertias, inductances).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from hypothesis import strategies as st

from simserver.config.drivetrains import MecanumConfig, SwerveConfig, SwerveModuleConfig
from simserver.config.fields import Spec, spec_of
from simserver.config.limits import LARGEST_FIELD, MAX_SUBSTEPS_PER_TICK
from simserver.config.mechanisms import ArmConfig, ElevatorConfig, FlywheelConfig, LinearConfig
from simserver.config.model import (
    BatteryConfig,
    CylinderConfig,
    DrivetrainConfig,
    FieldConfig,
    GyroConfig,
    KinematicConfig,
    MotorConfig,
    ObstacleConfig,
    PneumaticsConfig,
    RobotConfig,
    SideCharacterization,
    SimConfig,
)
from simserver.config.vision import (
    BearingTargetConfig,
    CameraConfig,
    FiducialConfig,
    IntrinsicsConfig,
)
from simserver.field.seasons import field_size
from simserver.models.motor import catalog_names
from simserver.units import DIMENSIONS

DRAWN = ("quantity", "number", "integer", "boolean", "choice")


def spec(cls: type, key: str) -> Spec:
    """The declaration of ``cls.key``."""
    return spec_of(next(f for f in dataclasses.fields(cls) if f.name == key))


def si_values(s: Spec) -> st.SearchStrategy[float]:
    """SI values inside the declared range of ``s``, ends weighted."""
    assert s.minimum is not None and s.maximum is not None, f"unbounded: {s.doc[:40]}"
    lo, hi = float(s.minimum), float(s.maximum)
    if s.exclusive_minimum:
        lo = math.nextafter(lo, math.inf) if lo != 0.0 else min(1e-9, hi)
    inner = st.floats(lo, hi)
    if lo > 0.0 and hi / lo > 100.0:
        inner = st.floats(math.log(lo), math.log(hi)).map(
            lambda x: min(max(math.exp(x), lo), hi))
    return st.one_of(st.sampled_from([lo, hi]), inner, inner)


def text_of(s: Spec, si: float) -> Any:
    """The TOML value for SI value ``si`` of a key declared by ``s``."""
    if s.kind == "quantity":
        assert s.dimension is not None
        return f"{si!r} {DIMENSIONS[s.dimension][1]}"
    return si


@st.composite
def value(draw: st.DrawFn, s: Spec) -> Any:
    """A TOML value for a key declared by ``s``, inside its range."""
    if s.kind == "integer":
        assert s.minimum is not None and s.maximum is not None
        return draw(st.integers(int(s.minimum), int(s.maximum)))
    if s.kind == "boolean":
        return draw(st.booleans())
    if s.kind == "choice":
        return draw(st.sampled_from(s.choices))
    if s.or_zero and draw(st.booleans()):
        return text_of(s, 0.0)
    return text_of(s, draw(si_values(s)))


@st.composite
def table(draw: st.DrawFn, cls: type, fixed: dict[str, Any] | None = None,
          skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """A TOML table for ``cls``: ``fixed`` keys as given, every other drawable key drawn
    (those with a default sometimes left to it)."""
    out = dict(fixed or {})
    for f in dataclasses.fields(cls):
        s = spec_of(f)
        if f.name in out or f.name in skip or s.kind not in DRAWN:
            continue
        if not s.required and draw(st.booleans()):
            continue
        out[f.name] = draw(value(s))
    return out


def _si(cls: type, key: str, si: float) -> Any:
    return text_of(spec(cls, key), si)


@st.composite
def sorted_pair(draw: st.DrawFn, s: Spec) -> tuple[float, float]:
    """Two distinct SI values inside the range of ``s``, low first."""
    a, b = draw(si_values(s)), draw(si_values(s))
    if a == b:
        b = s.maximum if a < s.maximum else s.minimum  # type: ignore[assignment]
    return (min(a, b), max(a, b))


@st.composite
def motor(draw: st.DrawFn, **fixed: Any) -> dict[str, Any]:
    """A [motors.<name>] table of any catalog motor."""
    return draw(table(MotorConfig, {"type": draw(st.sampled_from(catalog_names())), **fixed},
                      skip=("inverted",)))


@st.composite
def sim(draw: st.DrawFn) -> dict[str, Any]:
    """[sim]: a substep anywhere in its range and a tick of 1..MAX_SUBSTEPS_PER_TICK of them,
    at most the tick's own maximum. The shortest substeps (the most accurate, and the most
    work per simulated second) come up in a few examples in a hundred, the longest (where a
    model would diverge) in about a third."""
    s_sub, s_tick = spec(SimConfig, "substep"), spec(SimConfig, "tick")
    lo, hi = s_sub.minimum, s_sub.maximum
    assert lo is not None and hi is not None
    pick = draw(st.integers(0, 999))  # hypothesis favours small integers: 0 means nothing
    substep = lo if 400 <= pick < 450 else hi if 600 <= pick < 1000 else draw(
        st.floats(math.log(1e-3), math.log(hi)).map(lambda x: min(math.exp(x), hi)))
    top = min(MAX_SUBSTEPS_PER_TICK, int(s_tick.maximum / substep))  # type: ignore[operator]
    n = draw(st.sampled_from([1, top]) | st.integers(1, top))
    return {"substep": _si(SimConfig, "substep", substep),
            "tick": _si(SimConfig, "tick", min(n * substep, s_tick.maximum)),  # type: ignore
            "seed": draw(st.integers(0, 2**32))}


@st.composite
def body(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """([robot], [field]): an outline, a mass, maybe a yaw inertia between a hundredth of and
    all the mass at the outline's corners, a field that holds the robot and a start on it."""
    robot = draw(table(RobotConfig, skip=("moment_of_inertia", "length", "width", "mass")))
    mass = draw(si_values(spec(RobotConfig, "mass")))
    length = draw(si_values(spec(RobotConfig, "length")))
    width = draw(si_values(spec(RobotConfig, "width")))
    robot.update(mass=_si(RobotConfig, "mass", mass), length=_si(RobotConfig, "length", length),
                 width=_si(RobotConfig, "width", width))
    corners = mass * (length**2 + width**2) / 4.0
    if draw(st.booleans()):
        moi = corners * draw(st.sampled_from([0.01, 1.0]) | st.floats(0.01, 1.0))
        moi = min(max(moi, spec(RobotConfig, "moment_of_inertia").minimum or 0.0), 500.0)
        if corners / 100.0 <= moi <= corners:
            robot["moment_of_inertia"] = _si(RobotConfig, "moment_of_inertia", moi)
    field = draw(table(FieldConfig, skip=("length", "width", "obstacles")))
    field["season"] = draw(st.sampled_from(spec(FieldConfig, "season").choices))
    size = list(field_size(field["season"]))
    diagonal = math.hypot(length, width)
    for i, key in enumerate(("length", "width")):
        if draw(st.booleans()):
            size[i] = draw(st.floats(max(diagonal, 0.5), LARGEST_FIELD))
            field[key] = _si(FieldConfig, key, size[i])
    heading = draw(st.floats(-2 * math.pi, 2 * math.pi))
    c, s = abs(math.cos(heading)), abs(math.sin(heading))
    half = ((c * length + s * width) / 2.0, (s * length + c * width) / 2.0)
    if any(2 * h > n for h, n in zip(half, size, strict=True)):
        heading = 0.0
        half = (length / 2.0, width / 2.0)
    start = [draw(st.sampled_from([0.0, n]) | st.floats(0.0, n)) for n in size]
    robot["start"] = {"x": f"{start[0]!r} m", "y": f"{start[1]!r} m",
                      "heading": f"{heading!r} rad"}
    if draw(st.booleans()):  # a box of your own somewhere on (or off) the field
        x0, y0 = (draw(st.floats(-5.0, n)) for n in size)
        w, h = (draw(st.floats(0.01, 5.0)) for _ in range(2))
        field["obstacles"] = {"box": draw(table(ObstacleConfig, {"points": [
            [f"{x!r} m", f"{y!r} m"] for x, y in ((x0, y0), (x0 + w, y0), (x0 + w, y0 + h),
                                                  (x0, y0 + h))]}))}
    return robot, field


DRIVETRAINS = ("none", "differential/physical", "differential/characterized",
               "differential/kinematic", "swerve/physical", "swerve/kinematic",
               "mecanum/physical", "mecanum/kinematic")
"""Every built-in drivetrain type and fidelity, as ``type/fidelity`` ("none": no drivetrain)."""


@st.composite
def drivetrain(draw: st.DrawFn, variant: str) -> tuple[dict[str, Any] | None, dict[str, Any],
                                                       dict[str, Any], dict[str, Any]]:
    """([drivetrain] or None, its [motors], [encoders], [solenoids]) of ``variant``, one of
    DRIVETRAINS."""
    kind, _, fidelity = variant.partition("/")
    motors: dict[str, Any] = {}
    encoders: dict[str, Any] = {}
    solenoids: dict[str, Any] = {}
    if kind == "none":
        return None, motors, encoders, solenoids
    if kind == "differential":
        dt = draw(table(DrivetrainConfig, {"fidelity": fidelity},
                        skip=("left", "right", "shifter", "high_gearing")))
        side = draw(motor())
        if fidelity != "physical":
            side["inductance"] = "0 H"
        motors = {"left": side, "right": dict(side)}
        if fidelity == "characterized":
            dt["characterized"] = {s: draw(table(SideCharacterization))
                                   for s in ("left", "right")}
        elif fidelity == "kinematic":
            dt["kinematic"] = draw(table(KinematicConfig))
        if draw(st.booleans()):
            dt["shifter"] = "shift"
            dt["high_gearing"] = draw(value(spec(DrivetrainConfig, "high_gearing")))
            solenoids["shift"] = {"initial": draw(st.booleans())}
        encoders = {"left": {"motor": "left"}, "right": {"motor": "right", "unit": "rotations"}}
        return dt, motors, encoders, solenoids
    if kind == "swerve":
        dt = draw(table(SwerveConfig, {"fidelity": fidelity}))
        n = draw(st.sampled_from([2, 3, 4]))
        modules: dict[str, Any] = {}
        places: set[tuple[float, float]] = set()
        for i in range(n):
            m = draw(table(SwerveModuleConfig, {"drive": f"d{i}", "steer": f"s{i}"}))
            if (m["x"], m["y"]) in places:
                m["x"] = f"{0.01 * i!r} m"
                m["y"] = f"{-0.01 * i!r} m"
            places.add((m["x"], m["y"]))
            modules[f"m{i}"] = m
            motors[f"d{i}"] = draw(motor())
            motors[f"s{i}"] = draw(motor())
            encoders[f"d{i}"] = {"motor": f"d{i}"}
            encoders[f"s{i}"] = {"motor": f"s{i}", "unit": "rotations"}
        dt["type"], dt["modules"] = "swerve", modules
        return dt, motors, encoders, solenoids
    dt = draw(table(MecanumConfig, {"type": "mecanum", "fidelity": fidelity}))
    for name in ("front_left", "front_right", "rear_left", "rear_right"):
        motors[name] = draw(motor())
        encoders[name] = {"motor": name}
    return dt, motors, encoders, solenoids


@st.composite
def mechanisms(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """([mechanisms], their [motors], [encoders]): up to one of each built-in type."""
    out: dict[str, Any] = {}
    motors: dict[str, Any] = {}
    encoders: dict[str, Any] = {}
    for kind, cls, stops in (("elevator", ElevatorConfig, ("min_height", "max_height")),
                             ("arm", ArmConfig, ("min_angle", "max_angle")),
                             ("flywheel", FlywheelConfig, None),
                             ("linear", LinearConfig, ("min_position", "max_position"))):
        if not draw(st.booleans()):
            continue
        skip = ("start_height", "start_angle", "soft_min", "soft_max", "start_position")
        m = draw(table(cls, {"type": kind, "motor": kind}, skip=(*skip, *(stops or ()))))
        if stops is not None:
            lo, hi = draw(sorted_pair(spec(cls, stops[0])))
            m[stops[0]], m[stops[1]] = _si(cls, stops[0], lo), _si(cls, stops[1], hi)
            start_key = next((k for k in skip if k.startswith("start_")
                              and k.split("_")[1] == stops[0].split("_")[1]), None)
            if start_key is not None and (kind == "linear" or draw(st.booleans())):
                m[start_key] = _si(cls, stops[0], draw(st.floats(lo, hi)))
            if kind != "linear" and draw(st.booleans()):
                soft = sorted([draw(st.floats(lo, hi)), draw(st.floats(lo, hi))])
                m["soft_min"], m["soft_max"] = (_si(cls, stops[0], v) for v in soft)
        motors[kind] = draw(motor())
        out[kind] = m
        if kind != "linear":
            encoders[kind] = {"motor": kind, "unit": "rotations" if kind != "elevator" else "m"}
    return out, motors, encoders


@st.composite
def pneumatics(draw: st.DrawFn) -> tuple[dict[str, Any] | None, dict[str, Any],
                                         dict[str, Any]]:
    """([pneumatics] or None, [cylinders], their [solenoids]): switch_on below switch_off, at
    least 10 mL of air, each rod thinner than its bore."""
    if not draw(st.booleans()):
        return None, {}, {}
    p = draw(table(PneumaticsConfig, skip=("switch_on_pressure", "switch_off_pressure")))
    on, off = draw(sorted_pair(spec(PneumaticsConfig, "switch_off_pressure")))
    p["switch_on_pressure"] = _si(PneumaticsConfig, "switch_on_pressure", on)
    p["switch_off_pressure"] = _si(PneumaticsConfig, "switch_off_pressure", off)
    if p.get("tanks", 2) == 0:
        p["extra_volume"] = "0.01 m^3" if draw(st.booleans()) else "1e-05 m^3"
    cylinders = {}
    solenoids = {}
    for i in range(draw(st.integers(0, 2))):
        cyl = draw(table(CylinderConfig, {"solenoid": f"c{i}"}, skip=("rod_diameter",)))
        bore = float(cyl["bore"].split()[0])
        cyl["rod_diameter"] = f"{bore * draw(st.floats(0.0, 0.99))!r} m"
        cylinders[f"c{i}"] = cyl
        solenoids[f"c{i}"] = {}
    return p, cylinders, solenoids


@st.composite
def configs(draw: st.DrawFn, variant: str, cameras: bool = True) -> dict[str, Any]:
    """A whole config (as a TOML document) inside every declared range, with a drivetrain of
    ``variant`` (one of DRIVETRAINS)."""
    robot, field = draw(body())
    dt, motors, encoders, solenoids = draw(drivetrain(variant))
    mechs, mech_motors, mech_encoders = draw(mechanisms())
    pn, cylinders, cyl_solenoids = draw(pneumatics())
    battery = draw(table(BatteryConfig))
    if battery.get("discharge_voltage"):  # its curve ends at 11.7 V: a 12 V battery
        battery["nominal_voltage"] = draw(st.sampled_from(["11.7 V", "12.7 V", "20 V"]))
    doc: dict[str, Any] = {
        "sim": draw(sim()), "field": field, "robot": robot,
        "battery": battery, "gyro": draw(table(GyroConfig)),
        "motors": {**motors, **mech_motors}, "encoders": {**encoders, **mech_encoders},
        "solenoids": {**solenoids, **cyl_solenoids}, "mechanisms": mechs,
        "cylinders": cylinders,
    }
    if dt is not None:
        doc["drivetrain"] = dt
    if pn is not None:
        doc["pneumatics"] = pn
    if cameras and draw(st.integers(0, 3)) == 0:
        cam = draw(table(CameraConfig))
        if draw(st.booleans()):
            cam["intrinsics"] = draw(table(IntrinsicsConfig))
        doc["cameras"] = {"cam": cam}
        doc["vision"] = {"targets": {"t": draw(table(BearingTargetConfig))}}
        if draw(st.booleans()):
            doc["vision"]["fiducials"] = {"f": draw(table(FiducialConfig))}
    return doc
