"""Scenario checks added for issue 17: the robot program's odometry against the true pose
(``[expect.odometry]``), ``no_element_contact`` with real kitbot worlds on the 2026 field, runs
that need a robot program, and the errors of bad odometry keys."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from simserver.config.loader import ConfigError, default_config_text, load_default, loads
from simserver.contract.snapshot import Snapshot
from simserver.runs.scenario import NO_ROBOT, ScenarioCheck, load_scenario
from simserver.world import World
from tests.test_scenario import check_named, drive, scenario_of, write_scenario

REPO = Path(__file__).resolve().parents[1]
DT = 0.02  # s per tick
ODOMETRY = '[expect.odometry]\nmax_position_error = "5 cm"\nmax_heading_error = "2 deg"\n'
BLUE_HUB_X = 4.02  # m, near face of the 2026 blue hub (`simserver field 2026`)
KITBOT_HALF_LENGTH = 16 * 0.0254  # m: 32 in bumper to bumper


def moving_truth(n: int, speed: float = 2.0, omega: float = 0.5) -> list[tuple[float, Snapshot]]:
    """``n`` ticks of a robot driving an arc from (2, 4) at ``speed`` m/s turning at ``omega``
    rad/s (exact arc), as (t since enable, snapshot)."""
    base = World(load_default()).snapshot()
    out = []
    for i in range(1, n + 1):
        t = i * DT
        h = omega * t
        x = 2.0 + speed / omega * math.sin(h)
        y = 4.0 + speed / omega * (1.0 - math.cos(h))
        out.append((t, dataclasses.replace(base, time=t, x=x, y=y, heading=h)))
    return out


def pose_of(snap: Snapshot, dx: float = 0.0, dh: float = 0.0) -> tuple[float, float, float]:
    return (snap.x + dx, snap.y, snap.heading + dh)


# --- odometry -----------------------------------------------------------------------------------


def test_odometry_equal_to_the_truth_at_the_same_time_has_zero_error(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, ODOMETRY))
    for t, snap in moving_truth(100):
        check.observe(t, snap)
        check.observe_odometry(t, pose_of(snap), "struct:Pose2d")
    odo = check_named(check.result(), "odometry")
    assert odo.passed, odo.measured
    assert odo.values["max_position_error"] == 0.0 and odo.values["max_heading_error"] == 0.0
    # every tick but the last was settled by a later pose; the last by the end of the run
    assert odo.values["compared"] == 100 and odo.values["values"] == 100


@pytest.mark.parametrize("skew", [-0.0003, 0.003, -0.009, 0.009])
def test_a_pose_stamped_within_half_a_tick_describes_that_tick(tmp_path, skew):
    # The robot's clock and the world's need not agree to the microsecond (in lock-step the
    # kitbot's poses are stamped 0.3 ms before their tick): within ±10 ms of a 20 ms tick
    # the pose is still compared with its own tick.
    check = ScenarioCheck(scenario_of(tmp_path, ODOMETRY))
    for t, snap in moving_truth(100):
        check.observe(t, snap)
        check.observe_odometry(t + skew, pose_of(snap), "struct:Pose2d")
    odo = check_named(check.result(), "odometry")
    assert odo.values["max_position_error"] == 0.0 and odo.values["compared"] == 100


def test_odometry_one_tick_stale_shows_speed_times_period(tmp_path):
    # A belief that describes the previous tick (the mistake the timestamps prevent) is off
    # by speed × period = 2 m/s × 20 ms = 4 cm and omega × period = 0.57°.
    check = ScenarioCheck(scenario_of(tmp_path, ODOMETRY.replace("5 cm", "3 cm")))
    ticks = moving_truth(100)
    for i, (t, snap) in enumerate(ticks):
        check.observe(t, snap)
        if i > 0:
            check.observe_odometry(t, pose_of(ticks[i - 1][1]), "struct:Pose2d")
    odo = check_named(check.result(), "odometry")
    assert not odo.passed
    assert odo.values["max_position_error"] == pytest.approx(2.0 * DT, rel=1e-3)
    assert odo.values["max_heading_error"] == pytest.approx(0.5 * DT, rel=1e-9)


def test_odometry_offset_and_heading_error_are_measured_and_judged(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, ODOMETRY))
    ticks = moving_truth(100)
    for t, snap in ticks:
        check.observe(t, snap)
        # 8 cm ahead in x for one second from t = 1 s; 3° off at t = 0.5 s only
        dx = 0.08 if 1.0 <= t < 2.0 - 1e-9 else 0.0
        dh = math.radians(3.0) if abs(t - 0.5) < 1e-9 else 0.0
        check.observe_odometry(t, pose_of(snap, dx, dh), "double[]")
    odo = check_named(check.result(), "odometry")
    assert not odo.passed
    assert odo.values["max_position_error"] == pytest.approx(0.08, abs=1e-12)
    assert odo.values["max_position_error_time"] == pytest.approx(1.0)
    assert odo.values["max_heading_error"] == pytest.approx(math.radians(3.0), abs=1e-12)
    assert odo.values["max_heading_error_time"] == pytest.approx(0.5)
    assert "max 0.08 m at 1.00 s, 3.0° at 0.50 s over 100 ticks" in odo.measured


class FakeClock:
    """Wall time (s) that moves only when told."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_poses_late_by_more_than_the_horizon_of_simulated_time_still_count(tmp_path):
    """A --fast run simulates 5 s in a fraction of a second: poses that NT delivers that much
    simulated time late (here all at the end, as seen in a lock-step run) are compared with
    their own ticks, not the ticks with the pose the robot had before them."""
    clock = FakeClock()
    check = ScenarioCheck(scenario_of(tmp_path, ODOMETRY), clock)
    truth = moving_truth(400)  # 8 s
    check.observe_odometry(-math.inf, pose_of(truth[0][1]), "struct:Pose2d")
    for t, snap in truth:
        check.observe(t, snap)
        clock.now += 0.001  # 1 ms of wall time per 20 ms tick
    for t, snap in truth:
        check.observe_odometry(t, pose_of(snap), "struct:Pose2d")
    odo = check_named(check.result(), "odometry")
    assert odo.passed, odo.measured
    assert odo.values["max_position_error"] == 0.0 and odo.values["compared"] == 400


