"""Memory: the resident set of the server (``simserver run``) over a run with the reference
robot, next to bare Python processes measured in the same run.

What is measured
    The ``simserver run examples/kitbot/simserver.toml --enable teleop`` process of
    ``benchmarks/robot_latency.py`` (real time, an NT client of the kitbot-wired latency
    robot program, recording its trace as ``simserver run`` always does): its RSS sampled
    every second, and its peak (VmHWM of /proc/<pid>/status) just before it is stopped.
    Growth is the last sample minus the sample 10 s in (after start-up and connection).

Reference
    ``python -c "import simserver.runs.session"`` (everything a run imports, nothing started)
    and ``python -c "pass"`` (the interpreter alone), each a fresh process reporting its own
    peak RSS; and the robot program's own peak (robotpy sim with the bridge).

Usage: run by ``benchmarks/run_all.py`` (the run is the robot latency benchmark's)::

    python benchmarks/memory.py        # the references only
"""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Any

try:
    from benchmarks._common import text_table
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import text_table  # type: ignore

STATUS = ("import sys\nfor line in open('/proc/self/status'):\n"
          "    if line.startswith(('VmHWM', 'VmRSS')):\n        print(line.strip())\n")
SETTLE = 10.0  # s: growth is measured from the sample this long after simserver started


def process_kib(code: str) -> dict[str, int]:
    """Peak and final RSS (KiB) of a fresh ``python -c`` running ``code`` then reporting."""
    out = subprocess.run([sys.executable, "-c", f"{code}\n{STATUS}"], capture_output=True,
                         text=True, check=True, timeout=120).stdout
    values = {}
    for line in out.splitlines():
        key, _, rest = line.partition(":")
        values["hwm" if key == "VmHWM" else "rss"] = int(rest.split()[0])
    return values


def measure_references() -> dict[str, dict[str, int]]:
    """Peak RSS of the reference processes, KiB."""
    return {"import": process_kib("import simserver.runs.session"), "bare": process_kib("pass")}


def summarize_run(run: dict[str, Any], refs: dict[str, dict[str, int]]) -> dict[str, Any]:
    """Figures of the server over the robot latency run (``robot_latency`` results)."""
    samples: list[tuple[float, int]] = run["simserver_rss"]
    settled = [s for s in samples if s[0] >= SETTLE]
    span = settled[-1][0] - settled[0][0] if len(settled) > 1 else 0.0
    growth = settled[-1][1] - settled[0][1] if span > 0 else 0
    return {
        "duration": samples[-1][0] if samples else 0.0,
        "peak_kib": run["simserver_peak_kib"],
        "final_kib": run["simserver_final_kib"],
        "robot_peak_kib": run["robot_peak_kib"],
        "growth_kib": growth,
        "growth_kib_per_min": growth / span * 60.0 if span >= SETTLE else float("nan"),
        "span": span,
        "refs": refs,
    }


def _mib(kib: float) -> str:
    return f"{kib / 1024:.1f}"


def _rows(res: dict[str, Any]) -> list[list[str]]:
    refs = res["refs"]
    growth = "n/a (run too short)" if math.isnan(res["growth_kib_per_min"]) else (
        f"{_mib(res['growth_kib'])} MiB over the last {res['span']:.0f} s "
        f"({res['growth_kib_per_min']:.0f} KiB/min)")
    return [
        [f"simserver run, kitbot, beside a robot program ({res['duration']:.0f} s real time)",
         _mib(res["peak_kib"]), _mib(res["final_kib"]), growth],
        ['reference: python -c "import simserver.runs.session"', _mib(refs["import"]["hwm"]),
         _mib(refs["import"]["rss"]), "imports only"],
        ['reference: python -c "pass"', _mib(refs["bare"]["hwm"]), _mib(refs["bare"]["rss"]),
         "the interpreter"],
        ["the robot program (robotpy sim --simserver)", _mib(res["robot_peak_kib"]), "", ""],
    ]


HEAD = ["process", "peak RSS MiB", "RSS at end MiB", "growth"]


def _notes(res: dict[str, Any]) -> list[str]:
    over = res["peak_kib"] - res["refs"]["import"]["hwm"]
    return [f"simserver's peak is {_mib(over)} MiB above its imports alone. "
            "Long runs: `make soak` reports memory growth per minute over an hour."]


def format_table(res: dict[str, Any]) -> str:
    """Plain-text table."""
    return "\n".join(["Memory (resident set size)", *text_table(HEAD, _rows(res)), "",
                      *_notes(res)])


def format_markdown(res: dict[str, Any]) -> str:
    """Markdown section."""
    lines = ["| " + " | ".join(HEAD) + " |", "|---|---:|---:|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in _rows(res)]
    lines += ["", *[f"- {n}" for n in _notes(res)]]
    return "\n".join(lines) + "\n"


def main() -> int:
    for name, kib in measure_references().items():
        print(f"{name}: peak {_mib(kib['hwm'])} MiB, end {_mib(kib['rss'])} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
