"""Per-season field elements: geometry, symmetry, and agreement with the official tag layouts.

References: the AprilTag layouts bundled with robotpy-apriltag (loaded here independently of
the module under test) and nominal dimensions from the game manuals.
"""

from __future__ import annotations

import math

import pytest
from robotpy_apriltag import AprilTagField, AprilTagFieldLayout

from simserver.field.elements import SEASONS, season_anchors, season_obstacles
from simserver.models.collision import Obstacles

LAYOUTS = {
    "2022": AprilTagField.k2022RapidReact,
    "2023": AprilTagField.k2023ChargedUp,
    "2024": AprilTagField.k2024Crescendo,
    "2025": AprilTagField.k2025ReefscapeWelded,
    "2026": AprilTagField.k2026RebuiltWelded,
}
# How each season's field maps the blue end onto the red end (the game manuals: 2023 and
# 2024 are mirrored, the others rotated by 180°); test_layouts_have_the_expected_symmetry
# checks this table against the tags themselves.
SYMMETRY = {"2022": "rotate", "2023": "mirror", "2024": "mirror", "2025": "rotate",
            "2026": "rotate"}
INCH = 0.0254


def layout(season: str):
    return AprilTagFieldLayout.loadField(LAYOUTS[season])


def tags(season: str) -> dict[int, tuple[float, float, float]]:
    """Tag id -> (x m, y m, yaw rad)."""
    return {t.ID: (t.pose.X(), t.pose.Y(), t.pose.rotation().Z())
            for t in layout(season).getTags()}


def image(season: str, x: float, y: float) -> tuple[float, float]:
    lay = layout(season)
    length, width = lay.getFieldLength(), lay.getFieldWidth()
    return (length - x, y) if SYMMETRY[season] == "mirror" else (length - x, width - y)


def edges(points):
    return list(zip(points, points[1:] + points[:1], strict=True))


def signed_inside(points, px: float, py: float) -> float:
    """Distance (m) of (px, py) inside a CCW convex polygon; negative outside."""
    return min(((x2 - x1) * (py - y1) - (y2 - y1) * (px - x1)) / math.hypot(x2 - x1, y2 - y1)
               for (x1, y1), (x2, y2) in edges(points))


def nearest_edge(points, px: float, py: float):
    """(distance m, outward unit normal) of the polygon edge nearest to (px, py)."""
    best = None
    for (x1, y1), (x2, y2) in edges(points):
        dx, dy = x2 - x1, y2 - y1
        t = max(0.0, min(1.0, ((px - x1) * dx + (py - y1) * dy) / (dx * dx + dy * dy)))
        dist = math.hypot(px - x1 - t * dx, py - y1 - t * dy)
        length = math.hypot(dx, dy)
        if best is None or dist < best[0]:
            best = (dist, (dy / length, -dx / length))
    return best


def by_name(season: str):
    return {ob.name: ob for ob in season_obstacles(season)}


@pytest.mark.parametrize("season", SEASONS)
def test_layouts_have_the_expected_symmetry(season):
    # Every tag has a partner where the symmetry takes it (5 cm: the layouts' own spread).
    all_tags = tags(season)
    for x, y, _ in all_tags.values():
        ix, iy = image(season, x, y)
        assert min(math.hypot(ix - qx, iy - qy) for qx, qy, _ in all_tags.values()) < 0.05


@pytest.mark.parametrize("season", SEASONS)
def test_every_element_is_convex_ccw_and_named_once(season):
    obstacles = season_obstacles(season)
    assert len(obstacles) >= 2
    assert len({ob.name for ob in obstacles}) == len(obstacles)
    for ob in obstacles:
        pts = ob.points
        for (x0, y0), (x1, y1), (x2, y2) in zip(pts, pts[1:] + pts[:1], pts[2:] + pts[:2],
                                                strict=True):
            assert (x1 - x0) * (y2 - y1) - (y1 - y0) * (x2 - x1) > 0, ob.name  # left turns
        area = sum(xa * yb - xb * ya for (xa, ya), (xb, yb) in edges(pts)) / 2
        assert area > 0.01, ob.name  # CCW and not degenerate (> 100 cm²)
    Obstacles(obstacles, restitution=0.1, friction=0.3)  # the collision model accepts them


