"""``simserver robot-requirements``: a RobotPy project's pip requirements as RobotPy's own
parser reads them (and the tomllib fallback, the same list), bad pyproject.toml files exit 2
naming the file and key."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from simserver.cli import main
from simserver.initcmd.requirements import (
    RequirementsError,
    bridge_requirement,
    project_requirements,
)
from tests.ntutil import REPO

EXAMPLES = REPO / "examples"


def cli(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["robot-requirements", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def without_robotpy_installer(monkeypatch):
    """As on a machine without robotpy-installer: its import fails, the fallback reads."""
    monkeypatch.setitem(sys.modules, "robotpy_installer", None)


def project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(text)
    return tmp_path


def test_ctre_swerve_needs_phoenix6_and_robotpy_with_commands2():
    code, out, _ = cli(EXAMPLES / "ctre_swerve")
    assert code == 0
    lines = out.splitlines()
    assert lines[:2] == ["robotpy[commands2]==2026.2.2", "phoenix6==26.3.0"]
    assert lines[2] == bridge_requirement() and "[robot]==" in lines[2]


def test_no_bridge_prints_the_projects_own_requirements_only():
    code, out, _ = cli(EXAMPLES / "kitbot", "--no-bridge")
    assert code == 0 and out.splitlines() == ["robotpy==2026.2.2"]


@pytest.mark.parametrize("name", ["ctre_swerve", "kitbot", "rev_maxswerve", "swerve"])
def test_the_fallback_reads_what_robotpys_parser_reads(name, monkeypatch):
    folder = EXAMPLES / name
    if not (folder / "pyproject.toml").is_file():
        pytest.skip("no pyproject.toml")
    pytest.importorskip("robotpy_installer")
    real = project_requirements(folder)
    monkeypatch.setitem(sys.modules, "robotpy_installer", None)
    assert project_requirements(folder) == real


def test_the_bridge_pins_this_simserver():
    """The installed distribution that holds the simserver package, at its version."""
    name, _, version = bridge_requirement().partition("[robot]==")
    assert name in importlib.metadata.packages_distributions()["simserver"]
    assert version == importlib.metadata.version(name)


BAD = {
    "missing table": ("[project]\nname = 'x'\n", "tool.robotpy"),
    "missing version": ("[tool.robotpy]\ncomponents = []\n", "tool.robotpy.robotpy_version"),
    "bad version": ("[tool.robotpy]\nrobotpy_version = 'banana'\n",
                    "tool.robotpy.robotpy_version"),
    "bad requirement": ("[tool.robotpy]\nrobotpy_version = '2026.2.2'\n"
                        "requires = ['phoenix6==']\n", "tool.robotpy.requires"),
    "not TOML": ("[tool.robotpy\nrobotpy_version = '2026.2.2'\n", "TOML"),
}


@pytest.mark.parametrize("parser", ["robotpy-installer", "fallback"])
@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_pyproject_exits_2_naming_the_file_and_key(tmp_path, case, parser, monkeypatch):
    if parser == "fallback":
        monkeypatch.setitem(sys.modules, "robotpy_installer", None)
    else:
        pytest.importorskip("robotpy_installer")
    text, key = BAD[case]
    folder = project(tmp_path, text)
    code, out, err = cli(folder)
    assert code == 2, out
    assert str(folder / "pyproject.toml") in err and key in err, err
    assert out == ""


def test_the_fallback_refuses_wrong_types(tmp_path, without_robotpy_installer):
    folder = project(tmp_path, "[tool.robotpy]\nrobotpy_version = '2026.2.2'\n"
                               "requires = [3]\n")
    with pytest.raises(RequirementsError, match=r"tool\.robotpy\.requires: expected a list"):
        project_requirements(folder)
    folder = project(tmp_path, "[tool.robotpy]\nrobotpy_version = 2026\n")
    with pytest.raises(RequirementsError, match=r"robotpy_version: .* got int '2026'"):
        project_requirements(folder)


def test_a_missing_pyproject_exits_2_naming_it(tmp_path):
    code, _, err = cli(tmp_path)
    assert code == 2 and str(tmp_path / "pyproject.toml") in err


def test_the_output_is_a_requirements_file_pip_accepts(tmp_path):
    """pip reads it, and finds every line satisfied by what this test environment has
    installed (the example's RobotPy and phoenix6, this simserver): nothing is downloaded."""
    req = tmp_path / "requirements.txt"
    code, out, _ = cli(EXAMPLES / "ctre_swerve")
    assert code == 0
    req.write_text(out)
    result = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-index",
                             "--no-deps", "-r", str(req)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("Requirement already satisfied") == len(out.splitlines())
