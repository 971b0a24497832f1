"""Latency over NetworkTables: motor set → encoder change seen by an NT client.

What is measured
    ``python -m simserver run --serve 127.0.0.1:PORT`` (the bundled kitbot, real time, a free
    port, never 5810) runs as a subprocess. This process is a plain ntcore client: it publishes
    ``/simserver/motors/left`` and ``/right`` (``PubSubOptions(periodic=0.001)``) and subscribes
    to ``/simserver/encoders/left/velocity`` (``periodic=0.001, sendAll=True``). Both duties
    alternate between +0.5 and −0.5 every 100 ms of wall time (``--period``), each switch
    delayed by a random 0 to 10 ms (one tick, ``--jitter``) after its 100 ms slot: 100 ms is a
    whole number of simserver ticks and both sides sleep to absolute deadlines, so without the
    jitter every switch would land at the same phase of simserver's tick and the figures
    would depend on that arbitrary phase (measured: p50 3.4 ms in one run, 5.2 ms in another,
    with p90 within 0.4 ms of p50). For each switch:
    the subscriber's queue is drained (its last value is kept), t0 = ``time.perf_counter()``
    is stamped just before ``set()`` on both publishers and ``flush()``, then the queue is
    polled in a tight loop (sleeping ``--poll``, 0.2 ms) until a received sample differs from
    the previously received one with the sign of the new command. Before a switch the wheel
    speed is still moving toward the old command (it never reaches steady state within
    100 ms), and simserver's encoder velocity is the wheel speed itself (no filter), so the
    sign of Δv flips exactly at the first tick that used the new input. Latency = the
    ``perf_counter()`` at which the poll returned that sample − t0. A switch with no such
    sample within ``--timeout`` (200 ms) counts as timed out and is left out of the
    percentiles. The first ``--warmup`` switches (20) are discarded: they include simserver
    seeing the "robot" connect (world reset, motors zeroed) and the speed settling into its
    steady ±1 m/s oscillation.

Reference
    The NT transport floor, measured in the same run: ``benchmarks/_echo.py``, a separate
    Python process, serves NT4 on another free port, subscribes to ``/echo/in`` (sendAll,
    periodic 0.001) and republishes each received value at once on ``/echo/out`` with
    ``flush()``. The client, a second ntcore instance in this process, subscribes to
    ``/echo/out`` the same way and measures set → echo round trip the same way: drain, stamp
    t0, ``set(k)`` + ``flush()``, poll until ``k`` comes back. One echo round trip is measured
    in every 100 ms period, right after simserver's answer to that period's switch (or its
    timeout), so slow drifts of a noisy machine hit both alike. The echo's path is simserver's
    (client → server's subscriber queue → server's publisher → client) without the tick, the
    physics or simserver's other outputs (about 20 topics flushed every tick).

Context
    simserver reads its inputs once per tick (``sim.tick``, 10 ms for the kitbot): a command
    waits 0 to 1 tick for the next input poll, then the tick's step and publish run, so its
    latency sits above the echo's by up to a tick plus the compute time of one tick.

Usage::

    python benchmarks/latency.py [--switches 1000] [--warmup 20] [--jitter S] [--output FILE]

``--output FILE`` appends the table in Markdown, with a line describing the machine.
``measure_latency()`` returns the figures as a dict for ``benchmarks/run_all.py``.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import ntcore
import numpy as np

from simserver.config.loader import load_default
from simserver.contract import topics

try:
    from benchmarks._common import emit, machine_info, machine_line, text_table
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import emit, machine_info, machine_line, text_table  # type: ignore

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
ECHO_SCRIPT = HERE / "_echo.py"
ECHO_IN, ECHO_OUT = "/echo/in", "/echo/out"
ROBOT_PORT = 5810  # robot programs' NT server: never used here
FAST = ntcore.PubSubOptions(periodic=0.001)
SEND_ALL = ntcore.PubSubOptions(periodic=0.001, sendAll=True, pollStorage=64)
STARTUP_TIMEOUT = 30.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (never 5810)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port != ROBOT_PORT:
            return port


# --- subprocesses ------------------------------------------------------------------------------


def _parent_death_signal() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking Linux to SIGTERM the child when this process dies (even by
    SIGKILL, when no ``finally`` runs). None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)  # loaded here, not in the forked child
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def preexec() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGTERM))

    return preexec


class Child:
    """A subprocess with stdout+stderr in a temporary file; :meth:`stop` always ends it."""

    def __init__(self, name: str, argv: Sequence[str], log_dir: str):
        self.name = name
        self.log_path = Path(log_dir) / f"{name}.log"
        self._log: IO[str] = self.log_path.open("w", encoding="utf-8")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(list(argv), stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=REPO, env=env,
                                     preexec_fn=_parent_death_signal())
        self.returncode: int | None = None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def stop(self, sig: int = signal.SIGINT, grace: float = 10.0) -> int:
        """Send ``sig`` (a clean stop), wait up to ``grace`` s, then kill. Returns the exit
        code (negative: killed by that signal)."""
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(sig)
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            except ProcessLookupError:
                pass
        self.returncode = self.proc.returncode
        self._log.close()
        return int(self.returncode)


def _wait(predicate: Callable[[], Any], timeout: float, what: str,
          children: Sequence[Child]) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        for child in children:
            if not child.alive():
                raise RuntimeError(f"{child.name} exited ({child.proc.returncode}) while waiting "
                                   f"for {what}:\n{child.output()[-2000:]}")
        time.sleep(0.01)
    raise RuntimeError(f"timed out after {timeout:g} s waiting for {what}")


def _client(port: int, name: str) -> ntcore.NetworkTableInstance:
    inst = ntcore.NetworkTableInstance.create()
    inst.startClient4(name)
    inst.setServer("127.0.0.1", port)
    return inst


# --- the measurement ----------------------------------------------------------------------------


class Poller:
    """Polls a sendAll subscriber's queue; counts polls and samples for the context lines."""

    def __init__(self, sub: ntcore.DoubleSubscriber, poll: float):
        self.read = sub.readQueue
        self.poll = poll
        self.last = sub.get()
        self.polls = 0
        self.poll_time = 0.0
        self.samples = 0

    def drain(self) -> None:
        for s in self.read():
            self.last = s.value
            self.samples += 1

    def wait(self, t0: float, timeout: float,
             accept: Callable[[float, float], bool]) -> float | None:
        """Poll until a sample satisfies ``accept(previous, value)``; its arrival − ``t0`` in
        s, or None after ``timeout`` s. Every sample read updates ``last``."""
        read, sleep, clock, poll = self.read, time.sleep, time.perf_counter, self.poll
        found: float | None = None
        start = clock()
        while True:
            samples = read()
            now = clock()
            self.polls += 1
            for s in samples:
                v = s.value
                if found is None and accept(self.last, v):
                    found = now - t0
                self.last = v
            self.samples += len(samples)
            if found is not None or now - t0 > timeout:
                break
            sleep(poll)
        self.poll_time += clock() - start
        return found

    @property
    def mean_poll(self) -> float:
        return self.poll_time / self.polls if self.polls else math.nan


