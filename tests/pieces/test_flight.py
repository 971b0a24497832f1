"""Pieces in flight: trajectories, carpet bounces and landing, walls, elements, goals.

References: the closed-form projectile without air (range and apex); scipy's solve_ivp
(DOP853, rtol 1e-12) on the same equations of motion with quadratic drag and Magnus lift, as
documented in simserver.models.pieces.flight; Newton's restitution law (a bounce keeps e² of
the normal kinetic energy); the rolling condition of a solid ball after a frictional impact.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from simserver.models.obstacles import Obstacle
from simserver.models.pieces import flight as flight_module
from simserver.models.pieces.flight import (
    ALLIANCE_WALL_HEIGHT,
    GUARDRAIL_HEIGHT,
    LAND_HEIGHT,
    Flight,
)
from simserver.models.pieces.goals import Goal
from simserver.models.pieces.types import PieceType

G = 9.80665
RHO = 1.204
DT = 0.005  # s, the default substep (simserver.config.model: sim.substep)
FIELD = (100.0, 100.0)  # m: walls far away unless a test wants them


def ball(**changes: float) -> PieceType:
    args = dict(radius=0.075, height=0.15, mass=0.215, restitution=0.5, friction=0.5,
                rolling=0.03, drag_coefficient=0.47, drag_area=math.pi * 0.075**2, class_id=0,
                lift_coefficient=1.0)
    args.update(changes)
    return PieceType("ball", "sphere", **args)  # type: ignore[arg-type]


RING = PieceType("ring", "ring", radius=0.1778, height=0.0508, mass=0.235, restitution=0.2,
                 friction=0.6, rolling=0.6, drag_coefficient=0.9, drag_area=0.0181, class_id=0)


def rows(*launches: tuple[tuple[float, float, float], tuple[float, float, float]]
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pos = np.array([p for p, _ in launches], dtype=float)
    vel = np.array([v for _, v in launches], dtype=float)
    return pos, vel, np.zeros_like(pos)


def fly_until_landed(flight: Flight, kind: np.ndarray, pos: np.ndarray, vel: np.ndarray,
                     spin: np.ndarray, dt: float = DT, limit: float = 20.0
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Step every row until it lands; returns where and how fast each landed, each one's apex
    (from the step in which vz changed sign, exact without air) and the steps taken."""
    n = len(kind)
    flying = np.ones(n, dtype=bool)
    land_pos, land_vel = np.zeros((n, 3)), np.zeros((n, 3))
    apex = np.full(n, -np.inf)
    steps = np.zeros(n, dtype=int)
    for _ in range(int(limit / dt)):
        idx = np.flatnonzero(flying)
        if idx.size == 0:
            break
        p, v, w = pos[idx], vel[idx], spin[idx]
        z_before, vz_before = p[:, 2].copy(), v[:, 2].copy()
        events = flight.step(kind[idx], p, v, w, dt)
        pos[idx], vel[idx], spin[idx] = p, v, w
        turned = (vz_before > 0.0) & (v[:, 2] <= 0.0)
        apex[idx[turned]] = z_before[turned] + vz_before[turned] ** 2 / (2 * G)
        steps[idx] += 1
        done = idx[events.landed]
        land_pos[done], land_vel[done] = pos[done], vel[done]
        flying[done] = False
        assert not events.out.any() and (events.scored < 0).all()
    assert not flying.any(), "a piece never landed"
    return land_pos, land_vel, apex, steps


LAUNCHES = (((1.0, 50.0, 0.5), (8.0, 0.0, 6.0)),
            ((2.0, 40.0, 1.2), (5.0, 5.0, 9.0)),
            ((3.0, 60.0, 0.9), (14.0, -3.0, 2.5)))


