"""A stator current limit holds the current at the limit (issue 21: a 40 A limit settled at
39.91 A): checked against the closed form of a current-limited motor on an inertia, where the
current is the limit and the speed grows at Kt·I/J."""

from __future__ import annotations

import math

import pytest

from simserver.config.loader import default_config_text, loads
from simserver.models.controller import MotorController
from simserver.models.motor import motor_by_name
from simserver.world import World

LIMIT = 40.0  # A
H = 0.005  # s


def _spin_up(motor: str, count: int, inertia: float, seconds: float
             ) -> tuple[list[float], list[float], MotorController]:
    """Full duty through a controller with a LIMIT stator limit into ``count`` motors on
    ``inertia`` kg·m² (at the shaft), stepped exactly for the held voltage of each substep:
    the current at the end of every substep (A, all motors) and the speed (rad/s)."""
    spec = motor_by_name(motor)
    ctl = MotorController(spec, count, stator_limit=LIMIT)
    tau = inertia * spec.R * spec.kv / (count * spec.kt)  # s: mechanical time constant
    decay = math.exp(-H / tau)
    speed, currents, speeds = 0.0, [], []
    for _ in range(round(seconds / H)):
        volts = ctl.apply(1.0, 12.0, speed, H).voltage
        free = volts * spec.kv
        speed = free + (speed - free) * decay
        currents.append(count * (volts - speed / spec.kv) / spec.R)
        speeds.append(speed)
    return currents, speeds, ctl


@pytest.mark.parametrize("motor, count, inertia", [
    ("NEO", 1, 0.002), ("Kraken X60", 2, 0.01), ("CIM", 2, 0.05)])
def test_stator_limit_settles_at_the_limit_on_an_inertia(motor, count, inertia):
    currents, speeds, ctl = _spin_up(motor, count, inertia, 0.1)
    assert ctl.output.stator_limited
    for amps in currents[-10:]:  # settled (the start decays by 1 - e^(-h/τ) a substep)
        assert amps == pytest.approx(count * LIMIT, rel=1e-6)
    spec = motor_by_name(motor)
    # closed form: constant current, so constant acceleration Kt·I/J. A voltage held over
    # the substep cannot keep the current flat while the back-EMF rises: it ends at the limit
    # and averages half the substep's drop (Δω/(Kv·R)) above it, so the speed gained per
    # substep exceeds the closed form's by half that drop relative to the limit
    gain = count * spec.kt * LIMIT * H / inertia
    drop = gain / (spec.kv * spec.R)  # A per motor, over one substep
    assert speeds[-1] - speeds[-2] == pytest.approx(gain * (1 + drop / (2 * LIMIT)), rel=1e-2)
    assert drop / LIMIT < 0.02


def test_stator_limit_settles_at_the_limit_on_a_flywheel_in_the_world():
    world = World(loads(default_config_text() + """
[motors.shooter]
type = "NEO"
stator_limit = "40 A"

[mechanisms.shooter]
type = "flywheel"
motor = "shooter"
gearing = 1
moment_of_inertia = "0.004 kg*m^2"
"""))
    world.set_motor("shooter", 1.0)
    seen = []
    for _ in range(10):
        world.step(0.01)
        seen.append(world.snapshot().currents["shooter"])
    assert world.controllers["shooter"].output.stator_limited
    for amps in seen[1:]:
        assert amps == pytest.approx(LIMIT, rel=1e-6)
