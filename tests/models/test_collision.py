"""Rigid-body collisions between convex polygons.

References: conservation of linear momentum and of angular momentum about any fixed point
(every impulse acts equally and oppositely on two bodies at one point), conservation of kinetic
energy for e = 1 without friction, the 1-D closed form of a central impact, the single-contact
impulse j = -(1 + e) u_n / (1/m + (r×n)²/J), and the geometry of the separating axis theorem.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from simserver.models.collision import (
    Obstacles,
    check_convex,
    collide,
    outline,
    resolve_pair,
    solve_contacts,
    to_field,
)
from simserver.models.obstacles import Obstacle
from simserver.models.walls import RESTING_SPEED, Body

MASS_A, INERTIA_A = 50.0, 4.0  # kg, kg·m²
MASS_B, INERTIA_B = 65.0, 6.5
SHAPE_A = outline(0.9, 0.8)  # m
SHAPE_B = outline(1.0, 0.7)
# Impacts are set up with the polygons overlapping by at most this much (m), so the push-out
# (which moves the centres by at most this) changes angular momentum about a fixed point by
# ~1e-10 m × 65 kg × 4 m/s ≈ 3e-8 kg·m²/s, far below the 1e-9-relative check (scale ~1e3).
SETUP_DEPTH = 1e-10
# Conservation is exact up to rounding: 1e-9 relative to the momentum scale.
CONSERVED = 1e-9


def box(x0: float, y0: float, x1: float, y1: float) -> tuple[tuple[float, float], ...]:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def energy(*bodies_masses: tuple[Body, float, float]) -> float:
    return sum(0.5 * m * (b.vx**2 + b.vy**2) + 0.5 * j * b.omega**2
               for b, m, j in bodies_masses)


def momentum(a: Body, b: Body, about: tuple[float, float]) -> tuple[float, float, float]:
    """(px, py, L about the fixed point ``about``) of the pair A, B."""
    ox, oy = about
    lin_x = MASS_A * a.vx + MASS_B * b.vx
    lin_y = MASS_A * a.vy + MASS_B * b.vy
    ang = (INERTIA_A * a.omega + MASS_A * ((a.x - ox) * a.vy - (a.y - oy) * a.vx)
           + INERTIA_B * b.omega + MASS_B * ((b.x - ox) * b.vy - (b.y - oy) * b.vx))
    return lin_x, lin_y, ang


def touching_pair(direction: float, heading_a: float, heading_b: float) -> tuple[Body, Body]:
    """A at (5, 4) and B along ``direction`` (rad) from it, just overlapping (≤ SETUP_DEPTH)."""
    ux, uy = math.cos(direction), math.sin(direction)
    pa = to_field(SHAPE_A, 5.0, 4.0, heading_a)
    lo, hi = 0.0, 3.0  # overlap at lo, apart at hi
    while hi - lo > 1e-12:
        mid = 0.5 * (lo + hi)
        if collide(pa, to_field(SHAPE_B, 5.0 + mid * ux, 4.0 + mid * uy, heading_b)):
            lo = mid
        else:
            hi = mid
    s = lo - 0.5 * SETUP_DEPTH
    return (Body(5.0, 4.0, heading_a, 0.0, 0.0, 0.0),
            Body(5.0 + s * ux, 4.0 + s * uy, heading_b, 0.0, 0.0, 0.0))


def contact_speeds(a: Body, b: Body, contact) -> list[float]:
    """Relative normal speed (m/s, > 0 separating) of B from A at each contact point."""
    nx, ny = contact.normal
    out = []
    for px, py in contact.points:
        ux = b.vx - b.omega * (py - b.y) - (a.vx - a.omega * (py - a.y))
        uy = b.vy + b.omega * (px - b.x) - (a.vy + a.omega * (px - a.x))
        out.append(ux * nx + uy * ny)
    return out


def random_impact(rng: np.random.Generator, face: bool) -> tuple[Body, Body]:
    """Touching A and B with random poses and velocities; ``face``: headings differ by a
    multiple of 90° (flush faces, often two contact points), else at random."""
    heading_a = rng.uniform(-math.pi, math.pi)
    turn = rng.integers(4) * math.pi / 2 if face else rng.uniform(-math.pi, math.pi)
    a, b = touching_pair(rng.uniform(-math.pi, math.pi), heading_a, heading_a + turn)
    a.vx, a.vy, a.omega = rng.normal(0.0, 2.0, 3)
    b.vx, b.vy, b.omega = rng.normal(0.0, 2.0, 3)
    return a, b


# ---------------------------------------------------------------- narrow phase


def test_outline_is_a_ccw_rectangle_centred_on_the_robot():
    assert outline(0.9, 0.8) == ((0.45, -0.4), (0.45, 0.4), (-0.45, 0.4), (-0.45, -0.4))
    check_convex(outline(0.9, 0.8))  # raises if not CCW and convex


@pytest.mark.parametrize("points", [
    ((0, 0), (0, 1), (1, 1), (1, 0)),  # clockwise
    ((0, 0), (2, 0), (1, 0.2), (2, 2), (0, 2)),  # concave
    ((0, 0), (1, 0), (2, 0), (1, 1)),  # three collinear points
    ((0, 0), (2, 0), (0.5, 1.5), (1, -0.5), (1.5, 1.5)),  # winds twice (pentagram)
])
def test_non_convex_or_clockwise_polygons_are_rejected(points):
    with pytest.raises(ValueError):
        check_convex(points)
    with pytest.raises(ValueError):
        Obstacles([Obstacle("bad", points, 1.0)], restitution=0.0, friction=0.0)


def test_separated_polygons_have_no_contact():
    a = box(0, 0, 1, 1)
    assert collide(a, box(1.01, 0, 2, 1)) is None
    assert collide(a, to_field(outline(1.0, 1.0), 2.0, 2.0, 0.7)) is None  # rotated, diagonal


def test_touching_polygons_do_not_overlap():
    a = box(0, 0, 1, 1)
    assert collide(a, box(1, 0.2, 2, 0.8)) is None  # face on face
    diamond = ((1.0, 0.5), (1.5, 0.0), (2.0, 0.5), (1.5, 1.0))
    assert collide(a, diamond) is None  # vertex on face


def test_face_face_overlap_gives_two_points_on_the_incident_face():
    contact = collide(box(0, 0, 1, 1), box(0.9, 0.2, 1.9, 0.7))
    assert contact is not None
    assert contact.normal == pytest.approx((1.0, 0.0), abs=1e-15)
    assert contact.depth == pytest.approx(0.1, abs=1e-12)
    np.testing.assert_allclose(sorted(contact.points), [(0.9, 0.2), (0.9, 0.7)], atol=1e-12)


def test_face_face_overlap_clips_the_incident_face_to_the_reference_face():
    # B's left face spans y ∈ [-0.5, 1.5]; only y ∈ [0, 1] lies against A's right face.
    contact = collide(box(0, 0, 1, 1), box(0.95, -0.5, 3.0, 1.5))
    assert contact is not None
    assert contact.depth == pytest.approx(0.05, abs=1e-12)
    np.testing.assert_allclose(sorted(contact.points), [(0.95, 0.0), (0.95, 1.0)], atol=1e-12)


def test_vertex_face_overlap_gives_one_point_at_the_vertex():
    diamond = ((0.95, 0.5), (1.45, 0.0), (1.95, 0.5), (1.45, 1.0))
    contact = collide(box(0, 0, 1, 1), diamond)
    assert contact is not None
    assert contact.normal == pytest.approx((1.0, 0.0), abs=1e-15)
    assert contact.depth == pytest.approx(0.05, abs=1e-12)
    np.testing.assert_allclose(contact.points, [(0.95, 0.5)], atol=1e-12)


def test_swapping_the_polygons_reverses_the_normal():
    a, b = box(0, 0, 1, 1), ((0.95, 0.5), (1.45, 0.0), (1.95, 0.5), (1.45, 1.0))
    ab, ba = collide(a, b), collide(b, a)
    assert ab is not None and ba is not None
    assert ba.normal == pytest.approx((-ab.normal[0], -ab.normal[1]), abs=1e-15)
    assert ba.depth == pytest.approx(ab.depth, abs=1e-15)


def test_rotated_overlap_depth_is_the_minimum_translation_that_separates():
    rng = np.random.default_rng(7)
    for _ in range(300):
        a = to_field(SHAPE_A, 0.0, 0.0, rng.uniform(-math.pi, math.pi))
        b = to_field(SHAPE_B, *rng.uniform(-0.9, 0.9, 2), rng.uniform(-math.pi, math.pi))
        contact = collide(a, b)
        if contact is None:
            continue
        nx, ny = contact.normal
        assert math.hypot(nx, ny) == pytest.approx(1.0, abs=1e-12)

        def shifted(k: float, b=b, nx=nx, ny=ny, depth=contact.depth):
            return tuple((x + k * depth * nx, y + k * depth * ny) for x, y in b)

        # Moved by the depth along the normal the polygons separate (touch); moved slightly
        # less they still overlap (1e-9 relative: rounding).
        after = collide(a, shifted(1.0 + 1e-9))
        assert after is None, after
        assert collide(a, shifted(0.999)) is not None
        for px, py in contact.points:  # each point is on one polygon's boundary ...
            on, other = sorted((_signed_inside(a, px, py), _signed_inside(b, px, py)), key=abs)
            assert abs(on) <= 1e-12
            if contact.depth < 0.3:  # ... and, for overlaps shallower than the boxes, in the
                assert other >= -1e-12  # other (1e-12 m: rounding)


def _signed_inside(poly, px: float, py: float) -> float:
    """Distance (m) of (px, py) inside a CCW convex polygon; negative outside."""
    inside = math.inf
    for (x1, y1), (x2, y2) in zip(poly, poly[1:] + poly[:1], strict=True):
        length = math.hypot(x2 - x1, y2 - y1)
        inside = min(inside, ((x2 - x1) * (py - y1) - (y2 - y1) * (px - x1)) / length)
    return inside


# ---------------------------------------------------------------- robot–robot


SCENARIOS = {
    # direction of B from A (rad), headings of A and B (rad), velocities of A and B
    "head-on": (0.0, 0.0, 0.0, (2.0, 0.0, 0.0), (-1.5, 0.0, 0.0)),
    "glancing": (0.6, 0.0, 0.25, (0.5, 2.5, 0.3), (-0.3, -2.0, -0.5)),
    "corner-first": (0.0, 0.0, math.pi / 4, (2.5, 0.3, 0.0), (-0.5, 0.0, 1.0)),
    "spinning": (2.0, 0.4, -1.0, (-1.0, 1.5, -6.0), (0.5, -0.5, 4.0)),
}


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("friction", [0.0, 0.6])
@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_pair_impact_conserves_linear_and_angular_momentum(scenario, friction, e):
    direction, heading_a, heading_b, va, vb = SCENARIOS[scenario]
    a, b = touching_pair(direction, heading_a, heading_b)
    a.vx, a.vy, a.omega = va
    b.vx, b.vy, b.omega = vb
    assert min(contact_speeds(a, b, collide(to_field(SHAPE_A, a.x, a.y, a.heading),
                                            to_field(SHAPE_B, b.x, b.y, b.heading)))) < 0
    before = {o: momentum(a, b, o) for o in ((0.0, 0.0), (16.5, 8.0))}
    velocities = (a.vx, a.vy, a.omega, b.vx, b.vy, b.omega)
    assert resolve_pair(a, SHAPE_A, MASS_A, INERTIA_A, b, SHAPE_B, MASS_B, INERTIA_B, e,
                        friction)
    assert (a.vx, a.vy, a.omega, b.vx, b.vy, b.omega) != velocities  # a real impulse
    for about, (px, py, ang) in before.items():
        qx, qy, ang_after = momentum(a, b, about)
        lin_scale = MASS_A * math.hypot(*va[:2]) + MASS_B * math.hypot(*vb[:2])
        ang_scale = (INERTIA_A * abs(va[2]) + INERTIA_B * abs(vb[2])
                     + MASS_A * math.hypot(a.x - about[0], a.y - about[1]) * math.hypot(*va[:2])
                     + MASS_B * math.hypot(b.x - about[0], b.y - about[1]) * math.hypot(*vb[:2]))
        assert math.hypot(qx - px, qy - py) <= CONSERVED * lin_scale
        assert abs(ang_after - ang) <= CONSERVED * ang_scale


def test_randomized_pair_impacts_conserve_momentum_and_never_add_energy():
    rng = np.random.default_rng(2024)
    impulses = 0
    for k in range(600):
        a, b = random_impact(rng, face=k % 3 == 0)
        e, mu = rng.uniform(0.0, 1.0), rng.choice([0.0, rng.uniform(0.0, 1.5)])
        px, py, ang = momentum(a, b, (0.0, 0.0))
        lin_scale = MASS_A * math.hypot(a.vx, a.vy) + MASS_B * math.hypot(b.vx, b.vy)
        ang_scale = (INERTIA_A * abs(a.omega) + INERTIA_B * abs(b.omega)
                     + MASS_A * math.hypot(a.x, a.y) * math.hypot(a.vx, a.vy)
                     + MASS_B * math.hypot(b.x, b.y) * math.hypot(b.vx, b.vy))
        e0 = energy((a, MASS_A, INERTIA_A), (b, MASS_B, INERTIA_B))
        v0 = (a.vx, b.vx)
        assert resolve_pair(a, SHAPE_A, MASS_A, INERTIA_A, b, SHAPE_B, MASS_B, INERTIA_B, e, mu)
        impulses += (a.vx, b.vx) != v0
        qx, qy, ang_after = momentum(a, b, (0.0, 0.0))
        assert math.hypot(qx - px, qy - py) <= CONSERVED * lin_scale, k
        assert abs(ang_after - ang) <= CONSERVED * ang_scale, k
        # 1e-12 relative: rounding; a real impact (e ≤ 1) can only dissipate.
        assert energy((a, MASS_A, INERTIA_A), (b, MASS_B, INERTIA_B)) <= e0 * (1 + 1e-12), k
    assert impulses > 250  # about half the random impacts approach at the contact


def test_elastic_frictionless_impacts_conserve_kinetic_energy():
    rng = np.random.default_rng(11)
    checked = two_point = 0
    for k in range(1500):
        a, b = random_impact(rng, face=k % 2 == 0)
        contact = collide(to_field(SHAPE_A, a.x, a.y, a.heading),
                          to_field(SHAPE_B, b.x, b.y, b.heading))
        # Elastic only where every contact approaches faster than RESTING_SPEED (slower
        # contacts are inelastic by design).
        if max(contact_speeds(a, b, contact)) >= -RESTING_SPEED:
            continue
        e0 = energy((a, MASS_A, INERTIA_A), (b, MASS_B, INERTIA_B))
        resolve_pair(a, SHAPE_A, MASS_A, INERTIA_A, b, SHAPE_B, MASS_B, INERTIA_B, 1.0, 0.0)
        assert energy((a, MASS_A, INERTIA_A), (b, MASS_B, INERTIA_B)) == pytest.approx(
            e0, rel=1e-9), k
        checked += 1
        two_point += len(contact.points) == 2
    assert checked > 300 and two_point > 100  # single- and two-point impacts both covered


def test_inelastic_impacts_remove_the_approach_speed_at_every_contact():
    rng = np.random.default_rng(5)
    approaching = 0
    for k in range(800):
        a, b = random_impact(rng, face=k % 2 == 0)
        contact = collide(to_field(SHAPE_A, a.x, a.y, a.heading),
                          to_field(SHAPE_B, b.x, b.y, b.heading))
        approaching += min(contact_speeds(a, b, contact)) < 0
        mu = rng.choice([0.0, 0.4, 1.2])
        resolve_pair(a, SHAPE_A, MASS_A, INERTIA_A, b, SHAPE_B, MASS_B, INERTIA_B, 0.0, mu)
        # 1e-9 m/s: rounding (the normal impulses are solved exactly).
        assert min(contact_speeds(a, b, contact)) >= -1e-9, k
    assert approaching > 300


@pytest.mark.parametrize("e", [0.0, 0.3, 0.8, 1.0])
@pytest.mark.parametrize(("m1", "m2"), [(50.0, 50.0), (40.0, 70.0)])
def test_equal_boxes_central_impact_matches_the_one_dimensional_closed_form(e, m1, m2):
    shape = outline(0.9, 0.8)
    a = Body(5.0, 4.0, 0.0, 2.0, 0.0, 0.0)
    b = Body(5.9 - 1e-6, 4.0, 0.0, -1.0, 0.0, 0.0)
    assert resolve_pair(a, shape, m1, 4.0, b, shape, m2, 4.0, e, 0.0)
    # Newton's law of restitution with momentum conservation, 1-D.
    v1, v2 = 2.0, -1.0
    total = m1 * v1 + m2 * v2
    assert a.vx == pytest.approx((total + m2 * e * (v2 - v1)) / (m1 + m2), abs=1e-12)
    assert b.vx == pytest.approx((total + m1 * e * (v1 - v2)) / (m1 + m2), abs=1e-12)
    # A central impact exerts no torque and no sideways impulse (rounding only).
    assert max(abs(a.vy), abs(b.vy), abs(a.omega), abs(b.omega)) <= 1e-12


def test_pair_push_out_splits_by_inverse_mass_and_leaves_no_overlap():
    rng = np.random.default_rng(3)
    for _ in range(200):
        a = Body(5.0, 4.0, rng.uniform(-math.pi, math.pi), 0.0, 0.0, 0.0)
        b = Body(*(np.array([5.0, 4.0]) + rng.uniform(-0.8, 0.8, 2)),
                 rng.uniform(-math.pi, math.pi), 0.0, 0.0, 0.0)
        centre = ((MASS_A * a.x + MASS_B * b.x) / (MASS_A + MASS_B),
                  (MASS_A * a.y + MASS_B * b.y) / (MASS_A + MASS_B))
        before = collide(to_field(SHAPE_A, a.x, a.y, a.heading),
                         to_field(SHAPE_B, b.x, b.y, b.heading))
        touched = resolve_pair(a, SHAPE_A, MASS_A, INERTIA_A, b, SHAPE_B, MASS_B, INERTIA_B,
                               0.5, 0.5)
        assert touched == (before is not None)
        after = collide(to_field(SHAPE_A, a.x, a.y, a.heading),
                        to_field(SHAPE_B, b.x, b.y, b.heading))
        assert after is None or after.depth <= 1e-9  # 1e-9 m: rounding only
        # The centre of mass stays put (1e-12 m: rounding); at rest, nothing else changes.
        assert ((MASS_A * a.x + MASS_B * b.x) / (MASS_A + MASS_B),
                (MASS_A * a.y + MASS_B * b.y) / (MASS_A + MASS_B)) == pytest.approx(
                    centre, abs=1e-12)
        assert (a.vx, a.vy, a.omega, b.vx, b.vy, b.omega) == (0.0,) * 6
        if before is not None:  # the lighter robot moves farther, by the mass ratio
            move_a = math.hypot(a.x - 5.0, a.y - 4.0)
            assert move_a == pytest.approx(before.depth * MASS_B / (MASS_A + MASS_B), rel=1e-9)


def test_pair_far_apart_is_untouched():
    a = Body(3.0, 4.0, 0.5, 2.0, 0.0, 1.0)
    b = Body(5.0, 4.0, -0.5, -2.0, 0.0, -1.0)
    assert not resolve_pair(a, SHAPE_A, MASS_A, INERTIA_A, b, SHAPE_B, MASS_B, INERTIA_B,
                            0.5, 0.5)
    assert a == Body(3.0, 4.0, 0.5, 2.0, 0.0, 1.0)
    assert b == Body(5.0, 4.0, -0.5, -2.0, 0.0, -1.0)


def test_robot_pushing_another_rests_against_it_without_chatter():
    # A's motors push it forward at 4 m/s² (below traction); B is a robot with its wheels
    # locked sideways, dragged by carpet friction μg = 3 m/s². A drives into the middle of
    # B's face at 1 m/s (faster than RESTING_SPEED: the first impact bounces, e = 0.5).
    dt, push, drag = 0.005, 4.0, 3.0
    a = Body(5.0, 4.0, 0.0, 1.0, 0.0, 0.0)
    b = Body(6.0, 4.0, 0.0, 0.0, 0.0, 0.0)
    shape = outline(0.9, 0.8)
    speeds_b, gaps = [], []
    for _ in range(400):
        a.vx += push * dt
        b.vx = max(0.0, b.vx - drag * dt)
        a.x += a.vx * dt
        b.x += b.vx * dt
        touched = resolve_pair(a, shape, MASS_A, INERTIA_A, b, shape, MASS_B, INERTIA_B,
                               0.5, 0.3)
        speeds_b.append(b.vx)
        gaps.append((b.x - a.x - 0.9, touched, a.vx - b.vx))
    # After the first impact, A catches up and then pushes B every substep: in contact each
    # step, no relative speed left (rounding), no gap opening (a bounce would open ~mm), B's
    # speed rising steadily and the pair not spinning.
    settled = gaps[100:]
    assert all(touched for _, touched, _ in settled)
    assert max(abs(rel) for _, _, rel in settled) <= 1e-9
    assert max(abs(gap) for gap, _, _ in settled) <= 1e-9
    assert all(later >= earlier for earlier, later in itertools.pairwise(speeds_b[100:]))
    assert speeds_b[-1] == pytest.approx(speeds_b[100] + 299 * dt * (
        MASS_A * push - MASS_B * drag) / (MASS_A + MASS_B), rel=1e-6)
    assert max(abs(a.omega), abs(b.omega)) <= 1e-9


# ---------------------------------------------------------------- one contact manifold


def test_one_manifold_impulses_meet_the_contact_and_friction_conditions():
    # 1 or 2 points sharing a normal are solved exactly (no sweeps). Recover the impulses on A
    # from its velocity change and check the complementarity conditions of an inelastic
    # (e = 0) frictional impact: each point pushes or separates, none approaches afterwards;
    # the tangential impulse (at the points' centre) is inside the cone |p_t| ≤ μ Σp_n and
    # then stops the centre's slip, or on the cone against the remaining slip.
    rng = np.random.default_rng(17)
    modes = {"stick": 0, "slide": 0, "one point": 0, "one of two": 0}
    for k in range(3000):
        theta = rng.uniform(-math.pi, math.pi)
        nx, ny = math.cos(theta), math.sin(theta)  # into A
        count = 1 + k % 2
        offsets = rng.uniform(-0.6, 0.6, (count, 2))
        a = Body(5.0, 4.0, 0.0, *rng.normal(0.0, 2.0, 3))
        b = None if k % 3 else Body(*rng.uniform(4.0, 6.0, 2), 0.0, *rng.normal(0.0, 2.0, 3))
        mu = rng.uniform(0.0, 1.5)
        before = (a.vx, a.vy, a.omega)
        solve_contacts(a, MASS_A, INERTIA_A, b, MASS_B, INERTIA_B,
                       [(rx, ry, nx, ny) for rx, ry in offsets], 0.0, mu)

        def speed(px: float, py: float, dx: float, dy: float, a: Body = a,
                  b: Body | None = b) -> float:
            """Speed (m/s) of A relative to B at offset (px, py) from A, along (dx, dy)."""
            ux, uy = a.vx - a.omega * py, a.vy + a.omega * px
            if b is not None:
                qx, qy = px + a.x - b.x, py + a.y - b.y
                ux, uy = ux - (b.vx - b.omega * qy), uy - (b.vy + b.omega * qx)
            return ux * dx + uy * dy

        px_, py_ = MASS_A * (a.vx - before[0]), MASS_A * (a.vy - before[1])
        p_n, p_t = px_ * nx + py_ * ny, -px_ * ny + py_ * nx  # N·s along n and t
        arms = [rx * ny - ry * nx for rx, ry in offsets]  # r × n
        cx, cy = offsets.mean(axis=0)
        torque = INERTIA_A * (a.omega - before[2]) - p_t * (cx * nx + cy * ny)  # Σ p_i r_i × n
        if count == 1:
            points = [p_n]
        else:  # p_1 + p_2 = p_n, p_1 (r_1 × n) + p_2 (r_2 × n) = torque
            p2 = (torque - p_n * arms[0]) / (arms[1] - arms[0])
            points = [p_n - p2, p2]
        tol_p, tol_v = 1e-9 * MASS_A, 1e-9  # N·s, m/s (rounding; speeds are ~2 m/s)
        for p, (rx, ry) in zip(points, offsets, strict=True):
            w = speed(rx, ry, nx, ny)
            assert p >= -tol_p and w >= -tol_v, k
            assert p <= tol_p or abs(w) <= tol_v, k  # a pushing point stops
        slip = speed(cx, cy, -ny, nx)
        assert abs(p_t) <= mu * p_n + tol_p, k
        if abs(p_t) < mu * p_n - tol_p:
            assert abs(slip) <= tol_v, k
            modes["stick"] += 1
        elif p_n > tol_p:
            assert p_t * slip <= tol_p * tol_v, k
            modes["slide"] += 1
        modes["one point"] += count == 1 and p_n > tol_p
        modes["one of two"] += count == 2 and min(points) <= tol_p < max(points)
    assert min(modes.values()) > 100, modes


# ---------------------------------------------------------------- robot–field element


WALL = Obstacle("wall", box(6.0, 0.0, 7.0, 8.0), 1.0)  # a long face at x = 6 m


def body_into_wall(heading: float, depth: float, vx: float, vy: float, omega: float
                   ) -> tuple[Body, tuple[float, float]]:
    """A robot left of the x = 6 m face whose foremost corner is ``depth`` past it.

    Returns the body and that corner's offset from the centre (the contact lever arm).
    """
    corners = to_field(SHAPE_A, 0.0, 0.0, heading)
    lever = max(corners, key=lambda p: p[0])
    return Body(6.0 - lever[0] + depth, 4.0, heading, vx, vy, omega), lever


def test_flush_head_on_hit_gets_no_spin():
    field = Obstacles([WALL], restitution=0.2, friction=0.5)
    body = Body(6.0 - 0.45 + 0.01, 4.0, 0.0, 2.0, 0.0, 0.0)
    assert field.resolve(body, SHAPE_A, MASS_A, INERTIA_A)
    assert body.vx == pytest.approx(-0.2 * 2.0, abs=1e-12)  # Newton: v' = −e·v, exact solve
    assert abs(body.vy) <= 1e-12 and abs(body.omega) <= 1e-12
    assert body.x == pytest.approx(6.0 - 0.45, abs=1e-12)  # pushed back flush


@pytest.mark.parametrize("heading", [0.3, -0.3])
def test_off_centre_corner_hit_turns_the_robot_as_the_impulse_law_predicts(heading):
    e = 0.5
    field = Obstacles([WALL], restitution=e, friction=0.0)
    body, (_, ry) = body_into_wall(heading, 0.002, 2.0, 0.0, 0.0)
    assert field.resolve(body, SHAPE_A, MASS_A, INERTIA_A)
    # One corner hits: j = (1 + e)·u_n / (1/m + (r×n)²/J) along −x at the corner, torque
    # r × j = ry·j. Heading +0.3 puts the front-right corner (ry < 0) forward, so the robot
    # turns clockwise, toward lying flush; heading −0.3 mirrors it.
    rn = ry  # r × n with n = (−1, 0)
    j = (1 + e) * 2.0 / (1 / MASS_A + rn * rn / INERTIA_A)
    assert body.omega == pytest.approx(ry * j / INERTIA_A, rel=1e-12)
    assert (body.omega < -0.3) if heading > 0 else (body.omega > 0.3)
    assert body.vx == pytest.approx(2.0 - j / MASS_A, rel=1e-12)


def test_inelastic_obstacle_hit_removes_the_normal_approach_velocity():
    field = Obstacles([WALL], restitution=0.0, friction=0.4)
    rng = np.random.default_rng(9)
    for _ in range(300):
        heading = rng.uniform(-math.pi, math.pi)
        body, _ = body_into_wall(heading, rng.uniform(1e-4, 0.02), *rng.normal(0, 2, 3))
        field.resolve(body, SHAPE_A, MASS_A, INERTIA_A)
        for px, py in to_field(SHAPE_A, body.x, body.y, body.heading):
            if px >= 6.0 - 1e-9:  # the corners in contact after the push-out
                # 1e-9 m/s: rounding (normal impulses solved exactly).
                assert body.vx - body.omega * (py - body.y) <= 1e-9


def test_sliding_hit_obeys_coulomb_friction():
    # Flush hit while sliding fast along the face: friction saturates, |Δp_t| = μ |Δp_n|.
    field = Obstacles([WALL], restitution=0.0, friction=0.3)
    body = Body(6.0 - 0.45 + 0.001, 4.0, 0.0, 2.0, 3.0, 0.0)
    assert field.resolve(body, SHAPE_A, MASS_A, INERTIA_A)
    assert abs(body.vx) <= 1e-9  # e = 0 stops the face (rounding)
    # 1e-6 relative: the friction sweeps stop at CONVERGED = 1e-6 of the total impulse.
    assert 3.0 - body.vy == pytest.approx(0.3 * 2.0, rel=1e-6)


def test_slow_sliding_hit_with_high_friction_sticks():
    field = Obstacles([WALL], restitution=0.0, friction=1.0)
    body = Body(6.0 - 0.45 + 0.001, 4.0, 0.0, 2.0, 0.2, 0.0)
    assert field.resolve(body, SHAPE_A, MASS_A, INERTIA_A)
    # Both corners stop along the normal (exact), so v_x = ω = 0 (rounding); they stop along
    # the face too: v_y + ω·0.45 = 0 within 1e-4 m/s, far below any sensor's resolution and
    # above the residual (~1e-5 m/s) the friction sweeps leave at CONVERGED.
    assert abs(body.vx) <= 1e-9 and abs(body.omega) <= 1e-9
    assert abs(body.vy + body.omega * 0.45) <= 1e-4


def test_single_corner_obstacle_hit_conserves_angular_momentum_about_the_corner():
    rng = np.random.default_rng(4)
    field_cases = 0
    for _ in range(400):
        heading = rng.uniform(-math.pi, math.pi)
        xs = sorted(p[0] for p in to_field(SHAPE_A, 0.0, 0.0, heading))
        depth = rng.uniform(1e-4, 0.02)
        if xs[-1] - xs[-2] <= depth + 1e-6:
            continue  # two corners past the face
        body, (rx, ry) = body_into_wall(heading, depth, *rng.normal(0, 2, 3))

        def about_corner(b: Body, rx=rx, ry=ry) -> float:
            return INERTIA_A * b.omega - MASS_A * (rx * b.vy - ry * b.vx)

        before = about_corner(body)
        scale = INERTIA_A * abs(body.omega) + MASS_A * math.hypot(rx, ry) * math.hypot(
            body.vx, body.vy)
        Obstacles([WALL], rng.uniform(0, 1), rng.uniform(0, 2)).resolve(
            body, SHAPE_A, MASS_A, INERTIA_A)
        assert abs(about_corner(body) - before) <= 1e-12 * scale  # rounding only
        field_cases += 1
    assert field_cases > 200


def test_obstacle_impacts_never_add_energy_and_leave_no_penetration():
    hexagon = Obstacle("hex", tuple((3.0 + 0.96 * math.cos(k * math.pi / 3 + math.pi / 6),
                                     4.0 + 0.96 * math.sin(k * math.pi / 3 + math.pi / 6))
                                    for k in range(6)), 1.8)
    corner = Obstacle("corner", ((0.0, 0.0), (1.8, 0.0), (0.0, 1.3)), 2.0)
    field = Obstacles([hexagon, corner, WALL], restitution=0.7, friction=0.8)
    rng = np.random.default_rng(21)
    touches = 0
    for _ in range(1500):
        body = Body(*rng.uniform((0.0, 0.0), (7.0, 8.0)), rng.uniform(-math.pi, math.pi),
                    *rng.normal(0, 2.5, 3))
        e0 = energy((body, MASS_A, INERTIA_A))
        touched = field.resolve(body, SHAPE_A, MASS_A, INERTIA_A)
        touches += touched
        assert energy((body, MASS_A, INERTIA_A)) <= e0 * (1 + 1e-12)  # rounding only
        placed = to_field(SHAPE_A, body.x, body.y, body.heading)
        for ob in field.obstacles:
            left = collide(placed, ob.points)
            # 1e-9 m: rounding (the elements are too far apart to wedge a robot).
            assert left is None or left.depth <= 1e-9, (ob.name, left)
    assert touches > 200


def test_robot_clear_of_obstacles_is_untouched():
    field = Obstacles([WALL], restitution=0.2, friction=0.3)
    body = Body(3.0, 4.0, 1.0, 3.0, -2.0, 4.0)
    assert not field.resolve(body, SHAPE_A, MASS_A, INERTIA_A)
    assert body == Body(3.0, 4.0, 1.0, 3.0, -2.0, 4.0)


def test_near_is_false_only_where_resolve_finds_nothing():
    field = Obstacles([WALL, Obstacle("post", box(2.0, 2.0, 2.3, 2.3), 1.0)], 0.2, 0.3)
    reach = math.hypot(0.45, 0.4)  # SHAPE_A's bounding radius, m
    assert not field.near(4.0, 4.0, reach)
    assert field.near(5.5, 4.0, reach) and field.near(2.15, 1.5, reach)
    rng = np.random.default_rng(13)
    for _ in range(2000):
        body = Body(*rng.uniform(0.0, 8.0, 2), rng.uniform(-math.pi, math.pi), 1.0, 0.0, 0.0)
        near = field.near(body.x, body.y, reach)
        assert near or not field.resolve(body, SHAPE_A, MASS_A, INERTIA_A)


def test_separating_robot_overlapping_an_obstacle_is_only_pushed_out():
    field = Obstacles([WALL], restitution=1.0, friction=1.0)
    body = Body(6.0 - 0.45 + 0.01, 4.0, 0.0, -0.5, 0.2, 0.0)
    assert field.resolve(body, SHAPE_A, MASS_A, INERTIA_A)
    assert (body.vx, body.vy, body.omega) == (-0.5, 0.2, 0.0)
    assert body.x == pytest.approx(6.0 - 0.45, abs=1e-12)


def test_robot_in_a_corner_between_two_elements_is_pushed_out_of_both():
    floor = Obstacle("floor", box(0.0, 0.0, 8.0, 1.0), 1.0)
    field = Obstacles([WALL, floor], restitution=0.2, friction=0.3)
    body = Body(5.6, 1.4, 0.4, 1.0, -1.0, 0.0)
    assert field.resolve(body, SHAPE_A, MASS_A, INERTIA_A)
    for px, py in to_field(SHAPE_A, body.x, body.y, body.heading):
        assert px <= 6.0 + 1e-12 and py >= 1.0 - 1e-12  # rounding of the push-out only


# ---------------------------------------------------------------- the arithmetic, pinned

# sha256 of the velocities (IEEE-754 bits) after IMPACTS, and of the contacts of BOXES, as the
# solver of simserver 0ccb9e0 (before its contact rows were named) computed them: a change to
# the floating-point operation order of solve_contacts or of the narrow phase changes them.
# Inputs use + - * / only (no libm), and the solver sqrt, so the figures hold on every platform.
# A deliberate change to the arithmetic updates these, saying why.
IMPACTS_SHA256 = "6d0b8587f314324e5c4ffdb31df2f28bd96e867afeeec5af1bc986f20f4473a8"
BOXES_SHA256 = "bf4d4eb1fe09c49e25468a8440b8ed80924012b9878c704dad7ec0071eeea59b"


def _impacts() -> bytes:
    """The velocities after 3000 impacts: one manifold (1 or 2 points) and several manifolds
    (3-5 points with different normals, a robot in a corner), static and moving b, with and
    without friction and restitution, slow (resting) and fast approaches."""
    import random
    import struct

    rng = random.Random(2026)
    normals = [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0), (0.6, 0.8), (-0.8, 0.6),
               (0.28, -0.96), (-0.96, -0.28), (0.7071067811865476, 0.7071067811865476)]
    out = bytearray()
    for k in range(3000):
        count = (1, 2, 2, 3, 4, 5)[k % 6]
        shared = k % 6 < 3  # one manifold: the points share a normal
        nx, ny = rng.choice(normals)
        contacts = []
        for _ in range(count):
            if not shared:
                nx, ny = rng.choice(normals)
            contacts.append((rng.uniform(-0.6, 0.6), rng.uniform(-0.6, 0.6), nx, ny))
        scale = rng.choice((0.1, 1.0, 4.0))  # m/s: resting, slow, fast
        a = Body(5.0, 4.0, 0.0, *(rng.uniform(-scale, scale) for _ in range(3)))
        b = None if k % 4 == 0 else Body(rng.uniform(4.0, 6.0), rng.uniform(3.0, 5.0), 0.0,
                                         *(rng.uniform(-scale, scale) for _ in range(3)))
        masses = (rng.uniform(20.0, 70.0), rng.uniform(1.0, 8.0), rng.uniform(20.0, 70.0),
                  rng.uniform(1.0, 8.0))  # kg, kg·m², kg, kg·m²
        solve_contacts(a, masses[0], masses[1], b, masses[2], masses[3], contacts,
                       rng.choice((0.0, 0.3, 1.0)), rng.choice((0.0, 0.4, 1.2)))
        out += struct.pack("<3d", a.vx, a.vy, a.omega)
        if b is not None:
            out += struct.pack("<3d", b.vx, b.vy, b.omega)
    return bytes(out)


def _boxes() -> bytes:
    """The contacts (normal, depth, points) of 3000 pairs of axis-aligned boxes (exact edge
    normals, no trigonometry) placed to overlap, touch or miss."""
    import random

    rng = random.Random(2027)
    out = []
    for _ in range(3000):
        x0, y0 = rng.uniform(0.0, 2.0), rng.uniform(0.0, 2.0)
        a = box(x0, y0, x0 + rng.uniform(0.2, 1.0), y0 + rng.uniform(0.2, 1.0))
        x1, y1 = rng.uniform(0.0, 2.5), rng.uniform(0.0, 2.5)
        b = box(x1, y1, x1 + rng.uniform(0.2, 1.0), y1 + rng.uniform(0.2, 1.0))
        out.append(repr(collide(a, b)))  # repr: each float exactly
    return "\n".join(out).encode()


def test_impulses_are_bit_identical_to_the_pinned_solver():
    import hashlib

    assert hashlib.sha256(_impacts()).hexdigest() == IMPACTS_SHA256


def test_contacts_are_bit_identical_to_the_pinned_narrow_phase():
    import hashlib

    assert hashlib.sha256(_boxes()).hexdigest() == BOXES_SHA256