@pytest.mark.parametrize("dt", [DT, 0.02, 0.0013])
def test_range_and_apex_without_air_match_the_closed_form(dt: float) -> None:
    piece = ball(drag_coefficient=0.0, lift_coefficient=0.0, restitution=0.0)
    flight = Flight([piece], [], [], FIELD)
    pos, vel, spin = rows(*LAUNCHES)
    p0, v0 = pos.copy(), vel.copy()
    land, _, apex, _ = fly_until_landed(flight, np.zeros(3, dtype=int), pos, vel, spin, dt)
    drop = p0[:, 2] - piece.height / 2
    t = (v0[:, 2] + np.sqrt(v0[:, 2] ** 2 + 2 * G * drop)) / G
    expected = p0[:, :2] + v0[:, :2] * t[:, None]
    travelled = np.linalg.norm(expected - p0[:, :2], axis=1)
    assert np.max(np.linalg.norm(land[:, :2] - expected, axis=1) / travelled) < 1e-9
    np.testing.assert_allclose(apex, p0[:, 2] + v0[:, 2] ** 2 / (2 * G), rtol=1e-9)
    np.testing.assert_allclose(land[:, 2], piece.height / 2, rtol=0, atol=1e-15)


def reference(piece: PieceType, p0: np.ndarray, v0: np.ndarray, w: np.ndarray):
    """solve_ivp of the documented equations of motion until the bottom reaches the carpet."""
    drag = 0.5 * RHO * piece.drag_coefficient * piece.drag_area / piece.mass
    lift = 0.5 * RHO * piece.drag_area * piece.lift_coefficient * piece.radius / piece.mass

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        v = y[3:]
        a = np.array([0.0, 0.0, -G]) - drag * np.linalg.norm(v) * v + lift * np.cross(w, v)
        return np.concatenate([v, a])

    def ground(_t: float, y: np.ndarray) -> float:
        return y[2] - piece.height / 2

    ground.terminal, ground.direction = True, -1  # type: ignore[attr-defined]
    return solve_ivp(rhs, (0.0, 20.0), np.concatenate([p0, v0]), method="DOP853",
                     rtol=1e-12, atol=1e-12, events=ground, dense_output=True)


@pytest.mark.parametrize(("spin", "lift"), [
    ((0.0, 0.0, 0.0), 0.0),  # drag only
    ((0.0, -300.0, 0.0), 1.0),  # backspin: lifts
    ((40.0, -150.0, 80.0), 1.0),  # backspin, sidespin and rifle spin together
])
def test_flight_with_drag_and_lift_matches_solve_ivp(spin: tuple[float, float, float],
                                                     lift: float) -> None:
    piece = ball(restitution=0.0, friction=0.0, lift_coefficient=lift)
    flight = Flight([piece], [], [], FIELD)
    p0, v0, w = np.array([1.0, 50.0, 0.6]), np.array([9.0, 1.0, 7.0]), np.array(spin)
    ref = reference(piece, p0, v0, w)
    t_land = ref.t_events[0][0]
    impact = ref.y_events[0][0]

    pos, vel, spins = p0[None].copy(), v0[None].copy(), w[None].copy()
    kind = np.zeros(1, dtype=int)
    for k in range(1, int(t_land / DT) + 1):  # every whole step before the landing
        events = flight.step(kind, pos, vel, spins, DT)
        assert not events.landed[0]
        expected = ref.sol(k * DT)
        assert np.max(np.abs(pos[0] - expected[:3])) < 1e-6 * np.linalg.norm(expected[:3] - p0)
        assert np.max(np.abs(vel[0] - expected[3:])) < 1e-6 * np.linalg.norm(expected[3:])
    events = flight.step(kind, pos, vel, spins, DT)  # the step with the landing inside it
    assert events.landed[0]
    travelled = np.linalg.norm(impact[:2] - p0[:2])
    assert np.linalg.norm(pos[0, :2] - impact[:2]) < 1e-6 * travelled
    # No friction: the landing keeps the impact's horizontal velocity.
    assert np.linalg.norm(vel[0, :2] - impact[3:5]) < 1e-6 * np.linalg.norm(impact[3:5])


