"""Turn a discovery listing (:mod:`simserver.bridge.discovery`) into a commented
simserver.toml: every device wired with ``hal = ...``, physical values the program cannot
tell given typical values and marked ``# CONFIRM:``.

    text = draft(json.loads(Path("listing.json").read_text()))

Guesses, in order: the drivetrain from the program's ``wpilib.drive`` objects (their sides or
wheels found by commanding them), else from its wpimath kinematics objects and the attribute
names of its motors (``frontLeftDrive``, ``leftLeader``); the other motors become mechanisms
named after their attribute (``arm`` -> arm, ``elevator`` -> elevator, anything else a
flywheel to confirm); each encoder goes with the motor whose attribute path it shares most
words with.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

CONFIRM = "# CONFIRM:"
# Motor type guessed from the controller class (the motor it usually drives).
MOTOR_BY_CLASS = {"PWMSparkMax": "NEO", "PWMSparkFlex": "NEO Vortex", "PWMTalonFX": "Kraken X60",
                  "PWMTalonSRX": "CIM", "PWMVictorSPX": "CIM", "Talon": "CIM", "VictorSP": "CIM",
                  "Spark": "CIM", "PWMVenom": "CIM", "Koors40": "CIM", "talonfx": "Kraken X60",
                  "sparkmax": "NEO", "sparkflex": "NEO Vortex", "TalonFX": "Kraken X60",
                  "SparkMax": "NEO", "SparkFlex": "NEO Vortex"}
GENERIC = {"robot", "m", "self", "motor", "motors", "controller", "leader", "follower", "main",
           "encoder", "enc", "sensor", "drivetrain", "subsystem", "container", "s", "l", "r",
           "spark", "max", "talon", "fx", "pwm", "can"}
STEER_WORDS = {"turn", "turning", "steer", "steering", "azimuth", "angle", "rotation", "rot"}
MECHANISM_WORDS = (("arm", ("arm", "shoulder", "wrist", "pivot", "elbow")),
                   ("elevator", ("elevator", "lift", "climber", "climb", "telescope")),
                   ("flywheel", ("shooter", "flywheel", "launcher", "intake", "roller",
                                 "feeder", "indexer")))
CORNERS = {"front_left": ({"front", "fl"}, {"left", "fl"}),
           "front_right": ({"front", "fr"}, {"right", "fr"}),
           "rear_left": ({"rear", "back", "bl", "rl"}, {"left", "bl", "rl"}),
           "rear_right": ({"rear", "back", "br", "rr"}, {"right", "br", "rr"})}
CORNER_WORDS = set().union(*(fb | lr for fb, lr in CORNERS.values()))
TYPICAL_CPR = (4096, 2048, 1024, 512, 360, 256, 250, 128, 100, 42, 20, 8192)
#: FRC drive wheel diameters, inches: a drive encoder's counts per revolution times its
#: distance per pulse is one of these times π in the program's length unit.
WHEEL_DIAMETERS = (2.0, 3.0, 3.25, 4.0, 5.0, 6.0, 8.0)
LENGTH_UNITS = (("in", 1.0), ("ft", 12.0), ("m", 1 / 0.0254))  # (unit, inches per unit)
DRUM_RADIUS = 0.0254  # m: the elevator drum radius the draft writes (1 in, to confirm)


def words(path: str) -> list[str]:
    """Lower-case words of an attribute path: ``robot.drive.frontLeftDrive`` ->
    [robot, drive, front, left, drive]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", path)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def meaningful(path: str) -> set[str]:
    """The words of ``path`` that tell devices apart (not "motor", "robot", ..., nor numbers:
    ``left1`` says left)."""
    spaced = re.sub(r"([A-Za-z])([0-9])", r"\1 \2", path)
    return {w for w in words(spaced) if w not in GENERIC and not w.isdigit()}


@dataclass
class Motor:
    """One motor output of the draft: its config name, HAL addresses (leader first), count of
    motors, controller class, inversion and the object path it came from."""

    name: str
    hal: list[str]
    count: int
    cls: str
    inverted: bool = False
    path: str = ""
    role: str = ""  # "drive", "steer", "mechanism"
    followers: list[str] = field(default_factory=list)  # addresses not read (opposed, CAN)
    guess: str = ""  # the motor type to write; "" = the usual one for its controller class

    @property
    def type(self) -> str:
        """The motor type the draft writes (to confirm)."""
        return self.guess or MOTOR_BY_CLASS.get(self.cls, "CIM")

    @property
    def words(self) -> set[str]:
        return meaningful(self.path)


