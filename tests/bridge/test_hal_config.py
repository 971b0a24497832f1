"""HAL device addresses (`simserver.config.hal`) and their validation by the config loader:
which addresses each role accepts, the exact key path and message of every wiring mistake, and
the `[bridge]` section."""

from __future__ import annotations

import pytest

from simserver.config import hal
from simserver.config.hal import HalAddress, HalAddressError, examples, parse
from simserver.config.loader import ConfigError, loads
from tests.worlds import LIFT, WIRED_SOLENOIDS_SWITCHES

# The smallest valid config with a drivetrain: it needs motors named left and right.
BASE = '[drivetrain]\n\n[motors.left]\ntype = "CIM"\n\n[motors.right]\ntype = "CIM"\n'
# A mechanism with a position, so limit switches have something to sense.
LIFT_MOTOR = LIFT + '\n[motors.lift]\ntype = "Kraken X60"\n'


def config_error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as exc:
        loads(text, source="robot.toml")
    return exc.value


def issues(text: str) -> list[tuple[str, str]]:
    return [(i.path, i.message) for i in config_error(text).issues]


def contains(text: str, parts: str | tuple[str, ...]) -> bool:
    """``text`` holds ``parts`` (one string or several)."""
    return all(p in text for p in ((parts,) if isinstance(parts, str) else parts))


def rejected(text: str, role: str) -> bool:
    try:
        parse(text, role)
    except HalAddressError:
        return True
    return False


def left_hal(value: str, right: str | None = None) -> str:
    """The base config with ``hal = <value>`` (TOML) in [motors.left] (and ``right`` in
    [motors.right])."""
    text = f'[drivetrain]\n\n[motors.left]\ntype = "CIM"\nhal = {value}\n\n[motors.right]\n'
    text += 'type = "CIM"\n'
    return text + (f"hal = {right}\n" if right is not None else "")


# --- parse: every kind of every role ------------------------------------------------------------

VALID = [
    ("pwm:0", "motor", HalAddress("pwm", 0)),
    ("pwm:19", "motor", HalAddress("pwm", 19)),
    ("talonfx:62", "motor", HalAddress("talonfx", 62)),
    ("sparkmax:1", "motor", HalAddress("sparkmax", 1)),
    ("sparkflex:2", "motor", HalAddress("sparkflex", 2)),
    ("simdevice:CANMotor:Talon FX (v6)[1]/dutyCycle", "motor",
     HalAddress("simdevice", device="CANMotor:Talon FX (v6)[1]", value="dutyCycle")),
    ("encoder:0", "encoder", HalAddress("encoder", 0)),
    ("encoder:30", "encoder", HalAddress("encoder", 30)),
    ("talonfx:3", "encoder", HalAddress("talonfx", 3)),
    ("cancoder:5", "encoder", HalAddress("cancoder", 5)),
    ("sparkmax:6", "encoder", HalAddress("sparkmax", 6)),
    ("sparkflex:7", "encoder", HalAddress("sparkflex", 7)),
    ("simdevice:MyEncoder[0]/position", "encoder",
     HalAddress("simdevice", device="MyEncoder[0]", value="position")),
    ("analoggyro:0", "gyro", HalAddress("analoggyro", 0)),
    ("analoggyro:1", "gyro", HalAddress("analoggyro", 1)),
    ("adxrs450", "gyro", HalAddress("adxrs450")),
    ("navx", "gyro", HalAddress("navx")),
    ("pigeon2:10", "gyro", HalAddress("pigeon2", 10)),
    ("simdevice:navX-Sensor[4]/Yaw", "gyro",
     HalAddress("simdevice", device="navX-Sensor[4]", value="Yaw")),
    ("ctre:0", "solenoid", HalAddress("ctre", 0)),
    ("ctre:7", "solenoid", HalAddress("ctre", 7)),
    ("rev:15", "solenoid", HalAddress("rev", 15)),
    ("dio:3", "switch", HalAddress("dio", 3)),
    ("!dio:30", "switch", HalAddress("dio", 30, inverted=True)),
]


@pytest.mark.parametrize(("text", "role", "expected"), VALID, ids=[v[0] for v in VALID])
def test_parse_accepts_every_kind_of_its_role(text, role, expected):
    address = parse(text, role)
    assert address == expected
    assert str(address) == text  # the canonical form is what the user wrote
    assert parse(str(address), role) == address


