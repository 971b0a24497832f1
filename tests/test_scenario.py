"""CI scenario checks: loading scenario files, judging real kitbot runs, trajectory errors,
the report and the JSON summary, and error messages in the config loader's form."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from wpimath.geometry import Pose2d, Rotation2d, Translation2d
from wpimath.trajectory import Trajectory, TrajectoryConfig, TrajectoryGenerator, TrajectoryUtil

from simserver.config.loader import ConfigError, default_config_text, load_default, loads
from simserver.contract.snapshot import Snapshot
from simserver.docgen import _rows_deep
from simserver.runs.scenario import (
    NEVER_ENABLED,
    CheckResult,
    Scenario,
    ScenarioCheck,
    ScenarioFile,
    ScenarioResult,
    load_scenario,
)
from simserver.world import World
from tests.worlds import IDEAL_DRIVE

DOCS = Path(__file__).resolve().parent.parent / "docs" / "scenarios.md"
DT = 0.02  # s per tick, as a 50 Hz robot loop
START_X, START_Y = 2.0, 4.0  # m, the kitbot's start pose (heading 0)
KINEMATIC_SPEED = 2.0  # m/s at full duty in the kinematic kitbot below
OFFSET = 0.1  # m, lateral offset of the synthetic path from the trajectory


# --- helpers ------------------------------------------------------------------------------------


def write_scenario(directory: Path, body: str, name: str = "auto-check.toml") -> Path:
    path = directory / name
    path.write_text(body, encoding="utf-8")
    return path


def scenario_of(directory: Path, expect: str, head: str = 'enable = "autonomous"\n'
                'duration = "2 s"\n') -> Scenario:
    """Load a scenario with the given top lines and ``[expect]`` body."""
    return load_scenario(write_scenario(directory, f"{head}\n[expect]\n{expect}"))


def kinematic_world() -> World:
    """The kitbot with speed ∝ duty: wheel speed = duty × 2 m/s exactly, no slip."""
    text = default_config_text().replace('fidelity = "physical"', 'fidelity = "kinematic"')
    return World(loads(text + f'\n[drivetrain.kinematic]\nmax_speed = "{KINEMATIC_SPEED} m/s"\n'))


def drive(world: World, left: float, right: float, seconds: float,
          check: ScenarioCheck | None = None, t0: float = 0.0) -> float:
    """Step ``world`` at constant duties for ``seconds`` in DT ticks, feeding ``check`` with
    t = t0 + time since this call. Returns the t of the last tick."""
    t = t0
    for _ in range(round(seconds / DT)):
        world.set_motor("left", left)
        world.set_motor("right", right)
        world.step(DT)
        t += DT
        if check is not None:
            check.observe(t, world.snapshot())
    return t


def check_named(result: ScenarioResult, name: str) -> CheckResult:
    (found,) = [c for c in result.checks if c.name == name]
    return found


def make_trajectory(path: Path) -> Trajectory:
    """An S-curve from the kitbot's start, written as PathWeaver JSON to ``path`` and read back
    (the checker sees exactly the JSON's values)."""
    traj = TrajectoryGenerator.generateTrajectory(
        Pose2d(START_X, START_Y, Rotation2d(0.0)), [Translation2d(3.5, 4.6)],
        Pose2d(6.0, 5.0, Rotation2d(0.0)), TrajectoryConfig(2.0, 2.0))
    path.parent.mkdir(parents=True, exist_ok=True)
    TrajectoryUtil.toPathweaverJson(traj, str(path))
    return TrajectoryUtil.fromPathweaverJson(str(path))


def shifted(base: Snapshot, pose: Pose2d, offset: float) -> Snapshot:
    """``base`` moved to ``offset`` m left of ``pose`` (perpendicular to its heading)."""
    h = pose.rotation().radians()
    return dataclasses.replace(base, x=pose.X() - offset * math.sin(h),
                               y=pose.Y() + offset * math.cos(h), heading=h)


def feed_shifted(check: ScenarioCheck, traj: Trajectory, start: float, until: float,
                 offset: Callable[[float], float]) -> int:
    """Observe synthetic ticks t = DT, 2 DT, ... ≤ ``until``: the trajectory state at
    t - start (its final state once it has ended) moved sideways by offset(t) m; 5 m away
    before ``start``. Returns how many ticks were at or after ``start``."""
    base = World(load_default()).snapshot()
    compared = 0
    for i in range(1, round(until / DT) + 1):
        t = i * DT
        if t < start:
            snap = dataclasses.replace(base, x=START_X + 5.0)
        else:
            ref = traj.sample(min(t - start, traj.totalTime())).pose
            snap = shifted(base, ref, offset(t))
            compared += 1
        check.observe(t, snap)
    return compared


# --- judging real kitbot runs -------------------------------------------------------------------


def test_straight_drive_passes_at_the_closed_form_final_pose(tmp_path):
    # Kinematic kitbot, half duty for 2 s: 0.5 × 2 m/s × 2 s = 2 m straight ahead.
    expected_x = START_X + 0.5 * KINEMATIC_SPEED * 2.0
    sc = scenario_of(tmp_path, f'final_pose = {{ x = "{expected_x} m", y = "4 m", '
                     'heading = "0 deg", tolerance = "1 cm", heading_tolerance = "0.5 deg" }\n'
                     'no_wall_contact = true\nmin_battery_voltage = "6 V"\n')
    check = ScenarioCheck(sc)
    drive(kinematic_world(), 0.5, 0.5, 2.0, check)
    result = check.result()
    assert result.passed, result.report()
    assert [c.name for c in result.checks] == ["final_pose", "no_wall_contact",
                                               "min_battery_voltage"]
    pose = check_named(result, "final_pose")
    assert pose.values["position_error"] == pytest.approx(0.0, abs=1e-9)
    assert result.final_pose == pytest.approx((expected_x, START_Y, 0.0), abs=1e-9)
    assert result.sim_time == pytest.approx(2.0)
    assert result.ticks == 100


def test_physical_straight_drive_ends_where_its_wheels_say(tmp_path):
    # A first run measures the wheel travel from the encoders; the judged run (same seed, same
    # inputs) must end that far ahead of the start, on the same line, facing the same way.
    probe = World(loads(default_config_text() + IDEAL_DRIVE))  # no wheel slip
    drive(probe, 0.5, 0.5, 2.0)
    enc = probe.snapshot().encoders
    travel = 0.5 * (enc["left"][0] + enc["right"][0])
    assert travel > 1.0
    sc = scenario_of(tmp_path, f'final_pose = {{ x = "{START_X + travel!r} m", y = "4 m", '
                     'heading = "0 deg", tolerance = "1 mm", heading_tolerance = "0.1 deg" }\n')
    check = ScenarioCheck(sc)
    drive(World(loads(default_config_text() + IDEAL_DRIVE)), 0.5, 0.5, 2.0, check)
    result = check.result()
    assert result.passed, result.report()
    assert check_named(result, "final_pose").values["position_error"] < 1e-6


def test_final_pose_off_by_half_a_metre_fails(tmp_path):
    sc = scenario_of(tmp_path, 'final_pose = { x = "4.5 m", y = "4 m", tolerance = "0.3 m" }\n')
    check = ScenarioCheck(sc)
    drive(kinematic_world(), 0.5, 0.5, 2.0, check)
    result = check.result()
    pose = check_named(result, "final_pose")
    assert not result.passed and not pose.passed
    assert pose.values["position_error"] == pytest.approx(0.5, abs=1e-9)
    assert pose.values["heading_error"] is None  # no heading expected
    assert "0.50 m off" in pose.measured


def test_final_heading_off_fails_even_at_the_right_position(tmp_path):
    sc = scenario_of(tmp_path, 'final_pose = { x = "4 m", y = "4 m", heading = "90 deg", '
                     'tolerance = "0.3 m" }\n')
    check = ScenarioCheck(sc)
    drive(kinematic_world(), 0.5, 0.5, 2.0, check)
    pose = check_named(check.result(), "final_pose")
    assert not pose.passed
    assert pose.values["position_error"] == pytest.approx(0.0, abs=1e-9)
    assert pose.values["heading_error"] == pytest.approx(math.pi / 2, abs=1e-9)
    assert "± 10.0°" in pose.expected  # the default heading tolerance


def test_heading_is_compared_across_the_wrap(tmp_path):
    # Expecting 359 deg while the robot faces 0: 1 degree off, not 359.
    sc = scenario_of(tmp_path, 'final_pose = { x = "4 m", y = "4 m", heading = "359 deg", '
                     'tolerance = "0.3 m", heading_tolerance = "2 deg" }\n')
    check = ScenarioCheck(sc)
    drive(kinematic_world(), 0.5, 0.5, 2.0, check)
    pose = check_named(check.result(), "final_pose")
    assert pose.passed
    assert pose.values["heading_error"] == pytest.approx(math.radians(1.0), abs=1e-9)


def test_reversing_into_the_wall_fails_no_wall_contact(tmp_path):
    # The kitbot starts 2 m from the x = 0 wall; full reverse reaches it well within 2 s.
    sc = scenario_of(tmp_path, "no_wall_contact = true\n")
    check = ScenarioCheck(sc)
    world = World(load_default())
    drive(world, -1.0, -1.0, 2.0, check)
    result = check.result()
    walls = check_named(result, "no_wall_contact")
    assert not result.passed and not walls.passed
    assert walls.values["wall_hits"] == world.snapshot().wall_hits >= 1
    first = walls.values["first_hit_time"]
    assert isinstance(first, float) and 0.0 < first < 2.0
    assert "FAIL" in next(line for line in result.report().splitlines()
                          if "no_wall_contact" in line)


def test_wall_contact_before_enable_is_not_counted(tmp_path):
    world = World(load_default())
    drive(world, -1.0, -1.0, 1.0)  # into the wall while disabled (not observed)
    drive(world, 0.0, 0.0, 1.0)  # settle
    assert world.snapshot().wall_hits >= 1
    check = ScenarioCheck(scenario_of(tmp_path, "no_wall_contact = true\n"))
    drive(world, 0.0, 0.0, 1.0, check)
    walls = check_named(check.result(), "no_wall_contact")
    assert walls.passed, walls.measured
    assert walls.values == {"wall_hits": 0, "first_hit_time": None}


def test_min_battery_voltage_fails_when_full_throttle_sags_below_it(tmp_path):
    sc = scenario_of(tmp_path, 'min_battery_voltage = "12 V"\n')
    check = ScenarioCheck(sc)
    world = World(load_default())
    voltages: list[float] = []
    t = 0.0
    for _ in range(50):
        world.set_motor("left", 1.0)
        world.set_motor("right", 1.0)
        world.step(DT)
        t += DT
        snap = world.snapshot()
        voltages.append(snap.min_voltage)  # the lowest at any substep of the tick
        check.observe(t, snap)
    volts = check_named(check.result(), "min_battery_voltage")
    assert not volts.passed
    assert volts.values["min_voltage"] == min(voltages) < 12.0
    assert volts.values["time"] == pytest.approx(DT * (1 + voltages.index(min(voltages))))


def test_min_battery_voltage_passes_when_it_stays_above(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, 'min_battery_voltage = "5 V"\n'))
    drive(World(load_default()), 1.0, 1.0, 1.0, check)
    assert check.result().passed


