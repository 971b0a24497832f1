"""The guesses of `simserver init` from discovery listings written by hand (no robot
program): names, followers, units, what is left for the user, and a config that loads."""

from __future__ import annotations

import math

import pytest

from simserver.config.loader import loads
from simserver.initcmd.draft import (
    CONFIRM,
    _analog_unit,
    _angle_unit,
    _length_unit,
    _name_of,
    build,
    words,
)
from simserver.initcmd.render import render


def motor(path: str, channel: int, cls: str = "PWMSparkMax", inverted: bool = False,
          followers: dict[str, int] | None = None) -> dict:
    return {"path": path, "class": cls, "channel": channel, "inverted": inverted,
            "followers": followers or {}}


def pwm(*channels: int) -> list[dict]:
    return [{"role": "motor", "address": f"pwm:{c}", "label": f"PWM {c}", "aliases": [],
             "detail": {}} for c in channels]


def encoder(a: int, dpp: float, reverse: bool = False) -> dict:
    return {"role": "encoder", "address": f"encoder:{a}", "label": f"Encoder on DIO {a}",
            "aliases": [f"encoder:{a + 1}"],
            "detail": {"channels": [a, a + 1], "distance_per_pulse": dpp, "reverse": reverse}}


def test_words_split_camel_case_and_underscores():
    assert words("robot.drive.frontLeftDrive") == ["robot", "drive", "front", "left", "drive"]
    assert words("robot.m_left_leader") == ["robot", "m", "left", "leader"]


@pytest.mark.parametrize(("path", "name"), [
    ("robot.drive.leftLeader", "left"),
    ("robot.arm.motor", "arm"),
    ("robot.swerve.frontLeft.driveMotor", "front_left_drive"),
    ("robot.intakeRoller", "intake_roller"),
    ("", "fallback"),
])
def test_config_names_come_from_the_telling_words_of_the_attribute_path(path, name):
    assert _name_of(path, "fallback") == name


@pytest.mark.parametrize(("dpp", "unit"), [
    (2 * math.pi / 4096, "rad"), (360 / 2048, "deg"), (1 / 42, "rotations"), (0.0123, "ticks"),
])
def test_angle_unit_is_the_one_in_which_a_pulse_is_a_whole_fraction_of_a_turn(dpp, unit):
    assert _angle_unit(dpp)[0] == unit


def test_a_follower_turning_the_other_way_counts_but_is_not_averaged():
    listing = {"devices": pwm(1, 2, 3),
               "motors": [motor("robot.climber", 1, followers={"2": 1, "3": -1}),
                          motor("robot.climberB", 2), motor("robot.climberC", 3)]}
    draft = build(listing)
    [m] = draft.motors
    assert (m.name, m.hal, m.followers, m.count) == ("climber", ["pwm:1", "pwm:2"], ["pwm:3"], 3)
    assert draft.mechanisms == {"climber": ("elevator", "climber")}
    cfg = loads(render(draft, "bot"))
    assert [str(a) for a in cfg.motors["climber"].followers] == ["pwm:3"]


def can_motor(kind: str, can_id: int, label: str) -> dict:
    return {"role": "motor", "address": f"{kind}:{can_id}", "label": label, "aliases": [],
            "detail": {}}


def test_can_followers_are_grouped_under_their_leader_whatever_their_direction():
    listing = {"devices": [can_motor("talonfx", 1, "CANMotor:Talon FX (v6)[1]"),
                           can_motor("talonfx", 2, "CANMotor:Talon FX (v6)[2]"),
                           can_motor("sparkmax", 3, "SPARK MAX [3]"),
                           can_motor("sparkmax", 4, "SPARK MAX [4]"),
                           can_motor("sparkmax", 5, "SPARK MAX [5]")],
               "can": [{"path": "robot.shooter.leader", "class": "TalonFX", "id": 1},
                       {"path": "robot.shooter.follower", "class": "TalonFX", "id": 2,
                        "follows": 1, "opposed": True},
                       {"path": "robot.climber.motor", "class": "SparkMax", "id": 3},
                       {"path": "robot.climber.right", "class": "SparkMax", "id": 4,
                        "follows": 3, "opposed": False},
                       {"path": "robot.climber.third", "class": "SparkMax", "id": 5,
                        "follows": 3, "opposed": True}]}
    draft = build(listing)
    assert [(m.name, m.hal, m.followers, m.count) for m in draft.motors] == [
        ("shooter", ["talonfx:1"], ["talonfx:2"], 2),
        ("climber", ["sparkmax:3"], ["sparkmax:4", "sparkmax:5"], 3)]
    cfg = loads(render(draft, "bot"))
    assert cfg.motors["climber"].count == 3


