"""The topic contract: simserver's own topics (``/simserver/...``), declared once.

Each topic is a :class:`TopicSpec` (name, type, direction, unit, meaning). A name may hold
placeholders such as ``<motor>``, filled with :meth:`TopicSpec.at`; the functions here
(:func:`motor`, :func:`encoder_position`, ...) give the name of one config item, and
:func:`contract_for` every topic of a config. The value each output topic carries comes from a
:class:`~simserver.contract.snapshot.Snapshot` (:func:`output_values`).

Nothing here is about NetworkTables itself: io publishes these names on NT (and records them
with ``--record``), the bridge writes them into the robot program's HAL. The formats io
publishes besides them (SimField, PhotonVision, Limelight, Mechanism2d) declare their topics
next to their publishers; docs/protocol.md is generated from all of them (``make docs``,
:mod:`simserver.io.formats`).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wpimath.geometry import Pose2d, Rotation2d
from wpimath.kinematics import ChassisSpeeds

from simserver.config.model import Config
from simserver.config.registry import BUILTIN, registry
from simserver.contract.snapshot import PieceSnapshot, Snapshot
from simserver.models.api import OutputSpec
from simserver.models.pieces.types import FLIGHT, HELD, LOOSE, STATES
from simserver.units import unit_kind

# A placeholder: ``<name>`` stands for one path segment, ``<name...>`` for one or more.
_PLACEHOLDER = re.compile(r"<([a-z_]+)(\.\.\.)?>")


def fill(pattern: str, **names: str) -> str:
    """``pattern`` with every placeholder ``<key>`` (or ``<key...>``) replaced by
    ``names[key]``; KeyError for a placeholder not given."""
    return _PLACEHOLDER.sub(lambda m: names[m.group(1)], pattern)


def matcher(pattern: str) -> re.Pattern[str]:
    """A regular expression that matches exactly the names ``pattern`` stands for."""
    parts: list[str] = []
    end = 0
    for m in _PLACEHOLDER.finditer(pattern):
        parts.append(re.escape(pattern[end:m.start()]))
        parts.append("[^/]+(?:/[^/]+)*" if m.group(2) else "[^/]+")
        end = m.end()
    parts.append(re.escape(pattern[end:]))
    return re.compile("".join(parts))


@dataclass(frozen=True)
class TopicSpec:
    """One topic: name, type string, direction ("in": simserver reads it, "out": simserver
    writes it, "log": only recorded by ``--record``), unit and meaning. ``name`` and ``type``
    may hold placeholders (``<camera>``)."""

    name: str
    type: str
    direction: str
    unit: str
    doc: str

    def at(self, **names: str) -> str:
        """The topic name with its placeholders filled (see :func:`fill`)."""
        return fill(self.name, **names)

    def of(self, **names: str) -> TopicSpec:
        """This spec for one item: its name's placeholders filled."""
        return dataclasses.replace(self, name=self.at(**names))


@dataclass(frozen=True)
class TopicGroup:
    """The topics of one output format, as docs/protocol.md lists them: a title, the prose
    that introduces them (Markdown) and their specs (with placeholders)."""

    title: str
    intro: str
    specs: tuple[TopicSpec, ...]


PREFIX = "/simserver"
POSE = f"{PREFIX}/pose"
GYRO_YAW = f"{PREFIX}/gyro/yaw"
GYRO_RATE = f"{PREFIX}/gyro/rate"
BATTERY_VOLTAGE = f"{PREFIX}/battery/voltage"
BATTERY_CURRENT = f"{PREFIX}/battery/current"
BATTERY_CHARGE = f"{PREFIX}/battery/charge_used"
BROWNOUT = f"{PREFIX}/battery/brownout"
BREAKER = f"{PREFIX}/battery/breaker_tripped"
BATTERY_MIN_VOLTAGE = f"{PREFIX}/battery/min_voltage"
BATTERY_MAX_CURRENT = f"{PREFIX}/battery/max_current"
BROWNOUT_IN_TICK = f"{PREFIX}/battery/brownout_in_tick"
TIME = f"{PREFIX}/time"
HEARTBEAT = f"{PREFIX}/heartbeat"
CHASSIS_SPEEDS = f"{PREFIX}/drive/chassis_speeds"
PRESSURE = f"{PREFIX}/pneumatics/pressure"
COMPRESSOR_RUNNING = f"{PREFIX}/pneumatics/compressor_running"
COMPRESSOR_CURRENT = f"{PREFIX}/pneumatics/compressor_current"
COMPONENTS = f"{PREFIX}/robot/components"
PIECES = f"{PREFIX}/pieces"
PICKED_UP = f"{PIECES}/picked_up"
SHOTS = f"{PIECES}/shots"
PIECE_FEED = f"{PIECES}/feed"
DS_MODE = f"{PREFIX}/ds/mode"
ROBOT_MODE = f"{PREFIX}/robot/mode"
MODES = ("disabled", "autonomous", "teleop", "test")
"""The Driver Station states ``ROBOT_MODE`` and ``DS_MODE`` carry."""
JOYSTICKS = 6