def test_without_an_observed_tick_every_check_fails_as_never_enabled(tmp_path):
    make_trajectory(tmp_path / "t.json")
    sc = scenario_of(tmp_path, 'final_pose = { x = "4 m", y = "4 m", tolerance = "0.3 m" }\n'
                     'no_wall_contact = true\nmin_battery_voltage = "8 V"\n'
                     '[expect.trajectory]\nfile = "t.json"\n')
    result = ScenarioCheck(sc).result()
    assert not result.passed
    assert len(result.checks) == 4
    for c in result.checks:
        assert not c.passed and c.measured == NEVER_ENABLED
        assert all(v is None for v in c.values.values())
    assert result.final_pose is None and result.sim_time is None
    assert "never enabled" in result.report().splitlines()[-1]
    json.dumps(result.to_json(), allow_nan=False)


# --- trajectory errors ------------------------------------------------------------------------


def test_path_offset_sideways_by_10_cm_has_max_and_rms_error_of_10_cm(tmp_path):
    traj = make_trajectory(tmp_path / "paths" / "auto.wpilib.json")
    sc = scenario_of(tmp_path, '[expect.trajectory]\nfile = "paths/auto.wpilib.json"\n')
    check = ScenarioCheck(sc)
    compared = feed_shifted(check, traj, 0.0, traj.totalTime() + 0.5, lambda t: OFFSET)
    result = check.result()
    tr = check_named(result, "trajectory")
    assert tr.passed and result.passed  # no thresholds: report only
    assert tr.values["max_error"] == pytest.approx(OFFSET, abs=1e-9)
    assert tr.values["rms_error"] == pytest.approx(OFFSET, abs=1e-9)
    assert tr.values["samples"] == compared
    assert "(report only)" in tr.expected