@pytest.mark.parametrize(("text", "role", "canonical"), [
    ("  PWM:3 ", "motor", "pwm:3"),
    ("TalonFX:4", "motor", "talonfx:4"),
    ("pwm: 5", "motor", "pwm:5"),
    ("pwm:007", "motor", "pwm:7"),
    ("ADXRS450", "gyro", "adxrs450"),
    (" !DIO:2", "switch", "!dio:2"),
])
def test_parse_normalizes_case_and_spaces(text, role, canonical):
    assert str(parse(text, role)) == canonical


def test_simdevice_value_is_after_the_last_slash():
    # Device names may hold ':' and '/' (vendors nest them); the value is the last component.
    a = parse("simdevice:CANEncoder:Talon FX (v6)[1]/Rotor Sensor/rawPositionInput", "encoder")
    assert (a.kind, a.channel) == ("simdevice", None)
    assert a.device == "CANEncoder:Talon FX (v6)[1]/Rotor Sensor"
    assert a.value == "rawPositionInput"
    assert str(a) == "simdevice:CANEncoder:Talon FX (v6)[1]/Rotor Sensor/rawPositionInput"


def test_bare_address_has_no_channel_and_prints_its_kind():
    a = parse("adxrs450", "gyro")
    assert a.channel is None
    assert str(a) == "adxrs450"
    assert str(parse("navx", "gyro")) == "navx"
    assert str(HalAddress("dio", 4, inverted=True)) == "!dio:4"
    assert str(HalAddress("dio", 4)) == "dio:4"


def test_roles_cover_exactly_the_documented_kinds():
    assert hal.ROLES == {
        "motor": ("pwm", "talonfx", "sparkmax", "sparkflex", "simdevice"),
        "encoder": ("encoder", "talonfx", "cancoder", "sparkmax", "sparkflex", "analog",
                    "simdevice"),
        "gyro": ("analoggyro", "adxrs450", "navx", "pigeon2", "adis16470", "adis16448",
                 "simdevice"),
        "solenoid": ("ctre", "rev"),
        "switch": ("dio",),
    }


@pytest.mark.parametrize(("text", "port", "controller"), [
    ("sparkmax:3/absolute", "absolute", "sparkmax:3"),
    ("SparkMax:3 / Alternate", "alternate", "sparkmax:3"),
    ("sparkflex:12/external", "external", "sparkflex:12"),
    ("sparkflex:12/absolute", "absolute", "sparkflex:12"),
    ("sparkmax:3", "", "sparkmax:3"),
])
def test_spark_encoder_ports_name_their_spark(text, port, controller):
    a = parse(text, "encoder")
    assert (a.port, a.controller) == (port, controller)
    assert str(a) == controller + (f"/{port}" if port else "")


@pytest.mark.parametrize(("role", "text"), [
    ("motor", '"pwm:0", "talonfx:0", "sparkmax:0", "sparkflex:0", "simdevice:DEVICE/VALUE"'),
    ("encoder", '"encoder:0", "talonfx:0", "cancoder:0", "sparkmax:0", "sparkflex:0", '
                '"analog:0", "simdevice:DEVICE/VALUE"'),
    ("gyro", '"analoggyro:0", "adxrs450", "navx", "pigeon2:0", "adis16470", "adis16448", '
             '"simdevice:DEVICE/VALUE"'),
    ("solenoid", '"ctre:0", "rev:0"'),
    ("switch", '"dio:0"'),
])
def test_examples_list_one_valid_address_per_kind(role, text):
    assert examples(role) == text
    # Every example (with the placeholder filled in) parses for its role.
    for example in text.split(", "):
        address = example.strip('"').replace("DEVICE/VALUE", "Dev[0]/value")
        assert parse(address, role).kind in hal.ROLES[role]


# --- parse: errors ------------------------------------------------------------------------------