@dataclass
class Draft:
    """What the listing says, grouped for writing."""

    motors: list[Motor] = field(default_factory=list)
    drivetrain: dict[str, Any] | None = None
    mechanisms: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (type, motor)
    encoders: list[dict[str, Any]] = field(default_factory=list)
    gyro: str | None = None
    extra_gyros: list[str] = field(default_factory=list)
    solenoids: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    switches: list[tuple[str, str, str]] = field(default_factory=list)  # (name, address, path)
    analogs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _unique(base: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_]+", "_", base).strip("_") or "motor"
    name, i = base, 2
    while name in taken:
        name, i = f"{base}{i}", i + 1
    taken.add(name)
    return name


def _name_of(path: str, fallback: str) -> str:
    """A config name from an attribute path: the telling words of its last attribute, after
    those of the object holding it when the last one only says what kind of motor it is
    (``robot.arm.motor`` -> arm, ``robot.swerve.frontLeft.driveMotor`` -> front_left_drive)."""
    parts = [p for p in path.split(".")[1:] if p and not p.startswith("[")] or [""]
    kept = [w for w in words(parts[-1]) if w not in GENERIC]
    if set(kept) <= STEER_WORDS | {"drive"} and len(parts) > 1:
        kept = [w for w in words(parts[-2]) if w not in GENERIC] + kept
    return "_".join(kept) or fallback


def motors_of(listing: dict[str, Any]) -> list[Motor]:
    """Motor outputs: each leader with its followers, then PWM and CAN motor controllers with
    no Python object the discovery could reach. PWM followers that turn the same way are read
    with their leader (averaged); the others, and CAN followers (a SPARK follower's own
    output is not in the HAL), are ``followers``."""
    objects = {m["channel"]: m for m in listing.get("motors", [])}
    followers = {int(ch) for m in objects.values() for ch in m["followers"]}
    taken: set[str] = set()
    out = []
    for ch, m in sorted(objects.items()):
        if ch in followers:
            continue
        ordered = sorted(m["followers"].items(), key=lambda x: int(x[0]))
        out.append(Motor(_unique(_name_of(m["path"], f"pwm{ch}"), taken),
                         [f"pwm:{ch}", *(f"pwm:{f}" for f, sign in ordered if sign > 0)],
                         1 + len(m["followers"]), m["class"], m["inverted"], m["path"],
                         followers=[f"pwm:{f}" for f, sign in ordered if sign < 0]))
    known = {f"pwm:{c}" for c in objects} | {f"pwm:{c}" for c in followers}
    can = {(c["class"].lower(), c["id"]): c for c in listing.get("can", [])}
    led: dict[str, list[str]] = {}  # leader address -> follower addresses
    for dev in listing.get("devices", []):
        kind, _, num = dev["address"].partition(":")
        obj = can.get((kind, int(num) if num.isdigit() else None), {})
        if dev["role"] == "motor" and "follows" in obj:
            led.setdefault(f"{kind}:{obj['follows']}", []).append(dev["address"])
    for dev in listing.get("devices", []):
        address = dev["address"]
        if dev["role"] != "motor" or address in known or any(
                address in f for f in led.values()):
            continue
        kind, _, num = address.partition(":")
        obj = can.get((kind, int(num) if num.isdigit() else None), {})
        path = obj.get("path", "")
        more = led.get(address, [])
        out.append(Motor(_unique(_name_of(path, f"{kind}{num}"), taken), [address],
                         1 + len(more), obj.get("class", kind), bool(obj.get("inverted")),
                         path=path, followers=more))
    return out


def _group_with(motors: list[Motor], channels: list[int]) -> Motor | None:
    """The motor output whose controllers include one of the PWM ``channels``."""
    addresses = {f"pwm:{c}" for c in channels}
    return next((m for m in motors if addresses & set(m.hal)), None)


def _corner(m: Motor) -> str | None:
    w = m.words
    for corner, (fb, lr) in CORNERS.items():
        if w & fb and w & lr:
            return corner
    return None