def test_trajectory_start_delays_the_comparison(tmp_path):
    # Before `start` the robot is 5 m away: those ticks are not compared.
    traj = make_trajectory(tmp_path / "t.json")
    sc = scenario_of(tmp_path, '[expect.trajectory]\nfile = "t.json"\nstart = "1 s"\n')
    check = ScenarioCheck(sc)
    compared = feed_shifted(check, traj, 1.0, 1.0 + traj.totalTime(), lambda t: OFFSET)
    tr = check_named(check.result(), "trajectory")
    assert tr.values["max_error"] == pytest.approx(OFFSET, abs=1e-9)
    assert tr.values["rms_error"] == pytest.approx(OFFSET, abs=1e-9)
    assert tr.values["samples"] == compared < round((1.0 + traj.totalTime()) / DT)


def test_after_the_trajectory_ends_its_final_state_is_the_reference(tmp_path):
    traj = make_trajectory(tmp_path / "t.json")
    end = traj.totalTime()
    check = ScenarioCheck(scenario_of(tmp_path, '[expect.trajectory]\nfile = "t.json"\n'))
    until = end + 1.0
    feed_shifted(check, traj, 0.0, until, lambda t: 0.3 if t > end else OFFSET)
    tr = check_named(check.result(), "trajectory")
    n_on, n_after = math.floor(end / DT), round(until / DT) - math.floor(end / DT)
    assert tr.values["max_error"] == pytest.approx(0.3, abs=1e-9)
    assert tr.values["max_error_time"] == pytest.approx((n_on + 1) * DT)
    rms = math.sqrt((n_on * OFFSET**2 + n_after * 0.3**2) / (n_on + n_after))
    assert tr.values["rms_error"] == pytest.approx(rms, abs=1e-9)