def test_backspin_lifts_and_topspin_pushes_down() -> None:
    flight = Flight([ball(restitution=0.0)], [], [], FIELD)
    pos, vel, spin = rows(*[((1.0, 50.0, 0.5), (10.0, 0.0, 6.0))] * 3)
    spin[:, 1] = (-300.0, 0.0, 300.0)  # moving +x: backspin is about -y
    land, _, apex, _ = fly_until_landed(flight, np.zeros(3, dtype=int), pos, vel, spin)
    assert apex[0] > apex[1] > apex[2]
    assert land[0, 0] > land[1, 0] > land[2, 0]


@pytest.mark.parametrize("e", [0.3, 0.6, 0.9])
def test_a_bounce_keeps_e_squared_of_the_energy(e: float) -> None:
    piece = ball(drag_coefficient=0.0, lift_coefficient=0.0, restitution=e)
    flight = Flight([piece], [], [], FIELD)
    pos, vel, spin = rows(((5.0, 5.0, 2.0), (0.0, 0.0, 0.0)))
    kind = np.zeros(1, dtype=int)
    apexes = []
    for _ in range(2000):
        z, vz = pos[0, 2], vel[0, 2]
        events = flight.step(kind, pos, vel, spin, DT)
        if vz > 0.0 >= vel[0, 2]:
            apexes.append(z + vz**2 / (2 * G) - piece.height / 2)
            if len(apexes) == 2:
                break
        assert not events.landed[0]
    drop = 2.0 - piece.height / 2
    # Apex heights are potential energies: after one bounce e² of the drop, after two e⁴.
    assert apexes[0] / drop == pytest.approx(e**2, rel=1e-9)
    assert apexes[1] / apexes[0] == pytest.approx(e**2, rel=1e-9)


def test_a_bounce_too_small_to_rise_a_centimetre_lands() -> None:
    piece = ball(drag_coefficient=0.0, lift_coefficient=0.0, restitution=0.5)
    flight = Flight([piece], [], [], FIELD)
    # Impact at 0.8 m/s rebounds at 0.4 m/s: it would rise 8 mm, under LAND_HEIGHT.
    # Impact at 1.0 m/s rebounds at 0.5 m/s: it would rise 12.7 mm, so it bounces first.
    low = piece.height / 2 + 0.8**2 / (2 * G)
    high = piece.height / 2 + 1.0**2 / (2 * G)
    assert 0.4**2 / (2 * G) < LAND_HEIGHT < 0.5**2 / (2 * G)
    pos, vel, spin = rows(((5.0, 5.0, low), (3.0, 0.0, 0.0)), ((9.0, 5.0, high), (0.0, 0.0, 0.0)))
    kind = np.zeros(2, dtype=int)
    steps_to_land = np.zeros(2, dtype=int)
    for k in range(1, 400):
        events = flight.step(kind, pos, vel, spin, DT)
        steps_to_land[events.landed & (steps_to_land == 0)] = k
        if (steps_to_land > 0).all():
            break
    fall = math.ceil(math.sqrt(2 * 0.8**2 / (2 * G) / G) / DT)
    assert steps_to_land[0] == fall  # landed at its first contact
    assert steps_to_land[1] > fall + 2 * 0.5 / G / DT  # bounced once, then landed
    np.testing.assert_array_equal(pos[:, 2], piece.height / 2)
    np.testing.assert_array_equal(vel[:, 2], 0.0)
    assert vel[0, 0] > 0.0  # keeps rolling for the floor model


