"""Lock-step throughput with a real robot program, and the determinism check.

Runs examples/kitbot (``python -m robotpy sim --nogui --simserver``, port 5810: the machine-wide
lock /tmp/simserver-5810.lock is held meanwhile, see ``_common.robot_program_lock``) against
``simserver run --lockstep --fast --enable autonomous``
twice, and reports simulated seconds per wall second, wall time per 20 ms robot period, and
whether the two pose traces are bit-identical. The reference, measured in the same run, is the
same world stepped by simserver alone at the same period with scripted inputs (no robot program,
no bridge): the ratio is what the robot program and the exchange cost on top of the physics.

    python benchmarks/lockstep.py [--seconds 60]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    from benchmarks._common import bundled_script, robot_program_lock, text_table
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import bundled_script, robot_program_lock, text_table  # type: ignore
from simserver.config.loader import load
from simserver.runs.session import RunOptions, Session

REPO = Path(__file__).resolve().parents[1]
KITBOT = REPO / "examples" / "kitbot"
GOAL = 10.0  # × real time (issue 3)


def _port_busy(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _lockstep_run(seconds: float, work: Path, name: str) -> tuple[dict, bytes]:
    """One robot program + one lock-step simserver run; (JSON summary, trace bytes)."""
    if _port_busy(5810):
        raise RuntimeError("port 5810 is busy: stop the other robot program first")
    log = (work / f"{name}-robot.log").open("w")
    robot = subprocess.Popen(
        [sys.executable, "-m", "robotpy", "sim", "--nogui", "--simserver"], cwd=KITBOT,
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        deadline = time.monotonic() + 60
        log_path = Path(log.name)
        while "simserver bridge:" not in log_path.read_text() or not _port_busy(5810):
            if time.monotonic() > deadline or robot.poll() is not None:
                raise RuntimeError(f"robot program did not start; see {log.name}")
            time.sleep(0.05)
        out, trace = work / f"{name}.json", work / f"{name}.csv"
        run = subprocess.run(
            [sys.executable, "-m", "simserver", "run", str(KITBOT / "simserver.toml"),
             "--lockstep", "--fast", "--enable", "autonomous", "--duration", f"{seconds:g}",
             "--json", str(out), "--trace", str(trace), "-q"],
            cwd=REPO, capture_output=True, text=True, timeout=seconds + 120)
        if run.returncode != 0:
            raise RuntimeError(f"simserver failed: {run.stderr}")
        robot.wait(30)
        return json.loads(out.read_text())["summary"], trace.read_bytes()
    finally:
        if robot.poll() is None:
            os.killpg(robot.pid, signal.SIGKILL)
            robot.wait()
        log.close()
        deadline = time.monotonic() + 10
        while _port_busy(5810) and time.monotonic() < deadline:
            time.sleep(0.05)


def _physics_alone(seconds: float) -> float:
    """Simulated s per wall s of the same world at the same period, no robot program."""
    cfg = load(KITBOT / "simserver.toml")
    session = Session(cfg, RunOptions(fast=True, duration=seconds, script=bundled_script(cfg),
                                      record=True))
    session.tick = cfg.bridge.period
    start = time.perf_counter()
    session.run()
    return seconds / (time.perf_counter() - start)


def measure_lockstep(seconds: float = 60.0) -> dict:
    """Two lock-step runs and the physics-alone reference."""
    with robot_program_lock(), tempfile.TemporaryDirectory(prefix="simserver-lockstep-") as tmp:
        work = Path(tmp)
        first, trace1 = _lockstep_run(seconds, work, "run1")
        second, trace2 = _lockstep_run(seconds, work, "run2")
    rates = [r["sim_time"] / r["wall_time"] for r in (first, second)]
    return {
        "seconds": seconds,
        "rates": rates,
        "period_ms": [20.0 / rate for rate in rates],  # wall ms per 20 ms period
        "identical": trace1 == trace2,
        "trace_bytes": len(trace1),
        "reference": _physics_alone(seconds),
    }


def _rows(r: dict) -> list[list[str]]:
    best = max(r["rates"])
    return [
        ["kitbot example, lock-step (2 runs)",
         " / ".join(f"{x:.1f}×" for x in r["rates"]),
         " / ".join(f"{x:.2f} ms" for x in r["period_ms"]),
         f"goal ≥ {GOAL:g}×: {'met' if min(r['rates']) >= GOAL else 'NOT met'}"],
        ["reference: same world alone, same period", f"{r['reference']:.0f}×",
         f"{20.0 / r['reference']:.3f} ms", f"lock-step costs {r['reference'] / best:.0f}× "
         "the physics alone"],
        ["determinism: pose traces of the 2 runs",
         "bit-identical" if r["identical"] else "DIFFERENT", f"{r['trace_bytes']} bytes", ""],
    ]


HEAD = ["", "real-time factor", "wall per 20 ms period", "note"]


def format_table(r: dict) -> str:
    """Plain-text table for the terminal."""
    return "\n".join([f"Lock-step, {r['seconds']:g} s simulated per run",
                      *text_table(HEAD, _rows(r))])


def format_markdown(r: dict) -> str:
    """Markdown table for RESULTS.md."""
    lines = [f"{r['seconds']:g} s of autonomous per run, `simserver run --lockstep --fast` "
             "beside `robotpy sim --nogui --simserver` (examples/kitbot).", "",
             "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(row) + " |" for row in _rows(r)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    args = ap.parse_args(argv)
    print(format_table(measure_lockstep(args.seconds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
