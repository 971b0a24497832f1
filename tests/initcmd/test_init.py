"""`simserver init` on real robot programs (tests/initcmd/programs): the drafted config passes
`simserver check`, wires every device, and after filling in only the physical values marked
`# CONFIRM:` gives a lock-step run whose odometry or mechanism reading matches simserver's
truth.

Discovery moves each program's NT server to free ports, so `init` itself needs no lock; the
lock-step runs use tests/e2e/robots.RobotProgram, which holds the port-5810 lock."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from simserver.cli import main
from simserver.config.loader import load, loads
from tests.e2e.robots import ROBOT_LOCK, RobotProgram, port_free, simserver
from tests.io.test_wpilog import read_log
from tests.locks import FileLock
from tests.ntutil import free_port

PROGRAMS = Path(__file__).parent / "programs"


def init(robot: Path, out: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["init", str(robot), "-o", str(out), *extra])
    return result.exit_code, result.output + (result.stderr or "")


def confirm(text: str, key: str, value: str, table: str | None = None) -> str:
    """Replace the value of a `# CONFIRM:` line ``key = ...`` (in [``table``] if given)."""
    pattern = re.compile(rf"^{re.escape(key)} = [^#\n]*#\s*CONFIRM:.*$", re.M)
    start = 0 if table is None else text.index(f"[{table}]")
    match = pattern.search(text, start)
    assert match, (key, table)
    return text[:match.start()] + f"{key} = {value}" + text[match.end():]


def lockstep(cfg: Path) -> int:
    """Append a lock-step [bridge] on a free port; return the port."""
    port = free_port()
    cfg.write_text(cfg.read_text() + f"\n[bridge]\nlockstep = true\nport = {port}\n")
    return port


def test_init_refuses_to_overwrite_without_force(tmp_path):
    out = tmp_path / "simserver.toml"
    out.write_text("# mine\n")
    code, text = init(PROGRAMS / "armbot", out)
    assert code == 2 and "exists" in text and "--force" in text
    assert out.read_text() == "# mine\n"


def test_init_without_robot_py_exits_2(tmp_path):
    code, text = init(tmp_path, tmp_path / "simserver.toml")
    assert code == 2 and "no robot.py" in text
    assert not (tmp_path / "simserver.toml").exists()


def test_init_shows_the_output_of_a_program_that_fails_in_robot_init(tmp_path):
    code, text = init(PROGRAMS / "crashbot", tmp_path / "simserver.toml")
    assert code == 1
    assert "the intake is not plugged in" in text
    assert not (tmp_path / "simserver.toml").exists()


def test_init_gives_up_on_a_program_that_never_finishes_robot_init(tmp_path):
    code, text = init(PROGRAMS / "hangbot", tmp_path / "simserver.toml", "--timeout", "5")
    assert code == 1
    assert "did not list its devices within 5 s" in text
    assert "waiting for a camera that never comes" in text
    assert not (tmp_path / "simserver.toml").exists()


@pytest.mark.robot  # a robot program on port 5810
def test_discovery_moves_the_nt_server_off_port_5810():
    from simserver.initcmd.discover import discover

    with FileLock(ROBOT_LOCK):  # no other robot program of the tests on 5810 now
        assert port_free(5810)
        listing = discover(PROGRAMS / "armbot")
    assert listing["robot_class"] == "MyRobot"
    # The program ran its loops with its NT server on the bridge's ports, and RobotBase's own
    # start on 5810 did nothing.
    assert 5810 not in listing["nt_ports"] and 1735 not in listing["nt_ports"]
    assert listing["listening_5810"] is False


def wired(cfg_path: Path) -> set[str]:
    cfg = load(cfg_path)
    out = {str(a) for m in cfg.motors.values() for a in m.hal}
    out |= {str(a) for e in cfg.encoders.values() for a in e.hal}
    out |= {str(a) for a in cfg.gyro.hal}
    return out


def test_init_diffbot_wires_every_device_and_finds_the_tank_drive(tmp_path):
    out = tmp_path / "simserver.toml"
    code, text = init(PROGRAMS / "diffbot", out)
    assert code == 0, text
    cfg = load(out)
    assert cfg.drivetrain_type == "differential"
    assert cfg.drivetrain.track_width == pytest.approx(0.762)
    assert {"pwm:1", "pwm:2", "pwm:3", "pwm:4", "encoder:0", "encoder:2",
            "analoggyro:0"} <= wired(out)
    assert cfg.motors[cfg.drivetrain.right].inverted and not cfg.motors[
        cfg.drivetrain.left].inverted
    assert {e.motor: e.unit for e in cfg.encoders.values()} == {"left": "m", "right": "m"}


def run_beside(program: str, cfg: Path, env: dict[str, str], *args: str,
               mode: str = "autonomous", fast: bool = True) -> str:
    """A lock-step `simserver run cfg --lockstep [--fast] --enable MODE ARGS` beside the test
    program, both to a clean exit; the program's output. Not ``fast`` for Phoenix 6 devices,
    which it simulates on a wall-clock thread."""
    lockstep(cfg)
    robot = RobotProgram(PROGRAMS / program, cfg, cfg.parent, env=env)
    try:
        robot.wait_ready()
        run = simserver(str(cfg), "--lockstep", *(("--fast",) if fast else ()), "--enable",
                        mode, *args)
        assert run.returncode == 0, run.stderr
        assert robot.wait_exit(30) == 0, robot.output()
        return robot.output()
    finally:
        robot.close()


# What a team fills in after `init`: only motor types, gearing, sizes and mass (the values the
# test programs' code assumes), as (key, value, table or None for the first CONFIRM line). The
# tank and mecanum programs' wheels come from their drive encoders' distance per pulse.
DRIVE_CONFIRMS = {
    "diffbot": [("type", '"NEO"', "motors.left"), ("type", '"NEO"', "motors.right"),
                ("gearing", "8.45", None),
                ("mass", '"50 lb"', None), ("width", '"39 in"', "robot")],
    "mecanumbot": [*(("type", '"NEO"', f"motors.{c}") for c in
                     ("front_left", "front_right", "back_left", "back_right")),
                   ("gearing", "10.71", None),
                   ("mass", '"50 lb"', None), ("length", '"39 in"', "robot"),
                   ("width", '"39 in"', "robot")],
    "swervebot": [*(("type", '"NEO"', f"motors.{c}_{k}") for c in
                    ("front_left", "front_right", "back_left", "back_right")
                    for k in ("drive", "turning")),
                  ("wheel_diameter", '"4 in"', None), ("drive_gearing", "6.75", None),
                  ("steer_gearing", "12.8", None), ("mass", '"50 lb"', None),
                  ("length", '"39 in"', "robot"), ("width", '"39 in"', "robot")],
}



def _motors(names: list[str], extra: dict[str, str] | None = None) -> str:
    """[motors.<name>] NEO tables on PWM 1, 2, ... in order (``extra``: more lines by name)."""
    return "".join(f'[motors.{n}]\ntype = "NEO"\n{(extra or {}).get(n, "")}hal = "pwm:{i}"\n'
                   for i, n in enumerate(names, 1))


def _encoders(names: list[str], units: list[str], inverted: tuple[str, ...] = ()) -> str:
    """[encoders.<name>] on encoder:0, :2, ... each measuring the motor of the same name
    (``inverted``: the names whose program reverses them)."""
    return "".join(f'[encoders.{n}]\nmotor = "{n}"\nunit = "{u}"\n'
                   + ("inverted = true\n" if n in inverted else "")
                   + f'hal = "encoder:{2 * i}"\n'
                   for i, (n, u) in enumerate(zip(names, units, strict=True)))


CORNER_NAMES = ["front_left", "front_right", "back_left", "back_right"]
SWERVE_MOTORS = [f"{c}_{k}" for c in CORNER_NAMES for k in ("drive", "turning")]
# The configs a person would write by hand for the test programs.
HAND_WRITTEN = {
    "diffbot": """
