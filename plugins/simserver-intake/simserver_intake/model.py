"""A roller intake that collects game pieces lying on the field.

Pieces are circles of radius ``piece_radius`` on the field floor. The intake zone is a rectangle
in the robot frame, in front of the front bumper: ``half_length ≤ x ≤ half_length + reach`` and
``|y| ≤ width / 2`` (x forward, y left, origin at the robot centre). Each physics substep, in
this order:

1. loose pieces slide: ``x += v·dt``, then the speed drops by ``friction·g·dt`` (to 0, never
   reversing);
2. if the roller duty is ≥ ``min_duty``, pieces whose centre is in the zone are collected
   (nearest the bumper first) while ``held < capacity``;
3. if the duty is ≤ −``min_duty`` and a piece is held, one is ejected: placed touching the
   bumper at the middle of the mouth, moving at the robot's velocity there plus ``eject_speed``
   straight ahead. The spot must be inside the field; a piece still moving there (the last one
   ejected) makes the next wait, a resting one is shoved ahead if it has room. So holding the
   roller reversed empties the intake one piece at a time;
4. overlapping pieces are pushed apart equally, and a colliding pair shares its closing
   velocity (equal masses, perfectly inelastic);
5. pieces the robot outline overlaps are pushed out of it (circle vs rotated rectangle), and
   lose any velocity into the bumper (a perfectly inelastic shove by a much heavier robot). The
   move is the smallest one that leaves the piece inside the field, so a piece pinched between
   the bumper and a wall squirts out sideways;
6. pieces are kept inside the field walls, losing their velocity into the wall.

Pieces never push back on the robot: they are light next to it, and the model API lets a
mechanism read the robot, not move it.

When the field has game pieces of its own (``robot.pieces``, simserver's ``[pieces]``), the
intake handles those instead, through the :class:`~simserver.models.api.PieceAccess` protocol,
and its own ``pieces`` table is not used: the field moves, pushes and collides them (steps 1
and 4-6 are its job). It takes the pieces whose footprint overlaps the zone (step 2, through
``loose_in``/``take``) and lets one out at the middle of the mouth (step 3, ``release``) each
time the one before has travelled a diameter at ``eject_speed``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from simserver.config.fields import integer, number, quantity, table, text
from simserver.config.model import Config
from simserver.models.api import InputSpec, ModelType, OutputSpec, PieceAccess, RobotView

G = 9.80665  # m/s², standard gravity
_EPS = 1e-9  # m, geometric tolerance


# --- config --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PieceStart:
    """Where one game piece lies at the start and after every reset, in field coordinates."""

    x: float = quantity(None, "length", "x of the piece centre, from the blue alliance wall.")
    y: float = quantity(None, "length",
                        "y of the piece centre, from the right-hand wall seen from blue.")


@dataclass(frozen=True)
class IntakeConfig:
    """A roller intake collecting game pieces from the field (`type = "roller_intake"`)."""

    motor: str = text(
        None, "Name of the roller motor (in [motors]). Duty ≥ min_duty intakes, ≤ −min_duty "
        "ejects."
    )
    # table() returns a dataclasses.field(default_factory=dict): not a shared mutable default.
    pieces: dict[str, PieceStart] = table(  # noqa: RUF009
        "Game pieces on the field at the start, by name, e.g. "
        "`pieces.a = { x = \"4 m\", y = \"4 m\" }`."
    )
    piece_radius: float = quantity("6 in", "length", "Radius of a game piece (a circle on the "
                                   "floor).", positive=True)
    capacity: int = integer(1, "How many pieces the intake holds.", minimum=1, maximum=100)
    width: float = quantity("20 in", "length", "Width of the intake mouth, centred on the front "
                            "bumper.", positive=True)
    reach: float = quantity(
        "8 in", "length", "How far in front of the front bumper the intake grabs: a piece is "
        "collected when its centre enters this zone. At least piece_radius.", positive=True,
    )
    min_duty: float = number(0.3, "Roller duty needed to intake (and, negated, to eject).",
                             positive=True, maximum=1.0)
    eject_speed: float = quantity("2 m/s", "speed", "Speed of an ejected piece, relative to "
                                  "the robot, straight ahead.", positive=True)
    friction: float = number(
        0.5, "Friction coefficient of a loose piece on the carpet: a moving piece decelerates "
        "at friction × g until it stops.", minimum=0.0, maximum=5.0,
    )


# --- geometry (robot frame: x forward, y left, origin at the robot centre) -----------------


def to_robot(px: float, py: float, pose: tuple[float, float, float]) -> tuple[float, float]:
    """Field point → robot frame."""
    x, y, h = pose
    c, s = math.cos(h), math.sin(h)
    dx, dy = px - x, py - y
    return dx * c + dy * s, -dx * s + dy * c


def to_field(bx: float, by: float, pose: tuple[float, float, float]) -> tuple[float, float]:
    """Robot-frame point → field."""
    x, y, h = pose
    c, s = math.cos(h), math.sin(h)
    return x + bx * c - by * s, y + bx * s + by * c


def rotate_to_field(bx: float, by: float, heading: float) -> tuple[float, float]:
    """Robot-frame direction → field direction."""
    c, s = math.cos(heading), math.sin(heading)
    return bx * c - by * s, bx * s + by * c


def in_zone(bx: float, by: float, half_length: float, width: float, reach: float) -> bool:
    """Whether robot-frame point (bx, by) is in the intake zone."""
    return (half_length - _EPS <= bx <= half_length + reach + _EPS
            and abs(by) <= width / 2.0 + _EPS)


def box_distance(bx: float, by: float, half_length: float, half_width: float) -> float:
    """Distance from robot-frame point (bx, by) to the outline; negative inside (depth)."""
    dx, dy = abs(bx) - half_length, abs(by) - half_width
    if dx <= 0.0 and dy <= 0.0:
        return max(dx, dy)
    return math.hypot(max(dx, 0.0), max(dy, 0.0))


def push_out_candidates(bx: float, by: float, r: float, half_length: float, half_width: float
                        ) -> list[tuple[float, float, float, float]]:
    """Robot-frame positions that take a circle (centre bx, by, radius r) out of the outline,
    smallest move first, each as (x, y, normal x, normal y); [] if it does not overlap.

    The first is the minimum-distance move (along the nearest-point normal, or through the
    nearest face when the centre is inside); the others leave through each face in turn, so a
    caller can pick one that stays inside the field when the nearest way out is a wall.
    """
    hl, hw = half_length, half_width
    if box_distance(bx, by, hl, hw) >= r - _EPS:
        return []
    faces = [(hl + r, by, 1.0, 0.0), (-hl - r, by, -1.0, 0.0),
             (bx, hw + r, 0.0, 1.0), (bx, -hw - r, 0.0, -1.0)]
    out = []
    qx, qy = min(max(bx, -hl), hl), min(max(by, -hw), hw)
    d = math.hypot(bx - qx, by - qy)
    if d > _EPS:  # centre outside: along the normal from the nearest point of the outline
        nx, ny = (bx - qx) / d, (by - qy) / d
        out.append((qx + nx * r, qy + ny * r, nx, ny))
    out += faces
    return sorted(out, key=lambda c: math.hypot(c[0] - bx, c[1] - by))


# --- the model -----------------------------------------------------------------------------


@dataclass
class Piece:
    """A game piece on the field: centre (m) and velocity (m/s), field frame."""

    x: float
    y: float
    vx: float = 0.0
    vy: float = 0.0


class Intake:
    """The intake and the pieces on the field (see the module docstring for the rules)."""

    def __init__(self, name: str, config: IntakeConfig):
        self.name = name
        self.config = config
        self.held = 0
        self.pieces: list[Piece] = []
        self.taken: list[int] = []  # ids of the field's pieces held (with robot.pieces)
        self._next_eject = 0.0
        self.reset()

    def reset(self) -> None:
        """Pieces back to their start positions at rest, intake empty."""
        self.held = 0
        self.pieces = [Piece(p.x, p.y) for p in self.config.pieces.values()]
        self.taken = []
        self._next_eject = 0.0

    def step(self, dt: float, robot: RobotView) -> None:
        """Advance one substep of ``dt`` seconds."""
        cfg = self.config
        duty = robot.motor(cfg.motor)
        pose = robot.pose
        length, width = robot.outline
        hl, hw = length / 2.0, width / 2.0
        field_pieces = getattr(robot, "pieces", None)  # None also on simserver before [pieces]
        if field_pieces is not None:
            self._handle_field_pieces(robot, field_pieces, duty, hl)
            return
        self._slide(dt)
        if duty >= cfg.min_duty and self.held < cfg.capacity:
            self._collect(pose, hl)
        if duty <= -cfg.min_duty and self.held > 0:
            self._eject(robot, pose, hl)
        self._separate()
        self._push_out(robot, pose, hl, hw)
        fl, fw = robot.field_size
        for p in self.pieces:
            self._keep_inside(p, fl, fw)

    def outputs(self) -> dict[str, Any]:
        """held, beam_break and the poses of the pieces on the field."""
        return {
            "held": self.held,
            "beam_break": self.held > 0,
            "pieces": [(p.x, p.y, 0.0) for p in self.pieces],
        }

    # --- with the field's pieces ------------------------------------------------------------

    def _handle_field_pieces(self, robot: RobotView, pieces: PieceAccess, duty: float,
                             hl: float) -> None:
        """Steps 2 and 3 on the field's pieces (see the module docstring)."""
        cfg = self.config
        self.pieces.clear()  # its own pieces are not used
        r, half = cfg.piece_radius, cfg.width / 2.0
        if duty >= cfg.min_duty and self.held < cfg.capacity:
            # Counter-clockwise, the bumper's edge first: pieces nearest it go in first.
            zone = ((hl, half), (hl, -half), (hl + cfg.reach, -half), (hl + cfg.reach, half))
            for piece in pieces.loose_in(zone, 2.0 * r)[:cfg.capacity - self.held]:
                pieces.take(piece, (0.0, 0.0, r))
                self.taken.append(piece)
        elif duty <= -cfg.min_duty and self.taken and robot.time >= self._next_eject:
            sx, sy = to_field(hl + r, 0.0, robot.pose)
            vx, vy = _point_velocity(robot, sx, sy)
            ex, ey = rotate_to_field(cfg.eject_speed, 0.0, robot.pose[2])
            pieces.release(self.taken.pop(), (sx, sy, r), (vx + ex, vy + ey, 0.0))
            self._next_eject = robot.time + 2.0 * r / cfg.eject_speed
        self.held = len(self.taken)

    # --- the substep, in order -------------------------------------------------------------

    def _slide(self, dt: float) -> None:
        decel = self.config.friction * G * dt
        for p in self.pieces:
            speed = math.hypot(p.vx, p.vy)
            if speed == 0.0:
                continue
            p.x += p.vx * dt
            p.y += p.vy * dt
            scale = max(0.0, speed - decel) / speed
            p.vx *= scale
            p.vy *= scale

    def _collect(self, pose: tuple[float, float, float], hl: float) -> None:
        cfg = self.config
        found = []
        x, y, _ = pose
        near = math.hypot(hl + cfg.reach, cfg.width / 2.0) + _EPS  # farthest zone corner
        for i, p in enumerate(self.pieces):
            if abs(p.x - x) > near or abs(p.y - y) > near:
                continue
            bx, by = to_robot(p.x, p.y, pose)
            if in_zone(bx, by, hl, cfg.width, cfg.reach):
                found.append((bx, i))
        room = cfg.capacity - self.held
        taken = {i for _, i in sorted(found)[:room]}
        if taken:
            self.pieces = [p for i, p in enumerate(self.pieces) if i not in taken]
            self.held += len(taken)

    def _eject(self, robot: RobotView, pose: tuple[float, float, float], hl: float) -> None:
        r = self.config.piece_radius
        sx, sy = to_field(hl + r, 0.0, pose)
        fl, fw = robot.field_size
        if not (r - _EPS <= sx <= fl - r + _EPS and r - _EPS <= sy <= fw - r + _EPS):
            return  # mouth against a wall: nowhere to put it
        if not self._mouth_clear(sx, sy, fl, fw):
            return
        vx, vy = _point_velocity(robot, sx, sy)
        ex, ey = rotate_to_field(self.config.eject_speed, 0.0, pose[2])
        self.pieces.append(Piece(sx, sy, vx + ex, vy + ey))
        self.held -= 1

    def _mouth_clear(self, sx: float, sy: float, fl: float, fw: float) -> bool:
        """Whether a piece can come out at (sx, sy): no piece there is still moving (the last
        one ejected has not cleared the mouth), and each resting one there can be shoved
        aside to one diameter from the spot without leaving the field."""
        r = self.config.piece_radius
        for p in self.pieces:
            d = math.hypot(p.x - sx, p.y - sy)
            if d >= 2.0 * r - _EPS:
                continue
            if p.vx != 0.0 or p.vy != 0.0:
                return False
            if d > _EPS:
                qx, qy = sx + (p.x - sx) / d * 2.0 * r, sy + (p.y - sy) / d * 2.0 * r
            else:
                qx, qy = sx + 2.0 * r, sy
            if not (r - _EPS <= qx <= fl - r + _EPS and r - _EPS <= qy <= fw - r + _EPS):
                return False
        return True

    def _separate(self) -> None:
        diameter = 2.0 * self.config.piece_radius
        pieces = self.pieces
        # Only pieces in neighbouring cells of a one-diameter grid can touch: O(n) for a field
        # strewn with pieces. Pairs are visited in index order, so the result is deterministic.
        cells: dict[tuple[int, int], list[int]] = {}
        keys = []
        for i, p in enumerate(pieces):
            key = (math.floor(p.x / diameter), math.floor(p.y / diameter))
            keys.append(key)
            cells.setdefault(key, []).append(i)
        for i, a in enumerate(pieces):
            cx, cy = keys[i]
            near = sorted(j for ox in (-1, 0, 1) for oy in (-1, 0, 1)
                          for j in cells.get((cx + ox, cy + oy), ()) if j > i)
            for j in near:
                b = pieces[j]
                dx, dy = b.x - a.x, b.y - a.y
                d = math.hypot(dx, dy)
                if d >= diameter:
                    continue
                nx, ny = (dx / d, dy / d) if d > _EPS else (1.0, 0.0)
                half = (diameter - d) / 2.0
                a.x, a.y = a.x - nx * half, a.y - ny * half
                b.x, b.y = b.x + nx * half, b.y + ny * half
                closing = (b.vx - a.vx) * nx + (b.vy - a.vy) * ny
                if closing < 0.0:
                    a.vx, a.vy = a.vx + closing / 2.0 * nx, a.vy + closing / 2.0 * ny
                    b.vx, b.vy = b.vx - closing / 2.0 * nx, b.vy - closing / 2.0 * ny

    def _push_out(self, robot: RobotView, pose: tuple[float, float, float], hl: float,
                  hw: float) -> None:
        r = self.config.piece_radius
        fl, fw = robot.field_size
        x, y, _ = pose
        near = math.hypot(hl, hw) + r + _EPS  # the outline's bounding circle, plus a piece
        for p in self.pieces:
            if abs(p.x - x) > near or abs(p.y - y) > near:
                continue
            bx, by = to_robot(p.x, p.y, pose)
            candidates = push_out_candidates(bx, by, r, hl, hw)
            if not candidates:
                continue
            chosen = candidates[0]
            for cand in candidates:
                fx, fy = to_field(cand[0], cand[1], pose)
                if r - _EPS <= fx <= fl - r + _EPS and r - _EPS <= fy <= fw - r + _EPS:
                    chosen = cand
                    break
            p.x, p.y = to_field(chosen[0], chosen[1], pose)
            nx, ny = rotate_to_field(chosen[2], chosen[3], pose[2])
            ux, uy = _point_velocity(robot, p.x, p.y)
            closing = (p.vx - ux) * nx + (p.vy - uy) * ny
            if closing < 0.0:  # moving into the bumper: take its normal velocity
                p.vx -= closing * nx
                p.vy -= closing * ny

    def _keep_inside(self, p: Piece, fl: float, fw: float) -> None:
        r = self.config.piece_radius
        if p.x < r:
            p.x, p.vx = r, max(p.vx, 0.0)
        elif p.x > fl - r:
            p.x, p.vx = fl - r, min(p.vx, 0.0)
        if p.y < r:
            p.y, p.vy = r, max(p.vy, 0.0)
        elif p.y > fw - r:
            p.y, p.vy = fw - r, min(p.vy, 0.0)