def robot_prefix(robot: str) -> str:
    """Where the topics of another robot of the arena (``[robots.<robot>]``) live: the same
    names as the main robot's with this prefix instead of /simserver."""
    return f"{PREFIX}/robots/{robot}"


def of_robot(robot: str, name: str) -> str:
    """Topic ``name`` (a /simserver topic) of robot ``robot``: the main robot's ("") as it
    is, another's under its :func:`robot_prefix`."""
    return robot_prefix(robot) + name.removeprefix(PREFIX) if robot else name


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


def current(name: str) -> str:
    """Output: stator current of motor ``name``."""
    return f"{PREFIX}/currents/{name}"


def mechanism_output(mechanism: str, output: str) -> str:
    """Output ``output`` of mechanism ``mechanism``."""
    return f"{PREFIX}/mechanisms/{mechanism}/{output}"


def drive_output(name: str) -> str:
    """Output: drivetrain output ``name`` (a path such as ``drive/module_states``)."""
    return f"{PREFIX}/{name}"


def switch(name: str) -> str:
    """Output: state of limit switch ``name``."""
    return f"{PREFIX}/switches/{name}"


def cylinder_extension(name: str) -> str:
    """Output: extension of cylinder ``name``."""
    return f"{PREFIX}/cylinders/{name}/extension"


def bearing_target(camera: str, target: str) -> str:
    """Output: what camera ``camera`` sees of bearing target ``target``."""
    return f"{PREFIX}/vision/{camera}/{target}"


def pieces_in(state: str, piece_type: str) -> str:
    """Output: poses of the game pieces of type ``piece_type`` in state ``state`` (a name of
    :data:`simserver.models.pieces.types.STATES`)."""
    return f"{PIECES}/{state}/{piece_type}"


def pieces_scored(alliance: str) -> str:
    """Output: pieces scored in the goals of ``alliance`` ("blue" or "red")."""
    return f"{PIECES}/scores/{alliance}"


def goal_scored(goal: str) -> str:
    """Output: pieces scored in goal ``goal``."""
    return f"{PIECES}/goals/{goal}"


def joystick_axes(index: int | str) -> str:
    """Output: axes of Driver Station joystick ``index`` (0..5)."""
    return f"{PREFIX}/ds/joystick{index}/axes"


def joystick_buttons(index: int | str) -> str:
    """Output: buttons of Driver Station joystick ``index`` (0..5), button 1 first."""
    return f"{PREFIX}/ds/joystick{index}/buttons"


# --- declarations ----------------------------------------------------------------------------

MOTOR = TopicSpec(motor("<motor>"), "double", "in", "duty cycle -1..1",
                  "Motor controller output. NaN/inf read as 0, out-of-range values are clamped; "
                  "each with one warning per topic. Other types are ignored (with `--serve` "
                  "ntcore refuses their publisher, named once in the log). 0 when its last "
                  "publisher leaves.")
SOLENOID = TopicSpec(solenoid("<solenoid>"), "boolean", "in", "on/off",
                     "Solenoid state; non-boolean values are ignored with a warning. Off when "
                     "its last publisher leaves.")
POSE_SPEC = TopicSpec(POSE, "struct:Pose2d", "out", "m, rad",
                      "True robot pose in field coordinates (WPILib convention); published "
                      "every tick, also when unchanged (keepDuplicates).")
ENCODER_POSITION = TopicSpec(encoder_position("<encoder>"), "double", "out",
                             "encoder `unit` (default m)", "Encoder position.")
ENCODER_VELOCITY = TopicSpec(encoder_velocity("<encoder>"), "double", "out",
                             "`unit`/s (default m/s)", "Encoder velocity.")
