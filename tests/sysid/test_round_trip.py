"""SysId in, then out: the constants a config gives as `characterization` come back from
`simserver sysid` within 2 % (issue 21's round trip)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from simserver.config.loader import default_config_text, loads
from simserver.sysid import Settings, characterize
from tests.worlds import ARM, LIFT, SHOULDER_NEO, TWO_KRAKENS

SWERVE = Path("examples/swerve/simserver.toml").read_text()


def within(fitted: float, given: float, share: float = 0.02) -> bool:
    return abs(fitted - given) <= share * abs(given)


@pytest.mark.parametrize("ks,kv,ka", [(0.15, 2.7, 0.3), (0.4, 3.2, 0.5)])
def test_swerve_characterization_comes_back_from_sysid(ks, kv, ka):
    cfg = loads(SWERVE + f"""
[drivetrain.characterization]
ks = "{ks} V"
kv = "{kv} V*s/m"
ka = "{ka} V*s^2/m"
""")
    # Below the traction limit: V/kA under half of μ·g.
    step = 0.5 * cfg.drivetrain.friction * 9.80665 * ka
    fit = characterize(cfg, settings=Settings(step_voltage=step)).fit
    assert within(fit.ks, ks) and within(fit.kv, kv) and within(fit.ka, ka), fit


def test_elevator_characterization_comes_back_from_sysid():
    given = {"ks": 0.2, "kv": 9.0, "ka": 0.3, "kg": 0.6}
    cfg = loads(LIFT + TWO_KRAKENS + f"""
[mechanisms.lift.characterization]
ks = "{given['ks']} V"
kv = "{given['kv']} V*s/m"
ka = "{given['ka']} V*s^2/m"
kg = "{given['kg']} V"
""")
    fit = characterize(cfg, "lift").fit
    for name, value in given.items():
        assert within(getattr(fit, name), value), (name, fit)


def test_arm_characterization_per_rotation_comes_back_from_sysid_per_radian():
    tau = 2 * math.pi
    given = {"ks": 0.2, "kv": 1.5, "ka": 0.08, "kg": 0.8}
    cfg = loads(ARM + SHOULDER_NEO + f"""
[mechanisms.arm.characterization]
ks = "{given['ks']} V"
kv = "{given['kv'] * tau} V*s/rot"
ka = "{given['ka'] * tau} V*s^2/rot"
kg = "{given['kg']} V"
""")
    fit = characterize(cfg, "arm").fit
    for name, value in given.items():
        assert within(getattr(fit, name), value), (name, fit)


def test_kitbot_characterization_comes_back_from_sysid():
    given = {"ks": 0.3, "kv": 3.2, "ka": 0.45}
    cfg = loads(default_config_text() + f"""
[drivetrain.characterization]
ks = "{given['ks']} V"
kv = "{given['kv']} V*s/m"
ka = "{given['ka']} V*s^2/m"
""")
    step = 0.5 * cfg.drivetrain.friction * 9.80665 * given["ka"]
    fit = characterize(cfg, settings=Settings(step_voltage=step)).fit
    for name, value in given.items():
        assert within(getattr(fit, name), value), (name, fit)
