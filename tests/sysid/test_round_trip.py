"""SysId in, then out: the constants a config gives as `characterization` come back from
`simserver sysid` within 2 % (issue 21's round trip)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from simserver.config.loader import default_config_text, loads
from simserver.sysid import Settings, characterize
from tests.worlds import ARM, LIFT, SHOULDER_NEO, TWO_KRAKENS

G = 9.80665
SWERVE = Path("examples/swerve/simserver.toml").read_text()
MECANUM = Path("examples/mecanum/simserver.toml").read_text()
ROT = 2 * math.pi  # rad per rotation


def table(name: str, given: dict[str, float], per: str = "m", scale: float = 1.0) -> str:
    """The `characterization` table of ``name`` with ``given`` constants; kV and kA per
    ``per`` (their values in per-radian units times ``scale``)."""
    lines = [f"[{name}.characterization]", f'ks = "{given["ks"]} V"',
             f'kv = "{given["kv"] * scale} V*s/{per}"', f'ka = "{given["ka"] * scale} V*s^2/{per}"']
    if "kg" in given:
        lines.append(f'kg = "{given["kg"]} V"')
    return "\n" + "\n".join(lines) + "\n"


def within(fitted: float, given: float, share: float = 0.02) -> bool:
    return abs(fitted - given) <= share * abs(given)


CASES = {
    "swerve-light": (SWERVE, "drivetrain", None, {"ks": 0.15, "kv": 2.7, "ka": 0.3}),
    "swerve-heavy": (SWERVE, "drivetrain", None, {"ks": 0.4, "kv": 3.2, "ka": 0.5}),
    "kitbot": (default_config_text(), "drivetrain", None, {"ks": 0.3, "kv": 3.2, "ka": 0.45}),
    "mecanum": (MECANUM, "drivetrain", None, {"ks": 0.25, "kv": 3.4, "ka": 0.5}),
    "elevator": (LIFT + TWO_KRAKENS, "mechanisms.lift", "lift",
                 {"ks": 0.2, "kv": 9.0, "ka": 0.3, "kg": 0.6}),
}


@pytest.mark.parametrize("case", CASES)
def test_characterization_comes_back_from_sysid(case):
    text, name, mechanism, given = CASES[case]
    cfg = loads(text + table(name, given))
    settings = Settings()
    if mechanism is None:  # below the traction limit: V/kA under half of μ·g
        settings = Settings(step_voltage=0.5 * cfg.drivetrain.friction * G * given["ka"])
    fit = characterize(cfg, mechanism, settings).fit
    for key, value in given.items():
        assert within(getattr(fit, key), value), (key, fit)


def test_arm_characterization_per_rotation_comes_back_from_sysid_per_radian():
    given = {"ks": 0.2, "kv": 1.5, "ka": 0.08, "kg": 0.8}
    cfg = loads(ARM + SHOULDER_NEO + table("mechanisms.arm", given, "rot", ROT))
    fit = characterize(cfg, "arm").fit
    for key, value in given.items():
        assert within(getattr(fit, key), value), (key, fit)