def _stats(lat_s: list[float], timeouts: int, total: int) -> dict[str, Any]:
    ms = np.asarray(lat_s) * 1e3
    if ms.size == 0:
        pct = {k: math.nan for k in ("p50", "p90", "p99", "max", "min", "mean")}
    else:
        p50, p90, p99 = np.percentile(ms, [50, 90, 99])
        pct = {"p50": float(p50), "p90": float(p90), "p99": float(p99),
               "max": float(ms.max()), "min": float(ms.min()), "mean": float(ms.mean())}
    return {**pct, "n": int(ms.size), "timeouts": timeouts, "switches": total,
            "latencies_ms": [float(x) for x in ms]}


def _notable(output: str) -> list[str]:
    """simserver's stderr lines worth reporting (it runs with -q: warnings and errors)."""
    skip = ("simserver: stopped; results so far follow.",)
    return [line for line in output.splitlines() if line.strip() and line.strip() not in skip]


def measure_latency(switches: int = 1000, warmup: int = 20, period: float = 0.1,
                    timeout: float = 0.2, duty: float = 0.5, poll: float = 0.0002,
                    jitter: float | None = None, seed: int = 0,
                    config: str | None = None) -> dict[str, Any]:
    """Run simserver and the echo reference; return both latency distributions (ms).

    switches: measured motor switches (after ``warmup`` discarded ones). period: wall seconds
    between switches. timeout: seconds after which a switch counts as timed out. duty: the
    ±duty cycle alternated. poll: sleep between queue polls, s. jitter: each switch is
    delayed by a uniform random 0..jitter s after its slot (default: one simserver tick) so
    switches sample every phase of simserver's tick; seed: for that jitter. config: a robot
    config file
    for simserver (default: the bundled kitbot; it must have motors left/right and an
    encoder left on the left side).
    """
    if switches < 1 or warmup < 0 or period <= 0 or timeout <= 0 or not 0 < duty <= 1:
        raise ValueError("need switches ≥ 1, warmup ≥ 0, period > 0, timeout > 0, 0 < duty ≤ 1")
    from simserver.config.loader import load

    cfg = load(config) if config else load_default()
    tick = max(1, round(cfg.sim.tick / cfg.sim.substep)) * cfg.sim.substep
    jitter = tick if jitter is None else jitter
    if not 0 <= jitter < period:
        raise ValueError("need 0 ≤ jitter < period")
    sim_port = free_port()
    echo_port = free_port()
    while echo_port == sim_port:
        echo_port = free_port()
    children: list[Child] = []
    instances: list[ntcore.NetworkTableInstance] = []
    gc_was_enabled = gc.isenabled()
    wall0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="simserver-latency-") as tmp:
        try:
            # Subprocesses first, while this process has no ntcore threads (preexec_fn).
            sim = Child("simserver", [sys.executable, "-m", "simserver", "run",
                                      *([config] if config else []),
                                      "--serve", f"127.0.0.1:{sim_port}", "-q"], tmp)
            children.append(sim)
            echo = Child("echo", [sys.executable, str(ECHO_SCRIPT), "--port", str(echo_port),
                                  "--in", ECHO_IN, "--out", ECHO_OUT, "--poll", str(poll)], tmp)
            children.append(echo)

            sim_nt = _client(sim_port, "latency-bench")
            instances.append(sim_nt)
            echo_nt = _client(echo_port, "latency-bench-echo")
            instances.append(echo_nt)
            heartbeat = sim_nt.getIntegerTopic(topics.HEARTBEAT).subscribe(-1, FAST)
            vel_sub = sim_nt.getDoubleTopic(topics.encoder_velocity("left")).subscribe(
                math.nan, SEND_ALL)
            left = sim_nt.getDoubleTopic(topics.motor("left")).publish(FAST)
            right = sim_nt.getDoubleTopic(topics.motor("right")).publish(FAST)
            echo_sub = echo_nt.getDoubleTopic(ECHO_OUT).subscribe(math.nan, SEND_ALL)
            echo_pub = echo_nt.getDoubleTopic(ECHO_IN).publish(FAST)

            _wait(sim_nt.isConnected, STARTUP_TIMEOUT, "simserver's NT server", children)
            _wait(echo_nt.isConnected, STARTUP_TIMEOUT, "the echo's NT server", children)
            _wait(lambda: heartbeat.get() > 0, STARTUP_TIMEOUT, "simserver's heartbeat",
                  children)
            _wait(lambda: not math.isnan(vel_sub.get()), STARTUP_TIMEOUT,
                  "the first encoder velocity", children)

            vel = Poller(vel_sub, poll)
            ech = Poller(echo_sub, poll)
            sim_lat: list[float] = []
            echo_lat: list[float] = []
            sim_timeouts = echo_timeouts = late = 0
            flush_sim, flush_echo = sim_nt.flush, echo_nt.flush
            clock = time.perf_counter
            rng = random.Random(seed)
            gc.collect()
            gc.disable()
            measure_start = clock()
            base = clock()
            for k in range(warmup + switches):
                counted = k >= warmup
                if k:
                    base += period
                    delay = base + rng.uniform(0.0, jitter) - clock()
                    if delay > 0:
                        time.sleep(delay)
                    else:  # a timeout ran past this slot: restart the schedule from now
                        late += counted
                        base = clock()
                if counted and k == warmup:
                    vel.samples, vel.polls, vel.poll_time = 0, 0, 0.0
                    measure_start = clock()
                cmd = duty if k % 2 == 0 else -duty

                # simserver: motor set -> first encoder sample whose Δv has the new sign.
                vel.drain()
                t0 = clock()
                left.set(cmd)
                right.set(cmd)
                flush_sim()
                got = vel.wait(t0, timeout, lambda prev, v, c=cmd: (v - prev) * c > 0)
                if got is None:
                    if not sim.alive():
                        raise RuntimeError(f"simserver exited ({sim.proc.returncode}):\n"
                                           f"{sim.output()[-2000:]}")
                    sim_timeouts += counted
                elif counted:
                    sim_lat.append(got)

                # Reference: set -> the echo of the same value.
                ech.drain()
                token = float(k + 1)
                t0 = clock()
                echo_pub.set(token)
                flush_echo()
                got = ech.wait(t0, timeout, lambda prev, v, t=token: v == t)
                if got is None:
                    if not echo.alive():
                        raise RuntimeError(f"the echo exited ({echo.proc.returncode}):\n"
                                           f"{echo.output()[-2000:]}")
                    echo_timeouts += counted
                elif counted:
                    echo_lat.append(got)
            measured_wall = clock() - measure_start
        finally:
            if gc_was_enabled:
                gc.enable()
            for inst in instances:
                ntcore.NetworkTableInstance.destroy(inst)
            codes = {c.name: c.stop(signal.SIGINT if c.name == "simserver" else signal.SIGTERM)
                     for c in children}
            sim_output = children[0].output() if children else ""
    sim_stats = _stats(sim_lat, sim_timeouts, switches)
    echo_stats = _stats(echo_lat, echo_timeouts, switches)
    sim_stats["samples_per_s"] = vel.samples / measured_wall if measured_wall > 0 else math.nan
    sim_stats["mean_poll_ms"] = vel.mean_poll * 1e3
    echo_stats["mean_poll_ms"] = ech.mean_poll * 1e3

    def ratio(key: str) -> float:
        e = echo_stats[key]
        return sim_stats[key] / e if e and not math.isnan(e) else math.nan

    return {
        "benchmark": "latency",
        "switches": switches,
        "warmup": warmup,
        "period": period,
        "jitter": jitter,
        "timeout": timeout,
        "duty": duty,
        "poll": poll,
        "tick": tick,
        "config": config or "kitbot",
        "simserver": sim_stats,
        "echo": echo_stats,
        "ratio": {"p50": ratio("p50"), "p99": ratio("p99")},
        "late_switches": late,
        "exit_codes": codes,
        "simserver_messages": _notable(sim_output),
        "wall_seconds": time.perf_counter() - wall0,
        "machine": machine_info(),
    }


