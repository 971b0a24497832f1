"""Config loading: the bundled kitbot, unit handling, and error messages for malformed files."""

from __future__ import annotations

import re

import pytest

from simserver.config.loader import ConfigError, default_config_text, load, load_default, loads
from tests.worlds import ARM_BENCH

KITBOT = default_config_text()
LB = 0.45359237  # kg, exact by definition
INCH = 0.0254  # m, exact by definition

# SI conversions are one multiplication by an exact factor: 1e-12 relative is rounding only.
REL = 1e-12


def edit(old: str, new: str, text: str = KITBOT) -> str:
    """The kitbot config with one exact substring replaced (which must exist)."""
    assert text.count(old) >= 1, old
    return text.replace(old, new, 1)


def config_error(text: str, source: str = "robot.toml") -> ConfigError:
    with pytest.raises(ConfigError) as exc:
        loads(text, source=source)
    return exc.value


# --- the bundled kitbot -------------------------------------------------------------------------


def test_bundled_kitbot_has_two_cims_per_side_named_left_and_right():
    cfg = load_default()
    assert set(cfg.motors) == {"left", "right"}
    for m in cfg.motors.values():
        assert (m.type, m.count, m.inverted) == ("CIM", 2, False)
    assert (cfg.drivetrain.left, cfg.drivetrain.right) == ("left", "right")


def test_bundled_kitbot_geometry_and_mass_in_si():
    cfg = load_default()
    assert cfg.drivetrain.gearing == 10.71
    assert cfg.drivetrain.wheel_diameter == pytest.approx(6 * INCH, rel=REL)
    assert cfg.drivetrain.track_width == pytest.approx(26 * INCH, rel=REL)
    assert cfg.robot.mass == pytest.approx(60 * LB, rel=REL)
    assert cfg.drivetrain.fidelity == "physical"


def test_bundled_kitbot_encoders_left_and_right_in_metres():
    cfg = load_default()
    assert set(cfg.encoders) == {"left", "right"}
    assert (cfg.encoders["left"].motor, cfg.encoders["right"].motor) == ("left", "right")
    assert cfg.encoders["left"].unit == cfg.encoders["right"].unit == "m"


def test_bundled_kitbot_timing_and_battery_in_si():
    cfg = load_default()
    assert cfg.sim.substep == pytest.approx(0.005, rel=REL)
    assert cfg.sim.tick == pytest.approx(0.010, rel=REL)
    assert cfg.battery.nominal_voltage == pytest.approx(12.7, rel=REL)
    assert cfg.battery.resistance == pytest.approx(0.015, rel=REL)


# --- units --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("old", "a", "b"), [
    ('mass = "60 lb"', 'mass = "60 lb"', 'mass = "27.2155422 kg"'),
    ('wheel_diameter = "6 in"', 'wheel_diameter = "6 in"', 'wheel_diameter = "15.24 cm"'),
    ('wheel_diameter = "6 in"', 'wheel_diameter = "0.5 ft"', 'wheel_diameter = "0.1524 m"'),
    ('track_width = "26 in"', 'track_width = "26 inch"', 'track_width = "660.4 mm"'),
    ('nominal_voltage = "12.7 V"', 'nominal_voltage = "12.7 V"',
     'nominal_voltage = "12700 mV"'),
    ('resistance = "0.015 ohm"', 'resistance = "0.015 ohm"', 'resistance = "15 milliohm"'),
    ('substep = "5 ms"', 'substep = "5 ms"', 'substep = "0.005 s"'),
    ('heading = "0 deg"', 'heading = "90 deg"', 'heading = "0.25 rotation"'),
])
def test_equal_quantities_in_different_units_load_equal(old, a, b):
    ca, cb = loads(edit(old, a)), loads(edit(old, b))
    # Every SI float the two configs hold must agree (rounding of unit factors only; 1e-15
    # absolute for values that are zero in one unit and rounding-small in the other).
    fa, fb = _floats(ca), _floats(cb)
    assert fa.keys() == fb.keys()
    assert len(fa) > 15  # every section was walked
    for key in fa:
        assert fa[key] == pytest.approx(fb[key], rel=REL, abs=1e-15), key