def test_the_data_port_encoder_a_spark_loop_reads_is_wired_with_the_programs_inversion():
    listing = {"devices": [can_motor("sparkmax", 10, "SPARK MAX [10]"),
                           can_motor("sparkflex", 12, "SPARK Flex [12]")],
               "can": [{"path": "robot.module.turning", "class": "SparkMax", "id": 10,
                        "sensor": "absolute", "sensor_inverted": True},
                       {"path": "robot.arm.motor", "class": "SparkFlex", "id": 12,
                        "sensor": "external", "sensor_inverted": False}]}
    draft = build(listing)
    ports = {e["address"]: e for e in draft.encoders if "/" in e["address"]}
    assert set(ports) == {"sparkmax:10/absolute", "sparkflex:12/external"}
    assert (ports["sparkmax:10/absolute"]["absolute"],
            ports["sparkmax:10/absolute"]["inverted"]) == (True, True)
    assert (ports["sparkflex:12/external"]["absolute"],
            ports["sparkflex:12/external"]["inverted"]) == (False, False)
    cfg = loads(render(draft, "bot"))
    wired = {str(e.hal[0]): e for e in cfg.encoders.values()}
    assert wired["sparkmax:10/absolute"].absolute and wired["sparkmax:10/absolute"].inverted
    assert not wired["sparkflex:12/external"].absolute


@pytest.mark.parametrize(("span", "unit"), [
    (270.0, "deg"), (3600.0, "deg"), (1.0, "rotations"), (10.0, "rotations"),
    (2 * math.pi, "rad"), (-270.0, "deg"), (1.5, "deg"),
])
def test_analog_unit_makes_the_span_whole_turns_or_else_degrees(span, unit):
    assert _analog_unit(span) == unit


def analog(channel: int) -> dict:
    return {"role": "analog", "address": f"analog:{channel}", "label": f"Analog input {channel}",
            "aliases": [], "detail": {}}


def test_a_potentiometer_on_a_mechanism_becomes_an_absolute_encoder_over_its_span():
    listing = {"devices": [*pwm(2), analog(0), analog(1)],
               "motors": [motor("robot.wrist.motor", 2)],
               "analogs": [{"path": "robot.wrist.input", "class": "AnalogInput", "channel": 0},
                           {"path": "robot.wrist.pot", "class": "AnalogPotentiometer",
                            "channel": 0, "at_0v": 200.0, "span": -270.0},
                           {"path": "robot.pressure", "class": "AnalogInput", "channel": 1}]}
    text = render(build(listing), "bot")
    cfg = loads(text)
    # An inverted potentiometer (270 deg at 0 V down to -70 at 5 V): the program reads
    # -((-angle + 200) mod 270) + 200... = the angle, for angles in its travel.
    pot = cfg.encoders["pot"]
    assert (pot.motor, pot.unit, pot.absolute, pot.inverted) == ("wrist", "deg", True, True)
    assert (pot.full_range, pot.offset) == pytest.approx((math.radians(270.0),
                                                          math.radians(200.0)))
    # A pressure sensor measures no motor: left as a comment.
    assert "Analog input analog:1" in text and 'hal = "analog:1"' in text
    assert [str(e.hal[0]) for e in cfg.encoders.values()] == ["analog:0"]


def test_a_motor_with_an_unknown_job_becomes_a_flywheel_to_confirm():
    listing = {"devices": pwm(4), "motors": [motor("robot.thing", 4)]}
    text = render(build(listing), "bot")
    assert 'type = "flywheel"' in text and "what this motor turns" in text
    assert loads(text).drivetrain is None


def test_an_encoder_no_motor_claims_is_left_as_a_comment():
    listing = {"devices": [*pwm(0, 1), encoder(4, 0.001)],
               "motors": [motor("robot.shooter", 0), motor("robot.intake", 1)],
               "encoders": [{"path": "robot.mysteryEncoder", "channels": [4, 5],
                             "distance_per_pulse": 0.001, "reverse": False}]}
    text = render(build(listing), "bot")
    assert '# hal = "encoder:4"' in text
    assert loads(text).encoders == {}