# --- output -----------------------------------------------------------------------------------


def _title(res: dict[str, Any]) -> str:
    return (f"Latency: motor set → encoder change seen by an NT client, simserver --serve in "
            f"real time ({res['config']}, tick {res['tick'] * 1e3:g} ms); "
            f"{res['switches']} switches of ±{res['duty']:g} duty every "
            f"{res['period'] * 1e3:g} ms + U(0, {res['jitter'] * 1e3:g} ms) "
            f"({res['warmup']} warm-up switches discarded), "
            f"timeout {res['timeout'] * 1e3:g} ms")


_HEAD = ["path (ms)", "p50", "p90", "p99", "max", "timed out"]


def _ms(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.2f}"


def _rows(res: dict[str, Any]) -> list[list[str]]:
    rows = []
    for label, key in (("simserver: motor set → encoder Δv", "simserver"),
                       ("NT echo (transport floor): set → echo", "echo")):
        f = res[key]
        rows.append([label, _ms(f["p50"]), _ms(f["p90"]), _ms(f["p99"]), _ms(f["max"]),
                     f"{f['timeouts']} / {f['switches']}"])
    r = res["ratio"]
    ratio = [("n/a" if math.isnan(r[k]) else f"{r[k]:.2f}×") for k in ("p50", "p99")]
    rows.append(["ratio simserver / echo", ratio[0], "", ratio[1], "", ""])
    return rows


