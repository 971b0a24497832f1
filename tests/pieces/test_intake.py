"""The `intake` mechanism type: zone geometry, roller threshold and direction, capacity,
ejecting, the roller's load; through the real loader and World, pieces through the
PieceAccess protocol (tests/pieces/handling_pieces.py)."""

from __future__ import annotations

import math

import pytest

from simserver.config.loader import ConfigError, loads
from simserver.models.handling.geometry import face_zone
from simserver.models.motor import motor_by_name
from simserver.world import World
from tests.pieces.handling_pieces import MemoryPieces

TOL = 1e-9
HALF_L, HALF_W = 0.4, 0.35  # the robot below: 0.8 m × 0.7 m
START = (4.0, 3.0)
R = 0.075  # piece radius, m

ROBOT = """
[robot]
length = "0.8 m"
width = "0.7 m"
start = { x = "4 m", y = "3 m", heading = "HEADING" }

[motors.roller]
type = "775pro"

[mechanisms.intake]
type = "intake"
motor = "roller"
"""


def world(extra: str = "", heading: str = "0 deg") -> tuple[World, MemoryPieces]:
    """A robot without a drivetrain at (4 m, 3 m) with an intake (defaults plus ``extra``)
    and an empty piece set attached."""
    w = World(loads(ROBOT.replace("HEADING", heading) + extra))
    pieces = MemoryPieces(lambda: w.pose)
    w.attach_pieces(pieces)
    return w, pieces


def field_point(bx: float, by: float, heading: float = 0.0) -> tuple[float, float]:
    """Robot-frame point → field, for the robot at START."""
    c, s = math.cos(heading), math.sin(heading)
    return START[0] + bx * c - by * s, START[1] + bx * s + by * c


def run(w: World, duty: float, seconds: float) -> None:
    w.set_motor("roller", duty)
    for _ in range(round(seconds / 0.02)):
        w.step(0.02)


def out(w: World) -> dict:
    return w.snapshot().mechanisms["intake"]


# --- zone geometry -------------------------------------------------------------------------


def test_face_zones_reach_beyond_the_bumper_and_start_at_the_inset():
    front = face_zone("front", (0.8, 0.7), 0.5, reach=0.1, inset=0.02)
    assert front == ((0.38, 0.25), (0.38, -0.25), (0.5, -0.25), (0.5, 0.25))
    back = face_zone("back", (0.8, 0.7), None, reach=0.1, inset=0.0)
    assert [(round(x, 12), round(y, 12)) for x, y in back] == [
        (-0.4, -0.35), (-0.4, 0.35), (-0.5, 0.35), (-0.5, -0.35)]
    left = face_zone("left", (0.8, 0.7), 0.3, reach=0.1, inset=0.0)
    assert [(round(x, 12), round(y, 12)) for x, y in left] == [
        (-0.15, 0.35), (0.15, 0.35), (0.15, 0.45), (-0.15, 0.45)]


@pytest.mark.parametrize(("gap", "taken"), [(+1e-3, False), (-1e-3, True)])
def test_a_piece_just_beyond_the_reach_is_not_taken_one_just_within_is(gap, taken):
    # Zone: x from the bumper (0.4 m) to 0.4 + 4 in; the piece's footprint edge `gap` beyond.
    w, pieces = world()
    reach = 4 * 0.0254
    pieces.add(*field_point(HALF_L + reach + R + gap, 0.0))
    run(w, 1.0, 0.1)
    assert out(w)["held"] == (1 if taken else 0)
    assert out(w)["beam_break"] is taken


@pytest.mark.parametrize(("gap", "taken"), [(+1e-3, False), (-1e-3, True)])
def test_a_piece_just_beside_the_mouth_is_not_taken(gap, taken):
    w, pieces = world('width = "0.4 m"\n')
    pieces.add(*field_point(HALF_L + 0.05, 0.2 + R + gap))
    run(w, 1.0, 0.1)
    assert out(w)["held"] == (1 if taken else 0)


