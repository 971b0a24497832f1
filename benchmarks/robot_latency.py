"""Latency with a real robot program: robot code → simserver → robot code, in real time.

What is measured
    ``benchmarks/latencybot/robot.py``, a TimedRobot (20 ms periods) wired like
    examples/kitbot, runs under ``python -m robotpy --main benchmarks/latencybot/robot.py sim
    --nogui --simserver`` (port 5810: the machine-wide lock /tmp/simserver-5810.lock is held
    for the whole run) beside ``simserver run examples/kitbot/simserver.toml --enable teleop``
    (real time, an NT client of the robot program like a user runs it; the bridge exchanges
    each robot loop with simserver over its step port, see docs/bridge.md). Every
    ``--every`` periods (4: 80 ms) the robot code flips its drive command between ±0.5 after
    a random 0 to 10 ms delay inside ``robotPeriodic`` and measures, from the moment it set
    the motors (see the robot program's docstring):

    - NT arrival: the first encoder velocity sample with the new sign of change reaches the
      robot program's NT server (robot → bridge → NT → simserver tick → NT → robot);
    - robot code: the first ``robotPeriodic`` whose ``Encoder.getRate()`` shows it (the bridge
      writes sensors once per robot period, so this is quantized to 20 ms periods). In-process
      simulation (physics.py, WPILib's sim classes) shows it in the next period: the goal.

    From simserver's ``--json`` summary: robot periods whose answer came late, and the largest
    gap between the world's time and the robot program's clock over the run.

Reference
    In the same run and the same periods, the NT transport floor of the same path: the robot
    program publishes the switch number on ``/latencybot/ping``; ``benchmarks/_echo.py
    --connect``, a plain ntcore client of the robot program's server (as simserver is),
    republishes it at once on ``/latencybot/pong``. Same publisher options, no flush by hand
    on the robot side.

Also kept: simserver's resident memory (sampled every second; peak = VmHWM just before it is
stopped) for ``benchmarks/memory.py``.

Usage::

    python benchmarks/robot_latency.py [--switches 1000] [--every 4]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

import numpy as np

try:
    from benchmarks._common import memory_kib, robot_program_lock, text_table
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import memory_kib, robot_program_lock, text_table  # type: ignore

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BOT = HERE / "latencybot"
KITBOT_CONFIG = REPO / "examples" / "kitbot" / "simserver.toml"
ECHO = HERE / "_echo.py"
ROBOT_PORT = 5810
PERIOD = 0.02  # s, TimedRobot's default


def _free_port() -> int:
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port != ROBOT_PORT:
            return port


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class _Proc:
    """A subprocess in its own session, output to a log file; :meth:`stop` ends its group."""

    def __init__(self, name: str, argv: list[str], log_dir: Path, cwd: Path,
                 env: dict[str, str] | None = None):
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._log: IO[str] = self.log_path.open("w", encoding="utf-8")
        self.proc = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=cwd,
                                     env=dict(os.environ, PYTHONUNBUFFERED="1", **(env or {})),
                                     start_new_session=True)

    def output(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, grace: float = 10.0) -> int | None:
        """Signal the process group, wait ``grace`` s, then kill it. The exit code."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
            except ProcessLookupError:
                pass
        self._log.close()
        return self.proc.returncode


