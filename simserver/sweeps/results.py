"""What a sweep found: the pass rate overall and per check, the distribution of every value
the checks measured, the worst runs with the command that repeats each alone, and the files
(docs/sweeps.md "Results").

    report = Report.of(sweep, records, planned=1000, interrupted=False)
    print(report.table())
    report.write(out_dir)             # runs.jsonl, summary.json, failed/<run>.log
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simserver.sweeps.spec import Sweep

#: Quantiles shown for each measured value.
QUANTILES = (0.0, 0.05, 0.5, 0.95, 1.0)
#: Record fields that measure the machine rather than the run (left out when comparing).
MACHINE_FIELDS = ("timing", "host", "log")


def repeat_command(sweep_file: str, index: int) -> str:
    """The command line that repeats run ``index`` alone, keeping its files."""
    return f"simserver sweep {shlex.quote(sweep_file)} --run {index}"


def _rank(record: dict[str, Any]) -> tuple[bool, bool, int, int]:
    """Worst first: failed runs, those that ended with an error first, then by the number of
    checks failed, then by run."""
    failed = sum(not c["passed"] for c in record.get("checks") or [])
    return (bool(record["passed"]), record["error"] is None, -failed, record["run"])


@dataclass
class Report:
    """The results of a sweep's runs (records sorted by run)."""

    sweep_file: str
    planned: int
    pass_rate_goal: float
    records: list[dict[str, Any]]
    interrupted: bool = False
    worst_count: int = 10
    workers: int = 0
    wall_time: float = 0.0
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, sweep: Sweep, records: Sequence[dict[str, Any]], planned: int,
           interrupted: bool = False, workers: int = 0, wall_time: float = 0.0) -> Report:
        ordered = sorted(records, key=lambda r: r["run"])
        report = cls(sweep.source, planned, sweep.pass_rate, ordered, interrupted, sweep.worst,
                     workers, wall_time)
        report.checks = _per_check(ordered)
        return report

    @property
    def passed_runs(self) -> int:
        return sum(bool(r["passed"]) for r in self.records)

    @property
    def pass_rate(self) -> float:
        """Share of the runs that ended which passed (0 with none)."""
        return self.passed_runs / len(self.records) if self.records else 0.0

    @property
    def met(self) -> bool:
        """Whether every planned run ended and the pass rate meets the goal."""
        return (not self.interrupted and len(self.records) == self.planned
                and self.pass_rate >= self.pass_rate_goal)

    def worst(self) -> list[dict[str, Any]]:
        """The worst runs (failed first), at most ``worst_count``."""
        failed = [r for r in self.records if not r["passed"]]
        return sorted(failed, key=_rank)[:self.worst_count]

    def timing(self) -> dict[str, dict[str, float | None]]:
        """Per part of a run (robot program start-up, simulation, whole run): mean and total
        seconds over the runs that measured it."""
        out: dict[str, dict[str, float | None]] = {}
        for part in ("robot_start", "simulate", "checks", "total"):
            values = [r["timing"][part] for r in self.records
                      if r.get("timing") and r["timing"].get(part) is not None]
            out[part] = {"mean": float(np.mean(values)) if values else None,
                         "sum": float(np.sum(values)) if values else None}
        return out

    def summary(self) -> dict[str, Any]:
        """The machine-readable summary (summary.json)."""
        return {
            "sweep": self.sweep_file,
            "planned": self.planned,
            "ended": len(self.records),
            "interrupted": self.interrupted,
            "passed": self.passed_runs,
            "pass_rate": self.pass_rate,
            "pass_rate_goal": self.pass_rate_goal,
            "met": self.met,
            "checks": self.checks,
            "worst": [{"run": r["run"], "error": r["error"],
                       "failed_checks": [c["name"] for c in r.get("checks") or []
                                         if not c["passed"]],
                       "values": r["values"], "seed": r["seed"],
                       "command": repeat_command(self.sweep_file, r["run"])}
                      for r in self.worst()],
            "workers": self.workers,
            "wall_time": self.wall_time,
            "timing": self.timing(),
        }

    def table(self) -> str:
        """The plain-text report: pass rates, value distributions, the worst runs."""
        lines = [f"sweep {self.sweep_file}: {len(self.records)} of {self.planned} runs"
                 + (" (stopped early)" if self.interrupted else "")
                 + f", {self.passed_runs} passed ({self.pass_rate:.1%}; goal "
                 f"{self.pass_rate_goal:.1%}: {'met' if self.met else 'NOT met'})"]
        if self.records and self.wall_time > 0:
            lines.append(f"{len(self.records)} runs in {self.wall_time:.0f} s on {self.workers} "
                         f"workers: {self.wall_time / len(self.records):.2f} s a run")
        if self.checks:
            width = max(len(n) for n in self.checks)
            lines.append("")
            lines.append(f"  {'check'.ljust(width)}  pass rate   value: min / p5 / median / "
                         "p95 / max")
            for name, info in self.checks.items():
                lines.append(f"  {name.ljust(width)}  {info['pass_rate']:>8.1%}")
                for value, q in info["values"].items():
                    shown = " / ".join("-" if v is None else f"{v:.4g}" for v in q.values())
                    lines.append(f"  {''.ljust(width)}            {value}: {shown}")
        errors = [r for r in self.records if r["error"]]
        if errors:
            lines.append(f"\n  {len(errors)} runs ended with an error, e.g. run "
                         f"{errors[0]['run']}: {str(errors[0]['error'])[:200]}")
        worst = self.worst()
        if worst:
            lines.append("\nworst runs (repeat one alone with the command shown):")
            for r in worst:
                why = r["error"] or ", ".join(c["name"] for c in r.get("checks") or []
                                              if not c["passed"])
                lines.append(f"  run {r['run']}: {why}")
                lines.append(f"    {repeat_command(self.sweep_file, r['run'])}")
        return "\n".join(lines)

    def write(self, out: Path) -> list[Path]:
        """Write runs.jsonl (one record per line, by run), summary.json and each failed run's
        robot program output (failed/<run>.log) into ``out``; the paths written."""
        out.mkdir(parents=True, exist_ok=True)
        runs = out / "runs.jsonl"
        with runs.open("w", encoding="utf-8") as f:
            for r in self.records:
                f.write(json.dumps({k: v for k, v in r.items() if k != "log"},
                                   sort_keys=True, allow_nan=False, default=_finite) + "\n")
        summary = out / "summary.json"
        summary.write_text(json.dumps(self.summary(), indent=2, allow_nan=False,
                                      default=_finite) + "\n", encoding="utf-8")
        written = [runs, summary]
        logs = [r for r in self.records if r.get("log")]
        if logs:
            (out / "failed").mkdir(exist_ok=True)
            for r in logs:
                path = out / "failed" / f"{r['run']}.log"
                path.write_text(r["log"], encoding="utf-8")
            written.append(out / "failed")
        return written


