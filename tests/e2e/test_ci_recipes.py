"""The CI recipes teams paste (examples/ci/*.yml), read as GitHub would and their steps run here.

What GitHub alone can run is checked for form: every action pinned to a commit, simserver
pinned to this release through SIMSERVER_VERSION, one install path (pip, no image build).
The steps themselves run here as written, with two stand-ins: pip resolves offline against
this environment (`--dry-run --no-index`), and the Java recipe's `./gradlew simulateJava`
is RobotPy's own halsim_ws server (`robotpy sim --ws-server`), the same protocol GradleRIO's
`wpi.sim.addWebsocketsServer()` serves; Gradle itself is not run here.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

import simserver
from tests.e2e.robots import ROBOT_LOCK
from tests.locks import FileLock
from tests.ntutil import REPO

pytestmark = [pytest.mark.robot, pytest.mark.network, pytest.mark.slow]

RECIPES = REPO / "examples" / "ci"
WSBOT = REPO / "tests" / "e2e" / "wsbot"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


def recipe(name: str) -> dict[str, Any]:
    return yaml.safe_load((RECIPES / name).read_text())


def steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    (job,) = doc["jobs"].values()
    return job["steps"]


def step(doc: dict[str, Any], name: str) -> str:
    """The shell script of the step called ``name``."""
    (found,) = [s["run"] for s in steps(doc) if s.get("name") == name]
    return found


@pytest.mark.parametrize("name", ["simserver.yml", "simserver-java.yml"])
def test_a_recipe_pins_its_actions_and_simserver_to_this_release(name):
    doc = recipe(name)
    assert doc["env"]["SIMSERVER_VERSION"] == simserver.__version__
    text = (RECIPES / name).read_text()
    assert "@main" not in text and "git+" not in text
    assert "docker build" not in text  # one install path: pip
    uses = [s["uses"] for s in steps(doc) if "uses" in s]
    assert uses and all(PINNED.match(u) for u in uses), uses
    installs = [line for s in steps(doc) for line in s.get("run", "").splitlines()
                if "pip install" in line]
    assert 'pip install "frc-simserver==${SIMSERVER_VERSION}"' in installs[0], installs


def _bash(script: str, cwd: Path, timeout: float,
          env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    """``script`` as a GitHub `run:` step runs it (bash -e -o pipefail), on this venv's PATH."""
    bin_dir = str(Path(sys.executable).parent)
    full_env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(cwd), "PYTHONUNBUFFERED": "1",
                **(env or {})}
    start = time.monotonic()
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                          cwd=cwd, env=full_env, capture_output=True, text=True,
                          timeout=timeout)
    return done, time.monotonic() - start


def offline(script: str) -> str:
    """The install step, resolved against this environment instead of downloading."""
    return script.replace("python -m pip install", "python -m pip install --dry-run --no-index")


@pytest.fixture
def port_5810():
    """The robot programs of these recipes bind NT port 5810 (and halsim_ws 3300)."""
    with FileLock(ROBOT_LOCK):
        yield


def java_project(tmp_path: Path, robot_py: str | None = None) -> Path:
    """A project dir as the Java recipe expects (simserver.toml, auto-check.toml), whose
    robot program is tests/e2e/wsbot under RobotPy's halsim_ws server."""
    project = tmp_path / "project"
    shutil.copytree(WSBOT, project)
    if robot_py is not None:
        (project / "robot.py").write_text(robot_py)
    (project / "auto-check.toml").write_text(
        'enable = "autonomous"\nduration = "4 s"\n[expect]\nno_wall_contact = true\n'
        'min_battery_voltage = "9 V"\n')
    return project


def java_check_step(tmp_path: Path) -> str:
    robot = f"{shlex.quote(sys.executable)} -m robotpy --main robot.py sim --nogui --ws-server"
    script = step(recipe("simserver-java.yml"), "Autonomous scenario check")
    assert "./gradlew simulateJava" in script
    return script.replace("./gradlew simulateJava", robot)


def test_the_java_recipes_check_step_passes_against_a_halsim_ws_robot(tmp_path, port_5810):
    install = step(recipe("simserver-java.yml"), "Install simserver")
    done, _ = _bash(offline(install), tmp_path, 120,
                    {"SIMSERVER_VERSION": simserver.__version__})
    assert done.returncode == 0, done.stdout + done.stderr
    project = java_project(tmp_path)
    done, _ = _bash(java_check_step(tmp_path), project, 180,
                       {"WSBOT_LOG": str(tmp_path / "wsbot.jsonl")})
    assert done.returncode == 0, done.stdout + done.stderr + (project / "out" / "robot.log"
                                                              ).read_text()
    assert "overall: PASS" in done.stdout
    assert json.loads((project / "out" / "result.json").read_text())["passed"] is True


def test_the_java_recipe_fails_at_once_when_the_robot_program_dies(tmp_path, port_5810):
    project = java_project(tmp_path, "import wpilib\nraise RuntimeError('robot code bug')\n")
    done, took = _bash(java_check_step(tmp_path), project, 180,
                       {"WSBOT_LOG": str(tmp_path / "wsbot.jsonl")})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the robot program ended before simserver" in done.stdout
    assert "robot code bug" in done.stdout  # its output's tail, in the job's log
    assert took < 60  # not the --wait of 180 s


@pytest.mark.parametrize("project", ["kitbot", "ctre_swerve"])
def test_the_robotpy_recipes_steps_pass_on_an_example_project(project, tmp_path):
    """Install (resolved offline: the project's own requirements, phoenix6 and commands2 for
    ctre_swerve, and simserver's robot side at this version) and the check, as written. No
    port lock: `run --robot` puts the robot program on free ports."""
    doc = recipe("simserver.yml")
    copy = tmp_path / project
    shutil.copytree(REPO / "examples" / project, copy,
                    ignore=shutil.ignore_patterns("ctre_sim", "networktables.json"))
    env = {"SIMSERVER_VERSION": simserver.__version__}
    done, _ = _bash(offline(step(doc, "Install simserver and the robot's requirements")), copy,
                    120, env)
    assert done.returncode == 0, done.stdout + done.stderr
    wanted = (copy / "requirements-sim.txt").read_text().split()
    assert f"frc-simserver[robot]=={simserver.__version__}" in wanted
    assert "Would install" not in done.stdout  # all of it is what this environment has
    done, _ = _bash(step(doc, "Autonomous scenario check"), copy, 180, env)
    log = copy / "out" / "robot.log"
    assert done.returncode == 0, done.stdout + done.stderr + (log.read_text() if log.exists()
                                                              else "")
    assert "overall: PASS" in done.stdout
    assert json.loads((copy / "out" / "result.json").read_text())["passed"] is True
