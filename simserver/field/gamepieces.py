"""Game pieces per season: the piece types, where they start, the goals they score in, the
human-player stations that feed them and where scored pieces come back.

    >>> sorted(season_piece_types("2026"))
    ['fuel']
    >>> len(starting_layout("2024"))
    11
    >>> [g.name for g in season_goals("2026")]
    ['blue_hub', 'red_hub']

Figures are nominal dimensions from the game manuals (section numbers below) unless marked.
"(approx.)" marks a figure read from a drawing, taken from a team's or a simulator's published
field constants, or estimated; "(estimate)" marks a physical property no manual gives. The
field frame is WPILib's: origin at the blue alliance wall's right corner, x toward red, y
left, z up, metres. Red-end data are the blue-end data mapped by the field's symmetry (2026
rotates about the field's centre, 2024 mirrors across x = length / 2), like the elements in
simserver.field.elements, whose positions the goals reuse.

2026 REBUILT
  FUEL: a 5.91 in (15.0 cm) high-density foam ball weighing 0.448-0.500 lb (manual §5.10.1);
  the mass here is the midpoint, 0.215 kg. Drag: Cd 0.47, a smooth sphere below the drag
  crisis (Re ≈ 1e5 at 10 m/s; Hoerner, Fluid-Dynamic Drag, ch. 3; NASA Glenn "Drag of a
  Sphere"), on its cross-section π·r² = 0.0177 m². Magnus lift coefficient 1.0 per unit spin
  ratio (estimate: measured CL ≈ 1-1.5·S for balls at S < 0.3, Nathan, Am. J. Phys. 76, 119,
  2008). Restitution 0.5 on carpet (estimate), friction 0.5 (estimate), rolling resistance
  0.03 (estimate).
  Starting layout (manual §6.3.4): 24 FUEL in each DEPOT, 24 in each OUTPOST CHUTE (off the
  field: the stations' stock here), up to 8 preloaded per ROBOT, the rest (360 to 408) in the
  NEUTRAL ZONE. The NEUTRAL ZONE pile fills a box 206.0 in across (y) by 72.0 in deep (x)
  with a 2.0 in divider along the CENTER LINE (§6.3.4.1), centred on the field's centre
  (approx.: the manual's figure). The pile here is hexagonally packed with 1 mm of clearance:
  6 columns of 34 on each side of the divider hold exactly 408, the manual's most; with p
  pieces preloaded (48 by default) the 408 - p places nearest the field's long axis are used.
  DEPOT: 42.0 in wide (y) by 27.0 in deep (x) along the ALLIANCE WALL, of 3.0 in barriers
  (§5.7); its centre is 75.93 in left of the field's centre line (approx.: Mechanical-
  Advantage/RobotCode2026Public, FieldConstants.java, Depot.distanceFromCenterY). Its 24 FUEL
  sit in a 4 × 6 grid at 6 in pitch inside the barriers (the manual: "may not be in a uniform
  layout").
  Goals: each HUB's top opening is a hexagon 41.7 in across (§5.4; read here as across the
  flats, with a flat facing each alliance wall (approx.)), centred on the HUB fitted to its
  AprilTags in simserver.field.elements; the region reaches from the opening's front edge,
  72 in (1.83 m, the element's height) down 0.25 m into the funnel (approx.). The HUB's net at
  the back (taller than the opening) is not modelled.
  Scored FUEL returns to the NEUTRAL ZONE through one of four exits at the HUB's base facing it
  (§5.4, Figure 5-8 "HUB exits (approximation)"). Exits here: spread evenly across the 47 in
  face (at ±5.875 in and ±17.625 in from its centre), 0.10 m up, leaving at 2.0 m/s fanned
  ±11.25° and ±33.75° from straight out (approx.: the figure; the same layout as maple-sim's
  RebuiltHub in Shenzhen-Robotics-Alliance/maple-sim).
  Stations: each OUTPOST's CHUTE opening is 31.8 in wide by 7.0 in tall with its bottom 28.1 in
  off the floor, fed by a 15° sloped CHUTE holding about 25 FUEL (§5.9.2; 24 staged, §6.3.4),
  centred on the OUTPOST AprilTag 29 (13 at the red end) (§5.11: one tag per OUTPOST is
  centred on the openings; which one: Mechanical-Advantage/RobotCode2026Public,
  FieldConstants.java, Outpost.centerPoint). FUEL leaves the opening down the chute's slope at
  1.5 m/s (estimate). The OUTPOST at the blue end belongs to blue.
  Walls (simserver.models.pieces.flight): guardrails 20.0 in tall (§5.2).

2024 CRESCENDO
  NOTE: a foam ring 14 in outside diameter, 10 in inside, 2 in thick (manual §5.10), weighing
  8.3 oz (0.235 kg; AndyMark am-4999, the official NOTE). It flies edge-on: drag Cd 0.9 on
  14 in × 2 in = 0.0181 m² (estimate: a short cylinder across the flow, Hoerner ch. 3); no
  lift. Restitution 0.2, friction 0.6 (estimates: it barely bounces and slides flat).
  Starting layout (manual §6.3.4): 11 NOTES, one on each spike mark: 3 in each wing at 114 in
  from the alliance wall, 57 in apart starting 161.638 in from the right guardrail, and 5 on
  the CENTER LINE, 66 in apart starting 29.638 in from it (Mechanical-Advantage/RobotCode2024,
  FieldConstants.java, StagingLocations, drawn from the field drawings).
  Goals: each SPEAKER's opening, 41.05 in wide (y from 197.765 to 238.815 in), its lower edge
  at the alliance wall 78.324 in up and its upper edge 18.055 in out and 83.091 in up
  (Mechanical-Advantage/RobotCode2024, FieldConstants.java, Speaker); the region is the box
  spanned by those corners (approx.: the opening is a slanted plane). The AMP is not modelled
  (NOTES are placed into it, not shot).
  Scored NOTES are removed ([] in scored_exits).
  Stations: each SOURCE's face runs through its AprilTags 9, 10 (1, 2 at the red end); a NOTE
  appears 0.2 m in front of the midpoint of the two tags, 0.9 m up, and leaves along the
  tags' facing, 20° down, at 2.0 m/s (estimates). The SOURCE at the blue end belongs to red.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from simserver.field.elements import SYMMETRY, season_obstacles
from simserver.field.seasons import field_size, tag_layout
from simserver.models.obstacles import Obstacle
from simserver.models.pieces.goals import Goal
from simserver.models.pieces.types import PieceType
from simserver.units import INCH

OUNCE = 0.028349523125  # kg
POUND = 0.45359237  # kg


class Placement(NamedTuple):
    """One piece at the start: its type's name, field position (m; z None: resting on the
    carpet) and yaw (rad)."""

    type: str
    x: float
    y: float
    z: float | None = None
    yaw: float = 0.0


@dataclass(frozen=True)
class Station:
    """A human-player station: where a fed piece appears (x, y, z m), the station's facing
    (heading, rad), the piece's direction (unit 3-vector, field frame) and speed (m/s), and the
    pieces staged in it at the start (stock)."""

    name: str
    alliance: str
    x: float
    y: float
    z: float
    heading: float
    direction: tuple[float, float, float]
    speed: float
    stock: int = 0


class Exit(NamedTuple):
    """Where a scored piece comes back into the field: position (m) and velocity (m/s)."""

    x: float
    y: float
    z: float
    vx: float
    vy: float
    vz: float


_TYPES: dict[str, dict[str, PieceType]] = {
    "2026": {
        "fuel": PieceType("fuel", "sphere", radius=5.91 / 2 * INCH, height=5.91 * INCH,
                          mass=(0.448 + 0.500) / 2 * POUND, restitution=0.5, friction=0.5,
                          rolling=0.03, drag_coefficient=0.47,
                          drag_area=math.pi * (5.91 / 2 * INCH) ** 2, class_id=0,
                          lift_coefficient=1.0),
    },
    "2024": {
        "note": PieceType("note", "ring", radius=7.0 * INCH, height=2.0 * INCH,
                          mass=8.3 * OUNCE, restitution=0.2, friction=0.6, rolling=0.6,
                          drag_coefficient=0.9, drag_area=14.0 * INCH * 2.0 * INCH, class_id=0),
    },
}

PIECE_SEASONS: tuple[str, ...] = tuple(sorted(_TYPES))
"""Seasons with game-piece data, oldest first."""


def _check(season: str) -> None:
    if season not in _TYPES:
        raise ValueError(f"no game-piece data for season {season!r} "
                         f"(known: {', '.join(PIECE_SEASONS)})")


def season_piece_types(season: str) -> dict[str, PieceType]:
    """The season's game-piece types by name."""
    _check(season)
    return dict(_TYPES[season])


