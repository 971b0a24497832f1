"""Config values `simserver check` used to accept and `simserver run` could not run (issue 19,
items 5 and 9): each is now refused by both, with the file, the key and the range, before
anything starts; unusual values load with a warning that both show; a tick of the most
substeps allowed still ends on Ctrl-C and SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import Any

import pytest
from click.testing import CliRunner

from simserver.cli import main
from simserver.config.loader import ConfigError, default_config_text, loads, tomllib
from tests.ntutil import REPO, posix_signals
from tests.reliability.test_fuzz_config import RICH, dumps

KITBOT = default_config_text()
SCRIPT = "time,left,right\n0,1,-1\n0.2,1,-1\n"


def with_change(old: str, new: str, *more: str) -> str:
    """The bundled kitbot with ``old`` replaced by ``new`` (which must be in it), and so on for
    each further pair in ``more``."""
    text = KITBOT
    pairs = (old, new, *more)
    for a, b in zip(pairs[::2], pairs[1::2], strict=True):
        assert a in text
        text = text.replace(a, b, 1)
    return text


def cli(*args: str) -> tuple[int, str]:
    """Exit code and stderr of ``simserver ARGS``."""
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stderr


# id, (old, new) in the kitbot, key, what the message must say. Each made `run` overflow, publish
# and record NaN, raise a traceback or never finish a tick (1 ns), or was accepted silently.
REFUSED = [
    pytest.param(("gearing = 10.71", "gearing = 1e155"), "drivetrain.gearing",
                 "must be 0.5 ≤ value ≤ 200, got 1e+155", id="gearing-1e155-overflow"),
    pytest.param(("gearing = 10.71", "gearing = 1e308"), "drivetrain.gearing",
                 "must be 0.5 ≤ value ≤ 200", id="gearing-1e308-nan-pose"),
    pytest.param(('width = "28 in"', 'width = "28 in"\nmoment_of_inertia = "1e-300 kg*m^2"'),
                 "robot.moment_of_inertia", "must be 0.0001 ≤ value ≤ 500 kg*m^2",
                 id="moment-of-inertia-1e-300-nan-pose"),
    pytest.param(('wheel_diameter = "6 in"', 'wheel_diameter = "1e-300 m"'),
                 "drivetrain.wheel_diameter", "must be 0.02 ≤ value ≤ 0.5 m",
                 id="wheel-diameter-1e-300-traceback"),
    pytest.param(('track_width = "26 in"', 'track_width = "1e-300 m"'),
                 "drivetrain.track_width", "must be 0.05 ≤ value ≤ 3 m",
                 id="track-width-1e-300-traceback"),
    pytest.param(('track_width = "26 in"', 'track_width = "1e300 m"'),
                 "drivetrain.track_width", "must be 0.05 ≤ value ≤ 3 m",
                 id="track-width-1e300-crashes-check"),
    pytest.param(('length = "32 in"', 'length = "1e300 m"'), "robot.length",
                 "must be 0.1 ≤ value ≤ 3 m", id="robot-length-1e300-crashes-check"),
    pytest.param(('substep = "5 ms"', 'substep = "1 ns"'), "sim.substep",
                 "must be 0.0001 ≤ value ≤ 0.05 s", id="substep-1-ns-never-ends-a-tick"),
    pytest.param(('substep = "5 ms"', 'substep = "0.5 ms"', 'tick = "10 ms"', 'tick = "1 s"'),
                 "sim.substep", "a tick of 1000 ms would be 2000 substeps; at most 1000",
                 id="tick-of-2000-substeps"),
    pytest.param(('mass = "60 lb"', 'mass = "600 lb"'), "robot.mass",
                 "must be 0.1 ≤ value ≤ 100 kg, got '600 lb' = 272.155 kg", id="mass-600-lb"),
    pytest.param(('x = "2 m"', 'x = "-100 m"'), "robot.start.x",
                 "must be 0 ≤ value ≤ 100 m, got '-100 m'", id="start-at-minus-100-m"),
    pytest.param(('x = "2 m"', 'x = "20 m"'), "robot.start.x",
                 "20 m is off the field: the robot's centre must be within 0 .. 16.541 m",
                 id="start-beyond-the-red-wall"),
    pytest.param(("restitution = 0.2", 'restitution = 0.2\nlength = "1 um"'), "field.length",
                 "must be 0.5 ≤ value ≤ 100 m, got '1 um' = 1e-06 m", id="field-1-um-long"),
    pytest.param(("restitution = 0.2", 'restitution = 0.2\nwidth = "0.6 m"'), "field.width",
                 "a field 0.6 m across cannot hold the robot (0.7112 m across",
                 id="field-narrower-than-the-robot"),
    pytest.param(('mass = "60 lb"', 'mass = "60\\u0000 lb"'), "robot.mass",
                 r"'60\x00 lb' contains a control character (U+0000 at character 3)",
                 id="nul-in-a-unit-string"),
    pytest.param(('width = "28 in"', 'width = "28 in"\nmoment_of_inertia = "100 kg*m^2"'),
                 "robot.moment_of_inertia", "more than the robot's mass at the corners",
                 id="yaw-inertia-beyond-the-outline"),
]


@pytest.mark.parametrize(("change", "key", "says"), REFUSED)
def test_check_and_run_refuse_an_impossible_value_naming_key_and_range(tmp_path, change, key,
                                                                       says):
    path = tmp_path / "robot.toml"
    path.write_text(with_change(*change))
    script = tmp_path / "drive.csv"
    script.write_text(SCRIPT)
    code, err = cli("check", str(path))
    assert code == 2, err
    assert f"{path}: {key}: " in err and says in err, err
    code, err = cli("run", str(path), "--inputs", str(script), "--fast", "--no-summary")
    assert code == 2 and says in err and "nothing was started" in err, err


def test_a_200_kb_unit_string_is_echoed_as_a_short_excerpt(tmp_path):
    path = tmp_path / "robot.toml"
    path.write_text(with_change('mass = "60 lb"', f'mass = "60 {"l" * 200_000}"'))
    started = time.monotonic()
    code, err = cli("check", str(path))
    took = time.monotonic() - started
    assert code == 2
    line = next(x for x in err.splitlines() if "robot.mass" in x)
    assert "… (200003 characters) is too long (at most 100 characters)" in line
    assert len(line) < 200 + len(str(path)), line
    assert took < 30, f"pint was handed the whole string ({took:.0f} s)"


@pytest.mark.parametrize("value", [f'"60 {"l" * 500}"', f'"{"1" * 500} lb"'])
def test_a_long_quantity_is_refused_before_pint_parses_it(value):
    # pint's parser is superlinear: 200 kB took minutes; anything over 100 characters is
    # refused unparsed (well under the 1024 a string value may have).
    with pytest.raises(ConfigError, match=r"is too long \(at most 100 characters\)"):
        loads(with_change('mass = "60 lb"', f"mass = {value}"))


# An unusual value: possible, but not an FRC robot's. Loaded, with a warning in check and run.
WARNED = [
    pytest.param(('mass = "60 lb"', 'mass = "170 lb"'), "robot.mass",
                 "'170 lb' = 77.1107 kg is unusual: expected ≤ 70 kg", id="mass-170-lb"),
    pytest.param(('x = "2 m"', 'x = "0.2 m"'), "robot.start",
                 "the robot's outline crosses a wall at (0.2 m, 4 m)", id="start-in-a-wall"),
    pytest.param(('nominal_voltage = "12.7 V"', 'nominal_voltage = "6 V"'),
                 "battery.brownout_voltage", "is not below nominal_voltage (6 V)",
                 id="browned-out-from-the-start"),
    pytest.param(("gearing = 10.71", "gearing = 1"), "drivetrain.gearing",
                 "1:1 gives the wheels a free speed of 42 m/s, outside the usual 0.3 .. 8 m/s",
                 id="free-speed-of-42-m-s"),
]


@pytest.mark.parametrize(("change", "key", "says"), WARNED)
def test_check_and_run_warn_about_an_unusual_value(tmp_path, change, key, says):
    path = tmp_path / "robot.toml"
    path.write_text(with_change(*change))
    script = tmp_path / "drive.csv"
    script.write_text(SCRIPT)
    line = f"{path}: {key}: warning: "
    code, err = cli("check", str(path))
    assert code == 0, err
    assert line in err and says in err, err
    code, err = cli("run", str(path), "--inputs", str(script), "--fast", "--no-summary")
    assert code == 0, err
    assert line in err and says in err, err


def test_the_bundled_kitbot_loads_without_a_warning():
    code, err = cli("check", str(REPO / "simserver" / "config" / "kitbot.toml"))
    assert code == 0 and "warning" not in err, err


@posix_signals
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_tick_of_the_most_substeps_allowed_ends_on_a_signal(tmp_path, sig):
    """The shortest substep with the longest tick it allows (1000 substeps a tick) and
    mechanisms: every tick finishes in bounded time, so the signal handled between ticks ends
    the run (with 1 ns substeps a tick was 10⁷ substeps and the signals were never seen)."""
    from tests.worlds import ARM, LIFT, SHOULDER_NEO, TWO_KRAKENS

    path = tmp_path / "robot.toml"
    path.write_text(with_change('substep = "5 ms"', 'substep = "0.1 ms"',
                                'tick = "10 ms"', 'tick = "100 ms"')
                    + LIFT + ARM + TWO_KRAKENS + SHOULDER_NEO)
    script = tmp_path / "drive.csv"
    script.write_text("time,left,right,lift,shoulder\n0,1,-1,1,1\n3600,1,-1,1,1\n")
    proc = subprocess.Popen([sys.executable, "-m", "simserver", "run", str(path), "--inputs",
                             str(script), "--fast", "--no-summary"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert "simulating" in first, first
        time.sleep(1.0)  # well into the run
        proc.send_signal(sig)
        code = proc.wait(20)
        assert code == 0, proc.stderr.read()
        assert "stopped" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _string_keys(doc: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for k, v in doc.items():
        if isinstance(v, dict):
            out += _string_keys(v, (*prefix, k))
        elif isinstance(v, str):
            out.append((*prefix, k))
    return out


WIRED = RICH + """
[robots.other]
config = "other.toml"
"""
WIRED = WIRED.replace('[motors.left]\ntype = "CIM"', '[motors.left]\ntype = "CIM"\nhal = "pwm:0"')
WIRED = WIRED.replace('[encoders.left]\nmotor = "left"', '[encoders.left]\nmotor = "left"\n'
                      'hal = "encoder:0"')


@pytest.mark.parametrize("length", [1000, 200_000])
@pytest.mark.parametrize("key", _string_keys(tomllib.loads(WIRED)), ids=".".join)
def test_no_message_echoes_more_than_a_short_excerpt_of_a_long_value(tmp_path, key, length):
    doc = tomllib.loads(WIRED)
    table = doc
    for k in key[:-1]:
        table = table[k]
    table[key[-1]] = "x" * length
    (tmp_path / "other.toml").write_text(KITBOT)
    with pytest.raises(ConfigError) as err:
        loads(dumps(doc), source="robot.toml", base=tmp_path)
    lines = str(err.value).splitlines()
    assert lines and all(len(line) < 400 for line in lines), max(lines, key=len)[:600]


@pytest.mark.parametrize("length", [1000, 200_000])
def test_a_long_unknown_key_is_echoed_as_a_short_excerpt(length):
    with pytest.raises(ConfigError) as err:
        loads(KITBOT.replace("[gyro]", f'[gyro]\n"{"k" * length}" = 1'))
    assert all(len(line) < 400 for line in str(err.value).splitlines()), str(err.value)[:600]


def test_another_robot_must_start_on_this_files_field(tmp_path):
    main = tmp_path / "main.toml"
    other = tmp_path / "other.toml"
    other.write_text(KITBOT)  # starts at (2 m, 4 m)
    main.write_text(with_change("restitution = 0.2", 'restitution = 0.2\nwidth = "3 m"',
                                'y = "4 m"', 'y = "1 m"')
                    + '\n[robots.other]\nconfig = "other.toml"\n')
    code, err = cli("check", str(main))
    assert code == 2, err
    assert (f"{other}: robot.start.y: 4 m is off the field: the robot's centre must be within "
            f"0 .. 3 m (on the field of {main})") in err, err