ERRORS = [
    ("pmw:0", "motor", "unknown motor device kind 'pmw'; did you mean 'pwm'? (expected one of "
     '"pwm:0", "talonfx:0", "sparkmax:0", "sparkflex:0", "simdevice:DEVICE/VALUE")'),
    ("talonf:1", "motor", "unknown motor device kind 'talonf'; did you mean 'talonfx'?"),
    ("cancodr:1", "encoder", "unknown encoder device kind 'cancodr'; did you mean 'cancoder'?"),
    ("pigeon:1", "gyro", "unknown gyro device kind 'pigeon'; did you mean 'pigeon2'?"),
    ("dios:3", "switch", "unknown switch device kind 'dios'; did you mean 'dio'?"),
    ("zzz:1", "motor", "unknown motor device kind 'zzz' (expected one of \"pwm:0\""),
    ("", "motor", "unknown motor device kind ''"),
    ("encoder:0", "motor", "unknown motor device kind 'encoder'"),
    ("pwm:0", "encoder", "unknown encoder device kind 'pwm'"),
    ("dio:0", "solenoid", "unknown solenoid device kind 'dio'"),
    ("pwm:20", "motor", "pwm channels are 0..19, got 20"),
    ("encoder:32", "encoder", ("encoder channels are 0..", ", got 32")),
    ("dio:32", "switch", ("dio channels are 0..", ", got 32")),
    ("analoggyro:8", "gyro", ("analoggyro channels are 0..", ", got 8")),
    ("ctre:8", "solenoid", "ctre channels are 0..7, got 8"),
    ("rev:16", "solenoid", "rev channels are 0..15, got 16"),
    ("talonfx:63", "motor", "talonfx channels are 0..62, got 63"),
    ("cancoder:100", "encoder", "cancoder channels are 0..62, got 100"),
    ("pwm", "motor", "expected \"pwm:N\" with a channel number N, got 'pwm'"),
    ("pwm:", "motor", "expected \"pwm:N\" with a channel number N, got 'pwm:'"),
    ("pwm:-1", "motor", "expected \"pwm:N\" with a channel number N, got 'pwm:-1'"),
    ("pwm:1.5", "motor", "expected \"pwm:N\" with a channel number N, got 'pwm:1.5'"),
    ("pwm:one", "motor", "expected \"pwm:N\" with a channel number N, got 'pwm:one'"),
    ("adxrs450:0", "gyro", "'adxrs450' takes no channel"),
    ("navx:1", "gyro", "'navx' takes no channel"),
    ("adis16470:0", "gyro", "'adis16470' takes no channel"),
    ("sparkmax:3/external", "encoder", 'sparkmax:N/external is not an encoder port: a '
     'sparkmax has "sparkmax:N/absolute", "sparkmax:N/alternate" besides its relative '
     'encoder "sparkmax:N"'),
    ("sparkflex:3/alternate", "encoder", 'a sparkflex has "sparkflex:N/absolute", '
     '"sparkflex:N/external"'),
    ("sparkmax:3/absolute", "motor", "sparkmax:N/absolute is not an encoder port"),
    ("talonfx:3/absolute", "encoder", "talonfx:N/absolute is not an encoder port"),
    ("sparkmax:/absolute", "encoder", 'expected "sparkmax:N" with a channel number N'),
    ("navix", "gyro", "unknown gyro device kind 'navix'; did you mean 'navx'?"),
    ("!pwm:3", "motor", "'!' (inverted) applies to dio switches only"),
    ("!ctre:3", "solenoid", "'!' (inverted) applies to dio switches only"),
    ("simdevice", "motor", 'expected "simdevice:DEVICE/VALUE"'),
    ("simdevice:NoValue", "motor", 'expected "simdevice:DEVICE/VALUE"'),
    ("simdevice:/value", "motor", 'expected "simdevice:DEVICE/VALUE"'),
    ("simdevice:Device/", "gyro", 'expected "simdevice:DEVICE/VALUE"'),
]


@pytest.mark.parametrize(("text", "role", "message"), ERRORS,
                         ids=[f"{e[1]}-{e[0]}" for e in ERRORS])
def test_parse_rejects_with_a_message_saying_what_is_expected(text, role, message):
    with pytest.raises(HalAddressError) as exc:
        parse(text, role)
    assert contains(str(exc.value), message)


def test_no_did_you_mean_for_a_kind_nothing_resembles():
    with pytest.raises(HalAddressError) as exc:
        parse("zzz:1", "motor")
    assert "did you mean" not in str(exc.value)


def test_address_errors_are_value_errors():
    assert issubclass(HalAddressError, ValueError)