def test_a_ball_leaves_a_frictional_bounce_rolling() -> None:
    piece = ball(drag_coefficient=0.0, lift_coefficient=0.0, restitution=0.5, friction=1.0)
    flight = Flight([piece], [], [], FIELD)
    pos, vel, spin = rows(((5.0, 5.0, 0.5), (4.0, 1.0, -3.0)))
    vt = vel[0, :2].copy()
    kind = np.zeros(1, dtype=int)
    while not (vel[0, 2] > 0.0 and pos[0, 2] < 0.2):  # until just after the first bounce
        flight.step(kind, pos, vel, spin, DT)
    # Enough friction to stop the slip: 5/7 of the tangential speed remains, rolling.
    np.testing.assert_allclose(vel[0, :2], 5.0 / 7.0 * vt, rtol=1e-12)
    contact = vel[0] + np.cross(spin[0], [0.0, 0.0, -piece.radius])
    assert abs(contact[0]) < 1e-12 and abs(contact[1]) < 1e-12


def test_a_ring_slides_without_spin() -> None:
    flight = Flight([RING], [], [], FIELD)
    pos, vel, spin = rows(((5.0, 5.0, 0.5), (4.0, 0.0, -3.0)))
    fly_until_landed(flight, np.zeros(1, dtype=int), pos, vel, spin)
    np.testing.assert_array_equal(spin, 0.0)
    assert 0.0 < vel[0, 0] < 4.0


def test_a_low_piece_bounces_off_a_guardrail_and_a_high_one_leaves_the_field() -> None:
    piece = ball(drag_coefficient=0.0, lift_coefficient=0.0, restitution=0.5)
    flight = Flight([piece, RING], [], [], (16.54, 8.07))
    low = GUARDRAIL_HEIGHT - 0.2
    pos, vel, spin = rows(((8.0, 7.5, low + 0.1), (0.0, 10.0, 2.0)),  # bottom under the top
                          ((8.0, 7.5, GUARDRAIL_HEIGHT + 0.3), (0.0, 10.0, 0.0)),
                          ((8.0, 0.5, 1.2), (0.0, -10.0, 0.0)),
                          ((1.0, 4.0, 1.2), (-10.0, 0.0, 0.0)))  # under the alliance wall top
    kind = np.array([0, 0, 1, 0])
    out = np.zeros(4, dtype=bool)
    for _ in range(30):  # 0.15 s: every piece reaches its wall, none reaches the carpet
        idx = np.flatnonzero(~out)
        p, v, w = pos[idx], vel[idx], spin[idx]
        events = flight.step(kind[idx], p, v, w, DT)
        pos[idx], vel[idx], spin[idx] = p, v, w
        out[idx] |= events.out
        assert not events.landed.any()
    assert out.tolist() == [False, True, True, False]
    assert pos[0, 1] <= 8.07 - piece.radius and pos[3, 0] >= piece.radius
    assert vel[0, 1] == pytest.approx(-0.5 * 10.0, rel=1e-12)  # reversed, times e
    assert vel[3, 0] == pytest.approx(0.5 * 10.0, rel=1e-12)


def test_the_alliance_wall_is_taller_than_the_guardrail() -> None:
    assert ALLIANCE_WALL_HEIGHT > 1.5 > GUARDRAIL_HEIGHT
    flight = Flight([ball(lift_coefficient=0.0)], [], [], (16.54, 8.07))
    pos, vel, spin = rows(((1.0, 4.0, 1.0), (-12.0, 0.0, 0.0)),
                          ((1.0, 4.0, ALLIANCE_WALL_HEIGHT + 0.2), (-12.0, 0.0, 0.0)))
    out = np.zeros(2, dtype=bool)
    for _ in range(40):
        out |= flight.step(np.zeros(2, dtype=int), pos, vel, spin, DT).out
    assert out.tolist() == [False, True]


HUB = Obstacle("hub", ((4.0, 3.4), (5.2, 3.4), (5.2, 4.6), (4.0, 4.6)), 1.83)
TRENCH = Obstacle("trench", ((4.0, 1.3), (5.2, 1.3), (5.2, 1.7), (4.0, 1.7)), 1.02)


