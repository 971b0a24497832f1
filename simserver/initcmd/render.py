"""Write a :class:`simserver.initcmd.draft.Draft` as a commented simserver.toml.

Values the program told (channels, inversion, track width from its kinematics) are written as
they are; values it cannot tell (motor types, gearing, wheel size, mass) get typical values and
a ``# CONFIRM:`` comment saying what to measure.
"""

from __future__ import annotations

import json
import math
from typing import Any

from simserver.initcmd.draft import CONFIRM, Draft, Motor, meaningful, wheel_span
from simserver.units import INCH

# Typical values for a mechanism to confirm: (key, TOML value, what to confirm).
MECHANISM_DEFAULTS = {
    "arm": [("gearing", "100", "reduction from motor to arm"),
            ("length", '"30 in"', "pivot to tip"),
            ("mass", '"5 kg"', "mass of the arm")],
    "elevator": [("gearing", "10", "reduction from motor to drum"),
                 ("drum_radius", '"1 in"', "radius of the drum or sprocket"),
                 ("carriage_mass", '"5 kg"', "mass the motor lifts"),
                 ("max_height", '"1.2 m"', "travel from the bottom")],
    "flywheel": [("gearing", "1", "reduction from motor to wheel"),
                 ("moment_of_inertia", '"0.002 kg*m^2"', "inertia of the wheel")],
}


def _q(text: str) -> str:
    return json.dumps(text)


def _hal(addresses: list[str]) -> str:
    return _q(addresses[0]) if len(addresses) == 1 else "[" + ", ".join(map(_q, addresses)) + "]"


def _motor(m: Motor) -> list[str]:
    what = {"drive": "drive", "steer": "steering", "mechanism": "mechanism"}.get(m.role, "")
    out = [f"[motors.{m.name}]"]
    out.append(f"type = {_q(m.type)}{' ' * 4}{CONFIRM} the motor this {m.cls} drives "
               f"({what}; `simserver motors` lists types)")
    if m.count > 1:
        out.append(f"count = {m.count}                  # leader and {m.count - 1} follower(s)")
    if m.inverted:
        out.append("inverted = true             # the program inverts this controller")
    out.append(f"hal = {_hal(m.hal)}" + (f"    # {m.path}" if m.path else ""))
    if m.followers:
        out.append(f"followers = [{', '.join(map(_q, m.followers))}]    # follow hal "
                   "(not read)")
    return [*out, ""]


def _drivetrain(draft: Draft) -> list[str]:
    dt = draft.drivetrain
    if dt is None:
        return ["# No drivetrain found: the robot stays at its start pose. Add a [drivetrain]",
                "# table (docs/config.md) if it drives.", ""]
    out = [f"# Drivetrain guessed from {dt['why']}.", "[drivetrain]", f"type = {_q(dt['type'])}"]
    if dt["type"] == "differential":
        out += [f"left = {_q(dt['left'])}", f"right = {_q(dt['right'])}"]
        if dt["track_width"]:
            out.append(f'track_width = "{dt["track_width"]:.4g} m"      # from the program\'s '
                       "kinematics")
        else:
            out.append(f'track_width = "26 in"      {CONFIRM} left to right wheel contact lines')
        out += [_wheel_diameter(dt),
                f"gearing = 10.71             {CONFIRM} reduction from motor to wheel"]
    elif dt["type"] == "mecanum":
        out += [f"{c} = {_q(dt[c])}" for c in ("front_left", "front_right", "rear_left",
                                                  "rear_right")]
        for key, default in (("track_width", "22 in"), ("wheelbase", "20 in")):
            if dt[key]:
                out.append(f'{key} = "{dt[key]:.4g} m"      # from the program\'s kinematics')
            else:
                out.append(f'{key} = "{default}"      {CONFIRM}')
        out += [_wheel_diameter(dt),
                f"gearing = 10.71             {CONFIRM} reduction from motor to wheel"]
    else:
        out += _swerve_values(dt.get("ctre"))
        for name, (x, y), drive, steer in dt["modules"]:
            out += ["", f"[drivetrain.modules.{name}]     # position from the program's "
                    "kinematics", f'x = "{x:.4g} m"', f'y = "{y:.4g} m"',
                    f"drive = {_q(drive)}", f"steer = {_q(steer)}"]
    return [*out, ""]