def test_tank_sides_by_name_with_kinematics_track_width_and_reversed_encoder():
    dpp = 2 * math.pi * 0.0762 / 360
    listing = {"devices": [*pwm(0, 1), encoder(0, dpp), encoder(2, dpp, reverse=True),
                           {"role": "gyro", "address": "navx", "label": "navX-Sensor[4]",
                            "aliases": [], "detail": {}}],
               "motors": [motor("robot.m_leftMotor", 0, "PWMTalonSRX"),
                          motor("robot.m_rightMotor", 1, "PWMTalonSRX", inverted=True)],
               "encoders": [{"path": "robot.m_leftEncoder", "channels": [0, 1],
                             "distance_per_pulse": dpp, "reverse": False},
                            {"path": "robot.m_rightEncoder", "channels": [2, 3],
                             "distance_per_pulse": dpp, "reverse": True}],
               "kinematics": [{"path": "robot.kin", "class": "DifferentialDriveKinematics",
                               "track_width": 0.55}]}
    text = render(build(listing), "bot")
    cfg = loads(text)
    assert (cfg.drivetrain.left, cfg.drivetrain.right) == ("left", "right")
    assert cfg.drivetrain.track_width == pytest.approx(0.55)
    assert cfg.motors["left"].type == "CIM" and cfg.motors["right"].inverted
    assert {n: (e.motor, e.unit, e.inverted) for n, e in cfg.encoders.items()} == {
        "left": ("left", "m", False), "right": ("right", "m", True)}
    assert [str(a) for a in cfg.gyro.hal] == ["navx"]
    # 360 counts per turn of a 6 in wheel, in metres: the wheel is the encoders'
    assert cfg.drivetrain.wheel_diameter == pytest.approx(0.1524, rel=1e-9)
    confirms = [line for line in text.splitlines() if CONFIRM in line and line[0] != "#"]
    assert len(confirms) == 5  # mass, width (the wheels sit 22 in apart), 2 motor types,
    # gearing


@pytest.mark.parametrize(("dpp", "unit", "diameter"), [
    (6 * math.pi / 1024, "in", 6.0),  # robotpy/examples HatchbotTraditional
    (0.1524 * math.pi / 2048, "m", 6.0),  # Units.inchesToMeters(6) * pi / 2048
    (4 / 12 * math.pi / 360, "ft", 4.0),
    (3.25 * math.pi / 8192, "in", 3.25),
    (0.0123, "m", None),  # nothing typical: metres, to confirm
])
def test_a_drive_encoders_length_unit_makes_a_typical_wheel_of_a_typical_encoder(dpp, unit,
                                                                                  diameter):
    got_unit, got_diameter = _length_unit(dpp)
    assert got_unit == unit
    assert got_diameter == diameter  # inches, exactly the typical size


def hatchbot(dpp: float) -> dict:
    """robotpy/examples HatchbotTraditional's drive: PWM 0-3 (left1/left2/right1/right2, only
    left1 and right1 in its DifferentialDrive), encoders on DIO 0-1 and 2-3 named leftEncoder
    and rightEncoder, their distance per pulse ``dpp``."""
    drive = "robot.container.drive"
    return {"devices": [*pwm(0, 1, 2, 3), encoder(0, dpp), encoder(2, dpp, reverse=True)],
            "motors": [motor(f"{drive}.left1", 0, "PWMVictorSPX"),
                       motor(f"{drive}.left2", 1, "PWMVictorSPX"),
                       motor(f"{drive}.right1", 2, "PWMVictorSPX", inverted=True),
                       motor(f"{drive}.right2", 3, "PWMVictorSPX")],
            "encoders": [{"path": f"{drive}.leftEncoder", "channels": [0, 1],
                          "distance_per_pulse": dpp, "reverse": False},
                         {"path": f"{drive}.rightEncoder", "channels": [2, 3],
                          "distance_per_pulse": dpp, "reverse": True}],
            "drives": [{"path": f"{drive}.drive", "class": "DifferentialDrive",
                        "left": [0], "right": [2]}]}