[robot]
mass = "50 lb"
width = "39 in"
[motors.left]
type = "NEO"
count = 2
hal = ["pwm:1", "pwm:2"]
[motors.right]
type = "NEO"
count = 2
inverted = true
hal = ["pwm:3", "pwm:4"]
[drivetrain]
track_width = "0.762 m"
wheel_diameter = "4 in"
gearing = 8.45
[encoders.left]
motor = "left"
hal = "encoder:0"
[encoders.right]
motor = "right"
hal = "encoder:2"
[gyro]
hal = "analoggyro:0"
""",
    "mecanumbot": '[robot]\nmass = "50 lb"\nlength = "39 in"\nwidth = "39 in"\n'
    + _motors(CORNER_NAMES, {n: "inverted = true\n" for n in ("front_right", "back_right")})
    + """[drivetrain]
type = "mecanum"
front_left = "front_left"
front_right = "front_right"
rear_left = "back_left"
rear_right = "back_right"
track_width = "0.762 m"
wheelbase = "0.762 m"
wheel_diameter = "6 in"
gearing = 10.71
""" + _encoders(CORNER_NAMES, ["m"] * 4, ("front_right", "back_right"))
    + '[gyro]\nhal = "analoggyro:0"\n',
    "swervebot": '[robot]\nmass = "50 lb"\nlength = "39 in"\nwidth = "39 in"\n'
    + _motors(SWERVE_MOTORS) + """[drivetrain]
