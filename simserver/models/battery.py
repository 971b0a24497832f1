"""The main battery: an open-circuit voltage behind an internal resistance (RoboSim §5).

    V_bus = max(0, V_nominal - R · I_total)

Charge drawn is integrated in amp-hours. Loads that depend on the bus voltage (motors) solve
for it themselves from the Thevenin view :meth:`Battery.source` returns, so the sag they feel
within a substep is exact rather than a step late.

    >>> b = Battery(nominal_voltage=12.0, resistance=0.02, background_current=0.5)
    >>> b.source(other_current=10.0).open_voltage
    11.79
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    """A Thevenin source: open-circuit voltage (V) behind a resistance (ohm)."""

    open_voltage: float
    resistance: float

    def voltage(self, current: float) -> float:
        """Terminal voltage, V, while supplying ``current`` A; never below 0."""
        return max(0.0, self.open_voltage - self.resistance * current)


class Battery:
    """Battery state: last bus voltage, total current and charge drawn."""

    def __init__(self, nominal_voltage: float, resistance: float, background_current: float):
        if nominal_voltage <= 0 or resistance < 0 or background_current < 0:
            raise ValueError("battery needs nominal_voltage > 0, resistance ≥ 0, current ≥ 0")
        self.nominal_voltage = nominal_voltage
        self.resistance = resistance
        self.background_current = background_current
        self.reset()

    def reset(self) -> None:
        """A fresh battery at rest."""
        self.voltage = self.nominal_voltage - self.resistance * self.background_current
        self.current = self.background_current
        self.charge_used = 0.0  # Ah

    def source(self, other_current: float = 0.0) -> Source:
        """What a load sees: the battery with the background and ``other_current`` A drawn."""
        drawn = self.background_current + other_current
        return Source(self.nominal_voltage - self.resistance * drawn, self.resistance)

    def update(self, load_current: float, dt: float) -> None:
        """Record ``load_current`` A of supply current drawn over ``dt`` s."""
        self.current = self.background_current + load_current
        self.voltage = max(0.0, self.nominal_voltage - self.resistance * self.current)
        self.charge_used += self.current * dt / 3600.0