def guess_drivetrain(listing: dict[str, Any], motors: list[Motor], draft: Draft) -> None:
    """Fill ``draft.drivetrain`` (and the drive motors' roles) when the program shows one."""
    kin = {k["class"]: k for k in listing.get("kinematics", [])}
    for drive in listing.get("drives", []):
        if drive["class"] == "DifferentialDrive":
            left, right = _group_with(motors, drive["left"]), _group_with(motors, drive["right"])
            if left and right and left is not right:
                _rename(left, "left", motors)
                _rename(right, "right", motors)
                _tank(draft, left, right, kin, f"the program's DifferentialDrive {drive['path']}")
                return
        if drive["class"] == "MecanumDrive":
            wheels = {c: _group_with(motors, drive[c]) for c in CORNERS}
            if all(wheels.values()) and len({id(w) for w in wheels.values()}) == 4:
                for corner, wheel in wheels.items():
                    assert wheel is not None
                    _rename(wheel, corner, motors)
                _mecanum(draft, wheels, kin, f"the program's MecanumDrive {drive['path']}")
                return
    swerve = next((k for c, k in kin.items() if c.startswith("SwerveDrive")), None)
    if swerve is not None and _swerve(draft, motors, swerve, listing):
        return
    corners: dict[str, Motor] = {}
    for m in motors:
        c = _corner(m)
        if c is not None and c not in corners:
            corners[c] = m
    if "MecanumDriveKinematics" in kin and len(corners) == 4:
        _mecanum(draft, corners, kin, f"the program's MecanumDriveKinematics "
                 f"{kin['MecanumDriveKinematics']['path']} and motor names")
        return
    lefts = [m for m in motors if "left" in m.words and "right" not in m.words]
    rights = [m for m in motors if "right" in m.words and "left" not in m.words]
    sided = "DifferentialDriveKinematics" in kin or any(
        {"drive", "drivetrain"} & set(words(m.path)) for m in lefts + rights)
    if len(lefts) == 1 and len(rights) == 1 and sided:
        _tank(draft, lefts[0], rights[0], kin, "the names of its motors")


def _rename(motor: Motor, name: str, motors: list[Motor]) -> None:
    """Call ``motor`` ``name`` (a drive object told its place) unless its own name says it or
    another motor has that name."""
    if not set(name.split("_")) <= meaningful(motor.path) and all(m.name != name
                                                                  for m in motors):
        motor.name = name


def _same_type(motors: list[Motor]) -> None:
    """Drive motors of one drivetrain are of one type (the loader checks it): the first's."""
    for m in motors[1:]:
        m.guess = motors[0].type


def _tank(draft: Draft, left: Motor, right: Motor, kin: dict[str, Any], why: str) -> None:
    left.role = right.role = "drive"
    _same_type([left, right])
    track = kin.get("DifferentialDriveKinematics", {}).get("track_width")
    draft.drivetrain = {"type": "differential", "why": why, "left": left.name,
                        "right": right.name, "track_width": track}


def _mecanum(draft: Draft, wheels: Mapping[str, Motor | None], kin: dict[str, Any],
             why: str) -> None:
    for m in wheels.values():
        assert m is not None
        m.role = "drive"
    _same_type([m for m in wheels.values() if m is not None])
    modules = kin.get("MecanumDriveKinematics", {}).get("modules")
    track = wheelbase = None
    if modules:
        (flx, fly), (_, fry), (rlx, _), _ = modules
        track, wheelbase = abs(fly - fry), abs(flx - rlx)
    draft.drivetrain = {"type": "mecanum", "why": why, "track_width": track,
                        "wheelbase": wheelbase,
                        **{c: m.name for c, m in wheels.items() if m is not None}}


