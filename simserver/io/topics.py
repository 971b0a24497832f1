"""The NetworkTables topic contract: every topic simserver reads or writes, in one place.

docs/protocol.md is generated from :func:`contract` (``make docs``) and a test keeps them equal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wpimath.geometry import Pose2d, Rotation2d
from wpimath.kinematics import ChassisSpeeds

from simserver.config.model import Config
from simserver.config.registry import registry
from simserver.contract.snapshot import Snapshot
from simserver.hal import halmap
from simserver.models.api import OutputSpec
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
CHASSIS_SPEEDS = f"{PREFIX}/drive/chassis_speeds"
FIELD2D_NAME = "SimField"
FIELD2D_TABLE = f"/SmartDashboard/{FIELD2D_NAME}"
FIELD2D_ROBOT = f"{FIELD2D_TABLE}/Robot"


def robot_prefix(robot: str) -> str:
    """Where the topics of another robot of the arena (``[robots.<robot>]``) live: the same
    names as the main robot's with this prefix instead of /simserver."""
    return f"{PREFIX}/robots/{robot}"


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


def switch(name: str) -> str:
    """Output: state of limit switch ``name``."""
    return f"{PREFIX}/switches/{name}"


def cylinder_extension(name: str) -> str:
    """Output: extension of cylinder ``name``."""
    return f"{PREFIX}/cylinders/{name}/extension"


PRESSURE = f"{PREFIX}/pneumatics/pressure"
COMPRESSOR_RUNNING = f"{PREFIX}/pneumatics/compressor_running"
COMPRESSOR_CURRENT = f"{PREFIX}/pneumatics/compressor_current"
BROWNOUT = f"{PREFIX}/battery/brownout"
BREAKER = f"{PREFIX}/battery/breaker_tripped"


def extra_specs(switches: list[str], pneumatics: bool, cylinders: list[str]) -> list[TopicSpec]:
    """World-level outputs published from ``Snapshot.extra``: battery state, switches,
    pneumatics."""
    out = [
        TopicSpec(BROWNOUT, "boolean", "out", "", "True while the roboRIO is browned out "
                  "(every motor output cut)."),
        TopicSpec(BREAKER, "boolean", "out", "", "True once the main breaker has tripped "
                  "(bus at 0 V until reset)."),
    ]
    out += [TopicSpec(switch(n), "boolean", "out", "", "Limit switch pressed.")
            for n in switches]
    if pneumatics:
        out += [
            TopicSpec(PRESSURE, "double", "out", "psi", "System pressure (gauge)."),
            TopicSpec(COMPRESSOR_RUNNING, "boolean", "out", "", "Compressor running."),
            TopicSpec(COMPRESSOR_CURRENT, "double", "out", "A",
                      "Compressor current (part of the battery draw)."),
        ]
    out += [TopicSpec(cylinder_extension(n), "double", "out", "0..1",
                      "Cylinder extension: 0 retracted, 1 extended.") for n in cylinders]
    return out


def extra_values(snap: Snapshot) -> dict[str, Any]:
    """Topic -> value of the world-level outputs in ``snap`` (see :func:`extra_specs`)."""
    out: dict[str, Any] = {BROWNOUT: snap.brownout, BREAKER: snap.breaker_tripped}
    out.update({switch(n): v for n, v in snap.switches.items()})
    p = snap.pneumatics
    if p is not None:
        out[PRESSURE] = p.pressure_psi
        out[COMPRESSOR_RUNNING] = p.compressor_running
        out[COMPRESSOR_CURRENT] = p.compressor_current
        out.update({cylinder_extension(n): v for n, v in p.extensions.items()})
    return out


def extra_names(cfg: Config) -> set[str]:
    """Topic names of the world-level outputs of ``cfg``."""
    return {s.name for s in extra_specs(list(cfg.switches), cfg.pneumatics is not None,
                                        list(cfg.cylinders))}


DS_MODE = f"{PREFIX}/ds/mode"
ROBOT_MODE = f"{PREFIX}/robot/mode"
MODES = halmap.MODES
JOYSTICKS = 6


def joystick_axes(index: int) -> str:
    """Output: axes of Driver Station joystick ``index`` (0..5)."""
    return f"{PREFIX}/ds/joystick{index}/axes"


def joystick_buttons(index: int) -> str:
    """Output: buttons of Driver Station joystick ``index`` (0..5), button 1 first."""
    return f"{PREFIX}/ds/joystick{index}/buttons"