def test_numbered_drive_motors_claim_their_sides_encoders_in_the_programs_inches():
    text = render(build(hatchbot(6 * math.pi / 1024)), "hatchbot")
    cfg = loads(text)
    assert (cfg.drivetrain.left, cfg.drivetrain.right) == ("left1", "right1")
    # left1 and the unused left2 share "left" with leftEncoder; the drive side wins
    assert {n: (e.motor, e.unit, e.inverted) for n, e in cfg.encoders.items()} == {
        "left": ("left1", "in", False), "right": ("right1", "in", True)}
    assert cfg.drivetrain.wheel_diameter == pytest.approx(6 * 0.0254, rel=1e-9)
    assert 'wheel_diameter = "6 in"' in text


def test_a_drive_encoder_in_no_typical_unit_is_metres_to_confirm():
    text = render(build(hatchbot(0.0123)), "hatchbot")
    cfg = loads(text)
    assert {e.unit for e in cfg.encoders.values()} == {"m"}
    units = [line for line in text.splitlines() if line.startswith("unit =")]
    assert len(units) == 2 and all(CONFIRM in line for line in units)
    assert any(line.startswith('wheel_diameter = "6 in"') and CONFIRM in line
               for line in text.splitlines())


def test_an_empty_program_gives_a_config_without_drivetrain_that_loads():
    text = render(build({"devices": []}), "empty")
    cfg = loads(text)
    assert cfg.drivetrain is None and cfg.motors == {}
    assert "No drivetrain found" in text


def test_swerve_modules_held_in_a_list_are_named_by_where_the_kinematics_puts_them():
    # REV's MAXSwerve shape: drive.modules[i].driving / .turning, the kinematics a module
    # global of constants.py
    ids = ((11, 10), (15, 14), (13, 12), (17, 16))
    corners = ((0.3, 0.3), (0.3, -0.3), (-0.3, 0.3), (-0.3, -0.3))
    listing = {
        "devices": [can_motor("sparkmax", n, f"SPARK MAX [{n}]") for pair in ids for n in pair],
        "can": [{"path": f"robot.drive.modules[{i}].{part}", "class": "SparkMax", "id": n}
                for i, pair in enumerate(ids) for part, n in zip(("driving", "turning"), pair,
                                                                  strict=True)],
        "kinematics": [{"path": "constants.KINEMATICS", "class": "SwerveDrive4Kinematics",
                        "modules": [list(xy) for xy in corners]}]}
    draft = build(listing)
    assert draft.drivetrain is not None and draft.drivetrain["type"] == "swerve"
    assert [(name, drive, steer) for name, _, drive, steer in draft.drivetrain["modules"]] == [
        ("front_left", "front_left_drive", "front_left_steer"),
        ("front_right", "front_right_drive", "front_right_steer"),
        ("rear_left", "rear_left_drive", "rear_left_steer"),
        ("rear_right", "rear_right_drive", "rear_right_steer")]
    cfg = loads(render(draft, "bot"))
    assert cfg.drivetrain_type == "swerve"
    assert str(cfg.motors["rear_right_steer"].hal[0]) == "sparkmax:16"


def swerve_listing(ctre_modules: list[dict]) -> dict:
    """Four Phoenix 6 modules held in a list (modules[i].drive / .steer / .encoder), as CTRE's
    SwerveDrivetrain holds them; CANcoder 21 is inverted in its configuration."""
    corners = ((0.3, 0.3), (0.3, -0.3), (-0.3, 0.3), (-0.3, -0.3))
    parts = ("drive", "steer")
    return {
        "devices": [can_motor("talonfx", n, f"CANMotor:Talon FX (v6)[{n}]")
                    for i in range(4) for n in (1 + i, 5 + i)]
        + [{"role": "encoder", "address": f"cancoder:{20 + i}", "label": f"CANcoder {20 + i}",
            "aliases": [], "detail": {}} for i in range(4)],
        "can": [{"path": f"robot.dt.modules[{i}].{part}", "class": "TalonFX", "id": n}
                for i in range(4) for part, n in zip(parts, (1 + i, 5 + i), strict=True)]
        + [{"path": f"robot.dt.modules[{i}].encoder", "class": "CANcoder", "id": 20 + i,
            "inverted": i == 1, "magnet_offset": (0.1, 0.2, -0.3, 0.0)[i]} for i in range(4)],
        "kinematics": [{"path": "robot.dt.kinematics", "class": "SwerveDrive4Kinematics",
                        "modules": [list(xy) for xy in corners]}],
        "ctre_modules": ctre_modules}


