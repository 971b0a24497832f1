"""Throughput with game pieces on the field: what ~400 loose pieces cost a world, next to the
same world without them, stepped in the same run.

What is measured
    Simulated seconds per wall second (× real time) and µs per substep of
    :class:`simserver.world.World` / :class:`simserver.world.arena.Arena` stepped in-process as
    fast as the CPU allows, tick 10 ms, substep 5 ms (the configs' own), each with a
    :class:`simserver.world.pieces.FieldPieces` of 400 balls (the 2026 fuel's size and mass:
    radius 7.5 cm, 0.215 kg, rolling resistance 0.03) and the field elements, and the same
    worlds without pieces. Every case loops a 10 s input plan and resets (robots and pieces)
    at each loop start. Cases (drivers of benchmarks/worlds.py):

    - swerve through pieces: examples/swerve on the 2026 field with its elements, driving PATH
      (a 6.7 m × 4.9 m rectangle and a spin, closed-loop steering) from (2 m, 2 m) through
      400 balls spread on a 20 × 20 grid over x 1.5-9.5 m, y 1-7 m: it pushes rows of them
      ahead, they roll, hit each other and the hub.
    - swerve beside resting pieces: the same driving, the 400 balls on a 20 × 20 grid at the
      red end (x 13-16.2 m, y 0.6-7.4 m, clear of the elements): they never move after the
      reset of each loop, so they show what sleeping pieces cost.
    - six robots, match (benchmarks/worlds.py MATCH: two kitbots, two mecanum, two swerve
      robots on their own loops, with robot-robot collisions) through 400 balls spread over
      the whole field.

    Reported with each: awake pieces per substep (mean), and how many pieces moved in a loop.

How
    Warm-up, then ``--repeats`` timed runs of every case in alternating order (ABBA), the
    garbage collector paused; best and median. The machine may be shared with other work:
    compare the ratios to the reference rows measured in the same run, not the absolute
    figures across runs.

Goals (from issue 22, judged on medians, information only): one robot with pieces ≥ 50× real
time; six robots with pieces ≥ 20×; resting pieces cost almost nothing.

Usage::

    python benchmarks/bench_pieces.py [--seconds 30] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from simserver.config.loader import loads
from simserver.config.pieces import Placement
from simserver.models.pieces.types import PieceType
from simserver.world import World
from simserver.world.arena import Arena
from simserver.world.pieces import FieldPieces

try:
    from benchmarks._common import text_table
    from benchmarks.worlds import (
        LOOP,
        SWERVE,
        Case,
        Driver,
        _timed,
        match_robots,
        swerve_path_driver,
        with_elements,
    )
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import text_table  # type: ignore
    from worlds import (  # type: ignore
        LOOP,
        SWERVE,
        Case,
        Driver,
        _timed,
        match_robots,
        swerve_path_driver,
        with_elements,
    )

BALL = PieceType("ball", "sphere", radius=0.075, height=0.15, mass=0.215, restitution=0.6,
                 friction=0.7, rolling=0.03, drag_coefficient=0.47, drag_area=0.0177,
                 class_id=0)
GOAL_ONE = 50.0  # × real time, one robot with pieces
GOAL_SIX = 20.0  # × real time, six robots with pieces


def grid(x: tuple[float, float], y: tuple[float, float], nx: int = 20, ny: int = 20
         ) -> list[Placement]:
    """nx × ny balls evenly over the box x × y (m)."""
    return [Placement("ball", float(px), float(py)) for px in np.linspace(*x, nx)
            for py in np.linspace(*y, ny)]


class Tally:
    """Awake pieces per substep and pieces that moved, counted over untimed loops."""

    def __init__(self, pieces: FieldPieces):
        self.pieces = pieces
        self.awake = 0
        self.substeps = 0
        self.moved: set[int] = set()
        inner = pieces.substep

        def counted(h: float) -> None:
            inner(h)
            field = pieces.field
            self.awake += int(field.awake.sum())
            self.substeps += 1
            self.moved.update(np.flatnonzero(np.any(field.pos != field._start, axis=1)).tolist())

        pieces.substep = counted  # type: ignore[method-assign]

    def result(self) -> dict[str, float]:
        return {"awake": self.awake / max(1, self.substeps), "moved": float(len(self.moved))}


def _attached(worlds: dict[str, World], placed: list[Placement] | None) -> FieldPieces | None:
    if placed is None:
        return None
    return FieldPieces(worlds, {"ball": BALL}, placed)


def world_case(label: str, placed: list[Placement] | None) -> Case:
    """The example swerve on the 2026 field with its elements driving PATH, with ``placed``
    pieces (None: without pieces)."""
    world = World(loads(with_elements(SWERVE.read_text())))
    pieces = _attached({"": world}, placed)
    tick = world.cfg.sim.tick
    per_loop = round(LOOP / tick)
    drive, step = swerve_path_driver(world), world.step

    def body(n: int) -> None:
        for i in range(n):
            k = i % per_loop
            if k == 0:
                world.reset()
            drive(k)
            step(tick)

    return Case(label, lambda n: _timed(lambda: body(n)), round(tick / world.substep),
                _info(pieces, body, per_loop))


def arena_case(label: str, placed: list[Placement] | None) -> Case:
    """The six robots of benchmarks/worlds.py's match in one Arena, with ``placed`` pieces."""
    robots = match_robots()
    worlds = {"" if i == 0 else f"r{i}": World(loads(t)) for i, (t, _) in enumerate(robots)}
    first = next(iter(worlds.values()))
    pieces = _attached(worlds, placed)
    tick = first.cfg.sim.tick
    per_loop = round(LOOP / tick)
    drivers: list[Driver] = [make(w) for w, (_, make) in
                             zip(worlds.values(), robots, strict=True)]
    arena = Arena(worlds, first.cfg.field.restitution, first.cfg.field.wall_friction)

    def body(n: int) -> None:
        for i in range(n):
            k = i % per_loop
            if k == 0:
                arena.reset()
            for drive in drivers:
                drive(k)
            arena.step(tick)

    return Case(label, lambda n: _timed(lambda: body(n)), round(tick / first.substep),
                _info(pieces, body, per_loop))