def test_pieces_bounce_off_an_elements_side_and_top() -> None:
    piece = ball(drag_coefficient=0.0, lift_coefficient=0.0, restitution=0.6, friction=0.0)
    flight = Flight([piece], [], [HUB, TRENCH], (16.54, 8.07))
    pos, vel, spin = rows(((3.0, 4.0, 1.0), (20.0, 0.0, 0.0)),  # 10 cm per step at the side
                          ((4.6, 1.5, 1.5), (0.0, 0.0, -3.0)))  # down onto the trench top
    kind = np.zeros(2, dtype=int)
    for _ in range(30):
        flight.step(kind, pos, vel, spin, DT)
    assert pos[0, 0] < 4.0 - piece.radius and vel[0, 0] == pytest.approx(-12.0)
    assert vel[1, 2] > 0.0 and pos[1, 2] > 1.02 + piece.radius


def test_a_fast_piece_does_not_tunnel_through_a_thin_element() -> None:
    wall = Obstacle("plate", ((6.0, 0.0), (6.01, 0.0), (6.01, 8.0), (6.0, 8.0)), 3.0)
    flight = Flight([ball(drag_coefficient=0.0, lift_coefficient=0.0)], [], [wall], (16.54, 8.07))
    pos, vel, spin = rows(((5.0, 4.0, 1.5), (150.0, 0.0, 0.0)))  # 75 cm per step
    for _ in range(4):
        flight.step(np.zeros(1, dtype=int), pos, vel, spin, DT)
    assert pos[0, 0] < 6.0 and vel[0, 0] < 0.0


def test_a_piece_resting_on_an_element_top_slides_off() -> None:
    piece = ball(drag_coefficient=0.0, lift_coefficient=0.0, restitution=0.0)
    flight = Flight([piece], [], [TRENCH], (16.54, 8.07))
    pos, vel, spin = rows(((4.6, 1.45, 1.3), (0.0, 0.0, 0.0)))
    kind = np.zeros(1, dtype=int)
    landed = False
    for _ in range(400):
        landed = bool(flight.step(kind, pos, vel, spin, DT).landed[0])
        if landed:
            break
    assert landed and pos[0, 2] == pytest.approx(piece.height / 2)
    assert pos[0, 1] < 1.3 - piece.radius  # off the nearest (-y) side


def test_a_piece_falling_into_a_goal_on_an_elements_top_scores() -> None:
    opening = Goal("hub", "blue", ((4.2, 3.6), (5.0, 3.6), (5.0, 4.4), (4.2, 4.4)), 1.58, 1.83)
    other = Goal("other", "red", ((10.0, 3.0), (11.0, 3.0), (11.0, 4.0), (10.0, 4.0)), 1.0, 2.0)
    flight = Flight([ball()], [other, opening], [HUB], (16.54, 8.07))
    # Thrown from 3 m out; a fast one straight down; one onto the hub's top beside the opening.
    pos, vel, spin = rows(((1.5, 4.0, 0.8), (2.45, 0.0, 7.0)),
                          ((4.6, 4.0, 3.0), (0.0, 0.0, -60.0)),
                          ((4.1, 3.5, 2.2), (0.0, 0.0, -1.0)))
    kind = np.zeros(3, dtype=int)
    scored = np.full(3, -1)
    active = np.ones(3, dtype=bool)
    for _ in range(400):
        idx = np.flatnonzero(active)
        p, v, w = pos[idx], vel[idx], spin[idx]
        events = flight.step(kind[idx], p, v, w, DT)
        pos[idx], vel[idx], spin[idx] = p, v, w
        scored[idx] = np.maximum(scored[idx], events.scored)
        active[idx] &= (events.scored < 0) & ~events.landed & ~events.out
    assert scored.tolist() == [1, 1, -1]