def bridge_specs() -> list[TopicSpec]:
    """Topics between simserver and the robot-side bridge (`robotpy sim --simserver`)."""
    return [
        TopicSpec(ROBOT_MODE, "string", "in", "",
                  "The robot program's Driver Station state, published by the bridge: "
                  "one of " + ", ".join(f'"{m}"' for m in MODES) + "."),
        TopicSpec(DS_MODE, "string", "out", "",
                  "With `simserver run --enable MODE`: the mode the bridge puts the Driver "
                  "Station in (" + ", ".join(f'"{m}"' for m in MODES) + ")."),
        TopicSpec(joystick_axes(0).replace("joystick0", "joystick<n>"), "double[]", "out",
                  "-1..1", "With `--enable` and `--inputs`: axes of joystick n (0..5) from the "
                  "CSV columns `joystick<n>/axis<k>`."),
        TopicSpec(joystick_buttons(0).replace("joystick0", "joystick<n>"), "boolean[]", "out",
                  "", "With `--enable` and `--inputs`: buttons of joystick n, button 1 first, "
                  "from the CSV columns `joystick<n>/button<k>`."),
    ]


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


def bearing_target(camera: str, target: str) -> str:
    """Output: what camera ``camera`` sees of bearing target ``target``."""
    return f"{PREFIX}/vision/{camera}/{target}"


def vision_specs(cameras: dict[str, str], targets: list[str]) -> list[TopicSpec]:
    """Topics of cameras (name -> protocol) seeing bearing ``targets``."""
    out: list[TopicSpec] = []
    for cam, protocol in cameras.items():
        if protocol in ("photonvision", "both"):
            base = f"/photonvision/{cam}"
            out += [
                TopicSpec(f"{base}/rawBytes", "photonstruct:PhotonPipelineResult:...", "out", "",
                          "Each frame as PhotonVision publishes it (photonlibpy's "
                          "PhotonCamera reads it): targets with corners, best and alternate "
                          "camera-to-target transforms, ambiguity, the multi-tag field-to-"
                          "camera estimate with 2+ tags, capture/publish time in the robot's "
                          "time base, sequence id. Topic property `message_uuid`."),
                TopicSpec(f"{base}/heartbeat", "int", "out", "count", "Frame sequence id."),
                TopicSpec(f"{base}/latencyMillis", "double", "out", "ms",
                          "Capture to publication."),
                TopicSpec(f"{base}/hasTarget", "boolean", "out", "", "A tag is in view."),
                TopicSpec(f"{base}/targetYaw", "double", "out", "deg", "Best target yaw "
                          "(right positive, PhotonVision's convention)."),
                TopicSpec(f"{base}/targetPitch", "double", "out", "deg", "Best target pitch."),
                TopicSpec(f"{base}/targetArea", "double", "out", "% of image",
                          "Best target area."),
                TopicSpec(f"{base}/targetSkew", "double", "out", "deg", "Best target skew (0 "
                          "for AprilTags)."),
                TopicSpec(f"{base}/targetPose", "struct:Transform3d", "out", "m, rad",
                          "Best target's camera-to-target transform."),
            ]
        if protocol in ("limelight", "both"):
            table = "/" + (cam if cam.startswith("limelight") else f"limelight-{cam}")
            out += [
                TopicSpec(f"{table}/tv tx ty ta tid tl cl hb", "double", "out",
                          "-, deg, deg, %, id, ms, ms, count",
                          "Limelight targeting values (target valid, offsets to the primary "
                          "tag, area, id, latencies, heartbeat)."),
                TopicSpec(f"{table}/botpose_wpiblue", "double[]", "out",
                          "m, deg, ms, count, m, m, %, then 7 per tag",
                          "MegaTag1 robot pose from the blue origin, with per-tag data "
                          "(also `botpose`, `botpose_wpired`)."),
                TopicSpec(f"{table}/botpose_orb_wpiblue", "double[]", "out", "as above",
                          "MegaTag2 robot pose, using the yaw the robot program sends on "
                          "`robot_orientation_set`."),
                TopicSpec(f"{table}/rawfiducials", "double[]", "out",
                          "7 per tag", "id, txnc, tync, ta, distance to camera, to robot, "
                          "ambiguity."),
                TopicSpec(f"{table}/t2d", "double[]", "out", "17 values",
                          "Limelight's 2D targeting array."),
                TopicSpec(f"{table}/robot_orientation_set", "double[]", "in", "deg",
                          "Robot yaw (and rates) from the robot program, for MegaTag2."),
            ]
        out += [TopicSpec(bearing_target(cam, t), "double[]", "out",
                          "[found, s, deg, m]", "pyfrc VisionSim tuple for this camera and "
                          "bearing target: found (1/0), capture time in the robot's time "
                          "base, bearing from the camera axis (CCW positive), distance.")
                for t in targets]
        out.append(TopicSpec(field2d_object(f"{cam} tags"), "double[]", "out",
                             "[m, m, deg, ...]", "The tags this camera saw in its last frame, "
                             "on the SimField."))
    return out