@pytest.mark.parametrize(("limits", "passed"), [
    ('max_error = "0.15 m"\nrms_error = "12 cm"\n', True),
    ('max_error = "0.05 m"\n', False),
    ('rms_error = "5 cm"\n', False),
    ('max_error = "1 m"\nrms_error = "0.09 m"\n', False),
])
def test_trajectory_thresholds_decide_the_verdict(tmp_path, limits, passed):
    traj = make_trajectory(tmp_path / "t.json")
    sc = scenario_of(tmp_path, f'[expect.trajectory]\nfile = "t.json"\n{limits}')
    check = ScenarioCheck(sc)
    feed_shifted(check, traj, 0.0, traj.totalTime(), lambda t: OFFSET)
    result = check.result()
    assert check_named(result, "trajectory").passed is passed
    assert result.passed is passed


def test_a_run_ending_before_the_trajectory_starts_fails_it(tmp_path):
    traj = make_trajectory(tmp_path / "t.json")
    check = ScenarioCheck(scenario_of(tmp_path, '[expect.trajectory]\nfile = "t.json"\n'
                                                'start = "10 s"\n'))
    feed_shifted(check, traj, 10.0, 1.0, lambda t: OFFSET)
    tr = check_named(check.result(), "trajectory")
    assert not tr.passed
    assert tr.values["samples"] == 0 and tr.values["max_error"] is None
    assert "trajectory start (10.00 s)" in tr.measured


