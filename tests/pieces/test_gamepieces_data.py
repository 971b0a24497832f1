"""Season game-piece data: piece types, starting layouts, goals, stations, scored exits.

References: the game manuals' nominal figures (2026 §5.4, §5.7, §5.9.2, §5.10.1, §6.3.4;
2024 §5.10, §6.3.4), the official AprilTag layouts in robotpy-apriltag, and the field
elements of simserver.field.elements.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from simserver.field.elements import season_obstacles
from simserver.field.gamepieces import (
    PIECE_SEASONS,
    scored_exits,
    season_goals,
    season_piece_types,
    starting_layout,
    stations,
)
from simserver.field.seasons import field_size, tag_layout
from simserver.models.obstacles import Obstacle
from simserver.models.pieces.flight import Flight
from simserver.units import INCH


def tag_xy(season: str, tag: int) -> np.ndarray:
    pose = tag_layout(season).getTagPose(tag)
    assert pose is not None
    return np.array([pose.X(), pose.Y()])


def polygon_distance(ob: Obstacle, x: float, y: float) -> float:
    """Signed distance from (x, y) to a convex polygon's boundary, negative inside, m."""
    pts = np.asarray(ob.points)
    worst = -math.inf
    for (ax, ay), (bx, by) in zip(pts, np.roll(pts, -1, axis=0), strict=True):
        nx, ny = by - ay, -(bx - ax)
        norm = math.hypot(nx, ny)
        worst = max(worst, ((x - ax) * nx + (y - ay) * ny) / norm)
    if worst <= 0.0:
        return worst
    # Outside: the distance to the nearest edge segment.
    best = math.inf
    for a, b in zip(pts, np.roll(pts, -1, axis=0), strict=True):
        ab, ap = b - a, np.array([x, y]) - a
        t = min(1.0, max(0.0, float(ap @ ab / (ab @ ab))))
        best = min(best, float(np.linalg.norm(ap - t * ab)))
    return best


def test_the_2026_fuel_is_the_manuals_ball() -> None:
    fuel = season_piece_types("2026")["fuel"]
    assert fuel.shape == "sphere"
    assert 2 * fuel.radius == pytest.approx(0.150, abs=0.0005)  # 5.91 in (15.0 cm)
    assert 0.448 * 0.45359237 <= fuel.mass <= 0.500 * 0.45359237  # 0.448-0.500 lb
    assert fuel.drag_area == pytest.approx(math.pi * fuel.radius**2)
    assert 0.4 <= fuel.drag_coefficient <= 0.55  # smooth sphere below the drag crisis


def test_the_2024_note_is_the_manuals_ring() -> None:
    note = season_piece_types("2024")["note"]
    assert note.shape == "ring"
    assert 2 * note.radius == pytest.approx(14 * INCH)
    assert note.height == pytest.approx(2 * INCH)
    assert note.mass == pytest.approx(0.235, abs=0.003)  # 8.3 oz


def test_unknown_seasons_are_refused_by_every_accessor() -> None:
    for accessor in (season_piece_types, starting_layout, season_goals, stations,
                     scored_exits):
        with pytest.raises(ValueError, match="2026"):
            accessor("2023")


@pytest.mark.parametrize("season", PIECE_SEASONS)
def test_every_starting_piece_lies_inside_the_field_clear_of_elements_and_others(
        season: str) -> None:
    types = season_piece_types(season)
    length, width = field_size(season)
    layout = starting_layout(season)
    obstacles = season_obstacles(season)
    for p in layout:
        r = types[p.type].radius
        assert r <= p.x <= length - r and r <= p.y <= width - r, p
        for ob in obstacles:
            assert polygon_distance(ob, p.x, p.y) >= r, (p, ob.name)
    xy = np.array([(p.x, p.y) for p in layout])
    radii = np.array([types[p.type].radius for p in layout])
    gaps = np.linalg.norm(xy[:, None] - xy[None], axis=2) - (radii[:, None] + radii[None])
    np.fill_diagonal(gaps, np.inf)
    assert gaps.min() > 0.0