def drive_specs(outputs: Sequence[OutputSpec]) -> list[TopicSpec]:
    """Drivetrain state topics: the chassis speeds every drivetrain has, then the ``outputs``
    its type declares (AdvantageScope and Elastic read the struct types directly)."""
    out = [TopicSpec(CHASSIS_SPEEDS, "struct:ChassisSpeeds", "out", "m/s, m/s, rad/s",
                     "True chassis speeds in the robot frame (vx forward, vy left, omega CCW).")]
    out += [TopicSpec(drive_output(o.name), o.type, "out" if o.nt else "log", o.unit, o.doc)
            for o in outputs]
    return out


def drive_output(name: str) -> str:
    """Output: drivetrain output ``name`` (a path such as ``drive/module_states``)."""
    return f"{PREFIX}/{name}"


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
    drive_type = reg.get("drivetrain", cfg.drivetrain_type)
    mechanisms = {}
    drawings = []
    for name, section in cfg.mechanisms.items():
        mt = reg.get("mechanism", section.type)
        if mt is not None:
            mechanisms[name] = list(mt.outputs)
            if mt.mechanism2d:
                drawings.append(mechanism2d_topic(name))
    return contract(list(cfg.motors), list(cfg.solenoids),
                    {n: e.unit for n, e in cfg.encoders.items()}, mechanisms,
                    drive_specs(drive_type.outputs if drive_type is not None else ())
                    + vision_specs({n: c.protocol for n, c in cfg.cameras.items()},
                                   list(cfg.vision.targets))
                    + extra_specs(list(cfg.switches), cfg.pneumatics is not None,
                                  list(cfg.cylinders)) + drawings)


def mechanism2d_topic(mechanism: str) -> TopicSpec:
    """The ``.type`` topic of a mechanism's Mechanism2d table (the table WPILib publishes)."""
    return TopicSpec(f"/SmartDashboard/{mechanism}/.type", "string", "out", "",
                     "\"Mechanism2d\": the mechanism drawn as WPILib's Mechanism2d publishes it "
                     "(`dims`, roots `<root>/x|y`, ligaments with `angle` deg, `length` m, "
                     "`weight`, `color`).")


def mechanism_topic(mechanism: str, out: OutputSpec) -> TopicSpec:
    """The topic that carries one declared output of a mechanism."""
    if out.type == "field2d":
        return TopicSpec(field2d_object(mechanism), "double[]", "out", "[m, m, deg, ...]",
                         f"{out.doc} (Field2d object: one [x, y, heading] triplet per pose).")
    nt_type = {"int": "int"}.get(out.type, out.type)
    return TopicSpec(mechanism_output(mechanism, out.name), nt_type, "out", out.unit, out.doc)


def contract(motors: list[str], solenoids: list[str], encoders: dict[str, str | None],
             mechanisms: dict[str, list[OutputSpec]] | None = None,
             extra: list[TopicSpec] | None = None) -> list[TopicSpec]:
    """Every topic for these input, encoder (name -> unit) and mechanism (name -> declared
    outputs) names, inputs first."""
    out = [TopicSpec(motor(n), "double", "in", "duty cycle -1..1",
                     "Motor controller output. NaN/inf read as 0, out-of-range values are "
                     "clamped; each with one warning per topic. Other types are ignored "
                     "(with `--serve` ntcore refuses their publisher, named once in the log). "
                     "0 when its last publisher leaves.")
           for n in motors]
    out += [TopicSpec(solenoid(n), "boolean", "in", "on/off",
                      "Solenoid state; non-boolean values are ignored with a warning. Off "
                      "when its last publisher leaves.")
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
    out += bridge_specs()
    out += extra or []
    for name, outputs in (mechanisms or {}).items():
        out += [mechanism_topic(name, o) for o in outputs]
    return out
