"""End to end: the swerve (Phoenix 6 Talon FX, CANcoder, Pigeon 2) and mecanum (PWM, quadrature
encoders, ADXRS450) examples drive their autonomous paths through the bridge in lock-step, and
their scenario checks pass.

Each test starts the robot program (port 5810: one at a time) and simserver as the user would.
"""

from __future__ import annotations

import json
import math
import threading
import time
from pathlib import Path

import ntcore
import pytest

from simserver.config.loader import load, loads
from tests.e2e.robots import REPO, RobotProgram, config_with, robot_nt, simserver, trace_rows
from tests.initcmd.test_init import confirm, init

pytestmark = [pytest.mark.robot, pytest.mark.network, pytest.mark.slow]

SWERVE = REPO / "examples" / "swerve"
CTRE_SWERVE = REPO / "examples" / "ctre_swerve"
MECANUM = REPO / "examples" / "mecanum"


class FieldPoseWatcher:
    """Keeps the last value of the robot program's own odometry, as its Field2d shows it
    ([x m, y m, deg]), while the program runs (its NT server goes away when it exits)."""

    def __init__(self, inst: ntcore.NetworkTableInstance):
        self.last: list[float] = []
        self._sub = inst.getDoubleArrayTopic("/SmartDashboard/Field/Robot").subscribe([])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.005):
            value = self._sub.get()
            if len(value) == 3:
                self.last = list(value)

    def stop(self) -> list[float]:
        self._stop.set()
        self._thread.join()
        return self.last


def run_example(project: Path, tmp_path: Path, fast: bool, lockstep: bool = True,
                config: Path | None = None) -> tuple[dict, list[float], list[float]]:
    """Run the example's autonomous scenario (``lockstep``, else in real time) with its
    simserver.toml or ``config``; (JSON result, last trace row, the robot's odometry [x, y,
    deg] read while the robot program waits at the end of its path)."""
    cfg, _ = config_with(tmp_path, config or project / "simserver.toml",
                         "lockstep = true" if lockstep else "")
    robot = RobotProgram(project, cfg, tmp_path)
    inst = robot_nt()
    watcher = FieldPoseWatcher(inst)
    try:
        robot.wait_ready()
        out, trace = tmp_path / "result.json", tmp_path / "trace.csv"
        args = [str(cfg), "--check", str(project / "auto-check.toml"),
                "--json", str(out), "--trace", str(trace)]
        run = simserver(*args, *(["--lockstep"] if lockstep else []),
                        *(["--fast"] if fast else []))
        assert run.returncode == 0, run.stdout + run.stderr
        assert "overall: PASS" in run.stdout, run.stdout
        if lockstep:
            assert robot.wait_exit(15) == 0, robot.output()
        else:  # the program goes on; its wheels hold still at the end of the path
            time.sleep(0.5)
        odometry = watcher.stop()
        assert odometry, "the robot program never published its Field2d pose"
        return json.loads(out.read_text()), trace_rows(trace)[-1], odometry
    finally:
        watcher.stop()
        ntcore.NetworkTableInstance.destroy(inst)
        robot.close()


def test_swerve_example_follows_its_path_on_phoenix6_devices(tmp_path):
    """Paced lock-step (Phoenix 6 simulates on a wall-clock thread). The path ends at
    (6, 3) m; the scenario allows 0.15 m. The robot's odometry (Talon FX rotor sensors,
    CANcoders, Pigeon 2) agrees with the true pose within 0.1 m and 1 deg: the drive wheels
    slip a little when the modules launch."""
    result, last, odometry = run_example(SWERVE, tmp_path, fast=False)
    assert result["passed"] is True
    _, x, y, heading = last[:4]
    assert math.hypot(odometry[0] - x, odometry[1] - y) < 0.1, (odometry, last)
    assert abs(odometry[2] - math.degrees(heading)) < 1.0


def test_mecanum_example_strafes_along_its_path(tmp_path):
    """Paced lock-step. The path ends at (5, 3.5) m; the scenario allows 0.15 m. The robot's
    odometry (360-count wheel encoders, ADXRS450) agrees with the true pose within 0.1 m and
    1 deg. Paced, because the program's NT server sends its Field2d on the wall clock: in
    --fast lock-step the last 1.7 s of the scenario (standing still) can pass between two of
    its sends, and the last odometry the watcher sees is then one from mid-path (seen once,
    0.5 m behind)."""
    result, last, odometry = run_example(MECANUM, tmp_path, fast=False)
    assert result["passed"] is True
    _, x, y, heading = last[:4]
    assert math.hypot(odometry[0] - x, odometry[1] - y) < 0.1, (odometry, last)
    assert abs(odometry[2] - math.degrees(heading)) < 1.0


