"""Heartbeat: what the container health check's heartbeat costs a tick.

What is measured
    ``Heartbeat.beat()`` as a Session calls it once per tick (simserver/runs/health.py):
    without ``SIMSERVER_HEARTBEAT`` (never writes) and with it between two writes (the file is
    written once per second of wall time, i.e. once every 100 ticks of 10 ms in real time).
    Also one write of the file (``os.replace`` of a short line), which happens once a second.

Reference
    A bare ``time.monotonic()`` call and a compare, measured in the same run, and one tick of
    the bundled kitbot world (``World.step`` of 10 ms), the work each beat rides on.

Usage::

    python benchmarks/heartbeat.py
"""

from __future__ import annotations

import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

from simserver.config.loader import load_default
from simserver.runs.health import Heartbeat
from simserver.world import World

CALLS = 1_000_000
TICKS = 2_000
WRITES = 2_000


def _per_call(stmt: Any, number: int) -> float:
    """Best of 5 repeats, ns per call."""
    return min(timeit.repeat(stmt, number=number, repeat=5)) / number * 1e9


def measure_heartbeat() -> dict[str, float]:
    """ns per call of each variant and of the references."""
    off = Heartbeat(None, lambda: "")
    with tempfile.TemporaryDirectory(prefix="simserver-hb-") as tmp:
        on = Heartbeat(Path(tmp) / "hb", lambda: "tick 1, simulated 0.01 s", period=3600.0)
        on.beat()  # written once; every further call is between two writes
        writer = Heartbeat(Path(tmp) / "hb2", lambda: "tick 1, simulated 0.01 s", period=0.0)
        due = time.monotonic() + 3600.0
        figures = {
            "monotonic_compare": _per_call(lambda: time.monotonic() < due, CALLS),
            "beat_off": _per_call(off.beat, CALLS),
            "beat_between_writes": _per_call(on.beat, CALLS),
            "write": _per_call(writer.beat, WRITES),
        }
    world = World(load_default())
    figures["tick"] = _per_call(lambda: world.step(0.01), TICKS)
    return figures


def format_table(res: dict[str, float]) -> str:
    tick = res["tick"]
    rows = [("time.monotonic() and a compare (reference)", res["monotonic_compare"]),
            ("beat(), no SIMSERVER_HEARTBEAT", res["beat_off"]),
            ("beat(), between two writes", res["beat_between_writes"]),
            ("kitbot World.step(10 ms) (reference)", tick)]
    lines = ["Heartbeat cost per call (best of 5)"]
    lines += [f"  {name:<46}{ns:>8.0f} ns  {ns / tick * 100:6.2f} % of a kitbot step"
              for name, ns in rows]
    lines.append(f"  {'one write of the file, once a second':<46}{res['write'] / 1e3:>8.0f} µs  "
                 f"{res['write'] / 1e9 * 100:6.3f} % of that second")
    return "\n".join(lines) + "\n"


def format_markdown(res: dict[str, float]) -> str:
    return "```\n" + format_table(res) + "```\n"


def main() -> int:
    print(format_table(measure_heartbeat()), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