def _wheel_diameter(dt: dict[str, Any]) -> str:
    """A tank or mecanum drivetrain's wheel diameter: the drive encoders', else typical."""
    if "wheel_diameter" in dt:
        return (f'wheel_diameter = "{dt["wheel_diameter"]}"     # from the drive encoders\' '
                "distance per pulse (on the wheel axle)")
    return f'wheel_diameter = "6 in"     {CONFIRM}'


def _swerve_values(ctre: dict[str, float] | None) -> list[str]:
    """Wheel size and gearing: the program's CTRE module constants', else typical ones."""
    if ctre is None:
        return [f'wheel_diameter = "4 in"     {CONFIRM}',
                f"drive_gearing = 6.75        {CONFIRM} reduction from drive motor to wheel",
                f"steer_gearing = 21.43       {CONFIRM} reduction from steer motor to module"]
    why = "# from the program's CTRE swerve module constants"
    return [f'wheel_diameter = "{2 * ctre["wheel_radius"]:.6g} m"    {why} (2 x wheel_radius)',
            f"drive_gearing = {ctre['drive_gearing']!r}    {why}",
            f"steer_gearing = {ctre['steer_gearing']!r}    {why}",
            f"coupling_ratio = {ctre['coupling_ratio']!r}    {why}: CTRE's odometry "
            "subtracts it"]


def _mechanisms(draft: Draft) -> list[str]:
    out = []
    for name, (kind, motor) in draft.mechanisms.items():
        unsure = kind.endswith("?")
        kind = kind.rstrip("?")
        out += [f"[mechanisms.{name}]",
                f"type = {_q(kind)}" + (f"           {CONFIRM} what this motor turns (elevator, "
                                        "arm, flywheel, linear)" if unsure else ""),
                f"motor = {_q(motor)}"]
        out += [f"{key} = {value}{' ' * max(1, 24 - len(key) - len(value))}{CONFIRM} {what}"
                for key, value, what in MECHANISM_DEFAULTS[kind]]
        out.append("")
    return out


def _encoders(draft: Draft) -> list[str]:
    out = []
    for e in draft.encoders:
        if e["motor"] is None or "unit" not in e:
            out += [f"# {e['label']} ({e['path'] or 'no attribute found'}): which motor does it "
                    f"measure? Then add", f"# [encoders.{e['name']}]", "# motor = \"...\"",
                    f"# hal = {_q(e['address'])}", ""]
            continue
        out += [f"[encoders.{e['name']}]" + (f"    # {e['path']}" if e["path"] else ""),
                f"motor = {_q(e['motor'])}"]
        unit = e["unit"]
        if e.get("unit_from") == "physics.py":
            out.append(f"unit = {_q(unit)}" + " " * max(1, 20 - len(unit)) + f"{CONFIRM} the "
                       "program keeps WPILib's distance per pulse (1), so it reads what its "
                       "physics.py writes: WPILib's simulation classes are in rad and m")
        elif e.get("unit_sure") is False:
            out.append(f"unit = {_q(unit)}" + " " * max(1, 20 - len(unit)) + f"{CONFIRM} the "
                       "length unit of the program's distance per pulse (m, ft or in)")
        elif e["address"].startswith("encoder:") and unit != "ticks":
            out.append(f"unit = {_q(unit)}" + " " * max(1, 20 - len(unit))
                       + "# the program's distance-per-pulse turns counts into this unit")
        else:
            out.append(f"unit = {_q(unit)}")
        if unit == "ticks":
            out.append(f"ticks_per_revolution = {e['ticks_per_revolution']}    {CONFIRM}")
        if e.get("mount") == "motor":
            out.append('mount = "motor"            # it turns with the motor')
        if e.get("absolute"):
            out.append("absolute = true")
        if "magnet_offset" in e:
            note = (f"# from the CANcoder's MagnetOffset ({e['magnet_offset']:.6g}): the "
                    "program reads 0 with the module forward" if e["offset_sure"] else
                    f"{CONFIRM} from the CANcoder's MagnetOffset ({e['magnet_offset']:.6g}): "
                    "the program then reads 0 with the arm horizontal")
            out.append(f'offset = "{e["offset"] + 0.0:.6g} rotations"    {note}')
        if "full_range" in e:
            out += _analog_range(e)
        if e["inverted"]:
            out.append("inverted = true             # the program reverses this sensor")
        out += [f"hal = {_q(e['address'])}", ""]
    return out