# --- symmetry ----------------------------------------------------------------------------------

def _image(season: str, x: float, y: float) -> tuple[float, float]:
    length, width = field_size(season)
    return (length - x, y) if SYMMETRY[season] == "mirror" else (length - x, width - y)


def _image_direction(season: str, dx: float, dy: float) -> tuple[float, float]:
    return (-dx, dy) if SYMMETRY[season] == "mirror" else (-dx, -dy)


def _obstacle(season: str, name: str) -> Obstacle:
    return next(ob for ob in season_obstacles(season) if ob.name == name)


# --- starting layouts ----------------------------------------------------------------------------

NEUTRAL_ZONE_MOST = 408
"""FUEL in the 2026 NEUTRAL ZONE when no robot preloads any (manual §6.3.4)."""


def _neutral_zone_2026(count: int) -> list[Placement]:
    """``count`` FUEL hex-packed in the 2026 NEUTRAL ZONE box, nearest the long axis first."""
    length, width = field_size("2026")
    pitch = 5.91 * INCH + 0.001
    r = 5.91 * INCH / 2
    across, half_depth, divider = 206.0 * INCH, 36.0 * INCH, 2.0 * INCH
    y0 = width / 2 - across / 2
    spots = []
    for side in (-1.0, 1.0):
        for col in range(6):
            x = length / 2 + side * (divider / 2 + r + col * pitch * math.sqrt(3) / 2)
            shift = r + (pitch / 2 if col % 2 else 0.0)
            spots += [(x, y0 + shift + row * pitch) for row in range(34)]
    assert all(abs(x - length / 2) + r <= half_depth for x, _ in spots)
    spots.sort(key=lambda p: (abs(p[1] - width / 2), abs(p[0] - length / 2), p))
    return [Placement("fuel", x, y) for x, y in spots[:count]]


