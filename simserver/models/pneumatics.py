"""Pneumatics: compressor, storage and cylinders as one isothermal ideal gas (RoboSim §3.4, §7).

Tanks, tubing and valves form one lumped "system" of fixed volume ``V`` (m³) at a fixed
temperature ``T`` (K). The state is the amount of air in it, ``n`` (mol); pressure follows from
the ideal gas law::

    P_abs = n·R·T / V                       Pa, R = 8.314462618 J/(mol·K)
    p     = P_abs - P_atm                   Pa gauge, P_atm = 101 325 Pa

Compressor (Viair 90C table, linear interpolation in gauge pressure ``p``). The table gives the
free-air flow ``Q(p)``: m³/s of air at atmospheric pressure (and, here, temperature ``T``)
taken in, so the moles it adds over a substep ``h`` (s) are::

    Δn_in = P_atm · Q(p) · (V_bus / 12 V) · h / (R·T)     (explicit Euler, p at start of substep)
    I     = I(p)                                         A, while running; 0 otherwise

Flow scales with bus voltage because a DC motor's speed (and so the pump's displacement rate) is
about proportional to voltage at a given load; current does not, because the load torque, set by
the pressure, fixes the current. At ``V_bus <= 0`` there is neither flow nor current.

Pressure switch with hysteresis (``True`` = contacts closed = "system not full", as WPILib's
``getPressureSwitch``): it opens when ``p >= switch_off_pressure`` and closes again when
``p < switch_on_pressure``. The compressor runs while ``enabled and switch_closed``.

Cylinders. Setting a solenoid to a new state fills the chamber the piston is about to sweep
with air at the feed pressure and exhausts the other chamber to atmosphere (not from the
system, so it costs the system nothing)::

    V_sweep = A·L·(1 - x)          extending; A = π·bore²/4, L = stroke, x = extension 0..1
    V_sweep = (A - a)·L·x          retracting a double-acting cylinder; a = π·rod²/4
    V_sweep = 0                    retracting a single-acting cylinder (spring return)
    Δn_out  = P_feed_abs · V_sweep / (R·T)

The chamber starts at (near) zero volume, so it takes the absolute feed pressure's worth of air,
not the gauge one. ``P_feed`` is the system pressure, or the regulated working pressure if that
is lower. If the system holds less than ``Δn_out`` above atmospheric, the cylinder still moves
(fixed travel time) but takes only what is there: the system drops to atmospheric, never below.
Only the travel still to go is charged, so a reversal mid-stroke costs a partial stroke.
Extension moves towards its target at ``1 / extend_time`` per second, independent of pressure
and load.

Bookkeeping: ``moles == moles_at_reset + moles_compressed - moles_consumed`` up to rounding.

Usage::

    pn = PneumaticSystem(tanks=2)
    pn.add_cylinder("intake", bore=0.0381, stroke=0.3048, rod_diameter=0.0095)
    pn.set_solenoid("intake", True)              # consumes air now
    amps = pn.step(0.005, bus_voltage=12.0)      # compressor current drawn over the substep
    pn.pressure_psi, pn.compressor_running, pn.extension("intake")
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

GAS_CONSTANT = 8.314462618  # J/(mol·K), CODATA 2018 (exact: k_B·N_A)
ATMOSPHERIC_PRESSURE = 101_325.0  # Pa, standard atmosphere
PSI = 6_894.757293168361  # Pa per lbf/in²
CFM = 0.3048**3 / 60.0  # m³/s per ft³/min
NOMINAL_VOLTAGE = 12.0  # V, the compressor table's rating voltage
ROOM_TEMPERATURE = (70.0 - 32.0) * 5.0 / 9.0 + 273.15  # K, 70 °F = 294.26 K (RoboSim §7.1)
TANK_VOLUME = 0.5e-3  # m³, one "half-liter" tank (RoboSim §7)
# Tubing, fittings, valves and gauge: ~3 m of 0.16 in (4.1 mm) ID tubing is ~39 mL; call it 50 mL.
DEFAULT_EXTRA_VOLUME = 50e-6  # m³


@dataclass(frozen=True)
class CompressorTable:
    """Compressor performance versus gauge pressure, interpolated linearly between rows.

    pressure: Pa gauge, strictly increasing. flow: free-air flow, m³/s at atmospheric
    conditions. current: A. Outside the table the end rows hold. voltage: rating voltage, V.
    """

    pressure: tuple[float, ...]
    flow: tuple[float, ...]
    current: tuple[float, ...]
    voltage: float = NOMINAL_VOLTAGE

    def __post_init__(self) -> None:
        if not len(self.pressure) == len(self.flow) == len(self.current) >= 2:
            raise ValueError("compressor table needs ≥ 2 rows of pressure, flow and current")
        if any(b <= a for a, b in zip(self.pressure, self.pressure[1:], strict=False)):
            raise ValueError("compressor table pressures must be strictly increasing")
        if min(self.flow) < 0 or min(self.current) < 0 or not self.voltage > 0:
            raise ValueError("compressor table needs flow ≥ 0, current ≥ 0, voltage > 0")

    def flow_at(self, pressure: float) -> float:
        """Free-air flow, m³/s, at ``pressure`` Pa gauge and the rating voltage."""
        return float(np.interp(pressure, self.pressure, self.flow))

    def current_at(self, pressure: float) -> float:
        """Supply current, A, at ``pressure`` Pa gauge."""
        return float(np.interp(pressure, self.pressure, self.current))


# Viair 90C at 12 V, exactly the table RoboSim uses (RobotCasserole1736/RoboSim,
# Octave/lib/compressor_and_tank.m, commit 6ced909 "Tweaked values per Andymark's website",
# 2015-09-05; source cited there: http://www.andymark.com/product-p/am-2005.htm, AndyMark's
# 12 V test data for the Viair 90C). Flow in CFM of free air, current in A. The 150 psi row
# (0 CFM) is RoboSim's own end point, not a datasheet row: it only matters above 120 psi.
_VIAIR_90C_PSI = (0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 150)
_VIAIR_90C_CFM = (0.88, 0.71, 0.67, 0.64, 0.60, 0.57, 0.53, 0.48, 0.45, 0.43, 0.39, 0.36, 0.34,
                  0.0)
_VIAIR_90C_AMPS = (7, 8, 8, 9, 9, 9, 10, 10, 10, 10, 9, 9, 9, 9)

COMPRESSOR_VIAIR_90C = CompressorTable(
    pressure=tuple(p * PSI for p in _VIAIR_90C_PSI),
    flow=tuple(q * CFM for q in _VIAIR_90C_CFM),
    current=tuple(float(i) for i in _VIAIR_90C_AMPS),
)


class Cylinder:
    """One pneumatic cylinder behind a solenoid valve.

    bore, stroke, rod_diameter: m. extend_time: s for a full stroke, either direction.
    solenoid: commanded state (True = extend). extension: 0 (retracted) .. 1 (extended).
    """

    __slots__ = ("bore", "double_acting", "extend_time", "extension", "rod_diameter",
                 "solenoid", "stroke")

    def __init__(self, bore: float, stroke: float, rod_diameter: float, double_acting: bool,
                 extend_time: float):
        if not (bore > 0 and stroke > 0 and 0 <= rod_diameter < bore and extend_time >= 0):
            raise ValueError("cylinder needs bore > 0, stroke > 0, 0 ≤ rod_diameter < bore, "
                             "extend_time ≥ 0")
        self.bore = bore
        self.stroke = stroke
        self.rod_diameter = rod_diameter
        self.double_acting = double_acting
        self.extend_time = extend_time
        self.solenoid = False
        self.extension = 0.0

    @property
    def extend_volume(self) -> float:
        """Cap-end chamber volume at full stroke, m³: π·bore²/4 · stroke."""
        return math.pi * self.bore**2 / 4.0 * self.stroke

    @property
    def retract_volume(self) -> float:
        """Rod-end chamber volume at full stroke, m³ (0 for single-acting)."""
        if not self.double_acting:
            return 0.0
        return math.pi * (self.bore**2 - self.rod_diameter**2) / 4.0 * self.stroke

    def sweep_volume(self, extend: bool) -> float:
        """Volume, m³, the piston sweeps moving from here to the ``extend`` end."""
        if extend:
            return self.extend_volume * (1.0 - self.extension)
        return self.retract_volume * self.extension

    def advance(self, h: float) -> None:
        """Move ``h`` s towards the commanded end at 1/extend_time per second."""
        target = 1.0 if self.solenoid else 0.0
        remaining = abs(target - self.extension) * self.extend_time  # s of travel left
        if h >= remaining - 1e-12:  # tolerance: step sums like 10 × 0.02 s round below 0.2 s
            self.extension = target
        else:
            self.extension += math.copysign(h / self.extend_time, target - self.extension)


class PneumaticSystem:
    """Compressor, storage volume, pressure switch and cylinders (module docstring: equations).

    tanks: number of ``tank_volume`` m³ tanks. extra_volume: tubing etc., m³. temperature: K.
    switch_off_pressure: Pa gauge at which the pressure switch opens (stops the compressor);
    default 120 psi, the FRC storage limit. switch_on_pressure: Pa gauge below which it closes
    again; default 95 psi, where the FRC-legal Nason SM-2B-115R/443 switch recloses (that
    switch nominally opens at 115 psi, which RoboSim uses; a REV PH with an analog sensor can
    stop at 120). compressor: performance table. working_pressure: regulator setting, Pa gauge,
    or None for cylinders fed at system pressure (FRC rules require ≤ 60 psi working pressure).

    Inputs set by the caller: ``enabled`` (robot code / closed-loop control may stop the
    compressor) and each cylinder's solenoid (:meth:`set_solenoid`).
    """

    def __init__(self, tanks: int = 2, extra_volume: float = DEFAULT_EXTRA_VOLUME,
                 temperature: float = ROOM_TEMPERATURE, switch_off_pressure: float = 120.0 * PSI,
                 switch_on_pressure: float = 95.0 * PSI,
                 compressor: CompressorTable = COMPRESSOR_VIAIR_90C,
                 tank_volume: float = TANK_VOLUME, working_pressure: float | None = None):
        if tanks < 0 or extra_volume < 0 or tank_volume < 0:
            raise ValueError("tanks, tank_volume and extra_volume must be ≥ 0")
        if not tanks * tank_volume + extra_volume > 0:
            raise ValueError("pneumatic system volume must be > 0")
        if not temperature > 0:
            raise ValueError("temperature must be > 0 K")
        if not 0 <= switch_on_pressure < switch_off_pressure:
            raise ValueError("need 0 ≤ switch_on_pressure < switch_off_pressure (Pa gauge)")
        if working_pressure is not None and working_pressure < 0:
            raise ValueError("working_pressure must be ≥ 0 Pa gauge")
        self.volume = tanks * tank_volume + extra_volume  # m³
        self.temperature = temperature
        self.switch_off_pressure = switch_off_pressure
        self.switch_on_pressure = switch_on_pressure
        self.compressor = compressor
        self.working_pressure = working_pressure
        self.enabled = True
        self.cylinders: dict[str, Cylinder] = {}
        self.reset()

    # --- state -----------------------------------------------------------------------------

    def reset(self, pressure: float = 0.0) -> None:
        """Air at ``pressure`` Pa gauge (default atmospheric), cylinders retracted, counters 0."""
        if pressure < 0:
            raise ValueError("reset pressure must be ≥ 0 Pa gauge")
        self.moles = self.moles_at(pressure)
        self.moles_compressed = 0.0  # mol added by the compressor since reset
        self.moles_consumed = 0.0  # mol taken by cylinder actuations since reset
        self.switch_closed = True
        self._update_switch()
        self._bus_voltage = self.compressor.voltage
        for cyl in self.cylinders.values():
            cyl.solenoid = False
            cyl.extension = 0.0

    def moles_at(self, pressure: float) -> float:
        """Moles of air, mol, that put the system at ``pressure`` Pa gauge: (P_atm + p)·V/(R·T)."""
        return (ATMOSPHERIC_PRESSURE + pressure) * self.volume / (GAS_CONSTANT * self.temperature)

    @property
    def absolute_pressure(self) -> float:
        """P_abs = n·R·T/V, Pa."""
        return self.moles * GAS_CONSTANT * self.temperature / self.volume

    @property
    def pressure(self) -> float:
        """System pressure, Pa gauge."""
        return self.absolute_pressure - ATMOSPHERIC_PRESSURE

    @property
    def pressure_psi(self) -> float:
        """System pressure, psi gauge."""
        return self.pressure / PSI

    @property
    def compressor_running(self) -> bool:
        """Whether the compressor runs now: enabled and the pressure switch closed."""
        return self.enabled and self.switch_closed

    @property
    def compressor_current(self) -> float:
        """Current the compressor draws now, A (table at the present pressure; 0 if stopped)."""
        if not self.compressor_running or self._bus_voltage <= 0:
            return 0.0
        return self.compressor.current_at(self.pressure)

    # --- cylinders -------------------------------------------------------------------------

    def add_cylinder(self, name: str, bore: float, stroke: float, rod_diameter: float = 0.0,
                     double_acting: bool = True, extend_time: float = 0.2) -> Cylinder:
        """Add a retracted cylinder fed by this system (see :class:`Cylinder` for units)."""
        if name in self.cylinders:
            raise ValueError(f"cylinder {name!r} already exists")
        cyl = Cylinder(bore, stroke, rod_diameter, double_acting, extend_time)
        self.cylinders[name] = cyl
        return cyl

    def solenoid(self, name: str) -> bool:
        """Commanded state of cylinder ``name``'s solenoid (True = extend)."""
        return self.cylinders[name].solenoid

    def extension(self, name: str) -> float:
        """Extension of cylinder ``name``: 0 retracted .. 1 extended."""
        return self.cylinders[name].extension

    def set_solenoid(self, name: str, extend: bool) -> float:
        """Command cylinder ``name``; on a change, take its fill air now. Returns mol taken."""
        cyl = self.cylinders[name]
        extend = bool(extend)
        if extend == cyl.solenoid:
            return 0.0
        cyl.solenoid = extend
        feed = self.pressure
        if self.working_pressure is not None:
            feed = min(feed, self.working_pressure)
        wanted = (ATMOSPHERIC_PRESSURE + feed) * cyl.sweep_volume(extend) / (
            GAS_CONSTANT * self.temperature)
        taken = min(wanted, max(0.0, self.moles - self.moles_at(0.0)))
        self.moles -= taken
        self.moles_consumed += taken
        self._update_switch()
        return taken

    # --- time ------------------------------------------------------------------------------

    def step(self, h: float, bus_voltage: float = NOMINAL_VOLTAGE) -> float:
        """Advance ``h`` s at ``bus_voltage`` V. Returns the compressor current drawn, A.

        Flow and current come from the pressure and switch state at the start of the substep;
        cylinders travel; then the pressure switch sees the new pressure.
        """
        self._bus_voltage = bus_voltage
        current = self.compressor_current
        if self.compressor_running and bus_voltage > 0:
            scale = bus_voltage / self.compressor.voltage
            added = (ATMOSPHERIC_PRESSURE * self.compressor.flow_at(self.pressure) * scale * h
                     / (GAS_CONSTANT * self.temperature))
            self.moles += added
            self.moles_compressed += added
        for cyl in self.cylinders.values():
            cyl.advance(h)
        self._update_switch()
        return current

    def _update_switch(self) -> None:
        p = self.pressure
        if p >= self.switch_off_pressure:
            self.switch_closed = False
        elif p < self.switch_on_pressure:
            self.switch_closed = True
