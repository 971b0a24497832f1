"""Pieces in flight: the cost of one ``Flight.step`` on the 2026 field.

What is measured
    µs per 5 ms step (the default substep) of :meth:`simserver.models.pieces.flight.Flight.step`
    for 1, 10, 50 and 200 FUEL in the air at once, thrown up from the middle of the field
    (free flight: no contact in the step) and falling a few mm above the carpet beside a
    trench leg and a hub, so that every one of them bounces within the step (contacts).
    Reference, same run: the same pieces in a bare Flight (no elements, no goals, no air),
    which is the integrator and the bookkeeping alone; and the budget of one substep at 50×
    real time, 100 µs.

How
    Warm-up, then ``--repeats`` timed runs in alternating order, garbage collector paused;
    best µs per step.

Usage::

    python benchmarks/flight.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from dataclasses import replace
from typing import Any

import numpy as np

from simserver.field.elements import season_obstacles
from simserver.field.gamepieces import season_goals, season_piece_types
from simserver.field.seasons import field_size
from simserver.models.pieces.flight import Flight

try:
    from benchmarks._common import text_table
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import text_table  # type: ignore

DT = 0.005  # s
COUNTS = (1, 10, 50, 200)
STEPS = 200
BUDGET_US = DT / 50.0 * 1e6  # one substep at 50× real time


def _launch(n: int, contacts: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    if contacts:  # a few mm above the carpet beside the blue trench leg and hub, falling
        pos = np.column_stack([rng.uniform(3.6, 5.6, n), rng.uniform(1.8, 3.2, n),
                               rng.uniform(0.0755, 0.079, n)])
        vel = np.column_stack([rng.normal(0.0, 1.0, n), rng.normal(0.0, 1.0, n),
                               rng.uniform(-4.0, -1.0, n)])
    else:
        pos = np.column_stack([rng.uniform(6.5, 10.0, n), rng.uniform(2.0, 6.0, n),
                               rng.uniform(1.5, 3.0, n)])
        vel = np.column_stack([rng.normal(0.0, 3.0, n), rng.normal(0.0, 3.0, n),
                               rng.uniform(4.0, 8.0, n)])
    spin = rng.normal(0.0, 100.0, (n, 3))
    return pos, vel, spin


def _time(flight: Flight, n: int, contacts: bool) -> float:
    pos, vel, spin = _launch(n, contacts)
    kind = np.zeros(n, dtype=np.intp)
    copies = [(pos.copy(), vel.copy(), spin.copy()) for _ in range(STEPS)]
    start = time.perf_counter()
    for p, v, w in copies:  # every step from the same state: the same work each time
        flight.step(kind, p, v, w, DT)
    return (time.perf_counter() - start) / STEPS * 1e6


def measure_flight(repeats: int = 5) -> dict[str, Any]:
    """Best µs per step for each count, with and without contacts, and the bare reference."""
    season = "2026"
    fuel = season_piece_types(season)["fuel"]
    size = field_size(season)
    full = Flight([fuel], season_goals(season), season_obstacles(season), size)
    bare = Flight([replace(fuel, drag_coefficient=0.0, lift_coefficient=0.0)], [], [], size,
                  air_density=0.0)
    cases = {(n, contacts, name): float("inf") for n in COUNTS for contacts in (False, True)
             for name in ("full", "bare")}
    flights = {"full": full, "bare": bare}
    for (n, contacts, name) in cases:
        _time(flights[name], n, contacts)  # warm-up
    gc.disable()
    try:
        for r in range(repeats):
            order = list(cases) if r % 2 == 0 else list(reversed(list(cases)))
            for key in order:
                n, contacts, name = key
                cases[key] = min(cases[key], _time(flights[name], n, contacts))
    finally:
        gc.enable()
    return {"cases": cases, "repeats": repeats}


def _rows(result: dict[str, Any]) -> list[list[str]]:
    cases = result["cases"]
    rows = []
    for n in COUNTS:
        for contacts in (False, True):
            full, bare = cases[(n, contacts, "full")], cases[(n, contacts, "bare")]
            rows.append([f"{n} FUEL, {'contacts' if contacts else 'free flight'}",
                         f"{full:.0f}", f"{bare:.0f}", f"{full / BUDGET_US:.2f}"])
    return rows


HEAD = ["pieces in the air", "µs/step, 2026 field", "µs/step, bare", "× 50× budget"]


def format_table(result: dict[str, Any]) -> str:
    lines = ["Flight.step, 5 ms steps (best of "
             f"{result['repeats']}; 50× real time leaves {BUDGET_US:.0f} µs per substep):"]
    return "\n".join(lines + text_table(HEAD, _rows(result)))


def format_markdown(result: dict[str, Any]) -> str:
    lines = [f"`Flight.step` per 5 ms step, best of {result['repeats']}; bare: no elements, "
             f"goals or air. At 50× real time a whole substep has {BUDGET_US:.0f} µs.", "",
             "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(row) + " |" for row in _rows(result)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    print(format_table(measure_flight(args.repeats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
