"""Swerve and mecanum drivetrains inside the World: motor outputs through controllers and the
battery, encoders on wheels and azimuths, the published drive state, field elements, and the
config checks. The pure models have their own tests (tests/models/test_swerve.py,
test_mecanum.py); these check the wiring, against closed forms and wpimath.

Real configs (examples/swerve and examples/mecanum), real worlds, no mocks.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from wpimath.geometry import Translation2d
from wpimath.kinematics import (
    ChassisSpeeds,
    MecanumDriveKinematics,
    MecanumDriveWheelSpeeds,
    SwerveDrive4Kinematics,
)

from simserver.config.loader import ConfigError, loads
from simserver.contract import topics
from simserver.world import World

ROOT = Path(__file__).resolve().parent.parent
SWERVE = (ROOT / "examples/swerve/simserver.toml").read_text()
MECANUM = (ROOT / "examples/mecanum/simserver.toml").read_text()
INCH = 0.0254
H = 0.005  # s: substep of both examples
GRAVITY = 9.80665


def world(text: str, edits: tuple[tuple[str, str], ...] = (), extra: str = "") -> World:
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    return World(loads(text + extra))


def drive_all(w: World, duty: float, steer: float = 0.0) -> None:
    for name in w.motors:
        w.set_motor(name, steer if name.endswith("steer") else duty)


# --- swerve ---------------------------------------------------------------------------------


def test_swerve_straight_encoders_read_wheel_travel_through_the_gearing():
    """Drive rotor encoders (rotations at the motor) equal wheel travel / circumference ×
    6.75 to 1e-9, and the chassis moved the same distance as the wheels: at 10 % duty the
    stall force (about 100 N a module) stays under traction (μ·m·g/4 ≈ 140 N), so nothing
    slips. (At 50 % from rest Krakens do spin the wheels: see the traction test.)"""
    w = world(SWERVE)
    drive_all(w, 0.1)
    for _ in range(100):
        w.step(0.02)
    snap = w.snapshot()
    travelled = snap.x - 2.0
    circumference = math.pi * 4 * INCH
    for name in ("fl_drive", "fr_drive", "bl_drive", "br_drive"):
        rotations, rps = snap.encoders[name]
        assert rotations == pytest.approx(travelled / circumference * 6.75, rel=1e-9)
        assert rps == pytest.approx(snap.vx / circumference * 6.75, rel=1e-6)
    assert snap.y == pytest.approx(2.0, abs=1e-12)
    assert snap.heading == pytest.approx(0.0, abs=1e-12)


def test_swerve_cancoders_read_azimuth_plus_magnet_offset_within_one_turn():
    """Absolute encoders: (azimuth + offset) mod 1 rotation; the relative steer state moves
    them all together when every steer motor turns alike."""
    w = world(SWERVE)
    drive_all(w, 0.0, steer=0.2)
    for _ in range(20):
        w.step(0.02)
    snap = w.snapshot()
    assert w.drivetrain is not None
    azimuth = float(w.drivetrain.model.steer_angle[0]) / (2 * math.pi)
    assert azimuth > 0.05  # it turned
    offsets = {"fl_azimuth": 0.125, "fr_azimuth": -0.25, "bl_azimuth": 0.375,
               "br_azimuth": 0.0}
    for name, offset in offsets.items():
        reading, _ = snap.encoders[name]
        assert 0.0 <= reading < 1.0
        assert reading == pytest.approx((azimuth + offset) % 1.0, abs=1e-9)


def test_swerve_module_states_match_wpimath_forward_kinematics_when_rolling():
    """At steady speed with consistent module angles, the published chassis speeds equal
    wpimath's forward kinematics of the published module states (1e-6 m/s)."""
    w = world(SWERVE)
    drive_all(w, 0.6)
    for _ in range(50):
        w.step(0.02)
    snap = w.snapshot()
    loc = [Translation2d(0.288925, 0.288925), Translation2d(0.288925, -0.288925),
           Translation2d(-0.288925, 0.288925), Translation2d(-0.288925, -0.288925)]
    kin = SwerveDrive4Kinematics(*loc)
    states = snap.drive["drive/module_states"]
    speeds = kin.toChassisSpeeds(tuple(states))
    assert (speeds.vx, speeds.vy, speeds.omega) == pytest.approx(snap.chassis_speeds, abs=1e-6)
    assert len(states) == 4