def test_bad_rows_leave_the_field_and_do_not_disturb_others() -> None:
    flight = Flight([ball()], [], [], FIELD)
    pos, vel, spin = rows(((1.0, 1.0, 1.0), (1.0, 0.0, 1.0)), ((1.0, 1.0, 1.0), (1.0, 0.0, 1.0)))
    vel[1, 0] = math.nan
    alone_pos, alone_vel, alone_spin = pos[:1].copy(), vel[:1].copy(), spin[:1].copy()
    events = flight.step(np.zeros(2, dtype=int), pos, vel, spin, DT)
    flight.step(np.zeros(1, dtype=int), alone_pos, alone_vel, alone_spin, DT)
    assert events.out.tolist() == [False, True]
    np.testing.assert_array_equal(pos[0], alone_pos[0])


def test_many_pieces_step_together_exactly_as_each_alone() -> None:
    rng = np.random.default_rng(7)
    n = 60
    flight = Flight([ball(), RING], [], [HUB, TRENCH], (16.54, 8.07))
    kind = rng.integers(0, 2, n)
    pos = np.column_stack([rng.uniform(0.5, 16.0, n), rng.uniform(0.5, 7.5, n),
                           rng.uniform(0.2, 2.5, n)])
    vel = rng.normal(0.0, 6.0, (n, 3))
    spin = rng.normal(0.0, 100.0, (n, 3))
    alone = [(pos[i:i + 1].copy(), vel[i:i + 1].copy(), spin[i:i + 1].copy()) for i in range(n)]
    together = flight.step(kind, pos, vel, spin, 0.02)
    for i, (p, v, w) in enumerate(alone):
        events = flight.step(kind[i:i + 1], p, v, w, 0.02)
        np.testing.assert_allclose(p[0], pos[i], rtol=0, atol=1e-12)
        np.testing.assert_allclose(v[0], vel[i], rtol=0, atol=1e-12)
        assert events.landed[0] == together.landed[i] and events.out[0] == together.out[i]


def test_no_pieces_or_no_time_is_a_no_op() -> None:
    flight = Flight([ball()], [], [], FIELD)
    empty = np.zeros((0, 3))
    events = flight.step(np.zeros(0, dtype=int), empty, empty.copy(), empty.copy(), DT)
    assert events.landed.shape == (0,)
    pos, vel, spin = rows(((1.0, 1.0, 1.0), (1.0, 0.0, 1.0)))
    flight.step(np.zeros(1, dtype=int), pos, vel, spin, 0.0)
    assert pos.tolist() == [[1.0, 1.0, 1.0]]


def test_a_piece_falling_onto_a_guardrails_top_bounces_up_off_it() -> None:
    piece = ball(drag_coefficient=0.0, lift_coefficient=0.0, restitution=0.5, friction=0.0)
    flight = Flight([piece], [], [], (16.54, 8.07))
    # Over the rail (its centre between the field's edge and the wall's line), falling.
    pos, vel, spin = rows(((8.0, 8.03, 1.0), (0.0, 0.0, -2.0)))
    kind = np.zeros(1, dtype=int)
    top = GUARDRAIL_HEIGHT + piece.height / 2
    rose = False
    for _ in range(600):
        events = flight.step(kind, pos, vel, spin, DT)
        assert not events.out[0]
        assert pos[0, 2] >= top - 1e-9 or pos[0, 1] <= 8.07 - piece.radius
        rose |= vel[0, 2] > 0.0 and pos[0, 2] > top
        if events.landed[0]:
            break
    assert rose  # bounced off the rail's top
    assert events.landed[0] and pos[0, 1] <= 8.07 - piece.radius  # then hopped into the field


