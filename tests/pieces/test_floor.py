"""PieceField: pieces on the carpet, against each other, the walls, the elements and robots."""

from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np
import pytest

from simserver.models.collision import Body, outline
from simserver.models.obstacles import Obstacle
from simserver.models.pieces.floor import GRAVITY, PieceField, RobotBody, circle_polygon
from simserver.models.pieces.types import FLIGHT, GONE, HELD, LOOSE, PieceType

BALL = PieceType("ball", "sphere", radius=0.075, height=0.15, mass=0.215, restitution=0.6,
                 friction=0.7, rolling=0.03, drag_coefficient=0.47, drag_area=0.0177,
                 class_id=0)
RING = PieceType("ring", "ring", radius=0.18, height=0.05, mass=0.235, restitution=0.3,
                 friction=0.5, rolling=0.0, drag_coefficient=1.0, drag_area=0.02, class_id=1)
# No carpet losses: only contacts change the pieces' momentum.
PUCK = PieceType("puck", "sphere", radius=0.1, height=0.1, mass=0.5, restitution=0.8,
                 friction=0.0, rolling=0.0, drag_coefficient=0.0, drag_area=0.01, class_id=2)
HEAVY = PieceType("heavy", "cylinder", radius=0.06, height=0.12, mass=1.3, restitution=0.8,
                  friction=0.0, rolling=0.0, drag_coefficient=0.0, drag_area=0.01, class_id=3)
FIELD = (16.541, 8.069)
H = 0.005


def field_of(types: list[PieceType], kind: list[int], positions: list[tuple[float, float]],
             **kw: object) -> PieceField:
    f = PieceField(types, kind, positions, FIELD, **kw)  # type: ignore[arg-type]
    f.step(H)  # the wake-up step after reset
    return f


def push(f: PieceField, piece: int, vx: float, vy: float) -> None:
    f.vel[piece, :2] = (vx, vy)
    f.wake([piece])


def overlaps(f: PieceField) -> float:
    """Deepest overlap between any two loose pieces, m."""
    idx = np.flatnonzero(f.state == LOOSE)
    p = f.pos[idx, :2]
    d = np.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1))
    reach = f.radius[idx][:, None] + f.radius[idx][None, :]
    np.fill_diagonal(d, np.inf)
    return float(max(0.0, (reach - d).max()))


@pytest.mark.parametrize(("piece", "coefficient"), [(BALL, BALL.rolling), (RING, RING.friction)])
@pytest.mark.parametrize("speed", [0.37, 1.5, 2.5])
def test_piece_stops_at_closed_form_distance(piece: PieceType, coefficient: float,
                                             speed: float) -> None:
    """A rolling piece stops after v²/(2·rolling·g), a sliding one after v²/(2·friction·g),
    and never reverses."""
    f = field_of([piece], [0], [(1.0, 4.0)])
    push(f, 0, speed, 0.0)
    xs = []
    for _ in range(20000):
        f.step(H)
        xs.append(f.pos[0, 0])
        if not f.awake[0]:
            break
    assert f.vel[0, 0] == 0.0 and not f.awake[0]
    expected = speed**2 / (2.0 * coefficient * GRAVITY)
    assert f.pos[0, 0] - 1.0 == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert np.all(np.diff(xs) >= 0.0)
    assert f.pos[0, 1] == 4.0 and f.pos[0, 2] == piece.height / 2


def test_rolling_piece_follows_closed_form_mid_way() -> None:
    """Mid-way, position and speed are those of constant deceleration exactly."""
    f = field_of([BALL], [0], [(1.0, 2.0)])
    v0, a = 3.0, BALL.rolling * GRAVITY
    push(f, 0, v0 / math.sqrt(2), v0 / math.sqrt(2))
    steps = 400
    for _ in range(steps):
        f.step(H)
    t = steps * H
    s = v0 * t - 0.5 * a * t * t
    assert math.hypot(f.pos[0, 0] - 1.0, f.pos[0, 1] - 2.0) == pytest.approx(s, rel=1e-12)
    assert math.hypot(*f.vel[0, :2]) == pytest.approx(v0 - a * t, rel=1e-12)


