"""Config schema of the game pieces (``[pieces]``), and the pieces a config puts on the field.

Declared with the field helpers of :mod:`simserver.config.fields`, like ``model.py``. Without a
``[pieces]`` table the field has no pieces (configs written before pieces existed run as they
did). With one, the season's starting layout is placed (``layout``), plus the pieces of
``[pieces.extra.<name>]``; ``[pieces.types.<name>]`` overrides keys of a season piece type or
defines a new type (then every key but ``lift_coefficient`` is required).

    [pieces]
    layout = "season"          # the [field] season's pieces where a match starts
    scored = "return"          # scored pieces come back where the season returns them

    [pieces.types.fuel]        # a season type, lighter
    mass = "0.2 kg"

    [pieces.extra.spare]
    type = "fuel"
    x = "3 m"
    y = "4 m"
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from typing import NamedTuple

from simserver.config.fields import (
    boolean,
    choice,
    integer,
    number,
    optional_quantity,
    quantity,
    table,
    text,
)
from simserver.config.issues import ConfigIssue, missing_name
from simserver.config.limits import DEG, LARGEST_FIELD
from simserver.field import gamepieces
from simserver.field.gamepieces import Exit, Placement, Station
from simserver.models.pieces.goals import Goal
from simserver.models.pieces.types import PieceType
from simserver.util.untrusted import excerpt

SHAPES = ("sphere", "ring", "cylinder")
TYPE_KEYS = ("shape", "radius", "height", "mass", "restitution", "friction", "rolling",
             "drag_coefficient", "drag_area", "class_id")
"""The keys a new piece type must give (``lift_coefficient`` defaults to 0)."""


@dataclass(frozen=True)
class PieceTypeConfig:
    """A piece type (`[pieces.types.<name>]`): a season type's keys to override, or a new
    type with every key given."""

    shape: str | None = choice(
        None, SHAPES, "`sphere` (a ball: rolls), `ring` (a torus lying flat: slides) or "
        "`cylinder` (lying on its side: rolls).", optional=True)
    radius: float | None = optional_quantity(
        "length", "Radius of its footprint on the carpet (a circle).", minimum=0.005,
        maximum=1.0)
    height: float | None = optional_quantity(
        "length", "Height lying on the carpet (its centre rests at half of it).",
        minimum=0.005, maximum=2.0)
    mass: float | None = optional_quantity("mass", "Mass.", minimum=0.001, maximum=25.0,
                                           usual=(0.01, 5.0))
    restitution: float | None = number(
        None, "Coefficient of restitution against the carpet, walls, elements, bumpers and "
        "other pieces (two pieces: the geometric mean of theirs): 0 stops dead, 1 elastic.",
        minimum=0.0, maximum=1.0, optional=True)
    friction: float | None = number(
        None, "Sliding friction coefficient on the carpet (a piece that cannot roll "
        "decelerates at friction·g).", minimum=0.0, maximum=3.0, optional=True)
    rolling: float | None = number(
        None, "Rolling-resistance coefficient (a piece that rolls decelerates at "
        "rolling·g).", minimum=0.0, maximum=1.0, optional=True, usual=(None, 0.3))
    drag_coefficient: float | None = number(
        None, "Quadratic air drag coefficient Cd (F = ½·ρ·Cd·A·v²; a sphere: about 0.47).",
        minimum=0.0, maximum=5.0, optional=True)
    drag_area: float | None = optional_quantity(
        "area", "Frontal area A for the drag.", minimum=0.0, maximum=4.0)
    class_id: int | None = integer(
        None, "The object detector's class (PhotonVision's objDetectId, Limelight's classID).",
        minimum=0, maximum=1000, optional=True)
    lift_coefficient: float | None = number(
        None, "Magnus lift per unit spin ratio (0: none; a new type defaults to 0).",
        minimum=-5.0, maximum=5.0, optional=True)


@dataclass(frozen=True)
class PlacementConfig:
    """One more piece on the field at reset (`[pieces.extra.<name>]`), resting on the
    carpet."""

    type: str = text(None, "Its type: a season piece type or one of [pieces.types].")
    x: float = quantity(None, "length", "x of its centre, from the blue alliance wall; on the "
                        "field, as far as its radius from the walls.", minimum=0.0,
                        maximum=LARGEST_FIELD)
    y: float = quantity(None, "length", "y of its centre, from the right-hand wall seen from "
                        "blue; on the field, as x.", minimum=0.0, maximum=LARGEST_FIELD)
    yaw: float = quantity("0 deg", "angle", "Its yaw, CCW positive (a cylinder's axis).",
                          minimum=-360 * DEG, maximum=360 * DEG)


@dataclass(frozen=True)
class FeedConfig:
    """Human-player feeding (`[pieces.feeding.<name>]`): `count` pieces from `station`'s
    stock, the first at `at`, then one each `interval` (while the stock lasts)."""

    station: str = text(None, "The station's name, e.g. \"blue_outpost\" (docs/gamepieces.md "
                        "lists each season's).")
    at: float = quantity("0 s", "time", "Simulated time of the first piece.", minimum=0.0,
                         maximum=3600.0)
    count: int = integer(1, "How many pieces.", minimum=1, maximum=200)
    interval: float = quantity("1 s", "time", "Time between two pieces.", minimum=0.05,
                               maximum=600.0)


@dataclass(frozen=True)
class PiecesConfig:
    """Game pieces on the field. Leave the whole `[pieces]` table out for a field without
    pieces."""

    enabled: bool = boolean(True, "false leaves the pieces out (the table stays for later).")
    layout: str = choice(
        "season", ("season", "none"),
        "`season`: the [field] season's pieces where a match starts (the season's data, "
        "`simserver/field/gamepieces.py`); `none`: only the pieces of [pieces.extra].")
    scored: str = choice(
        "remove", ("remove", "return"),
        "A piece that enters a goal is counted and then `remove`d from the field, or "
        "`return`ed where the season returns scored pieces (the field's exits).")
    types: dict[str, PieceTypeConfig] = table(
        "Piece types by name: a season type's keys to override, or new types.")
    extra: dict[str, PlacementConfig] = table("More pieces by name, placed at reset.")
    stock: int | None = integer(
        None, "Pieces staged at each human-player station at reset (off the field until "
        "fed by [pieces.feeding] or `/simserver/pieces/feed`). Default: with `layout = "
        "\"season\"` the season's (24 FUEL per 2026 outpost, none at 2024's sources), "
        "else none.", minimum=0, maximum=200, optional=True)
    feeding: dict[str, FeedConfig] = table(
        "Human-player feeding on a schedule, by name: pieces fed at a station from a time.")


class SeasonPieces(NamedTuple):
    """A season's piece data (:mod:`simserver.field.gamepieces`)."""

    types: dict[str, PieceType]
    layout: list[Placement]
    goals: list[Goal]
    exits: dict[str, list[Exit]]
    stations: list[Station]


