"""Pieces thrown at random across the real 2026 and 2024 fields (elements, walls, goals).

Whatever a throw does, the model must keep: no piece below the carpet, inside an element or
through a wall below its top; every piece ends its flight (lands, leaves or scores) in a
bounded time; landed pieces rest on the carpet. Seeded, so a failure reproduces.
"""

from __future__ import annotations

import numpy as np
import pytest

from simserver.field.elements import season_obstacles
from simserver.field.gamepieces import season_goals, season_piece_types
from simserver.field.seasons import field_size
from simserver.models.obstacles import Obstacle
from simserver.models.pieces.flight import ALLIANCE_WALL_HEIGHT, GUARDRAIL_HEIGHT, Flight

DT = 0.005
TOL = 1e-9  # m: rounding in the contact planes


def outside_by(ob: Obstacle, xy: np.ndarray) -> np.ndarray:
    """(n,) distance outside the outline along its most violated face (< 0: inside), m."""
    pts = np.asarray(ob.points)
    edges = np.roll(pts, -1, axis=0) - pts
    normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    return np.max(xy @ normals.T - np.einsum("ij,ij->i", normals, pts), axis=1)


@pytest.mark.parametrize(("season", "seed"), [("2026", 1), ("2026", 2), ("2024", 3)])
def test_random_throws_stay_physical_and_all_end(season: str, seed: int) -> None:
    piece = next(iter(season_piece_types(season).values()))
    obstacles = season_obstacles(season)
    length, width = field_size(season)
    flight = Flight([piece], season_goals(season), obstacles, (length, width))
    rng = np.random.default_rng(seed)
    n = 200
    pos = np.column_stack([rng.uniform(0.3, length - 0.3, n), rng.uniform(0.3, width - 0.3, n),
                           rng.uniform(0.2, 3.0, n)])
    clear = np.ones(n, dtype=bool)
    for ob in obstacles:  # start clear of the elements
        clear &= (outside_by(ob, pos[:, :2]) > 0.3) | (pos[:, 2] > ob.height + 0.3)
    pos = pos[clear]
    n = len(pos)
    vel = rng.normal(0.0, 8.0, (n, 3))
    spin = rng.normal(0.0, 200.0, (n, 3))
    kind = np.zeros(n, dtype=int)
    r, hh = piece.radius, piece.height / 2
    flying = np.ones(n, dtype=bool)
    ended = {"landed": 0, "out": 0, "scored": 0}
    for _ in range(int(15.0 / DT)):
        idx = np.flatnonzero(flying)
        if idx.size == 0:
            break
        p, v, w = pos[idx], vel[idx], spin[idx]
        events = flight.step(kind[idx], p, v, w, DT)
        pos[idx], vel[idx], spin[idx] = p, v, w
        assert np.isfinite(p).all() and np.isfinite(v).all() and np.isfinite(w).all()
        np.testing.assert_allclose(p[events.landed, 2], hh, rtol=0, atol=TOL)
        assert (v[events.landed, 2] == 0.0).all()
        done = events.landed | events.out | (events.scored >= 0)
        ended["landed"] += int(events.landed.sum())
        ended["out"] += int(events.out.sum())
        ended["scored"] += int((events.scored >= 0).sum())
        q = p[~done]
        assert (q[:, 2] >= hh - TOL).all()
        bottom = q[:, 2] - hh
        past_x = (q[:, 0] < r - TOL) | (q[:, 0] > length - r + TOL)
        past_y = (q[:, 1] < r - TOL) | (q[:, 1] > width - r + TOL)
        assert not (past_x & (bottom <= ALLIANCE_WALL_HEIGHT)).any()
        assert not (past_y & (bottom <= GUARDRAIL_HEIGHT)).any()
        for ob in obstacles:
            assert not ((outside_by(ob, q[:, :2]) < -TOL) & (q[:, 2] < ob.height)).any(), ob.name
        flying[idx[done]] = False
    assert not flying.any(), f"{flying.sum()} pieces still flying after 15 s"
    assert min(ended["landed"], ended["out"]) > n // 5  # the sample exercises both