def _analog_range(e: dict[str, Any]) -> list[str]:
    """The travel (and offset) lines of an analog sensor."""
    if e["full_range"] is None:
        return [f'full_range = "1 rotations"   {CONFIRM} shaft travel over 0..5 V (the '
                "program reads volts)"]
    if "drum" in e:
        out = [f"full_range = {_q(e['full_range'])}    {CONFIRM} drum turn over 0..5 V: the "
               f"program reads {e['drum']:.6g} (m) more at 5 V, over the drum_radius (1 in); "
               "change both together"]
    else:
        out = [f"full_range = {_q(e['full_range'])}    {CONFIRM} shaft travel over 0..5 V (the "
               f"program's {e['path'] or 'sensor'} reads this much more at 5 V than at 0 V)"]
    out.append(f"offset = {_q(e['offset'])}    {CONFIRM} added to the shaft angle (an arm: "
               f"0 = horizontal) before 0..5 V; the program reads {e['at_0v']:.6g} at 0 V, "
               "this makes its reading simserver's angle")
    return out


# Config's default outline (in) and what an outline adds around the outermost wheels: the
# frame beyond the wheel (about 1.25 in) and bumpers (3.25 in), each side.
DEFAULT_OUTLINE = {"length": 32.0, "width": 28.0}
BEYOND_WHEELS = 9.0  # in


def _outline(draft: Draft) -> list[str]:
    """``length``/``width`` lines where the program's wheels are too far apart for the default
    outline (the config would warn that they stick out)."""
    out = []
    for key, span in zip(("length", "width"), wheel_span(draft.drivetrain), strict=True):
        inches = math.ceil(span / INCH + BEYOND_WHEELS)
        if span and inches > DEFAULT_OUTLINE[key]:
            out.append(f'{key} = "{inches} in"    {CONFIRM} outline with bumpers: the '
                       f"program's wheels are {span / INCH:.3g} in apart")
    return out


def render(draft: Draft, program: str) -> str:
    """The simserver.toml text of ``draft`` for the robot program ``program``."""
    out = [f"# simserver.toml for {program}, written by `simserver init` from the devices the",
           "# program created. Check each `# CONFIRM:` value against the robot, then",
           "# `simserver check simserver.toml`. Keys and units: docs/config.md.", "",
           "[robot]", f'mass = "60 lb"      {CONFIRM} with battery and bumpers',
           *_outline(draft), ""]
    for m in draft.motors:
        out += _motor(m)
    out += _drivetrain(draft)
    out += _mechanisms(draft)
    out += _encoders(draft)
    if draft.gyro is not None:
        out += ["[gyro]", f"hal = {_q(draft.gyro)}", ""]
    out += [f"# Another gyro: {g}" for g in draft.extra_gyros]
    for name, address, sol in draft.solenoids:
        out.append(f"[solenoids.{name}]    # {sol['path']}")
        out.append(f"hal = {_q(address)}")
        if "reverse_channel" in sol:
            reverse = f"{address.partition(':')[0]}:{sol['reverse_channel']}"
            out.append(f"reverse_hal = {_q(reverse)}    # a DoubleSolenoid: on after "
                       "forward, off after reverse")
        out.append("")
    joints = [n for n, (k, _) in draft.mechanisms.items() if k.rstrip("?") in ("arm",
                                                                                "elevator")]
    for name, address, path in draft.switches:
        joint = next((j for j in joints if meaningful(j) & meaningful(path)),
                     joints[0] if joints else None)
        if joint is None:
            out += [f"# Digital input {address} ({path or 'no attribute found'}): a limit "
                    f"switch? Add [switches.{name}] with its mechanism and position."]
            continue
        kind = draft.mechanisms[joint][0].rstrip("?")
        at = '"0 m"' if kind == "elevator" else '"0 deg"'
        out += [f"[switches.{name}]" + (f"    # {path}" if path else ""),
                f"mechanism = {_q(joint)}   {CONFIRM} what it senses",
                f"position = {at}          {CONFIRM} where it trips",
                f"hal = {_q(address)}", ""]
    out += [f"# Analog input {a}: a potentiometer or absolute encoder? Add an [encoders.<name>] "
            f'with absolute = true and hal = "{a}".' for a in draft.analogs]
    return "\n".join(out).rstrip() + "\n"
