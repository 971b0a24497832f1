"""How long a robot program's motors keep driving after it is gone or frozen.

- **Disconnect to zero**: clients, each a real process (``benchmarks/_ntpeer.py``) publishing
  both drive motors every 2 ms with ``keepDuplicates``, connect to simserver and are SIGKILLed
  mid-stream, one after the other. Measured from the ``kill()`` call to the first tick whose
  motors are all 0 (the time is taken after that tick's step). With ``--serve`` the clients
  connect to simserver; in client mode each one is the NT server (as a robot program is) and
  simserver reconnects to the next one (about 1 s each, so fewer of them).
- **Frozen client to zero**: clients publishing every 20 ms (a robot loop) with
  ``keepDuplicates`` are SIGSTOPped (then killed); measured from the ``kill()`` call to the first
  tick with every motor at 0: the stale-input watchdog (``sim.input_timeout``, 100 ms, counted
  from the last value received, which left up to a loop before the signal) plus up to a tick.

simserver is a real-time Session (bundled kitbot, tick 10 ms) on a thread of this process, on
a real ntcore server or client on loopback, so every tick's motors are seen exactly.

Usage::

    python benchmarks/disconnect.py [--kills N] [--freezes N]
"""

from __future__ import annotations

import argparse
import signal
import statistics
import time
from typing import Any

try:
    from benchmarks._livesession import LiveSession, wait_for
    from benchmarks._ntpeer import Peers, motors
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _livesession import LiveSession, wait_for  # type: ignore
    from _ntpeer import Peers, motors  # type: ignore

LEFT = "disconnected: motors to 0"
STREAM = 0.05  # s a client publishes once its values are applied, before it is signalled
STREAM_PERIOD = 0.002  # s between a killed client's sets
LOOP_PERIOD = 0.02  # s between a frozen client's sets
CLIENT_MODE_SHARE = 4  # client mode: a quarter as many kills (each costs a reconnect)


def _to_zero(live: LiveSession, peers: Peers, role: str, sig: int, period: float) -> float:
    """One client: connect, drive, get ``sig``; seconds from the signal to motors at 0. The
    client is killed and its departure seen before returning."""
    left = live.count(LEFT)
    pid = peers.start(role, live.port, *motors(0.5, wobble=sig == signal.SIGKILL),
                      period=period)
    wait_for(lambda: live.ticks and any(live.ticks[-1].motors.values()), 10,
             "the client's motors to be applied")
    time.sleep(STREAM if sig == signal.SIGKILL else 0.3)
    seen = len(live.ticks)
    sent = time.monotonic()
    peers.signal(pid, sig)
    zero = wait_for(lambda: next((t.wall for t in live.ticks[seen:]
                                  if t.wall > sent and not any(t.motors.values())), None),
                    10, "the motors to go to 0")
    if sig != signal.SIGKILL:
        peers.signal(pid, signal.SIGKILL)
    wait_for(lambda: live.count(LEFT) > left, 10, "simserver to see the client leave")
    return float(zero - sent)


def _series(mode: str, role: str, count: int, sig: int, period: float) -> list[float]:
    live = LiveSession(mode)
    peers = Peers()
    try:
        return [_to_zero(live, peers, role, sig, period) for _ in range(count)]
    finally:
        peers.close()
        live.close()


def _stats(times: list[float]) -> dict[str, float]:
    ms = sorted(t * 1e3 for t in times)
    return {"n": len(ms), "median": statistics.median(ms), "worst": ms[-1],
            "best": ms[0], "p90": ms[min(len(ms) - 1, int(0.9 * len(ms)))]}


def measure_disconnects(kills: int, freezes: int) -> dict[str, Any]:
    """Every series: (what, simserver's mode) -> stats in ms."""
    rows = {
        ("SIGKILL to motors at 0", "--serve"):
            _series("server", "client", kills, signal.SIGKILL, STREAM_PERIOD),
        ("SIGKILL to motors at 0", "client mode"):
            _series("client", "server", max(1, kills // CLIENT_MODE_SHARE), signal.SIGKILL,
                    STREAM_PERIOD),
        ("SIGSTOP to motors at 0", "--serve"):
            _series("server", "client", freezes, signal.SIGSTOP, LOOP_PERIOD),
        ("SIGSTOP to motors at 0", "client mode"):
            _series("client", "server", freezes, signal.SIGSTOP, LOOP_PERIOD),
    }
    return {"rows": {key: _stats(times) for key, times in rows.items()}}


def format_table(result: dict[str, Any]) -> str:
    lines = [f"{'what':<24} {'simserver':<12} {'n':>4} {'median ms':>10} {'p90 ms':>8} "
             f"{'worst ms':>9} {'best ms':>8}"]
    for (what, mode), s in result["rows"].items():
        lines.append(f"{what:<24} {mode:<12} {s['n']:>4} {s['median']:>10.1f} "
                     f"{s['p90']:>8.1f} {s['worst']:>9.1f} {s['best']:>8.1f}")
    return "\n".join(lines)


def format_markdown(result: dict[str, Any]) -> str:
    lines = [
        "Time from signalling a client that drives both motors at 0.5 to the first tick whose "
        "motors are all 0 (benchmarks/disconnect.py): SIGKILL while it publishes every 2 ms "
        "(simserver must see it leave, and apply nothing it sent after that); SIGSTOP while it "
        "re-sends every 20 ms, as the bridge does (the stale-input watchdog, "
        "`sim.input_timeout` = 100 ms, counts from the last value received, up to a loop "
        "before the signal). Real time, tick 10 ms, loopback; simserver runs on a "
        "thread of the benchmark, so ticks are seen exactly.",
        "",
        "| what | simserver | clients | median ms | p90 ms | worst ms | best ms |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for (what, mode), s in result["rows"].items():
        lines.append(f"| {what} | {mode} | {s['n']} | {s['median']:.1f} | {s['p90']:.1f} | "
                     f"{s['worst']:.1f} | {s['best']:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--kills", type=int, default=120, help="SIGKILLed clients with --serve")
    ap.add_argument("--freezes", type=int, default=20, help="SIGSTOPped clients per mode")
    args = ap.parse_args(argv)
    print(format_table(measure_disconnects(args.kills, args.freezes)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
