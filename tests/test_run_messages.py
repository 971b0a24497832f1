"""What `simserver run` tells the user while it waits (real ntcore servers on loopback)."""

from __future__ import annotations

import ntcore
import pytest

from tests.ntutil import REPO, SimserverProcess, free_port, wait_for

pytestmark = [pytest.mark.network, pytest.mark.slow]

KITBOT_CFG = REPO / "examples" / "kitbot" / "simserver.toml"


def test_waiting_for_a_robot_program_is_said_every_few_seconds(tmp_path):
    cfg = tmp_path / "simserver.toml"
    cfg.write_text(KITBOT_CFG.read_text() + f"\nport = {free_port()}\n")
    port = free_port()  # nothing listens there
    proc = SimserverProcess(str(cfg), "--server", f"127.0.0.1:{port}", log_dir=tmp_path)
    try:
        wait_for(lambda: proc.stderr().count("waiting for a robot program") >= 2, 20,
                 "two reminders")
        assert "python -m robotpy sim --simserver" in proc.stderr()
        assert proc.interrupt() == 0
    finally:
        proc.close()
    err = proc.stderr()
    # A stopped run shows what it has (the summary), or says nothing follows.
    assert "results so far follow" in err and "simulated time" in proc.stdout()


def test_a_robot_program_without_the_bridge_is_told_to_add_it(tmp_path):
    cfg = tmp_path / "simserver.toml"
    cfg.write_text(KITBOT_CFG.read_text() + f"\nport = {free_port()}\n")  # no bridge there
    port = free_port()
    robot = ntcore.NetworkTableInstance.create()  # a robot program's NT server, no bridge
    robot.startServer(str(tmp_path / "nt.json"), "127.0.0.1", 0, port)
    proc = SimserverProcess(str(cfg), "--server", f"127.0.0.1:{port}", log_dir=tmp_path)
    try:
        wait_for(lambda: "connected without --simserver: add it" in proc.stderr(), 20,
                 "the advice to add --simserver")
        assert "waiting for a robot program" not in proc.stderr()
        assert proc.interrupt() == 0
    finally:
        proc.close()
        ntcore.NetworkTableInstance.destroy(robot)


def test_enable_without_the_bridge_fails_saying_why_not_that_nobody_connected(tmp_path):
    import subprocess
    import sys

    cfg = tmp_path / "simserver.toml"
    cfg.write_text(KITBOT_CFG.read_text() + f"\nport = {free_port()}\n")
    port = free_port()
    robot = ntcore.NetworkTableInstance.create()
    robot.startServer(str(tmp_path / "nt.json"), "127.0.0.1", 0, port)
    try:
        run = subprocess.run(
            [sys.executable, "-m", "simserver", "run", str(cfg), "--server",
             f"127.0.0.1:{port}", "--enable", "autonomous", "--duration", "2", "--wait", "3",
             "--json", str(tmp_path / "out.json")],
            cwd=REPO, capture_output=True, text=True, timeout=60)
    finally:
        ntcore.NetworkTableInstance.destroy(robot)
    assert run.returncode == 1
    assert "not through simserver's bridge" in run.stderr
    assert "no robot program connected" not in run.stderr
    assert '"passed": false' in (tmp_path / "out.json").read_text()
