"""Sweep files: validation (file, key, unit; exit 2 before anything runs) and what each run
draws (from the sweep's seed and the run's index alone, with the distributions asked for)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simserver.config.issues import ConfigError
from simserver.config.loader import loads
from simserver.sweeps.sampling import check_runs, config_text, plan_run, run_table
from simserver.sweeps.spec import is_sweep_file, load_sweep
from tests.ntutil import REPO

KITBOT = REPO / "examples" / "kitbot"
HEAD = f"""[sweep]
config = "{KITBOT / 'simserver.toml'}"
robot = "{KITBOT}"
check = "{KITBOT / 'auto-check.toml'}"
runs = 400
seed = 11
"""


def sweep_file(tmp_path: Path, body: str, head: str = HEAD) -> Path:
    path = tmp_path / "sweep.toml"
    path.write_text(head + body)
    return path


def messages(path: Path) -> str:
    with pytest.raises(ConfigError) as err:
        load_sweep(path)
    return str(err.value)


def test_the_kitbot_example_sweep_loads_and_every_run_checks():
    sweep = load_sweep(KITBOT / "sweep.toml")
    assert sweep.robot == KITBOT
    assert [v.key for v in sweep.vary] == sorted(v.key for v in sweep.vary)
    check_runs(sweep)
    run = subprocess.run([sys.executable, "-m", "simserver", "check",
                          str(KITBOT / "sweep.toml")], capture_output=True, text=True,
                         timeout=120, cwd=REPO)
    assert run.returncode == 0, run.stderr
    assert "sweep of 200 runs" in run.stdout


@pytest.mark.parametrize(("body", "where", "says"), [
    ('[vary."robot.start.x"]\nuniform = ["1 m", "2 kg"]\n',
     "vary.'robot.start.x'.uniform[1]", "length"),
    ('[vary."robot.start.x"]\nuniform = [1, 2]\n',
     "vary.'robot.start.x'.uniform[0]", 'such as "1 m"'),
    ('[vary."robot.start.z"]\nvalues = ["1 m"]\n', "vary.'robot.start.z'",
     "robot.start has no key 'z'"),
    ('[vary."motors.middle.count"]\nvalues = [2]\n', "vary.'motors.middle.count'",
     "no motors.middle (it has: left, right)"),
    ('[vary."motors.left.type"]\nuniform = [1, 2]\n', "vary.'motors.left.type'",
     "takes only `values"),
    ('[vary."drivetrain.friction"]\nnormal = [1.0, -0.1]\n',
     "vary.'drivetrain.friction'.normal[1]", "≥ 0"),
    ('[vary."drivetrain.friction"]\nuniform = [1.2, 1.0]\n',
     "vary.'drivetrain.friction'.uniform", "low must not exceed high"),
    ('[vary."drivetrain.friction"]\nuniform = [0.9, 1.0]\nmode = "times"\n',
     "vary.'drivetrain.friction'.mode", "set, add, scale"),
    ('[vary."robot.mass"]\nscale = [0.9]\n', "vary.'robot.mass'.scale", "unknown key"),
    ('[vary."robot.mass"]\nmode = "scale"\nuniform = ["0.9 kg", "1 kg"]\n',
     "vary.'robot.mass'.uniform[0]", "scale factor"),
    ('[vary."sim.seed"]\nuniform = [1, 9]\n', "vary.'sim.seed'", "integer key"),
])
def test_bad_vary_entries_name_the_key_and_what_was_expected(tmp_path, body, where, says):
    text = messages(sweep_file(tmp_path, body))
    assert f"{tmp_path / 'sweep.toml'}: {where}" in text, text
    assert says in text, text


def test_bad_sweep_keys_and_paths_are_named(tmp_path):
    text = messages(sweep_file(tmp_path, "", HEAD.replace("runs = 400", "runs = 0")))
    assert "sweep.runs" in text and "1" in text
    both = HEAD + f'inputs = "{REPO / "simserver" / "data" / "s_curve.csv"}"\n'
    assert "give either `robot`" in messages(sweep_file(tmp_path, "", both))
    nowhere = HEAD.replace(f'robot = "{KITBOT}"', f'robot = "{tmp_path}"')
    assert f"{tmp_path} has no robot.py" in messages(sweep_file(tmp_path, "", nowhere))
    assert "sweep.timeout" in messages(sweep_file(tmp_path, "", HEAD + 'timeout = "10"\n'))


def test_check_and_sweep_exit_2_before_anything_starts(tmp_path):
    path = sweep_file(tmp_path, '[vary."battery.resistance"]\nnormal = ["15 mohm", "1 ohm"]\n')
    for command in (["check", str(path)], ["sweep", str(path), "--out", str(tmp_path / "o")]):
        run = subprocess.run([sys.executable, "-m", "simserver", *command], capture_output=True,
                             text=True, timeout=120, cwd=REPO)
        assert run.returncode == 2, run.stdout + run.stderr
        # A normal's tail below 0 ohm: the runs whose draw the config refuses are named.
        assert "battery.resistance" in run.stderr and "runs draw values" in run.stderr
        assert "nothing was started" in run.stderr
    assert not (tmp_path / "o").exists()


def test_a_config_is_not_a_sweep_file():
    assert is_sweep_file(KITBOT / "sweep.toml")
    assert not is_sweep_file(KITBOT / "simserver.toml")
    assert not is_sweep_file(KITBOT / "no-such-file.toml")


def test_each_run_draws_from_its_own_seed_whatever_the_order(tmp_path):
    sweep = load_sweep(sweep_file(tmp_path, '[vary."robot.start.x"]\nnormal = ["2 m", "5 cm"]\n'))
    forward = [plan_run(sweep, i) for i in range(50)]
    backward = [plan_run(sweep, i) for i in reversed(range(50))][::-1]
    assert forward == backward
    assert len({p.seed for p in forward}) == 50  # every run its own simulation seed
    # Adding another entry leaves this one's draws alone.
    other = load_sweep(sweep_file(
        tmp_path, '[vary."robot.start.x"]\nnormal = ["2 m", "5 cm"]\n'
        '[vary."battery.resistance"]\nuniform = ["10 mohm", "20 mohm"]\n'))
    assert [p.values["robot.start.x"] for p in forward] == [
        plan_run(other, i).values["robot.start.x"] for i in range(50)]
    # Another sweep seed, other draws.
    reseeded = load_sweep(sweep_file(tmp_path, '[vary."robot.start.x"]\nnormal = ["2 m", "5 cm"]'
                                     '\n', HEAD.replace("seed = 11", "seed = 12")))
    assert plan_run(reseeded, 0) != forward[0]


def si(value: str) -> float:
    return float(value.split()[0])


def test_distributions_have_the_asked_moments_and_units(tmp_path):
    sweep = load_sweep(sweep_file(tmp_path, """
