"""`[... .losses]` tables become the model's loss terms (config/losses.py)."""

import pytest

from simserver.config.loader import load_section
from simserver.config.losses import (
    DEFAULT_EFFICIENCY,
    DEFAULT_STATIC_FRICTION,
    DriveLossesConfig,
    LossesConfig,
    losses_from_config,
)
from simserver.models.losses import IDEAL, JointMotors
from simserver.models.motor import motor_by_name

NEO = motor_by_name("NEO")


def test_ideal_losses_are_the_ideal_machine():
    cfg = load_section(LossesConfig, {"ideal": True})
    assert losses_from_config(cfg, NEO, 2, 40.0) is IDEAL


def test_default_static_friction_is_that_voltage_times_the_force_per_volt():
    cfg = load_section(LossesConfig, {})
    losses = losses_from_config(cfg, NEO, 2, 40.0)
    joint = JointMotors(NEO, 2, 40.0, losses)
    assert losses.efficiency == DEFAULT_EFFICIENCY and losses.free_current
    assert losses.coulomb / joint.force_per_volt == pytest.approx(DEFAULT_STATIC_FRICTION,
                                                                  rel=1e-12)
    assert losses.viscous == 0.0


def test_viscous_loss_slows_the_free_speed_by_that_fraction():
    base = losses_from_config(load_section(LossesConfig, {"viscous_loss": 0.0}), NEO, 1, 5.0)
    lossy = losses_from_config(load_section(LossesConfig, {"viscous_loss": 0.2}), NEO, 1, 5.0)
    free = [JointMotors(NEO, 1, 5.0, x) for x in (base, lossy)]
    speeds = [j.force_per_volt * 12.0 / j.damping for j in free]
    assert speeds[1] == pytest.approx(0.8 * speeds[0], rel=1e-12)
    assert speeds[0] == pytest.approx(NEO.free_speed / 5.0 * 12.0 / NEO.nominal_voltage,
                                      rel=1e-12)


def test_a_drivetrains_losses_convert_the_same_way():
    cfg = load_section(DriveLossesConfig, {"static_friction": "0.3 V"})
    losses = losses_from_config(cfg, NEO, 2, 8.0 / 0.05)
    joint = JointMotors(NEO, 2, 8.0 / 0.05, losses)
    assert losses.coulomb == pytest.approx(0.3 * joint.force_per_volt, rel=1e-12)