@pytest.mark.parametrize("lockstep", [True, False], ids=["lockstep", "realtime"])
def test_ctre_generated_swerve_odometry_follows_the_truth(tmp_path, lockstep):
    """CTRE's swerve API as Tuner X generates it (commands-v2, Talon FX drive and steer with
    on-controller loops, FUSED_CANCODER, a Pigeon 2 on a CANivore, its own 4 ms simulation
    Notifier): unmodified, its autonomous follows a 3 m S-curve on CTRE's own odometry
    thread. The bridge turns CTRE's simulation off (the devices are simserver's), and that
    odometry ends within 5 cm and 2 deg of the true pose, paced lock-step and real time.
    (It was 1.6-17 cm while the CANcoders were written wrapped: CTRE's odometry took each
    wrap of a steer angle for a turn of the module and moved the robot 4 cm.)"""
    result, last, odometry = run_example(CTRE_SWERVE, tmp_path, fast=False, lockstep=lockstep)
    assert result["passed"] is True
    end, x, y, heading = last[:4]
    # The scenario's 5 s count from enabling, which came after sim.enable_delay (0.5 s) of
    # disabled loops with simserver's sensors (give or take the two periods a mode change
    # takes to go round).
    assert end == pytest.approx(5.5, abs=0.05)
    print(f"odometry off the truth: {math.hypot(odometry[0] - x, odometry[1] - y):.4f} m, "
          f"{odometry[2] - math.degrees(heading):+.3f} deg")
    assert math.hypot(odometry[0] - x, odometry[1] - y) < 0.05, (odometry, last)
    assert abs(odometry[2] - math.degrees(heading)) < 2.0, (odometry, last)
    log = (tmp_path / "robot.log").read_text()
    assert "update_sim_state is turned off" in log, log
    assert "also writes" not in log, log  # no other writer of the wired devices


def test_ctre_generated_swerve_after_init_follows_its_path(tmp_path):
    """`simserver init` on the Tuner X shaped project reads what its simserver.toml copies by
    hand from the program itself (wheel size, gear and coupling ratios from the CTRE module
    constants, each CANcoder's steer motor and offset from its MagnetOffset, inversions from
    the devices' configurations): with only the robot's mass confirmed and its start pose
    added, the autonomous follows its path with CTRE's odometry within 5 cm of the truth."""
    draft_path = tmp_path / "draft" / "simserver.toml"
    code, output = init(CTRE_SWERVE, draft_path)
    assert code == 0, output
    draft = draft_path.read_text()
    confirms = [line for line in draft.splitlines() if "# CONFIRM:" in line and line[0] != "#"]
    # the mass, the width (the modules sit 22.75 in apart), the eight motors' type (Kraken X60)
    assert len(confirms) == 10, confirms
    assert all(line.startswith(("mass", "width", 'type = "Kraken X60"'))
               for line in confirms), confirms
    ours, theirs = loads(draft), load(CTRE_SWERVE / "simserver.toml")
    for key in ("wheel_diameter", "drive_gearing", "steer_gearing", "coupling_ratio"):
        assert getattr(ours.drivetrain, key) == pytest.approx(getattr(theirs.drivetrain, key),
                                                              rel=1e-9), key
    where = {m.steer: (m.x, m.y) for m in ours.drivetrain.modules.values()}
    assert where.keys() == {m.steer.replace("back", "rear")
                            for m in theirs.drivetrain.modules.values()}
    for m in theirs.drivetrain.modules.values():
        assert where[m.steer.replace("back", "rear")] == pytest.approx((m.x, m.y), abs=1e-4)
    assert {str(m.hal[0]): m.inverted for m in ours.motors.values()} == \
        {str(m.hal[0]): m.inverted for m in theirs.motors.values()}
    azimuths = {str(e.hal[0]): (e.motor.replace("rear", "back"), e.absolute, e.offset,
                                e.inverted)
                for e in ours.encoders.values() if e.hal[0].kind == "cancoder"}
    assert azimuths == {str(e.hal[0]): (e.motor, e.absolute, pytest.approx(e.offset), e.inverted)
                        for e in theirs.encoders.values() if e.hal[0].kind == "cancoder"}
    draft = confirm(draft, "mass", '"115 lb"\nstart = { x = "2 m", y = "2 m" }', "robot")
    draft_path.write_text(draft + "\n[bridge]\n")
    result, last, odometry = run_example(CTRE_SWERVE, tmp_path, fast=False, config=draft_path)
    assert result["passed"] is True
    _, x, y, heading = last[:4]
    assert math.hypot(odometry[0] - x, odometry[1] - y) < 0.05, (odometry, last)
    assert abs(odometry[2] - math.degrees(heading)) < 2.0, (odometry, last)


REV_MAXSWERVE = REPO / "examples" / "rev_maxswerve"


@pytest.mark.parametrize("lockstep", [True, False], ids=["lockstep", "realtime"])
def test_rev_maxswerve_spark_loops_follow_the_path(tmp_path, lockstep):
    """A REV MAXSwerve robot (commands-v2) whose SPARK MAXes run the loops: velocity on each
    driving NEO's encoder, position on each Through Bore Encoder (the turning SPARK's
    absolute encoder, inverted, with per-module offsets), an ADIS16470 for heading. REV's
    SparkSim runs those loops in the bridge. The scenario holds the end of the 3 m path to
    0.1 m and 3 deg and the robot's odometry to 5 cm and 2 deg at every tick; measured: 1.1 cm
    in lock-step, 1.1-2.2 cm in real time (a late answer now and then), under 0.1 deg, so the
    odometry is held here to 2 cm (lock-step) or 4 cm (real time) and 0.5 deg. (The odometry
    the watcher saw last is not used: in --fast lock-step it can be one from before the robot
    settled.)"""
    result, _, _ = run_example(REV_MAXSWERVE, tmp_path, fast=lockstep, lockstep=lockstep)
    assert result["passed"] is True
    odometry = {c["name"]: c for c in result["checks"]}["odometry"]
    assert odometry["passed"] is True and odometry["values"]["compared"] >= 240, odometry
    assert odometry["values"]["max_position_error"] < (0.02 if lockstep else 0.04), odometry
    assert odometry["values"]["max_heading_error"] < 0.5, odometry
    log = (tmp_path / "robot.log").read_text()
    assert "closed loop reads" not in log and "out of the bridge's reach" not in log, log
    assert "also writes" not in log, log
