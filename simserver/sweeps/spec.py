"""The sweep file of ``simserver sweep SWEEP.toml``: what each run is, how many runs, and what
varies between them (docs/sweeps.md).

    [sweep]
    config = "simserver.toml"     # paths are relative to this file
    robot = "."                   # the robot project (robot.py), run in lock-step
    check = "auto-check.toml"     # the scenario: what passing means, how long a run is
    runs = 1000
    seed = 1
    pass_rate = 0.95

    [vary."robot.start.x"]        # a config key path
    mode = "add"                  # set (default), add (to the config's value) or scale
    normal = ["0 m", "5 cm"]      # or uniform = [low, high], or values = [...]

Loading validates everything a run needs, as ``simserver check`` does for a config: the
sweep's keys, the config, the scenario, the robot project or inputs, and what each ``vary``
entry names and draws (ConfigError naming the file, the key and the expected unit or range).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simserver import units
from simserver.config.fields import boolean, integer, number, quantity, section, text
from simserver.config.issues import ConfigError, ConfigIssue
from simserver.config.loader import load, load_section, read_toml
from simserver.config.model import Config
from simserver.runs.robotprogram import ROBOT_MAIN, uses_wall_clock_sims
from simserver.runs.scenario import Scenario, load_scenario
from simserver.sweeps.keys import NUMERIC, Target, UnknownKey, resolve
from simserver.util.untrusted import excerpt

DISTRIBUTIONS = ("uniform", "normal", "values")
MODES = ("set", "add", "scale")


@dataclass(frozen=True)
class SweepTable:
    """The ``[sweep]`` table."""

    config: str = text(None, "The robot's simserver config, relative to the sweep file.")
    check: str = text(
        None, "The scenario file (docs/scenarios.md) every run is checked against; its "
        "`enable` and `duration` say how a run goes.")
    robot: str | None = text(
        None, "The robot project folder (with robot.py), relative to the sweep file: each "
        "run starts it under `robotpy sim --simserver` in lock-step, on ports of its own. "
        "Give `robot` or `inputs`.", optional=True)
    inputs: str | None = text(
        None, "Instead of a robot program: a CSV of inputs, as `simserver run --inputs` "
        "reads, relative to the sweep file.", optional=True)
    runs: int = integer(100, "How many runs.", minimum=1, maximum=100_000)
    seed: int = integer(
        0, "The sweep's seed. Run i's drawn values and its `sim.seed` come from (seed, i) "
        "alone, so a run is the same whatever the workers and their order.",
        minimum=0, maximum=2**63 - 1)
    pass_rate: float = number(
        1.0, "The share of runs that must pass (0 to 1) for exit status 0.",
        minimum=0.0, maximum=1.0)
    timeout: float = quantity(
        "120 s", "time", "Wall time one run may take, the robot program's start included; "
        "a run that takes longer is stopped and counted as failed.", minimum=1.0,
        maximum=86400.0)
    worst: int = integer(
        10, "How many of the worst runs the report lists, each with the command that "
        "repeats it alone.", minimum=0, maximum=1000)
    paced: bool = boolean(
        False, "Run each lock-step run paced to real time instead of as fast as possible: for "
        "robot programs whose vendor libraries simulate their devices on a wall-clock thread "
        "(Phoenix 6; docs/bridge.md). A run then takes its scenario's duration in wall time, "
        "and such a program's runs are not identical to the bit from one sweep to the next.")


@dataclass(frozen=True)
class SweepFile:
    """A sweep file without its ``[vary]`` table (checked by :func:`_vary`)."""

    sweep: SweepTable = section(SweepTable, "What each run is.")


@dataclass(frozen=True)
class Vary:
    """One ``[vary."<key>"]`` entry: how run i draws the value of config key ``key``.

    kind: ``uniform`` (params low, high), ``normal`` (params mean, standard deviation) or
    ``values`` (run i takes ``params[i % len(params)]``: every value equally often). mode:
    ``set`` (the draw is the value), ``add`` (added to the config's value) or ``scale`` (a
    factor on it). Numbers are SI for a quantity key, except ``scale`` factors.
    """

    key: str
    kind: str
    mode: str
    params: tuple[Any, ...]
    target: Target


@dataclass(frozen=True)
class Sweep:
    """A validated sweep file. Paths are absolute; ``table`` is the config file's TOML
    table, which each run's config starts from."""

    source: str
    folder: Path
    config_path: Path
    check_path: Path
    robot: Path | None
    inputs: Path | None
    runs: int
    seed: int
    pass_rate: float
    timeout: float
    worst: int
    paced: bool
    vary: tuple[Vary, ...]
    table: dict[str, Any]
    config: Config
    scenario: Scenario
    warnings: tuple[str, ...] = ()