def test_the_zone_turns_with_the_robot():
    # Heading 90°: the front faces +y on the field.
    w, pieces = world(heading="90 deg")
    ahead = pieces.add(*field_point(HALF_L + 0.05, 0.0, math.pi / 2))
    beside = pieces.add(START[0] + HALF_L + 0.05, START[1])  # where the front was at 0°
    run(w, 1.0, 0.1)
    assert pieces.pieces[ahead].state == 2 and pieces.pieces[beside].state == 0


def test_other_faces_and_a_polygon_zone():
    w, pieces = world('face = "back"\n')
    behind = pieces.add(*field_point(-HALF_L - 0.05, 0.0))
    ahead = pieces.add(*field_point(HALF_L + 0.05, 0.0))
    run(w, 1.0, 0.1)
    assert [p.state for p in pieces.pieces] == [2, 0], (behind, ahead)
    zone = 'zone = [["0.1 m", "-0.1 m"], ["0.3 m", "-0.1 m"], ["0.3 m", "0.1 m"], ' \
           '["0.1 m", "0.1 m"]]\n'
    w, pieces = world(zone)
    pieces.add(*field_point(0.2, 0.0))  # under the robot: a through-the-frame zone
    run(w, 1.0, 0.1)
    assert out(w)["held"] == 1


def test_pieces_above_the_height_are_not_taken():
    w, pieces = world('height = "0.3 m"\n')
    pieces.add(*field_point(HALF_L + 0.05, 0.0), z=0.31)
    pieces.add(*field_point(HALF_L + 0.05, 0.1), z=0.29)
    run(w, 1.0, 0.1)
    assert [p.state for p in pieces.pieces] == [0, 2]


# --- roller: threshold, direction, capacity, eject ------------------------------------------


@pytest.mark.parametrize(("duty", "held"), [(0.299, 0), (0.3, 1), (-0.3, 0), (-1.0, 0)])
def test_the_roller_must_run_inward_at_min_duty(duty, held):
    w, pieces = world('min_duty = 0.3\n')
    pieces.add(*field_point(HALF_L + 0.05, 0.0))
    run(w, duty, 0.1)
    assert out(w)["held"] == held


def test_a_negative_direction_intakes_on_negative_duty():
    w, pieces = world('direction = "negative"\n')
    pieces.add(*field_point(HALF_L + 0.05, 0.0))
    run(w, 1.0, 0.1)
    assert out(w)["held"] == 0
    run(w, -1.0, 0.1)
    assert out(w)["held"] == 1


def test_capacity_limits_what_it_takes_nearest_the_bumper_first():
    w, pieces = world('capacity = 2\nreach = "0.5 m"\nhold_x = "0.1 m"\nspacing = "0.15 m"\n')
    far = pieces.add(*field_point(HALF_L + 0.4, 0.0))
    near = pieces.add(*field_point(HALF_L + 0.1, 0.1))
    middle = pieces.add(*field_point(HALF_L + 0.25, -0.1))
    run(w, 1.0, 0.1)
    assert out(w) == {"held": 2, "beam_break": True}
    assert [pieces.pieces[i].state for i in (near, middle, far)] == [2, 2, 0]
    # Held pieces sit at the hold point, each further one `spacing` behind.
    assert pieces.pieces[near].held_at == pytest.approx((0.1, 0.0, 0.2))
    assert pieces.pieces[middle].held_at == pytest.approx((-0.05, 0.0, 0.2))