def _finite(value: Any) -> Any:
    """json.dumps fallback: numpy numbers as Python ones."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON: {type(value).__name__}")


def _per_check(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per check name: how many runs it judged, its pass rate, and the quantiles of each value
    it measured (SI units, as in the records)."""
    names: dict[str, dict[str, Any]] = {}
    for r in records:
        for c in r.get("checks") or []:
            info = names.setdefault(c["name"], {"runs": 0, "passed": 0, "samples": {}})
            info["runs"] += 1
            info["passed"] += bool(c["passed"])
            for key, value in (c.get("values") or {}).items():
                if isinstance(value, (int, float)) and not isinstance(value, bool) \
                        and math.isfinite(value):
                    info["samples"].setdefault(key, []).append(float(value))
    out = {}
    for name in sorted(names):
        info = names[name]
        out[name] = {
            "runs": info["runs"], "passed": info["passed"],
            "pass_rate": info["passed"] / info["runs"],
            "values": {key: dict(zip((f"p{round(q * 100)}" for q in QUANTILES),
                                     (float(v) for v in np.quantile(samples, QUANTILES)),
                                     strict=True))
                       for key, samples in sorted(info["samples"].items())},
        }
    return out


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without the fields that measure the machine (for comparing two sweeps)."""
    return {k: v for k, v in record.items() if k not in MACHINE_FIELDS}
