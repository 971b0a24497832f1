"""Issue 21's tank bugs: a coasting tank's skid added kinetic energy (the pose moved with the
forward speed from before the body turned under the velocity and the sideways speed from
after), and the current reported against a wall came from the wheel speed before the wall
stopped the wheels (162.8 A instead of the 169.0 A stall current, first order in the substep).
"""

from __future__ import annotations

import math

import pytest

from simserver.config.loader import default_config_text, loads
from simserver.models.battery import Source
from simserver.models.differential import (
    DifferentialDrive,
    DifferentialParams,
    PhysicalLongitudinal,
)
from simserver.models.motor import motor_by_name
from simserver.models.tank_traction import Traction, TractionDrive
from simserver.world import World

LB, INCH = 0.45359237, 0.0254
MASS, TRACK, LENGTH = 60 * LB, 26 * INCH, 32 * INCH
MOI = MASS / 12 * ((0.9 * LENGTH) ** 2 + TRACK**2)


def kitbot(lateral_friction: float) -> DifferentialParams:
    return DifferentialParams(MASS, MOI, TRACK, 3 * INCH, 10.71, motor_by_name("CIM"), 2,
                              lateral_friction=lateral_friction)


def ideal(lateral_friction: float) -> DifferentialDrive:
    p = kitbot(lateral_friction)
    return DifferentialDrive(p, PhysicalLongitudinal(p))


def on_tires(lateral_friction: float) -> DifferentialDrive:
    return TractionDrive(kitbot(lateral_friction), Traction(1.1, (0.025, 0.025)))


def motion_energy(drive: DifferentialDrive, before: tuple[float, float, float], h: float,
                  wheel_mass: float) -> float:
    """Kinetic energy, J, of the motion the pose made in the substep: the speed its chord
    implies (|Δp| / (h·sinc(Δθ/2)), what a body moving along the substep's twist goes at), the
    yaw rate Δθ/h, and each wheel's spin ½·M·u² (M = J_wheel/r², 0 without tires)."""
    st = drive.state
    dtheta = st.heading - before[2]
    half = 0.5 * dtheta
    sinc = math.sin(half) / half if half else 1.0
    speed = math.hypot(st.x - before[0], st.y - before[1]) / (h * sinc)
    return (0.5 * MASS * speed**2 + 0.5 * MOI * (dtheta / h) ** 2
            + 0.5 * wheel_mass * (st.v_left**2 + st.v_right**2))


@pytest.mark.parametrize("lateral_friction", [0.0, 0.1, 0.5])
@pytest.mark.parametrize("h", [0.005, 0.02])
@pytest.mark.parametrize(("make", "wheel_mass"), [(ideal, 0.0),
                                                  (on_tires, 0.025 / (3 * INCH) ** 2)],
                         ids=["ideal", "tires"])
def test_a_coasting_tank_skidding_after_a_fast_turn_never_gains_energy(make, wheel_mass,
                                                                      lateral_friction, h):
    drive = make(lateral_friction)
    drive.reset(8.0, 4.0, 0.0)
    source = Source(12.7, 0.015)
    for _ in range(round(1.0 / h)):  # a fast turn: one side at full, the other at 0.3
        drive.step(h, 1.0, 0.3, source)
    drive.coast = (True, True)  # no input: the windings open
    last = None
    rises = []
    for _ in range(round(2.0 / h)):
        st = drive.state
        before = (st.x, st.y, st.heading)
        drive.step(h, 0.0, 0.0, source)
        energy = motion_energy(drive, before, h, wheel_mass)
        if last is not None:
            rises.append(energy - last)
        last = energy
    # Before the fix: +0.31 J in one 5 ms substep with μ = 0, +0.24 J with μ = 0.1; now only
    # rounding (1e-9 of some 400 J).
    assert max(rises) <= 1e-9 * last + 1e-9, max(rises)


def test_the_current_against_a_wall_is_the_stall_current_at_the_end_of_the_substep():
    # The ideal model (rigid traction: the wheels stop with the robot). The breaker is off so
    # that the stall can last.
    text = default_config_text().replace(
        "gearing = 10.71", "gearing = 10.71\n\n[drivetrain.losses]\nideal = true", 1).replace(
        'resistance = "0.015 ohm"', 'resistance = "0.015 ohm"\nbreaker = false', 1)
    world = World(loads(text))
    world.set_motor("left", 1.0)
    world.set_motor("right", 1.0)
    world.step(5.0)  # reaches the red wall after about 3.5 s and keeps pushing
    assert world.drivetrain.body_velocity[0] == pytest.approx(0.0, abs=1e-9)
    cim = motor_by_name("CIM")
    v_oc = world.battery.source().open_voltage
    # Stalled: per motor I = V_bus/R, with V_bus = V_oc − R_b·(4 motors)·I.
    g = 0.015 * 2 / cim.R
    v_bus = v_oc / (1.0 + 2.0 * g)
    stall = 2 * v_bus / cim.R
    assert stall == pytest.approx(169.0, abs=0.05)
    # Before the fix: 162.81 A, the current at the speed one substep of acceleration gives.
    for side in ("left", "right"):
        assert world.motor_currents[side] == pytest.approx(stall, rel=1e-6)
