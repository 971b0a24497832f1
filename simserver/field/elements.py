"""Static field elements per season: the large fixed structures a robot can bump into.

    >>> [ob.name for ob in season_obstacles("2025")][:2]
    ['Blue reef', 'Red reef']

Positions come from the official AprilTag layouts bundled with robotpy-apriltag wherever tags
sit on an element; sizes the tags cannot give come from the game manuals (nominal dimensions)
or, where marked, from community measurements of the official drawings, and are approximate.
Every element is fitted to the tags of both alliances (the red tags mapped onto the blue end by
the field's symmetry) and then mapped back, so the two alliances' elements are exact images.

2022 RAPID REACT (rotational symmetry)
  Hub: a square on the four lower-hub tags 40-43 (faces, apothem ≈ 0.874 m from the tags;
  the tags also give the 24° rotation). The corners between the four faces are modelled square;
  the real base is not (approximate there). Height 2.64 m (upper hub rim, 8 ft 8 in, manual).
  Terminals: the corner triangle cut off by the line through terminal tags 5-7 / 15-17 (the
  manual bounds the field by the terminals' front faces); the layout's yaw for tags 5-7 (46.3°)
  disagrees with their positions (43.75°), so the face is fitted through the positions.
  Height 1.98 m assumed (alliance wall height).
  Hangar corner uprights: the truss post carrying tags 1 and 2 (11 and 12): its +x and -y faces
  from the tags; its cross-section (≈0.33 m × 0.31 m) assumes each tag is centred on its face.
  Height 2.4 m approximate (the traversal rung is about 7 ft 7 in). The hangar's other uprights
  stand at the alliance wall and guardrail and are not modelled.
Not modelled: tarmacs and launch pads (tape).

2023 CHARGED UP (mirror symmetry)
  Grids: x from the alliance wall to 54.25 in (1.378 m, front edge, community-measured from the
  drawings), y from the guardrail to 18 ft (5.486 m, approximate); they enclose the cube-node
  tags 6-8 (1-3). Height 1.17 m approximate (high cone node, about 46 in).
  Charge stations: 76.125 in (1.934 m) deep from x = 115.125 in to 191.25 in, 97.25 in (2.470 m)
  wide (manual-derived community numbers), centred in y on tag 7 (2), the middle grid's cube
  node. Height 0.25 m approximate. Real robots drive onto the charge station; as an obstacle it
  is a solid block, so filter it out by name where docking matters.
Not modelled: the 1 ft barrier between community and loading zone and the double substations
(their extents are not tagged and not known here).

2024 CRESCENDO (mirror symmetry)
  Stage legs: the stage centre is the centroid of the three stage tags 14-16 (11-13), which face
  out at 0° and ±120°; the legs stand opposite those faces at 1.50 m from the centre
  (approximate: community measurements give 1.49-1.52 m), each an octagon about 0.30 m across
  (approximate). Height 2.0 m, a rough figure. The stage platform and core are above robot
  height and are not obstacles here.
  Subwoofers: centred in y on the speaker's centre tag 7 (4); 0.908 m deep, 1.06 m across the
  front face, sides at 60° to the wall (community measurements of the drawings, approximate).
  Height 0.6 m, a rough figure.
  Sources: the corner triangle cut off by the line through source tags 9, 10 (1, 2); the source
  at the blue end belongs to the red alliance. Height 1.98 m assumed (alliance wall height).

2025 REEFSCAPE (rotational symmetry)
  Reefs: regular hexagons on the six reef tags 17-22 (6-11): centre, apothem (≈0.832 m, i.e.
  5 ft 5½ in across the flats as in the manual) and orientation from the tags. Height 1.83 m
  approximate (level 4 branches at about 6 ft).
  Coral stations: the corner triangles cut off by the station face through tag 12 or 13 (1, 2)
  along the tag's facing. Height 1.98 m assumed (alliance wall height).
Not modelled: the barge (elevated; robots drive under it between the cages; its posts are not
tagged and their positions are not known here) and the processors (flush with the guardrail).

2026 REBUILT (rotational symmetry)
  Hubs: rectangles whose four faces come from the hub tags 18-21, 24-27 (2-5, 8-11), 1.207 m
  across (the manual's nominal 47 in is 1.194 m). Height 1.83 m (front edge of the opening,
  72 in, manual; the net at the back is taller).
  Trench legs: the solid part of each trench between the lane under its arm and the bump:
  y from 50.34 in (1.279 m, the lane width) to 65.65 in (1.668 m, the trench width) from the
  guardrail, 47.0 in (1.194 m) deep in x (manual), centred in x on the trench tags 17, 28
  (1, 6, 7, 12, 22, 23). Height 1.022 m (40.25 in, manual).
Not modelled: bumps (robots drive over them), depots (1 in tall), outposts (part of the
boundary), the towers (their floor plate is drivable, the uprights' position along x is not
known here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Literal, NamedTuple

from simserver.field.seasons import SEASONS, field_size, tag_layout
from simserver.models.obstacles import Obstacle
from simserver.units import INCH

ALLIANCE_WALL_HEIGHT = 1.98  # m, about 6 ft 6 in: assumed for corner stations
SYMMETRY: dict[str, Literal["mirror", "rotate"]] = {
    "2022": "rotate", "2023": "mirror", "2024": "mirror", "2025": "rotate", "2026": "rotate",
}

Point = tuple[float, float]


class Anchor(NamedTuple):
    """An AprilTag an element was fitted to.

    relation "face": the tag's centre lies on the element's boundary and the tag faces out of
    it; "inside": the tag's centre lies within the element.
    """

    element: str
    tag: int
    relation: Literal["face", "inside"]


@dataclass(frozen=True)
class _Tag:
    x: float  # m
    y: float  # m
    yaw: float  # rad, direction the tag faces


@dataclass
class _Piece:
    """One element fitted at the blue end (or at the centre, if it is its own image).

    name: format string with {side} (Blue/Red) and {end} (blue/red). anchors: (blue-end tag,
    relation); the red partner tags are found by symmetry.
    """

    name: str
    points: list[Point]
    height: float
    anchors: list[tuple[int, Literal["face", "inside"]]] = field(default_factory=list)
    own_image: bool = False


class _Fit:
    """Tag access for one season, with each blue-end tag's red partner mapped onto it."""

    def __init__(self, season: str):
        layout = tag_layout(season)
        self.tags = {t.ID: _Tag(t.pose.X(), t.pose.Y(), t.pose.rotation().Z())
                     for t in layout.getTags()}
        self.length, self.width = field_size(season)
        self.mirror = SYMMETRY[season] == "mirror"

    def image(self, x: float, y: float) -> Point:
        """Where the field's symmetry takes (x, y), m."""
        return (self.length - x, y) if self.mirror else (self.length - x, self.width - y)

    def image_yaw(self, yaw: float) -> float:
        return math.pi - yaw if self.mirror else yaw + math.pi

    def partner(self, tag: int) -> int:
        """The tag that the field's symmetry puts where ``tag`` is (within 5 cm)."""
        t = self.tags[tag]
        x, y = self.image(t.x, t.y)
        best = min(self.tags, key=lambda k: math.hypot(self.tags[k].x - x, self.tags[k].y - y))
        if math.hypot(self.tags[best].x - x, self.tags[best].y - y) > 0.05:
            raise ValueError(f"tag {tag} has no symmetric partner in the layout")
        return best

    def both(self, tags: Sequence[int]) -> list[_Tag]:
        """The given tags and their partners, the partners mapped onto them."""
        out = []
        for k in tags:
            out.append(self.tags[k])
            p = self.tags[self.partner(k)]
            x, y = self.image(p.x, p.y)
            out.append(_Tag(x, y, self.image_yaw(p.yaw)))
        return out