def test_2026_starts_with_the_manuals_counts() -> None:
    length, _width = field_size("2026")
    layout = starting_layout("2026")
    neutral = [p for p in layout if abs(p.x - length / 2) < 2.0]
    blue_depot = [p for p in layout if p.x < 1.0]
    red_depot = [p for p in layout if p.x > length - 1.0]
    assert (len(neutral), len(blue_depot), len(red_depot)) == (360, 24, 24)
    # With no preloads the NEUTRAL ZONE holds the manual's most, 408; 504 with depots and
    # the two OUTPOST CHUTES' 24 each.
    assert len(starting_layout("2026", preloaded=0)) == 408 + 48
    assert sum(s.stock for s in stations("2026")) == 48
    assert 360 + 48 + 48 + 48 == 504
    with pytest.raises(ValueError, match="preloaded"):
        starting_layout("2026", preloaded=49)


def test_2026_neutral_zone_fuel_fills_the_manuals_box_on_both_sides_of_the_centre_line() -> None:
    length, width = field_size("2026")
    r = season_piece_types("2026")["fuel"].radius
    for preloaded in (0, 48):
        pile = [p for p in starting_layout("2026", preloaded) if abs(p.x - length / 2) < 2.0]
        dx = np.array([p.x - length / 2 for p in pile])
        dy = np.array([p.y - width / 2 for p in pile])
        assert np.all(np.abs(dx) + r <= 36.0 * INCH)  # 72 in deep
        assert np.all(np.abs(dy) + r <= 103.0 * INCH)  # 206 in across
        assert np.all(np.abs(dx) - r >= 1.0 * INCH)  # the 2 in divider's gap
        assert (dx < 0).sum() == (dx > 0).sum()


def test_2026_depots_sit_in_their_footprint_along_the_alliance_wall() -> None:
    length, width = field_size("2026")
    r = season_piece_types("2026")["fuel"].radius
    cy = width / 2 + 75.93 * INCH
    blue = [p for p in starting_layout("2026") if p.x < 1.0]
    for p in blue:
        assert r <= p.x and p.x + r <= 27.0 * INCH - 3.0 * INCH
        assert abs(p.y - cy) + r <= 21.0 * INCH - 3.0 * INCH
    red = sorted((round(length - p.x, 9), round(width - p.y, 9))
                 for p in starting_layout("2026") if p.x > length - 1.0)
    assert red == sorted((round(p.x, 9), round(p.y, 9)) for p in blue)


def test_2024_notes_sit_on_the_spike_marks() -> None:
    length, _width = field_size("2024")
    xs = sorted({round(p.x, 6) for p in starting_layout("2024")})
    assert xs == [round(114 * INCH, 6), round(length / 2, 6), round(length - 114 * INCH, 6)]
    centre = sorted(p.y for p in starting_layout("2024") if abs(p.x - length / 2) < 1e-9)
    assert np.allclose(np.diff(centre), 66 * INCH) and len(centre) == 5
    # The middle wing note lines up with the speaker (tag 7) within a few centimetres.
    wing = sorted(p.y for p in starting_layout("2024") if p.x < 3.0)
    assert wing[1] == pytest.approx(tag_xy("2024", 7)[1], abs=0.01)


def test_2026_hub_goals_sit_on_the_hub_tags() -> None:
    goals = {g.name: g for g in season_goals("2026")}
    for name, tags in (("blue_hub", (18, 19, 20, 21, 24, 25, 26, 27)),
                       ("red_hub", (2, 3, 4, 5, 8, 9, 10, 11))):
        goal = goals[name]
        centre = np.mean([tag_xy("2026", t) for t in tags], axis=0)
        # The tags sit in pairs (one centred, one offset) on four faces: their mean is the
        # hub's centre to within the offsets' asymmetry.
        assert np.linalg.norm(np.array(goal.centre[:2]) - centre) < 0.1
        assert goal.top == pytest.approx(72 * INCH, abs=0.005)
        xs = [x for x, _ in goal.footprint]
        assert max(xs) - min(xs) == pytest.approx(41.7 * INCH)  # across the flats
        assert goal.alliance == name.split("_")[0]
    assert goals["blue_hub"].centre[0] == pytest.approx(158.6 * INCH + 23.5 * INCH, abs=0.03)


