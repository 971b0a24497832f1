"""SysId in, then out: the constants a config gives as `characterization` come back from
`simserver sysid` within 2 % (issue 21's round trip)."""

from __future__ import annotations

from pathlib import Path

import pytest

from simserver.config.loader import loads
from simserver.sysid import Settings, characterize

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