def _swerve(draft: Draft, motors: list[Motor], kin: dict[str, Any],
            listing: dict[str, Any]) -> bool:
    """Swerve modules: motors grouped by the object that holds them (``frontLeft.driveMotor``
    and ``frontLeft.turningMotor``), placed by the kinematics' module positions, matched by
    corner names or by the program's Translation2d attributes."""
    holders: dict[str, dict[str, Motor]] = {}
    for m in motors:
        parent = m.path.rpartition(".")[0]
        kind = "steer" if m.words & STEER_WORDS else "drive"
        holders.setdefault(parent, {}).setdefault(kind, m)
    modules = {p: ms for p, ms in holders.items() if {"drive", "steer"} <= set(ms)}
    positions: list[list[float]] = kin["modules"]
    if len(modules) != len(positions) or len(modules) < 2:
        return False
    located = {t["path"]: (t["x"], t["y"]) for t in listing.get("translations", [])}
    placed = []
    free = list(positions)
    corners = {_quadrant(xy) for xy in positions}
    taken = {m.name for m in motors}
    for i, (parent, ms) in enumerate(modules.items()):
        name = _name_of(parent, f"module{i}")
        key = meaningful(parent.rpartition(".")[2] or parent)
        where = next((xy for p, xy in located.items() if key and key <= meaningful(p)
                      and list(xy) in free), None)
        xy = list(where) if where is not None else free[0]
        free.remove(xy)
        if not meaningful(name) & CORNER_WORDS and len(corners) == len(positions):
            # a module in a list (modules[0]): named by where the kinematics puts it
            name = _quadrant(xy)
            for kind in ("drive", "steer"):
                taken.discard(ms[kind].name)
                ms[kind].name = _unique(f"{name}_{kind}", taken)
        ms["drive"].role, ms["steer"].role = "drive", "steer"
        placed.append((name, xy, ms["drive"].name, ms["steer"].name))
    for kind in ("drive", "steer"):
        _same_type([ms[kind] for ms in modules.values()])
    draft.drivetrain = {"type": "swerve", "why": f"the program's {kin['class']} {kin['path']}",
                        "modules": placed,
                        "ctre": _ctre_values(listing, list(modules.values()))}
    return True


CTRE_VALUES = ("drive_gearing", "steer_gearing", "coupling_ratio", "wheel_radius")


def _ctre_values(listing: dict[str, Any],
                 modules: list[dict[str, Motor]]) -> dict[str, float] | None:
    """The drivetrain values of the program's CTRE swerve module constants (Tuner X's), when
    each module's drive and steer Talon FX have constants and all modules agree; else None."""
    by_ids = {(f"talonfx:{c['drive_id']:.0f}", f"talonfx:{c['steer_id']:.0f}"): c
              for c in listing.get("ctre_modules", [])}
    found = [c for ms in modules
             if (c := by_ids.get((ms["drive"].hal[0], ms["steer"].hal[0]))) is not None]
    if not found or len(found) != len(modules):
        return None
    values = {key: found[0][key] for key in CTRE_VALUES}
    if any(c[key] != values[key] for c in found for key in CTRE_VALUES):
        return None
    return values


def wheel_span(drivetrain: dict[str, Any] | None) -> tuple[float, float]:
    """How far apart (m) the drivetrain's outermost wheels are along x and y, as far as the
    program tells (0 where it does not)."""
    if drivetrain is None:
        return 0.0, 0.0
    if drivetrain["type"] == "swerve":
        xs = [abs(x) for _, (x, _), _, _ in drivetrain["modules"]]
        ys = [abs(y) for _, (_, y), _, _ in drivetrain["modules"]]
        return 2.0 * max(xs, default=0.0), 2.0 * max(ys, default=0.0)
    if drivetrain["type"] == "mecanum":
        return drivetrain["wheelbase"] or 0.0, drivetrain["track_width"] or 0.0
    return 0.0, drivetrain.get("track_width") or 0.0


def _quadrant(xy: list[float]) -> str:
    """``front_left`` ... ``rear_right`` for a module position (x forward, y left)."""
    return f"{'front' if xy[0] > 0 else 'rear'}_{'left' if xy[1] > 0 else 'right'}"


def guess_mechanisms(listing: dict[str, Any], motors: list[Motor], draft: Draft) -> None:
    """A mechanism for every motor the drivetrain does not use, typed by its name (or by the
    program's one WPILib mechanism simulation)."""
    sims = [s["class"] for s in listing.get("mechanism_sims", [])]
    rest = [m for m in motors if not m.role]
    taken = set(draft.mechanisms)
    for m in rest:
        m.role = "mechanism"
        kind = next((k for k, ws in MECHANISM_WORDS if set(words(m.path)) & set(ws)), None)
        if kind is None and len(rest) == 1 and len(sims) == 1:
            kind = {"SingleJointedArmSim": "arm", "ElevatorSim": "elevator"}.get(sims[0])
        if kind is None:
            kind = "flywheel?"
        draft.mechanisms[_unique(m.name, taken)] = (kind, m.name)