STATE = (
    TopicSpec(GYRO_YAW, "double", "out", "deg",
              "Gyro yaw since reset, CCW positive, continuous (not wrapped)."),
    TopicSpec(GYRO_RATE, "double", "out", "deg/s", "Gyro yaw rate, CCW positive."),
    TopicSpec(BATTERY_VOLTAGE, "double", "out", "V",
              "Battery terminal (bus) voltage at the end of the tick (its last substep)."),
    TopicSpec(BATTERY_CURRENT, "double", "out", "A",
              "Total current drawn from the battery at the end of the tick (its last substep)."),
    TopicSpec(BATTERY_MIN_VOLTAGE, "double", "out", "V",
              "Lowest bus voltage at any substep of the tick: a sag or brownout shorter than "
              "a tick shows here even when the end-of-tick voltage has recovered."),
    TopicSpec(BATTERY_MAX_CURRENT, "double", "out", "A",
              "Largest total current drawn from the battery at any substep of the tick "
              "(negative only if the battery was charged by regeneration throughout)."),
    TopicSpec(BATTERY_CHARGE, "double", "out", "Ah", "Charge drawn since reset."),
    TopicSpec(BROWNOUT, "boolean", "out", "",
              "True while the roboRIO is browned out (every motor output cut), at the end "
              "of the tick."),
    TopicSpec(BROWNOUT_IN_TICK, "boolean", "out", "",
              "True if the roboRIO was browned out at any substep of the tick (a brownout "
              "that toggles faster than the tick shows here, not always in `brownout`)."),
    TopicSpec(BREAKER, "boolean", "out", "",
              "True once the main breaker has tripped (bus at 0 V until reset)."),
)
CURRENT = TopicSpec(current("<motor>"), "double", "out", "A",
                    "Stator current of all motors on this output (negative when braking).")
CLOCK = (
    TopicSpec(TIME, "double", "out", "s", "Simulated time since reset."),
    TopicSpec(HEARTBEAT, "int", "out", "count",
              "Increments every tick (published with keepDuplicates)."),
)
CHASSIS_SPEEDS_SPEC = TopicSpec(CHASSIS_SPEEDS, "struct:ChassisSpeeds", "out",
                                "m/s, m/s, rad/s", "True chassis speeds in the robot frame "
                                "(vx forward, vy left, omega CCW).")
SWITCH = TopicSpec(switch("<switch>"), "boolean", "out", "", "Limit switch pressed.")
PNEUMATICS = (
    TopicSpec(PRESSURE, "double", "out", "psi", "System pressure (gauge)."),
    TopicSpec(COMPRESSOR_RUNNING, "boolean", "out", "", "Compressor running."),
    TopicSpec(COMPRESSOR_CURRENT, "double", "out", "A",
              "Compressor current (part of the battery draw)."),
)
CYLINDER = TopicSpec(cylinder_extension("<cylinder>"), "double", "out", "0..1",
                     "Cylinder extension: 0 retracted, 1 extended.")
BEARING = TopicSpec(bearing_target("<camera>", "<target>"), "double[]", "out",
                    "[found, s, deg, m]", "pyfrc VisionSim tuple for this camera and bearing "
                    "target: found (1/0), capture time in the robot's time base, bearing from "
                    "the camera axis (CCW positive), distance.")
OTHER_ROBOT = TopicSpec(robot_prefix("<robot>") + "/<topic...>", "(as its own)", "in/out", "",
                        "Every /simserver topic of this list for another robot of "
                        "`[robots.<robot>]` without scripted `inputs`: its motor and solenoid "
                        "inputs and its sensors, pose, drive and mechanism state. `--record` "
                        "records every robot of `[robots]` (scripted ones too) under these "
                        "names, with its truth entries.")
COMPONENTS_SPEC = TopicSpec(
    COMPONENTS, "struct:Pose3d[]", "out", "m, rad",
    "Poses of the mechanisms' moving parts in the robot frame (x forward, y left, z up from "
    "the carpet under the robot centre), for AdvantageScope's articulated components "
    "(docs/viewing.md): in the order of `[mechanisms]` in the config, each elevator's stages "
    "then its carriage, each arm's segment at its pivot, then the parts of plugin types.")