def _depots_2026() -> list[Placement]:
    _, width = field_size("2026")
    cy = width / 2 + 75.93 * INCH
    blue = [((3 + 6 * i) * INCH, cy + (-15 + 6 * j) * INCH) for i in range(4) for j in range(6)]
    red = [_image("2026", x, y) for x, y in blue]
    return [Placement("fuel", x, y) for x, y in blue + red]


def starting_layout(season: str, preloaded: int = 48) -> list[Placement]:
    """Where the season's pieces start on the field. preloaded: 2026 FUEL preloaded in robots
    (0 to 48), which the NEUTRAL ZONE holds fewer of."""
    _check(season)
    if season == "2026":
        if not 0 <= preloaded <= 48:
            raise ValueError(f"preloaded must be 0..48 (8 per robot), got {preloaded}")
        return _neutral_zone_2026(NEUTRAL_ZONE_MOST - preloaded) + _depots_2026()
    length, _ = field_size(season)
    wing = [(114.0 * INCH, (161.638 + 57.0 * i) * INCH) for i in range(3)]
    centre = [(length / 2, (29.638 + 66.0 * i) * INCH) for i in range(5)]
    spots = wing + centre + [_image(season, x, y) for x, y in wing]
    return [Placement("note", x, y) for x, y in spots]


# --- goals ---------------------------------------------------------------------------------------

HUB_OPENING_DEPTH = 0.25
"""m: how far below the 2026 HUB's rim its goal region reaches (approx.)."""


def _hexagon(cx: float, cy: float, across_flats: float) -> tuple[tuple[float, float], ...]:
    """Regular hexagon with flats facing ±x, counter-clockwise."""
    radius = across_flats / math.sqrt(3)
    return tuple((cx + radius * math.cos(math.radians(30 + 60 * k)),
                  cy + radius * math.sin(math.radians(30 + 60 * k))) for k in range(6))


def _speaker_box(x0: float, x1: float, y0: float, y1: float) -> tuple[tuple[float, float], ...]:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