def test_a_still_robot_that_publishes_nothing_is_compared_once_both_horizons_pass(tmp_path):
    """Ticks are settled with the pose held once ODOMETRY_HORIZON of simulated and of wall
    time have passed, so a long run of a robot standing still keeps no backlog."""
    clock = FakeClock()
    check = ScenarioCheck(scenario_of(tmp_path, ODOMETRY), clock)
    _, first = moving_truth(1)[0]
    check.observe_odometry(0.0, pose_of(first), "struct:Pose2d")
    for i in range(1, 1001):  # 20 s simulated, still; 1 s of wall time a tick
        clock.now = float(i)
        check.observe(i * DT, dataclasses.replace(first, time=i * DT))
    odo = check._odometry
    assert odo is not None
    # settled: older than 5 s simulated (about 250 ticks) and 5 s of wall time (5 ticks)
    aged = sum(1 for i in range(1, 1001) if i * DT < 1000 * DT - 5.0)
    assert aged in (749, 750) and odo.compared == aged and len(odo.pending) == 1000 - aged
    assert odo.position.largest == 0.0


def test_a_pose_holds_until_the_next_one_even_when_it_arrives_late(tmp_path):
    # The robot publishes only every 5th tick (NT drops repeats of an unchanged value) and
    # every pose reaches the check a whole second late: the result is that of the held
    # belief compared tick by tick, the same as with no delay.
    ticks = moving_truth(150)
    beliefs = [(t, pose_of(s)) for i, (t, s) in enumerate(ticks) if i % 5 == 0]

    def run(delay_ticks: int) -> dict[str, object]:
        check = ScenarioCheck(scenario_of(tmp_path, ODOMETRY))
        queue = list(beliefs)
        for t, snap in ticks:
            check.observe(t, snap)
            while queue and queue[0][0] <= t - delay_ticks * DT + 1e-9:
                bt, pose = queue.pop(0)
                check.observe_odometry(bt, pose, "struct:Pose2d")
        for bt, pose in queue:  # the last second's poses arrive after the last tick
            check.observe_odometry(bt, pose, "struct:Pose2d")
        return check_named(check.result(), "odometry").values

    on_time, late = run(0), run(50)
    assert on_time == late
    # Held for up to 4 ticks on a 2 m/s arc: the robot moves 4 × 4 cm = 16 cm meanwhile.
    assert on_time["max_position_error"] == pytest.approx(4 * 2.0 * DT, rel=2e-3)
    assert on_time["compared"] == 150


