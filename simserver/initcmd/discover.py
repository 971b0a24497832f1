"""Run a robot program in the bridge's discovery mode and read what it lists.

    listing = discover(Path("robot"), timeout=60.0)   # DiscoveryError on any failure

The program runs as ``<python> -m robotpy --main DIR/robot.py sim --nogui --simserver`` with
``SIMSERVER_DISCOVER`` naming a JSON file; the bridge writes it after robotInit and a few
disabled loops and ends the program (:mod:`simserver.bridge.discovery`). The program's NT
server moves to free ports, so other robot programs on 5810 are not disturbed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from simserver.util.console import CHILD_ENCODING

TAIL_LINES = 30


class DiscoveryError(Exception):
    """The robot program could not be listed. ``code``: the exit status to give (2: usage,
    1: the program failed or timed out)."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def _tail(text: str) -> str:
    return "\n".join(text.splitlines()[-TAIL_LINES:])


def discover(robot_dir: Path, python: str = sys.executable, timeout: float = 60.0) -> dict[str,
                                                                                          Any]:
    """The discovery listing of the robot program in ``robot_dir`` (which holds robot.py).
    ``timeout``: seconds of wall time for it to start and list its devices."""
    main = (robot_dir / "robot.py").resolve()
    if not main.is_file():
        raise DiscoveryError(f"no robot.py in {robot_dir}: give the folder of your robot "
                             "program (simserver init ROBOT_DIR)", 2)
    with tempfile.TemporaryDirectory(prefix="simserver-init-") as tmp:
        out = Path(tmp) / "listing.json"
        env = dict(os.environ, SIMSERVER_DISCOVER=str(out), PYTHONUNBUFFERED="1",
                   PYTHONIOENCODING=CHILD_ENCODING)
        env.pop("SIMSERVER_CONFIG", None)
        cmd = [python, "-m", "robotpy", "--main", str(main), "sim", "--nogui", "--simserver"]
        try:
            proc = subprocess.run(cmd, cwd=robot_dir, env=env, capture_output=True, text=True,
                                  encoding="utf-8", errors="replace", timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            text = "".join(part.decode(errors="replace") if isinstance(part, bytes) else part
                           for part in (exc.stdout or "", exc.stderr or ""))
            raise DiscoveryError(f"the robot program did not list its devices within "
                                 f"{timeout:g} s (is robotInit waiting for something?). Its "
                                 f"output:\n{_tail(text)}", 1) from None
        output = proc.stdout + proc.stderr
        if proc.returncode != 0 or not out.is_file():
            raise DiscoveryError(f"the robot program exited with status {proc.returncode} "
                                 f"before its devices could be listed. Its output:\n"
                                 f"{_tail(output)}", 1)
        listing: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return listing