def test_a_piece_released_inside_an_element_is_put_out_through_the_nearest_face() -> None:
    piece = ball(drag_coefficient=0.0, lift_coefficient=0.0, restitution=0.5, friction=0.0)
    flight = Flight([piece], [], [HUB], (16.54, 8.07))
    # 5 cm inside the hub's -x face (grown by the radius), moving further in.
    pos, vel, spin = rows(((4.0 - piece.radius + 0.05, 4.0, 1.0), (1.0, 0.0, 0.0)))
    flight.step(np.zeros(1, dtype=int), pos, vel, spin, DT)
    assert pos[0, 0] < 4.0 - piece.radius
    assert vel[0, 0] == pytest.approx(-0.5)


def test_spin_lift_pressing_a_piece_against_a_wall_does_not_stall_it() -> None:
    piece = ball(drag_coefficient=0.0, restitution=0.5, friction=0.5, lift_coefficient=1.0)
    flight = Flight([piece], [], [], (16.54, 8.07))
    # Rolling along the y = width guardrail with spin about z: the lift pushes it into the rail.
    pos, vel, spin = rows(((3.0, 8.07 - piece.radius, 0.3), (5.7, 0.0, 0.0)))
    spin[0] = (0.0, 0.0, 290.0)
    kind = np.zeros(1, dtype=int)
    for _ in range(600):
        if flight.step(kind, pos, vel, spin, DT).landed[0]:
            break
    else:
        pytest.fail("the piece never landed")
    assert pos[0, 0] > 3.5  # it moved on along the rail


@pytest.mark.parametrize("dt", [DT, 0.02])
def test_a_few_pieces_in_plain_floats_fly_as_the_array_path_does(
        dt: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few pieces in the air are stepped in plain floats while nothing is near them: whole
    flights (free arcs with drag and spin lift, bounces off the carpet, the hub and a
    guardrail, a goal, leaving the field) match the array path's step by step, to 1e-12."""
    goal = Goal("hub", "blue", ((4.2, 3.6), (5.0, 3.6), (5.0, 4.4), (4.2, 4.4)), 1.58, 1.83)
    launches = [((1.5, 4.0, 0.8), (2.45, 0.0, 7.0)), ((8.0, 4.0, 0.5), (3.0, 1.0, 6.0)),
                ((3.0, 2.0, 0.4), (4.0, 0.3, 2.0)), ((8.0, 1.0, 0.3), (0.0, -6.0, 3.0)),
                ((8.0, 7.0, 0.3), (0.0, 12.0, 9.0))]
    n = len(launches)

    def flights(scalar_pieces: int) -> tuple[list[np.ndarray], list[str]]:
        monkeypatch.setattr(flight_module, "SCALAR_PIECES", scalar_pieces)
        flight = Flight([ball(), RING], [goal], [HUB], (16.54, 8.07))
        pos, vel, _ = rows(*launches)
        spin = np.tile([0.0, -40.0, 5.0], (n, 1))
        kind = np.array([0, 0, 1, 0, 0])
        history, ending = [], [""] * n
        active = np.ones(n, dtype=bool)
        for _ in range(round(4.0 / dt)):
            idx = np.flatnonzero(active)
            p, v, w = pos[idx], vel[idx], spin[idx]
            events = flight.step(kind[idx], p, v, w, dt)
            pos[idx], vel[idx], spin[idx] = p, v, w
            history.append(np.concatenate([pos, vel, spin]))
            for i, s, landed, out in zip(idx.tolist(), events.scored.tolist(),
                                         events.landed.tolist(), events.out.tolist(),
                                         strict=True):
                ending[i] = "scored" if s >= 0 else "landed" if landed else \
                    "out" if out else ""
            active[idx] &= (events.scored < 0) & ~events.landed & ~events.out
        return history, ending

    assert n <= flight_module.SCALAR_PIECES
    floats, floats_ending = flights(flight_module.SCALAR_PIECES)
    arrays, arrays_ending = flights(0)
    for a, b in zip(floats, arrays, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    assert floats_ending == arrays_ending
    assert arrays_ending[0] == "scored" and "out" in arrays_ending \
        and arrays_ending.count("landed") >= 2
