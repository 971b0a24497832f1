"""Real robot programs for end-to-end tests: ``python -m robotpy sim --nogui --simserver``.

Robot programs bind NT port 5810 unless their config's ``bridge.nt_port`` moves them, so those
tests run one at a time (pytest runs tests of one process sequentially; never run them with
xdist). Each RobotProgram on 5810 holds an exclusive lock on ROBOT_LOCK while it runs, so
separate processes on one machine (a benchmark, another test run) that take the same lock
wait their turn instead of colliding; one given its own ``nt_port`` takes no lock.
"""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import ntcore

from simserver.runs.launcher import own_group
from tests.locks import LOCK_DIR, FileLock
from tests.ntutil import REPO, free_port, wait_for

KITBOT = REPO / "examples" / "kitbot"
ROBOT_PORT = 5810
ROBOT_LOCK = LOCK_DIR / "simserver-5810.lock"


def port_free(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:``port``."""
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def config_with(tmp_path: Path, base: Path, extra_bridge: str = "",
                replace: tuple[str, str] | None = None) -> tuple[Path, int]:
    """A copy of config ``base`` in tmp_path with a free bridge.port and extra lines in its
    trailing [bridge] table (``base`` must end with one); returns (path, port)."""
    port = free_port()
    text = base.read_text()
    if replace is not None:
        assert replace[0] in text, replace[0]
        text = text.replace(*replace)
    text += f"\nport = {port}\n{extra_bridge}\n"
    path = tmp_path / "simserver.toml"
    path.write_text(text)
    return path, port


def listening(host: str, port: int) -> bool:
    """Whether something accepts TCP connections on ``host``:``port`` (any address family)."""
    try:
        socket.create_connection((host, port), timeout=0.5).close()
    except OSError:
        return False
    return True


class RobotProgram:
    """A robot project run under ``robotpy sim --nogui --simserver``, output to a file."""

    def __init__(self, project: Path, config: Path, log_dir: Path, name: str = "robot",
                 env: dict[str, str] | None = None, extension: str = "simserver",
                 nt_port: int = ROBOT_PORT):
        self.nt_port = nt_port
        self._lock = None
        if nt_port == ROBOT_PORT:
            self._lock = FileLock(ROBOT_LOCK)
            self._lock.acquire()  # released in close()
        assert port_free(nt_port), f"port {nt_port} busy: another robot program is running"
        self.log_path = log_dir / f"{name}.log"
        self._log = self.log_path.open("w")
        env = dict(os.environ, PYTHONUNBUFFERED="1", SIMSERVER_CONFIG=str(config), **(env or {}))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "robotpy", "--main", str(project / "robot.py"), "sim",
             "--nogui", f"--{extension}"],
            stdout=self._log, stderr=subprocess.STDOUT, cwd=project, env=env,
            **own_group(),
        )
        self.started = time.monotonic()
        self.extension = extension

    def output(self) -> str:
        return self.log_path.read_text()

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Until the bridge (or the halsim_ws server) has started and the NT server listens."""
        def ready() -> bool:
            if self.extension == "ws-server":  # it listens on localhost, maybe only on ::1
                started = listening("localhost", 3300)
            else:
                started = "simserver bridge:" in self.output()
            return started and not port_free(self.nt_port)

        wait_for(lambda: ready() or self.proc.poll() is not None, timeout,
                 "the robot program to start")
        assert self.proc.poll() is None, self.output()

    def wait_exit(self, timeout: float) -> int:
        return self.proc.wait(timeout)

    def close(self) -> None:
        """Stop the program (if it still runs) and wait until its port is free."""
        if self._log.closed:
            return
        try:
            self._stop()
        finally:
            if self._lock is not None:
                self._lock.release()

    def signal(self, kill: bool) -> None:
        """SIGTERM (SIGKILL with ``kill``) to its process group; on Windows, where there is
        neither, TerminateProcess."""
        if hasattr(os, "killpg"):
            os.killpg(self.proc.pid, getattr(signal, "SIGKILL", signal.SIGTERM) if kill
                      else signal.SIGTERM)
        else:
            self.proc.kill()

    def _stop(self) -> None:
        if self.proc.poll() is None:
            self.signal(kill=False)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.signal(kill=True)
                self.proc.wait(10)
        self._log.close()
        wait_for(lambda: port_free(self.nt_port), 10, f"port {self.nt_port} to be released")


def simserver(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """``simserver run ARGS`` to completion, output captured."""
    return subprocess.run([sys.executable, "-m", "simserver", "run", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def robot_nt(port: int = ROBOT_PORT) -> ntcore.NetworkTableInstance:
    """An NT4 client of the robot program's server (127.0.0.1:``port``)."""
    inst = ntcore.NetworkTableInstance.create()
    inst.startClient4("e2e-observer")
    inst.setServer("127.0.0.1", port)
    return inst


def trace_rows(path: Path) -> list[list[float]]:
    """The rows of a ``--trace`` CSV: time, x, y, heading."""
    return [[float(v) for v in line.split(",")] for line in path.read_text().splitlines()[1:]]


def check_vendorbot(log: Path, trace: Path) -> None:
    """What tests/e2e/vendorbot logged agrees with the true motion in ``trace``."""
    records = {r["phase"]: r for r in map(json.loads, log.read_text().splitlines())}
    straight, spin = records["straight"], records["spin"]
    # Both controllers' outputs (Talon FX, SPARK MAX) reached simserver: each side drove.
    assert straight["left_m"] > 1.0 and straight["right_m"] > 1.0, straight
    # The Pigeon 2 reads the true heading (the robot is at rest when it logs).
    heading = math.degrees(trace_rows(trace)[-1][3])
    assert abs(spin["yaw_deg"] - heading) < 0.1, (spin, heading)
    # The Talon FX rotor sensor and the SPARK encoder agree with the Pigeon through no-slip
    # differential kinematics: yaw = (right - left) / track width, within 1 %.
    yaw_from_wheels = math.degrees((spin["right_m"] - spin["left_m"]) / (26 * 0.0254))
    assert abs(yaw_from_wheels - spin["yaw_deg"]) <= 0.01 * abs(spin["yaw_deg"]), spin
    assert 11.0 < spin["battery_v"] < 12.8  # simserver's battery, not the HAL's 12 V default
