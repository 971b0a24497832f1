"""Config fragments and world builders shared by the world-level tests (the bundled kitbot plus
mechanisms)."""

from __future__ import annotations

from simserver.config.loader import default_config_text, loads
from simserver.world import World

# A robot with no [drivetrain]: an arm on a bench (ArmSimulation's arm).
ARM_BENCH = """
[motors.arm]
type = "775pro"
hal = "pwm:2"

[mechanisms.arm]
type = "arm"
motor = "arm"
gearing = 200
length = "30 in"
mass = "8 kg"
"""

# The elevator and arm tables used across tests; each test adds the motor table it needs.
LIFT = """
[mechanisms.lift]
type = "elevator"
motor = "lift"
gearing = 10
drum_radius = "1 in"
carriage_mass = "8 kg"
max_height = "1.2 m"
"""

ARM = """
[mechanisms.arm]
type = "arm"
motor = "shoulder"
gearing = 60
length = "0.6 m"
mass = "3 kg"
min_angle = "-80 deg"
max_angle = "100 deg"
"""

TWO_KRAKENS = '\n[motors.lift]\ntype = "Kraken X60"\ncount = 2\n'  # for LIFT
SHOULDER_NEO = '\n[motors.shoulder]\ntype = "NEO"\n'  # for ARM
#: Appended to the bundled kitbot: the ideal tank of the closed forms (no losses, rigid traction).
IDEAL_DRIVE = "\n[drivetrain.losses]\nideal = true\n"


def make_world(extra: str = "", base: str | None = None) -> World:
    """A World of ``base`` (default: the bundled kitbot) plus the TOML in ``extra``."""
    return World(loads((default_config_text() if base is None else base) + extra))


# Two wired solenoids (CTRE channel 1, REV channel 15) and two wired limit switches on LIFT (an
# inverted one on DIO 3, one on DIO 4): the robot-side wiring tests' common fragment.
WIRED_SOLENOIDS_SWITCHES = """
[solenoids.claw]
hal = "ctre:1"

[solenoids.shift]
hal = "rev:15"

[switches.bottom]
mechanism = "lift"
position = "0 m"
hal = "!dio:3"

[switches.top]
mechanism = "lift"
position = "1.1 m"
trigger = "above"
hal = "dio:4"
"""
