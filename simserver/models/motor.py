"""DC motors: the FRC catalog and the steady-state electrical model.

Motor constants come from wpimath's ``DCMotor`` catalog (the same data WPILib's simulation
classes use), plus the older motors of pyfrc's ``motor_cfgs`` under ``pyfrc-`` names with pyfrc's
datasheet figures. The electrical model is the usual brushed/brushless DC model without
inductance::

    I = (V - ω/Kv) / R        per motor, A   (V applied volts, ω shaft speed rad/s)
    τ = Kt · I                per motor, N·m

It holds at every voltage, including 0 V with the shaft turning (the braking current a motor
controller in brake mode lets flow), where WPILib's simulation reports 0 A.

    >>> cim = motor_by_name("CIM")
    >>> round(cim.stall_torque, 2)
    2.42
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from wpimath.system.plant import DCMotor

from simserver.util.untrusted import excerpt


class MotorCatalogError(ValueError):
    """An unknown motor name."""


@dataclass(frozen=True)
class MotorSpec:
    """Constants of one motor (SI units).

    R: winding resistance, ohm. kv: speed per volt, rad/s/V. kt: torque per amp, N·m/A.
    """

    name: str
    nominal_voltage: float
    stall_torque: float
    stall_current: float
    free_current: float
    free_speed: float
    R: float
    kv: float
    kt: float

    @staticmethod
    def from_dcmotor(name: str, m: DCMotor) -> MotorSpec:
        """Copy the constants of a single-motor wpimath DCMotor."""
        return MotorSpec(name, m.nominalVoltage, m.stallTorque, m.stallCurrent, m.freeCurrent,
                         m.freeSpeed, m.R, m.Kv, m.Kt)

    def dcmotor(self) -> DCMotor:
        """This motor as a single-motor wpimath DCMotor."""
        return DCMotor(self.nominal_voltage, self.stall_torque, self.stall_current,
                       self.free_current, self.free_speed, 1)

    def current(self, speed: float, voltage: float) -> float:
        """Current of one motor, A, at shaft ``speed`` (rad/s) and applied ``voltage`` (V)."""
        return (voltage - speed / self.kv) / self.R

    def torque(self, current: float) -> float:
        """Shaft torque of one motor, N·m, at ``current`` A."""
        return self.kt * current


def _rpm(x: float) -> float:
    return x * 2.0 * math.pi / 60.0


def _pyfrc(free_rpm: float, free_a: float, stall_nm: float, stall_a: float) -> DCMotor:
    return DCMotor(12.0, stall_nm, stall_a, free_a, _rpm(free_rpm), 1)


# Catalog name -> factory of a single-motor DCMotor. pyfrc figures from pyfrc.physics.motor_cfgs.
_CATALOG: dict[str, Callable[[], DCMotor]] = {
    "Kraken X60": lambda: DCMotor.krakenX60(1),
    "Kraken X60 FOC": lambda: DCMotor.krakenX60FOC(1),
    "Kraken X44": lambda: DCMotor.krakenX44(1),
    "Kraken X44 FOC": lambda: DCMotor.krakenX44FOC(1),
    "Falcon 500": lambda: DCMotor.falcon500(1),
    "Falcon 500 FOC": lambda: DCMotor.falcon500FOC(1),
    "NEO": lambda: DCMotor.NEO(1),
    "NEO Vortex": lambda: DCMotor.neoVortex(1),
    "NEO 550": lambda: DCMotor.NEO550(1),
    "Minion": lambda: DCMotor.minion(1),
    "CIM": lambda: DCMotor.CIM(1),
    "Mini CIM": lambda: DCMotor.miniCIM(1),
    "Bag": lambda: DCMotor.bag(1),
    "775pro": lambda: DCMotor.vex775Pro(1),
    "RS775-125": lambda: DCMotor.RS775_125(1),
    "BaneBots RS775": lambda: DCMotor.banebotsRS775(1),
    "BaneBots RS550": lambda: DCMotor.banebotsRS550(1),
    "AndyMark 9015": lambda: DCMotor.andymark9015(1),
    "Romi": lambda: DCMotor.romiBuiltIn(1),
    "pyfrc-CIM": lambda: _pyfrc(5310, 2.7, 2.42, 133),
    "pyfrc-MiniCIM": lambda: _pyfrc(5840, 3.0, 1.41, 89),
    "pyfrc-Bag": lambda: _pyfrc(13180, 1.8, 0.43, 53),
    "pyfrc-775Pro": lambda: _pyfrc(18730, 0.7, 0.71, 134),
    "pyfrc-RS775-125": lambda: _pyfrc(5800, 1.6, 0.28, 18),
    "pyfrc-RS550": lambda: _pyfrc(19000, 0.4, 0.38, 84),
    "pyfrc-RS775": lambda: _pyfrc(13050, 2.7, 0.72, 97),
    "pyfrc-AM-9015": lambda: _pyfrc(14270, 3.7, 0.36, 71),
}


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


_BY_KEY = {_key(n): n for n in _CATALOG}


def catalog_names() -> list[str]:
    """Every motor type name, in catalog order."""
    return list(_CATALOG)


@cache
def motor_by_name(name: str) -> MotorSpec:
    """Look a motor up by name; case, spaces and punctuation are ignored (``krakenx60``).

    Raises MotorCatalogError with the closest names when it is unknown.
    """
    canonical = _BY_KEY.get(_key(name))
    if canonical is None:
        hints = difflib.get_close_matches(_key(name), list(_BY_KEY), n=3, cutoff=0.5)
        suggestion = ", ".join(repr(_BY_KEY[h]) for h in hints)
        msg = f"unknown motor type {excerpt(name)}"
        msg += f"; did you mean {suggestion}?" if hints else "; run `simserver motors` for the list"
        raise MotorCatalogError(msg)
    return MotorSpec.from_dcmotor(canonical, _CATALOG[canonical]())
