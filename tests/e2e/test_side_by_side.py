"""Robot programs side by side: each with its own NetworkTables port (``bridge.nt_port``) and
step port (``bridge.port``), so several run at once on one machine, none on 5810 and none
taking the 5810 lock.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import ntcore
import pytest

from tests.e2e.robots import KITBOT, REPO, RobotProgram, config_with, robot_nt
from tests.ntutil import free_port, wait_for

pytestmark = [pytest.mark.robot, pytest.mark.network, pytest.mark.slow]


def own_ports(tmp_path: Path, name: str) -> tuple[Path, int, int]:
    """The kitbot's config in tmp_path/name with a free step port and a free NT port;
    returns (config, step port, NT port)."""
    folder = tmp_path / name
    folder.mkdir()
    nt_port = free_port()
    cfg, port = config_with(folder, KITBOT / "simserver.toml", f"nt_port = {nt_port}")
    return cfg, port, nt_port


def test_two_kitbots_run_at_once_on_their_own_ports_with_identical_results(tmp_path):
    runs = [own_ports(tmp_path, f"run{i}") for i in range(2)]
    assert len({p for _, step, nt in runs for p in (step, nt)}) == 4
    robots = [RobotProgram(KITBOT, cfg, cfg.parent, nt_port=nt) for cfg, _, nt in runs]
    sims: list[subprocess.Popen[str]] = []
    try:
        for robot, (_, _, nt) in zip(robots, runs, strict=True):
            robot.wait_ready()
            assert f"NetworkTables port {nt}" in robot.output()
        # Each program's own topics are on its own server.
        for nt in (nt for _, _, nt in runs):
            inst = robot_nt(nt)
            try:
                sub = ntcore.MultiSubscriber(inst, ["/kitbot/"],
                                             ntcore.PubSubOptions(topicsOnly=True))
                wait_for(lambda inst=inst: inst.getTopics("/kitbot/"), 10,
                         f"the kitbot's topics on port {nt}")
                sub.close()
            finally:
                ntcore.NetworkTableInstance.destroy(inst)
        # Both simservers at once, each finding its program through its config alone.
        for cfg, _, _ in runs:
            sims.append(subprocess.Popen(
                [sys.executable, "-m", "simserver", "run", str(cfg), "--lockstep", "--fast",
                 "--enable", "autonomous", "--duration", "5", "--trace",
                 str(cfg.parent / "trace.csv")],
                cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for sim in sims:
            _, err = sim.communicate(timeout=120)
            assert sim.returncode == 0, err[-3000:]
        for robot in robots:
            assert robot.wait_exit(15) == 0, robot.output()[-3000:]
    finally:
        for sim in sims:
            if sim.poll() is None:
                sim.kill()
        for robot in robots:
            robot.close()
    traces = [(cfg.parent / "trace.csv").read_bytes() for cfg, _, _ in runs]
    assert len(traces[0].splitlines()) > 250
    # Same config apart from the ports, same inputs: the same run, bit for bit.
    assert traces[0] == traces[1]


def test_a_taken_nt_port_stops_the_robot_program_naming_the_key(tmp_path):
    cfg, _, nt_port = own_ports(tmp_path, "taken")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", nt_port))
        holder.listen()
        robot = RobotProgram(KITBOT, cfg, tmp_path, nt_port=free_port())
        try:
            assert robot.wait_exit(60) == 2
            out = robot.output()
        finally:
            robot.close()
    assert f"TCP port {nt_port} (bridge.nt_port) is in use" in out, out[-3000:]


def test_check_refuses_the_same_port_for_nt_and_the_step_port(tmp_path):
    cfg, port, _ = own_ports(tmp_path, "same")
    cfg.write_text(cfg.read_text().replace("nt_port = ", f"nt_port = {port}\n# ", 1))
    run = subprocess.run([sys.executable, "-m", "simserver", "check", str(cfg)], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "bridge.nt_port" in run.stdout + run.stderr
    assert f"must differ from bridge.port ({port})" in run.stdout + run.stderr