def test_2024_speaker_goals_sit_over_the_speaker_tags() -> None:
    goals = {g.name: g for g in season_goals("2024")}
    for name, tag in (("blue_speaker", 7), ("red_speaker", 4)):
        x, y, z = goals[name].centre
        tx, ty = tag_xy("2024", tag)
        assert abs(y - ty) < 0.01 and abs(x - tx) < 0.3
        assert 1.98 < z < 2.12  # above the alliance wall, as the opening is


@pytest.mark.parametrize("season", PIECE_SEASONS)
def test_stations_feed_into_the_field(season: str) -> None:
    length, width = field_size(season)
    found = stations(season)
    assert {s.alliance for s in found} == {"blue", "red"}
    for s in found:
        assert 0.0 < s.x < length and 0.0 < s.y < width and s.z > 0.0
        assert math.isclose(math.hypot(*s.direction), 1.0, rel_tol=1e-12)
        assert s.speed > 0.0
        # It points into the field: a few tenths of a second later it is further in.
        x = s.x + 0.2 * s.speed * s.direction[0]
        y = s.y + 0.2 * s.speed * s.direction[1]
        assert min(x, length - x) > min(s.x, length - s.x) or \
            min(y, width - y) > min(s.y, width - s.y)


@pytest.mark.parametrize("season", PIECE_SEASONS)
def test_fed_and_returned_pieces_appear_clear_of_the_elements(season: str) -> None:
    r = next(iter(season_piece_types(season).values())).radius
    spots = [(s.x, s.y, s.z) for s in stations(season)]
    spots += [(e.x, e.y, e.z) for exits in scored_exits(season).values() for e in exits]
    for x, y, z in spots:
        for ob in season_obstacles(season):
            assert z > ob.height or polygon_distance(ob, x, y) >= r, (x, y, ob.name)


def test_2026_outposts_are_centred_on_their_tags() -> None:
    by_name = {s.name: s for s in stations("2026")}
    assert by_name["blue_outpost"].y == pytest.approx(tag_xy("2026", 29)[1])
    assert by_name["red_outpost"].y == pytest.approx(tag_xy("2026", 13)[1], abs=0.001)  # image
    assert by_name["blue_outpost"].z == pytest.approx((28.1 + 5.91 / 2) * INCH)


def test_scored_2026_fuel_returns_to_the_neutral_zone_and_2024_notes_are_removed() -> None:
    _length, width = field_size("2026")
    exits = scored_exits("2026")
    assert set(exits) == {g.name for g in season_goals("2026")}
    hubs = {ob.name: ob for ob in season_obstacles("2026")}
    for name, element, side in (("blue_hub", "Blue hub", 1.0), ("red_hub", "Red hub", -1.0)):
        assert len(exits[name]) == 4
        far = max(side * x for x, _ in hubs[element].points)
        for e in exits[name]:
            assert side * e.x > far and side * e.vx > 0.0  # out of the face toward the middle
            assert 0.0 < e.y < width
    assert scored_exits("2024") == {"blue_speaker": [], "red_speaker": []}


def test_fuel_dropped_into_a_hub_scores_there_through_the_elements() -> None:
    season = "2026"
    types = list(season_piece_types(season).values())
    goals = season_goals(season)
    flight = Flight(types, goals, season_obstacles(season), field_size(season))
    centres = [g.centre for g in goals]
    pos = np.array([[x, y, 3.0] for x, y, _ in centres])
    vel = np.zeros_like(pos)
    spin = np.zeros_like(pos)
    scored = np.full(len(goals), -1)
    for _ in range(200):
        events = flight.step(np.zeros(len(goals), dtype=int), pos, vel, spin, 0.005)
        scored = np.maximum(scored, events.scored)
        assert not events.landed.any()
        if (scored >= 0).all():
            break
    assert scored.tolist() == list(range(len(goals)))


def test_red_data_are_the_blue_datas_images() -> None:
    length, width = field_size("2026")
    blue, red = season_goals("2026")
    image = sorted((round(length - x, 9), round(width - y, 9)) for x, y in blue.footprint)
    assert image == sorted((round(x, 9), round(y, 9)) for x, y in red.footprint)
    for a, b in itertools.pairwise(stations("2026")):
        assert (a.x + b.x, a.y + b.y) == pytest.approx((length, width))
