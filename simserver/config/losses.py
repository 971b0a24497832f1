"""Config of the loss terms (`losses`) and of SysId results (`characterization`) of a
drivetrain or a mechanism; :mod:`simserver.models.losses` says what each term does."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from simserver.config.fields import boolean, number, optional_quantity, quantity
from simserver.models.losses import IDEAL, JointMotors, Losses
from simserver.models.motor import MotorSpec

#: Gearbox efficiency used unless the config says otherwise: an estimate. Spur and belt stages
#: lose about 2-5 % each (gear makers' figures); FRC drivetrain calculators assume 80-90 % for
#: the whole drive (the 2013 Chief Delphi paper "Optimization and Analysis of Drivetrain
#: Movement" uses 0.80; JVN's design calculator and ReCalc default near 0.9).
DEFAULT_EFFICIENCY = 0.9
#: Rolling resistance coefficient of FRC wheels on carpet: an estimate. Pneumatic and rubber
#: tires on hard ground measure 0.01-0.02 (Engineering ToolBox, "Rolling Resistance"); carpet
#: pile deforms more, so the upper end.
DEFAULT_ROLLING_RESISTANCE = 0.02
#: Static friction of a mechanism as the voltage that overcomes it: an estimate. SysId kS of
#: FRC elevators and arms that teams publish is typically 0.05-0.3 V.
DEFAULT_STATIC_FRICTION = 0.1


@dataclass(frozen=True)
class LossesConfig:
    """Losses of a mechanism (`[mechanisms.<name>.losses]`): what makes it slower than its
    motors' ideal curve. The defaults are documented estimates; `ideal = true` turns every
    term off (the ideal machine of WPILib's simulation classes)."""

    ideal: bool = boolean(False, "No losses at all: efficiency 1, no friction, no free-current "
                          "load (the other keys must then be left out).")
    gearbox_efficiency: float = number(
        DEFAULT_EFFICIENCY, "Fraction of the motors' torque the gears pass on (an estimate: "
        "2-5 % lost per spur or belt stage). Costs force under load, not free speed.",
        minimum=0.3, maximum=1.0)
    free_current: bool = boolean(
        True, "Load each motor with its own no-load losses, so that unloaded it turns at the "
        "catalog free speed drawing the catalog free current (without it, a few % faster).")
    static_friction: float = quantity(
        f"{DEFAULT_STATIC_FRICTION} V", "voltage",
        "Coulomb friction in the joint (bearings, belts, cable), as the voltage the motors need "
        "to overcome it (SysId's kS). An estimate: published kS of FRC mechanisms is "
        "typically 0.05-0.3 V.", minimum=0.0, maximum=6.0, usual=(None, 1.0))
    viscous_loss: float = number(
        0.0, "Viscous friction (grease, seals), as the fraction of the free speed it costs "
        "(0.05: 5 % slower at free speed).", minimum=0.0, maximum=0.9)


@dataclass(frozen=True)
class DriveLossesConfig(LossesConfig):
    """Losses of a drivetrain's wheels (`[drivetrain.losses]`), per wheel or side: the gearbox
    and motor terms of a mechanism plus the tires' rolling resistance."""

    static_friction: float = quantity(
        "0 V", "voltage",
        "Coulomb friction in the gearbox and bearings, as the voltage the motors need to "
        "overcome it, on top of the rolling resistance.", minimum=0.0, maximum=6.0,
        usual=(None, 1.0))
    rolling_resistance: float = number(
        DEFAULT_ROLLING_RESISTANCE, "Rolling resistance coefficient of the tires: a force of "
        "this × the weight on each wheel opposes its rolling (an estimate: 0.01-0.02 for "
        "rubber on hard ground, carpet at the upper end).", minimum=0.0, maximum=0.3)


@dataclass(frozen=True)
class LinearCharacterization:
    """SysId results of a drivetrain or a linear mechanism (elevator), in the units SysId
    reports for a distance in metres. The simulated joint then has exactly these constants,
    its motors, currents and battery sag kept (docs/models.md)."""

    ks: float = quantity("0 V", "voltage", "Static friction voltage.", minimum=0.0,
                         maximum=6.0)
    kv: float = quantity(None, "kV (voltage per speed)", "Volts per m/s of steady speed.",
                         minimum=0.01, maximum=100.0)
    ka: float = quantity(None, "kA (voltage per acceleration)", "Volts per m/s² of "
                         "acceleration.", minimum=1e-4, maximum=100.0)
    kg: float | None = optional_quantity(
        "voltage", "Elevators: the voltage that holds the carriage against gravity.",
        minimum=0.0, maximum=12.0)


@dataclass(frozen=True)
class RotaryCharacterization:
    """SysId results of an arm or a flywheel, per radian (write `V*s/rot` for per-rotation
    values: they are converted)."""

    ks: float = quantity("0 V", "voltage", "Static friction voltage.", minimum=0.0,
                         maximum=6.0)
    kv: float = quantity(None, "kV (voltage per angular speed)", "Volts per rad/s of steady "
                         "speed.", minimum=1e-4, maximum=100.0)
    ka: float = quantity(None, "kA (voltage per angular acceleration)", "Volts per rad/s² of "
                         "acceleration.", minimum=1e-6, maximum=100.0)
    kg: float | None = optional_quantity(
        "voltage", "Arms: the voltage that holds the arm horizontal against gravity (SysId's "
        "kG, the cosine term).", minimum=0.0, maximum=12.0)


def losses_from_config(cfg: LossesConfig, motor: MotorSpec, count: int, ratio: float) -> Losses:
    """The model's :class:`Losses` of a joint turned by ``count`` ``motor`` through ``ratio``
    (motor rad per m or per rad of the joint): ``static_friction`` V becomes a Coulomb force
    (N or N·m) through the joint's force per volt, ``viscous_loss`` f the viscous friction
    b = f/(1 − f)·(back-EMF + free-current damping), which slows the free speed by f.

    A drivetrain's rolling resistance depends on the load on each wheel: the drivetrain adds
    it.
    """
    if cfg.ideal:
        return IDEAL
    bare = JointMotors(motor, count, ratio,
                       Losses(cfg.gearbox_efficiency, free_current=cfg.free_current))
    f = cfg.viscous_loss
    return Losses(cfg.gearbox_efficiency, cfg.static_friction * bare.force_per_volt,
                  f / (1.0 - f) * bare.damping, cfg.free_current)


_DEFAULTS: dict[type, Any] = {}


def _defaults(cls: type) -> Any:
    """A table of ``cls`` with every key left out, loaded once."""
    if cls not in _DEFAULTS:
        from simserver.config.loader import load_section  # the loader imports this module

        _DEFAULTS[cls] = load_section(cls, {})
    return _DEFAULTS[cls]


def losses_issues(cfg: LossesConfig) -> list[tuple[str, str]]:
    """(key, message) of every key set beside ``ideal = true`` (to a value other than its
    default): an ideal machine has none of those losses."""
    if not cfg.ideal:
        return []
    defaults = _defaults(type(cfg))
    return [(f.name, "must be left out with ideal = true (no losses at all)")
            for f in fields(cfg) if f.name != "ideal"
            and getattr(cfg, f.name) != getattr(defaults, f.name)]
