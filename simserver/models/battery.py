"""The main battery and main breaker: open-circuit voltage behind a resistance (RoboSim §5, §6, §9).

    V_bus = max(0, V_oc - R · I_total)

Charge drawn is integrated in amp-hours. Loads that depend on the bus voltage (motors) solve
for it themselves from the Thevenin view :meth:`Battery.source` returns, so the sag they feel
within a substep is exact rather than a step late.

    >>> b = Battery(nominal_voltage=12.0, resistance=0.02, background_current=0.5)
    >>> b.source(other_current=10.0).open_voltage
    11.79

Optional parts (keyword arguments; the defaults keep the plain RoboSim battery apart from the
breaker and brownout flags, which only matter under overload):

**State of charge** (``soc_curve=True``, default off): the open-circuit voltage falls linearly
with the charge drawn, from ``nominal_voltage`` full to ``empty_voltage`` once ``capacity`` Ah
are drawn (clamped at both ends)::

    V_oc = V_nominal - (V_nominal - V_empty) · clamp(charge_used / capacity, 0, 1)

``capacity`` defaults to RoboSim's 17 Ah (MK ES17-12). ``empty_voltage`` defaults to 11.7 V, the
low end of the 11.7–12.5 V that depleted FRC batteries read on an idle robot (WPILib
documentation, "Robot Battery Basics"; RoboSim §5 does not model the decay). The voltage the
loads see in a substep comes from the charge at its start.

**Brownout**: ``brownout`` turns True when the bus voltage drops below ``brownout_voltage``
(default 6.75 V, the roboRIO 2.0 default Stage 2 "output disable" level; the roboRIO 1.0 is fixed
at 6.3 V) and False again only once it rises above ``brownout_voltage + brownout_hysteresis``
(default 0.75 V: the roboRIO stays in brownout "until the voltage rises to greater than 7.5V";
both from the WPILib documentation, "roboRIO Brownout and Understanding Current Draw"). The
battery only raises the flag: the world cuts motor outputs while it is set. The Stage 3 blackout
(roboRIO reset below about 4.5 V) is not modelled.

**Main breaker** (``breaker_rating``, default 120 A; 0 = none): a thermal breaker modelled as a
first-order heat balance: heating ∝ I², cooling ∝ temperature. With ``x = I / rating`` the
normalised heat ``θ`` (1 = the steady state at rated current) follows, exactly for a current held
over a substep::

    θ ← x² + (θ - x²) · e^(-h/τ)

and the breaker trips when ``θ ≥ k²``, ``k = breaker_trip_ratio`` (default 1.15: the "ultimate
trip current" is 115 % of rating). Held at or below ``k·rating`` (138 A by default) it never trips,
so rated current is carried indefinitely. From cold, a held current trips after::

    t_trip = τ · ln(x² / (x² - k²))        (x > k)

``τ = breaker_time_constant`` defaults to 37.5 s, calibrated so 200 % (240 A) trips in 15.05 s,
the middle of the 10–20 s band taken for the FRC 120 A main breaker at 200 %. The curve it gives:

    =========  =======  =======  =======  =======  =======  =======  =======
    % rating   ≤ 115    120      135      150      200      300      500
    trip (s)   never    94.0     48.5     33.2     15.05    5.96     2.04
    =========  =======  =======  =======  =======  =======  =======  =======

(1000 % trips in 0.50 s; there is no separate magnetic/instantaneous element.) The band and
curve are a calibration, not a manufacturer's curve: WPILib's documentation names the Cooper
Bussmann 18X series (PN 185120F) as the main breaker, and the "MX5" series it cites is Snap
Action's MAXI-style branch breaker for the PDP; neither datasheet's table was checked here.

A tripped breaker opens the circuit: bus voltage 0, no current (background included), no charge
drawn, and :meth:`source` is a dead source (0 V, 0 Ω). Heat keeps cooling while it is open.
:meth:`reset_breaker` closes it again with whatever heat is left (a hot breaker re-trips
sooner); :meth:`reset` (world reset) also cools it fully.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DEFAULT_CAPACITY = 17.0  # Ah, RoboSim §5 (MK ES17-12)
DEFAULT_EMPTY_VOLTAGE = 11.7  # V, WPILib "Robot Battery Basics": depleted reads 11.7–12.5 V
DEFAULT_BROWNOUT_VOLTAGE = 6.75  # V, roboRIO 2.0 default Stage 2 brownout
DEFAULT_BROWNOUT_HYSTERESIS = 0.75  # V, recovery above 7.5 V
DEFAULT_BREAKER_RATING = 120.0  # A
DEFAULT_BREAKER_TRIP_RATIO = 1.15  # ultimate trip current / rating
DEFAULT_BREAKER_TIME_CONSTANT = 37.5  # s: 200 % trips in 15.05 s from cold


@dataclass(frozen=True)
class Source:
    """A Thevenin source: open-circuit voltage (V) behind a resistance (ohm)."""

    open_voltage: float
    resistance: float

    def voltage(self, current: float) -> float:
        """Terminal voltage, V, while supplying ``current`` A; never below 0."""
        return max(0.0, self.open_voltage - self.resistance * current)


def breaker_trip_time(current: float, rating: float = DEFAULT_BREAKER_RATING,
                      trip_ratio: float = DEFAULT_BREAKER_TRIP_RATIO,
                      time_constant: float = DEFAULT_BREAKER_TIME_CONSTANT) -> float:
    """Seconds a cold breaker carries ``current`` A before tripping; ``math.inf`` if never."""
    x2 = (current / rating) ** 2
    k2 = trip_ratio * trip_ratio
    if x2 <= k2:
        return math.inf
    return time_constant * math.log(x2 / (x2 - k2))


class Battery:
    """Battery state: last bus voltage, total current and charge drawn; brownout and breaker.

    nominal_voltage: open-circuit voltage when full, V. resistance: internal resistance, ohm.
    background_current: constant draw of the electronics, A. The keyword-only parameters are
    described in the module docstring (capacity Ah, voltages V, currents A, times s).
    """

    def __init__(self, nominal_voltage: float, resistance: float, background_current: float,
                 *, capacity: float = DEFAULT_CAPACITY, soc_curve: bool = False,
                 empty_voltage: float = DEFAULT_EMPTY_VOLTAGE,
                 brownout_voltage: float = DEFAULT_BROWNOUT_VOLTAGE,
                 brownout_hysteresis: float = DEFAULT_BROWNOUT_HYSTERESIS,
                 breaker_rating: float = DEFAULT_BREAKER_RATING,
                 breaker_trip_ratio: float = DEFAULT_BREAKER_TRIP_RATIO,
                 breaker_time_constant: float = DEFAULT_BREAKER_TIME_CONSTANT):
        if nominal_voltage <= 0 or resistance < 0 or background_current < 0:
            raise ValueError("battery needs nominal_voltage > 0, resistance ≥ 0, current ≥ 0")
        if capacity <= 0:
            raise ValueError("battery needs capacity > 0 Ah")
        if soc_curve and not 0 <= empty_voltage <= nominal_voltage:
            raise ValueError("battery needs 0 ≤ empty_voltage ≤ nominal_voltage")
        if brownout_voltage < 0 or brownout_hysteresis < 0:
            raise ValueError("battery needs brownout_voltage ≥ 0, brownout_hysteresis ≥ 0")
        if breaker_rating < 0 or breaker_trip_ratio < 1 or breaker_time_constant <= 0:
            raise ValueError("battery needs breaker_rating ≥ 0, breaker_trip_ratio ≥ 1, "
                             "breaker_time_constant > 0")
        self.nominal_voltage = nominal_voltage
        self.resistance = resistance
        self.background_current = background_current
        self.capacity = capacity
        self.soc_curve = soc_curve
        self.empty_voltage = empty_voltage
        self.brownout_voltage = brownout_voltage
        self.brownout_hysteresis = brownout_hysteresis
        self.breaker_rating = breaker_rating
        self.breaker_trip_ratio = breaker_trip_ratio
        self.breaker_time_constant = breaker_time_constant
        self._decay_dt = -1.0
        self._decay = 1.0
        self.reset()

    def reset(self) -> None:
        """A fresh battery at rest, breaker closed and cold."""
        self.charge_used = 0.0  # Ah
        self.breaker_heat = 0.0  # θ: 1 = steady state at rated current; trips at trip_ratio²
        self.breaker_tripped = False
        self.current = self.background_current
        self.voltage = self.open_voltage - self.resistance * self.background_current
        self.brownout = self.voltage < self.brownout_voltage

    @property
    def open_voltage(self) -> float:
        """Open-circuit voltage now, V (nominal unless the state-of-charge curve is on)."""
        if not self.soc_curve:
            return self.nominal_voltage
        used = min(1.0, max(0.0, self.charge_used / self.capacity))
        return self.nominal_voltage - (self.nominal_voltage - self.empty_voltage) * used

    @property
    def state_of_charge(self) -> float:
        """Fraction of ``capacity`` left, 1 = full (below 0 once over-drawn)."""
        return 1.0 - self.charge_used / self.capacity

    def source(self, other_current: float = 0.0) -> Source:
        """What a load sees: the battery with the background and ``other_current`` A drawn.

        A tripped breaker gives a dead source: 0 V behind 0 Ω.
        """
        if self.breaker_tripped:
            return Source(0.0, 0.0)
        drawn = self.background_current + other_current
        return Source(self.open_voltage - self.resistance * drawn, self.resistance)

    def source_with(self, conductance: float, other_current: float) -> Source:
        """The Thevenin source a load sees when the other loads draw
        ``conductance·V_bus + other_current`` A (linear in the bus voltage, as motors are):
        solving ``V = V_oc − R·(I_bg + g·V + I_o)`` gives ``V_oc' = (V_oc − R·(I_bg + I_o)) /
        (1 + R·g)`` behind ``R' = R / (1 + R·g)``. A tripped breaker gives a dead source.
        """
        if self.breaker_tripped:
            return Source(0.0, 0.0)
        scale = 1.0 / (1.0 + self.resistance * conductance)
        drawn = self.background_current + other_current
        return Source((self.open_voltage - self.resistance * drawn) * scale,
                      self.resistance * scale)

    def reset_breaker(self) -> None:
        """Close a tripped main breaker; its remaining heat is kept."""
        if self.breaker_tripped:
            self.breaker_tripped = False
            self.current = self.background_current
            self.voltage = max(0.0, self.open_voltage - self.resistance * self.current)
            self._update_brownout()

    def _heat(self, current: float, dt: float) -> None:
        """Advance the breaker heat over ``dt`` s at ``current`` A (exact for a held current)."""
        if self.breaker_rating <= 0.0:
            return
        if dt != self._decay_dt:
            self._decay_dt = dt
            self._decay = math.exp(-dt / self.breaker_time_constant)
        x = current / self.breaker_rating
        steady = x * x
        self.breaker_heat = steady + (self.breaker_heat - steady) * self._decay

    def _update_brownout(self) -> None:
        if self.brownout:
            if self.voltage > self.brownout_voltage + self.brownout_hysteresis:
                self.brownout = False
        elif self.voltage < self.brownout_voltage:
            self.brownout = True

    def update(self, load_current: float, dt: float) -> None:
        """Record ``load_current`` A of supply current drawn over ``dt`` s.

        With the breaker open nothing flows and ``load_current`` is ignored. If this substep
        trips it, the state afterwards is the open circuit's (0 V, 0 A); the charge drawn during
        the substep is still counted.
        """
        if self.breaker_tripped:
            self.current = 0.0
            self.voltage = 0.0
            self._heat(0.0, dt)
        else:
            self.current = self.background_current + load_current
            self.voltage = max(0.0, self.open_voltage - self.resistance * self.current)
            self.charge_used += self.current * dt / 3600.0
            self._heat(self.current, dt)
            if self.breaker_heat >= self.breaker_trip_ratio**2 and self.breaker_rating > 0.0:
                self.breaker_tripped = True
                self.current = 0.0
                self.voltage = 0.0
        self._update_brownout()