@pytest.mark.parametrize(("text", "role"), [
    ("dio:31", "switch"), ("!dio:31", "switch"), ("encoder:31", "encoder"),
])
def test_dio_channel_31_does_not_exist(text, role):
    assert rejected(text, role)


@pytest.mark.parametrize("channel", [2, 7])
def test_analog_gyro_exists_on_accumulator_channels_only(channel):
    assert rejected(f"analoggyro:{channel}", "gyro")


def test_the_last_real_channels_are_accepted():
    for text, role in [("pwm:19", "motor"), ("dio:30", "switch"), ("encoder:30", "encoder"),
                       ("analoggyro:1", "gyro"), ("ctre:7", "solenoid"), ("rev:15", "solenoid"),
                       ("talonfx:62", "motor")]:
        assert not rejected(text, role), text


def test_superscript_channel_is_an_address_error():
    with pytest.raises(HalAddressError):
        parse("pwm:²", "motor")


def test_superscript_channel_in_a_config_is_a_config_error():
    err = config_error(left_hal('"pwm:²"'))
    assert [i.path for i in err.issues] == ["motors.left.hal"]


# --- the loader: valid wiring -------------------------------------------------------------------


def test_hal_defaults_to_unwired_everywhere():
    cfg = loads(BASE + '[encoders.e]\nmotor = "left"\n\n[solenoids.s]\n' + LIFT_MOTOR
                + '\n[switches.bottom]\nmechanism = "lift"\nposition = "0 m"\n')
    assert cfg.motors["left"].hal == cfg.motors["right"].hal == ()
    assert cfg.encoders["e"].hal == ()
    assert cfg.gyro.hal == ()
    assert cfg.solenoids["s"].hal == ()
    assert cfg.switches["bottom"].hal == ()


def test_motor_takes_a_list_of_controllers_to_average():
    cfg = loads(left_hal('["pwm:0", "pwm:1"]'))
    assert cfg.motors["left"].hal == (HalAddress("pwm", 0), HalAddress("pwm", 1))
    assert cfg.motors["right"].hal == ()


def test_motor_takes_one_address_as_a_string_or_a_one_item_list():
    a = loads(left_hal('"talonfx:4"'))
    b = loads(left_hal('["talonfx:4"]'))
    assert a.motors["left"].hal == b.motors["left"].hal == (HalAddress("talonfx", 4),)


def test_every_role_loads_its_address():
    cfg = loads(BASE + """
[encoders.left]
motor = "left"
hal = "encoder:4"

[encoders.right]
motor = "right"
unit = "rotations"
hal = "cancoder:2"

[gyro]
hal = "adxrs450"
""" + WIRED_SOLENOIDS_SWITCHES + LIFT_MOTOR)
    assert cfg.encoders["left"].hal == (HalAddress("encoder", 4),)
    assert cfg.encoders["right"].hal == (HalAddress("cancoder", 2),)
    assert cfg.gyro.hal == (HalAddress("adxrs450"),)
    assert cfg.solenoids["claw"].hal == (HalAddress("ctre", 1),)
    assert cfg.solenoids["shift"].hal == (HalAddress("rev", 15),)
    assert cfg.switches["bottom"].hal == (HalAddress("dio", 3, inverted=True),)
    assert cfg.switches["top"].hal == (HalAddress("dio", 4),)


def test_one_can_device_may_be_both_motor_and_encoder():
    # A Talon FX drives the motor and reports its rotor: the same address in two roles.
    cfg = loads(left_hal('"talonfx:1"')
                + '[encoders.left]\nmotor = "left"\nunit = "rotations"\nmount = "motor"\n'
                  'hal = "talonfx:1"\n')
    assert cfg.motors["left"].hal == cfg.encoders["left"].hal == (HalAddress("talonfx", 1),)


@pytest.mark.parametrize("unit", ["rotations", "deg", "rad", "ticks"])
@pytest.mark.parametrize("kind", ["cancoder", "sparkmax", "sparkflex"])
def test_can_encoders_accept_angle_and_tick_units(kind, unit):
    cfg = loads(BASE + f'[encoders.x]\nmotor = "left"\nunit = "{unit}"\nhal = "{kind}:3"\n')
    assert cfg.encoders["x"].hal == (HalAddress(kind, 3),)
    assert cfg.encoders["x"].mount == "wheel"  # only the Talon FX rotor sensor needs "motor"


# --- the loader: wiring errors, with exact key paths --------------------------------------------