def _angle_unit(dpp: float) -> tuple[str, int | None]:
    """The angle unit (or ticks with counts per revolution) in which ``dpp`` is a whole
    fraction of a turn: a program whose distance is in radians reads radians."""
    for unit, turn in (("rad", 2 * math.pi), ("deg", 360.0), ("rotations", 1.0)):
        cpr = turn / dpp if dpp > 0 else 0.0
        if cpr > 1 and abs(cpr - round(cpr)) < 1e-6 * cpr and round(cpr) in TYPICAL_CPR:
            return unit, None
    return "ticks", 2048


def _length_unit(dpp: float) -> tuple[str, float | None]:
    """The length unit a drive encoder's ``dpp`` is in, with the wheel diameter (inches),
    when a typical encoder's counts per revolution times ``dpp`` is the circumference of a
    typical FRC wheel in inches, feet or metres (the encoder on the wheel's axle); else
    ("m", None): the program then has to be read."""
    for unit, inches in LENGTH_UNITS:
        for cpr in TYPICAL_CPR:
            diameter = dpp * cpr / math.pi * inches
            for typical in WHEEL_DIAMETERS:
                if abs(diameter - typical) < 1e-6 * typical:
                    return unit, typical
    return "m", None


def _unit(address: str, best: Motor, dpp: float, kind: str, physics_py: bool
          ) -> dict[str, Any]:
    """The unit of an encoder at ``address`` measuring ``best`` (a mechanism's of ``kind``),
    from the program's distance per pulse ``dpp``: with how it was chosen and, for a drive
    encoder, the wheel diameter (inches) it says, or None."""
    quadrature = address.startswith("encoder:")
    if best.role == "drive" and quadrature:
        unit, diameter = _length_unit(dpp)
        return {"unit": unit, "unit_sure": diameter is not None, "wheel": diameter}
    if best.role == "drive":
        return {"unit": "m"}
    if best.role == "steer":
        return {"unit": _angle_unit(dpp)[0] if quadrature else "rotations"}
    if dpp == 1.0 and physics_py and quadrature:
        # WPILib's default: the program reads what its physics.py writes, from WPILib's
        # simulation classes (rad, m), not pulses of a real 360-count encoder (deg)
        return {"unit": "m" if kind == "elevator" else "rad", "unit_from": "physics.py"}
    return {"unit": "m" if kind == "elevator" else _angle_unit(dpp)[0]}


def _cancoder(entry: dict[str, Any], obj: dict[str, Any], best: Motor | None,
              on_arm: bool) -> None:
    """A CANcoder's unit, and whether and from where it reads absolutely: on a module's
    steering or an arm, with the offset that makes it read simserver's angle."""
    steer = best is not None and best.role == "steer"
    turns = steer or on_arm
    entry.update(unit="rotations", absolute=turns)
    if turns and "magnet_offset" in obj:
        # Phoenix reads direction x raw + MagnetOffset: this offset makes it read
        # simserver's angle (a module's 0 = forward, an arm's 0 = horizontal)
        sign = -1.0 if obj.get("inverted") else 1.0
        entry["offset"] = -sign * obj["magnet_offset"]
        entry["magnet_offset"] = obj["magnet_offset"]
        entry["offset_sure"] = steer