SHOWN = {STATES[code]: code for code in (LOOSE, FLIGHT, HELD)}
"""The piece states published as pose arrays, name -> state code (gone pieces are not
shown)."""
PIECE_POSES = TopicSpec(
    pieces_in("<state>", "<type>"), "struct:Pose3d[]", "out", "m, rad",
    "Field poses of the game pieces of type `<type>` that are on the carpet "
    "(`<state>` = `floor`), in flight (`flight`) or held by a robot (`held`): one array per "
    "tick, empty when none are; only when the field has game pieces. AdvantageScope's 3-D "
    "field draws them as game pieces.")
PIECE_SCORES = TopicSpec(pieces_scored("<alliance>"), "int", "out", "count",
                         "Pieces scored in the goals of alliance `blue` or `red` since reset.")
PIECE_GOALS = TopicSpec(goal_scored("<goal>"), "int", "out", "count",
                        "Pieces scored in goal `<goal>` (the season's goal names) since reset.")
PIECE_COUNTS = (
    TopicSpec(PICKED_UP, "int", "out", "count",
              "Game pieces this robot took in since reset (another robot's under its "
              "prefix)."),
    TopicSpec(SHOTS, "int", "out", "count",
              "Game pieces this robot released (shot or dropped) since reset (another "
              "robot's under its prefix)."),
)
PIECE_SPECS = (PIECE_POSES, PIECE_SCORES, PIECE_GOALS, *PIECE_COUNTS)
PIECE_FEED_SPEC = TopicSpec(
    PIECE_FEED, "string", "in", "",
    "Human-player feeding on request: each value published is the name of a station of the "
    "season (`blue_outpost`, ...; docs/gamepieces.md), which puts its next staged piece on "
    "the field. A name the field has no station for, or a station with none left, is "
    "reported in the log and ignored. Read only when the field has game pieces.")
_MODE_LIST = ", ".join(f'"{m}"' for m in MODES)
BRIDGE = (
    TopicSpec(ROBOT_MODE, "string", "in", "",
              f"The robot program's Driver Station state, published by the bridge: one of "
              f"{_MODE_LIST}."),
    TopicSpec(DS_MODE, "string", "out", "",
              "With `simserver run --enable MODE`: the mode the bridge puts the Driver "
              f"Station in ({_MODE_LIST})."),
    TopicSpec(joystick_axes("<n>"), "double[]", "out", "-1..1",
              "With `--enable` and `--inputs`: axes of joystick n (0..5) from the CSV columns "
              "`joystick<n>/axis<k>`."),
    TopicSpec(joystick_buttons("<n>"), "boolean[]", "out", "",
              "With `--enable` and `--inputs`: buttons of joystick n, button 1 first, from the "
              "CSV columns `joystick<n>/button<k>`."),
)


def bridge_specs() -> list[TopicSpec]:
    """Topics between simserver and the robot-side bridge (`robotpy sim --simserver`)."""
    return list(BRIDGE)


def _encoder_spec(spec: TopicSpec, name: str, unit: str | None, per_second: bool) -> TopicSpec:
    """``spec`` for encoder ``name`` with ``unit`` (None: the config's default)."""
    out = spec.of(encoder=name)
    if unit is None:
        return out
    base = "ticks" if unit_kind(unit) == "ticks" else unit
    return dataclasses.replace(out, unit=f"{base}/s" if per_second else base)


def extra_specs(switches: list[str], pneumatics: bool, cylinders: list[str]) -> list[TopicSpec]:
    """The limit switch, pneumatics and cylinder outputs of a robot with these items."""
    out = [SWITCH.of(switch=n) for n in switches]
    out += list(PNEUMATICS) if pneumatics else []
    out += [CYLINDER.of(cylinder=n) for n in cylinders]
    return out


def drive_specs(outputs: Sequence[OutputSpec]) -> list[TopicSpec]:
    """Drivetrain state topics: the chassis speeds every drivetrain has, then the ``outputs``
    its type declares (AdvantageScope and Elastic read the struct types directly)."""
    return [CHASSIS_SPEEDS_SPEC] + [
        TopicSpec(drive_output(o.name), o.type, "out" if o.nt else "log", o.unit, o.doc)
        for o in outputs]