type = "swerve"
wheel_diameter = "4 in"
drive_gearing = 6.75
steer_gearing = 12.8
""" + "".join(f'[drivetrain.modules.{c}]\nx = "{x} m"\ny = "{y} m"\ndrive = "{c}_drive"\n'
              f'steer = "{c}_turning"\n'
              for c, x, y in zip(CORNER_NAMES, (0.381, 0.381, -0.381, -0.381),
                                 (0.381, -0.381, 0.381, -0.381), strict=True))
    + _encoders(SWERVE_MOTORS, ["m", "rad"] * 4) + '[gyro]\nhal = "analoggyro:0"\n',
}


@pytest.mark.parametrize("program", list(DRIVE_CONFIRMS))
def test_init_then_confirmed_values_is_the_hand_written_config(program, tmp_path):
    cfg = tmp_path / "simserver.toml"
    code, text = init(PROGRAMS / program, cfg)
    assert code == 0, text
    draft = cfg.read_text()
    for key, value, table in DRIVE_CONFIRMS[program]:
        draft = confirm(draft, key, value, table)
    assert loads(draft) == loads(HAND_WRITTEN[program])


ODOMETRY_TOLERANCE = {"diffbot": 0.05, "mecanumbot": 0.2, "swervebot": 0.01}  # m


@pytest.mark.robot  # a robot program on port 5810
@pytest.mark.parametrize("program", list(DRIVE_CONFIRMS))
def test_drive_program_after_init_and_confirmed_values_odometry_matches_truth(program,
                                                                            tmp_path):
    cfg = tmp_path / "simserver.toml"
    code, text = init(PROGRAMS / program, cfg)
    assert code == 0, text
    draft = cfg.read_text()
    for key, value, table in DRIVE_CONFIRMS[program]:
        draft = confirm(draft, key, value, table)
    cfg.write_text(draft)
    log, out = tmp_path / "odometry.json", tmp_path / "run.json"
    run_beside(program, cfg, {"ODOMETRY_LOG": str(log)}, "--duration", "4", "--json",
               str(out))
    truth = json.loads(out.read_text())["summary"]
    odo = json.loads(log.read_text())
    start = load(cfg).robot.start
    moved = (truth["x"] - start.x, truth["y"] - start.y)
    assert math.hypot(*moved) > 1.5, truth  # it drove
    # The program's odometry (encoders and gyro through the bridge) agrees with the truth as
    # with the hand-written config, which is the same config (the test above). Measured:
    # 0.025 m (tank: its wheels spin as it launches, so the encoders run ahead; 2e-5 m with
    # rigid traction), 0.002 m (swerve), 0.13 m (mecanum: its rollers slip sideways while it
    # strafes and turns; tests/e2e/test_holonomic_examples allows 0.1 m for pure strafing).
    assert math.dist((odo["x"], odo["y"]), moved) < ODOMETRY_TOLERANCE[program]
    assert abs(odo["heading"] - truth["heading_deg"]) < 0.1


def test_init_kitchenbot_wires_can_devices_solenoids_and_switches(tmp_path):
    out = tmp_path / "simserver.toml"
    code, text = init(PROGRAMS / "kitchenbot", out)
    assert code == 0, text
    cfg = load(out)
    # DifferentialDrive's sides, found by commanding it (its motors sit in a list).
    assert cfg.drivetrain_type == "differential"
    assert (cfg.drivetrain.left, cfg.drivetrain.right) == ("left", "right")
    assert [str(a) for a in cfg.motors["right"].hal] == ["pwm:1"]
    assert cfg.motors["right"].inverted and not cfg.motors["left"].inverted
    assert cfg.mechanisms["wrist"].type == "arm"
    assert {n: (e.unit, e.mount, e.absolute, str(e.hal[0])) for n, e in cfg.encoders.items()} == {
        "wrist": ("rotations", "wheel", True, "cancoder:6"),
        "wrist_rotor": ("rotations", "motor", False, "talonfx:5"),
        "wrist_pot": ("deg", "wheel", True, "analog:1")}
    assert [str(a) for a in cfg.gyro.hal] == ["pigeon2:7"]
    assert {n: str(s.hal[0]) for n, s in cfg.solenoids.items()} == {"claw": "ctre:0",
                                                                    "shifter": "ctre:2"}
    assert {n: (s.mechanism, str(s.hal[0])) for n, s in cfg.switches.items()} == {
        "wrist_limit": ("wrist", "dio:9")}
    # The double solenoid's two channels, and the potentiometer as an absolute encoder over
    # the 270 degrees the program scales it to.
    assert [str(a) for a in cfg.solenoids["claw"].reverse_hal] == ["ctre:1"]
    pot = cfg.encoders["wrist_pot"]
    assert pot.full_range == pytest.approx(math.radians(270.0))


def test_init_armbot_gives_an_arm_without_drivetrain(tmp_path):
    out = tmp_path / "simserver.toml"
    code, text = init(PROGRAMS / "armbot", out)
    assert code == 0, text
    cfg = load(out)
    assert cfg.drivetrain is None
    assert [(n, s.type) for n, s in cfg.mechanisms.items()] == [("arm", "arm")]
    assert [(e.motor, e.unit, e.hal[0].kind) for e in cfg.encoders.values()] == [
        ("arm", "rad", "encoder")]
    assert wired(out) == {"pwm:2", "encoder:0"}


MECHANISM_CONFIRMS = {
    "armbot": [("type", '"NEO"', "motors.arm"), ("gearing", "200", "mechanisms.arm"),
               ("length", '"30 in"', "mechanisms.arm"), ("mass", '"8 kg"', "mechanisms.arm")],
    "elevatorbot": [("type", '"NEO"', "motors.elevator"),
                    ("gearing", "10", "mechanisms.elevator"),
                    ("drum_radius", '"1 in"', "mechanisms.elevator"),
                    ("carriage_mass", '"4 kg"', "mechanisms.elevator"),
                    ("max_height", '"1.25 m"', "mechanisms.elevator")],
}
MECHANISM_HAND_WRITTEN = {
    "armbot": """