def test_trajectory_poses_are_the_file_states_for_drawing(tmp_path):
    traj = make_trajectory(tmp_path / "t.json")
    check = ScenarioCheck(scenario_of(tmp_path, '[expect.trajectory]\nfile = "t.json"\n'))
    poses = check.trajectory_poses()
    assert len(poses) == len(traj.states())
    first, last = traj.states()[0].pose, traj.states()[-1].pose
    assert poses[0] == (first.X(), first.Y(), first.rotation().radians())
    assert poses[-1] == (last.X(), last.Y(), last.rotation().radians())
    assert ScenarioCheck(scenario_of(tmp_path, "no_wall_contact = true\n")).trajectory_poses() \
        == []


def test_trajectory_file_is_relative_to_the_scenario_not_the_working_directory(
        tmp_path, monkeypatch):
    make_trajectory(tmp_path / "robot" / "deploy" / "auto.json")
    path = write_scenario(tmp_path / "robot", 'duration = "1 s"\n[expect.trajectory]\n'
                          'file = "deploy/auto.json"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    sc = load_scenario(path)
    assert sc.trajectory is not None
    assert Path(sc.trajectory.file) == (tmp_path / "robot" / "deploy" / "auto.json").resolve()
    assert sc.enable is None  # not given: no enabling


# --- report and JSON summary ------------------------------------------------------------------


def test_report_has_one_line_per_check_then_the_overall_verdict(tmp_path):
    sc = scenario_of(tmp_path, 'final_pose = { x = "4.5 m", y = "4 m", tolerance = "0.3 m" }\n'
                     'no_wall_contact = true\nmin_battery_voltage = "6 V"\n')
    check = ScenarioCheck(sc)
    drive(kinematic_world(), 0.5, 0.5, 2.0, check)
    lines = check.result().report().splitlines()
    assert "auto-check.toml" in lines[0] and "100 ticks" in lines[0]
    assert lines[1].split()[:4] == ["check", "result", "expected", "measured"]
    assert re.match(r"\s+final_pose\s+FAIL\s+\(4\.50 m, 4\.00 m\) ± 0\.30 m\s+\(4\.00 m", lines[2])
    assert re.match(r"\s+no_wall_contact\s+PASS\s+no wall contact\s+no wall contact", lines[3])
    assert re.match(r"\s+min_battery_voltage\s+PASS\s+battery ≥ 6\.00 V\s+lowest", lines[4])
    assert lines[5] == "overall: FAIL (1 of 3 checks failed)"
    # columns line up
    assert len({line.index(" FAIL ") if " FAIL " in line else line.index(" PASS ")
                for line in lines[2:5]}) == 1


def test_json_summary_round_trips_and_follows_the_schema(tmp_path):
    traj = make_trajectory(tmp_path / "t.json")
    sc = scenario_of(tmp_path, 'final_pose = { x = "4 m", y = "4 m", tolerance = "0.3 m" }\n'
                     'no_wall_contact = true\n[expect.trajectory]\nfile = "t.json"\n'
                     'max_error = "0.2 m"\n')
    check = ScenarioCheck(sc)
    feed_shifted(check, traj, 0.0, traj.totalTime(), lambda t: OFFSET)
    summary = check.result().to_json()
    assert json.loads(json.dumps(summary, allow_nan=False)) == summary
    assert set(summary) == {"passed", "scenario", "sim_time", "ticks", "reason", "final_pose",
                            "checks"}
    assert summary["reason"] is None
    assert summary["scenario"] == sc.source
    assert set(summary["final_pose"]) == {"x", "y", "heading"}
    assert [c["name"] for c in summary["checks"]] == ["final_pose", "no_wall_contact",
                                                      "trajectory"]
    for c in summary["checks"]:
        assert set(c) == {"name", "passed", "expected", "measured", "values"}
    assert summary["passed"] is False  # ends at the trajectory's end (6, 5), not (4, 4)
    assert summary["checks"][2]["values"]["max_error"] == pytest.approx(OFFSET, abs=1e-9)


def test_json_summary_has_no_nan(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, 'min_battery_voltage = "8 V"\n'))
    snap = dataclasses.replace(World(load_default()).snapshot(), battery_voltage=math.nan,
                               x=math.inf)
    check.observe(DT, snap)
    text = json.dumps(check.result().to_json(), allow_nan=False)
    assert "NaN" not in text and "Infinity" not in text


