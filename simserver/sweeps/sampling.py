"""What run i of a sweep is: its simulation seed and the config values it draws, from the
sweep's seed and i alone (never from the order runs are made in or the worker that makes
them), and the config table it runs with.

    sweep = load_sweep("sweep.toml")
    plan = plan_run(sweep, 37)         # the same on every machine, in every order
    table = run_table(sweep, plan)     # the config's TOML table with plan.values written in
"""

from __future__ import annotations

import copy
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w

from simserver.config.issues import ConfigError, ConfigIssue
from simserver.config.loader import loads
from simserver.runs.robotprogram import program_table
from simserver.sweeps import keys
from simserver.sweeps.spec import Sweep, Vary

#: Simulation seeds are drawn below this (sim.seed takes any non-negative integer; 31 bits
#: keeps them readable in a command line).
SEED_LIMIT = 2**31
#: Problems listed from a sweep's run configs before the rest are only counted.
MAX_LISTED = 20


@dataclass(frozen=True)
class RunPlan:
    """Run ``index`` of a sweep: its ``sim.seed`` and the value written for each varied key
    (key path -> TOML value, as in the run's config file)."""

    index: int
    seed: int
    values: dict[str, Any]


def _rng(sweep_seed: int, index: int, stream: str) -> np.random.Generator:
    """The random numbers of run ``index`` for ``stream`` (a key path, or "" for the run's
    seed): from these three alone, so an entry's draws do not change when others are added,
    whatever the hash seed."""
    words = [sweep_seed, index, zlib.crc32(stream.encode("utf-8")), len(stream)]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))


def plan_run(sweep: Sweep, index: int) -> RunPlan:
    """Run ``index``'s seed and values (``index`` from 0)."""
    seed = int(_rng(sweep.seed, index, "").integers(0, SEED_LIMIT))
    values = {v.key: _draw(v, index, _rng(sweep.seed, index, v.key)) for v in sweep.vary}
    if "sim.seed" in values:
        seed = int(values["sim.seed"])
    return RunPlan(index, seed, values)


def _draw(vary: Vary, index: int, rng: np.random.Generator) -> Any:
    """The TOML value run ``index`` writes for ``vary``, drawing from ``rng``."""
    if vary.kind == "values":
        picked = vary.params[index % len(vary.params)]
    elif vary.kind == "uniform":
        lo, hi = vary.params
        picked = lo + (hi - lo) * float(rng.random())
    else:
        mean, std = vary.params
        picked = mean + std * float(rng.standard_normal())
    target = vary.target
    if target.kind not in keys.NUMERIC:
        return copy.deepcopy(picked)
    if vary.mode == "add":
        picked = target.value + picked
    elif vary.mode == "scale":
        picked = target.value * picked
    return target.text(picked)


def run_table(sweep: Sweep, plan: RunPlan, bridge: dict[str, Any] | None = None
              ) -> dict[str, Any]:
    """The config table run ``plan`` runs with: the sweep's config, ``sim.seed`` and the
    drawn values written in, file names made absolute, and the ``bridge`` keys given (the
    run's own ports)."""
    table = copy.deepcopy(sweep.table)
    keys.write(table, "sim.seed", plan.seed)
    for key, value in plan.values.items():
        keys.write(table, key, value)
    return program_table(table, sweep.config_path.parent, bridge or {})


def run_source(sweep: Sweep, index: int) -> str:
    """How messages name run ``index``'s config."""
    return f"{sweep.source} run {index}"


def config_text(table: dict[str, Any]) -> str:
    """A run's config table as TOML text."""
    return tomli_w.dumps(table)


def check_runs(sweep: Sweep, progress: Callable[[int], None] | None = None) -> None:
    """Load every run's config as the run will (what ``simserver check`` accepts, the sweep
    runs); ConfigError naming the sweep file, listing the runs whose drawn values the config
    refuses (a normal's tail beyond a key's range, say). ``progress(done)`` after each."""
    issues: list[ConfigIssue] = []
    failed = 0
    base = Path(sweep.config_path).parent
    for i in range(sweep.runs):
        plan = plan_run(sweep, i)
        try:
            loads(config_text(run_table(sweep, plan)), run_source(sweep, i), base)
        except ConfigError as exc:
            failed += 1
            if failed <= MAX_LISTED:
                issues += [ConfigIssue(f"run {i}", issue.render("its config"))
                           for issue in exc.issues]
        if progress is not None:
            progress(i + 1)
    if failed:
        if failed > MAX_LISTED:
            issues.append(ConfigIssue("", f"... and {failed - MAX_LISTED} more runs"))
        issues.append(ConfigIssue("vary", f"{failed} of {sweep.runs} runs draw values their "
                                  "config refuses: narrow the distributions"))
        raise ConfigError(sweep.source, issues)