def _mean_direction(angles: Sequence[float], fold: int = 1) -> float:
    """Circular mean of angles (rad) taken modulo 2π/fold."""
    s = sum(math.sin(fold * a) for a in angles)
    c = sum(math.cos(fold * a) for a in angles)
    return math.atan2(s, c) / fold


def _face(tags: Sequence[_Tag]) -> tuple[float, float, float]:
    """The flat face the tags sit on: (nx, ny, offset m), n·p = offset, n facing like them.

    Tags spread along the face fix it by their positions (least squares); tags at one spot
    fix it by their mean position and facing.
    """
    mx = sum(t.x for t in tags) / len(tags)
    my = sum(t.y for t in tags) / len(tags)
    facing = _mean_direction([t.yaw for t in tags])
    fx, fy = math.cos(facing), math.sin(facing)
    if max(math.hypot(t.x - mx, t.y - my) for t in tags) > 0.05:
        sxx = sum((t.x - mx) ** 2 for t in tags)
        syy = sum((t.y - my) ** 2 for t in tags)
        sxy = sum((t.x - mx) * (t.y - my) for t in tags)
        along = 0.5 * math.atan2(2.0 * sxy, sxx - syy)
        nx, ny = -math.sin(along), math.cos(along)
        if nx * fx + ny * fy < 0.0:
            nx, ny = -nx, -ny
    else:
        nx, ny = fx, fy
    return nx, ny, nx * mx + ny * my


