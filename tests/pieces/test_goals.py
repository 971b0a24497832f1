"""Goal regions: a segment (one step of a piece's centre) crossing into a convex prism.

Reference: the region is the intersection of half-spaces, so whether and where a straight
segment enters it is exact geometry (Liang-Barsky clipping); the expected answers below are
worked out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from simserver.models.pieces.goals import Goal

SQUARE = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0))
THIN = Goal("thin", "blue", SQUARE, bottom=1.0, top=1.001)  # 1 mm thick


def seg(*points: tuple[float, float, float]) -> np.ndarray:
    return np.array(points, dtype=float)


def test_entered_from_above_through_the_top() -> None:
    goal = Goal("g", "red", SQUARE, bottom=1.0, top=2.0)
    before = seg((0.5, 0.5, 2.5), (0.5, 0.5, 2.5))
    after = seg((0.5, 0.5, 1.5), (0.5, 0.5, 2.1))
    assert goal.entered(before, after).tolist() == [True, False]
    assert goal.entry_fraction(before, after)[0] == pytest.approx(0.5, abs=1e-15)


def test_entered_through_a_side_face() -> None:
    goal = Goal("g", "red", SQUARE, bottom=1.0, top=2.0)
    s = goal.entry_fraction(seg((-1.0, 0.5, 1.5)), seg((0.5, 0.5, 1.5)))
    assert s[0] == pytest.approx(2.0 / 3.0, abs=1e-15)


def test_a_fast_piece_that_skips_a_thin_region_in_one_step_is_counted() -> None:
    # 30 m/s down for 5 ms covers 15 cm: both ends are outside a 1 mm region.
    before = seg((0.5, 0.5, 1.08), (0.2, 0.9, 1.2))
    after = seg((0.5, 0.5, 0.93), (0.2, 0.9, -50.0))
    assert not THIN.contains(before).any() and not THIN.contains(after).any()
    assert THIN.entered(before, after).tolist() == [True, True]


def test_a_fast_piece_crossing_diagonally_through_the_thin_region() -> None:
    # From above one corner to below the opposite one, both ends outside the footprint.
    assert THIN.entered(seg((-0.5, -0.5, 3.0)), seg((1.5, 1.5, -1.0)))[0]


def test_a_segment_that_passes_beside_or_stops_short_does_not_enter() -> None:
    before = seg((1.5, 0.5, 3.0), (0.5, 0.5, 3.0), (0.5, 0.5, 0.5), (-0.5, 0.5, 1.0005))
    after = seg((1.5, 0.5, -3.0), (0.5, 0.5, 1.002), (0.5, 0.5, 0.9), (-0.1, 0.5, 1.0005))
    assert THIN.entered(before, after).tolist() == [False, False, False, False]


def test_a_segment_that_starts_inside_has_not_entered() -> None:
    goal = Goal("g", "blue", SQUARE, bottom=1.0, top=2.0)
    assert not goal.entered(seg((0.5, 0.5, 1.5)), seg((0.5, 0.5, 0.0)))[0]
    assert not goal.entered(seg((0.5, 0.5, 1.5)), seg((0.6, 0.5, 1.6)))[0]


def test_a_segment_along_a_face_plane_outside_does_not_enter() -> None:
    assert not THIN.entered(seg((2.0, -1.0, 1.0005)), seg((2.0, 3.0, 1.0005)))[0]


def test_many_rows_are_answered_at_once_and_match_one_by_one() -> None:
    rng = np.random.default_rng(4)
    before = rng.uniform(-1.0, 2.0, (500, 3))
    after = rng.uniform(-1.0, 2.0, (500, 3))
    goal = Goal("g", "blue", SQUARE, bottom=0.2, top=0.9)
    together = goal.entry_fraction(before, after)
    alone = [goal.entry_fraction(before[i:i + 1], after[i:i + 1])[0] for i in range(500)]
    assert np.array_equal(together, np.array(alone))
    assert 50 < np.isfinite(together).sum() < 450  # the sample exercises both answers


def test_contains_includes_the_faces() -> None:
    goal = Goal("g", "blue", SQUARE, bottom=1.0, top=2.0)
    inside = goal.contains(seg((0.0, 0.0, 1.0), (1.0, 1.0, 2.0), (0.5, 0.5, 2.01)))
    assert inside.tolist() == [True, True, False]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"alliance": "green"}, "alliance"),
    ({"footprint": SQUARE[::-1]}, "counter-clockwise"),
    ({"footprint": ((0.0, 0.0), (1.0, 0.0), (0.2, 0.2), (0.0, 1.0))}, "convex"),
    ({"bottom": 2.0, "top": 1.0}, "bottom < top"),
    ({"top": float("nan")}, "bottom < top"),
])
def test_bad_goals_are_refused(kwargs: dict, message: str) -> None:
    args = {"name": "g", "alliance": "blue", "footprint": SQUARE, "bottom": 0.0, "top": 1.0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        Goal(**args)
