"""Issue 21, mechanisms: `[mechanisms.<name>.losses]` and `characterization` reach the model
exactly, inconsistent ones are refused by `simserver check` with exit 2 naming the file, the key
and the bound, and a coasting mechanism keeps its friction."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from simserver.cli import main
from simserver.config.loader import default_config_text
from simserver.config.losses import DEFAULT_EFFICIENCY, DEFAULT_STATIC_FRICTION
from simserver.models.losses import Feedforward, feedforward
from simserver.models.mechanisms import GRAVITY
from tests.worlds import ARM, LIFT, SHOULDER_NEO, TWO_KRAKENS, make_world

FLYWHEEL = """
[motors.shooter]
type = "NEO"
neutral = "coast"

[mechanisms.shooter]
type = "flywheel"
motor = "shooter"
gearing = 1.5
moment_of_inertia = "0.004 kg*m^2"
"""

ELEVATOR_SYSID = """
[mechanisms.lift.characterization]
ks = "0.25 V"
kv = "9 V*s/m"
ka = "0.3 V*s^2/m"
kg = "0.45 V"
"""

ARM_SYSID = """
[mechanisms.arm.characterization]
ks = "0.2 V"
kv = "8 V*s/rot"
ka = "0.05 V*s^2/rad"
kg = "0.6 V"
"""


def test_default_losses_are_the_documented_estimates():
    lift = make_world(TWO_KRAKENS + LIFT).mechanisms["lift"].model
    ff = feedforward(lift.joint, lift.carriage_mass, lift.weight)
    assert lift.joint.losses.efficiency == DEFAULT_EFFICIENCY
    assert lift.joint.losses.free_current
    assert ff.ks == pytest.approx(DEFAULT_STATIC_FRICTION, rel=1e-12)


def test_ideal_losses_are_the_ideal_machine():
    world = make_world(TWO_KRAKENS + LIFT + "losses = { ideal = true }\n")
    assert world.mechanisms["lift"].model.joint.losses.ideal


@pytest.mark.parametrize("name, extra", [("lift", TWO_KRAKENS + LIFT + ELEVATOR_SYSID),
                                         ("arm", SHOULDER_NEO + ARM + ARM_SYSID)])
def test_a_characterized_mechanism_has_exactly_those_constants(name, extra):
    model = make_world(extra).mechanisms[name].model
    ff = (feedforward(model.joint, model.carriage_mass, model.weight) if name == "lift"
          else feedforward(model.joint, model.moment_of_inertia, model.gravity_torque))
    given = (Feedforward(0.25, 9.0, 0.3, 0.45) if name == "lift"
             else Feedforward(0.2, 8.0 / (2 * math.pi), 0.05, 0.6))
    for key in ("ks", "kv", "ka", "kg"):
        assert getattr(ff, key) == pytest.approx(getattr(given, key), rel=1e-12), key


def test_an_elevator_characterized_without_kg_weighs_its_carriage_mass():
    text = TWO_KRAKENS + LIFT + ELEVATOR_SYSID.replace('kg = "0.45 V"\n', "")
    lift = make_world(text).mechanisms["lift"].model
    assert lift.weight == pytest.approx(8.0 * GRAVITY, rel=1e-15)


def test_a_coasting_flywheel_slows_under_its_friction_and_motor_losses():
    """Windings open (neutral coast, duty 0): no back-EMF, but the friction and the motors'
    no-load losses stay: J·dw/dt = −D·w − F_c, closed form."""
    world = make_world(FLYWHEEL)
    world.set_motor("shooter", 1.0)
    world.step(1.0)
    model = world.mechanisms["shooter"].model
    w0 = model.velocity
    d, fc = model.joint.loss_damping, model.joint.coulomb
    world.set_motor("shooter", 0.0)
    t0 = world.time
    world.step(0.5)
    t = world.time - t0
    w_inf = -fc / d
    assert model.velocity == pytest.approx(w_inf + (w0 - w_inf) * math.exp(-d / 0.004 * t),
                                           rel=1e-9)
    assert world.snapshot().currents["shooter"] == 0.0


def check(tmp_path: Path, text: str) -> tuple[int, str]:
    path = tmp_path / "robot.toml"
    path.write_text(default_config_text() + text)
    result = CliRunner().invoke(main, ["check", str(path)])
    return result.exit_code, result.stderr


@pytest.mark.parametrize("extra, key, says", [
    pytest.param(TWO_KRAKENS + LIFT + ELEVATOR_SYSID.replace("kv = \"9 V*s/m\"",
                                                             "kv = \"3 V*s/m\""),
                 "mechanisms.lift.characterization.kv", "below 7.519",
                 id="elevator-kv-fast"),
    pytest.param(SHOULDER_NEO + ARM + ARM_SYSID.replace("8 V*s/rot", "1 V*s/rad"),
                 "mechanisms.arm.characterization.kv", "kv 1 V·s/rad is below 1.2",
                 id="arm-kv-fast"),
    pytest.param(FLYWHEEL + '[mechanisms.shooter.characterization]\nkv = "0.05 V*s/rad"\n'
                 'ka = "0.003 V*s^2/rad"\nkg = "0.5 V"\n',
                 "mechanisms.shooter.characterization.kg", "no gravity", id="flywheel-kg"),
    pytest.param(TWO_KRAKENS + LIFT + '[mechanisms.lift.losses]\nideal = true\n'
                 'gearbox_efficiency = 0.8\n',
                 "mechanisms.lift.losses.gearbox_efficiency", "ideal = true", id="ideal-and-eta"),
])
def test_inconsistent_losses_or_constants_are_refused_at_load(tmp_path, extra, key, says):
    code, err = check(tmp_path, extra)
    assert code == 2
    line = next(x for x in err.splitlines() if key in x)
    assert str(tmp_path / "robot.toml") in line and says in line