# --- scenario file errors (same form as config errors) ------------------------------------------


def load_error(tmp_path: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The message of the ConfigError raised loading ``body`` as ./auto-check.toml."""
    monkeypatch.chdir(tmp_path)
    write_scenario(tmp_path, body)
    with pytest.raises(ConfigError) as exc:
        load_scenario("auto-check.toml")
    assert exc.value.source == "auto-check.toml"
    return str(exc.value)


GOOD_HEAD = 'enable = "autonomous"\nduration = "15 s"\n[expect]\n'


def test_wrong_unit_names_file_key_and_unit(tmp_path, monkeypatch):
    msg = load_error(tmp_path, GOOD_HEAD + 'min_battery_voltage = "8 m"\n', monkeypatch)
    assert msg.startswith("auto-check.toml: expect.min_battery_voltage: ")
    assert "is a length, expected a voltage" in msg and '"1 V"' in msg


def test_bare_number_names_file_key_and_unit(tmp_path, monkeypatch):
    msg = load_error(tmp_path, 'duration = 15\n[expect]\nno_wall_contact = true\n', monkeypatch)
    assert msg == ('auto-check.toml: duration: expected a time with its unit, such as "15 s" '
                   "(a string), got the bare number 15")


def test_bare_number_in_the_inline_pose_table_names_the_nested_key(tmp_path, monkeypatch):
    msg = load_error(tmp_path, GOOD_HEAD + 'final_pose = { x = "5 m", y = "4 m", '
                     "tolerance = 0.3 }\n", monkeypatch)
    assert msg.startswith("auto-check.toml: expect.final_pose.tolerance: expected a length "
                          'with its unit, such as "0.3 m"')


def test_unknown_key_gets_did_you_mean(tmp_path, monkeypatch):
    msg = load_error(tmp_path, GOOD_HEAD + 'min_battery_volts = "8 V"\n', monkeypatch)
    assert msg == ("auto-check.toml: expect.min_battery_volts: unknown key; did you mean "
                   "'min_battery_voltage'?")


def test_unknown_enable_mode_gets_did_you_mean(tmp_path, monkeypatch):
    msg = load_error(tmp_path, 'enable = "auto"\nduration = "1 s"\n[expect]\n'
                     "no_wall_contact = true\n", monkeypatch)
    assert msg.startswith("auto-check.toml: enable: expected one of 'autonomous', 'teleop', "
                          "'test', got 'auto' (string); did you mean 'autonomous'?")


def test_every_problem_is_listed_at_once(tmp_path, monkeypatch):
    msg = load_error(tmp_path, '[expect]\nno_wall_contact = "yes"\nmin_battery_voltage = "8"\n',
                     monkeypatch)
    lines = msg.splitlines()
    assert len(lines) == 3
    assert lines[0] == ('auto-check.toml: duration: missing required key (a time such as '
                        '"1 s", > 0 s)')
    assert lines[1].startswith("auto-check.toml: expect.no_wall_contact: expected true or false")
    assert lines[2].startswith("auto-check.toml: expect.min_battery_voltage: '8' has no unit: "
                               "expected a voltage")


def test_missing_trajectory_file_names_it(tmp_path, monkeypatch):
    msg = load_error(tmp_path, GOOD_HEAD + '[expect.trajectory]\nfile = "paths/gone.json"\n',
                     monkeypatch)
    gone = (tmp_path / "paths" / "gone.json").resolve()
    assert msg == f"auto-check.toml: expect.trajectory.file: trajectory file {gone}: " \
                  "file not found"


@pytest.mark.parametrize("content", ["[{", '{"time": 0}', "[]", '[{"time": 0}]'])
def test_malformed_trajectory_file_names_it(tmp_path, monkeypatch, content):
    (tmp_path / "bad.json").write_text(content)
    msg = load_error(tmp_path, GOOD_HEAD + '[expect.trajectory]\nfile = "bad.json"\n',
                     monkeypatch)
    bad = (tmp_path / "bad.json").resolve()
    assert msg.startswith(f"auto-check.toml: expect.trajectory.file: trajectory file {bad} is "
                          "not a WPILib trajectory JSON")
    assert len(msg.splitlines()) == 1


def test_trajectory_states_out_of_time_order_are_an_error(tmp_path, monkeypatch):
    def state(t: float, x: float) -> dict[str, object]:
        return {"time": t, "velocity": 0.0, "acceleration": 0.0, "curvature": 0.0,
                "pose": {"translation": {"x": x, "y": 4.0}, "rotation": {"radians": 0.0}}}

    (tmp_path / "t.json").write_text(json.dumps([state(0, 2), state(1, 3), state(0.5, 4)]))
    msg = load_error(tmp_path, GOOD_HEAD + '[expect.trajectory]\nfile = "t.json"\n',
                     monkeypatch)
    assert msg == (f"auto-check.toml: expect.trajectory.file: trajectory file "
                   f"{(tmp_path / 't.json').resolve()}: state 2 has time 0.5 s, before the "
                   "previous state's 1 s")


def test_trajectory_file_removed_after_loading_fails_the_checker_naming_it(tmp_path):
    make_trajectory(tmp_path / "t.json")
    sc = scenario_of(tmp_path, '[expect.trajectory]\nfile = "t.json"\n')
    (tmp_path / "t.json").unlink()
    with pytest.raises(ConfigError) as exc:
        ScenarioCheck(sc)
    assert str(exc.value).startswith(f"{sc.source}: expect.trajectory.file: trajectory file "
                                     f"{(tmp_path / 't.json').resolve()}: file not found")


def test_toml_syntax_error_names_the_file(tmp_path, monkeypatch):
    msg = load_error(tmp_path, 'duration = "15 s\n', monkeypatch)
    assert msg.startswith("auto-check.toml: not valid TOML: ")


def test_missing_scenario_file_is_named(tmp_path):
    with pytest.raises(ConfigError) as exc:
        load_scenario(tmp_path / "nope.toml")
    assert str(exc.value) == f"{tmp_path / 'nope.toml'}: file not found"


def test_a_scenario_without_expectations_is_an_error(tmp_path, monkeypatch):
    msg = load_error(tmp_path, 'duration = "15 s"\n[expect]\nno_wall_contact = false\n',
                     monkeypatch)
    assert msg.startswith("auto-check.toml: expect: no expectations")


def test_heading_tolerance_without_heading_is_an_error(tmp_path, monkeypatch):
    msg = load_error(tmp_path, GOOD_HEAD + 'final_pose = { x = "5 m", y = "4 m", '
                     'tolerance = "0.3 m", heading_tolerance = "5 deg" }\n', monkeypatch)
    assert msg == ("auto-check.toml: expect.final_pose.heading_tolerance: given without "
                   "heading: add heading or remove this")


# --- docs ---------------------------------------------------------------------------------------


def test_docs_list_every_key_as_the_schema_declares_it():
    text = DOCS.read_text(encoding="utf-8")
    for row in _rows_deep(ScenarioFile, ""):
        assert row in text, f"docs/scenarios.md lacks or misstates: {row}"


def test_docs_example_loads_with_every_value_in_si(tmp_path):
    text = DOCS.read_text(encoding="utf-8")
    example = re.search(r"```toml\n(.*?)```", text, re.S)
    assert example is not None
    path = write_scenario(tmp_path, example.group(1))
    make_trajectory(tmp_path / "deploy" / "paths" / "auto.wpilib.json")
    sc = load_scenario(path)
    assert (sc.enable, sc.duration, sc.no_wall_contact) == ("autonomous", 15.0, True)
    assert sc.final_pose is not None and sc.trajectory is not None
    assert (sc.final_pose.x, sc.final_pose.y, sc.final_pose.tolerance) == (5.2, 4.0, 0.3)
    assert sc.final_pose.heading_tolerance == pytest.approx(math.radians(15.0), rel=1e-12)
    assert sc.min_battery_voltage == 8.0
    assert (sc.trajectory.max_error, sc.trajectory.rms_error, sc.trajectory.start) == \
        (0.5, 0.25, 0.0)
