"""Human players: the pieces staged at each station and feeding them onto the field, on a
schedule (``[pieces.feeding]``) or when asked (``/simserver/pieces/feed``, :meth:`Feeder.feed`).

A station's stock is a set of pieces of the season's first piece type that exist from the
start but are off the field (GONE) until fed; a fed piece appears at the station's point with
the station's direction and speed, and flies or rolls from there.

    feeder = Feeder(pieces, stations, stock={"blue_outpost": [384, 385, ...]}, schedule=[...])
    feeder.feed("blue_outpost")      # True when a piece was left to feed
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from simserver.field.gamepieces import Station
from simserver.models.pieces.floor import PieceField


class Feed(NamedTuple):
    """``total`` pieces from ``station``, the first at ``at`` s, then one each ``interval`` s."""

    station: str
    at: float
    total: int
    interval: float


class Feeder:
    """The stations' stocks (piece ids of ``field``) and the feeding schedule."""

    def __init__(self, field: PieceField, stations: Sequence[Station],
                 stock: Mapping[str, Sequence[int]], schedule: Sequence[Feed] = ()):
        self.field = field
        self.stations = {st.name: st for st in stations}
        self._stock = {name: tuple(ids) for name, ids in stock.items()}
        self._times = sorted((f.at + k * f.interval, i, f.station)
                             for i, f in enumerate(schedule) for k in range(f.total))
        self.reset()

    def reset(self) -> None:
        """Every station's pieces back in its stock (off the field); the schedule restarts."""
        self._left = {name: list(reversed(ids)) for name, ids in self._stock.items()}
        for ids in self._stock.values():
            for piece in ids:
                self.field.remove(piece)
        self._next = 0
        self.fed = dict.fromkeys(self.stations, 0)

    def left(self, station: str) -> int:
        """Pieces still staged at ``station``."""
        return len(self._left.get(station, ()))

    def feed(self, station: str) -> bool:
        """Put the next staged piece of ``station`` on the field; False when the station is
        unknown or has none left."""
        ids = self._left.get(station)
        st = self.stations.get(station)
        if not ids or st is None:
            return False
        piece = ids.pop()
        dx, dy, dz = st.direction
        self.field.launch(piece, (st.x, st.y, st.z), (dx * st.speed, dy * st.speed,
                                                      dz * st.speed))
        self.fed[station] += 1
        return True

    def due(self, time: float) -> None:
        """Feed every scheduled piece whose time has come by ``time`` (s)."""
        times = self._times
        while self._next < len(times) and times[self._next][0] <= time + 1e-9:
            self.feed(times[self._next][2])
            self._next += 1
