"""The wpimath struct types simserver publishes and records (``struct:<Name>`` and
``struct:<Name>[]`` topics): the true pose and the drivetrain outputs a type may declare
(``simserver.models.api.STRUCT_TYPES``)."""

from __future__ import annotations

from wpimath.geometry import Pose2d
from wpimath.kinematics import (
    ChassisSpeeds,
    DifferentialDriveWheelSpeeds,
    MecanumDriveWheelSpeeds,
    SwerveModuleState,
)

STRUCTS: dict[str, type] = {cls.__name__: cls for cls in (
    Pose2d, ChassisSpeeds, SwerveModuleState, MecanumDriveWheelSpeeds,
    DifferentialDriveWheelSpeeds)}


def struct_class(nt_type: str) -> type | None:
    """The wpimath class of NT type ``struct:<Name>`` or ``struct:<Name>[]``; None for any
    other type."""
    if not nt_type.startswith("struct:"):
        return None
    return STRUCTS.get(nt_type.removeprefix("struct:").removesuffix("[]"))
