"""Game pieces as part 1 of issue 22 hands them over (a PieceSnapshot: plain data), for the
tests of what is shown of them: NetworkTables, the SimField, recordings, checks and plots."""

from __future__ import annotations

import dataclasses

import numpy as np

from simserver.contract.snapshot import PieceSnapshot, Snapshot
from simserver.models.pieces.types import FLIGHT, GONE, HELD, LOOSE

TYPES = ("fuel", "coral")
GOALS = {"blue_hub": 0, "red_hub": 0}


def field_of(n: int, seed: int = 1) -> PieceSnapshot:
    """``n`` pieces at random field poses, in every state by turns (loose, flight, held,
    gone, loose, ...), the type changing every four pieces, nothing scored yet."""
    rng = np.random.default_rng(seed)
    pose = rng.uniform(-1.0, 1.0, (n, 6)) * [8.0, 4.0, 1.0, 3.0, 1.5, 3.0]
    pose[:, :3] += [8.27, 4.0, 1.0]
    state = np.array([(LOOSE, FLIGHT, HELD, GONE)[i % 4] for i in range(n)])
    return PieceSnapshot(
        types=TYPES, kind=(np.arange(n) // 4) % 2, state=state, pose=pose,
        holder=tuple("" if s == HELD else "-" for s in state),
        scores={"blue": 0, "red": 0}, goals=dict(GOALS), picked_up={"": 0, "partner": 0},
        shots={"": 0, "partner": 0})


def scored(pieces: PieceSnapshot, blue: int = 0, red: int = 0, picked_up: int = 0,
           shots: int = 0) -> PieceSnapshot:
    """``pieces`` with these counts: ``blue`` pieces in goal blue_hub, ``red`` in red_hub,
    and the main robot's pick-ups and shots (its partner's: one more each)."""
    return dataclasses.replace(
        pieces, scores={"blue": blue, "red": red},
        goals={"blue_hub": blue, "red_hub": red},
        picked_up={"": picked_up, "partner": picked_up + 1},
        shots={"": shots, "partner": shots + 1})


def with_pieces(snap: Snapshot, pieces: PieceSnapshot | None) -> Snapshot:
    """``snap`` with the field's pieces set."""
    return dataclasses.replace(snap, pieces=pieces)