def _info(pieces: FieldPieces | None, body: Callable[[int], None], per_loop: int
          ) -> Callable[[], dict[str, Any]]:
    def info() -> dict[str, Any]:
        """Awake pieces per substep and pieces moved over one loop (run untimed)."""
        if pieces is None:
            return {}
        tally = Tally(pieces)
        try:
            body(per_loop)
        finally:
            del pieces.substep  # type: ignore[method-assign]
        return tally.result()

    return info


def build_cases() -> dict[str, list[Case]]:
    """The cases by group; the first of each group has pieces, the second is its reference."""
    through = grid((1.5, 9.5), (1.0, 7.0))
    resting = grid((13.0, 16.2), (0.6, 7.4))
    field = grid((1.0, 15.5), (0.8, 7.3))
    return {
        "one": [world_case("swerve + battery World, driving PATH through 400 loose balls",
                           through),
                world_case("reference: the same World without pieces", None)],
        "resting": [world_case("swerve + battery World, driving PATH beside 400 resting "
                               "balls", resting),
                    world_case("reference: the same World without pieces", None)],
        "six": [arena_case("six robots (2 kitbot, 2 mecanum, 2 swerve), match, Arena, 400 "
                           "balls over the field", field),
                arena_case("reference: the same six without pieces", None)],
    }


def measure_pieces(seconds: float = 30.0, repeats: int = 3, warmup: float = 2.0) -> dict:
    """Time every case; returns the figures by group."""
    if seconds <= 0 or repeats < 1:
        raise ValueError("seconds must be > 0 and repeats ≥ 1")
    groups = build_cases()
    cases = [c for group in groups.values() for c in group]
    tick = 0.01
    n = max(1, round(seconds / tick))
    for c in cases:
        c.run(max(1, round(warmup / tick)))
    walls: dict[int, list[float]] = {id(c): [] for c in cases}
    for r in range(repeats):
        for c in (cases if r % 2 == 0 else cases[::-1]):
            walls[id(c)].append(c.run(n))
    out: dict[str, Any] = {"seconds": n * tick, "repeats": repeats, "groups": {}}
    for name, group in groups.items():
        rows = []
        for c in group:
            w = walls[id(c)]
            substeps = n * c.substeps_per_tick
            rows.append({"label": c.label, "rate_best": n * tick / min(w),
                         "rate_median": n * tick / statistics.median(w),
                         "us_best": min(w) / substeps * 1e6,
                         "us_median": statistics.median(w) / substeps * 1e6,
                         "info": c.info()})
        out["groups"][name] = rows
    g = out["groups"]
    out["goals"] = {key: {"goal": goal, "value": g[key][0]["rate_median"]}
                    for key, goal in (("one", GOAL_ONE), ("resting", GOAL_ONE),
                                      ("six", GOAL_SIX))}
    return out


HEAD = ["world", "sim s/wall s best", "median", "µs/substep best", "median", "note"]


def _rows(res: dict) -> list[list[str]]:
    rows = []
    for group_rows in res["groups"].values():
        ours = group_rows[0]
        for i, r in enumerate(group_rows):
            if i == 0:
                note = (f"awake pieces per substep {r['info']['awake']:.1f} of 400; "
                        f"{r['info']['moved']:.0f} moved in a 10 s loop")
            else:
                extra = ours["us_median"] - r["us_median"]
                note = (f"pieces add {extra:.1f} µs/substep "
                        f"({ours['us_median'] / r['us_median']:.2f}× the time)")
            rows.append([r["label"], f"{r['rate_best']:.1f}×", f"{r['rate_median']:.1f}×",
                         f"{r['us_best']:.1f}", f"{r['us_median']:.1f}", note])
    return rows


def _goal_lines(res: dict) -> list[str]:
    labels = {"one": "one robot (swerve) through 400 pieces",
              "resting": "one robot (swerve) beside 400 resting pieces",
              "six": "six robots with 400 pieces"}
    return [f"{labels[k]}: ≥ {v['goal']:g}× real time: {v['value']:.1f}× — "
            f"{'met' if v['value'] >= v['goal'] else 'not met'}"
            for k, v in res["goals"].items()]


def format_table(res: dict) -> str:
    """Plain-text table."""
    return "\n".join([
        f"Game pieces: {res['seconds']:g} s simulated per run, tick 10 ms, substep 5 ms, "
        f"{res['repeats']} repeats (alternating order)", *text_table(HEAD, _rows(res)), "",
        "Goals (medians, information only):", *[f"  {x}" for x in _goal_lines(res)]])


def format_markdown(res: dict) -> str:
    """Markdown section."""
    lines = [f"### Game pieces: {res['seconds']:g} s simulated per run, tick 10 ms, substep "
             f"5 ms, {res['repeats']} repeats (alternating order)", "",
             "400 balls (the 2026 fuel's size and mass) on the 2026 field with its elements; "
             "each case next to the same world without pieces, in the same run (see "
             "benchmarks/bench_pieces.py).", "",
             "| " + " | ".join(HEAD) + " |", "|---|" + "---:|" * 4 + "---|"]
    lines += ["| " + " | ".join(r) + " |" for r in _rows(res)]
    lines += ["", "Goals (medians, information only):", ""]
    lines += [f"- {x}" for x in _goal_lines(res)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="simulated s per run")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    print(format_table(measure_pieces(args.seconds, args.repeats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