def season_pieces(season: str) -> SeasonPieces:
    """The piece types, starting layout, goals and scored-piece exits of ``season`` (all
    empty for a season without game-piece data)."""
    if season not in gamepieces.PIECE_SEASONS:
        return SeasonPieces({}, [], [], {}, [])
    return SeasonPieces(gamepieces.season_piece_types(season),
                        gamepieces.starting_layout(season),
                        gamepieces.season_goals(season), gamepieces.scored_exits(season),
                        gamepieces.stations(season))


def piece_types(cfg: PiecesConfig, season: SeasonPieces) -> dict[str, PieceType]:
    """The season's piece types with ``cfg``'s overrides, then ``cfg``'s new types. Raises
    ValueError naming the type when one cannot be built."""
    out = dict(season.types)
    for name, entry in cfg.types.items():
        given = {k: v for k, v in dataclasses.asdict(entry).items() if v is not None}
        if name in out:
            out[name] = dataclasses.replace(out[name], **given)
        else:
            given.setdefault("lift_coefficient", 0.0)
            out[name] = PieceType(name=name, **given)
    return out


def field_piece_types(pieces: PiecesConfig | None, season: str) -> dict[str, PieceType]:
    """The piece types on a field of ``season`` with ``[pieces]`` (None: none), by name (what
    cameras may detect and mechanisms may handle); {} without pieces or when a type cannot be
    built (the config checks report that)."""
    if pieces is None or not pieces.enabled:
        return {}
    try:
        return piece_types(pieces, season_pieces(season))
    except (TypeError, ValueError):
        return {}


