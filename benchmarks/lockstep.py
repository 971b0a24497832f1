"""Lock-step throughput with a real robot program, its floor, and the determinism check.

Runs examples/kitbot (``python -m robotpy sim --nogui --simserver``, on a free step port and a
free NetworkTables port: ``bridge.port``, ``bridge.nt_port``, so neither port 5810 nor its
lock) against ``simserver run --lockstep --fast --enable autonomous`` twice, and reports
simulated seconds per wall second, wall time per 20 ms robot period, and whether the two pose
traces are bit-identical. Two references are measured in the same run:

- the floor: the same robot program stepped alone by ``wpilib.simulation.stepTiming`` from its
  own process (benchmarks/_floorbot.py; no simserver, no bridge), before and after the
  lock-step runs; lock-step's wall time per period over the floor's is what simserver, the
  bridge and the exchange add to the robot program's own cost;
- the same world stepped by simserver alone at the same period with scripted inputs (no robot
  program, no bridge): the physics;
- the bound: the robot program with the bridge's work and the world in its own process, one
  after the other, nothing exchanged (benchmarks/_floorbot.py with the config): reading the
  outputs from the HAL, stepping the world, writing the sensors, the bridge's clock. Every
  lock-step period does this work in this order, whatever carries it between the processes,
  so no lock-step of this design can be faster. Measured in the interpreted build and, when
  ``make compiled`` has built it, in the compiled one.

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
    from benchmarks._common import bundled_script, text_table
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import bundled_script, text_table  # type: ignore
from simserver.config.loader import load
from simserver.runs.session import RunOptions, Session

REPO = Path(__file__).resolve().parents[1]
KITBOT = REPO / "examples" / "kitbot"
COMPILED = REPO / "build" / "compiled"  # `make compiled`
GOAL = 10.0  # × real time (issue 3)
FLOOR_GOAL = 1.5  # lock-step wall per period over the floor's (issue 24)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_busy(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def own_ports_config(work: Path, name: str) -> tuple[Path, int]:
    """A copy of the kitbot's config in ``work/name`` whose robot program takes a free step
    port and a free NetworkTables port (``bridge.port``, ``bridge.nt_port``), so it needs
    neither port 5810 nor the machine-wide lock; returns (config, NT port)."""
    folder = work / name
    folder.mkdir()
    nt_port = _free_port()
    path = folder / "simserver.toml"
    path.write_text((KITBOT / "simserver.toml").read_text() +
                    f"\nport = {_free_port()}\nnt_port = {nt_port}\n")
    return path, nt_port


def _wait_started(robot: subprocess.Popen, log_path: Path, nt_port: int) -> None:
    deadline = time.monotonic() + 60
    while "simserver bridge:" not in log_path.read_text() or not _port_busy(nt_port):
        if time.monotonic() > deadline or robot.poll() is not None:
            raise RuntimeError(f"robot program did not start; see {log_path}")
        time.sleep(0.05)


def _stop(robot: subprocess.Popen) -> None:
    if robot.poll() is None:
        os.killpg(robot.pid, signal.SIGKILL)
        robot.wait()


def _lockstep_run(seconds: float, work: Path, name: str) -> tuple[dict, bytes]:
    """One robot program + one lock-step simserver run; (JSON summary, trace bytes)."""
    cfg, nt_port = own_ports_config(work, name)
    log = (work / f"{name}-robot.log").open("w")
    robot = subprocess.Popen(
        [sys.executable, "-m", "robotpy", "sim", "--nogui", "--simserver"], cwd=KITBOT,
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1", SIMSERVER_CONFIG=str(cfg)))
    try:
        _wait_started(robot, Path(log.name), nt_port)
        out, trace = work / f"{name}.json", work / f"{name}.csv"
        run = subprocess.run(
            [sys.executable, "-m", "simserver", "run", str(cfg),
             "--lockstep", "--fast", "--enable", "autonomous", "--duration", f"{seconds:g}",
             "--json", str(out), "--trace", str(trace), "-q"],
            cwd=REPO, capture_output=True, text=True, timeout=seconds + 120)
        if run.returncode != 0:
            raise RuntimeError(f"simserver failed: {run.stderr}")
        robot.wait(30)
        return json.loads(out.read_text())["summary"], trace.read_bytes()
    finally:
        _stop(robot)
        log.close()


def _floor(seconds: float, work: Path, bound: bool = False, compiled: bool = False) -> float:
    """Wall s per 20 ms period of the kitbot stepped alone by ``stepTiming`` in its own
    process (benchmarks/_floorbot.py): no simserver, no bridge. With ``bound``, the bridge's
    work and the world in that process too (the bound of lock-step), in the compiled build
    with ``compiled``."""
    periods = round(seconds / 0.02)
    path = [str(COMPILED), str(REPO)] if compiled else [str(REPO)]
    config = [str(KITBOT / "simserver.toml")] if bound else []
    run = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("_floorbot.py")), str(periods),
         str(_free_port()), *config], cwd=KITBOT, capture_output=True, text=True,
        timeout=seconds + 120, env=dict(os.environ, PYTHONPATH=os.pathsep.join(path)))
    if run.returncode != 0:
        raise RuntimeError(f"the floor's robot program failed: {run.stderr[-2000:]}")
    result = json.loads(run.stdout.strip().splitlines()[-1])
    if result["autonomous_loops"] < periods:
        raise RuntimeError(f"the floor's robot program ran {result['autonomous_loops']} "
                           f"autonomous loops in {periods} periods")
    return float(result["wall"]) / periods


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
    """The floor, the bound (in each build there is), two lock-step runs, the same again, and
    the physics-alone reference."""
    builds = [False, True] if (COMPILED / "simserver").is_dir() else [False]
    with tempfile.TemporaryDirectory(prefix="simserver-lockstep-") as tmp:
        work = Path(tmp)
        floors = [_floor(seconds, work)]
        bounds = {c: [_floor(seconds, work, True, c)] for c in builds}
        first, trace1 = _lockstep_run(seconds, work, "run1")
        second, trace2 = _lockstep_run(seconds, work, "run2")
        floors.append(_floor(seconds, work))
        for c in builds:
            bounds[c].append(_floor(seconds, work, True, c))
    rates = [r["sim_time"] / r["wall_time"] for r in (first, second)]
    return {
        "bound_ms": [x * 1e3 for x in bounds[False]],
        "bound_compiled_ms": [x * 1e3 for x in bounds.get(True, [])],
        "seconds": seconds,
        "rates": rates,
        "period_ms": [20.0 / rate for rate in rates],  # wall ms per 20 ms period
        "floor_ms": [f * 1e3 for f in floors],
        "identical": trace1 == trace2,
        "trace_bytes": len(trace1),
        "reference": _physics_alone(seconds),
    }


def _rows(r: dict) -> list[list[str]]:
    best = max(r["rates"])
    floor = min(r["floor_ms"])
    ratio = min(r["period_ms"]) / floor
    physics = 20.0 / r["reference"]  # ms per 20 ms period
    return [
        ["kitbot example, lock-step (2 runs)",
         " / ".join(f"{x:.1f}×" for x in r["rates"]),
         " / ".join(f"{x:.3f} ms" for x in r["period_ms"]),
         f"goal ≥ {GOAL:g}×: {'met' if min(r['rates']) >= GOAL else 'NOT met'}"],
        ["floor: the robot program alone under stepTiming (2 runs)",
         " / ".join(f"{20.0 / x:.0f}×" for x in r["floor_ms"]),
         " / ".join(f"{x:.3f} ms" for x in r["floor_ms"]),
         f"lock-step / floor {ratio:.2f}×; goal ≤ {FLOOR_GOAL:g}×: "
         f"{'met' if ratio <= FLOOR_GOAL else 'NOT met'}"],
        ["reference: same world alone, same period", f"{r['reference']:.0f}×",
         f"{20.0 / r['reference']:.3f} ms", f"lock-step costs {r['reference'] / best:.0f}× "
         "the physics alone"],
        # A period's physics needs that period's outputs and the next period needs its
        # sensors: no lock-step can take less than the robot program plus the physics.
        ["floor + physics, one after the other",
         f"{20.0 / (floor + physics):.0f}×", f"{floor + physics:.3f} ms",
         f"{(floor + physics) / floor:.2f}× the floor, with no cost for the exchange"],
        *[[f"bound: robot program + bridge + world in one process, nothing exchanged, "
           f"{build} (2 runs)", " / ".join(f"{20.0 / x:.0f}×" for x in ms),
           " / ".join(f"{x:.3f} ms" for x in ms),
           f"{min(ms) / floor:.2f}× the floor: the least any lock-step of this design takes"]
          for build, ms in (("interpreted", r["bound_ms"]),
                            ("compiled", r["bound_compiled_ms"])) if ms],
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
             "beside `robotpy sim --nogui --simserver` (examples/kitbot, on free ports). The "
             "floor: the same robot program alone, stepped by WPILib's `stepTiming(0.02)` from "
             "its own process (benchmarks/_floorbot.py), before and after the lock-step runs; "
             "lock-step / floor compares the best of each.", "",
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