[motors.arm]
type = "NEO"
hal = "pwm:2"
[mechanisms.arm]
type = "arm"
motor = "arm"
gearing = 200
length = "30 in"
mass = "8 kg"
[encoders.arm]
motor = "arm"
unit = "rad"
hal = "encoder:0"
""",
    "elevatorbot": """
[motors.elevator]
type = "NEO"
hal = "pwm:0"
[mechanisms.elevator]
type = "elevator"
motor = "elevator"
gearing = 10
drum_radius = "1 in"
carriage_mass = "4 kg"
max_height = "1.25 m"
[encoders.elevator]
motor = "elevator"
unit = "m"
hal = "encoder:0"
""",
}
# program -> (its log's key, simserver's truth topic, target, tolerance: one encoder count)
MECHANISM_READINGS = {
    "armbot": ("angle", "/simserver/mechanisms/arm/angle", 75.0, 360 / 4096),
    "elevatorbot": ("height", "/simserver/mechanisms/elevator/height", 0.75,
                    2 * math.pi * 0.0254 / 4096),
}


def _confirmed(program: str, cfg: Path) -> str:
    code, text = init(PROGRAMS / program, cfg)
    assert code == 0, text
    draft = cfg.read_text()
    for key, value, table in MECHANISM_CONFIRMS[program]:
        draft = confirm(draft, key, value, table)
    return draft


@pytest.mark.parametrize("program", list(MECHANISM_CONFIRMS))
def test_mechanism_init_then_confirmed_values_is_the_hand_written_config(program, tmp_path):
    draft = _confirmed(program, tmp_path / "simserver.toml")
    # The robot's mass stays a CONFIRM default: it does not matter without a drivetrain.
    assert loads(draft) == loads('[robot]\nmass = "60 lb"\n' + MECHANISM_HAND_WRITTEN[program])


@pytest.mark.robot  # a robot program on port 5810
@pytest.mark.parametrize("program", list(MECHANISM_CONFIRMS))
def test_mechanism_program_after_init_and_confirmed_values_reading_matches_truth(program,
                                                                               tmp_path):
    cfg = tmp_path / "simserver.toml"
    cfg.write_text(_confirmed(program, cfg))
    key, topic, target, count = MECHANISM_READINGS[program]
    log, record = tmp_path / "reading.json", tmp_path / "run.wpilog"
    run_beside(program, cfg, {"READING_LOG": str(log)},
               "--duration", "3", "--record", str(record))
    truth = read_log(record)[topic].values
    moved = truth[-1] - truth[0]  # from the start, as the program's encoder counts
    program_reading = json.loads(log.read_text())[key]
    assert abs(moved - target) < 0.05 * target, truth[-1]  # the PID got there
    assert abs(program_reading - moved) < count


def test_init_clawbot_wires_can_followers_a_potentiometer_and_a_double_solenoid(tmp_path):
    out = tmp_path / "simserver.toml"
    code, text = init(PROGRAMS / "clawbot", out)
    assert code == 0, text
    cfg = load(out)
    # REV follow() (inverted) and Phoenix 6 Follower (opposed): the leader is read, the
    # follower is wired and counted.
    assert {n: ([str(a) for a in m.hal], [str(a) for a in m.followers], m.count)
            for n, m in cfg.motors.items()} == {"arm": (["sparkmax:3"], ["sparkmax:4"], 2),
                                                 "shooter": (["talonfx:1"], ["talonfx:2"], 2)}
    pot = cfg.encoders["pot"]
    assert (pot.motor, str(pot.hal[0]), pot.unit, pot.absolute) == ("arm", "analog:0", "deg",
                                                                      True)
    assert (pot.full_range, pot.offset) == pytest.approx((math.radians(270.0),
                                                          math.radians(90.0)))
    assert [str(a) for a in cfg.solenoids["claw"].hal + cfg.solenoids["claw"].reverse_hal] == [
        "ctre:0", "ctre:1"]


@pytest.mark.robot  # a robot program on port 5810
def test_clawbot_after_init_reads_its_potentiometer_and_holds_its_double_solenoid(tmp_path):
    cfg = tmp_path / "simserver.toml"
    code, text = init(PROGRAMS / "clawbot", cfg)
    assert code == 0, text
    log, record = tmp_path / "reading.json", tmp_path / "run.wpilog"
    output = run_beside("clawbot", cfg, {"READING_LOG": str(log)}, "--duration", "3",
                        "--record", str(record))
    # Every device is wired, followers too, and every address exists.
    assert "does not wire" not in output and "never created" not in output, output
    entries = read_log(record)
    angle = entries["/simserver/mechanisms/arm/angle"].values
    assert angle[0] == pytest.approx(-90.0) and angle[-1] > 0.0  # the P loop lifted it
    # The program's potentiometer reads simserver's arm angle (volts are not quantized in
    # simulation; the last loop's reading is at most one period behind the last sample).
    reading = json.loads(log.read_text())["angle"]
    assert abs(reading - angle[-1]) < 0.5, (reading, angle[-1])
    assert abs(reading - angle[-2]) < 0.05 or abs(reading - angle[-1]) < 0.05
    # kForward for 1 s, kOff for 1 s (the valve holds), then kReverse.
    # The log keeps changes: on within a period of enabling (after sim.enable_delay, 0.5 s),
    # off within a period of 2 s later.
    claw = entries["/simserver/solenoids/claw"].records
    assert [v for _, v in claw] == [False, True, False], claw
    assert 0.5e6 <= claw[1][0] < 0.6e6 and 2.5e6 <= claw[2][0] < 2.6e6, claw
    shooter = entries["/simserver/mechanisms/shooter/velocity"].values
    assert shooter[-1] > 100.0  # rad/s: the Talon FX leader drove both motors


@pytest.mark.robot  # a robot program on port 5810
def test_init_reads_vendor_inversion_and_the_robot_drives_straight_with_it(tmp_path):
    # mirrorbot inverts its right SPARK, its wrist Talon FX and its wrist CANcoder in their own
    # configurations; `init` marks exactly those `inverted`, and with that config the program
    # reads every sensor forward while the robot drives forward and lifts its wrist.
    cfg = tmp_path / "simserver.toml"
    code, text = init(PROGRAMS / "mirrorbot", cfg)
    assert code == 0, text
    loaded = load(cfg)
    assert {n: m.inverted for n, m in loaded.motors.items()} == {
        "left": False, "right": True, "wrist": True}
    assert {n: e.inverted for n, e in loaded.encoders.items()} == {
        "wrist": True, "left_rotor": False, "right_encoder": False, "wrist_rotor": False}
    log, record, out = tmp_path / "reading.json", tmp_path / "run.wpilog", tmp_path / "run.json"
    output = run_beside("mirrorbot", cfg, {"READING_LOG": str(log)}, "--duration", "3",
                        "--record", str(record), "--json", str(out), fast=False)
    assert "does not wire" not in output and "never created" not in output, output
    summary = json.loads(out.read_text())["summary"]
    start = loaded.robot.start
    assert summary["x"] - start.x > 1.0  # it drove forward
    entries = read_log(record)
    truth = {n: entries[f"/simserver/encoders/{n}/position"].values[-1] for n in loaded.encoders}
    # simserver's readings are the devices' raw ones: the mirrored rotors count backward...
    assert truth["left_rotor"] > 10 and truth["right_encoder"] < -10
    assert truth["wrist_rotor"] < -10
    # ...and each device's own inversion turns them forward for the program (the last loop's
    # readings lag the last sample by at most a period of motion).
    reading = json.loads(log.read_text())
    for name, key, sign in (("left_rotor", "left", 1), ("right_encoder", "right", -1),
                            ("wrist_rotor", "wrist_rotor", -1)):
        assert reading[key] > 0, (key, reading)
        assert reading[key] == pytest.approx(sign * truth[name], rel=0.03), (key, truth)
    # The CANcoder reads the wrist's angle within a turn (0 = horizontal).
    arm = entries["/simserver/mechanisms/wrist/angle"].values[-1] / 360.0  # rotations
    assert arm > 0.1  # it lifted from hanging (-0.25)
    off = (reading["wrist_cancoder"] - arm + 0.5) % 1.0 - 0.5
    assert abs(off) < 0.01, (arm, reading)


@pytest.mark.robot  # a robot program on port 5810
def test_potbot_after_init_reads_its_elevator_potentiometer_in_metres(tmp_path):
    # A potentiometer on an elevator's drum that the program scales to metres: `init` makes it
    # an absolute encoder of the drum angle over the travel 1.5 m / drum_radius.
    cfg = tmp_path / "simserver.toml"
    code, text = init(PROGRAMS / "potbot", cfg)
    assert code == 0, text
    pot = load(cfg).encoders["height_pot"]
    assert (pot.unit, pot.absolute) == ("rad", True)
    assert pot.full_range == pytest.approx(1.5 / 0.0254)
    log, record = tmp_path / "reading.json", tmp_path / "run.wpilog"
    run_beside("potbot", cfg, {"READING_LOG": str(log)}, "--duration", "3", "--record",
               str(record), mode="teleop")
    height = read_log(record)["/simserver/mechanisms/elevator/height"].values
    assert abs(height[-1] - 0.2) < 0.02, height[-1]  # the program's PID got there
    reading = json.loads(log.read_text())["height"]
    assert min(abs(reading - h) for h in height[-2:]) < 1e-3, (reading, height[-2:])
