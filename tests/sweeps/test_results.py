"""A sweep's report from its run records: pass rates, quantiles, the worst runs, the files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from simserver.sweeps.results import Report, comparable, repeat_command


def record(run: int, passed: bool, error: str | None = None,
           errors: tuple[float, float] = (0.01, 0.02)) -> dict:
    checks = [] if error else [
        {"name": "final_pose", "passed": passed, "expected": "", "measured": "",
         "values": {"position_error": errors[0]}},
        {"name": "trajectory", "passed": True, "expected": "", "measured": "",
         "values": {"max_error": errors[1], "samples": 300}},
    ]
    return {"run": run, "seed": run * 7, "values": {"robot.start.x": f"{run} m"},
            "passed": passed and error is None, "error": error, "checks": checks,
            "final_pose": None if error else {"x": 1.0, "y": 2.0, "heading": 0.0},
            "summary": None, "timing": {"robot_start": 0.3, "simulate": 0.4, "total": 0.8},
            "host": "here", "log": "robot output" if not passed and not error else None}


class Sweep:
    """What Report.of reads of a sweep."""

    source = "sweeps/auto sweep.toml"
    pass_rate = 0.75
    worst = 3


def test_pass_rates_quantiles_and_the_goal():
    records = [record(i, passed=i % 4 != 0, errors=(0.01 * i, 0.5)) for i in range(8)]
    report = Report.of(Sweep(), list(reversed(records)), planned=8)
    assert [r["run"] for r in report.records] == list(range(8))  # by run, whatever arrived
    assert report.passed_runs == 6 and report.pass_rate == 0.75 and report.met
    pose = report.checks["final_pose"]
    assert (pose["runs"], pose["passed"], pose["pass_rate"]) == (8, 6, 0.75)
    errors = [0.01 * i for i in range(8)]
    assert list(pose["values"]["position_error"].values()) == pytest.approx(
        list(np.quantile(errors, (0.0, 0.05, 0.5, 0.95, 1.0))), abs=1e-15)
    assert report.checks["trajectory"]["pass_rate"] == 1.0
    # One run short of the goal, or runs missing, or stopped early: not met.
    assert not Report.of(Sweep(), records[:7], planned=8).met
    assert not Report.of(Sweep(), records, planned=8, interrupted=True).met


def test_worst_runs_come_first_with_the_command_that_repeats_them(tmp_path):
    records = [record(0, True), record(1, False), record(2, False, error="timed out after 5 s"),
               record(3, False), record(4, True), record(5, False)]
    report = Report.of(Sweep(), records, planned=6)
    assert [r["run"] for r in report.worst()] == [2, 1, 3]  # errors first, at most `worst`
    assert repeat_command(Sweep.source, 2) == "simserver sweep 'sweeps/auto sweep.toml' --run 2"
    summary = report.summary()
    assert summary["worst"][0]["command"] == repeat_command(Sweep.source, 2)
    assert summary["timing"]["simulate"] == {"mean": pytest.approx(0.4), "sum": pytest.approx(2.4)}
    text = report.table()
    assert "6 runs, 2 passed (33.3%; goal 75.0%: NOT met)" in text
    assert "simserver sweep 'sweeps/auto sweep.toml' --run 2" in text
    written = report.write(tmp_path / "out")
    lines = (tmp_path / "out" / "runs.jsonl").read_text().splitlines()
    assert [json.loads(line)["run"] for line in lines] == list(range(6))
    assert all("log" not in json.loads(line) for line in lines)
    assert sorted(p.name for p in (tmp_path / "out" / "failed").iterdir()) == [
        "1.log", "3.log", "5.log"]  # run 2 never got a log: it failed before its program ran
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["ended"] == 6
    assert len(written) == 3


def test_comparable_leaves_out_only_what_measures_the_machine():
    r = record(0, False)
    assert set(r) - set(comparable(r)) == {"timing", "host", "log"}