def mechanism_topic(mechanism: str, out: OutputSpec) -> TopicSpec:
    """The /simserver topic that carries one declared output of a mechanism (a ``field2d``
    output is drawn on the SimField instead: :func:`simserver.io.field2d.output_topic`)."""
    if out.type == "field2d":
        raise ValueError(f"output {out.name!r} of {mechanism!r} is drawn on the SimField")
    return TopicSpec(mechanism_output(mechanism, out.name), out.type, "out", out.unit, out.doc)


def own_specs(motors: Sequence[str], solenoids: Sequence[str],
              encoders: dict[str, str | None], drive: Sequence[OutputSpec],
              switches: Sequence[str], pneumatics: bool, cylinders: Sequence[str],
              mechanisms: Mapping[str, Sequence[OutputSpec]], cameras: Sequence[str],
              targets: Sequence[str]) -> list[TopicSpec]:
    """Every /simserver topic of a robot with these items: motors and solenoids (inputs),
    encoders (name -> unit, None for the default), the drivetrain's and each mechanism's
    declared outputs (``field2d`` ones excluded: they are SimField objects), limit switches,
    pneumatics, cylinders, cameras and bearing targets; inputs first, bridge commands not
    included."""
    out = [MOTOR.of(motor=n) for n in motors]
    out += [SOLENOID.of(solenoid=n) for n in solenoids]
    out.append(POSE_SPEC)
    for n, unit in encoders.items():
        out += [_encoder_spec(ENCODER_POSITION, n, unit, False),
                _encoder_spec(ENCODER_VELOCITY, n, unit, True)]
    out += STATE
    out += [CURRENT.of(motor=n) for n in motors]
    out += CLOCK
    out += drive_specs(drive)
    out += extra_specs(list(switches), pneumatics, list(cylinders))
    out += [mechanism_topic(name, o) for name, outs in mechanisms.items() for o in outs
            if o.type != "field2d"]
    out += [BEARING.of(camera=c, target=t) for c in cameras for t in targets]
    return out


def contract_for(cfg: Config) -> list[TopicSpec]:
    """Every /simserver topic of the robot in ``cfg``, the bridge commands included."""
    reg = registry()
    drive_type = reg.get("drivetrain", cfg.drivetrain_type)
    mechanisms = {}
    components = False
    for name, section in cfg.mechanisms.items():
        mt = reg.get("mechanism", section.type)
        if mt is not None:
            mechanisms[name] = list(mt.outputs)
            components = components or mt.components
    specs = own_specs(list(cfg.motors), list(cfg.solenoids),
                      {n: e.unit for n, e in cfg.encoders.items()},
                      drive_type.outputs if drive_type is not None else (),
                      list(cfg.switches), cfg.pneumatics is not None, list(cfg.cylinders),
                      mechanisms, list(cfg.cameras), list(cfg.vision.targets))
    return specs + ([COMPONENTS_SPEC] if components else []) + bridge_specs()


def own_reference() -> list[TopicSpec]:
    """simserver's own topics with placeholders, as docs/protocol.md lists them: the
    outputs of every built-in drivetrain and mechanism type (placeholder: the type's name),
    then another robot's. Bridge commands and recorded-only topics are in the list too
    (directions ``in``/``out`` of :data:`BRIDGE`, ``log``)."""
    reg = registry()
    builtin = {role: [t for n in reg.names(role)
                      if (t := reg.get(role, n)) is not None and t.source == BUILTIN]
               for role in ("drivetrain", "mechanism")}
    drive = {s.name: s for t in builtin["drivetrain"] for s in drive_specs(t.outputs)}
    mechanisms = {f"<{t.name}>": list(t.outputs) for t in builtin["mechanism"]}
    specs = own_specs(["<motor>"], ["<solenoid>"], {"<encoder>": None}, (), ["<switch>"], True,
                      ["<cylinder>"], mechanisms, ["<camera>"], ["<target>"])
    at = specs.index(CHASSIS_SPEEDS_SPEC)
    return [*specs[:at], *drive.values(), *specs[at + 1:], COMPONENTS_SPEC, *PIECE_SPECS,
            PIECE_FEED_SPEC, OTHER_ROBOT, *BRIDGE]


# --- values ----------------------------------------------------------------------------------