def test_piece_piece_impulse_conserves_momentum() -> None:
    """Head-on and glancing hits between unequal masses conserve momentum; an elastic-ish
    head-on hit follows the closed form for restitution √(e_a e_b)."""
    f = field_of([PUCK, HEAVY], [0, 1], [(3.0, 4.0), (3.5, 4.0)])
    push(f, 0, 2.0, 0.0)
    p0 = f.momentum()
    for _ in range(100):
        f.step(H)
    assert np.abs(f.momentum() - p0).max() < 1e-12
    m1, m2, e = PUCK.mass, HEAVY.mass, math.sqrt(PUCK.restitution * HEAVY.restitution)
    v1 = (m1 * 2.0 - m2 * e * 2.0) / (m1 + m2)
    v2 = (m1 * 2.0 + m1 * e * 2.0) / (m1 + m2)
    assert f.vel[0, 0] == pytest.approx(v1, rel=1e-12)
    assert f.vel[1, 0] == pytest.approx(v2, rel=1e-12)
    g = field_of([PUCK, HEAVY], [0, 1, 1, 0], [(3.0, 4.0), (3.5, 4.07), (3.5, 3.85),
                                              (3.9, 4.0)])
    push(g, 0, 3.0, 0.1)
    push(g, 3, -1.0, 0.5)
    p0 = g.momentum()
    for _ in range(200):
        g.step(H)
    assert np.abs(g.momentum() - p0).max() < 1e-12
    assert overlaps(g) < 1e-6


def robot(x: float, y: float, heading: float, vx: float, vy: float, omega: float
          ) -> RobotBody:
    length, width = 0.8, 0.7
    return RobotBody(Body(x, y, heading, vx, vy, omega), outline(length, width), 50.0, 3.0,
                     math.hypot(length, width) / 2)


def move(rbs: list[RobotBody]) -> None:
    """Move each robot along its own velocity for one substep H (the pieces' step then meets
    them there)."""
    for rb in rbs:
        b = rb.rigid
        b.x += b.vx * H
        b.y += b.vy * H
        b.heading += b.omega * H


def momenta(f: PieceField, rbs: list[RobotBody], vel: np.ndarray | None = None,
            robot_vel: list[tuple[float, float, float]] | None = None
            ) -> tuple[np.ndarray, float]:
    """Linear (x, y) kg·m/s and angular momentum about the field origin kg·m²/s of the loose
    pieces (point masses: a frictionless contact leaves their spin alone) and the robots, at
    the present positions, with the present velocities or those given."""
    moving = f.state == LOOSE
    p, m = f.pos[moving], f.mass[moving]
    v = (f.vel if vel is None else vel)[moving]
    lin = (m[:, None] * v[:, :2]).sum(axis=0)
    ang = float((m * (p[:, 0] * v[:, 1] - p[:, 1] * v[:, 0])).sum())
    for k, rb in enumerate(rbs):
        b = rb.rigid
        vx, vy, omega = (b.vx, b.vy, b.omega) if robot_vel is None else robot_vel[k]
        lin = lin + rb.mass * np.array([vx, vy])
        ang += rb.mass * (b.x * vy - b.y * vx) + rb.inertia * omega
    return lin, ang


def test_robot_piece_contacts_conserve_linear_and_angular_momentum() -> None:
    """Pucks thrown from all sides, off-centre, at a driving, spinning robot: the impulses at
    the bumper conserve linear momentum of robot plus pieces over the run, and angular
    momentum in every step (taken where the contacts act: after the push-out, which moves
    bodies, not momenta)."""
    angles = np.arange(6) * (2 * math.pi / 6) + 0.5
    pts = [(8.0 + 1.3 * math.cos(t), 4.0 + 1.3 * math.sin(t)) for t in angles]
    f = field_of([PUCK], [0] * len(pts), pts)
    for i, t in enumerate(angles):
        push(f, i, -2.5 * math.cos(t) + 0.6 * math.sin(t), -2.5 * math.sin(t) - 0.6 * math.cos(t))
    rb = robot(8.0, 4.0, 0.3, 0.4, 0.1, 1.5)
    lin0, _ = momenta(f, [rb])
    hits = 0
    for _ in range(200):
        move([rb])
        b = rb.rigid
        vel, robot_vel = f.vel.copy(), [(b.vx, b.vy, b.omega)]
        _, touched = f.step(H, [rb])
        p = f.pos[:, :2]
        gaps = np.sqrt(((p[:, None] - p[None]) ** 2).sum(-1)) + np.eye(len(p))
        assert gaps.min() > 2 * PUCK.radius  # no piece-piece contact: robot impulses only
        hits += int(touched[0])
        lin, ang = momenta(f, [rb])
        _, ang_before = momenta(f, [rb], vel, robot_vel)
        assert np.abs(lin - lin0).max() < 1e-12
        assert abs(ang - ang_before) < 1e-12
    assert hits >= 6
    assert abs(rb.rigid.omega - 1.5) > 0.1  # the off-centre hits turned the robot


