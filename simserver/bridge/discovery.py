"""Discovery mode of the bridge, for ``simserver init``: list what the robot program built.

``SIMSERVER_DISCOVER=out.json python -m robotpy sim --nogui --simserver`` runs the robot
program with no simserver.toml and no physics. The bridge starts the program's NT server on
free ports (before RobotBase would take 5810), lets robotInit and a few disabled loops run,
then writes one JSON document and ends the process with status 0:

- ``devices``: every HAL device (:mod:`simserver.bridge.inventory`);
- ``motors``: each PWM motor controller object the robot holds, by attribute path
  (``robot.drive.leftLeader``), with its class, channel, inversion and the PWM channels that
  follow it (found by setting it and watching every PWM output);
- ``encoders``, ``solenoids``, ``inputs``, ``mechanism_sims``, ``can``: the program's
  encoder, solenoid, digital input, WPILib mechanism-simulation and vendor (Phoenix 6, REV,
  navX) objects, by path; Talon FX, SPARK and CANcoder objects with ``inverted`` as their
  configuration reads back, a CANcoder with its ``magnet_offset`` (rotations), and a CAN
  motor controller that follows another with which (``follows``: the leader's CAN id,
  ``opposed``);
- ``ctre_modules``: CTRE swerve module constants the program holds (Tuner X's
  ``TunerConstants.front_left`` ...): device ids, gear and coupling ratios, wheel radius (m),
  location (m);
- ``analogs``: the program's ``AnalogPotentiometer``, ``AnalogEncoder`` and ``AnalogInput``
  objects, by path, with their channel and, where the class scales the voltage, what it reads
  at 0 V and over the full 0..5 V (found by setting each channel's voltage);
- ``drives``: ``wpilib.drive`` objects, with the PWM channels each side (or wheel) drives,
  found by commanding them once;
- ``kinematics`` and ``translations``: wpimath kinematics objects (track width, module
  positions) and every Translation2d attribute (module locations by name);
- ``nt_ports`` (NT3, NT4) and ``listening_5810``: where the program's NT server went, and
  whether anything listened on 5810 while it ran.

The probes write motor outputs while the robot is disabled; the process ends right after.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from simserver.util.ports import free_port

LOOPS = 3  # robot loops (after robotInit) before the devices are listed
_keep: list[Any] = []


def _say(message: str) -> None:
    print(f"simserver bridge (discovery): {message}", file=sys.stderr, flush=True)


def _listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:``port``."""
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def start(path: str) -> None:
    """Start discovery: the robot's NT server on free ports, then the device listing written
    to ``path`` after :data:`LOOPS` robot loops, then exit."""
    import hal.simulation
    import ntcore

    ports = [free_port(), free_port()]  # NT3, NT4
    ntcore.NetworkTableInstance.getDefault().startServer(
        f"{path}.networktables.json", "127.0.0.1", *ports)
    loops = [0]

    def periodic() -> None:
        loops[0] += 1
        if loops[0] < LOOPS:
            return
        code = 0
        try:
            listing = {**discover(), "nt_ports": ports, "listening_5810": _listening(5810)}
            Path(path).write_text(json.dumps(listing, indent=1), encoding="utf-8")
            _say(f"wrote {path}")
        except Exception as exc:  # report it; the init command shows the output
            import traceback

            traceback.print_exc()
            _say(f"discovery failed: {type(exc).__name__}: {exc}")
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    _keep.append(hal.simulation.registerSimPeriodicAfterCallback(periodic))
    _say(f"listing the robot program's devices into {path} after {LOOPS} loops")


# --- the listing ---------------------------------------------------------------------------------


