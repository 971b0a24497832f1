"""What the names in a config refer to, as the model types declare it: which mechanism a motor
drives, which motors the drivetrain consumes and how. Used by the loader's checks and by the
world to wire encoders to joints."""

from __future__ import annotations

from simserver.config.model import Config
from simserver.config.registry import registry
from simserver.models.api import DriveMotor


def motor_mechanisms(cfg: Config) -> dict[str, str]:
    """Motor name -> the mechanism (with a joint) that the motor drives."""
    reg = registry()
    out = {}
    for mname, section in cfg.mechanisms.items():
        mt = reg.get("mechanism", section.type)
        if mt is None or section.config is None or not mt.joint:
            continue
        for inp in mt.inputs:
            if inp.kind == "motor":
                out[getattr(section.config, inp.key)] = mname
    return out


def drivetrain_motors(cfg: Config) -> list[DriveMotor]:
    """Every motor output the drivetrain consumes, with its key, joint and role, as its type
    declares (none without a drivetrain, or for a type that declares no ``motors``)."""
    dt_type = registry().get("drivetrain", cfg.drivetrain_type)
    if cfg.drivetrain is None or dt_type is None or dt_type.motors is None:
        return []
    return list(dt_type.motors(cfg.drivetrain))