def test_robot_pushes_pieces_and_feels_them() -> None:
    """A robot driving into a ball sends it ahead faster than itself (restitution) and slows
    down by the momentum it gave."""
    f = field_of([PUCK], [0], [(5.0, 4.0)])
    rb = robot(4.0, 4.0, 0.0, 2.0, 0.0, 0.0)
    for _ in range(60):
        rb.rigid.x += rb.rigid.vx * H
        f.step(H, [rb])
    assert f.vel[0, 0] > 2.0
    assert rb.rigid.vx < 2.0
    assert rb.rigid.vx * 50.0 + f.vel[0, 0] * PUCK.mass == pytest.approx(100.0, rel=1e-12)
    assert f.pos[0, 0] - PUCK.radius >= rb.rigid.x + 0.4 - 1e-9


def test_dense_pile_stays_apart() -> None:
    """Hundreds of pieces dropped overlapping into a heap separate and sleep; hit by a fast
    piece and ploughed through by a robot at 1.5 m/s, no two interpenetrate by more than 6 mm
    (4 % of a ball's diameter: a bulldozed heap compresses a little) after any step, and once
    the robot stops they settle apart to a micrometre."""
    rng = np.random.default_rng(7)
    n = 300
    # 240 balls and 60 rings on 20 m²: half the carpet covered.
    pts = [(6.0 + 5.0 * rng.random(), 2.0 + 4.0 * rng.random()) for _ in range(n)]
    pts += [(3.0, 3.8)]
    f = PieceField([BALL, RING], [int(rng.random() < 0.2) for _ in pts[:-1]] + [0], pts,
                   FIELD)
    assert overlaps(f) > 0.1
    for _ in range(200):
        f.step(H)
    assert overlaps(f) < 1e-5
    assert not f.awake.any()
    push(f, n, 6.0, 0.0)
    rb = robot(5.0, 3.0, 0.0, 1.5, 0.0, 0.0)
    worst = 0.0
    for _ in range(600):
        rb.rigid.x += rb.rigid.vx * H
        f.step(H, [rb])
        worst = max(worst, overlaps(f))
    assert worst < 6e-3
    rb.rigid.vx = 0.0
    for _ in range(1000):
        f.step(H, [rb])
    assert overlaps(f) < 1e-5
    assert not f.awake.any()


def test_walls_keep_pieces_in_and_bounce() -> None:
    """Pieces flung at every wall and corner stay on the field; a head-on wall hit returns
    restitution times the speed."""
    f = field_of([BALL], [0] * 5, [(1.0, 1.0), (15.5, 7.0), (8.0, 0.5), (8.0, 7.5),
                                   (0.5, 4.0)])
    for i, (vx, vy) in enumerate([(-5.0, -5.0), (6.0, 6.0), (0.0, -4.0), (0.0, 4.0)]):
        push(f, i, vx, vy)
    push(f, 4, -3.0, 0.0)
    v_in = None
    for _ in range(1000):
        before = f.vel[4, 0]
        f.step(H)
        if before < 0 < f.vel[4, 0] and v_in is None:
            v_in, v_out = before, f.vel[4, 0]
        r = f.radius
        assert np.all(f.pos[:, 0] >= r) and np.all(f.pos[:, 0] <= FIELD[0] - r)
        assert np.all(f.pos[:, 1] >= r) and np.all(f.pos[:, 1] <= FIELD[1] - r)
    assert v_in is not None
    assert v_out == pytest.approx(-BALL.restitution * v_in, rel=1e-3)


