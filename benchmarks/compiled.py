"""The speed goals' worlds, interpreted and compiled, in the same run.

What is measured
    Simulated seconds per wall second of the three worlds whose goals the interpreted build
    misses (issues 21 and 22): the full robot (swerve + elevator + arm + camera, pushing into
    the elements; benchmarks/worlds.py), one swerve driving through 400 balls and six robots
    among 400 balls, each of these two next to the same world without pieces
    (benchmarks/bench_pieces.py). Each runs in a fresh ``python -P`` process
    with the checkout's plain-Python simserver, and with the compiled copy
    (simserver/compiled.py's modules through mypyc: tools/compile.py, ``make compiled``)
    first on the import path; the process checks which it got.

How
    Tick 10 ms, substep 5 ms, ``--seconds`` simulated per timed run after a 2 s warm-up,
    ``--repeats`` runs per process, the garbage collector paused; the two builds alternate
    (ABBA) and each case's figure is the median. The compiled build is what the release's
    wheels for Linux x86-64, Windows x64 and macOS arm64 hold; a checkout, a source install
    and the Docker images run the interpreted one (docs/models.md, "Speed").

Usage::

    python benchmarks/compiled.py [--seconds 30] [--repeats 3] [--compiled build/compiled]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

try:
    from benchmarks._common import text_table
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import text_table  # type: ignore

REPO = Path(__file__).resolve().parents[1]

#: (key, label, goal × real time or None) of each world measured; "-ref": the same world
#: without its pieces (bench_pieces' reference).
CASES = (
    ("full", "full robot (swerve + elevator + arm + camera), pushing", 50.0),
    ("one", "swerve + battery driving PATH through 400 loose balls", 50.0),
    ("one-ref", "reference: the same swerve World without pieces", None),
    ("six", "six robots (2 kitbot, 2 mecanum, 2 swerve), match, 400 balls", 20.0),
    ("six-ref", "reference: the same six without pieces", None),
)

_TIMED = """
import gc, json, sys
import simserver.compiled as c
from benchmarks import bench_pieces, worlds
which, ticks, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
name, _, ref = which.partition("-")
case = (worlds.world_case("full", worlds.full_robot_text()) if name == "full"
        else bench_pieces.build_cases()[name][1 if ref else 0])
case.run(200)
gc.collect()
walls = [case.run(ticks) for _ in range(repeats)]
print(json.dumps({"compiled": c.compiled(), "walls": walls}))
"""


def _timed(which: str, path: list[Path], ticks: int, repeats: int) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, path)))
    out = subprocess.run([sys.executable, "-P", "-c", _TIMED, which, str(ticks), str(repeats)],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise RuntimeError(f"{which} on {path}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_compiled(seconds: float = 30.0, repeats: int = 3,
                     compiled: Path = REPO / "build" / "compiled") -> dict:
    """Figures by case: × real time, interpreted and compiled (medians of every run)."""
    if not (compiled / "simserver").is_dir():
        raise FileNotFoundError(f"no compiled copy in {compiled}: run `make compiled`")
    ticks = max(1, round(seconds / 0.01))
    builds = {"interpreted": [REPO], "compiled": [compiled, REPO]}
    out: dict = {"seconds": seconds, "repeats": repeats, "cases": {}}
    for key, label, goal in CASES:
        walls: dict[str, list[float]] = {"interpreted": [], "compiled": []}
        for order in (("interpreted", "compiled"), ("compiled", "interpreted")):
            for build in order:
                got = _timed(key, builds[build], ticks, repeats)
                if bool(got["compiled"]) != (build == "compiled"):
                    raise RuntimeError(f"{build} run of {key} loaded compiled modules "
                                       f"{got['compiled']}")
                walls[build] += got["walls"]
        speed = {b: seconds / statistics.median(w) for b, w in walls.items()}
        out["cases"][key] = {"label": label, "goal": goal, **speed}
    return out


def _rows(r: dict) -> list[list[str]]:
    def met(x: float, goal: float) -> str:
        return "met" if x >= goal else "not met"

    rows = []
    for c in r["cases"].values():
        goal = ("" if c["goal"] is None else
                f"≥ {c['goal']:g}×: interpreted {met(c['interpreted'], c['goal'])}, "
                f"compiled {met(c['compiled'], c['goal'])}")
        rows.append([c["label"], f"{c['interpreted']:.1f}×", f"{c['compiled']:.1f}×",
                     f"{c['compiled'] / c['interpreted']:.2f}×", goal])
    return rows


HEAD = ["world", "interpreted", "compiled (mypyc)", "compiled / interpreted", "goal"]


def format_table(r: dict) -> str:
    return "\n".join(text_table(HEAD, _rows(r)))


def format_markdown(r: dict) -> str:
    lines = [f"### Interpreted and compiled: {r['seconds']:g} s simulated per run, "
             f"{2 * r['repeats']} runs of each build (alternating), medians", "",
             "The worlds whose goals the interpreted build misses, with simserver/compiled.py's "
             "modules compiled by mypyc (`make compiled`; bit for bit the interpreted results: "
             "tests/test_compiled.py), as the release's wheels for Linux x86-64, Windows x64 and "
             "macOS arm64 hold; a checkout and the Docker images run the interpreted build.", "",
             "| " + " | ".join(HEAD) + " |", "|---|---:|---:|---:|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in _rows(r)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="simulated s per run")
    ap.add_argument("--repeats", type=int, default=3, help="runs per process")
    ap.add_argument("--compiled", type=Path, default=REPO / "build" / "compiled",
                    help="the compiled copy (tools/compile.py)")
    args = ap.parse_args(argv)
    print(format_table(measure_compiled(args.seconds, args.repeats, args.compiled)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
