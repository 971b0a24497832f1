"""tests/io/photon_robot.py as a subprocess: the robot side of the PhotonVision tests
(test_photonvision.py, test_vision_session.py). Importing this module does not import
photonlibpy, which is not installed on Python 3.10 (photonlibpy 2026 needs numpy 2.3)."""

from __future__ import annotations

import importlib.util
import math
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.ntutil import REPO

NO_PHOTONLIBPY = "photonlibpy 2026 needs numpy 2.3, so Python 3.11 or newer"
needs_photonlibpy = pytest.mark.skipif(importlib.util.find_spec("photonlibpy") is None,
                                       reason=NO_PHOTONLIBPY)

ROBOT = Path(__file__).with_name("photon_robot.py")
MOUNT = (0.3, 0.0, 0.5, 0.0, math.radians(-15), 0.0)  # x y z m, roll pitch yaw rad


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    return port if port != 5810 else free_udp_port()


class RobotProcess:
    """tests/io/photon_robot.py as a subprocess, its stdout lines in a queue."""

    def __init__(self, port: int, seconds: float, script: Path | None = None):
        """photon_robot.py, or ``script`` (given only --port and --timesync-port)."""
        args = [str(script)] if script is not None else [
            str(ROBOT), "--seconds", str(seconds), "--mount", *(str(v) for v in MOUNT)]
        self.proc = subprocess.Popen(
            [sys.executable, *args, "--port", str(port), "--timesync-port",
             str(free_udp_port())],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_line(self, prefix: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            if line.startswith(prefix):
                return line
        raise AssertionError(f"robot process: no {prefix!r} line; stderr:\n{self.stderr()}")

    def finish(self, timeout: float) -> list[str]:
        self.proc.wait(timeout)
        self._reader.join(5)
        out = []
        while not self.lines.empty():
            out.append(self.lines.get())
        return out

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
