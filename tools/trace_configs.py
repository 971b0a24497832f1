"""Config texts of the traced runs (tools/trace_cases.py): TOML fragments added to the
example configs, and small edits of a config's text (a table's first lines, the start pose,
the drivetrain's fidelity). Some repeat fragments of benchmarks/worlds.py and tests/worlds.py
on purpose: a trace's inputs must stay put when a benchmark or a test changes its own, or the
golden digests would change with them."""

from __future__ import annotations

import re
from pathlib import Path

MECHANISMS = """
[motors.lift]
type = "Kraken X60"
count = 2

[motors.shoulder]
type = "NEO"

[mechanisms.lift]
type = "elevator"
motor = "lift"
gearing = 10
drum_radius = "1 in"
carriage_mass = "8 kg"
max_height = "1.2 m"

[mechanisms.arm]
type = "arm"
motor = "shoulder"
gearing = 60
length = "0.6 m"
mass = "3 kg"
min_angle = "-80 deg"
max_angle = "100 deg"

[encoders.lift]
motor = "lift"
unit = "m"

[switches.lift_top]
mechanism = "lift"
position = "1.1 m"
trigger = "above"
"""

CAMERA = """
[cameras.front]
x = "0.3 m"
z = "0.5 m"
pitch = "-15 deg"
width = 960
height = 720
intrinsics = {{ fx = 600.0, fy = 600.0, cx = 479.5, cy = 359.5 }}
fps = 30
latency = "30 ms"
noise = 0.25
protocol = "{protocol}"
"""

# No drivetrain: every built-in mechanism type, limit switches, encoders, pneumatics and a
# camera with bearing targets.
BENCH = """
[motors.arm]
type = "775pro"

[motors.lift]
type = "Kraken X60"
count = 2
stator_limit = "60 A"

[motors.shooter]
type = "Falcon 500"
neutral = "coast"
ramp = "0.2 s"

[motors.slide]
type = "NEO"

[mechanisms.arm]
type = "arm"
motor = "arm"
gearing = 200
length = "30 in"
mass = "8 kg"

[mechanisms.lift]
type = "elevator"
motor = "lift"
gearing = 10
drum_radius = "1 in"
carriage_mass = "8 kg"
max_height = "1.2 m"
soft_max = "1.1 m"

[mechanisms.shooter]
type = "flywheel"
motor = "shooter"
gearing = 1.5
moment_of_inertia = "0.002 kg*m^2"

[mechanisms.slide]
type = "linear"
motor = "slide"
speed = "1 m/s"
max_position = "0.8 m"

[encoders.arm]
motor = "arm"
unit = "deg"
absolute = true

[encoders.shooter]
motor = "shooter"
unit = "rotations"

[switches.lift_bottom]
mechanism = "lift"
position = "0.01 m"

[switches.lift_top]
mechanism = "lift"
position = "1.0 m"
trigger = "above"

[pneumatics]
tanks = 1
extra_volume = "0.1 L"
switch_off_pressure = "60 psi"
switch_on_pressure = "40 psi"

[solenoids.grab]

[cylinders.grabber]
solenoid = "grab"
bore = "1 in"
stroke = "4 in"

[cameras.target]
x = "0.2 m"
z = "0.4 m"
fps = 50
protocol = "limelight"

[vision.targets.goal]
x = "6 m"
y = "4 m"
z = "2 m"
"""

SHIFTER = """
[solenoids.shift]

[field.obstacles.block]
points = [["3.2 m", "3.5 m"], ["3.6 m", "3.5 m"], ["3.6 m", "4.5 m"], ["3.2 m", "4.5 m"]]
height = "0.5 m"
"""

TANK_KINEMATIC = """
[drivetrain.kinematic]
max_speed = "3 m/s"
deadzone = 0.05
"""

TANK_CHARACTERIZED = """
[drivetrain.characterized.left]
kv = "2.5 V*s/m"
ka = "0.4 V*s^2/m"
ks = "0.3 V"

[drivetrain.characterized.right]
kv = "2.6 V*s/m"
ka = "0.45 V*s^2/m"
ks = "0.3 V"
"""

INTAKE = """
[motors.roller]
type = "775pro"

[mechanisms.intake]
type = "roller_intake"
motor = "roller"
capacity = 1
pieces.near = { x = "3 m", y = "4 m" }
pieces.far = { x = "4.5 m", y = "4.2 m" }
"""

HUB = (4.627, 4.035)  # m: centre of the 2026 blue hub
RING = 2.2  # m: radius of the scrum's start ring


def example(repo: Path, name: str) -> str:
    return (repo / "examples" / name / "simserver.toml").read_text()


def in_table(text: str, table: str, lines: str) -> str:
    """``text`` with ``lines`` added at the top of its ``[table]``."""
    out = text.replace(f"[{table}]\n", f"[{table}]\n{lines}", 1)
    if out == text:
        raise ValueError(f"the config has no [{table}] table")
    return out


def placed(text: str, x: float, y: float, heading_deg: float) -> str:
    """``text`` with its robot starting at (x m, y m, heading deg within ±180)."""
    heading_deg = (heading_deg + 180.0) % 360.0 - 180.0
    out, n = re.subn(r"^start = \{[^}]*\}",
                     f'start = {{ x = "{x:.4f} m", y = "{y:.4f} m", '
                     f'heading = "{heading_deg:.3f} deg" }}', text, count=1, flags=re.M)
    if n != 1:
        raise ValueError("the config has no start = { ... } line")
    return out


def kinematic(text: str, fidelity: str = "kinematic", table: str = "") -> str:
    """``text`` with its drivetrain's fidelity set, and ``table`` (TOML) appended."""
    out, n = re.subn(r'^fidelity = "physical"', f'fidelity = "{fidelity}"', text, count=1,
                     flags=re.M)
    if n != 1:
        raise ValueError('the config has no fidelity = "physical" line')
    return out + table