def test_field_elements_stop_pieces() -> None:
    """A convex element (a rotated square) stops pieces rolled at its face and its corner:
    none ends inside, and a face hit bounces back."""
    c, s = math.cos(0.4), math.sin(0.4)
    square = tuple((5.0 + x * c - y * s, 4.0 + x * s + y * c)
                   for x, y in ((-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)))
    box = Obstacle("box", square, 1.0)
    starts = [(3.0, 4.0 + 0.1 * k) for k in range(-6, 7)]
    f = field_of([BALL], [0] * len(starts), starts, obstacles=[box])
    for i in range(len(starts)):
        push(f, i, 4.0, 0.2 * (i - 6))
    poly = np.array(square)
    for _ in range(800):
        f.step(H)
        depth, _, _ = circle_polygon(f.pos[:, 0], f.pos[:, 1], f.radius, poly)
        assert depth.max() < 0.05  # pushed out within the step
    depth, _, _ = circle_polygon(f.pos[:, 0], f.pos[:, 1], f.radius, poly)
    assert depth.max() <= 1e-6
    assert (f.pos[:, 0] < 4.3).sum() >= 3  # bounced back


def test_resting_pieces_sleep_until_touched() -> None:
    """Pieces at rest stop being integrated; a robot far away leaves them asleep; one that
    touches a piece wakes only the pieces it reaches, which sleep again once still."""
    pts = [(2.0 + 0.3 * i, 1.0 + 0.3 * j) for i in range(40) for j in range(20)]
    f = field_of([BALL], [0] * len(pts), pts)
    assert not f.awake.any()
    far = robot(14.5, 7.0, 0.0, 0.5, 0.0, 0.0)
    for _ in range(100):
        f.step(H, [far])
        assert not f.awake.any()
    near = robot(1.2, 1.0, 0.0, 1.0, 0.0, 0.0)
    awake = []
    for _ in range(100):
        near.rigid.x += near.rigid.vx * H
        f.step(H, [near])
        awake.append(int(f.awake.sum()))
    assert 0 < max(awake) < 40
    near.rigid.vx = 0.0
    for _ in range(2000):
        f.step(H, [near])
    assert not f.awake.any()


