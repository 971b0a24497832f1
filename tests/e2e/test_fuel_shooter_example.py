"""End to end: the fuel shooter example (examples/fuel_shooter) scores its autonomous on the
2026 field with every FUEL where a match starts, through the bridge in lock-step: its intake
takes 8 FUEL from the blue DEPOT, its beam break (a DIO) tells the robot program when the
indexer is empty, and the shooter puts at least 7 of them into the blue HUB, as its CI
scenario (auto-check.toml, `[expect.pieces]`) requires."""

from __future__ import annotations

import json

import pytest

from tests.e2e.robots import REPO, RobotProgram, config_with, simserver

pytestmark = [pytest.mark.robot, pytest.mark.network, pytest.mark.slow]

FUEL_SHOOTER = REPO / "examples" / "fuel_shooter"


def test_fuel_shooter_scores_its_autonomous(tmp_path):
    cfg, _ = config_with(tmp_path, FUEL_SHOOTER / "simserver.toml", "lockstep = true")
    robot = RobotProgram(FUEL_SHOOTER, cfg, tmp_path)
    try:
        robot.wait_ready()
        out = tmp_path / "result.json"
        run = simserver(str(cfg), "--check", str(FUEL_SHOOTER / "auto-check.toml"),
                        "--json", str(out), "--lockstep", "--fast")
        assert run.returncode == 0, run.stdout + run.stderr
        assert robot.wait_exit(15) == 0, robot.output()
    finally:
        robot.close()
    result = json.loads(out.read_text())
    checks = {c["name"]: c for c in result["checks"]}
    assert result["passed"] is True, checks
    assert checks["pieces.min_picked_up"]["values"]["count"] == 8
    assert checks["pieces.min_shots"]["values"]["count"] == 8
    assert checks["pieces.goals.blue_hub"]["values"]["count"] >= 7
