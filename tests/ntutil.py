"""Helpers for tests that run real ntcore peers and real simserver processes on loopback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import ntcore
import pytest

from benchmarks._livesession import free_port, wait_for  # noqa: F401 (re-exported for the tests)

REPO = Path(__file__).resolve().parents[1]

#: How a test stops a simserver subprocess as Ctrl-C would: SIGINT on Linux and macOS. Windows
#: cannot send another process SIGINT; it sends CTRL_BREAK_EVENT to a process started in a
#: process group of its own (INTERRUPTIBLE), which simserver handles as it handles SIGINT.
INTERRUPT = getattr(signal, "CTRL_BREAK_EVENT", signal.SIGINT)
INTERRUPTIBLE = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP} if os.name == "nt" else {}
#: Tests of POSIX signals sent to another process (SIGTERM, SIGHUP, SIGKILL, SIGSTOP) or of
#: processes forked by benchmarks/_ntpeer.py: Windows has neither (TerminateProcess only).
posix_signals = pytest.mark.skipif(os.name != "posix", reason="POSIX signals to another "
                                   "process, or forked peers: Windows has neither")


class SimserverProcess:
    """``python -m simserver run ...`` as a subprocess, stderr captured to a file."""

    def __init__(self, *args: str, log_dir: Path):
        self.log_path = log_dir / "simserver.stderr"
        self.out_path = log_dir / "simserver.stdout"
        self._err = self.log_path.open("w")
        self._out = self.out_path.open("w")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "simserver", "run", *args],
            stdout=self._out, stderr=self._err, cwd=REPO, env=env, **INTERRUPTIBLE,
        )

    def stderr(self) -> str:
        return self.log_path.read_text()

    def stdout(self) -> str:
        return self.out_path.read_text()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def interrupt(self, timeout: float = 10.0) -> int:
        """Ctrl-C (INTERRUPT) and wait for the exit code."""
        if self.alive():
            self.proc.send_signal(INTERRUPT)
        return self.proc.wait(timeout)

    def close(self) -> None:
        if self.alive():
            self.proc.kill()
            self.proc.wait(10)
        self._err.close()
        self._out.close()


def client(port: int, name: str = "test-robot") -> ntcore.NetworkTableInstance:
    """A started NT4 client of 127.0.0.1:port."""
    inst = ntcore.NetworkTableInstance.create()
    inst.startClient4(name)
    inst.setServer("127.0.0.1", port)
    return inst


FAST = ntcore.PubSubOptions(periodic=0.001)