def test_swerve_battery_sags_and_supplies_the_motor_currents():
    """Accelerating from rest: the bus sags below the open-circuit voltage by R·I with I the
    battery current (1e-9), and the drive motors draw current."""
    w = world(SWERVE)
    drive_all(w, 1.0)
    w.step(H)
    snap = w.snapshot()
    assert snap.battery_voltage < 12.7 - 1.0
    assert snap.battery_voltage == pytest.approx(12.7 - 0.015 * snap.battery_current, rel=1e-9)
    for name in ("fl_drive", "fr_drive", "bl_drive", "br_drive"):
        assert snap.currents[name] > 50.0


def test_swerve_traction_limits_launch_acceleration_to_mu_g():
    """Full power from rest on low-friction wheels: the chassis gains μ·g·t exactly while the
    wheels spin up faster than the robot moves (their encoders run ahead)."""
    w = world(SWERVE, (("friction = 1.1", "friction = 0.3"),))
    drive_all(w, 1.0)
    w.step(0.05)
    snap = w.snapshot()
    assert snap.chassis_speeds[0] == pytest.approx(0.3 * GRAVITY * 0.05, rel=1e-9)
    rim = snap.drive["drive/module_states"][0].speed
    assert rim > 1.5 * snap.chassis_speeds[0]


def test_swerve_drive_state_topics_carry_the_structs():
    w = world(SWERVE)
    drive_all(w, 0.4)
    w.step(0.1)
    values = topics.output_values(w.snapshot())
    speeds = values[topics.CHASSIS_SPEEDS]
    assert isinstance(speeds, ChassisSpeeds)
    assert speeds.vx == pytest.approx(w.snapshot().chassis_speeds[0], rel=1e-12)
    states = values[topics.drive_output("drive/module_states")]
    published = w.snapshot().drive["drive/module_states"]
    assert [s.speed for s in states] == pytest.approx([s.speed for s in published])
    names = {spec.name: spec.type for spec in topics.contract_for(w.cfg)}
    assert names[topics.drive_output("drive/module_states")] == "struct:SwerveModuleState[]"
    assert names[topics.CHASSIS_SPEEDS] == "struct:ChassisSpeeds"


def test_swerve_runs_are_bit_identical():
    def run() -> list[float]:
        w = world(SWERVE)
        out = []
        for k in range(100):
            drive_all(w, 0.7 * math.sin(0.05 * k), steer=0.3 * math.cos(0.07 * k))
            w.step(0.02)
            s = w.snapshot()
            out += [s.x, s.y, s.heading, s.battery_voltage]
        return out

    assert run() == run()


def test_kinematic_swerve_fidelity_moves_at_duty_times_max_speed():
    w = world(SWERVE, (('fidelity = "physical"', 'fidelity = "kinematic"\nmax_speed = "4 m/s"'),))
    drive_all(w, 0.5)
    w.step(1.0)
    assert w.snapshot().x == pytest.approx(2.0 + 2.0, rel=1e-12)


# --- mecanum --------------------------------------------------------------------------------


def strafe(w: World, duty: float) -> None:
    """Left strafe with the example's right side inverted in config: FL −, FR +, RL +, RR −
    at the wheels (the inputs carry the robot program's inversion)."""
    w.set_motor("front_left", -duty)
    w.set_motor("rear_right", duty)  # inverted: wheel turns backward
    w.set_motor("front_right", -duty)  # inverted: wheel turns forward
    w.set_motor("rear_left", duty)


def test_mecanum_strafes_sideways_and_wheels_agree_with_wpimath():
    w = world(MECANUM)
    strafe(w, 0.6)
    for _ in range(100):
        w.step(0.02)
    snap = w.snapshot()
    vx, vy, omega = snap.chassis_speeds
    assert vy > 1.0
    assert abs(vx) < 1e-9 and abs(omega) < 1e-9
    kin = MecanumDriveKinematics(Translation2d(0.254, 0.2794), Translation2d(0.254, -0.2794),
                                 Translation2d(-0.254, 0.2794), Translation2d(-0.254, -0.2794))
    speeds = kin.toChassisSpeeds(snap.drive["drive/wheel_speeds"])
    assert (speeds.vx, speeds.vy, speeds.omega) == pytest.approx((vx, vy, omega), abs=1e-6)
    assert isinstance(topics.output_values(snap)[topics.drive_output("drive/wheel_speeds")],
                      MecanumDriveWheelSpeeds)