def _context_lines(res: dict[str, Any]) -> list[str]:
    tick_ms = res["tick"] * 1e3
    sim, echo = res["simserver"], res["echo"]
    lines = [
        f"simserver samples its inputs once per tick ({tick_ms:g} ms): a command waits 0 to "
        f"{tick_ms:g} ms for the next input poll, so simserver's latency is bounded below by "
        f"the transport plus up to one tick (plus one tick's compute).",
        f"Difference of medians simserver − echo: {sim['p50'] - echo['p50']:.2f} ms "
        f"(half a tick is {tick_ms / 2:g} ms).",
        f"Encoder velocity samples received: {sim['samples_per_s']:.1f}/s "
        f"(one per tick would be {1 / res['tick']:.0f}/s). Client poll interval: "
        f"{sim['mean_poll_ms']:.2f} ms mean (sleep {res['poll'] * 1e3:g} ms + read); "
        f"t0 is stamped just before set(), arrival when the poll returned the sample.",
        "Percentiles over the switches that did not time out (numpy linear interpolation).",
    ]
    if res["late_switches"]:
        lines.append(f"{res['late_switches']} switches started late (a timeout ran past the "
                     f"next {res['period'] * 1e3:g} ms slot).")
    codes = res["exit_codes"]
    if codes.get("simserver", 0) != 0:
        lines.append(f"simserver exit code after SIGINT: {codes['simserver']}")
    if res["simserver_messages"]:
        lines.append("simserver said: " + " | ".join(res["simserver_messages"][:5]))
    return lines