def _regular(cx: float, cy: float, apothem: float, first_normal: float, sides: int
             ) -> list[Point]:
    """CCW regular polygon with face normals at first_normal + 2πk/sides, m and rad."""
    half = math.pi / sides
    radius = apothem / math.cos(half)
    return [(cx + radius * math.cos(first_normal + half * (2 * k + 1)),
             cy + radius * math.sin(first_normal + half * (2 * k + 1))) for k in range(sides)]


def _fit_regular(tags: Sequence[_Tag], sides: int) -> tuple[float, float, float, float]:
    """(cx, cy, apothem, first face normal) of a regular polygon with tags on its faces."""
    cx = sum(t.x for t in tags) / len(tags)
    cy = sum(t.y for t in tags) / len(tags)
    first = _mean_direction([t.yaw for t in tags], sides)
    step = 2.0 * math.pi / sides
    total = 0.0
    for t in tags:
        k = round((t.yaw - first) / step)
        n = first + k * step
        total += (t.x - cx) * math.cos(n) + (t.y - cy) * math.sin(n)
    return cx, cy, total / len(tags), first


def _ccw(points: list[Point]) -> list[Point]:
    area = sum(x1 * y2 - x2 * y1 for (x1, y1), (x2, y2)
               in zip(points, points[1:] + points[:1], strict=True))
    return points if area > 0 else points[::-1]


def _cut_corner(face: tuple[float, float, float], corner: Point) -> list[Point]:
    """The triangle a face line cuts off a field corner (the walls x = cx and y = cy)."""
    nx, ny, off = face
    cx, cy = corner
    return _ccw([(cx, cy), ((off - ny * cy) / nx, cy), (cx, (off - nx * cx) / ny)])


def _rectangle(x0: float, y0: float, x1: float, y1: float) -> list[Point]:
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def _season_2022(fit: _Fit) -> list[_Piece]:
    hub_tags = (40, 41, 42, 43)
    cx, cy, apothem, first = _fit_regular(fit.both(hub_tags), 4)
    hub = _Piece("Hub", _regular(cx, cy, apothem, first, 4), 2.64,
                 [(k, "face") for k in hub_tags] + [(k, "inside") for k in (50, 51, 52, 53)],
                 own_image=True)
    terminal = _Piece("{side} terminal", _cut_corner(_face(fit.both((5, 6, 7))), (0.0, 0.0)),
                      ALLIANCE_WALL_HEIGHT, [(5, "face"), (6, "face"), (7, "face")])
    east, south = fit.both((1,)), fit.both((2,))  # tag 1 faces +x, tag 2 faces -y
    x1 = sum(t.x for t in east) / len(east)
    y0 = sum(t.y for t in south) / len(south)
    x0 = x1 - 2.0 * (x1 - sum(t.x for t in south) / len(south))
    y1 = y0 + 2.0 * (sum(t.y for t in east) / len(east) - y0)
    upright = _Piece("{side} hangar upright", _rectangle(x0, y0, x1, y1), 2.4,
                     [(1, "face"), (2, "face")])
    return [hub, terminal, upright]


def _season_2023(fit: _Fit) -> list[_Piece]:
    grids = _Piece("{side} grids", _rectangle(0.0, 0.0, 54.25 * INCH, 18 * 12 * INCH), 1.17,
                   [(6, "inside"), (7, "inside"), (8, "inside")])
    middle = fit.both((7,))
    cy = sum(t.y for t in middle) / len(middle)
    half = 97.25 * INCH / 2
    station = _Piece("{side} charge station",
                     _rectangle(115.125 * INCH, cy - half, 191.25 * INCH, cy + half), 0.25)
    return [grids, station]