def guess_encoders(listing: dict[str, Any], motors: list[Motor], draft: Draft) -> None:
    """Each encoder with the motor it most likely measures, in a unit that keeps the
    program's distance-per-pulse working."""
    objects: dict[Any, dict[str, Any]] = {tuple(e["channels"]): e
                                          for e in listing.get("encoders", [])}
    objects.update({f"cancoder:{c['id']}": c for c in listing.get("can", [])
                    if c["class"] == "CANcoder"})
    kinds = {name: kind for name, (kind, _) in draft.mechanisms.items()}
    mech_of = {motor: name for name, (_, motor) in draft.mechanisms.items()}
    unsure = {motor for kind, motor in draft.mechanisms.values() if kind.endswith("?")}
    taken: set[str] = set()
    for dev in listing.get("devices", []):
        if dev["role"] != "encoder":
            continue
        address = dev["address"]
        detail = dev.get("detail", {})
        obj = objects.get(tuple(detail.get("channels", ())) or address, {})
        path = obj.get("path", "")
        best = _steer_of(address, path, listing, motors) or _closest(path, motors, unsure)
        entry: dict[str, Any] = {"address": address, "label": dev["label"], "path": path,
                                 "motor": best.name if best else None}
        dpp = detail.get("distance_per_pulse", 0.0)
        if address.startswith("cancoder:"):
            _cancoder(entry, obj, best, best is not None and kinds.get(
                mech_of.get(best.name, ""), "").rstrip("?") == "arm")
        elif best is not None:
            entry.update(_unit(address, best, dpp, kinds.get(mech_of.get(best.name, ""), ""),
                               bool(listing.get("physics_py"))))
        if entry.get("unit") == "ticks":
            entry["ticks_per_revolution"] = _angle_unit(dpp)[1]
        entry["inverted"] = bool(detail.get("reverse") or obj.get("inverted"))
        base = _name_of(path, "") or (best.name if best else address.replace(":", ""))
        if best is not None and best.role == "steer" and not meaningful(base) & CORNER_WORDS:
            base = f"{best.name.removesuffix('_steer')}_azimuth"  # a module in a list
        entry["name"] = _unique(base, taken)
        draft.encoders.append(entry)
    wheels = {e["wheel"] for e in draft.encoders if "wheel" in e}  # the drive encoders'
    if draft.drivetrain is not None and len(wheels) == 1 and None not in wheels:
        draft.drivetrain["wheel_diameter"] = f"{wheels.pop():g} in"
    spark_sensors = {f"{c['class'].lower()}:{c['id']}": c for c in listing.get("can", [])
                     if c.get("sensor")}
    for m in motors:  # the integrated sensor of a CAN motor controller turns with the motor
        kind = m.hal[0].partition(":")[0]
        if kind in ("talonfx", "sparkmax", "sparkflex"):
            draft.encoders.append({
                "address": m.hal[0], "label": f"{m.hal[0]} integrated sensor", "path": m.path,
                "motor": m.name, "unit": "rotations", "mount": "motor", "inverted": False,
                "name": _unique(f"{m.name}_{'rotor' if kind == 'talonfx' else 'encoder'}",
                                taken)})
        spark = spark_sensors.get(m.hal[0])
        if spark is not None:  # the data-port encoder its closed loop reads
            port = spark["sensor"]
            draft.encoders.append({
                "address": f"{m.hal[0]}/{port}", "path": m.path, "motor": m.name,
                "label": f"{m.hal[0]} {port} encoder (its closed loop's sensor)",
                "unit": "rotations", "absolute": port == "absolute",
                "inverted": bool(spark["sensor_inverted"]),
                "name": _unique(f"{m.name}_{port}", taken)})


def _steer_of(address: str, path: str, listing: dict[str, Any],
              motors: list[Motor]) -> Motor | None:
    """The steer motor a swerve module's CANcoder measures: the one its CTRE module constants
    name, else the only steer motor held by the object that holds the CANcoder."""
    if not address.startswith("cancoder:"):
        return None
    steers = [m for m in motors if m.role == "steer"]
    can_id = float(address.partition(":")[2])
    for c in listing.get("ctre_modules", []):
        if c["encoder_id"] == can_id:
            hal = f"talonfx:{c['steer_id']:.0f}"
            return next((m for m in steers if m.hal[0] == hal), None)
    parent = path.rpartition(".")[0]
    held = [m for m in steers if parent and m.path.rpartition(".")[0] == parent]
    return held[0] if len(held) == 1 else None


def _closest(path: str, motors: list[Motor], unsure: set[str] | frozenset[str] = frozenset()
             ) -> Motor | None:
    """The motor whose attribute path shares the most telling words with ``path`` (ties: the
    one under the same parent object, then the one motor whose job is known among motors
    named in ``unsure``, whose job init could not tell); None if no word is shared."""
    if not path:
        return motors[0] if len(motors) == 1 else None
    mine = meaningful(path)
    parent = path.rpartition(".")[0]
    scored = [(len(mine & m.words) + (0.5 if m.path.rpartition(".")[0] == parent else 0.0), m)
              for m in motors]
    scored = [s for s in scored if s[0] >= 1.0]
    if not scored:
        same = [m for m in motors if m.path.rpartition(".")[0] == parent]
        return same[0] if len(same) == 1 else None
    best = max(s for s, _ in scored)
    winners = [m for s, m in scored if s == best]
    if len(winners) > 1:  # ``leftEncoder`` beside ``left1`` driving and ``left2`` unused
        winners = [m for m in winners if m.name not in unsure] or winners
    return winners[0] if len(winners) == 1 else None