def test_heading_error_wraps_at_180_degrees(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, ODOMETRY))
    for t, snap in moving_truth(10, omega=0.0 + 1e-9):
        check.observe(t, snap)
        check.observe_odometry(t, pose_of(snap, 0.0, 2 * math.pi + math.radians(1.0)), "x")
    odo = check_named(check.result(), "odometry")
    assert odo.values["max_heading_error"] == pytest.approx(math.radians(1.0), abs=1e-6)
    assert odo.passed


def test_ticks_before_the_first_pose_are_not_compared_and_older_poses_are_held(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, ODOMETRY))
    ticks = moving_truth(50)
    # A pose from before enabling (t < 0) is the belief until the next one.
    check.observe_odometry(-math.inf, pose_of(ticks[0][1]), "struct:Pose2d")
    for t, snap in ticks[:10]:
        check.observe(t, snap)
    check.observe_odometry(ticks[10][0], pose_of(ticks[10][1]), "struct:Pose2d")
    odo = check_named(check.result(), "odometry")
    # ticks 0..9 compared with the pose of tick 0: off by up to 9 ticks of travel (36 cm)
    assert odo.values["compared"] == 10
    assert odo.values["max_position_error"] == pytest.approx(9 * 2.0 * DT, rel=2e-2)
    assert not odo.passed


def test_no_pose_received_fails_and_says_so(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, ODOMETRY))
    for t, snap in moving_truth(5):
        check.observe(t, snap)
    odo = check_named(check.result(), "odometry")
    assert not odo.passed
    assert odo.measured == "no pose received on /SmartDashboard/Field/Robot"
    assert odo.values["compared"] == 0


def test_values_that_are_not_poses_are_named_by_type(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, ODOMETRY))
    for t, snap in moving_truth(5):
        check.observe(t, snap)
        check.observe_odometry(t, None, "string")
    odo = check_named(check.result(), "odometry")
    assert not odo.passed and "5 values of type string" in odo.measured


def test_report_only_odometry_passes_with_poses_and_lists_the_topic(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, '[expect.odometry]\ntopic = "/kitbot/odometry"\n'))
    assert check.robot_topics() == ("/kitbot/odometry",)
    for t, snap in moving_truth(5):
        check.observe(t, snap)
        check.observe_odometry(t, pose_of(snap, 1.0), "struct:Pose2d")
    odo = check_named(check.result(), "odometry")
    assert odo.passed and odo.expected == "/kitbot/odometry: (report only)"
    assert odo.values["max_position_error"] == pytest.approx(1.0)


def test_result_can_be_taken_mid_run_without_changing_later_ones(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, ODOMETRY))
    ticks = moving_truth(20)
    for t, snap in ticks[:10]:
        check.observe(t, snap)
        check.observe_odometry(t, pose_of(snap), "struct:Pose2d")
    check.result()
    for t, snap in ticks[10:]:
        check.observe(t, snap)
        check.observe_odometry(t, pose_of(snap), "struct:Pose2d")
    assert check_named(check.result(), "odometry").values["compared"] == 20


# --- no_element_contact -------------------------------------------------------------------------


def field_with_elements() -> World:
    """The kitbot on the 2026 field with its elements: the blue hub is straight ahead."""
    text = default_config_text().replace('season = "2026"', 'season = "2026"\nelements = true',
                                         1)
    return World(loads(text))


def test_driving_into_the_blue_hub_fails_no_element_contact_naming_it(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, "no_element_contact = true\n"))
    world = field_with_elements()
    drive(world, 0.6, 0.6, 3.0, check)
    snap = world.snapshot()
    result = check.result()
    contact = check_named(result, "no_element_contact")
    assert not contact.passed and not result.passed
    assert contact.values["first_contact"] == "Blue hub"
    assert snap.obstacle_hits >= 1 and snap.wall_hits == 0
    # it stopped at the hub's face: bumper at x ≈ 4.02 m
    assert snap.x + KITBOT_HALF_LENGTH == pytest.approx(BLUE_HUB_X, abs=0.03)
    first = contact.values["first_contact_time"]
    assert isinstance(first, float) and 0.5 < first < 3.0
    assert f"first at {first:.2f} s with Blue hub" in contact.measured


def test_reversing_into_the_wall_names_the_wall(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, "no_element_contact = true\n"
                                      "no_wall_contact = true\n"))
    drive(World(load_default()), -1.0, -1.0, 2.0, check)
    result = check.result()
    contact, walls = check_named(result, "no_element_contact"), check_named(result,
                                                                          "no_wall_contact")
    assert contact.values["first_contact"] == "blue alliance wall (x = 0)"
    assert contact.values["first_contact_time"] == walls.values["first_hit_time"]
    assert contact.values["contacts"] == walls.values["wall_hits"]