def discover() -> dict[str, Any]:
    """Everything discovery reports (see the module docstring)."""
    import wpilib

    from simserver.bridge import inventory

    robot = the_robot()
    seen: set[int] = set()
    found = list(walk(robot, "robot", seen=seen)) if robot is not None else []
    for name, module in program_modules():  # module globals: kinematics in constants.py
        for key, value in vars(module).items():
            if not key.startswith("_"):
                found += walk(value, f"{name}.{key}", seen=seen)
    motors = [(p, o) for p, o in found if isinstance(o, wpilib.PWMMotorController)]
    return {
        "robot_class": type(robot).__name__ if robot is not None else None,
        "devices": [vars_of(d) for d in inventory.devices()],
        "motors": [_motor(p, o) for p, o in motors],
        "encoders": _encoders(found),
        "solenoids": _solenoids(found),
        "inputs": [{"path": p, "channel": o.getChannel()} for p, o in found
                   if isinstance(o, wpilib.DigitalInput)],
        "mechanism_sims": [{"path": p, "class": type(o).__name__} for p, o in found
                           if type(o).__name__ in ("SingleJointedArmSim", "ElevatorSim",
                                                   "FlywheelSim", "DCMotorSim")],
        "can": [_can(p, o) for p, o in found if type(o).__name__ in CAN_CLASSES],
        "analogs": _analogs(found),
        "drives": _drives(found),
        "kinematics": _kinematics(found),
        "ctre_modules": _ctre_modules(),
        "translations": [{"path": p, "x": o.x, "y": o.y} for p, o in found
                         if type(o).__name__ == "Translation2d"],
    }