def build(listing: dict[str, Any]) -> Draft:
    """Every guess about the program of ``listing``."""
    draft = Draft()
    draft.motors = motors_of(listing)
    guess_drivetrain(listing, draft.motors, draft)
    guess_mechanisms(listing, draft.motors, draft)
    guess_encoders(listing, draft.motors, draft)
    modules = {d["detail"].get("module") for d in listing.get("devices", [])
               if d["role"] == "pneumatics"}
    kind = "ctre" if "ctre" in modules or not modules else "rev"
    taken: set[str] = {m.name for m in draft.motors}
    for sol in listing.get("solenoids", []):
        draft.solenoids.append((_unique(_name_of(sol["path"], f"solenoid{sol['channel']}"),
                                        taken), f"{kind}:{sol['channel']}", sol))
    inputs = {f"dio:{i['channel']}": i["path"] for i in listing.get("inputs", [])}
    for dev in listing.get("devices", []):
        if dev["role"] == "switch":
            path = inputs.get(dev["address"], "")
            name = _name_of(path, "") or dev["address"].replace(":", "")
            draft.switches.append((_unique(name, taken), dev["address"], path))
        elif dev["role"] == "gyro":
            if draft.gyro is None:
                draft.gyro = dev["address"]
            else:
                draft.extra_gyros.append(dev["address"])
    guess_analogs(listing, draft)
    return draft


def _analog_unit(span: float) -> str:
    """The angle unit a program's analog reading is in, from what it reads over 5 V: a whole
    number of turns up to 10 (an AnalogEncoder, a multi-turn potentiometer) in rotations,
    a whole number of 2π in radians, anything else in degrees."""
    span = abs(span)
    if span <= 10.0 and abs(span - round(span)) < 1e-6 and round(span) >= 1:
        return "rotations"
    turns = span / (2.0 * math.pi)
    if turns <= 10.0 and abs(turns - round(turns)) < 1e-6 and round(turns) >= 1:
        return "rad"
    return "deg"


def guess_analogs(listing: dict[str, Any], draft: Draft) -> None:
    """Each analog input (not a gyro) as an absolute encoder of the motor it most likely
    measures: 0..5 V over the travel the program's object reads (its span, in the unit that
    makes it a whole number of turns or else degrees), offset so that simserver's angle is
    what the program reads. Unplaced ones stay in ``draft.analogs``."""
    by_channel: dict[int, dict[str, Any]] = {}
    for obj in listing.get("analogs", []):
        if "channel" in obj and ("span" in obj or obj["channel"] not in by_channel):
            by_channel[obj["channel"]] = obj  # the scaling object over its AnalogInput
    taken = {e["name"] for e in draft.encoders}
    for dev in listing.get("devices", []):
        if dev["role"] != "analog":
            continue
        address = dev["address"]
        obj = by_channel.get(int(address.partition(":")[2]), {})
        best = _closest(obj.get("path", ""), draft.motors)
        if best is None or best.role != "mechanism":
            draft.analogs.append(address)
            continue
        entry: dict[str, Any] = {"address": address, "label": dev["label"],
                                 "path": obj.get("path", ""), "motor": best.name,
                                 "absolute": True, "inverted": False}
        span = obj.get("span")
        kind = draft.mechanisms.get(best.name, ("", ""))[0]
        if span is None:  # a bare AnalogInput: the program reads volts
            entry.update(unit="rotations", full_range=None)
        elif kind == "elevator":  # a multi-turn pot on the drum; the program reads metres
            entry.update(unit="rad", full_range=f"{abs(span) / DRUM_RADIUS:.6g} rad",
                         inverted=span < 0, at_0v=obj["at_0v"], drum=abs(span))
            offset = -obj["at_0v"] if span > 0 else obj["at_0v"]
            entry["offset"] = f"{offset / DRUM_RADIUS + 0.0:.6g} rad"
        else:
            unit = _analog_unit(span)
            entry.update(unit=unit, full_range=f"{abs(span):.6g} {unit}",
                         inverted=span < 0, at_0v=obj["at_0v"])
            offset = -obj["at_0v"] if span > 0 else obj["at_0v"]
            entry["offset"] = f"{offset + 0.0:.6g} {unit}"
        entry["name"] = _unique(_name_of(entry["path"], "") or best.name, taken)
        draft.encoders.append(entry)
