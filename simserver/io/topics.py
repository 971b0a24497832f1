"""The NetworkTables topic contract: every topic simserver reads or writes, in one place.

docs/protocol.md is generated from :func:`contract` (``make docs``) and a test keeps them equal.
"""

from __future__ import annotations

from dataclasses import dataclass

from simserver.config.model import Config
from simserver.models.api import OutputSpec
from simserver.registry import registry
from simserver.units import unit_kind

PREFIX = "/simserver"
POSE = f"{PREFIX}/pose"
GYRO_YAW = f"{PREFIX}/gyro/yaw"
GYRO_RATE = f"{PREFIX}/gyro/rate"
BATTERY_VOLTAGE = f"{PREFIX}/battery/voltage"
BATTERY_CURRENT = f"{PREFIX}/battery/current"
BATTERY_CHARGE = f"{PREFIX}/battery/charge_used"
TIME = f"{PREFIX}/time"
HEARTBEAT = f"{PREFIX}/heartbeat"
FIELD2D_NAME = "SimField"
FIELD2D_TABLE = f"/SmartDashboard/{FIELD2D_NAME}"
FIELD2D_ROBOT = f"{FIELD2D_TABLE}/Robot"


def motor(name: str) -> str:
    """Input: duty cycle of motor ``name``."""
    return f"{PREFIX}/motors/{name}"


def solenoid(name: str) -> str:
    """Input: state of solenoid ``name``."""
    return f"{PREFIX}/solenoids/{name}"


def encoder_position(name: str) -> str:
    """Output: position of encoder ``name``."""
    return f"{PREFIX}/encoders/{name}/position"


def encoder_velocity(name: str) -> str:
    """Output: velocity of encoder ``name``."""
    return f"{PREFIX}/encoders/{name}/velocity"


def mechanism_output(mechanism: str, output: str) -> str:
    """Output ``output`` of mechanism ``mechanism``."""
    return f"{PREFIX}/mechanisms/{mechanism}/{output}"


def field2d_object(name: str) -> str:
    """A Field2d object of the SimField table."""
    return f"{FIELD2D_TABLE}/{name}"


def current(name: str) -> str:
    """Output: stator current of motor ``name``."""
    return f"{PREFIX}/currents/{name}"


@dataclass(frozen=True)
class TopicSpec:
    """One topic: name, NT type string, direction ("in"/"out"), unit and meaning."""

    name: str
    type: str
    direction: str
    unit: str
    doc: str


def _encoder_units(unit: str | None) -> tuple[str, str]:
    if unit is None:
        return "encoder `unit` (default m)", "`unit`/s (default m/s)"
    if unit_kind(unit) == "ticks":
        return "ticks", "ticks/s"
    return unit, f"{unit}/s"


def contract_for(cfg: Config) -> list[TopicSpec]:
    """Every topic of the robot in ``cfg``."""
    reg = registry()
    mechanisms = {}
    for name, section in cfg.mechanisms.items():
        mt = reg.get("mechanism", section.type)
        if mt is not None:
            mechanisms[name] = list(mt.outputs)
    return contract(list(cfg.motors), list(cfg.solenoids),
                    {n: e.unit for n, e in cfg.encoders.items()}, mechanisms)


def mechanism_topic(mechanism: str, out: OutputSpec) -> TopicSpec:
    """The topic that carries one declared output of a mechanism."""
    if out.type == "field2d":
        return TopicSpec(field2d_object(mechanism), "double[]", "out", "[m, m, deg, ...]",
                         f"{out.doc} (Field2d object: one [x, y, heading] triplet per pose).")
    nt_type = {"int": "int"}.get(out.type, out.type)
    return TopicSpec(mechanism_output(mechanism, out.name), nt_type, "out", out.unit, out.doc)


def contract(motors: list[str], solenoids: list[str], encoders: dict[str, str | None],
             mechanisms: dict[str, list[OutputSpec]] | None = None) -> list[TopicSpec]:
    """Every topic for these input, encoder (name -> unit) and mechanism (name -> declared
    outputs) names, inputs first."""
    out = [TopicSpec(motor(n), "double", "in", "duty cycle -1..1",
                     "Motor controller output. NaN/inf read as 0, out-of-range values are "
                     "clamped, other types ignored; each with one warning per topic.")
           for n in motors]
    out += [TopicSpec(solenoid(n), "boolean", "in", "on/off",
                      "Solenoid state; non-boolean values are ignored with a warning.")
            for n in solenoids]
    out.append(TopicSpec(POSE, "struct:Pose2d", "out", "m, rad",
                         "True robot pose in field coordinates (WPILib convention)."))
    for n, unit in encoders.items():
        pu, vu = _encoder_units(unit)
        out.append(TopicSpec(encoder_position(n), "double", "out", pu, "Encoder position."))
        out.append(TopicSpec(encoder_velocity(n), "double", "out", vu, "Encoder velocity."))
    out += [
        TopicSpec(GYRO_YAW, "double", "out", "deg",
                  "Gyro yaw since reset, CCW positive, continuous (not wrapped)."),
        TopicSpec(GYRO_RATE, "double", "out", "deg/s", "Gyro yaw rate, CCW positive."),
        TopicSpec(BATTERY_VOLTAGE, "double", "out", "V", "Battery terminal (bus) voltage."),
        TopicSpec(BATTERY_CURRENT, "double", "out", "A", "Total current drawn from the battery."),
        TopicSpec(BATTERY_CHARGE, "double", "out", "Ah", "Charge drawn since reset."),
    ]
    out += [TopicSpec(current(n), "double", "out", "A",
                      "Stator current of all motors on this output (negative when braking).")
            for n in motors]
    out += [
        TopicSpec(TIME, "double", "out", "s", "Simulated time since reset."),
        TopicSpec(HEARTBEAT, "int", "out", "count",
                  "Increments every tick (published with keepDuplicates)."),
        TopicSpec(f"{FIELD2D_TABLE}/.type", "string", "out", "",
                  "\"Field2d\" (topic property {\"SmartDashboard\": \"Field2d\"})."),
        TopicSpec(f"{FIELD2D_TABLE}/.name", "string", "out", "", f"\"{FIELD2D_NAME}\"."),
        TopicSpec(f"{FIELD2D_TABLE}/.controllable", "boolean", "out", "", "false."),
        TopicSpec(FIELD2D_ROBOT, "double[]", "out", "[m, m, deg]",
                  "Robot pose as Field2d reads it: [x, y, heading]."),
    ]
    for name, outputs in (mechanisms or {}).items():
        out += [mechanism_topic(name, o) for o in outputs]
    return out