def _floats(obj, prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    items = obj.items() if isinstance(obj, dict) else getattr(obj, "__dict__", {}).items()
    for k, v in items:
        if isinstance(v, float):
            out[prefix + str(k)] = v
        elif isinstance(v, dict) or hasattr(v, "__dataclass_fields__"):
            out.update(_floats(v, f"{prefix}{k}."))
    return out


def test_27_kg_equals_59_52_lb_to_the_rounding_of_59_52():
    kg = loads(edit('mass = "60 lb"', 'mass = "27 kg"')).robot.mass
    lb = loads(edit('mass = "60 lb"', 'mass = "59.52 lb"')).robot.mass
    # 27 kg = 59.5248 lb: "59.52" is rounded at the 5th digit, so 1e-4 relative.
    assert kg == pytest.approx(lb, rel=1e-4)
    assert lb == pytest.approx(59.52 * LB, rel=REL)


def test_start_heading_in_degrees_is_stored_in_radians():
    cfg = loads(edit('heading = "0 deg"', 'heading = "180 deg"'))
    assert cfg.robot.start.heading == pytest.approx(3.141592653589793, rel=REL)


def test_characterized_gains_load_in_si():
    text = edit('fidelity = "physical"', 'fidelity = "characterized"') + """
[drivetrain.characterized.left]
kv = "2.8 V*s/m"
ka = "0.4 V*s^2/m"
ks = "0.6 V"

[drivetrain.characterized.right]
kv = "0.8534 V*s/ft"
ka = "0.4 V*s^2/m"
"""
    c = loads(text).drivetrain.characterized
    assert (c.left.kv, c.left.ka, c.left.ks) == pytest.approx((2.8, 0.4, 0.6), rel=REL)
    assert c.right.kv == pytest.approx(0.8534 / 0.3048, rel=REL)  # per foot → per metre
    assert c.right.ks == 0.0  # default


# --- malformed configs: one problem each, exact key path and message ---------------------------

MALFORMED = [
    pytest.param("[sim\nseed = 1\n", "", ["not valid TOML", "line 1"], id="toml-syntax"),
    pytest.param(edit('wheel_diameter = "6 in"', 'whel_diameter = "6 in"'),
                 "drivetrain.whel_diameter", ["unknown key", "did you mean 'wheel_diameter'"],
                 id="unknown-key"),
    pytest.param(edit('wheel_diameter = "6 in"', 'wheel_diameter = "6 kg"'),
                 "drivetrain.wheel_diameter", ["'6 kg'", "is a mass", "expected a length"],
                 id="wrong-dimension"),
    pytest.param(edit('wheel_diameter = "6 in"', "wheel_diameter = 6"),
                 "drivetrain.wheel_diameter", ["with its unit", "bare number 6"],
                 id="bare-number"),
    pytest.param(edit('mass = "60 lb"', 'mass = "60"'), "robot.mass",
                 ["'60' has no unit", "expected a mass"], id="unitless-string"),
    pytest.param(edit('mass = "60 lb"', 'mass = "-3 kg"'), "robot.mass",
                 ["must be 0.1 ≤ value ≤ 100 kg", "'-3 kg'"], id="negative-mass"),
    pytest.param(edit("restitution = 0.2", "restitution = 1.5"), "field.restitution",
                 ["must be 0 ≤ value ≤ 1", "got 1.5"], id="restitution-range"),
    pytest.param(edit("seed = 0", 'seed = "zero"'), "sim.seed",
                 ["expected an integer", "'zero' (string)"], id="wrong-type"),
    pytest.param(edit('type = "CIM"', 'type = "Krakn X60"'), "motors.left.type",
                 ["unknown motor type 'Krakn X60'", "did you mean 'Kraken X60'"],
                 id="unknown-motor"),
    pytest.param(edit('[drivetrain]\nleft = "left"', '[drivetrain]\nleft = "leftt"'),
                 "drivetrain.left", ["no motor named 'leftt' in [motors]", "did you mean 'left'"],
                 id="missing-motor"),
    pytest.param(edit('fidelity = "physical"', 'fidelity = "characterized"'),
                 "drivetrain.characterized",
                 ['required when fidelity = "characterized"', "[drivetrain.characterized.left]"],
                 id="characterized-without-section"),
    pytest.param(edit('fidelity = "physical"', 'fidelity = "kinematic"'),
                 "drivetrain.kinematic", ['required when fidelity = "kinematic"', "max_speed"],
                 id="kinematic-without-section"),
    pytest.param(edit('fidelity = "physical"', 'fidelity = "physicl"'), "drivetrain.fidelity",
                 ["expected one of 'kinematic', 'characterized', 'physical'",
                  "did you mean 'physical'"], id="bad-choice"),
    pytest.param(edit('unit = "m"', 'unit = "furlongz"'), "encoders.left.unit",
                 ["'furlongz'", "a length (m, ft, in), an angle", "ticks"],
                 id="encoder-unit-not-a-unit"),
    pytest.param(edit('unit = "m"', 'unit = "kg"'), "encoders.left.unit",
                 ["'kg'", "a length (m, ft, in), an angle"], id="encoder-unit-wrong-kind"),
    pytest.param(edit('tick = "10 ms"', 'tick = "2 ms"'), "sim.tick",
                 ["must be at least sim.substep (5 ms)"], id="tick-below-substep"),
    pytest.param(KITBOT + '\n[solenoids."a/b"]\n', "solenoids.a/b",
                 ["names may use letters, digits"], id="name-with-slash"),
    pytest.param(edit("count = 2", "count = 9"), "motors.left.count",
                 ["must be 1 ≤ value ≤ 8", "got 9"], id="count-range"),
    pytest.param(edit("count = 2", "count = 1"), "drivetrain",
                 ["left (1× CIM) and right (2× CIM)", "same motor type, count and inductance"],
                 id="unequal-sides"),
    pytest.param(edit('[encoders.left]\nmotor = "left"', '[encoders.left]\nmotor = "lft"'),
                 "encoders.left.motor", ["no motor named 'lft'", "did you mean 'left'"],
                 id="encoder-missing-motor"),
    pytest.param(edit("gearing = 10.71", 'gearing = 10.71\nshifter = "shift"\nhigh_gearing = 5'),
                 "drivetrain.shifter", ["no solenoid named 'shift' in [solenoids]"],
                 id="shifter-missing-solenoid"),
    pytest.param(edit('season = "2026"', 'season = "2019"'), "field.season",
                 ["expected one of '2022'", "got '2019'"], id="unknown-season"),
    pytest.param(edit("seed = 0", 'seed = 0\nreset_on_connect = "yes"'), "sim.reset_on_connect",
                 ["expected true or false", "'yes' (string)"], id="bool-as-string"),
    pytest.param(edit("[motors.left]\ntype = \"CIM\"\n", "[motors.left]\n"), "motors.left.type",
                 ["missing required key", "motor type name"], id="missing-required"),
    pytest.param(edit("[gyro]", "[gyroo]"), "gyroo",
                 ["unknown key", "did you mean 'gyro'"], id="unknown-section"),
]


@pytest.mark.parametrize(("text", "path", "words"), MALFORMED)
def test_malformed_config_names_file_key_path_and_problem(text, path, words):
    err = config_error(text, source="robot.toml")
    lines = str(err).splitlines()
    prefix = f"robot.toml: {path}: " if path else "robot.toml: "
    matching = [line for line in lines if line.startswith(prefix)]
    assert matching, f"no line starts with {prefix!r}: {lines}"
    for word in words:
        assert any(word in line for line in matching), (word, matching)
    assert any(i.path == path for i in err.issues)
    assert err.source == "robot.toml"


def test_unknown_motor_in_config_is_the_only_reported_problem():
    err = config_error(edit('type = "CIM"', 'type = "Krakn X60"'))
    assert [i.path for i in err.issues] == ["motors.left.type"]


def test_all_problems_are_collected_one_line_each():
    text = edit("seed = 0", "seed = -1")
    text = edit('mass = "60 lb"', 'mass = "60"', text)
    text = edit("gearing = 10.71", "gearing = 0", text)
    err = config_error(text)
    lines = str(err).splitlines()
    assert len(lines) == 3, lines
    assert lines[0] == "robot.toml: sim.seed: must be ≥ 0, got -1"
    assert lines[1].startswith("robot.toml: robot.mass: '60' has no unit")
    assert lines[2] == "robot.toml: drivetrain.gearing: must be 0.5 ≤ value ≤ 200, got 0"


def test_load_reads_a_file_and_names_it_in_errors(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text(KITBOT, encoding="utf-8")
    assert load(good) == load_default()
    bad = tmp_path / "bad.toml"
    bad.write_text(edit('fidelity = "physical"', 'fidelity = "physicl"'), encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load(bad)
    assert str(exc.value).startswith(f"{bad}: drivetrain.fidelity: ")


def test_load_missing_file_says_file_not_found(tmp_path):
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match="file not found") as exc:
        load(missing)
    assert str(exc.value) == f"{missing}: file not found"


def test_empty_drivetrain_table_needs_motors_for_the_differential_drive():
    err = config_error("[drivetrain]\n")
    paths = {i.path for i in err.issues}
    assert {"drivetrain.left", "drivetrain.right"} <= paths
    assert "none are defined: add a [motors.NAME] table" in str(err)


def test_load_section_builds_one_table_with_defaults_and_units():
    from simserver.config.loader import load_section
    from simserver.config.model import BatteryConfig

    battery = load_section(BatteryConfig, {"resistance": "20 mohm"})
    assert battery.resistance == pytest.approx(0.020, rel=1e-12)
    assert battery.nominal_voltage == pytest.approx(12.7, rel=1e-12)
    with pytest.raises(ConfigError) as exc:
        load_section(BatteryConfig, {"resistence": "1 ohm"}, source="test")
    assert "test: resistence: unknown key; did you mean 'resistance'?" in str(exc.value)


# --- a robot without a drivetrain ---------------------------------------------------------------


def test_config_without_drivetrain_table_has_no_drivetrain():
    cfg = loads(ARM_BENCH)
    assert cfg.drivetrain is None
    assert cfg.drivetrain_type == "none"
    assert set(cfg.motors) == {"arm"} and set(cfg.mechanisms) == {"arm"}


def test_empty_config_is_a_robot_without_drivetrain():
    cfg = loads("")
    assert (cfg.drivetrain, cfg.drivetrain_type, cfg.motors) == (None, "none", {})


def test_drivetrain_table_without_type_is_still_differential():
    cfg = loads(ARM_BENCH + '[motors.left]\ntype = "CIM"\n[motors.right]\ntype = "CIM"\n'
                "[drivetrain]\n")
    assert cfg.drivetrain_type == "differential"
    assert (cfg.drivetrain.left, cfg.drivetrain.right) == ("left", "right")


def test_bundled_kitbot_keeps_its_differential_drivetrain():
    cfg = load_default()
    assert cfg.drivetrain is not None
    assert cfg.drivetrain_type == "differential"


def test_encoder_on_a_motor_without_mechanism_says_there_is_no_drivetrain():
    err = config_error(ARM_BENCH + '[motors.spare]\ntype = "NEO"\n'
                       '[encoders.spare]\nmotor = "spare"\n')
    assert [i.path for i in err.issues] == ["encoders.spare.motor"]
    assert "drives no mechanism with a position" in str(err)
    assert "no [drivetrain]" in str(err)


@pytest.mark.parametrize("key", ["warnings", "drivetrain_type", "others"])
def test_a_value_the_loader_derives_is_not_a_key_of_the_file(key):
    with pytest.raises(ConfigError) as exc:
        loads(f'{key} = "x"\n', source="test")
    message = str(exc.value)
    assert f"test: {key}: unknown key" in message
    offered = set(re.findall(r"[a-z_]+", message.split(": unknown key", 1)[1]))
    assert offered.isdisjoint({"warnings", "drivetrain_type", "others"}), message