@pytest.mark.parametrize(("value", "path", "message"), [
    ('"pmw:0"', "motors.left.hal", "unknown motor device kind 'pmw'; did you mean 'pwm'?"),
    ('"pwm:20"', "motors.left.hal", "pwm channels are 0..19, got 20"),
    ('["pwm:0", "pwm:25"]', "motors.left.hal[1]", "pwm channels are 0..19, got 25"),
    ('["pwm:33"]', "motors.left.hal[0]", "pwm channels are 0..19, got 33"),
    ('["pwm:0", "pmw:1"]', "motors.left.hal[1]", "did you mean 'pwm'?"),
    ('["!pwm:1", "pwm:2"]', "motors.left.hal[0]", "'!' (inverted) applies to dio switches only"),
    ('"pwm"', "motors.left.hal", "expected \"pwm:N\" with a channel number N, got 'pwm'"),
    ('3', "motors.left.hal", 'expected a HAL device address such as "pwm:0", "talonfx:0", '
     '"sparkmax:0", "sparkflex:0", "simdevice:DEVICE/VALUE" or a list of them, got 3 (integer)'),
    ('["pwm:0", 1]', "motors.left.hal", "or a list of them, got an array"),
    ('[]', "motors.left.hal", "or a list of them, got an array"),
])
def test_motor_wiring_errors_name_the_key_or_list_item(value, path, message):
    found = issues(left_hal(value))
    assert len(found) == 1, found
    assert found[0][0] == path
    assert message in found[0][1]


def test_every_bad_list_item_is_reported_on_its_own_index():
    found = issues(left_hal('["pmw:3", "pwm:x", "pwm:4", "!pwm:1"]'))
    assert [p for p, _ in found] == ["motors.left.hal[0]", "motors.left.hal[1]",
                                     "motors.left.hal[3]"]


def test_wiring_error_renders_with_file_and_path():
    err = config_error(left_hal('["pwm:0", "pwm:25"]'))
    assert str(err) == "robot.toml: motors.left.hal[1]: pwm channels are 0..19, got 25"
    assert err.issues[0].render("x.toml") == "x.toml: motors.left.hal[1]: pwm channels are " \
                                             "0..19, got 25"


@pytest.mark.parametrize(("extra", "path", "message"), [
    ('[encoders.x]\nmotor = "left"\nhal = ["encoder:0", "encoder:2"]\n', "encoders.x.hal",
     'expected a HAL device address such as "encoder:0", "talonfx:0", "cancoder:0", '
     '"sparkmax:0", "sparkflex:0", "analog:0", "simdevice:DEVICE/VALUE", got an array'),
    ('[encoders.x]\nmotor = "left"\nhal = ["encoder:0"]\n', "encoders.x.hal", "got an array"),
    ('[encoders.x]\nmotor = "left"\nhal = "encoder:40"\n', "encoders.x.hal",
     ("encoder channels are 0..", ", got 40")),
    ('[gyro]\nhal = ["adxrs450"]\n', "gyro.hal", "got an array"),
    ('[gyro]\nhal = "adxrs450:0"\n', "gyro.hal", "'adxrs450' takes no channel"),
    ('[gyro]\nhal = "analoggyro:9"\n', "gyro.hal", ("analoggyro channels are 0..", ", got 9")),
    ('[gyro]\nhal = "bno055:0"\n', "gyro.hal", "unknown gyro device kind 'bno055'"),
    ('[gyro]\nhal = "navx:0"\n', "gyro.hal", "'navx' takes no channel"),
    ('[gyro]\nhal = 5\n', "gyro.hal", 'such as "analoggyro:0", "adxrs450", "navx", "pigeon2:0", '
     '"adis16470", "adis16448", "simdevice:DEVICE/VALUE", got 5 (integer)'),
    ('[solenoids.s]\nhal = "ctre:8"\n', "solenoids.s.hal", "ctre channels are 0..7, got 8"),
    ('[solenoids.s]\nhal = "rve:1"\n', "solenoids.s.hal",
     "unknown solenoid device kind 'rve'; did you mean 'rev'? "
     '(expected one of "ctre:0", "rev:0")'),
    ('[solenoids.s]\nhal = ["ctre:1", "ctre:2"]\n', "solenoids.s.hal", "got an array"),
    (LIFT_MOTOR + '[switches.sw]\nmechanism = "lift"\nposition = "0 m"\nhal = "dio:40"\n',
     "switches.sw.hal", ("dio channels are 0..", ", got 40")),
    (LIFT_MOTOR + '[switches.sw]\nmechanism = "lift"\nposition = "0 m"\nhal = "pwm:1"\n',
     "switches.sw.hal", "unknown switch device kind 'pwm' (expected one of \"dio:0\")"),
])
def test_non_motor_wiring_errors_name_the_key(extra, path, message):
    found = issues(BASE + extra)
    assert len(found) == 1, found
    assert found[0][0] == path
    assert contains(found[0][1], message)


