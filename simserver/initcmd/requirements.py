"""``simserver robot-requirements [PROJECT_DIR]``: the pip requirements of a RobotPy project, one
per line, for ``pip install -r`` (a CI job installs what the robot program imports: RobotPy's
components, vendor libraries such as phoenix6 or robotpy-rev, and simserver's bridge).

A RobotPy project names them in its ``pyproject.toml``::

    [tool.robotpy]
    robotpy_version = "2026.2.2"           # -> robotpy==2026.2.2
    components = ["commands2"]             # -> robotpy[commands2]==2026.2.2
    requires = ["phoenix6==26.3.0"]        # -> phoenix6==26.3.0, as written

They are read with RobotPy's own parser (robotpy-installer's ``pyproject`` module, what
``robotpy sync`` reads) when it is installed, so the list is the one RobotPy would install;
without it, with the fallback below, which reads the same three keys with tomllib and checks
less (no RobotPy year check; requirement lines are checked with ``packaging`` only where it is
installed).
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path
from typing import Any

import click

from simserver import DISTRIBUTION, __version__
from simserver.config.issues import ConfigError
from simserver.config.loader import read_toml
from simserver.util.untrusted import excerpt

PYPROJECT = "pyproject.toml"
#: The table of pyproject.toml RobotPy reads.
TABLE = "tool.robotpy"
#: The extra with what the robot side needs: RobotPy and the bridge's entry point.
ROBOT_EXTRA = "robot"
#: A version as RobotPy's projects write it (PEP 440, loosely: 2026.2.2, 2026.0.0b4).
_VERSION = re.compile(r"^[0-9]+(\.[0-9]+)*([a-z]+[0-9]*)?(\.?(post|dev)[0-9]+)?$")
#: An extra's name (PEP 685, loosely).
_EXTRA = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")


class RequirementsError(Exception):
    """A pyproject.toml that does not give a RobotPy project's requirements; str() names the
    file and the key."""


def project_requirements(project: Path) -> list[str]:
    """The requirements of the RobotPy project in folder ``project``: robotpy (with its
    components) pinned to ``robotpy_version``, then ``requires``. RequirementsError when its
    pyproject.toml is missing or does not give them."""
    path = project / PYPROJECT
    try:
        table = read_toml(path)  # a regular UTF-8 file of sane size, valid TOML
    except ConfigError as exc:
        problem = "; ".join(issue.message for issue in exc.issues)
        if not path.exists():
            problem += f" (a RobotPy project keeps its requirements in its [{TABLE}])"
        raise RequirementsError(f"{path}: {problem}") from None
    try:
        from robotpy_installer import pyproject
    except ImportError:
        return _fallback(table, path)
    return _robotpy(pyproject, project, path)


def _robotpy(pyproject: Any, project: Path, path: Path) -> list[str]:
    """The requirements as robotpy-installer's ``pyproject.load`` reads them."""
    from packaging.requirements import InvalidRequirement

    try:
        parsed = pyproject.load(project)
    except pyproject.PyprojectError as exc:
        message = str(exc).replace("tools.robotpy", TABLE)  # its messages' spelling
        raise RequirementsError(message if str(path) in message else f"{path}: {message}"
                                ) from None
    except InvalidRequirement as exc:
        raise RequirementsError(f"{path}: {TABLE}.requires: not a pip requirement: "
                                f"{str(exc).splitlines()[0][:200]}") from None
    except (ValueError, TypeError) as exc:  # a version or list of the wrong type
        raise RequirementsError(f"{path}: [{TABLE}]: {excerpt(str(exc), 200)} (robotpy_version "
                                "is a string, components and requires lists of strings)"
                                ) from None
    return [str(line) for line in parsed.get_install_list()]