def test_reverse_ejects_one_piece_at_the_mouth_then_one_per_interval():
    w, pieces = world('capacity = 3\nreach = "0.3 m"\neject_speed = "3 m/s"\n'
                      'eject_interval = "0.2 s"\n', heading="30 deg")
    h = math.radians(30)
    for k in range(3):
        pieces.add(*field_point(HALF_L + 0.1, -0.2 + 0.2 * k, h))
    run(w, 1.0, 0.04)
    assert out(w)["held"] == 3
    w.set_motor("roller", -1.0)
    w.step(0.02)
    assert out(w)["held"] == 2
    first = pieces.releases[0]
    # From the middle of the zone (0.4 .. 0.7 m ahead) at the hold height, 3 m/s straight out.
    mx, my = field_point(HALF_L + 0.15, 0.0, h)
    assert first.position == pytest.approx((mx, my, 0.2), abs=TOL)
    assert first.velocity == pytest.approx((3 * math.cos(h), 3 * math.sin(h), 0.0), abs=TOL)
    # The first left in the tick's first substep, at 0.045 s; the next leaves 0.2 s later.
    run(w, -1.0, 0.18)  # to 0.24 s
    assert out(w)["held"] == 2
    run(w, -1.0, 0.02)  # to 0.26 s
    assert out(w)["held"] == 1
    assert len(pieces.releases) == 2


def test_a_through_the_bumper_intake_takes_pieces_touching_the_frame():
    w, pieces = world('reach = "0 in"\ninset = "3 in"\n')
    pieces.add(*field_point(HALF_L - 0.03, 0.0))  # pushed into the bumper gap
    run(w, 1.0, 0.1)
    assert out(w)["held"] == 1


def test_without_pieces_on_the_field_it_holds_nothing():
    w = World(loads(ROBOT.replace("HEADING", "0 deg")))
    run(w, 1.0, 0.1)
    assert out(w) == {"held": 0, "beam_break": False}


def test_reset_empties_it():
    w, pieces = world()
    pieces.add(*field_point(HALF_L + 0.05, 0.0))
    run(w, 1.0, 0.1)
    w.reset()
    assert out(w)["held"] == 0


def test_the_running_roller_draws_its_motors_free_current():
    w, _ = world()
    run(w, 1.0, 0.1)
    spec = motor_by_name("775pro")
    assert w.motor_currents["roller"] == pytest.approx(spec.free_current, rel=1e-12)
    run(w, 0.0, 0.1)
    assert w.motor_currents["roller"] == 0.0


# --- config errors ---------------------------------------------------------------------------


def test_a_zone_that_is_not_convex_is_refused():
    bad = 'zone = [["0.4 m", "0 m"], ["0.6 m", "0.2 m"], ["0.5 m", "0 m"], ["0.6 m", "-0.2 m"]]\n'
    with pytest.raises(ConfigError) as info:
        loads(ROBOT.replace("HEADING", "0 deg") + bad)
    assert "mechanisms.intake.zone" in str(info.value)
    assert "convex" in str(info.value)


def test_a_zone_without_depth_is_refused():
    with pytest.raises(ConfigError) as info:
        loads(ROBOT.replace("HEADING", "0 deg") + 'reach = "0 in"\n')
    assert "mechanisms.intake.reach" in str(info.value)


def test_a_clockwise_zone_keeps_its_first_edge_at_the_robot():
    cw = 'zone = [["0.4 m", "-0.2 m"], ["0.4 m", "0.2 m"], ["0.6 m", "0.2 m"], ' \
         '["0.6 m", "-0.2 m"]]\n'
    w, pieces = world(cw)
    zone = w.mechanisms["intake"].zone
    assert {zone[0], zone[1]} == {(0.4, -0.2), (0.4, 0.2)}
    near = pieces.add(*field_point(0.5, 0.0))
    run(w, 1.0, 0.02)
    assert pieces.pieces[near].state == 2


def test_the_documented_example_zone_ejects_straight_ahead():
    example = 'zone = [["0.4 m", "0.2 m"], ["0.4 m", "-0.2 m"], ["0.6 m", "-0.2 m"], ' \
              '["0.6 m", "0.2 m"]]\neject_speed = "2 m/s"\n'
    w, pieces = world(example)
    pieces.add(*field_point(0.45, 0.0))
    run(w, 1.0, 0.02)
    run(w, -1.0, 0.02)
    (shot,) = pieces.releases
    assert shot.position == pytest.approx((*field_point(0.5, 0.0), 0.2), abs=TOL)
    assert shot.velocity == pytest.approx((2.0, 0.0, 0.0), abs=TOL)