@pytest.mark.parametrize(("text", "path", "message"), [
    (left_hal('"pwm:0"', right='"pwm:0"'), "motors.right.hal",
     "pwm:0 is already wired to motors.left.hal"),
    (left_hal('["pwm:1", "pwm:2"]', right='["pwm:3", "pwm:2"]'), "motors.right.hal",
     "pwm:2 is already wired to motors.left.hal"),
    (left_hal('["pwm:3", "pwm:3"]'), "motors.left.hal", "pwm:3 is already wired to "
                                                        "motors.left.hal"),
    (BASE + '[encoders.a]\nmotor = "left"\nhal = "encoder:0"\n'
            '[encoders.b]\nmotor = "right"\nhal = "encoder:0"\n',
     "encoders.b.hal", "encoder:0 is already wired to encoders.a.hal"),
    (BASE + '[solenoids.a]\nhal = "rev:2"\n[solenoids.b]\nhal = "rev:2"\n',
     "solenoids.b.hal", "rev:2 is already wired to solenoids.a.hal"),
    # An inverted and a plain switch on one DIO are the same input.
    (BASE + LIFT_MOTOR + '[switches.a]\nmechanism = "lift"\nposition = "0 m"\nhal = "dio:3"\n'
                         '[switches.b]\nmechanism = "lift"\nposition = "1 m"\nhal = "!dio:3"\n',
     "switches.b.hal", "!dio:3 is already wired to switches.a.hal"),
])
def test_duplicate_wiring_names_the_first_user(text, path, message):
    found = issues(text)
    assert found == [(path, message)]


def test_one_channel_number_in_different_kinds_is_not_a_duplicate():
    cfg = loads(left_hal('"pwm:2"', right='"talonfx:2"')
                + '[solenoids.a]\nhal = "ctre:2"\n[solenoids.b]\nhal = "rev:2"\n')
    assert cfg.motors["left"].hal[0].channel == cfg.motors["right"].hal[0].channel == 2
    assert {str(s.hal[0]) for s in cfg.solenoids.values()} == {"ctre:2", "rev:2"}


@pytest.mark.parametrize("kind", ["cancoder", "sparkmax", "sparkflex"])
@pytest.mark.parametrize("unit", ["m", "ft", "in"])
def test_can_encoder_in_a_length_unit_is_an_error_on_unit(kind, unit):
    found = issues(BASE + f'[encoders.x]\nmotor = "left"\nunit = "{unit}"\nhal = "{kind}:1"\n')
    assert found == [("encoders.x.unit", f"a {kind} encoder counts shaft rotations: use an angle "
                      "unit (rotations, deg, rad) or ticks")]


def test_talonfx_encoder_needs_an_angle_unit_and_mount_motor():
    found = issues(BASE + '[encoders.x]\nmotor = "left"\nhal = "talonfx:1"\n')
    assert found == [
        ("encoders.x.unit", "a talonfx encoder counts shaft rotations: use an angle unit "
                            "(rotations, deg, rad) or ticks"),
        ("encoders.x.mount", "a Talon FX's rotor sensor turns with the motor: set "
                             "mount = \"motor\""),
    ]


def test_talonfx_encoder_on_the_wheel_is_an_error_on_mount():
    found = issues(BASE + '[encoders.x]\nmotor = "left"\nunit = "ticks"\nhal = "talonfx:1"\n')
    assert found == [("encoders.x.mount", "a Talon FX's rotor sensor turns with the motor: set "
                                          "mount = \"motor\"")]
    cfg = loads(BASE + '[encoders.x]\nmotor = "left"\nunit = "ticks"\nmount = "motor"\n'
                       'hal = "talonfx:1"\n')
    assert cfg.encoders["x"].mount == "motor"