def is_sweep_file(path: str | Path) -> bool:
    """Whether ``path`` reads as a sweep file (a TOML file with a ``[sweep]`` table), not a
    config; False for anything unreadable (the config loader then says why)."""
    try:
        return isinstance(read_toml(path).get("sweep"), dict)
    except ConfigError:
        return False


def load_sweep(path: str | Path) -> Sweep:
    """Load and validate a sweep file and what it names; ConfigError naming the file (the
    sweep file, its config or its scenario) and every problem found there."""
    source = str(path)
    raw = read_toml(path)
    vary_raw = raw.pop("vary", {})
    table: SweepTable = load_section(SweepFile, raw, source=source).sweep
    folder = Path(path).resolve().parent
    issues: list[ConfigIssue] = []
    if (table.robot is None) == (table.inputs is None):
        issues.append(ConfigIssue("sweep", "give either `robot` (a robot project folder) or "
                                  "`inputs` (a CSV of inputs), not both and not neither"))
    config_path, check_path = folder / table.config, folder / table.check
    robot = folder / table.robot if table.robot is not None else None
    inputs = folder / table.inputs if table.inputs is not None else None
    if robot is not None and not (robot / ROBOT_MAIN).is_file():
        issues.append(ConfigIssue("sweep.robot", f"{robot} has no {ROBOT_MAIN}"))
    if inputs is not None and not inputs.is_file():
        issues.append(ConfigIssue("sweep.inputs", f"no file {inputs}"))
    if not config_path.is_file():
        issues.append(ConfigIssue("sweep.config", f"no file {config_path}"))
    if not check_path.is_file():
        issues.append(ConfigIssue("sweep.check", f"no file {check_path}"))
    if issues:
        raise ConfigError(source, issues)
    config = load(config_path)  # ConfigError naming the config
    scenario = load_scenario(check_path)  # ConfigError naming the scenario
    if inputs is not None and scenario.enable is not None:
        issues.append(ConfigIssue("sweep.inputs", f"{check_path} enables the robot program "
                                  f"({scenario.enable!r}), and a sweep of scripted inputs "
                                  "has none: remove `enable` from it, or give `robot`"))
    vary = _vary(vary_raw, config, issues)
    if issues:
        raise ConfigError(source, issues)
    warnings: tuple[str, ...] = ()
    if robot is not None and not table.paced and uses_wall_clock_sims(robot):
        warnings = (f"{source}: sweep.paced: {robot} uses Phoenix 6, whose simulated devices "
                    "run on a wall-clock thread: runs as fast as possible differ from what the "
                    "robot does in real time; set `paced = true` (docs/bridge.md)",)
    return Sweep(source, folder, config_path, check_path, robot, inputs, table.runs,
                 table.seed, table.pass_rate, table.timeout, table.worst, table.paced, vary,
                 read_toml(config_path), config, scenario, warnings)


def _vary(raw: Any, config: Config, issues: list[ConfigIssue]) -> tuple[Vary, ...]:
    """The ``[vary]`` entries, in key order; problems appended to ``issues``."""
    if not isinstance(raw, dict):
        issues.append(ConfigIssue("vary", "expected a table of config keys, such as "
                                  "[vary.\"robot.start.x\"]"))
        return ()
    out = []
    for key in sorted(raw):
        path = f"vary.{key!r}" if len(key) <= 80 else f"vary.{excerpt(key)}"
        entry = _entry(key, raw[key], path, config, issues)
        if entry is not None:
            out.append(entry)
    return tuple(out)