@pytest.mark.parametrize("season", SEASONS)
def test_every_element_lies_inside_the_field(season):
    lay = layout(season)
    length, width = lay.getFieldLength(), lay.getFieldWidth()
    for ob in season_obstacles(season):
        for x, y in ob.points:
            # 1e-9 m: rounding of elements built against a wall.
            assert -1e-9 <= x <= length + 1e-9 and -1e-9 <= y <= width + 1e-9, ob.name


@pytest.mark.parametrize("season", SEASONS)
def test_every_element_has_a_realistic_height(season):
    for ob in season_obstacles(season):
        assert 0.2 <= ob.height <= 3.0, ob.name  # m: from a charge station to the 2022 hub


@pytest.mark.parametrize("season", SEASONS)
def test_elements_are_symmetric_between_alliances(season):
    obstacles = season_obstacles(season)
    swap = {"Blue": "Red", "Red": "Blue", "blue": "red", "red": "blue"}
    for ob in obstacles:
        name = " ".join(swap.get(w, w) for w in ob.name.split(" "))
        (twin,) = [o for o in obstacles if o.name == name]
        mapped = [image(season, x, y) for x, y in ob.points]
        assert twin.height == ob.height
        assert len(twin.points) == len(mapped)
        # Same vertex set (order and start may differ); 1e-9 m: rounding.
        for x, y in mapped:
            assert min(math.hypot(x - tx, y - ty) for tx, ty in twin.points) < 1e-9, name


@pytest.mark.parametrize("season", SEASONS)
def test_elements_abut_or_enclose_the_tags_they_were_fitted_to(season):
    obstacles, all_tags = by_name(season), tags(season)
    anchors = season_anchors(season)
    for element, tag, relation in anchors:
        x, y, yaw = all_tags[tag]
        points = obstacles[element].points
        if relation == "inside":
            assert signed_inside(points, x, y) > 0.0, (element, tag)
            continue
        distance, (nx, ny) = nearest_edge(points, x, y)
        # The elements are fitted to both alliances' tags at once; the layouts place an
        # alliance's tags up to ~5 mm from where the other alliance's imply. 1 cm allows that.
        assert distance <= 0.01, (element, tag, distance)
        # Facing out of the element: 3° allows the 2022 layout's yaw for tags 5-7, which
        # disagrees with their positions by 2.5°.
        facing = math.degrees(math.acos(min(1.0, nx * math.cos(yaw) + ny * math.sin(yaw))))
        assert facing <= 3.0, (element, tag, facing)
    # Both alliances' elements are anchored, not just the blue ones.
    names = [a.element.lower() for a in anchors]
    assert sum("blue" in n for n in names) == sum("red" in n for n in names) > 0


def centroid(points) -> tuple[float, float]:
    return (sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points))


def test_2022_hub_is_centred_on_the_field_and_about_1_75_m_across():
    lay = layout("2022")
    hub = by_name("2022")["Hub"]
    assert centroid(hub.points) == pytest.approx(
        (lay.getFieldLength() / 2, lay.getFieldWidth() / 2), abs=1e-3)
    side = math.dist(hub.points[0], hub.points[1])
    assert side == pytest.approx(1.75, abs=0.02)  # twice the tags' 0.874 m apothem


def test_2023_charge_stations_are_centred_on_the_middle_cube_node_tags():
    obstacles, all_tags = by_name("2023"), tags("2023")
    for name, tag in (("Blue charge station", 7), ("Red charge station", 2)):
        pts = obstacles[name].points
        assert centroid(pts)[1] == pytest.approx(all_tags[tag][1], abs=0.01)
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        assert max(xs) - min(xs) == pytest.approx(76.125 * INCH, abs=1e-9)
        assert max(ys) - min(ys) == pytest.approx(97.25 * INCH, abs=1e-9)