def test_quadrature_and_simdevice_encoders_may_use_length_units():
    cfg = loads(BASE + '[encoders.a]\nmotor = "left"\nunit = "m"\nhal = "encoder:0"\n'
                       '[encoders.b]\nmotor = "right"\nunit = "ft"\nhal = "simdevice:E[0]/pos"\n')
    assert cfg.encoders["a"].unit == "m" and cfg.encoders["b"].unit == "ft"


def test_wiring_problems_in_several_tables_are_all_reported():
    text = left_hal('["pwm:0", "pwm:99"]') + '[gyro]\nhal = "adxrs"\n[solenoids.s]\nhal = "ctre"\n'
    paths = [p for p, _ in issues(text)]
    assert paths == ["motors.left.hal[1]", "gyro.hal", "solenoids.s.hal"]
    gyro = dict(issues(text))["gyro.hal"]
    assert "did you mean 'adxrs450'?" in gyro


# --- the [bridge] section -----------------------------------------------------------------------


def test_bridge_defaults():
    b = loads(BASE).bridge
    assert b.lockstep is False
    assert b.period == pytest.approx(0.02, rel=1e-12)
    assert b.port == 5811
    assert b.bind == "127.0.0.1"
    assert b.connect_timeout == pytest.approx(60.0, rel=1e-12)
    assert b.timeout == pytest.approx(10.0, rel=1e-12)


def test_bridge_values_load_in_si():
    b = loads(BASE + '[bridge]\nlockstep = true\nperiod = "10 ms"\nport = 6000\n'
                     'bind = "0.0.0.0"\nconnect_timeout = "2 min"\ntimeout = "500 ms"\n').bridge
    assert b.lockstep is True
    assert b.period == pytest.approx(0.010, rel=1e-12)
    assert b.port == 6000
    assert b.bind == "0.0.0.0"
    assert b.connect_timeout == pytest.approx(120.0, rel=1e-12)
    assert b.timeout == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize(("body", "path", "words"), [
    ("period = 20", "bridge.period", ["expected a time with its unit", "bare number 20"]),
    ("timeout = 10", "bridge.timeout", ["expected a time with its unit", "bare number 10"]),
    ("connect_timeout = 60.0", "bridge.connect_timeout", ["bare number 60.0"]),
    ('period = "20 kg"', "bridge.period", ["'20 kg' is a mass", "expected a time"]),
    ('period = "20"', "bridge.period", ["'20' has no unit"]),
    ('period = "0 s"', "bridge.period", ["must be 0.001 ≤ value ≤ 1 s", "got '0 s'"]),
    ('period = "2 s"', "bridge.period", ["must be 0.001 ≤ value ≤ 1 s", "got '2 s' = 2 s"]),
    ('timeout = "-1 s"', "bridge.timeout", ["must be 0.1 ≤ value ≤ 3600 s", "got '-1 s'"]),
    ('connect_timeout = "0 s"', "bridge.connect_timeout", ["must be 0.1 ≤ value ≤ 3600 s"]),
    ("port = 0", "bridge.port", ["must be 1 ≤ value ≤ 65535, got 0"]),
    ("port = 70000", "bridge.port", ["must be 1 ≤ value ≤ 65535, got 70000"]),
    ('port = "5811"', "bridge.port", ["expected an integer", "'5811' (string)"]),
    ('lockstep = "yes"', "bridge.lockstep", ["expected true or false, got 'yes' (string)"]),
    ("bind = 1", "bridge.bind", ["expected a string, got 1 (integer)"]),
    ('peroid = "10 ms"', "bridge.peroid", ["unknown key; did you mean 'period'?"]),
])
def test_bridge_errors_name_the_key(body, path, words):
    found = issues(BASE + f"[bridge]\n{body}\n")
    assert len(found) == 1, found
    assert found[0][0] == path
    for word in words:
        assert word in found[0][1], (word, found[0][1])


def test_analog_encoder_must_be_absolute():
    found = issues(BASE + '[encoders.x]\nmotor = "left"\nunit = "rotations"\nhal = "analog:2"\n')
    assert found == [("encoders.x.absolute", "an analog input reads an absolute angle (0..5 V "
                      "over full_range): set absolute = true")]


