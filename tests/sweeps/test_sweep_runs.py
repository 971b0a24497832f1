"""`simserver sweep` for real: a local Ray, real robot programs side by side on their own
ports, a two-node Ray cluster on this machine, Ctrl-C, and robot programs that crash or hang.

These runs do not use port 5810, so they take no lock.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simserver.sweeps.results import comparable
from tests.ntutil import REPO, free_port, posix_signals, wait_for

pytest.importorskip("ray")
pytestmark = [pytest.mark.robot, pytest.mark.network, pytest.mark.slow]

KITBOT = REPO / "examples" / "kitbot"


def kitbot_copy(tmp_path: Path, robot_extra: str = "") -> Path:
    """The kitbot example in tmp_path/kitbot, ``robot_extra`` appended to its robot.py."""
    project = tmp_path / "kitbot"
    shutil.copytree(KITBOT, project, ignore=shutil.ignore_patterns("__pycache__", "*.json",
                                                                   "sweep*.toml"))
    shutil.copytree(KITBOT / "deploy", project / "deploy", dirs_exist_ok=True)
    if robot_extra:
        with (project / "robot.py").open("a") as f:
            f.write(robot_extra)
    return project


def kitbot_sweep(project: Path, body: str) -> Path:
    """A sweep file in the kitbot copy ``project``: its config, robot and auto-check.toml, then
    ``body`` (the other [sweep] keys and [vary] entries)."""
    path = project / "sweep.toml"
    path.write_text('[sweep]\nconfig = "simserver.toml"\nrobot = "."\n'
                    'check = "auto-check.toml"\n' + body)
    return path


def sweep(sweep_file: Path, *args: str, timeout: float = 300,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simserver", "sweep", str(sweep_file), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=sweep_file.parent,
                          env=dict(os.environ, **(env or {})))


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]


def test_kitbot_runs_are_the_same_on_one_worker_on_two_and_alone(tmp_path):
    project = kitbot_copy(tmp_path)
    path = kitbot_sweep(project, """runs = 4
seed = 7
pass_rate = 0.5
[vary."robot.start.heading"]
mode = "add"
normal = ["0 deg", "2 deg"]
[vary."battery.resistance"]
values = ["0.015 ohm", "0.03 ohm"]
""")
    one = sweep(path, "--workers", "1", "--out", str(tmp_path / "one"))
    two = sweep(path, "--workers", "2", "--out", str(tmp_path / "two"))
    for done in (one, two):
        assert done.returncode in (0, 1), done.stdout + done.stderr
        assert "4 of 4 runs" in done.stdout
    a, b = records(tmp_path / "one"), records(tmp_path / "two")
    assert [r["run"] for r in a] == [0, 1, 2, 3]
    assert [comparable(r) for r in a] == [comparable(r) for r in b]
    assert all(r["checks"] and r["error"] is None for r in a), a
    assert len({r["seed"] for r in a}) == 4
    summary = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert summary["ended"] == 4 and summary["workers"] == 2
    assert summary["met"] == (one.returncode == 0) == (summary["pass_rate"] >= 0.5)
    assert (tmp_path / "two" / "sweep.png").stat().st_size > 10_000
    # The command the report gives repeats a run alone, here, without Ray: the same record.
    alone = sweep(path, "--run", "2", "--out", str(tmp_path / "alone"))
    assert alone.returncode == (0 if a[2]["passed"] else 1), alone.stdout + alone.stderr
    kept = tmp_path / "alone" / "run-2"
    assert comparable(json.loads((kept / "record.json").read_text())) == comparable(a[2])
    assert (kept / "simserver.toml").is_file() and (kept / "trace.csv").is_file()
    assert "simserver bridge:" in (kept / "robot.log").read_text()
    # Started as a plain `python -m robotpy` process instead of a fork: the same run.
    plain = sweep(path, "--run", "2", "--out", str(tmp_path / "plain"),
                  env={"SIMSERVER_SWEEP_FORK": "0"})
    assert plain.returncode == alone.returncode, plain.stdout + plain.stderr
    assert comparable(json.loads((tmp_path / "plain" / "run-2" / "record.json").read_text())
                      ) == comparable(a[2])


CRASH_OR_HANG = """
import os as _os