def test_2024_stage_legs_surround_the_stage_tags_opposite_their_faces():
    obstacles, all_tags = by_name("2024"), tags("2024")
    for side, stage_tags in (("Blue", (14, 15, 16)), ("Red", (11, 12, 13))):
        legs = [ob for name, ob in obstacles.items() if name.startswith(f"{side} stage leg")]
        assert len(legs) == 3
        cx, cy = centroid([all_tags[k][:2] for k in stage_tags])
        # The legs' centre is the stage tags' centre (1 cm: both alliances' tags are fitted).
        assert centroid([centroid(leg.points) for leg in legs]) == pytest.approx(
            (cx, cy), abs=0.01)
        for k in stage_tags:  # one leg opposite each tag's facing, 1.50 m out (± 1 cm)
            yaw = all_tags[k][2]
            opposite = [leg for leg in legs if math.dist(centroid(leg.points), (
                cx - 1.5 * math.cos(yaw), cy - 1.5 * math.sin(yaw))) < 0.01]
            assert len(opposite) == 1, (side, k)


def test_2024_subwoofers_sit_on_the_alliance_walls_under_the_speaker_centre_tags():
    obstacles, all_tags = by_name("2024"), tags("2024")
    lay = layout("2024")
    for name, tag, wall_x in (("Blue subwoofer", 7, 0.0),
                              ("Red subwoofer", 4, lay.getFieldLength())):
        pts = obstacles[name].points
        assert centroid(pts)[1] == pytest.approx(all_tags[tag][1], abs=0.01)
        assert sum(abs(x - wall_x) < 1e-9 for x, _ in pts) == 2  # one face on the wall


def test_2025_reefs_are_5_ft_5_half_in_across_the_flats():
    obstacles, all_tags = by_name("2025"), tags("2025")
    for name, reef_tags in (("Blue reef", range(17, 23)), ("Red reef", range(6, 12))):
        pts = obstacles[name].points
        assert len(pts) == 6
        cx, cy = centroid(pts)
        assert (cx, cy) == pytest.approx(centroid([all_tags[k][:2] for k in reef_tags]),
                                         abs=1e-3)
        apothem = min(math.dist((cx, cy), ((ax + bx) / 2, (ay + by) / 2))
                      for (ax, ay), (bx, by) in edges(pts))
        assert 2 * apothem == pytest.approx(65.5 * INCH, abs=0.01)  # manual, ±1 cm


def test_2026_hubs_are_47_in_square():
    for name in ("Blue hub", "Red hub"):
        pts = by_name("2026")[name].points
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        # Manual: 47 in (1.194 m) nominal; the tags put the faces 1.207 m apart.
        assert max(xs) - min(xs) == pytest.approx(47 * INCH, abs=0.02)
        assert max(ys) - min(ys) == pytest.approx(47 * INCH, abs=0.02)


def test_2026_trench_legs_line_up_with_the_trench_tags():
    obstacles, all_tags = by_name("2026"), tags("2026")
    lay = layout("2026")
    width = lay.getFieldWidth()
    # Trench tags sit on the arm above the lane, centred on it (manual).
    for name, arm_tags, guardrail in (("Blue trench leg (right)", (17, 28), 0.0),
                                      ("Blue trench leg (left)", (22, 23), width),
                                      ("Red trench leg (right)", (1, 12), width),
                                      ("Red trench leg (left)", (6, 7), 0.0)):
        pts = obstacles[name].points
        ax, ay = centroid([all_tags[k][:2] for k in arm_tags])
        assert centroid(pts)[0] == pytest.approx(ax, abs=0.01)
        near = min(abs(y - guardrail) for _, y in pts)  # the lane runs from the guardrail
        assert abs(ay - guardrail) == pytest.approx(near / 2, abs=0.01)  # to the leg


def test_unknown_season_is_rejected():
    with pytest.raises(ValueError, match="2019"):
        season_obstacles("2019")