def _season_2024(fit: _Fit) -> list[_Piece]:
    stage = fit.both((14, 15, 16))
    cx, cy, _, _ = _fit_regular(stage, 3)
    pieces = []
    for k, where in ((14, "podium"), (15, "source side"), (16, "amp side")):
        out = fit.tags[k].yaw + math.pi
        lx, ly = cx + 1.50 * math.cos(out), cy + 1.50 * math.sin(out)
        pieces.append(_Piece(f"{{side}} stage leg ({where})",
                             _regular(lx, ly, 0.15, out, 8), 2.0))
    speaker = fit.both((7,))
    sy = sum(t.y for t in speaker) / len(speaker)
    depth, front = 0.908, 1.06 / 2
    back = front + depth * math.tan(math.radians(30.0))
    pieces.append(_Piece("{side} subwoofer", [(0.0, sy - back), (depth, sy - front),
                                              (depth, sy + front), (0.0, sy + back)], 0.6))
    pieces.append(_Piece("Source at the {end} end",
                         _cut_corner(_face(fit.both((9, 10))), (0.0, 0.0)),
                         ALLIANCE_WALL_HEIGHT, [(9, "face"), (10, "face")]))
    return pieces


def _season_2025(fit: _Fit) -> list[_Piece]:
    reef_tags = (17, 18, 19, 20, 21, 22)
    cx, cy, apothem, first = _fit_regular(fit.both(reef_tags), 6)
    return [
        _Piece("{side} reef", _regular(cx, cy, apothem, first, 6), 1.83,
               [(k, "face") for k in reef_tags]),
        _Piece("{side} coral station (right)", _cut_corner(_face(fit.both((12,))), (0.0, 0.0)),
               ALLIANCE_WALL_HEIGHT, [(12, "face")]),
        _Piece("{side} coral station (left)",
               _cut_corner(_face(fit.both((13,))), (0.0, fit.width)),
               ALLIANCE_WALL_HEIGHT, [(13, "face")]),
    ]


def _season_2026(fit: _Fit) -> list[_Piece]:
    faces = {k: _face(fit.both(tags)) for k, tags in
             {"+x": (19, 20), "-x": (25, 26), "+y": (21, 24), "-y": (18, 27)}.items()}
    x1, x0 = faces["+x"][2], -faces["-x"][2]
    y1, y0 = faces["+y"][2], -faces["-y"][2]
    hub = _Piece("{side} hub", _rectangle(x0, y0, x1, y1), 1.83,
                 [(k, "face") for k in (18, 19, 20, 21, 24, 25, 26, 27)])
    arm = fit.both((17, 28))
    ax = sum(t.x for t in arm) / len(arm)
    half, lane, trench = 47.0 * INCH / 2, 50.34 * INCH, 65.65 * INCH
    right = _Piece("{side} trench leg (right)", _rectangle(ax - half, lane, ax + half, trench),
                   1.022)
    left = _Piece("{side} trench leg (left)",
                  _rectangle(ax - half, fit.width - trench, ax + half, fit.width - lane), 1.022)
    return [hub, right, left]


_BUILDERS = {"2022": _season_2022, "2023": _season_2023, "2024": _season_2024,
             "2025": _season_2025, "2026": _season_2026}


@cache
def _build(season: str) -> tuple[tuple[Obstacle, ...], tuple[Anchor, ...]]:
    if season not in _BUILDERS:
        raise ValueError(f"no field elements for season {season!r}; known: {', '.join(SEASONS)}")
    fit = _Fit(season)
    obstacles: list[Obstacle] = []
    anchors: list[Anchor] = []
    for piece in _BUILDERS[season](fit):
        blue = piece.name.format(side="Blue", end="blue")
        obstacles.append(Obstacle(blue, tuple(piece.points), piece.height))
        red = blue
        if not piece.own_image:
            red = piece.name.format(side="Red", end="red")
            image = [fit.image(x, y) for x, y in piece.points]
            obstacles.append(Obstacle(red, tuple(image[::-1] if fit.mirror else image),
                                      piece.height))
        for tag, relation in piece.anchors:
            anchors.append(Anchor(blue, tag, relation))
            anchors.append(Anchor(red, fit.partner(tag), relation))
    return tuple(obstacles), tuple(dict.fromkeys(anchors))


def season_obstacles(season: str) -> tuple[Obstacle, ...]:
    """The season's large fixed field elements as convex CCW polygons, field frame, m."""
    return _build(season)[0]


def season_anchors(season: str) -> tuple[Anchor, ...]:
    """Which official AprilTags each of ``season_obstacles(season)`` was fitted to."""
    return _build(season)[1]
