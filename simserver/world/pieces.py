"""The field's game pieces as the robots meet them: one :class:`FieldPieces` per run, shared by
every robot (the single :class:`~simserver.world.World`, or every world of an
:class:`~simserver.world.arena.Arena`).

It owns the :class:`~simserver.models.pieces.floor.PieceField` and, once a substep after every
robot moved (``World.step`` or ``Arena.step`` call :meth:`FieldPieces.substep` through the first
world's ``field_pieces``), steps the pieces and resolves their contacts with every robot's
outline (both feel the impulse). Each robot's mechanisms see the pieces through their own
:class:`RobotPieces` (``robot.pieces``, the :class:`~simserver.models.api.PieceAccess`
protocol); held pieces ride with their robot. Counts: pieces picked up and shot per robot,
scored per alliance and per goal. The main robot's snapshot carries a
:class:`~simserver.contract.snapshot.PieceSnapshot` (arrays, built each tick).

    worlds = {"": World(cfg), "opponent": World(other_cfg)}
    pieces = field_pieces(cfg, worlds)      # None without [pieces]
    arena = Arena(worlds, 0.2, 0.3); arena.step(0.02)
    worlds[""].snapshot().pieces.state
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from simserver.config.pieces import (
    Placement,
    SeasonPieces,
    piece_types,
    placements,
    season_pieces,
    station_stock,
)
from simserver.contract.snapshot import PieceSnapshot
from simserver.models.detection import Detectables
from simserver.models.pieces.flight import Flight
from simserver.models.pieces.floor import FlightModel, PieceField
from simserver.models.pieces.goals import Goal
from simserver.models.pieces.types import HELD, PieceType
from simserver.world.feeding import Feed, Feeder

if TYPE_CHECKING:
    from simserver.config.model import Config
    from simserver.world.world import World

ALLIANCES = ("blue", "red")


def flight_model(types: Sequence[PieceType], goals: Sequence[Goal], world: World) -> Flight:
    """The flight model of pieces in the air over ``world``'s field."""
    return Flight(types, goals, world.obstacles.obstacles, world.field_size)


def field_pieces(cfg: Config, worlds: Mapping[str, World]) -> FieldPieces | None:
    """The game pieces ``cfg``'s ``[pieces]`` puts on the field, attached to ``worlds`` (the
    main robot first); None (and nothing attached) without pieces."""
    if cfg.pieces is None or not cfg.pieces.enabled:
        return None
    season = season_pieces(cfg.field.season)
    types = piece_types(cfg.pieces, season)
    exits = season.exits if cfg.pieces.scored == "return" else {}
    placed = placements(cfg.pieces, season)
    stock = _stage_stations(cfg, season, placed)
    preloads = _preload(worlds, next(iter(types), None), placed)
    pieces = FieldPieces(worlds, types, placed, season.goals, exits, preloads=preloads)
    schedule = [Feed(f.station, f.at, f.count, f.interval) for f in cfg.pieces.feeding.values()]
    pieces.feeder = Feeder(pieces.field, season.stations, stock, schedule)
    return pieces


def _stage_stations(cfg: Config, season: SeasonPieces, placed: list[Placement]
                    ) -> dict[str, list[int]]:
    """Add the human-player stations' stock to ``placed`` (at each station, of the season's
    first piece type); the ids of each station's pieces, by station name."""
    stock: dict[str, list[int]] = {}
    assert cfg.pieces is not None
    if not season.types or (cfg.pieces.layout != "season" and cfg.pieces.stock is None):
        return stock
    kind = next(iter(season.types))
    for st in season.stations:
        count = station_stock(cfg.pieces, st)
        stock[st.name] = list(range(len(placed), len(placed) + count))
        placed += [Placement(kind, st.x, st.y, st.z)] * count
    return stock


def _preload(worlds: Mapping[str, World], kind: str | None, placed: list[Placement]
             ) -> dict[tuple[int, str], list[int]]:
    """Add the pieces each robot's mechanisms hold at the start (their config's ``preload``,
    of type ``kind``) to ``placed``; their ids by (robot index, mechanism name)."""
    preloads: dict[tuple[int, str], list[int]] = {}
    if kind is None:
        return preloads
    for index, world in enumerate(worlds.values()):
        start = world.cfg.robot.start
        for name, section in world.cfg.mechanisms.items():
            count = getattr(section.config, "preload", 0)
            if count:
                preloads[index, name] = list(range(len(placed), len(placed) + count))
                placed += [Placement(kind, start.x, start.y, 0.5)] * count
    return preloads


