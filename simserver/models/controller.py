"""A motor controller's firmware between the duty-cycle command and the motor terminals.

Per call of :meth:`MotorController.apply` (one substep of ``h`` seconds), in this order:

1. **Command**: the duty cycle ``u`` is clamped to [-1, 1].
2. **Ramp** (``ramp`` = τ s, 0 = none): the output duty ``y`` follows ``u`` as a first-order lag,
   advanced exactly for a command held over the substep (PyFlyt's motor ramp, solved in closed
   form instead of by Euler)::

       y ← y + (u - y) · (1 - e^(-h/τ))

3. **Noise** (``noise`` = σ, 0 = none): multiplicative, ``d = y · (1 + σ·z)`` with ``z`` a standard
   normal drawn from the seeded generator (PyFlyt's ``noise_ratio``); one draw per call while
   σ > 0, whatever the output. ``d`` is clamped to [-1, 1]. The ramp state stays noise-free.
4. **Neutral**: ``|d| ≤ neutral_deadband`` (or the controller disabled) gives the neutral output:
   ``"brake"`` shorts the terminals (V = 0, braking current ``-ω/(Kv·R)``); ``"coast"`` opens the
   H-bridge (no current, no braking torque). A coasting motor's terminal voltage is its own
   back-EMF, so :class:`ControllerOutput` reports ``voltage = ω/Kv`` and the motor equation
   ``I = (V - ω/Kv)/R`` gives exactly 0 without special-casing (the freewheel diodes that would
   conduct once ``|ω/Kv| > V_bus`` are not modelled).
5. **Bridge**: ``V = d · V_bus`` per motor.
6. **Stator limit** (A, 0 = none): ``I_stator = (V - ω/Kv)/R`` is held to ±limit by setting
   ``V = ω/Kv ± limit·R``, which in the motoring quadrant lowers ``|V|``; when braking while
   driving it moves V toward the back-EMF, as current-regulating firmware does. ``|V| ≤ V_bus``.
   The models report the current at the end of the substep, when the motor has sped up by
   ``Δω``: with ω from the substep's start the current ended ``Δω/(Kv·R)`` short of the limit
   (39.91 A for a 40 A limit). So the limits use the speed the motor will have at the end,
   extrapolated from the last substep's change, ``ω + (ω - ω_prev)``, and a limited output's
   duty is taken on the bus voltage extrapolated alike (a drivetrain applies the duty to the bus
   it solves in the substep, which sags as the motors speed up): under a limit the motor
   accelerates steadily and the current settles exactly at it (the first driven substep after
   neutral or a reset has no history and uses ω and the bus as they are; the bus is
   extrapolated from the third on, as the bus the first one was handed predates its load).
   Transients of the extrapolation decay by ``1 - e^(-h/τ_m)`` per substep (τ_m the motor's
   mechanical time constant), never oscillating. Held over the substep, the voltage cannot keep
   the current flat while the back-EMF rises: it ends at the limit and averages half the
   substep's drop ``Δω/(Kv·R)`` above it (the torque, so the speed gained, is that much high).
7. **Supply limit** (A, 0 = none), with the same extrapolated ω: the bus current of a PWM
   bridge is
   ``I_supply = (V/V_bus)·I_stator`` (``V_bus·I_supply = V·I_stator``, lossless bridge). When
   it exceeds the limit, ``|V|`` is lowered to the root of ``V·(V - ω/Kv) = limit·R·V_bus`` on
   V's side, so ``I_supply`` equals the limit. Only current drawn from the bus is limited;
   regenerated (negative) supply current is bounded by the stator limit alone.

Limits act per motor; neutral output is never limited (shorted terminals carry the full braking
current). ``count`` identical motors, each with its own controller given the same command,
share one instance: :meth:`currents` returns their totals.

    >>> from simserver.models.motor import motor_by_name
    >>> ctl = MotorController(motor_by_name("NEO"), ramp=0.0, stator_limit=40.0)
    >>> out = ctl.apply(1.0, bus_voltage=12.0, motor_speed=0.0, h=0.005)
    >>> round(ctl.currents(out.voltage, 12.0, 0.0)[0], 9)
    40.0
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import numpy as np

from simserver.models.motor import MotorSpec

Neutral = Literal["brake", "coast"]


class ControllerOutput(NamedTuple):
    """What one substep puts on the motor terminals.

    voltage: V across each motor's terminals (the back-EMF ω/Kv when coasting). duty: effective
    duty cycle, ``voltage / V_bus`` while driving (the noisy duty if V_bus = 0), 0 at neutral.
    coasting: H-bridge open, no current. stator_limited / supply_limited: that limit lowered
    the output this substep.
    """

    voltage: float
    duty: float
    coasting: bool
    stator_limited: bool = False
    supply_limited: bool = False



def _supply_root(emf: float, p: float) -> float:
    """Positive root of ``V² - emf·V - p = 0`` (p ≥ 0), free of cancellation, V."""
    s = math.sqrt(emf * emf + 4.0 * p)
    if emf >= 0.0:
        return 0.5 * (emf + s)
    return 2.0 * p / (s - emf)


class MotorController:
    """Firmware of a brushed/brushless motor controller (SI units).

    motor: constants of each driven motor. count: identical motors driven alike (≥ 1).
    ramp: first-order time constant of the output, s (0 = none). noise: relative standard
    deviation of the multiplicative output noise (0 = none); needs ``rng``. stator_limit,
    supply_limit: per-motor current limits, A (0 = none). neutral: ``"brake"`` or ``"coast"``.
    neutral_deadband: |duty| at or below which the output is neutral (0 = only exactly 0).
    rng: the seeded generator every noise source draws from.
    """

    def __init__(self, motor: MotorSpec, count: int = 1, *, ramp: float = 0.0,
                 noise: float = 0.0, stator_limit: float = 0.0, supply_limit: float = 0.0,
                 neutral: Neutral = "brake", neutral_deadband: float = 0.0,
                 rng: np.random.Generator | None = None):
        if count < 1:
            raise ValueError("motor controller needs count ≥ 1")
        if min(ramp, noise, stator_limit, supply_limit, neutral_deadband) < 0.0:
            raise ValueError("motor controller needs ramp, noise, limits and deadband ≥ 0")
        if neutral_deadband >= 1.0:
            raise ValueError("motor controller needs neutral_deadband < 1")
        if neutral not in ("brake", "coast"):
            raise ValueError(f"neutral mode must be 'brake' or 'coast', not {neutral!r}")
        if noise > 0.0 and rng is None:
            raise ValueError("motor controller noise needs a numpy Generator (rng)")
        self.motor = motor
        self.count = count
        self.ramp = ramp
        self.noise = noise
        self.stator_limit = stator_limit
        self.supply_limit = supply_limit
        self.neutral: Neutral = neutral
        self.neutral_deadband = neutral_deadband
        self.rng = rng
        self._decay_h = -1.0
        self._gain = 1.0
        self.reset()

    @property
    def passthrough(self) -> bool:
        """True when the output is exactly the clamped command (no ramp, noise, limits or
        deadband), so a caller may skip :meth:`apply` while the controller is enabled."""
        return not (self.ramp or self.noise or self.stator_limit or self.supply_limit
                    or self.neutral_deadband)

    def reset(self) -> None:
        """Output back to neutral, ramp state 0."""
        self.ramped = 0.0  # duty after the ramp, before noise
        # (shaft speed rad/s, bus voltage V, whether a driven substep came before) at the
        # last driven substep's start; None after neutral
        self._last: tuple[float, float, bool] | None = None
        self.coasting = self.neutral == "coast"
        self.output = ControllerOutput(0.0, 0.0, self.coasting)

    def _ramp_gain(self, h: float) -> float:
        """1 - e^(-h/τ), cached for the last substep length."""
        if h != self._decay_h:
            self._decay_h = h
            self._gain = -math.expm1(-h / self.ramp)
        return self._gain

    def apply(self, duty: float, bus_voltage: float, motor_speed: float, h: float,
              enabled: bool = True) -> ControllerOutput:
        """Advance ``h`` s with ``duty`` commanded; the terminal voltage for that substep.

        bus_voltage: V at the controller's supply terminals. motor_speed: shaft speed, rad/s.
        enabled: False forces neutral at once and clears the ramp (robot disabled, brownout).
        """
        u = min(1.0, max(-1.0, duty))
        if not enabled:
            self.ramped = 0.0
        elif self.ramp > 0.0:
            self.ramped += (u - self.ramped) * self._ramp_gain(h)
        else:
            self.ramped = u
        d = self.ramped
        if self.noise > 0.0:
            assert self.rng is not None
            d *= 1.0 + self.noise * float(self.rng.standard_normal())
            d = min(1.0, max(-1.0, d))
        emf = motor_speed / self.motor.kv
        if not enabled or abs(d) <= self.neutral_deadband:
            self.coasting = self.neutral == "coast"
            self._last = None
            out = ControllerOutput(emf if self.coasting else 0.0, 0.0, self.coasting)
        else:
            self.coasting = False
            last = self._last
            self._last = (motor_speed, bus_voltage, last is not None)
            if last is None or not (self.stator_limit or self.supply_limit):
                out = self._drive(d, bus_voltage, emf, bus_voltage)
            else:
                ahead = (2.0 * motor_speed - last[0]) / self.motor.kv
                # the bus handed to the first driven substep predates this motor's load
                bus_ahead = 2.0 * bus_voltage - last[1] if last[2] else bus_voltage
                out = self._drive(d, bus_voltage, ahead,
                                  bus_ahead if bus_ahead > 0.0 else bus_voltage)
        self.output = out
        return out

    def _drive(self, d: float, v_bus: float, emf: float, bus_ahead: float) -> ControllerOutput:
        """Bridge voltage for duty ``d``, with the stator then the supply limit applied for a
        back-EMF ``emf`` V (the one expected at the substep's end); a limited voltage becomes
        the duty that gives it on the bus expected then, ``bus_ahead`` V."""
        r = self.motor.R
        v = d * v_bus
        stator_hit = supply_hit = False
        if self.stator_limit > 0.0:
            band = self.stator_limit * r
            if v > emf + band:
                v, stator_hit = emf + band, True
            elif v < emf - band:
                v, stator_hit = emf - band, True
            v = min(v_bus, max(-v_bus, v))
        if self.supply_limit > 0.0 and v_bus > 0.0:
            p = self.supply_limit * r * v_bus
            if v * (v - emf) > p:  # drawing more than the limit from the bus
                v = _supply_root(emf, p) if v > 0.0 else -_supply_root(-emf, p)
                supply_hit = True
        eff = d if v_bus <= 0.0 else v / (bus_ahead if stator_hit or supply_hit else v_bus)
        return ControllerOutput(v, eff, False, stator_hit, supply_hit)

    def currents(self, v_applied: float, bus_voltage: float, motor_speed: float,
                 coasting: bool | None = None) -> tuple[float, float]:
        """Total (stator, supply) current of all ``count`` motors, A.

        Stator ``I = (V - ω/Kv)/R`` per motor; supply ``I·V/V_bus`` (power balance
        ``V_bus·I_supply = V·I_stator``), 0 with the bus at 0 V. Both 0 when coasting
        (``coasting`` defaults to the state the last :meth:`apply` left).
        """
        if self.coasting if coasting is None else coasting:
            return 0.0, 0.0
        stator = self.count * (v_applied - motor_speed / self.motor.kv) / self.motor.R
        supply = stator * v_applied / bus_voltage if bus_voltage > 0.0 else 0.0
        return stator, supply