def _entry(key: str, body: Any, path: str, config: Config,
           issues: list[ConfigIssue]) -> Vary | None:
    """One ``[vary]`` entry, or None (with its problems in ``issues``)."""
    if not isinstance(body, dict):
        issues.append(ConfigIssue(path, "expected a table with one of uniform, normal, values"))
        return None
    unknown = sorted(set(body) - {*DISTRIBUTIONS, "mode"})
    if unknown:
        issues.append(ConfigIssue(f"{path}.{unknown[0]}", "unknown key (expected one of "
                                  "uniform, normal, values and optionally mode)"))
        return None
    given = [k for k in DISTRIBUTIONS if k in body]
    if len(given) != 1:
        issues.append(ConfigIssue(path, "give exactly one of uniform = [low, high], normal = "
                                  "[mean, standard deviation], values = [...]"))
        return None
    kind = given[0]
    mode = body.get("mode", "set")
    if mode not in MODES:
        issues.append(ConfigIssue(f"{path}.mode", f"must be one of {', '.join(MODES)}, got "
                                  f"{excerpt(str(mode))}"))
        return None
    try:
        target = resolve(config, key)
    except UnknownKey as exc:
        issues.append(ConfigIssue(path, str(exc)))
        return None
    problem = _fits(target, kind, mode)
    if problem is not None:
        issues.append(ConfigIssue(path, problem))
        return None
    params = _params(body[kind], kind, mode, target, f"{path}.{kind}", issues)
    if params is None:
        return None
    return Vary(key, kind, mode, params, target)


def _fits(target: Target, kind: str, mode: str) -> str | None:
    """Why ``kind`` and ``mode`` cannot vary ``target``, or None."""
    if target.kind not in NUMERIC:
        if kind != "values" or mode != "set":
            what = "a whole table" if target.kind == "section" else f"a {target.kind} key"
            return f"{what} takes only `values = [...]` (with mode \"set\")"
        return None
    if target.kind == "integer" and (kind != "values" or mode == "scale"):
        return "an integer key takes only `values = [...]` (with mode \"set\" or \"add\")"
    if mode != "set" and target.value is None:
        return f"mode {mode!r} needs the config's value, and the config leaves this key out"
    return None


def _params(raw: Any, kind: str, mode: str, target: Target, path: str,
            issues: list[ConfigIssue]) -> tuple[Any, ...] | None:
    """The parameters of a distribution: SI numbers for a quantity (bare numbers for scale
    factors), numbers for a number; any TOML values for a non-numeric key."""
    if not isinstance(raw, list) or not raw:
        issues.append(ConfigIssue(path, "expected a non-empty list"))
        return None
    if kind in ("uniform", "normal") and len(raw) != 2:
        pair = "[low, high]" if kind == "uniform" else "[mean, standard deviation]"
        issues.append(ConfigIssue(path, f"expected {pair}, got {len(raw)} values"))
        return None
    if target.kind not in NUMERIC:
        return tuple(raw)
    out = []
    for i, item in enumerate(raw):
        value = _number(item, mode, target, f"{path}[{i}]", issues)
        if value is None:
            return None
        out.append(value)
    if kind == "uniform" and out[0] > out[1]:
        issues.append(ConfigIssue(path, "low must not exceed high"))
        return None
    if kind == "normal" and out[1] < 0.0:
        issues.append(ConfigIssue(f"{path}[1]", "the standard deviation must be ≥ 0"))
        return None
    return tuple(out)


def _number(item: Any, mode: str, target: Target, path: str,
            issues: list[ConfigIssue]) -> float | None:
    """One numeric parameter in SI, or None (the problem in ``issues``)."""
    quantity_key = target.kind == "quantity" and mode != "scale"
    if quantity_key:
        assert target.dimension is not None
        if not isinstance(item, str):
            issues.append(ConfigIssue(path, f"expected {units.article(target.dimension)} "
                                      "with its unit, such as "
                                      f"{units.example(target.dimension, item)}"))
            return None
        try:
            value = units.to_si(item, target.dimension)
        except units.UnitError as exc:
            issues.append(ConfigIssue(path, str(exc)))
            return None
    elif isinstance(item, (int, float)) and not isinstance(item, bool):
        value = float(item)
    else:
        what = "a scale factor (a bare number)" if mode == "scale" else "a bare number"
        issues.append(ConfigIssue(path, f"expected {what}, got "
                                  f"{excerpt(str(item))}"))
        return None
    if not math.isfinite(value):
        issues.append(ConfigIssue(path, "must be finite"))
        return None
    if target.kind == "integer" and value != int(value):
        issues.append(ConfigIssue(path, "an integer key takes whole numbers"))
        return None
    return value