def test_mecanum_wheel_encoders_count_wheel_travel_in_ticks():
    w = world(MECANUM)
    strafe(w, 0.6)
    for _ in range(50):
        w.step(0.02)
    snap = w.snapshot()
    circumference = math.pi * 6 * INCH
    assert w.drivetrain is not None
    for name, wheel in (("front_left", 0), ("front_right", 1), ("rear_left", 2),
                        ("rear_right", 3)):
        ticks, _ = snap.encoders[name]
        travel = float(w.drivetrain.model.wheel_angle[wheel]) * 3 * INCH
        assert ticks == math.floor(travel / circumference * 360)


# --- the field ------------------------------------------------------------------------------


def test_robot_stops_at_a_field_element_and_counts_the_hit():
    """Driving at the 2026 blue hub (about x 4.0..5.2 m, y 3.4..4.6 m) from x = 2 m: the
    robot ends outside it with an obstacle hit counted; without elements it drives through."""
    start = 'start = { x = "2 m", y = "4 m", heading = "0 deg" }'
    edits = (('start = { x = "2 m", y = "2 m", heading = "0 deg" }', start),)
    blocked = world(SWERVE, (*edits, ('season = "2026"', 'season = "2026"\nelements = true')))
    free = world(SWERVE, edits)
    for w in (blocked, free):
        drive_all(w, 0.5)
        for _ in range(150):
            w.step(0.02)
    hub = [o for o in blocked.obstacles.obstacles if "hub" in o.name.lower()
           and min(p[0] for p in o.points) < 8.0]
    assert len(hub) == 1
    front = min(p[0] for p in hub[0].points)
    half_length = 34 * INCH / 2
    assert blocked.snapshot().x <= front - half_length + 1e-6
    assert blocked.snapshot().obstacle_hits >= 1
    assert free.snapshot().x > front + 1.0
    assert free.snapshot().obstacle_hits == 0


def test_custom_obstacle_from_config_blocks_the_robot():
    extra = """
[field.obstacles.crate]
points = [["4 m", "1 m"], ["5 m", "1 m"], ["5 m", "3 m"], ["4 m", "3 m"]]
height = "0.5 m"
"""
    w = world(SWERVE, extra=extra)
    drive_all(w, 0.5)
    for _ in range(150):
        w.step(0.02)
    assert w.snapshot().x <= 4.0 - 34 * INCH / 2 + 1e-6
    assert w.snapshot().obstacle_hits >= 1


def test_concave_or_short_obstacles_are_config_errors():
    for points in ('[["4 m", "1 m"], ["5 m", "1 m"]]',
                   '[["0 m", "0 m"], ["2 m", "0 m"], ["1 m", "0.2 m"], ["2 m", "2 m"], '
                   '["0 m", "2 m"]]'):
        with pytest.raises(ConfigError) as exc:
            loads(SWERVE + f"\n[field.obstacles.bad]\npoints = {points}\n", source="s.toml")
        assert "field.obstacles.bad.points" in str(exc.value)
        assert "s.toml" in str(exc.value)


# --- config checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(("old", "new", "key", "words"), [
    ('steer = "fl_steer"', 'steer = "fr_steer"', "drivetrain.modules.front_left.steer",
     "already"),
    ('drive = "fl_drive"', 'drive = "nope"', "drivetrain.modules.front_left.drive",
     "no motor"),
    ('x = "-11.375 in"\ny = "-11.375 in"', 'x = "11.375 in"\ny = "11.375 in"',
     "drivetrain.modules", "share a location"),
])
def test_swerve_config_errors_name_the_key(old: str, new: str, key: str, words: str):
    text = SWERVE.replace(old, new, 1)
    assert text != SWERVE
    with pytest.raises(ConfigError) as exc:
        loads(text, source="swerve.toml")
    message = str(exc.value)
    assert key in message and words in message.lower() and "swerve.toml" in message


def test_steer_encoder_in_length_units_is_refused():
    text = SWERVE.replace('[encoders.fl_azimuth]\nmotor = "fl_steer"\nunit = "rotations"',
                          '[encoders.fl_azimuth]\nmotor = "fl_steer"\nunit = "m"', 1)
    with pytest.raises(ConfigError) as exc:
        loads(text.replace("absolute = true\noffset = \"0.125 rotations\"\n", "", 1))
    assert "encoders.fl_azimuth.unit" in str(exc.value)


def test_one_module_is_not_a_swerve():
    head, _, _ = SWERVE.partition("[drivetrain.modules.front_right]")
    with pytest.raises(ConfigError) as exc:
        loads(head)
    assert "at least 2 modules" in str(exc.value)