def placements(cfg: PiecesConfig, season: SeasonPieces) -> list[Placement]:
    """Every piece placed at reset: the season's layout (``layout = "season"``), then
    ``cfg.extra`` in file order."""
    out = list(season.layout) if cfg.layout == "season" else []
    out += [Placement(e.type, e.x, e.y, None, e.yaw) for e in cfg.extra.values()]
    return out


def check(cfg: PiecesConfig, season_name: str, field_size: tuple[float, float],
          issues: list[ConfigIssue]) -> None:
    """Cross-key checks of ``[pieces]``: new types give every key, every type builds, every
    extra piece names a type and lies on the field ``field_size`` (length, width m)."""
    season = season_pieces(season_name)
    types: dict[str, PieceType] = dict(season.types)
    for name, entry in cfg.types.items():
        path = f"pieces.types.{name}"
        if name not in season.types:
            missing = [k for k in TYPE_KEYS if getattr(entry, k) is None]
            if missing:
                issues.append(ConfigIssue(path, f"a new piece type (not one of the "
                                          f"{season_name} season's) needs {', '.join(missing)}"))
                continue
        try:
            types[name] = piece_types(
                dataclasses.replace(cfg, types={name: entry}), season)[name]
        except ValueError as exc:
            issues.append(ConfigIssue(path, str(exc)))
    _check_feeding(cfg, season, issues)
    length, width = field_size
    for name, extra in cfg.extra.items():
        path = f"pieces.extra.{name}"
        if extra.type not in types:
            issues.append(ConfigIssue(f"{path}.type", missing_name(
                "piece type", extra.type, list(types)).replace("[piece types]",
                                                               "[pieces.types]")))
            continue
        r = types[extra.type].radius
        for key, value, top in (("x", extra.x, length), ("y", extra.y, width)):
            if not r <= value <= top - r:
                issues.append(ConfigIssue(
                    f"{path}.{key}", f"{value:g} m is off the field: the piece's centre must "
                    f"lie between {r:g} m and {top - r:g} m (its radius from the walls)"))


def station_stock(cfg: PiecesConfig, station: Station) -> int:
    """Pieces staged at ``station`` at reset: [pieces] stock, else the season's."""
    return station.stock if cfg.stock is None else cfg.stock


def _check_feeding(cfg: PiecesConfig, season: SeasonPieces, issues: list[ConfigIssue]) -> None:
    """Every [pieces.feeding] entry names a station of the season that has pieces to feed."""
    by_name = {st.name: st for st in season.stations}
    for name, feed in cfg.feeding.items():
        path = f"pieces.feeding.{name}.station"
        station = by_name.get(feed.station)
        if station is None:
            hint = difflib.get_close_matches(feed.station, list(by_name), n=1)
            issues.append(ConfigIssue(path, f"no human-player station named "
                                            f"{excerpt(feed.station)} in this season (known: "
                                            f"{', '.join(by_name) or 'none'})"
                                            + (f"; did you mean {hint[0]!r}?" if hint else "")))
        elif station_stock(cfg, station) == 0 or (cfg.layout != "season" and cfg.stock is None):
            issues.append(ConfigIssue(path, f"{feed.station!r} has no pieces staged: set "
                                            f"[pieces] stock (pieces per station)"))
