"""End to end: the kitbot robot program's own odometry judged and recorded against simserver's
true pose, in lock-step (`robotpy sim --nogui --simserver` beside `simserver run --lockstep
--fast`).

Tolerances: the kitbot's odometry integrates 360-count encoders (1.3 mm a count) and the
simulated gyro, so in lock-step it agrees with the true pose to a few millimetres when each
pose is compared with the truth of the tick it describes; compared with the previous tick
instead, the error would be the distance driven in one 20 ms period (up to 3 cm at the
path's 1.5 m/s), which the assertions below tell apart.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import shlex
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.robots import KITBOT, REPO, RobotProgram, config_with, simserver
from tests.io.test_wpilog import read_log

pytestmark = [pytest.mark.robot, pytest.mark.network, pytest.mark.slow]

TICK_US = 20_000  # µs, the kitbot's robot period


def scenario(tmp_path: Path, name: str, odometry: str) -> Path:
    path = tmp_path / name
    path.write_text(f'enable = "autonomous"\nduration = "6 s"\n[expect]\n'
                    f'no_element_contact = true\n[expect.odometry]\n{odometry}')
    return path


@pytest.fixture
def kitbot(tmp_path):
    programs: list[RobotProgram] = []

    def start(name: str) -> tuple[RobotProgram, Path]:
        """Start the kitbot (holding the port 5810 lock until it is closed)."""
        cfg, _ = config_with(tmp_path, KITBOT / "simserver.toml")
        program = RobotProgram(KITBOT, cfg, tmp_path, name)
        programs.append(program)
        program.wait_ready()
        return program, cfg

    yield start
    for p in programs:
        p.close()


def odometry_check(doc: dict) -> dict:
    (found,) = [c for c in doc["checks"] if c["name"] == "odometry"]
    return found


def test_kitbot_odometry_passes_a_tight_bound_and_is_recorded_beside_the_truth(kitbot,
                                                                               tmp_path):
    _, cfg = kitbot("tight")
    check = scenario(tmp_path, "tight.toml",
                     'max_position_error = "1 cm"\nmax_heading_error = "0.5 deg"\n')
    out, log_path = tmp_path / "tight.json", tmp_path / "run.wpilog"
    run = simserver(str(cfg), "--lockstep", "--fast", "--check", str(check), "--json", str(out),
                    "--record", str(log_path))
    assert run.returncode == 0, run.stdout + run.stderr
    doc = json.loads(out.read_text())
    assert doc["passed"] is True and doc["reason"] is None
    odo = odometry_check(doc)
    v = odo["values"]
    # 300 ticks of 20 ms, every one compared with the pose the robot published for it
    assert v["compared"] == 300
    assert v["values"] >= 150  # it drives for 3.85 s; NT drops repeats once it stands still
    # Encoder quantization makes it nonzero; a one-period slip would make it centimetres.
    assert 1e-5 < v["max_position_error"] < 0.005
    assert v["max_heading_error"] < math.radians(0.1)
    assert "PASS" in next(line for line in run.stdout.splitlines()
                          if line.startswith("  odometry "))

    # The recording has the robot's own pose (NT:...) at the simulated time of the tick it
    # describes: compared record by record with the truth at the same stamp.
    log = read_log(log_path)
    assert log["NT:/kitbot/odometry"].type == "struct:Pose2d"
    assert "NT:/SmartDashboard/Field/Robot" in log
    truth_t = [ts for ts, _ in log["/simserver/truth/x"].records]
    truth_x = [x for _, x in log["/simserver/truth/x"].records]
    truth_y = [y for _, y in log["/simserver/truth/y"].records]
    aligned, shifted = [], []
    for ts, raw in log["NT:/kitbot/odometry"].records:
        x, y, _ = struct.unpack("<3d", raw)
        # the tick it describes: the nearest (its stamp is 0.3 ms early, the robot's clock)
        i = bisect.bisect_left(truth_t, ts - TICK_US // 2)
        if i >= len(truth_t) or abs(truth_t[i] - ts) > TICK_US // 2 or i == 0:
            continue  # before the first tick (robotInit) or after the last
        aligned.append(math.hypot(x - truth_x[i], y - truth_y[i]))
        shifted.append(math.hypot(x - truth_x[i - 1], y - truth_y[i - 1]))
    assert len(aligned) >= 150
    assert max(aligned) < 0.005
    assert max(shifted) > 0.02  # the same poses one tick off: the stamps matter


def test_kitbot_odometry_fails_an_impossible_bound_on_its_struct_topic(kitbot, tmp_path):
    _, cfg = kitbot("impossible")
    check = scenario(tmp_path, "impossible.toml",
                     'topic = "/kitbot/odometry"\nmax_position_error = "0.01 mm"\n')
    out = tmp_path / "impossible.json"
    run = simserver(str(cfg), "--lockstep", "--fast", "--check", str(check), "--json", str(out))
    assert run.returncode == 1, run.stdout + run.stderr
    doc = json.loads(out.read_text())
    assert doc["passed"] is False and doc["reason"] is None
    odo = odometry_check(doc)
    assert odo["passed"] is False
    assert odo["expected"] == "/kitbot/odometry: position ≤ 0.00 m"
    assert 1e-5 < odo["values"]["max_position_error"] < 0.005
    assert "overall: FAIL (1 of 2 checks failed)" in run.stdout


def doc_commands() -> list[list[str]]:
    """The `simserver run` lines of docs/scenarios.md's code blocks (continuations joined)."""
    text = (REPO / "docs" / "scenarios.md").read_text().replace("\\\n", " ")
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M)
    return [shlex.split(line, comments=True) for block in blocks for line in block.splitlines()
            if line.startswith("simserver run ")]


def test_the_scenario_docs_commands_run_and_pass_on_the_kitbot(kitbot, tmp_path):
    """Each `simserver run` of docs/scenarios.md, as written in examples/kitbot (or, naming
    examples/kitbot, in the repository): those with `--robot` start the robot program
    themselves; the others run beside one started here, and must say --lockstep --fast."""
    commands = doc_commands()
    assert len(commands) == 6
    project = tmp_path / "kitbot"
    shutil.copytree(KITBOT, project, ignore=shutil.ignore_patterns("networktables.json"))
    for i, command in enumerate(commands):
        robot = None
        if "--robot" not in command:
            assert "--lockstep" in command and "--fast" in command, command
            robot, cfg = kitbot(f"doc{i}")
        # its files by absolute path, outputs in tmp_path
        args = [str(cfg) if a == "simserver.toml" and robot is not None else
                str(KITBOT / a) if a == "auto-check.toml" else
                str(REPO / a) if a.startswith("examples/") else
                str(tmp_path / Path(a).name) if a.endswith((".json", ".wpilog", ".log")) else a
                for a in command[2:]]
        run = subprocess.run([sys.executable, "-m", "simserver", "run", *args], cwd=project,
                             capture_output=True, text=True, timeout=180)
        if robot is not None:
            robot.close()  # frees port 5810 (and its lock) for the next command's program
        assert run.returncode == 0, (command, run.stdout + run.stderr)
        assert "overall: PASS (all 4 checks passed)" in run.stdout, command
    log = read_log(tmp_path / "auto.wpilog")
    assert {n for n in log if n.startswith("NT:")} >= {"NT:/kitbot/odometry",
                                                     "NT:/SmartDashboard/Field/Robot"}
    assert not any(n.startswith(("NT:/FMSInfo", "NT:/LiveWindow")) for n in log)  # prefixes