LIFT_FOLLOWED = LIFT_MOTOR + 'hal = "talonfx:1"\n'


@pytest.mark.parametrize(("body", "path", "words"), [
    ('count = 2\nfollowers = ["talonfx:1"]\n', "motors.lift.followers",
     "talonfx:1 is already wired to motors.lift.hal"),
    ('followers = ["talonfx:2"]\n', "motors.lift.count",
     "2 controllers (hal and followers) drive at least as many motors: count = 1 is too few"),
    ('count = 3\nfollowers = ["talonfx:2", "sparkmax:3", "pwm:1"]\n', "motors.lift.count",
     "count = 3 is too few"),
    ('count = 2\nfollowers = "dio:1"\n', "motors.lift.followers", "unknown motor device"),
])
def test_follower_mistakes_name_the_key(body, path, words):
    found = issues(BASE + LIFT_FOLLOWED + body)
    assert [p for p, _ in found] == [path], found
    assert words in found[0][1], found


def test_followers_need_a_leader():
    found = issues(BASE + LIFT_MOTOR + 'count = 2\nfollowers = ["talonfx:2"]\n')
    assert found == [("motors.lift.followers", "followers follow a leader: set hal to the "
                      "controller they follow")]


def test_followers_load_with_their_leader():
    cfg = loads(BASE + LIFT_FOLLOWED + 'count = 3\nfollowers = ["talonfx:2", "talonfx:3"]\n')
    assert [str(a) for a in cfg.motors["lift"].controllers] == ["talonfx:1", "talonfx:2",
                                                                "talonfx:3"]


@pytest.mark.parametrize(("body", "words"), [
    ('hal = "ctre:0"\nreverse_hal = "rev:1"\n', "both ctre:N or both rev:N"),
    ('reverse_hal = "ctre:1"\n', "set hal to the forward channel"),
    ('hal = "ctre:0"\nreverse_hal = "ctre:0"\n', "ctre:0 is already wired to solenoids.s.hal"),
    ('hal = "ctre:0"\nreverse_hal = "ctre:9"\n', "ctre"),
])
def test_double_solenoid_mistakes_name_the_reverse_channel(body, words):
    found = issues(BASE + "[solenoids.s]\n" + body)
    assert [p for p, _ in found] == ["solenoids.s.reverse_hal"], found
    assert words in found[0][1], found


def test_an_integrated_sensor_takes_its_motors_direction_not_its_own():
    found = issues(BASE + LIFT_FOLLOWED + '[encoders.rotor]\nmotor = "lift"\nunit = '
                   '"rotations"\nmount = "motor"\ninverted = true\nhal = "talonfx:1"\n')
    assert found == [("encoders.rotor.inverted", "talonfx:1 is the sensor of the motor itself: "
                      "it turns with its motor and takes motors.lift.inverted; remove this "
                      "key")]


@pytest.mark.parametrize(("motor", "words"), [
    ('count = 2\nfollowers = ["talonfx:2"]\n', "talonfx:2 follows motors.lift (hal = talonfx:1)"),
    ("", "talonfx:2 is not a controller of motors.lift (hal = talonfx:1)"),
])
def test_an_integrated_sensor_is_read_on_its_own_motor(motor, words):
    found = issues(BASE + LIFT_FOLLOWED + motor + '[encoders.rotor]\nmotor = "lift"\nunit = '
                   '"rotations"\nmount = "motor"\nhal = "talonfx:2"\n')
    assert [p for p, _ in found] == ["encoders.rotor.hal"], found
    assert words in found[0][1], found


def test_encoder_direction_is_the_motors_for_integrated_sensors_and_its_own_otherwise():
    cfg = loads(BASE.replace('[motors.right]\ntype = "CIM"\n',
                             '[motors.right]\ntype = "CIM"\ninverted = true\n'
                             'hal = "sparkmax:4"\n')
                + '[encoders.builtin]\nmotor = "right"\nunit = "rotations"\nmount = "motor"\n'
                'hal = "sparkmax:4"\n[encoders.wheel]\nmotor = "right"\nhal = "encoder:0"\n'
                '[encoders.flipped]\nmotor = "left"\ninverted = true\nhal = "encoder:2"\n')
    assert {n: cfg.encoder_reversed(n) for n in cfg.encoders} == {
        "builtin": True, "wheel": False, "flipped": True}