def program_modules(root: str | None = None) -> list[tuple[str, types.ModuleType]]:
    """The robot project's own imported modules (their files under ``root``, default the
    working directory, which ``robotpy sim`` runs in), by name, outside any virtualenv."""
    base = _comparable(root or os.getcwd()) + os.sep
    out = []
    for name, module in sorted(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and _comparable(path).startswith(base) and not any(
                part in path for part in ("site-packages", "dist-packages", ".venv")):
            out.append((name, module))
    return out


def _comparable(path: str) -> str:
    """``path`` absolute, in the case and separators the system compares paths in (Windows:
    lower case, backslashes; it names one folder ``C:\\Robot`` and ``c:\\robot``)."""
    return os.path.normcase(os.path.abspath(path))


def the_robot() -> Any:
    """The program's RobotBase object (found among the interpreter's objects), or None."""
    import wpilib

    return next((o for o in _gc_objects() if isinstance(o, wpilib.RobotBase)), None)


def vars_of(dev: Any) -> dict[str, Any]:
    """A Device as a JSON object."""
    return {"role": dev.role, "address": dev.address, "label": dev.label,
            "aliases": list(dev.aliases), "detail": dev.detail}


def _gc_objects() -> list[Any]:
    import gc

    return gc.get_objects()


INTERESTING = ("PWMMotorController", "Encoder", "Solenoid", "DoubleSolenoid", "DigitalInput",
               "AnalogInput", "AnalogPotentiometer", "AnalogEncoder",
               "DifferentialDrive", "MecanumDrive", "DifferentialDriveKinematics",
               "MecanumDriveKinematics", "SwerveDrive2Kinematics", "SwerveDrive3Kinematics",
               "SwerveDrive4Kinematics", "SwerveDrive6Kinematics", "Translation2d",
               "SingleJointedArmSim", "ElevatorSim", "FlywheelSim", "DCMotorSim",
               "ADIS16470_IMU", "ADIS16448_IMU")
CAN_CLASSES = ("TalonFX", "SparkMax", "SparkFlex", "CANcoder", "Pigeon2", "AHRS")


def _interesting(obj: Any) -> bool:
    return any(c.__name__ in INTERESTING or c.__name__ in CAN_CLASSES
               for c in type(obj).__mro__)


def walk(obj: Any, path: str, depth: int = 8,
         seen: set[int] | None = None) -> Iterator[tuple[str, Any]]:
    """(attribute path, object) of every device, drive, kinematics, Translation2d and mechanism
    sim reachable from ``obj`` through attributes, lists, tuples and dicts."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth < 0:
        return
    seen.add(id(obj))
    if _interesting(obj):
        yield path, obj
        if type(obj).__module__.startswith(("wpilib", "wpimath", "phoenix6", "rev", "navx")):
            return
    children: list[tuple[str, Any]] = []
    if isinstance(obj, dict):
        children = [(f"{path}[{k!r}]", v) for k, v in obj.items() if isinstance(k, (str, int))]
    elif isinstance(obj, (list, tuple)):
        children = [(f"{path}[{i}]", v) for i, v in enumerate(obj)]
    elif not isinstance(obj, (type, types.ModuleType, types.FunctionType, types.MethodType)):
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            children = [(f"{path}.{k}", v) for k, v in attrs.items() if not k.startswith("__")]
    for child_path, child in children:
        if isinstance(child, (str, bytes, int, float, bool, type(None))):
            continue
        yield from walk(child, child_path, depth - 1, seen)


def _pwm_speeds() -> dict[int, float]:
    from wpilib.simulation import PWMSim

    from simserver.config import hal

    return {ch: PWMSim(ch).getSpeed() for ch in range(hal.CHANNEL_MAX["pwm"] + 1)
            if PWMSim(ch).getInitialized()}


PWM_RESOLUTION = 0.04  # a controller's pulse range quantizes its output (Victor SPX: 0.3 -> 0.286)


def _changed(before: dict[int, float], probe: float) -> dict[int, int]:
    """PWM channel -> sign (+1/-1) of the channels that now output ±``probe`` (within the
    quantization of PWM pulse widths) and did not before."""
    out = {}
    for ch, value in _pwm_speeds().items():
        if abs(abs(value) - probe) < PWM_RESOLUTION and \
                abs(value - before.get(ch, 0.0)) > PWM_RESOLUTION:
            out[ch] = 1 if value > 0 else -1
    return out


def _motor(path: str, obj: Any) -> dict[str, Any]:
    """One PWM motor controller object: class, channel, inversion, followers (channel ->
    sign relative to this one)."""
    probe = 0.2468
    before = _pwm_speeds()
    obj.set(probe)
    moved = _changed(before, probe)
    obj.set(0.0)
    channel = obj.getChannel()
    own = moved.pop(channel, 1)
    return {"path": path, "class": type(obj).__name__, "channel": channel,
            "inverted": bool(obj.getInverted()),
            "followers": {str(ch): sign * own for ch, sign in moved.items()}}


def _can(path: str, obj: Any) -> dict[str, Any]:
    """A vendor device object (Phoenix 6, REV, navX) by path, with its CAN id if it says."""
    can_id = None
    for getter in ("getDeviceID", "getDeviceId", "get_device_id"):
        try:
            can_id = int(getattr(obj, getter)())
            break
        except Exception:  # not this vendor's spelling
            continue
    if can_id is None and isinstance(getattr(obj, "device_id", None), int):
        can_id = obj.device_id
    out: dict[str, Any] = {"path": path, "class": type(obj).__name__, "id": can_id}
    inverted = _inverted(obj)
    if inverted is not None:
        out["inverted"] = inverted
    leader = _leader(obj)
    if leader is not None:
        out["follows"], out["opposed"] = leader
    sensor = _spark_sensor(obj)
    if sensor is not None:
        out["sensor"], out["sensor_inverted"] = sensor
    offset = _magnet_offset(obj)
    if offset is not None:
        out["magnet_offset"] = offset
    return out


def _magnet_offset(obj: Any) -> float | None:
    """A CANcoder's ``MagnetSensor.MagnetOffset`` (rotations) as its configuration reads back;
    None for other devices or when it cannot be read."""
    if type(obj).__name__ != "CANcoder":
        return None
    try:
        from phoenix6 import configs

        sensor = configs.MagnetSensorConfigs()
        obj.configurator.refresh(sensor)
        return float(sensor.magnet_offset)
    except Exception:  # a vendor version without these calls: not known
        return None


CTRE_MODULE_FIELDS = {  # listing key: phoenix6.swerve.SwerveModuleConstants attribute
    "drive_id": "drive_motor_id", "steer_id": "steer_motor_id", "encoder_id": "encoder_id",
    "drive_gearing": "drive_motor_gear_ratio", "steer_gearing": "steer_motor_gear_ratio",
    "coupling_ratio": "coupling_gear_ratio", "wheel_radius": "wheel_radius",
    "x": "location_x", "y": "location_y"}


def _ctre_modules() -> list[dict[str, Any]]:
    """Every CTRE ``SwerveModuleConstants`` alive in the program (a SwerveDrivetrain keeps
    none in Python: they are Tuner X's class attributes), as numbers."""
    out = []
    for obj in _gc_objects():
        if type(obj).__name__ == "SwerveModuleConstants" and \
                type(obj).__module__.startswith("phoenix6"):
            try:
                out.append({key: float(getattr(obj, attr))
                            for key, attr in CTRE_MODULE_FIELDS.items()})
            except (AttributeError, TypeError, ValueError):  # another Phoenix version
                continue
    return out


def _spark_sensor(obj: Any) -> tuple[str, bool] | None:
    """(port, inverted) of the data-port encoder a SPARK's closed loop reads (``absolute``,
    ``alternate`` or ``external``), with the program's ``inverted`` for it; None when the
    loop reads the built-in encoder, or for other devices."""
    name = type(obj).__name__
    if name not in ("SparkMax", "SparkFlex"):
        return None
    from simserver.hal import halmap

    try:
        config = obj.configAccessor
        port = halmap.spark_feedback_port(name.lower(),
                                          int(config.closedLoop.getFeedbackSensor()))
        sensors = {"absolute": "absoluteEncoder", "alternate": "alternateEncoder",
                   "external": "externalEncoder"}
        if port in sensors:
            return port, bool(getattr(config, sensors[port]).getInverted())
    except Exception:  # a REV version without these accessors: not known
        return None
    return None


def _inverted(obj: Any) -> bool | None:
    """Whether the program inverts a vendor device, read back from its configuration: a
    Talon FX's ``MotorOutput.Inverted`` or a CANcoder's ``MagnetSensor.SensorDirection``
    clockwise positive, a SPARK's ``inverted(True)``; None for other devices or when the
    configuration cannot be read."""
    try:
        name = type(obj).__name__
        if name in ("TalonFX", "CANcoder"):
            from phoenix6 import configs

            if name == "TalonFX":
                motor = configs.MotorOutputConfigs()
                obj.configurator.refresh(motor)
                return motor.inverted.name == "CLOCKWISE_POSITIVE"
            sensor = configs.MagnetSensorConfigs()
            obj.configurator.refresh(sensor)
            return sensor.sensor_direction.name == "CLOCKWISE_POSITIVE"
        if name in ("SparkMax", "SparkFlex"):
            return bool(obj.configAccessor.getInverted())
    except Exception:  # a vendor version without these calls: not known
        return None
    return None


def _leader(obj: Any) -> tuple[int, bool] | None:
    """(leader's CAN id, opposed) of a CAN motor controller that follows another: a Phoenix 6
    Talon FX whose last control request is a ``Follower`` or ``StrictFollower``, a REV SPARK
    configured with ``follow()``; None otherwise."""
    request: Any = getattr(obj, "control_request", None)
    if type(request).__name__ in ("Follower", "StrictFollower"):
        alignment = getattr(request, "motor_alignment", None)  # Phoenix 6 2026
        opposed = (getattr(alignment, "name", "") == "OPPOSED" if alignment is not None
                   else bool(getattr(request, "oppose_master_direction", False)))
        return int(request.leader_id), opposed
    try:
        if callable(getattr(obj, "isFollower", None)) and obj.isFollower():
            config = obj.configAccessor
            return int(config.getFollowerModeLeaderId()), bool(config.getFollowerModeInverted())
    except Exception:  # a REV version without the accessor: not known to follow
        return None
    return None


def _analogs(found: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """The program's analog input objects: path, class, channel and, for the classes that
    scale the voltage (``AnalogPotentiometer``, ``AnalogEncoder``), ``at_0v`` and ``span``
    (what ``get()`` reads at 0 V, and its change from 0 to 5 V), measured by setting the
    channel's voltage. A potentiometer does not say its channel: it is the one whose voltage
    moves its reading."""
    import wpilib
    from wpilib.simulation import AnalogInputSim

    from simserver.config import hal

    sims = {ch: AnalogInputSim(ch) for ch in range(hal.CHANNEL_MAX["analog"] + 1)
            if AnalogInputSim(ch).getInitialized()}
    out = []
    for path, obj in found:
        entry: dict[str, Any] = {"path": path, "class": type(obj).__name__}
        if isinstance(obj, wpilib.AnalogInput):
            entry["channel"] = obj.getChannel()
        elif isinstance(obj, (wpilib.AnalogPotentiometer, wpilib.AnalogEncoder)):
            entry.update(_scale(obj, sims))
        else:
            continue
        out.append(entry)
    return out


def _scale(obj: Any, sims: dict[int, Any]) -> dict[str, Any]:
    """Channel, ``at_0v`` and ``span`` of a scaling analog sensor object (see
    :func:`_analogs`). The span is measured between 1.25 V and 2.5 V, clear of the wrap of an
    AnalogEncoder at 0 and 5 V; each voltage is restored."""
    for ch, sim in sims.items():
        saved = sim.getVoltage()
        try:
            readings = []
            for volts in (0.0, 1.25, 2.5):
                sim.setVoltage(volts)
                readings.append(float(obj.get()))
        finally:
            sim.setVoltage(saved)
        span = 4.0 * (readings[2] - readings[1])
        if abs(span) > 1e-9:
            return {"channel": ch, "at_0v": readings[0], "span": span}
    return {}


def _encoders(found: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    import wpilib
    from wpilib.simulation import EncoderSim

    from simserver.bridge import inventory

    sims = inventory.encoder_sims()
    out = []
    for path, obj in found:
        if not isinstance(obj, wpilib.Encoder):
            continue
        sim = EncoderSim(obj)
        channels = next((c for c, s in sims if inventory.same_encoder(s, sim)), [])
        out.append({"path": path, "channels": channels,
                    "distance_per_pulse": obj.getDistancePerPulse(),
                    "reverse": sim.getReverseDirection()})
    return out


def _solenoids(found: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    import wpilib

    out: list[dict[str, Any]] = []
    for path, obj in found:
        if isinstance(obj, wpilib.DoubleSolenoid):
            out.append({"path": path, "channel": obj.getFwdChannel(),
                        "reverse_channel": obj.getRevChannel()})
        elif isinstance(obj, wpilib.Solenoid):
            out.append({"path": path, "channel": obj.getChannel()})
    return out


def _drives(found: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """``wpilib.drive`` objects and the PWM channels of each side (tank) or wheel (mecanum),
    found by commanding distinct outputs and matching their magnitudes."""
    import wpilib.drive

    out: list[dict[str, Any]] = []
    for path, obj in found:
        if isinstance(obj, wpilib.drive.DifferentialDrive):
            before = _pwm_speeds()
            obj.tankDrive(0.3, 0.7, False)
            left, right = _changed(before, 0.3), _changed(before, 0.7)
            obj.stopMotor()
            out.append({"path": path, "class": "DifferentialDrive",
                        "left": sorted(left), "right": sorted(right)})
        elif isinstance(obj, wpilib.drive.MecanumDrive):
            before = _pwm_speeds()
            # front-left x+y+z = 0.7, front-right x-y-z = -0.5, rear-left x-y+z = 0.3,
            # rear-right x+y-z = -0.1 (no desaturation below 1)
            obj.driveCartesian(0.1, 0.2, 0.4)
            wheels = {name: sorted(_changed(before, level)) for name, level in
                      (("front_left", 0.7), ("front_right", 0.5), ("rear_left", 0.3),
                       ("rear_right", 0.1))}
            obj.stopMotor()
            out.append({"path": path, "class": "MecanumDrive", **wheels})
    return out


def _kinematics(found: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path, obj in found:
        name = type(obj).__name__
        if name == "DifferentialDriveKinematics":
            out.append({"path": path, "class": name, "track_width": obj.trackWidth})
        elif name == "MecanumDriveKinematics":
            wheels = (obj.getFrontLeft(), obj.getFrontRight(), obj.getRearLeft(),
                      obj.getRearRight())
            out.append({"path": path, "class": name, "modules": [[t.x, t.y] for t in wheels]})
        elif name.startswith("SwerveDrive") and hasattr(obj, "getModules"):
            out.append({"path": path, "class": name,
                        "modules": [[t.x, t.y] for t in obj.getModules()]})
    return out