class FieldPieces:
    """Every game piece of a run and the robots that meet them.

    worlds: the robots by name, the main robot (the robot program's, named "" in snapshots)
    first; types: piece types by name; placed: the pieces at reset; goals: objects with
    ``name`` and ``alliance`` (:class:`~simserver.models.pieces.goals.Goal`), indexed as the
    flight model reports entries; exits: goal name -> where its scored pieces come back
    (objects with x, y, z m and vx, vy, vz m/s, used in turn); a goal without exits removes
    its pieces. flight: the model of pieces in the air (default: :func:`flight_model`).
    """

    def __init__(self, worlds: Mapping[str, World], types: Mapping[str, PieceType],
                 placed: Sequence[Placement], goals: Sequence[Any] = (),
                 exits: Mapping[str, Sequence[Any]] | None = None,
                 flight: FlightModel | None = None, *, default_flight: bool = True,
                 preloads: Mapping[tuple[int, str], Sequence[int]] | None = None):
        if not worlds:
            raise ValueError("game pieces need at least one robot")
        self.names = tuple(worlds)
        self.worlds = tuple(worlds.values())
        self.main = self.worlds[0]
        self.type_names = tuple(types)
        index = {name: i for i, name in enumerate(self.type_names)}
        unknown = sorted({p.type for p in placed} - set(index))
        if unknown:
            raise ValueError(f"no piece type named {', '.join(map(repr, unknown))}")
        type_list = [types[name] for name in self.type_names]
        kind = np.array([index[p.type] for p in placed], dtype=np.int64)
        pos = np.array([(p.x, p.y, type_list[index[p.type]].height / 2.0 if p.z is None
                         else p.z) for p in placed], dtype=float).reshape(-1, 3)
        self.goals = tuple(goals)
        if flight is None and default_flight:
            flight = flight_model(type_list, self.goals, self.main)
        self.field = PieceField(type_list, kind, pos, self.main.field_size,
                                self.main.obstacles.obstacles,
                                yaw=[p.yaw for p in placed], flight=flight,
                                max_lag=self.main.cfg.sim.tick)
        self._per_tick = max(1, round(self.main.cfg.sim.tick / self.main.substep))
        self._exits = [tuple((exits or {}).get(g.name, ())) for g in self.goals]
        self._kind = self.field.kind.copy()
        self._kind.setflags(write=False)
        self.feeder: Feeder | None = None  # the human players (field_pieces sets it)
        # (robot index, mechanism name) -> the pieces it holds at reset
        self.preloads = {key: tuple(ids) for key, ids in (preloads or {}).items()}
        self.access = tuple(RobotPieces(self, i) for i in range(len(self.worlds)))
        self.main.field_pieces = self
        for world, access in zip(self.worlds, self.access, strict=True):
            world.attach_pieces(access, self.detectables)
        self.reset()

    def reset(self) -> None:
        """Every piece back to its start; counts to 0."""
        self.field.reset()
        if self.feeder is not None:
            self.feeder.reset()
        for (robot, _), pieces in self.preloads.items():
            for piece in pieces:
                self.field.take(piece, robot, (0.0, 0.0, 0.5))
        self.scores = dict.fromkeys(ALLIANCES, 0)
        self.goal_counts = {g.name: 0 for g in self.goals}
        self.picked_up = dict.fromkeys(self.names, 0)
        self.shots = dict.fromkeys(self.names, 0)
        self._next_exit = [0] * len(self.goals)
        self._substeps = 0
        self._holders: tuple[str, ...] | None = None

    def substep(self, h: float) -> None:
        """One substep of ``h`` s after every robot moved: pieces move, meet each other, the
        walls, the elements and the robots (whose bodies take the impulses)."""
        if self.feeder is not None:
            self.feeder.due(self.main.time)
        scored, _ = self.field.step(h, self.worlds)
        self._substeps += 1
        if self._substeps % self._per_tick == 0:
            self.field.sync()  # the arrays are current after every tick
        if not len(scored.pieces):
            return
        for piece, goal in zip(scored.pieces.tolist(), scored.goals.tolist(), strict=True):
            self._score(piece, goal)

    def _score(self, piece: int, goal: int) -> None:
        """Count ``piece`` in goal ``goal``; return it at the goal's next exit or remove it."""
        g = self.goals[goal]
        self.goal_counts[g.name] += 1
        self.scores[g.alliance] = self.scores.get(g.alliance, 0) + 1
        exits = self._exits[goal]
        if not exits:
            self.field.remove(piece)
            self._holders = None
            return
        out = exits[self._next_exit[goal] % len(exits)]
        self._next_exit[goal] += 1
        self.field.launch(piece, (out.x, out.y, out.z), (out.vx, out.vy, out.vz))

    def held_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Held pieces' ids (n,) and field positions (n,3) m, where their robots carry them."""
        field = self.field
        idx = np.flatnonzero(field.state == HELD)
        if not len(idx):
            return idx, np.zeros((0, 3))
        poses = np.array([w.pose for w in self.worlds])[field.holder[idx]]
        c, s = np.cos(poses[:, 2]), np.sin(poses[:, 2])
        at = field.at[idx]
        out = np.empty((len(idx), 3))
        out[:, 0] = poses[:, 0] + at[:, 0] * c - at[:, 1] * s
        out[:, 1] = poses[:, 1] + at[:, 0] * s + at[:, 1] * c
        out[:, 2] = at[:, 2]
        return idx, out

    def snapshot(self) -> PieceSnapshot:
        """Every piece after the last step, as arrays (copies)."""
        field = self.field
        field.sync()
        pose = np.zeros((field.size, 6))
        pose[:, :3] = field.pos
        pose[:, 5] = field.yaw
        idx, at = self.held_positions()
        if len(idx):
            pose[idx, :3] = at
            poses = np.array([w.pose[2] for w in self.worlds])
            pose[idx, 5] = poses[field.holder[idx]]
        if self._holders is None:
            self._holders = tuple("-" if h < 0 else self.names[h]
                                  for h in field.holder.tolist())
        return PieceSnapshot(types=self.type_names, kind=self._kind, state=field.state.copy(),
                             pose=pose, holder=self._holders, scores=dict(self.scores),
                             goals=dict(self.goal_counts), picked_up=dict(self.picked_up),
                             shots=dict(self.shots))

    def detectables(self) -> Detectables:
        """The pieces a camera may see now: loose and in flight."""
        idx, pos = self.field.visible()
        return Detectables.of(self.field.types, self.field.kind[idx], pos)