def extra_values(snap: Snapshot) -> dict[str, Any]:
    """Topic -> value of the switch and pneumatic outputs in ``snap`` (see
    :func:`extra_specs`), the battery's brownout and breaker state and the tick's battery
    aggregates."""
    out: dict[str, Any] = {BROWNOUT: snap.brownout, BREAKER: snap.breaker_tripped,
                           BROWNOUT_IN_TICK: snap.brownout_in_tick,
                           BATTERY_MIN_VOLTAGE: snap.min_voltage,
                           BATTERY_MAX_CURRENT: snap.max_current}
    out.update({switch(n): v for n, v in snap.switches.items()})
    p = snap.pneumatics
    if p is not None:
        out[PRESSURE] = p.pressure_psi
        out[COMPRESSOR_RUNNING] = p.compressor_running
        out[COMPRESSOR_CURRENT] = p.compressor_current
        out.update({cylinder_extension(n): v for n, v in p.extensions.items()})
    return out


def sensor_values(snap: Snapshot) -> dict[str, Any]:
    """Topic -> value of every sensor the bridge writes into the robot program's HAL: encoders,
    gyro (deg, deg/s), battery voltage, limit switches."""
    out: dict[str, Any] = {}
    for name, (pos, vel) in snap.encoders.items():
        out[encoder_position(name)] = pos
        out[encoder_velocity(name)] = vel
    out[GYRO_YAW] = math.degrees(snap.gyro_yaw)
    out[GYRO_RATE] = math.degrees(snap.gyro_rate)
    out[BATTERY_VOLTAGE] = snap.battery_voltage
    out.update({switch(n): v for n, v in snap.switches.items()})
    return out


def drive_values(snap: Snapshot) -> dict[str, Any]:
    """Topic -> value of the drivetrain state topics (see :func:`drive_specs`)."""
    vx, vy, omega = snap.chassis_speeds
    out: dict[str, Any] = {CHASSIS_SPEEDS: ChassisSpeeds(vx, vy, omega)}
    out.update({drive_output(n): v for n, v in snap.drive.items()})
    return out


def output_values(snap: Snapshot) -> dict[str, Any]:
    """Topic -> value of every per-tick output with a fixed topic: the true pose (a wpimath
    Pose2d), the sensors (:func:`sensor_values`), battery current and charge, motor currents,
    simulated time and the world-level outputs (:func:`extra_values`). Mechanism outputs,
    drawings and Field2d objects are published by their own publishers."""
    out: dict[str, Any] = {POSE: Pose2d(snap.x, snap.y, Rotation2d(snap.heading))}
    out.update(drive_values(snap))
    out.update(sensor_values(snap))
    out[BATTERY_CURRENT] = snap.battery_current
    out[BATTERY_CHARGE] = snap.charge_used
    out.update({current(n): amps for n, amps in snap.currents.items()})
    out[TIME] = snap.time
    out.update(extra_values(snap))
    return out


def piece_specs(pieces: PieceSnapshot) -> list[TopicSpec]:
    """The game-piece topics of a field whose pieces are ``pieces``, names filled in: a
    pose array per shown state and type, the scores per alliance and per goal, and the
    pick-up and shot counts of each robot (another robot's under its prefix)."""
    out = [PIECE_POSES.of(state=state, type=t) for state in SHOWN for t in pieces.types]
    out += [PIECE_SCORES.of(alliance=a) for a in pieces.scores]
    out += [PIECE_GOALS.of(goal=g) for g in pieces.goals]
    for robot in dict.fromkeys((*pieces.picked_up, *pieces.shots)):
        out += [dataclasses.replace(spec, name=of_robot(robot, spec.name))
                for spec in PIECE_COUNTS]
    return out


def piece_values(pieces: PieceSnapshot) -> dict[str, Any]:
    """Topic -> value of every game-piece topic (see :func:`piece_specs`): each pose array
    as an (n, 6) array of (x m, y m, z m, roll rad, pitch rad, yaw rad) rows, the counts as
    ints."""
    out: dict[str, Any] = {}
    for state, code in SHOWN.items():
        chosen = pieces.state == code
        for k, t in enumerate(pieces.types):
            out[pieces_in(state, t)] = pieces.pose[chosen & (pieces.kind == k)]
    out.update({pieces_scored(a): int(n) for a, n in pieces.scores.items()})
    out.update({goal_scored(g): int(n) for g, n in pieces.goals.items()})
    for counts, name in ((pieces.picked_up, PICKED_UP), (pieces.shots, SHOTS)):
        out.update({of_robot(robot, name): int(n) for robot, n in counts.items()})
    return out