def _point_velocity(robot: RobotView, px: float, py: float) -> tuple[float, float]:
    """Field-frame velocity of the robot body at field point (px, py)."""
    x, y, _ = robot.pose
    vx, vy, omega = robot.velocity
    return vx - omega * (py - y), vy + omega * (px - x)


# --- registration --------------------------------------------------------------------------


def _create(name: str, config: IntakeConfig, cfg: Config) -> Intake:
    return Intake(name, config)


def _field_limits(cfg: Config) -> tuple[float, float]:
    """Field (length, width) as World builds it (season size, overridden by field.length/width).
    """
    from simserver.field.seasons import field_size

    length, width = field_size(cfg.field.season)
    return cfg.field.length or length, cfg.field.width or width


def check(config: IntakeConfig, cfg: Config) -> list[tuple[str, str]]:
    """Cross-checks of an intake against the whole config: (key, message) pairs."""
    out: list[tuple[str, str]] = []
    r = config.piece_radius
    if config.reach < r - _EPS:
        out.append(("reach", f"must be at least piece_radius ({r:g} m), got {config.reach:g} m: "
                             "a piece touching the bumper has its centre piece_radius in front "
                             "of it, so a shallower intake could never collect"))
    fl, fw = _field_limits(cfg)
    start = cfg.robot.start
    pose = (start.x, start.y, start.heading)
    hl, hw = cfg.robot.length / 2.0, cfg.robot.width / 2.0
    for name, p in config.pieces.items():
        if not (r <= p.x <= fl - r and r <= p.y <= fw - r):
            out.append((f"pieces.{name}",
                        f"({p.x:g} m, {p.y:g} m) is outside the field: the centre must be at "
                        f"least piece_radius from every wall, {r:g}..{fl - r:g} m in x and "
                        f"{r:g}..{fw - r:g} m in y"))
        elif box_distance(*to_robot(p.x, p.y, pose), hl, hw) < r:
            out.append((f"pieces.{name}",
                        f"({p.x:g} m, {p.y:g} m) is under the robot at its start pose "
                        "(robot.start): move the piece or the robot"))
    return out


INTAKE = ModelType(
    name="roller_intake",
    role="mechanism",
    config=IntakeConfig,
    doc="Roller intake (a plugin example): collects game pieces lying on the field when the "
        "roller runs, holds up to `capacity`, ejects them in reverse; the bumpers push the "
        "other pieces aside. With the field's own pieces, it handles those.",
    create=_create,
    inputs=(InputSpec(key="motor", kind="motor", doc="The roller."),),
    outputs=(
        OutputSpec("held", "int", "pieces", "How many pieces the intake holds."),
        OutputSpec("beam_break", "boolean", "", "True while at least one piece is held."),
        OutputSpec("pieces", "field2d", "m", "Poses of the pieces lying on the field "
                   "(heading 0)."),
    ),
    check=check,
)