def _fallback(table: dict[str, Any], path: Path) -> list[str]:
    """The requirements read from ``table`` (pyproject.toml's) without robotpy-installer."""
    section = table.get("tool", {}).get("robotpy") if isinstance(table.get("tool"), dict) \
        else None
    if not isinstance(section, dict):
        raise RequirementsError(f"{path}: no [{TABLE}] table (a RobotPy project's "
                                "pyproject.toml has one; `robotpy init` writes it)")
    version = section.get("robotpy_version")
    if not isinstance(version, str) or not _VERSION.match(version):
        found = "missing" if version is None else f"got {_shown(version)}"
        raise RequirementsError(f"{path}: {TABLE}.robotpy_version: expected a version "
                                f"string such as \"2026.2.2\", {found}")
    components = _strings(section.get("components"), path, "components")
    for name in components:
        if not _EXTRA.match(name):
            raise RequirementsError(f"{path}: {TABLE}.components: not a component name: "
                                    f"{excerpt(name, 60)}")
    requires = _strings(section.get("requires"), path, "requires")
    for line in requires:
        _check_requirement(line, path)
    extras = f"[{','.join(components)}]" if components else ""
    return [f"robotpy{extras}=={version}", *(line.strip() for line in requires)]


def _strings(value: object, path: Path, key: str) -> list[str]:
    """``value`` as RobotPy reads ``components`` and ``requires``: a list of strings, one
    string, or nothing."""
    if value is None or value == [] or value == "":
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise RequirementsError(f"{path}: {TABLE}.{key}: expected a list of strings, got "
                            f"{_shown(value)}")


def _shown(value: object) -> str:
    """A TOML value of the wrong type as a message shows it: its type and a short excerpt."""
    text = value if isinstance(value, str) else repr(value)
    return f"{type(value).__name__} {excerpt(text, 60)}"


def _check_requirement(line: str, path: Path) -> None:
    """RequirementsError unless ``line`` is one pip requirement (checked with ``packaging``
    where it is installed, else only that it is one non-empty line)."""
    problem = None
    if not line.strip() or "\n" in line or "\r" in line:
        problem = "one requirement per string"
    else:
        try:
            from packaging.requirements import InvalidRequirement, Requirement
        except ImportError:
            return
        try:
            Requirement(line)
        except InvalidRequirement as exc:
            problem = str(exc).splitlines()[0]
    if problem is not None:
        raise RequirementsError(f"{path}: {TABLE}.requires: {excerpt(line, 80)}: "
                                f"{problem[:160]}")


def bridge_requirement() -> str:
    """simserver's own robot side, pinned to the simserver that runs: ``frc-simserver[robot]
    ==VERSION`` (pip takes the installed one when it matches, also an editable install)."""
    names = importlib.metadata.packages_distributions().get("simserver", [])
    for name in (DISTRIBUTION, "simserver", *names):
        if name in names:
            return f"{name}[{ROBOT_EXTRA}]=={importlib.metadata.version(name)}"
    return f"{DISTRIBUTION}[{ROBOT_EXTRA}]=={__version__}"


@click.command("robot-requirements")
@click.argument("project_dir", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--bridge/--no-bridge", default=True, show_default=True,
              help="End the list with simserver's robot side (frc-simserver[robot], pinned to "
                   "this simserver's version): the bridge the robot program runs with "
                   "`--simserver`, and the RobotPy it is tested with, so pip resolves them "
                   "with the project's own requirements in one go.")
def robot_requirements_cmd(project_dir: Path, bridge: bool) -> None:
    """Print the pip requirements of the RobotPy project in PROJECT_DIR (default: here), one
    per line: robotpy[components]==robotpy_version and `requires` from its pyproject.toml's
    [tool.robotpy] (read as `robotpy sync` reads it), then simserver's robot side.

    Exit 2, naming the file and key, when pyproject.toml is missing or does not say.

    \b
    Examples:
      simserver robot-requirements examples/ctre_swerve
      simserver robot-requirements > requirements-sim.txt && pip install -r requirements-sim.txt
      simserver run --robot . --lockstep --fast --check auto-check.toml
    """
    try:
        lines = project_requirements(project_dir)
    except RequirementsError as exc:
        click.echo(f"simserver: {exc}", err=True)
        sys.exit(2)
    if bridge:
        lines.append(bridge_requirement())
    for line in lines:
        click.echo(line)