def _wait(what: str, predicate: Any, timeout: float, procs: list[_Proc]) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        for p in procs:
            if not p.alive():
                raise RuntimeError(f"{p.name} exited ({p.proc.returncode}) while waiting for "
                                   f"{what}:\n{p.output()[-2000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


def _read_records(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.endswith("}")]


def _stats(values_s: list[float | None]) -> dict[str, Any]:
    got = np.array([v for v in values_s if v is not None], dtype=float) * 1e3
    missing = sum(v is None for v in values_s)
    if got.size == 0:
        return {"p50": math.nan, "p90": math.nan, "p99": math.nan, "max": math.nan, "n": 0,
                "missing": missing}
    p50, p90, p99 = np.percentile(got, [50, 90, 99])
    return {"p50": float(p50), "p90": float(p90), "p99": float(p99), "max": float(got.max()),
            "n": int(got.size), "missing": missing}


def measure_robot_latency(switches: int = 1000, every: int = 4, warmup: int = 20,
                          jitter: float = 0.01) -> dict[str, Any]:
    """Run the latency robot, simserver and the echo; return the distributions (ms) and
    simserver's memory samples (KiB)."""
    if switches < 1 or every < 2 or warmup < 0:
        raise ValueError("need switches ≥ 1, every ≥ 2, warmup ≥ 0")
    expected_wall = (warmup + switches) * every * PERIOD
    wall0 = time.perf_counter()
    with robot_program_lock(), tempfile.TemporaryDirectory(prefix="simserver-rlat-") as tmp:
        work = Path(tmp)
        cfg = work / "simserver.toml"
        cfg.write_text(KITBOT_CONFIG.read_text() + f"\nport = {_free_port()}\n")
        log = work / "latencybot.jsonl"
        if _listening(ROBOT_PORT):
            raise RuntimeError("port 5810 is busy although the robot-program lock is ours: "
                               "someone runs a robot program without taking "
                               "/tmp/simserver-5810.lock")
        procs: list[_Proc] = []
        rss: list[tuple[float, int]] = []
        peak: dict[str, int] = {}
        robot_peak: dict[str, int] = {}
        try:
            robot = _Proc("robot", [sys.executable, "-m", "robotpy", "--main",
                                    str(BOT / "robot.py"), "sim", "--nogui", "--simserver"],
                          work, BOT, {"SIMSERVER_CONFIG": str(cfg), "LATENCYBOT_LOG": str(log),
                                      "LATENCYBOT_EVERY": str(every),
                                      "LATENCYBOT_WARMUP": str(warmup),
                                      "LATENCYBOT_SWITCHES": str(switches),
                                      "LATENCYBOT_JITTER": str(jitter)})
            procs.append(robot)
            _wait("the robot program to start",
                  lambda: "simserver bridge:" in robot.output() and _listening(ROBOT_PORT),
                  60, procs)
            summary = work / "simserver.json"
            sim = _Proc("simserver", [sys.executable, "-m", "simserver", "run", str(cfg),
                                      "--enable", "teleop", "-q", "--json", str(summary)],
                        work, REPO)
            procs.append(sim)
            echo = _Proc("echo", [sys.executable, str(ECHO), "--port", str(ROBOT_PORT),
                                  "--connect", "--in", "/latencybot/ping",
                                  "--out", "/latencybot/pong"], work, REPO)
            procs.append(echo)
            start = time.monotonic()
            deadline = start + 60 + 2 * expected_wall
            while not any(r.get("done") for r in _read_records(log)):
                for p in procs:
                    if not p.alive():
                        raise RuntimeError(f"{p.name} exited ({p.proc.returncode}):\n"
                                           f"{p.output()[-2000:]}")
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the robot program did not finish its switches; "
                                       f"{len(_read_records(log))} written")
                mem = memory_kib(sim.proc.pid)
                if mem:
                    rss.append((time.monotonic() - start, mem["rss"]))
                time.sleep(1.0)
            peak = memory_kib(sim.proc.pid)
            robot_peak = memory_kib(robot.proc.pid)
        finally:
            codes = {p.name: p.stop(signal.SIGINT if p.name == "simserver" else signal.SIGTERM)
                     for p in reversed(procs)}
            deadline = time.monotonic() + 10
            while _listening(ROBOT_PORT) and time.monotonic() < deadline:
                time.sleep(0.05)
        records = [r for r in _read_records(log) if "k" in r and not r["warmup"]]
        try:
            sim_summary = json.loads(summary.read_text(encoding="utf-8"))["summary"]
        except (OSError, ValueError, KeyError):
            sim_summary = {}
        shutil.rmtree(BOT / "__pycache__", ignore_errors=True)
    periods = [r["seen_periods"] for r in records if r["seen_periods"] is not None]
    hist = {int(n): periods.count(n) for n in sorted(set(periods))}
    return {
        "switches": len(records),
        "every": every,
        "warmup": warmup,
        "jitter": jitter,
        "arrive": _stats([r["arrive"] for r in records]),
        "seen": _stats([r["seen"] for r in records]),
        "echo": _stats([r["echo"] for r in records]),
        "seen_periods": hist,
        "simserver_rss": rss,
        "simserver_peak_kib": peak.get("hwm", 0),
        "simserver_final_kib": peak.get("rss", 0),
        "robot_peak_kib": robot_peak.get("hwm", 0),
        "late_periods": sim_summary.get("late_periods"),
        "clock_gap_ms": (sim_summary["clock_gap"] * 1e3
                         if sim_summary.get("clock_gap") is not None else math.nan),
        "sim_seconds": sim_summary.get("sim_time", math.nan),
        "exit_codes": codes,
        "wall_seconds": time.perf_counter() - wall0,
    }