def ctre_module(i: int, **values: float) -> dict:
    return {"drive_id": 1 + i, "steer_id": 5 + i, "encoder_id": 20 + i, "drive_gearing": 6.12,
            "steer_gearing": 150 / 7, "coupling_ratio": 3.5, "wheel_radius": 0.0508,
            "x": 0.3, "y": 0.3, **values}


def test_ctre_module_constants_give_the_gearing_and_each_cancoder_its_steer_and_offset():
    draft = build(swerve_listing([ctre_module(i) for i in range(4)]))
    text = render(draft, "bot")
    cfg = loads(text)
    dt = cfg.drivetrain
    assert (dt.drive_gearing, dt.steer_gearing, dt.coupling_ratio) == (6.12, 150 / 7, 3.5)
    assert dt.wheel_diameter == pytest.approx(0.1016)
    assert "drive_gearing = 6.12" in text and CONFIRM not in text.split("[drivetrain]")[1] \
        .split("[encoders")[0]
    cancoders = {str(e.hal[0]): e for e in cfg.encoders.values() if e.hal[0].kind == "cancoder"}
    # Phoenix reads direction x raw + MagnetOffset; the offset makes that the module's angle
    assert {a: (e.motor, e.absolute, e.inverted, round(math.degrees(e.offset) / 360, 9))
            for a, e in cancoders.items()} == {
        "cancoder:20": ("front_left_steer", True, False, -0.1),
        "cancoder:21": ("front_right_steer", True, True, 0.2),
        "cancoder:22": ("rear_left_steer", True, False, 0.3),
        "cancoder:23": ("rear_right_steer", True, False, 0.0)}
    assert {e.hal[0].channel: n for n, e in cfg.encoders.items()
            if e.hal[0].kind == "cancoder"} == {
        20: "front_left_azimuth", 21: "front_right_azimuth", 22: "rear_left_azimuth",
        23: "rear_right_azimuth"}


def test_without_ctre_constants_a_cancoder_goes_with_the_steer_motor_beside_it():
    draft = build(swerve_listing([]))
    cfg = loads(render(draft, "bot"))
    assert cfg.drivetrain.coupling_ratio == 0.0  # not known: typical values to confirm
    assert {e.hal[0].channel: e.motor for e in cfg.encoders.values()
            if e.hal[0].kind == "cancoder"} == {
        20: "front_left_steer", 21: "front_right_steer", 22: "rear_left_steer",
        23: "rear_right_steer"}


def test_module_constants_that_disagree_or_name_other_devices_give_no_values():
    odd = [ctre_module(i, drive_gearing=6.75 if i == 3 else 6.12) for i in range(4)]
    assert build(swerve_listing(odd)).drivetrain["ctre"] is None
    other = [ctre_module(i, drive_id=40 + i) for i in range(4)]
    assert build(swerve_listing(other)).drivetrain["ctre"] is None


@pytest.mark.parametrize(("physics_py", "unit"), [(True, "rad"), (False, "deg")])
def test_an_encoder_left_at_one_pulse_reads_what_physics_py_writes(physics_py, unit):
    """robotpy/examples FlywheelBangBangController: no setDistancePerPulse, and its physics.py
    writes FlywheelSim's rad/s into the EncoderSim; without a physics.py, 1 per pulse is a
    360-count encoder's degrees."""
    listing = {"devices": [*pwm(0), encoder(0, 1.0)],
               "motors": [motor("robot.flywheelMotor", 0)],
               "encoders": [{"path": "robot.encoder", "channels": [0, 1],
                             "distance_per_pulse": 1.0, "reverse": False}],
               "physics_py": physics_py}
    text = render(build(listing), "flywheel")
    cfg = loads(text)
    assert {n: (e.motor, e.unit) for n, e in cfg.encoders.items()} == {
        "flywheel": ("flywheel", unit)}
    line = next(line for line in text.splitlines() if line.startswith("unit ="))
    assert (CONFIRM in line and "physics.py" in line) == physics_py
