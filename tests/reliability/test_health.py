"""`simserver health` (the server image's HEALTHCHECK) reflects a live simulation: healthy while
a real `simserver run` advances or waits for its robot program, unhealthy when it is frozen
(SIGSTOP), healthy again once thawed (SIGCONT), and "no simulation" once it has ended."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simserver.runs import health
from tests.ntutil import REPO, free_port, wait_for

MAX_AGE = 1.5  # s: a test's staleness limit (the image's is health.MAX_AGE)


def _health(hb: Path, max_age: float = MAX_AGE) -> subprocess.CompletedProcess[str]:
    """`simserver health` as the image runs it: the file from SIMSERVER_HEARTBEAT."""
    return subprocess.run(
        [sys.executable, "-m", "simserver", "health", "--max-age", str(max_age)],
        cwd=REPO, capture_output=True, text=True, timeout=60,
        env=dict(os.environ, SIMSERVER_HEARTBEAT=str(hb)))


def _run(hb: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "simserver", "run", "--no-progress", "-q", *args], cwd=REPO,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, SIMSERVER_HEARTBEAT=str(hb)))


def _stop(proc: subprocess.Popen[str]) -> str:
    """SIGCONT then Ctrl-C; its stderr."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGCONT)
        proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err


def _healthy(hb: Path) -> bool:
    return _health(hb).returncode == 0


@pytest.mark.slow
def test_health_follows_a_running_simulation_frozen_and_thawed(tmp_path):
    hb = tmp_path / "heartbeat"
    proc = _run(hb, "--inputs", "simserver/data/s_curve.csv", "--duration", "600")
    try:
        wait_for(lambda: _healthy(hb), 60, "a healthy run")
        proc.send_signal(signal.SIGSTOP)
        frozen_at = time.monotonic()
        wait_for(lambda: _health(hb).returncode == 1, 30, "a frozen run to turn unhealthy")
        frozen = _health(hb)
        assert time.monotonic() - frozen_at >= MAX_AGE - health.PERIOD  # not before it went stale
        assert frozen.returncode == 1 and "stale" in frozen.stderr, frozen
        assert "frozen, hung or killed" in frozen.stderr and "simulated" in frozen.stderr
        proc.send_signal(signal.SIGCONT)
        wait_for(lambda: _healthy(hb), 30, "the thawed run to be healthy again")
        alive = _health(hb)
        assert alive.returncode == 0 and "alive: heartbeat" in alive.stdout, alive
    finally:
        err = _stop(proc)
    assert proc.returncode == 0, err
    gone = _health(hb)
    assert gone.returncode == 1 and "no simulation is running" in gone.stderr, gone
    assert not hb.exists()


@pytest.mark.network
@pytest.mark.slow
def test_health_stays_alive_while_lockstep_waits_for_its_robot_program(tmp_path):
    """No robot program answers on the bridge's port: the run waits (--wait) and keeps its
    heartbeat fresh the whole time, then fails, and the file is gone."""
    hb = tmp_path / "heartbeat"
    config = tmp_path / "robot.toml"
    config.write_text((REPO / "simserver/config/kitbot.toml").read_text() +
                      f"\n[bridge]\nport = {free_port()}\n")
    proc = _run(hb, str(config), "--lockstep", "--fast", "--duration", "1", "--wait", "8",
                "--server", f"127.0.0.1:{free_port()}")
    try:
        wait_for(lambda: _healthy(hb), 60, "a healthy waiting run")
        for _ in range(3):  # beyond MAX_AGE of waiting, every check healthy
            time.sleep(1.0)
            check = _health(hb)
            if proc.poll() is not None:
                break
            assert check.returncode == 0, check
        err = proc.communicate(timeout=60)[1]
    finally:
        _stop(proc)
    assert proc.returncode == 1 and "no robot program's bridge answered" in err, err
    assert not hb.exists()


def test_check_tells_fresh_stale_and_missing(tmp_path):
    hb = tmp_path / "hb"
    assert health.check(hb) == (False, f"no heartbeat at {hb}: no simulation is running (or "
                                       "it has not started)")
    hb.write_text("pid 7: tick 3, simulated 0.06 s\n")
    mtime = hb.stat().st_mtime
    alive, why = health.check(hb, max_age=5.0, now=mtime + 4.0)
    assert alive and why == "alive: heartbeat 4.0 s ago (pid 7: tick 3, simulated 0.06 s)"
    alive, why = health.check(hb, max_age=5.0, now=mtime + 6.0)
    assert not alive and why.startswith(f"stale: the heartbeat {hb} is 6.0 s old")


def test_heartbeat_writes_at_most_once_per_period_and_never_without_a_path(tmp_path):
    hb = tmp_path / "hb"
    calls: list[int] = []

    def status() -> str:
        calls.append(1)
        return f"tick {len(calls)}"

    beat = health.Heartbeat(hb, status, period=3600.0)
    for _ in range(1000):
        beat.beat()
    assert calls == [1] and hb.read_text() == f"pid {os.getpid()}: tick 1\n"
    beat.stop()
    beat.beat()
    assert not hb.exists() and calls == [1]
    off = health.Heartbeat(None, status)
    off.beat()
    off.stop()
    assert calls == [1]


def test_an_unwritable_heartbeat_is_said_once_and_the_run_goes_on(tmp_path, caplog):
    hb = tmp_path / "missing-dir" / "hb"
    beat = health.Heartbeat(hb, lambda: "tick 1", period=0.0)
    beat.beat()
    beat.beat()
    assert isinstance(beat.failed, FileNotFoundError)
    lines = [r.getMessage() for r in caplog.records if "heartbeat" in r.getMessage()]
    assert len(lines) == 1 and str(hb) in lines[0], lines


def test_health_without_a_heartbeat_file_is_a_usage_error():
    env = {k: v for k, v in os.environ.items() if k != health.ENV}
    proc = subprocess.run([sys.executable, "-m", "simserver", "health"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "SIMSERVER_HEARTBEAT" in proc.stderr, proc