def test_relative_steer_encoder_counts_rotor_turns_from_zero():
    """A Talon FX rotor sensor on a steer motor (relative, mount = motor): azimuth turns ×
    150/7, counted from 0 at reset, to 1e-9."""
    extra = """
[encoders.fl_steer_rotor]
motor = "fl_steer"
unit = "rotations"
mount = "motor"
"""
    w = world(SWERVE, extra=extra)
    drive_all(w, 0.0, steer=0.3)
    for _ in range(25):
        w.step(0.02)
    assert w.drivetrain is not None
    azimuth_turns = float(w.drivetrain.model.steer_angle[0]) / (2 * math.pi)
    reading, rate = w.snapshot().encoders["fl_steer_rotor"]
    assert reading == pytest.approx(azimuth_turns * 150 / 7, rel=1e-9)
    assert rate == pytest.approx(float(w.drivetrain.model.steer_rate[0]) / (2 * math.pi) * 150 / 7,
                                 rel=1e-9)
    assert abs(reading) > 1.0



def test_mechanism_rotor_encoder_on_a_coupled_swerve_reads_its_mechanism():
    """A SPARK's built-in encoder (mount = motor) on an elevator beside a coaxial swerve with
    coupling_ratio: it reads the drum through the elevator's gearing, untouched by the
    swerve's coupling (it used to be looked up among the modules and stopped simserver with
    KeyError; found running pyreefscape's simserver init config)."""
    text = SWERVE.replace("steer_gearing = 21.428571428571 # 150/7",
                          "steer_gearing = 21.428571428571\ncoupling_ratio = 3.5", 1)
    extra = """
[motors.climber]
type = "NEO"

[mechanisms.climber]
type = "elevator"
motor = "climber"
gearing = 10
drum_radius = "1 in"
carriage_mass = "5 kg"
max_height = "1.2 m"

[encoders.climber_rotor]
motor = "climber"
unit = "rotations"
mount = "motor"
"""
    w = world(text, extra=extra)
    w.set_motor("climber", 0.5)
    for _ in range(25):
        w.step(0.02)
    height = w.joint_position("climber")
    rotations, _ = w.snapshot().encoders["climber_rotor"]
    assert height is not None and height > 0.05
    assert rotations == pytest.approx(height / INCH / (2 * math.pi) * 10, rel=1e-9)

def test_coupled_drive_rotor_reads_wheel_turns_plus_coupling_times_azimuth():
    """A coaxial module's coupling (drivetrain.coupling_ratio): while the modules steer, each
    drive rotor sensor reads drive_gearing·wheel turns + coupling_ratio·azimuth turns, to 1e-9,
    negated on the inverted right side as its motor turns; a wheel-mounted encoder in metres
    sees the wheel alone. This is the relation CTRE's swerve odometry inverts."""
    couple = 50 / 14
    text = SWERVE.replace("steer_gearing = 21.428571428571 # 150/7",
                          f"steer_gearing = 21.428571428571\ncoupling_ratio = {couple!r}", 1)
    text = text.replace('[motors.fr_drive]\ntype = "Kraken X60"',
                        '[motors.fr_drive]\ntype = "Kraken X60"\ninverted = true', 1)
    w = world(text, extra='\n[encoders.fl_travel]\nmotor = "fl_drive"\nunit = "m"\n')
    drive_all(w, 0.05, steer=0.3)
    for _ in range(30):
        w.step(0.02)
    snap = w.snapshot()
    assert w.drivetrain is not None
    model = w.drivetrain.model
    for i, (name, sign) in enumerate((("fl_drive", 1.0), ("fr_drive", -1.0))):
        wheel = float(model.wheel_angle[i]) / (2 * math.pi)
        azimuth = float(model.steer_angle[i]) / (2 * math.pi)
        rate = float(model.steer_rate[i]) / (2 * math.pi)
        assert abs(azimuth) > 0.1  # the module turned
        rotations, rps = snap.encoders[name]
        assert rotations == pytest.approx(sign * (6.75 * wheel + couple * azimuth), abs=1e-9)
        wheel_rps = float(model.wheel_speed[i]) / (2 * math.pi)
        assert rps == pytest.approx(sign * (6.75 * wheel_rps + couple * rate), abs=1e-9)
    travel, _ = snap.encoders["fl_travel"]
    assert travel == pytest.approx(float(model.wheel_angle[0]) * 2 * INCH, abs=1e-12)