def test_same_inputs_same_arrays() -> None:
    """Determinism: two fields built and driven alike end with identical arrays."""
    def run() -> PieceField:
        rng = np.random.default_rng(11)
        pts = [(4.0 + 3.0 * rng.random(), 2.0 + 3.0 * rng.random()) for _ in range(150)]
        f = PieceField([BALL, RING], [i % 2 for i in range(150)], pts, FIELD)
        rb = robot(3.0, 3.5, 0.2, 1.8, 0.3, 0.5)
        for i in range(500):
            move([rb])
            if i == 100:
                push(f, 3, -2.0, 1.0)
            f.step(H, [rb])
        return f

    a, b = run(), run()
    for name in ("state", "pos", "vel", "spin", "yaw", "awake", "holder"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_take_carry_release() -> None:
    """A taken piece leaves the carpet and contacts; released on the carpet it rolls, released
    in the air it flies (gravity only without a flight model) and lands loose."""
    f = field_of([BALL], [0, 0], [(3.0, 3.0), (5.0, 5.0)])
    f.take(0, 0, (0.2, 0.0, 0.3))
    assert f.state[0] == HELD and f.holder[0] == 0
    with pytest.raises(ValueError):
        f.take(0, 1, (0.0, 0.0, 0.0))
    assert not f.release(0, (4.0, 4.0, BALL.radius), (1.0, 0.0, 0.0))
    assert f.state[0] == LOOSE and f.awake[0]
    f.take(1, 0, (0.0, 0.0, 0.5))
    assert f.release(1, (6.0, 5.0, 0.5), (2.0, 0.0, 1.0))
    assert f.state[1] == FLIGHT
    t = 0.0
    while f.state[1] == FLIGHT:
        f.step(H)
        t += H
    assert f.state[1] == LOOSE and f.pos[1, 2] == BALL.height / 2
    # z = 0.5 + t - g t²/2 reaches 0.075 after this long:
    t_land = (1.0 + math.sqrt(1.0 + 2 * GRAVITY * (0.5 - 0.075))) / GRAVITY
    assert t == pytest.approx(t_land, abs=H)
    f.remove(1)
    assert f.state[1] == GONE


def test_loose_in_zone_orders_by_first_edge() -> None:
    """loose_in finds pieces overlapping a polygon (corners included), nearest the first
    edge first, and skips held pieces."""
    pts = [(3.0, 4.0), (3.3, 4.0), (2.6, 4.0), (3.0, 4.6), (3.58, 4.3)]
    f = field_of([BALL], [0] * len(pts), pts)
    zone = np.array([(2.8, 3.8), (3.5, 3.8), (3.5, 4.2), (2.8, 4.2)])  # first edge: y=3.8
    assert f.loose_in(zone, 0.5).tolist() == [0, 1]
    zone = np.array([(3.5, 3.8), (3.5, 4.2), (2.8, 4.2), (2.8, 3.8)])  # first edge: x=3.5
    assert f.loose_in(zone, 0.5).tolist() == [1, 0]
    f.take(1, 0, (0.0, 0.0, 0.0))
    assert f.loose_in(zone, 0.5).tolist() == [0]
    corner = np.array([(3.5, 4.2), (3.6, 4.2), (3.6, 4.25), (3.5, 4.25)])
    assert f.loose_in(corner, 0.5).tolist() == [4]


def test_two_robots_squeezing_pieces_conserve_momentum() -> None:
    """Two robots driving at each other with pucks between them (a puck meets both in one
    step): linear momentum over the run, and angular momentum in every step without
    piece-piece contacts, are conserved."""
    pts = [(8.0, 4.0), (8.0, 4.4), (8.0, 3.6)]
    f = field_of([PUCK], [0] * len(pts), pts)
    left = robot(7.45, 4.05, 0.0, 1.0, 0.0, 0.3)
    right = robot(8.55, 3.98, 0.1, -1.2, 0.0, -0.2)
    rbs = [left, right]
    lin0, _ = momenta(f, rbs)
    both = checked = 0
    for _ in range(120):
        move(rbs)
        vel = f.vel.copy()
        robot_vel = [(rb.rigid.vx, rb.rigid.vy, rb.rigid.omega) for rb in rbs]
        pair_gaps = np.hypot(*(f.pos[:, None, :2] - f.pos[None, :, :2]).T) + 9 * np.eye(3)
        _, touched = f.step(H, rbs)
        both += int(touched.all())
        lin, ang = momenta(f, rbs)
        assert np.abs(lin - lin0).max() < 1e-12
        if pair_gaps.min() > 2 * PUCK.radius + 0.05:  # no piece-piece contact this step
            _, ang_before = momenta(f, rbs, vel, robot_vel)
            assert abs(ang - ang_before) < 1e-12
            checked += 1
    assert both >= 3 and checked >= 20


# --- a carpet that lags (max_lag): the carpet's part of the step waits while robots meet the
# pieces every step -------------------------------------------------------------------------

TICK = 2 * H


def drive(f: PieceField, rbs: list[RobotBody], steps: int) -> float:
    """Robots at constant velocity, the field stepped with them; the deepest piece-piece
    overlap seen at the end of any tick (where a lagging carpet is current), m."""
    worst = 0.0
    for i in range(steps):
        move(rbs)
        f.step(H, rbs)
        if i % 2 == 1:
            f.sync()
            worst = max(worst, overlaps(f))
    return worst


def test_a_lagging_carpet_rolls_to_the_same_closed_form() -> None:
    """Pieces that meet nothing roll to the same places whether the carpet steps every
    substep or waits a tick (rolling is integrated exactly over any time)."""
    pts = [(3.0, 2.0), (3.0, 4.0), (3.0, 6.0)]
    every, lagging = field_of([BALL, RING], [0, 0, 1], pts), \
        field_of([BALL, RING], [0, 0, 1], pts, max_lag=TICK)
    for f in (every, lagging):
        push(f, 0, 1.0, 0.0)
        push(f, 1, 2.0, 0.3)
        push(f, 2, 3.0, 0.0)
        drive(f, [], 1600)
        f.sync()
    np.testing.assert_allclose(lagging.pos, every.pos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(lagging.vel, every.vel, rtol=0, atol=1e-12)
    assert not lagging.awake.any()


@pytest.mark.parametrize("k", range(6))
def test_a_lagging_carpet_keeps_robot_contacts_honest(k: int) -> None:
    """Robots meet the pieces every substep while the carpet lags: a puck (nothing slows it
    on the carpet) hit by a driving, turning robot (at different moments of a tick) ends
    every tick where, and as fast as, the carpet stepping every substep puts it, to rounding;
    the momentum the robot gave is the puck's."""
    runs = []
    for max_lag in (0.0, TICK):
        f = field_of([PUCK], [0, 0], [(4.62 + 0.004 * k, 3.9 + 0.05 * k), (10.0, 6.0)],
                     max_lag=max_lag)
        push(f, 1, 0.5, 0.0)  # far away, rolling: the carpet is stirred when the robot hits
        rb = robot(4.0, 4.0, 0.0, 2.0, 0.3, 0.8)
        ticks = []
        for _ in range(60):
            drive(f, [rb], 2)
            assert f._lag == 0.0
            b = rb.rigid
            ticks.append([*f.pos[0, :2], *f.vel[0, :2], b.x, b.y, b.heading, b.vx, b.vy,
                          b.omega])
        runs.append(np.array(ticks))
        lin, _ = momenta(f, [rb])
        assert lin == pytest.approx(50.0 * np.array([2.0, 0.3]) + (0.5 * PUCK.mass, 0.0),
                                    rel=1e-12)
    assert abs(runs[0][-1, 2]) > 2.0  # the puck was hit
    np.testing.assert_allclose(runs[1], runs[0], rtol=0, atol=1e-9)


@pytest.mark.parametrize("max_lag", [0.0, TICK])
def test_a_robot_at_5_m_s_through_balls_tunnels_through_nothing(max_lag: float) -> None:
    """A robot held at 5 m/s (its motors keep it there) ploughing 2 m through a carpet of
    balls 25 cm apart, the carpet stepping every substep or lagging a tick: at the end of
    every tick no ball is behind the robot along its path and every ball's centre is out of
    the bumper (the pile the robot bulldozes presses back into it by up to 5.3 cm either
    way), no two balls overlap by more than half a radius (2.5 cm either way: none passed
    through another); the balls hit fly off faster than the robot."""
    pts = [(4.0 + 0.25 * i, 3.0 + 0.25 * j) for i in range(12) for j in range(9)]
    f = field_of([BALL], [0] * len(pts), pts, max_lag=max_lag)
    rb = robot(3.0, 4.0, 0.0, 5.0, 0.0, 0.0)
    worst = deepest = fastest = 0.0
    for _ in range(40):
        for _ in range(2):
            b = rb.rigid
            b.vx, b.vy, b.omega = 5.0, 0.0, 0.0
            b.x += b.vx * H
            f.step(H, [rb])
            fastest = max(fastest, float(np.abs(f.vel[:, 0]).max()))
        f.sync()
        worst = max(worst, overlaps(f))
        b = rb.rigid
        c, s = math.cos(b.heading), math.sin(b.heading)
        corners = [(b.x + x * c - y * s, b.y + x * s + y * c) for x, y in rb.polygon]
        depth, _, _ = circle_polygon(f.pos[:, 0], f.pos[:, 1], f.radius, np.array(corners))
        deepest = max(deepest, float(depth.max()))
        local = f.pos[:, :2] - (b.x, b.y)
        assert not ((local[:, 0] < -0.4) & (np.abs(local[:, 1]) < 0.35 - BALL.radius)).any()
    assert worst < BALL.radius / 2
    assert deepest < 0.8 * BALL.radius
    assert fastest > 6.0


@pytest.mark.parametrize("max_lag", [0.0, TICK])
def test_a_fast_ball_does_not_tunnel_through_a_ball_or_a_thin_element(max_lag: float) -> None:
    """At 8 m/s (what a robot at 5 m/s gives a ball), a ball hits a resting one (which takes
    it on, not passed through) and bounces off a 4 cm thick element."""
    plate = Obstacle("plate", ((9.0, 1.0), (9.04, 1.0), (9.04, 7.0), (9.0, 7.0)), 0.5)
    f = PieceField([BALL], [0, 0, 0], [(3.0, 4.0), (3.6, 4.0), (8.0, 2.0)], FIELD,
                   obstacles=[plate], max_lag=max_lag)
    f.step(H)
    push(f, 0, 8.0, 0.0)
    push(f, 2, 8.0, 0.0)
    drive(f, [], 100)
    f.sync()
    assert f.pos[1, 0] > f.pos[0, 0] + 2 * BALL.radius - 1e-6  # still ahead of the striker
    assert f.vel[1, 0] > 4.0
    assert f.pos[2, 0] < 9.0 - BALL.radius + 1e-9 and f.vel[2, 0] < 0.0  # bounced back


def test_a_lagging_carpet_is_deterministic_and_current_when_read() -> None:
    """Two lagging fields driven alike end with identical arrays; a read (momentum, loose
    pieces in a zone) brings the carpet up to now first."""
    def run() -> PieceField:
        rng = np.random.default_rng(5)
        pts = [(4.0 + 3.0 * rng.random(), 2.0 + 3.0 * rng.random()) for _ in range(150)]
        f = PieceField([BALL, RING], [i % 2 for i in range(150)], pts, FIELD, max_lag=TICK)
        drive(f, [robot(3.0, 3.5, 0.2, 1.8, 0.3, 0.5)], 301)
        return f

    a, b = run(), run()
    for name in ("state", "pos", "vel", "awake", "_lag"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a._lag > 0.0  # the last step waited
    before = a.pos.copy()
    a.momentum()
    assert a._lag == 0.0 and not np.array_equal(a.pos, before)


def test_few_contacts_in_plain_floats_match_the_array_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The few contacts of a step are solved in plain floats (models/pieces/few.py): a robot
    driving and turning through a cluster of balls and rings that hit each other, a wall and
    an element gives the same arrays, step by step, as the numpy path alone, to 1e-9."""
    hub = Obstacle("hub", ((6.0, 3.0), (6.6, 3.0), (6.6, 3.6), (6.0, 3.6)), 1.0)
    pts = [(4.6 + 0.21 * (k % 5), 0.4 + 0.22 * (k // 5)) for k in range(20)]

    def run() -> list[np.ndarray]:
        f = PieceField([BALL, RING], [k % 4 == 0 for k in range(20)], pts, FIELD,
                       obstacles=[hub])
        rb = robot(3.8, 1.0, 0.2, 2.5, 0.4, 0.6)
        out = []
        for _ in range(200):
            move([rb])
            b = rb.rigid
            f.step(H, [rb])
            out.append(np.concatenate([f.pos.ravel(), f.vel.ravel(),
                                       [b.x, b.y, b.heading, b.vx, b.vy, b.omega]]))
        return out

    floats = run()
    floor_module = sys.modules[PieceField.__module__]
    for name in ("FEW_CONTACTS", "FEW_PAIRS", "FEW_BOUNDS"):
        monkeypatch.setattr(floor_module, name, -1)
    arrays = run()
    moved = np.abs(arrays[-1][:60] - arrays[0][:60]).max()
    assert moved > 0.5
    for a, b in zip(floats, arrays, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


def test_pairs_that_cannot_act_are_left_out_without_changing_anything(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain-float pair kernels get only the pairs a step can move (touching ones and,
    in turn, their neighbours within reach): a robot pushing balls into a loose row gives
    bit-identical arrays, step by step, with every nearby pair handed over."""
    floor_module = sys.modules[PieceField.__module__]
    movable = floor_module._movable
    dropped = []

    def counted(a: list[int], b: list[int], over: list[float]) -> tuple[list[int], list[int]]:
        kept = movable(a, b, over)
        dropped.append(len(a) - len(kept[0]))
        return kept

    pts = [(4.0 + 0.16 * (k % 10), 2.0 + 0.18 * (k // 10)) for k in range(40)]

    def run() -> list[np.ndarray]:
        f = PieceField([BALL, RING], [k % 7 == 0 for k in range(40)], pts, FIELD,
                       max_lag=TICK)
        rb = robot(3.0, 2.3, 0.0, 3.0, 0.2, 0.3)
        out = []
        for i in range(240):
            move([rb])
            b = rb.rigid
            f.step(H, [rb])
            if i % 2:
                f.sync()
            out.append(np.concatenate([f.pos.ravel(), f.vel.ravel(), f.awake,
                                       [b.x, b.y, b.heading, b.vx, b.vy, b.omega]]))
        return out

    monkeypatch.setattr(floor_module, "_movable", counted)
    trimmed = run()
    assert sum(dropped) > 0  # some pairs were left out
    monkeypatch.setattr(floor_module, "_movable", lambda a, b, over: (a, b))
    every = run()
    assert np.abs(every[-1][:120] - every[0][:120]).max() > 0.5
    for x, y in zip(trimmed, every, strict=True):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("robots", [1, 2])
def test_robots_meet_loose_pieces_only_after_one_was_taken_or_launched(robots: int) -> None:
    """Robots look at every piece while all are loose; once one is held (or flying, or
    back on the carpet) they meet the loose ones only, and a piece put back down is met
    again."""
    f = field_of([BALL], [0, 0, 0], [(2.0, 2.0), (5.0, 5.0), (6.0, 2.0)], max_lag=TICK)
    push(f, 2, 0.5, 0.0)  # something rolls: the robots look at every piece
    rbs = [robot(9.0, 6.0, 0.0, 0.0, 0.0, 0.0)] + \
        [robot(14.0, 1.0, 0.0, 0.0, 0.0, 0.0)] * (robots - 1)
    f.step(H, rbs)
    f.take(0, 0, (0.0, 0.0, 0.3))  # held where it lay
    rbs[0].rigid = Body(2.0, 2.0, 0.0, 1.0, 0.0, 0.0)  # on top of where it lay
    for _ in range(4):
        assert not f.step(H, rbs)[1][0]
    assert rbs[0].rigid.vx == 1.0 and f.state[0] == HELD
    f.release(0, (2.3, 2.0, BALL.height / 2), (0.0, 0.0, 0.0))  # put down against the bumper
    assert f.step(H, rbs)[1][0]
    assert f.vel[0, 0] > 0.0


@pytest.mark.parametrize("max_lag", [0.0, TICK])
def test_one_piece_type_steps_exactly_as_two_alike_types(max_lag: float) -> None:
    """With every piece of one type the field uses each per-piece constant as one float; two
    robots driving and turning through a pile of balls that hit each other, a wall and an
    element give the same arrays, bit for bit and step by step, as the same balls split over
    two identical types (the per-piece arrays)."""
    hub = Obstacle("hub", ((6.0, 3.0), (6.6, 3.0), (6.6, 3.6), (6.0, 3.6)), 1.0)
    pts = [(4.4 + 0.17 * (k % 8), 0.3 + 0.16 * (k // 8)) for k in range(48)]
    twin = dataclasses.replace(BALL, name="twin")

    def run(types: list[PieceType]) -> list[np.ndarray]:
        f = PieceField(types, [k % len(types) for k in range(len(pts))], pts, FIELD,
                       obstacles=[hub], max_lag=max_lag)
        rbs = [robot(3.6, 1.0, 0.2, 2.5, 0.4, 0.6), robot(7.4, 0.9, 3.0, -2.0, 0.3, -0.4)]
        out = []
        for _ in range(300):
            move(rbs)
            f.step(H, rbs)
            f.sync()
            out.append(np.concatenate([f.pos.ravel(), f.vel.ravel(), f.awake,
                                       *([b.x, b.y, b.heading, b.vx, b.vy, b.omega]
                                         for b in (rb.rigid for rb in rbs))]))
        return out

    one, two = run([BALL]), run([BALL, twin])
    assert np.abs(one[-1][:144] - one[0][:144]).max() > 0.5  # the balls moved
    for a, b in zip(one, two, strict=True):
        assert np.array_equal(a, b)


def test_robots_find_nearby_pieces_robot_by_robot_in_piece_order() -> None:
    """The (robot, piece) pairs within reach of several robots come robot by robot, each
    robot's pieces in ascending order (the order its contacts are summed in)."""
    rng = np.random.default_rng(7)
    pts = [tuple(p) for p in rng.uniform((0.5, 0.5), (5.0, 4.0), (300, 2))]
    f = field_of([BALL], [0] * len(pts), pts)
    rbs = [robot(3.0, 2.0, 0.0, 0, 0, 0), robot(1.5, 1.5, 0.0, 0, 0, 0),
           robot(3.4, 2.3, 0.0, 0, 0, 0), robot(12.0, 6.0, 0.0, 0, 0, 0)]
    poses = [rb.pose for rb in rbs]
    ks, idx = f._within(poses, 0.1, rbs)
    centres = np.array([complex(x, y) for x, y, _ in poses])
    reach = np.array([rb.reach for rb in rbs]) + 0.1
    want_ks, want_idx = (np.abs(f._p - centres[:, None]) < reach[:, None]).nonzero()
    assert len(idx) > 20 and set(ks.tolist()) == {0, 1, 2}
    assert np.array_equal(ks, want_ks) and np.array_equal(idx, want_idx)