@cache
def _goals(season: str) -> tuple[Goal, ...]:
    if season == "2026":
        goals = []
        for side in ("Blue", "Red"):
            hub = _obstacle(season, f"{side} hub")
            cx = sum(x for x, _ in hub.points) / len(hub.points)
            cy = sum(y for _, y in hub.points) / len(hub.points)
            goals.append(Goal(f"{side.lower()}_hub", side.lower(), _hexagon(cx, cy, 41.7 * INCH),
                              hub.height - HUB_OPENING_DEPTH, hub.height))
        return tuple(goals)
    length, _ = field_size(season)
    depth, y0, y1 = 18.055 * INCH, 197.765 * INCH, 238.815 * INCH
    bottom, top = 78.324 * INCH, 83.091 * INCH
    return (Goal("blue_speaker", "blue", _speaker_box(0.0, depth, y0, y1), bottom, top),
            Goal("red_speaker", "red", _speaker_box(length - depth, length, y0, y1),
                 bottom, top))


def season_goals(season: str) -> list[Goal]:
    """The season's scoring goals as 3-D regions (the index a Flight reports)."""
    _check(season)
    return list(_goals(season))


# --- human-player stations ------------------------------------------------------------------------

def _tag(season: str, tag: int) -> tuple[float, float, float]:
    """(x, y, facing rad) of an AprilTag of the season's official layout."""
    pose = tag_layout(season).getTagPose(tag)
    assert pose is not None
    return pose.X(), pose.Y(), pose.rotation().Z()


def _stations_2026() -> list[Station]:
    _, y, _ = _tag("2026", 29)
    r = 5.91 * INCH / 2
    x, z = r + 0.005, (28.1 * INCH) + r
    slope = math.radians(15.0)
    blue = Station("blue_outpost", "blue", x, y, z, 0.0,
                   (math.cos(slope), 0.0, -math.sin(slope)), 1.5, stock=24)
    rx, ry = _image("2026", x, y)
    dx, dy = _image_direction("2026", blue.direction[0], blue.direction[1])
    red = Station("red_outpost", "red", rx, ry, z, math.pi, (dx, dy, blue.direction[2]), 1.5,
                  stock=24)
    return [blue, red]


def _stations_2024() -> list[Station]:
    (x9, y9, facing), (x10, y10, _) = _tag("2024", 9), _tag("2024", 10)
    ahead, down = 0.2, math.radians(20.0)
    x = (x9 + x10) / 2 + ahead * math.cos(facing)
    y = (y9 + y10) / 2 + ahead * math.sin(facing)
    direction = (math.cos(down) * math.cos(facing), math.cos(down) * math.sin(facing),
                 -math.sin(down))
    at_blue_end = Station("red_source", "red", x, y, 0.9, facing, direction, 2.0)
    rx, ry = _image("2024", x, y)
    dx, dy = _image_direction("2024", direction[0], direction[1])
    at_red_end = Station("blue_source", "blue", rx, ry, 0.9, math.atan2(dy, dx),
                         (dx, dy, direction[2]), 2.0)
    return [at_blue_end, at_red_end]


def stations(season: str) -> list[Station]:
    """The season's human-player stations."""
    _check(season)
    return _stations_2026() if season == "2026" else _stations_2024()


# --- where scored pieces come back ----------------------------------------------------------------

HUB_EXIT_SPEED = 2.0
"""m/s: FUEL leaving a 2026 HUB exit (approx.)."""
HUB_EXIT_HEIGHT = 0.10
"""m: centre height of FUEL leaving a 2026 HUB exit (approx.)."""


def _hub_exits_2026(side: str) -> list[Exit]:
    hub = _obstacle("2026", "Blue hub")
    x1 = max(x for x, _ in hub.points)
    cy = sum(y for _, y in hub.points) / len(hub.points)
    out = x1 + 5.91 * INCH / 2 + 0.01
    exits = []
    for offset, yaw in ((-17.625, -33.75), (-5.875, -11.25), (5.875, 11.25), (17.625, 33.75)):
        x, y = out, cy + offset * INCH
        vx = HUB_EXIT_SPEED * math.cos(math.radians(yaw))
        vy = HUB_EXIT_SPEED * math.sin(math.radians(yaw))
        if side == "Red":
            x, y = _image("2026", x, y)
            vx, vy = _image_direction("2026", vx, vy)
        exits.append(Exit(x, y, HUB_EXIT_HEIGHT, vx, vy, 0.0))
    return exits


def scored_exits(season: str) -> dict[str, list[Exit]]:
    """Goal name -> where pieces scored in it come back into the field; [] = removed."""
    _check(season)
    if season == "2026":
        return {f"{side.lower()}_hub": _hub_exits_2026(side) for side in ("Blue", "Red")}
    return {goal.name: [] for goal in _goals(season)}