def format_table(res: dict[str, Any]) -> str:
    """The plain-text table printed to stdout."""
    lines = [_title(res), f"Machine: {machine_line(res['machine'])}", "",
             *text_table(_HEAD, _rows(res))]
    lines += ["", *_context_lines(res)]
    return "\n".join(lines)


def format_markdown(res: dict[str, Any]) -> str:
    """The table as a Markdown section, with the machine described."""
    lines = [f"### {_title(res)}", "", f"Machine: {machine_line(res['machine'])}", "",
             "| " + " | ".join(_HEAD) + " |", "|" + "---|" + "---:|" * (len(_HEAD) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in _rows(res)]
    lines += [""]
    lines += [f"- {line}" for line in _context_lines(res)]
    return "\n".join(lines) + "\n"


def _raise_on_sigterm() -> None:
    """SIGTERM ends the run through ``finally`` blocks (subprocesses stopped), like Ctrl-C."""
    def handler(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--switches", type=int, default=1000,
                    help="measured motor switches (default 1000)")
    ap.add_argument("--warmup", type=int, default=20, help="discarded first switches (default 20)")
    ap.add_argument("--period", type=float, default=0.1,
                    help="wall seconds between switches (default 0.1)")
    ap.add_argument("--timeout", type=float, default=0.2,
                    help="a switch with no answer after this many s times out (default 0.2)")
    ap.add_argument("--poll", type=float, default=0.0002,
                    help="sleep between queue polls, s (default 0.0002)")
    ap.add_argument("--jitter", type=float, default=None,
                    help="delay each switch by U(0, JITTER) s after its slot, so switches "
                         "sample every phase of the tick (default: one tick; 0: strict period)")
    ap.add_argument("--config", help="robot config for simserver (default: the kitbot)")
    ap.add_argument("--output", type=Path, help="append the table in Markdown to this file")
    args = ap.parse_args(argv)
    if args.switches < 1 or args.warmup < 0 or args.period <= 0 or args.timeout <= 0:
        ap.error("need --switches ≥ 1, --warmup ≥ 0, --period > 0 and --timeout > 0")
    _raise_on_sigterm()
    res = measure_latency(args.switches, args.warmup, args.period, args.timeout,
                          poll=args.poll, jitter=args.jitter, config=args.config)
    emit(format_table(res), format_markdown(res), args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