_CONFIG = open(_os.environ["SIMSERVER_CONFIG"]).read()
if "0.03 ohm" in _CONFIG:  # run 1: the program crashes as it starts
    raise RuntimeError("boom: a robot program that cannot start")
if "0.02 ohm" in _CONFIG:  # run 2: its autonomous never returns
    import time as _time

    Robot.autonomousInit = lambda self: _time.sleep(1000)
"""


def test_programs_that_crash_or_hang_fail_their_run_and_the_sweep_goes_on(tmp_path):
    project = kitbot_copy(tmp_path, CRASH_OR_HANG)
    path = kitbot_sweep(project, """runs = 4
timeout = "6 s"
pass_rate = 0.5
[vary."battery.resistance"]
values = ["0.015 ohm", "0.03 ohm", "0.02 ohm"]
""")
    started = time.monotonic()
    done = sweep(path, "--workers", "2", "--out", str(tmp_path / "out"))
    took = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr  # 2 of 4 passed: 0.5 is met
    runs = records(tmp_path / "out")
    assert [r["passed"] for r in runs] == [True, False, False, True], runs
    assert "ended before the run did" in runs[1]["error"]
    assert "boom" in (tmp_path / "out" / "failed" / "1.log").read_text()
    # The sweep's timeout (6 s) stops the hung run before the bridge's own (10 s) would.
    assert runs[2]["error"] == "timed out after 6 s", runs[2]["error"]
    assert runs[2]["timing"]["total"] < 9.0, runs[2]["timing"]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [w["run"] for w in summary["worst"]] == [1, 2]
    assert "run 1:" in done.stdout and "sweep.toml --run 1" in done.stdout
    # The crash is noticed at once, not after the timeout.
    assert runs[1]["timing"]["total"] < 6.0, runs[1]["timing"]
    assert took < 60, took


@posix_signals
def test_ctrl_c_stops_the_workers_and_writes_what_ended(tmp_path):
    project = kitbot_copy(tmp_path)
    path = kitbot_sweep(project, """runs = 40
