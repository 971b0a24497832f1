"""The wpimath struct types simserver publishes and records (``struct:<Name>`` and
``struct:<Name>[]`` topics): the true pose, the drivetrain outputs a type may declare
(``simserver.models.api.STRUCT_TYPES``), and the Pose3d arrays of game pieces and mechanism
components.

A ``struct:Pose3d[]`` value may be a sequence of wpimath Pose3d or an (n, 6) numpy array of
(x m, y m, z m, roll rad, pitch rad, yaw rad) rows: :func:`pack_array` packs the array with
numpy into the same bytes wpistruct gives for the Pose3d objects (hundreds of game pieces
every tick: 500 poses take about 40 µs this way, 450 µs through Pose3d objects).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from wpimath.geometry import Pose2d, Pose3d
from wpimath.kinematics import (
    ChassisSpeeds,
    DifferentialDriveWheelSpeeds,
    MecanumDriveWheelSpeeds,
    SwerveModuleState,
)
from wpiutil import wpistruct

STRUCTS: dict[str, type] = {cls.__name__: cls for cls in (
    Pose2d, Pose3d, ChassisSpeeds, SwerveModuleState, MecanumDriveWheelSpeeds,
    DifferentialDriveWheelSpeeds)}


def struct_class(nt_type: str) -> type | None:
    """The wpimath class of NT type ``struct:<Name>`` or ``struct:<Name>[]``; None for any
    other type."""
    if not nt_type.startswith("struct:"):
        return None
    return STRUCTS.get(nt_type.removeprefix("struct:").removesuffix("[]"))


def pose3d_bytes(pose: np.ndarray) -> bytes:
    """Rows of (x m, y m, z m, roll rad, pitch rad, yaw rad) packed as a ``struct:Pose3d[]``
    value: per pose the translation (x, y, z) and the rotation's quaternion (w, x, y, z), as
    little-endian doubles. The quaternion is Rotation3d(roll, pitch, yaw)'s (extrinsic
    roll about x, then pitch about y, then yaw about z)."""
    if not len(pose):
        return b""
    half = 0.5 * np.asarray(pose, dtype=float)[:, 3:6]
    cr, cp, cy = np.cos(half).T
    sr, sp, sy = np.sin(half).T
    out = np.empty((len(half), 7), dtype="<f8")
    out[:, :3] = pose[:, :3]
    out[:, 3] = cr * cp * cy + sr * sp * sy
    out[:, 4] = sr * cp * cy - cr * sp * sy
    out[:, 5] = cr * sp * cy + sr * cp * sy
    out[:, 6] = cr * cp * sy - sr * sp * cy
    return out.tobytes()


POSE3D_SIZE = 56  # bytes of one packed Pose3d: 7 doubles


def pose3d_rows(raw: bytes) -> np.ndarray:
    """A ``struct:Pose3d[]`` value as an (n, 7) array of (x m, y m, z m, qw, qx, qy, qz);
    trailing bytes short of a whole pose are ignored."""
    whole = len(raw) - len(raw) % POSE3D_SIZE
    return np.frombuffer(raw[:whole], "<f8").reshape(-1, 7)


def pack(nt_type: str, value: Any) -> bytes:
    """The bytes of ``value`` as NT type ``nt_type`` (a struct or struct array type): a
    wpimath object, a sequence of them, or for ``struct:Pose3d[]`` an (n, 6) pose array."""
    if not nt_type.endswith("[]"):
        return bytes(wpistruct.pack(value))
    if isinstance(value, np.ndarray):
        return pose3d_bytes(value)
    return bytes(wpistruct.packArray(value)) if value else b""


def add_schemas(add: Callable[[str, str, str], Any], cls: type) -> None:
    """Register the struct schema of ``cls`` and of every struct inside it with ``add(name,
    type, schema)`` (``NetworkTableInstance.addSchema``), as a struct publisher does."""
    wpistruct.forEachNested(cls, lambda name, schema: add(name, "structschema", schema))