class RobotPieces:
    """The pieces as robot ``index``'s mechanisms see them (``robot.pieces``): implements
    :class:`~simserver.models.api.PieceAccess`. A call that names no such piece, or a piece
    in the wrong state (taking a held piece, releasing one this robot does not hold), raises
    ValueError: the world disables the mechanism that made it, as for any mechanism error."""

    def __init__(self, pieces: FieldPieces, index: int):
        self._pieces = pieces
        self._index = index
        self._world = pieces.worlds[index]
        self.name = pieces.names[index]

    def _piece(self, piece: int) -> int:
        if not (isinstance(piece, (int, np.integer)) and 0 <= piece < self._pieces.field.size):
            raise ValueError(f"no game piece {piece!r}")
        return int(piece)

    def _held(self, piece: int) -> int:
        piece = self._piece(piece)
        field = self._pieces.field
        if field.state[piece] != HELD or field.holder[piece] != self._index:
            raise ValueError(f"piece {piece} is not held by this robot")
        return piece

    def loose_in(self, zone: Sequence[tuple[float, float]], height: float) -> list[int]:
        """Ids of loose pieces (or flying below ``height`` m) overlapping the convex CCW
        robot-frame polygon ``zone`` (m), nearest its first edge first."""
        x, y, heading = self._world.pose
        c, s = math.cos(heading), math.sin(heading)
        local = np.asarray(zone, dtype=float).reshape(-1, 2)
        field_zone = np.empty_like(local)
        field_zone[:, 0] = x + local[:, 0] * c - local[:, 1] * s
        field_zone[:, 1] = y + local[:, 0] * s + local[:, 1] * c
        ids: list[int] = self._pieces.field.loose_in(field_zone, height).tolist()
        return ids

    def take(self, piece: int, at: tuple[float, float, float]) -> str:
        """Take loose (or flying) ``piece`` in, carried at robot-frame ``at`` (m); its type."""
        piece = self._piece(piece)
        pieces = self._pieces
        pieces.field.take(piece, self._index, at)
        pieces.picked_up[self.name] += 1
        pieces._holders = None
        return pieces.type_names[pieces.field.kind[piece]]

    def carry(self, piece: int, at: tuple[float, float, float]) -> None:
        """Move held ``piece`` to robot-frame ``at`` (m)."""
        self._pieces.field.at[self._held(piece)] = at

    def release(self, piece: int, position: tuple[float, float, float],
                velocity: tuple[float, float, float],
                spin: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
        """Held ``piece`` leaves at field ``position`` (m) with ``velocity`` (m/s) and ``spin``
        (rad/s): a shot when it flies, else it rolls from where it was put down."""
        piece = self._held(piece)
        pieces = self._pieces
        if pieces.field.release(piece, position, velocity, spin):
            pieces.shots[self.name] += 1
        pieces._holders = None

    def preloaded(self, mechanism: str) -> list[int]:
        """The pieces ``mechanism`` of this robot holds at reset (its ``preload``)."""
        return list(self._pieces.preloads.get((self._index, mechanism), ()))

    def kind(self, piece: int) -> str:
        """Type name of ``piece``."""
        pieces = self._pieces
        return pieces.type_names[pieces.field.kind[self._piece(piece)]]

    def mass(self, piece: int) -> float:
        """Mass of ``piece``, kg."""
        return float(self._pieces.field.mass[self._piece(piece)])

    def state(self, piece: int) -> int:
        """State code of ``piece`` (LOOSE, FLIGHT, HELD, GONE)."""
        return int(self._pieces.field.state[self._piece(piece)])