""")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "simserver", "sweep", str(path), "--workers",
                             "2", "--out", str(out), "--progress"], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(12)  # Ray's start, the launchers, a few runs
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stdout + stderr
    assert "stopped after" in stderr
    ended = records(out)
    assert 1 <= len(ended) < 40, stdout
    assert [r["run"] for r in ended] == sorted(r["run"] for r in ended)
    assert not json.loads((out / "summary.json").read_text())["met"]
    # No robot program or launcher of this sweep is left running.
    wait_for(lambda: not leftovers(project), 30, "the sweep's processes to end")


def leftovers(project: Path) -> list[str]:
    """The processes still running whose command line names ``project`` (the sweep's
    launchers, and the robot programs forked from them)."""
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if str(project) in line]


SCRIPTED = """[sweep]
config = "simserver.toml"
inputs = "s_curve.csv"
check = "check.toml"
runs = 6
seed = 3
[vary."drivetrain.friction"]
mode = "scale"
uniform = [0.5, 1.0]
[vary."robot.mass"]
normal = ["55 lb", "5 lb"]
"""


RAY = str(Path(sys.executable).parent / "ray")
OBJECT_STORE = 100 * 1024 * 1024  # bytes per node: results are a few kB
#: Clusters that `ray start` makes use token authentication (Ray 2.60; docs/sweeps.md): every
#: client says so.
TOKEN = {"RAY_AUTH_MODE": "token", "RAY_USAGE_STATS_ENABLED": "0"}


def ray_node(*args: str, log: Path) -> subprocess.Popen:
    """``ray start --block`` (a head with ``--head``, else a worker node) with one CPU."""
    return subprocess.Popen([RAY, "start", "--block", "--num-cpus", "1",
                             "--object-store-memory", str(OBJECT_STORE), *args],
                            stdout=log.open("w"), stderr=subprocess.STDOUT,
                            env=dict(os.environ, **TOKEN),
                            start_new_session=True)


def cluster_cpus(port: int) -> str:
    return subprocess.run([RAY, "status", "--address", f"127.0.0.1:{port}"],
                          capture_output=True, text=True, env=dict(os.environ, **TOKEN)).stdout


@posix_signals
def test_scripted_sweep_on_a_two_node_cluster_matches_the_local_one(tmp_path):
    folder = tmp_path / "scripted"
    folder.mkdir()
    shutil.copy(KITBOT / "simserver.toml", folder / "simserver.toml")
    shutil.copy(REPO / "simserver" / "data" / "s_curve.csv", folder / "s_curve.csv")
    (folder / "check.toml").write_text('duration = "8 s"\n[expect]\nno_wall_contact = true\n'
                                       'min_battery_voltage = "11 V"\n')
    path = folder / "sweep.toml"
    path.write_text(SCRIPTED)
    local = sweep(path, "--workers", "2", "--out", str(tmp_path / "local"))
    assert local.returncode in (0, 1), local.stdout + local.stderr
    port = free_port()
    head = ray_node("--head", "--port", str(port), "--include-dashboard", "false",
                    log=tmp_path / "head.log")
    worker = None
    try:
        wait_for(lambda: "1.0 CPU" in cluster_cpus(port), 60, "the head node")
        worker = ray_node("--address", f"127.0.0.1:{port}", log=tmp_path / "worker.log")
        wait_for(lambda: "2.0 CPU" in cluster_cpus(port), 60, "the worker node to join")
        cluster = sweep(path, "--address", f"127.0.0.1:{port}", "--out",
                        str(tmp_path / "cluster"), env=TOKEN)
    finally:
        for node in (worker, head):
            if node is not None:
                os.killpg(node.pid, signal.SIGTERM)
                node.wait(60)
    assert cluster.returncode == local.returncode, cluster.stdout + cluster.stderr
    a, b = records(tmp_path / "local"), records(tmp_path / "cluster")
    assert len(a) == 6 and all(r["checks"] for r in a), a
    assert [comparable(r) for r in a] == [comparable(r) for r in b]


SLOW_START = """
import os as _os
import time as _time

if "0.03 ohm" in open(_os.environ["SIMSERVER_CONFIG"]).read():  # run 1 starts slowly
    _time.sleep(8)
"""


def _process_of_run(index: int) -> int | None:
    """The pid of run ``index``'s robot program (its output goes to the run's robot.log), if
    one runs."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            out = os.readlink(f"/proc/{pid}/fd/1")
        except OSError:
            continue
        if f"/simserver-run{index}-" in out and out.endswith("robot.log"):
            return int(pid)
    return None


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds processes in /proc")
def test_a_lost_worker_fails_its_run_and_the_sweep_goes_on(tmp_path):
    project = kitbot_copy(tmp_path, SLOW_START)
    path = kitbot_sweep(project, """runs = 4
[vary."battery.resistance"]
values = ["0.015 ohm", "0.03 ohm"]
""")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "simserver", "sweep", str(path), "--workers",
                             "2", "--out", str(out)], cwd=project, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    robot = wait_for(lambda: _process_of_run(1), 60, "run 1's robot program")
    worker = _parent(_parent(robot))  # robot program <- launcher <- Ray worker
    assert "ray" in Path(f"/proc/{worker}/cmdline").read_text(), "not a Ray worker"
    os.kill(worker, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 1, stdout + stderr  # run 3 also starts slowly, and passes
    runs = records(out)
    assert [r["run"] for r in runs] == [0, 1, 2, 3]
    assert runs[1]["error"].startswith("lost:"), runs[1]
    assert runs[1]["values"] == {"battery.resistance": "0.03 ohm"}  # as the run drew them
    assert [r["passed"] for r in runs] == [True, False, True, True], runs
    # Run 1's robot program died with its worker's launcher; nothing of the sweep is left.
    wait_for(lambda: _process_of_run(1) is None, 30, "run 1's robot program to end")
    wait_for(lambda: not leftovers(project), 30, "the sweep's processes to end")