def test_driving_clear_of_elements_passes(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, "no_element_contact = true\n"))
    world = field_with_elements()
    drive(world, 0.3, 0.3, 1.0, check)  # about 1 m: stops well short of the hub
    assert world.snapshot().x + KITBOT_HALF_LENGTH < BLUE_HUB_X - 0.3
    contact = check_named(check.result(), "no_element_contact")
    assert contact.passed and contact.measured == "no contact"
    assert contact.values == {"contacts": 0, "first_contact_time": None, "first_contact": None}


def test_element_contact_before_enable_is_not_counted(tmp_path):
    world = field_with_elements()
    drive(world, 0.6, 0.6, 3.0)  # into the hub while disabled (not observed)
    drive(world, -0.3, -0.3, 0.5)  # back off
    drive(world, 0.0, 0.0, 1.0)
    assert world.snapshot().obstacle_hits >= 1
    check = ScenarioCheck(scenario_of(tmp_path, "no_element_contact = true\n"))
    drive(world, 0.0, 0.0, 1.0, check)
    assert check_named(check.result(), "no_element_contact").passed


# --- a run that needs a robot program ---------------------------------------------------------


def test_a_required_robot_program_that_never_connected_fails_the_run(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, 'min_battery_voltage = "5 V"\n'))
    check.require_robot()
    drive(World(load_default()), 0.0, 0.0, 0.5, check)
    result = check.result()
    assert all(c.passed for c in result.checks)
    assert not result.passed and result.reason == NO_ROBOT
    assert result.report().splitlines()[-1] == f"overall: FAIL ({NO_ROBOT})"
    assert result.to_json()["reason"] == NO_ROBOT
    check.note_robot()
    assert check.result().passed and check.result().reason is None


# --- the scenario file --------------------------------------------------------------------------


def load_error(tmp_path: Path, body: str) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        load_scenario(write_scenario(tmp_path, body))
    return [issue.render(exc.value.source) for issue in exc.value.issues]


def test_odometry_keys_load_in_si(tmp_path):
    sc = scenario_of(tmp_path, '[expect.odometry]\ntopic = "/kitbot/odometry"\n'
                     'max_position_error = "3 cm"\nmax_heading_error = "1 deg"\n'
                     'no_element_contact = true\n'.replace("no_element_contact = true\n", ""))
    assert sc.odometry is not None
    assert sc.odometry.topic == "/kitbot/odometry"
    assert sc.odometry.max_position_error == pytest.approx(0.03, rel=1e-12)
    assert sc.odometry.max_heading_error == pytest.approx(math.radians(1.0), rel=1e-12)
    assert scenario_of(tmp_path, "no_element_contact = true\n").no_element_contact


def test_odometry_errors_name_the_key(tmp_path):
    msgs = load_error(tmp_path, 'duration = "1 s"\n[expect.odometry]\n'
                      'max_position_eror = "3 cm"\nmax_heading_error = "1 m"\n')
    text = "\n".join(msgs)
    assert "expect.odometry.max_position_eror: unknown key; did you mean " \
           "'max_position_error'?" in text
    assert "expect.odometry.max_heading_error: '1 m' is a length" in text
    assert "expected an angle" in text
    (msg,) = load_error(tmp_path, 'duration = "1 s"\n[expect.odometry]\ntopic = "kitbot/odo"\n')
    assert msg.endswith("auto-check.toml: expect.odometry.topic: a NetworkTables topic name "
                        "starts with '/', such as '/SmartDashboard/Field/Robot'; got "
                        "'kitbot/odo'")


def test_cli_exits_2_naming_a_bad_odometry_key(tmp_path):
    bad = write_scenario(tmp_path, 'duration = "1 s"\n[expect.odometry]\nmax_eror = "1 cm"\n')
    run = subprocess.run([sys.executable, "-m", "simserver", "run", "--check", str(bad),
                          "--fast"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert "expect.odometry.max_eror: unknown key" in run.stderr
    assert "nothing was started" in run.stderr


def test_json_values_of_the_new_checks_are_json(tmp_path):
    check = ScenarioCheck(scenario_of(tmp_path, "no_element_contact = true\n" + ODOMETRY))
    drive(World(load_default()), -1.0, -1.0, 2.0, check)
    doc = check.result().to_json()
    assert json.loads(json.dumps(doc, allow_nan=False)) == doc
    names = [c["name"] for c in doc["checks"]]
    assert names == ["no_element_contact", "odometry"]