# --- output ----------------------------------------------------------------------------------

HEAD = ["path (ms after robot code set the motors)", "p50", "p90", "p99", "max", "missing"]


def _ms(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.2f}"


def _rows(res: dict[str, Any]) -> list[list[str]]:
    rows = []
    for label, key in (("encoder change reaches the robot's NT server", "arrive"),
                       ("robot code sees it (Encoder.getRate)", "seen"),
                       ("reference: NT echo by a plain client", "echo")):
        f = res[key]
        rows.append([label, _ms(f["p50"]), _ms(f["p90"]), _ms(f["p99"]), _ms(f["max"]),
                     f"{f['missing']} / {res['switches']}"])
    return rows


def _notes(res: dict[str, Any]) -> list[str]:
    hist = res["seen_periods"]
    total = sum(hist.values()) or 1
    spread = ", ".join(f"{n} period{'s' if n != 1 else ''}: {c / total:.1%}"
                       for n, c in hist.items())
    a, e = res["arrive"], res["echo"]
    return [
        f"{res['switches']} switches of ±0.5 duty, one every {res['every']} robot periods "
        f"(20 ms) + U(0, {res['jitter'] * 1e3:g} ms); {res['warmup']} warm-up switches "
        "discarded; percentiles with numpy's linear interpolation.",
        f"Robot periods after the switching one until robot code sees the change: {spread} "
        f"(goal: 1 period in ≥ 99 %, as with in-process simulation). The bridge sends each "
        "loop's outputs from the HAL's SimPeriodicAfter callback, right after robotPeriodic, "
        "and writes simserver's answer (the world one period later) before the next loop.",
        f"simserver ran {res['sim_seconds']:.1f} s of robot time; robot periods answered late "
        f"(after half a period): {res['late_periods']}; largest gap between world time and "
        f"the robot program's clock: {res['clock_gap_ms']:.2f} ms (goal: within one period, "
        "20 ms).",
        f"NT arrival − echo, medians: {a['p50'] - e['p50']:.2f} ms: simserver publishes the "
        "sensors on NT (for dashboards) right after answering the bridge, so they reach the "
        "robot's NT server sooner than a plain client's echo.",
    ]


def format_table(res: dict[str, Any]) -> str:
    """Plain-text table."""
    return "\n".join(["Latency with a real robot program (examples/kitbot wiring, real time)",
                      *text_table(HEAD, _rows(res)), "", *_notes(res)])


def format_markdown(res: dict[str, Any]) -> str:
    """Markdown section."""
    lines = ["### Latency: robot code → simserver → robot code, `robotpy sim --simserver` + "
             "`simserver run --enable teleop` (kitbot config, real time)", "",
             "| " + " | ".join(HEAD) + " |", "|---|" + "---:|" * (len(HEAD) - 1)]
    lines += ["| " + " | ".join(r) + " |" for r in _rows(res)]
    lines += ["", *[f"- {n}" for n in _notes(res)]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--switches", type=int, default=1000)
    ap.add_argument("--every", type=int, default=4, help="robot periods between switches")
    ap.add_argument("--warmup", type=int, default=20)
    args = ap.parse_args(argv)
    print(format_table(measure_robot_latency(args.switches, args.every, args.warmup)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