[vary."robot.start.x"]
normal = ["2 m", "5 cm"]
[vary."robot.start.heading"]
mode = "add"
uniform = ["-3 deg", "3 deg"]
[vary."drivetrain.friction"]
mode = "scale"
uniform = [0.8, 1.0]
[vary."battery.resistance"]
values = ["12 mohm", "0.02 ohm", "30 mohm"]
[vary."motors.left.count"]
mode = "add"
values = [0, 1]
"""))
    plans = [plan_run(sweep, i) for i in range(400)]
    x = np.array([si(p.values["robot.start.x"]) for p in plans])
    assert all(p.values["robot.start.x"].endswith(" m") for p in plans)
    # 400 samples of N(2, 0.05): the mean within 4 standard errors, the deviation within 15 %.
    assert abs(x.mean() - 2.0) < 4 * 0.05 / math.sqrt(400)
    assert abs(x.std(ddof=1) / 0.05 - 1.0) < 0.15
    heading = np.array([si(p.values["robot.start.heading"]) for p in plans])
    assert heading.min() >= -math.radians(3) and heading.max() <= math.radians(3)  # start 0°
    assert heading.max() - heading.min() > 0.9 * math.radians(6)
    mu = np.array([p.values["drivetrain.friction"] for p in plans])
    assert mu.min() >= 0.8 * 1.1 and mu.max() <= 1.1  # the kitbot's μ is 1.1
    # `values`: run i takes value i mod 3, each equally often, converted to SI.
    assert [p.values["battery.resistance"] for p in plans[:4]] == [
        "0.012 ohm", "0.02 ohm", "0.03 ohm", "0.012 ohm"]
    assert [p.values["motors.left.count"] for p in plans[:2]] == [2, 3]
    table = run_table(sweep, plans[8], {"port": 6000, "nt_port": 6001})
    cfg = loads(config_text(table))
    assert cfg.robot.start.x == pytest.approx(si(plans[8].values["robot.start.x"]), abs=1e-12)
    assert cfg.sim.seed == plans[8].seed
    assert (cfg.bridge.port, cfg.bridge.nt_port) == (6000, 6001)


def test_docs_name_every_sweep_key_distribution_and_mode():
    import dataclasses

    from simserver.sweeps.spec import DISTRIBUTIONS, MODES, SweepTable

    text = (REPO / "docs" / "sweeps.md").read_text()
    for f in dataclasses.fields(SweepTable):
        assert f"| `{f.name}` |" in text, f.name
    for name in DISTRIBUTIONS:
        assert f"`{name} = " in text, name
    for mode in MODES:
        assert f'`mode = "{mode}"`' in text, mode


def test_a_phoenix6_robot_is_warned_to_run_paced(tmp_path):
    robot = tmp_path / "robot"
    (robot / "subsystems").mkdir(parents=True)
    (robot / "robot.py").write_text("import wpilib\n")
    (robot / "subsystems" / "drive.py").write_text("from phoenix6 import hardware\n")
    head = HEAD.replace(f'robot = "{KITBOT}"', f'robot = "{robot}"')
    fast = load_sweep(sweep_file(tmp_path, "", head))
    assert len(fast.warnings) == 1 and "paced = true" in fast.warnings[0]
    assert not fast.paced
    paced = load_sweep(sweep_file(tmp_path, "", head + "paced = true\n"))
    assert paced.paced and paced.warnings == ()
    assert load_sweep(KITBOT / "sweep.toml").warnings == ()  # PWM motors only
