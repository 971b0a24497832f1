"""What the world hands to every output after a tick: the neutral contract between the world
layer (which produces a :class:`Snapshot`) and io (NetworkTables, halsim_ws, recordings,
reports), so that io never imports the world."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from wpimath.geometry import Pose3d

from simserver.models.api import Drawing
from simserver.models.camera import Frame

SIDE_SPEEDS = ("truth/wheel_speed/left", "truth/wheel_speed/right")
"""The outputs by which a drivetrain with left and right sides gives their wheels' surface speeds
(m/s), recorded and plotted as the wheel speeds."""


@dataclass
class Pneumatics:
    """Published pneumatic state: gauge pressure psi, compressor running and current A,
    cylinder extensions 0..1."""

    pressure_psi: float
    compressor_running: bool
    compressor_current: float
    extensions: dict[str, float]


@dataclass(frozen=True)
class PieceSnapshot:
    """Every game piece after a tick, as arrays indexed by piece id (ids stay fixed for a run).

    types: type names; kind[i]: index into ``types`` of piece i; state[i]: LOOSE, FLIGHT,
    HELD or GONE (:mod:`simserver.models.pieces.types`); pose[i]: (x m, y m, z m of the
    centre, roll rad, pitch rad, yaw rad) in the field frame (a held piece where its robot
    carries it; a gone one where it was last). holder[i]: name of the robot holding piece i
    ("" for the main robot, "-" when not held). scores: pieces scored per alliance ("blue",
    "red"); goals: per goal name. picked_up, shots: per robot name ("" for the main robot),
    counted since reset.
    """

    types: tuple[str, ...]
    kind: np.ndarray
    state: np.ndarray
    pose: np.ndarray
    holder: tuple[str, ...]
    scores: dict[str, int]
    goals: dict[str, int]
    picked_up: dict[str, int]
    shots: dict[str, int]


@dataclass
class Snapshot:
    """Everything published after a tick. Units: s, m, rad, m/s, rad/s, V, A.

    wall_hits counts separate wall contacts since reset (a contact lasting several substeps
    is one hit); touching_wall is whether the robot touched a wall in the last substep;
    obstacle_hits and robot_hits count contacts with field elements and other robots the
    same way; last_contact names what the latest counted wall or element contact touched (an
    element's name or a wall such as "side wall (y = 0)"; "" before any). drive: the
    drivetrain's declared outputs published on NetworkTables, by name (a path under /simserver
    such as "drive/module_states"; struct outputs as wpimath objects); drive_log: those it
    declares for recordings only (``nt=False``). chassis_speeds: robot-frame
    (vx, vy, omega). frames: camera frames delivered during the last
    tick, in delivery order. pieces: the game pieces of the field (None when it has none).
    components: the poses of the mechanisms' moving parts in the robot frame, in the order
    of the mechanisms in the config (AdvantageScope's articulated components; see
    ``Model.components``).

    battery_voltage, battery_current and brownout are the battery's state after the tick's
    last substep; min_voltage, max_current and brownout_in_tick aggregate every substep of the
    tick (the lowest bus voltage V, the largest current drawn A, browned out at any substep),
    so a brownout or a current spike shorter than a tick cannot hide between two snapshots.
    Before the first tick they equal the instant values."""

    time: float
    x: float
    y: float
    heading: float
    vx: float
    vy: float
    omega: float
    encoders: dict[str, tuple[float, float]]
    gyro_yaw: float
    gyro_rate: float
    battery_voltage: float
    battery_current: float
    charge_used: float
    currents: dict[str, float]
    duties: dict[str, float]
    solenoids: dict[str, bool] = field(default_factory=dict)
    mechanisms: dict[str, dict[str, Any]] = field(default_factory=dict)
    drawings: dict[str, Drawing] = field(default_factory=dict)
    brownout: bool = False
    breaker_tripped: bool = False
    min_voltage: float = 0.0
    max_current: float = 0.0
    brownout_in_tick: bool = False
    switches: dict[str, bool] = field(default_factory=dict)
    pneumatics: Pneumatics | None = None
    wall_hits: int = 0
    touching_wall: bool = False
    obstacle_hits: int = 0
    robot_hits: int = 0
    last_contact: str = ""
    chassis_speeds: tuple[float, float, float] = (0.0, 0.0, 0.0)
    drive: dict[str, Any] = field(default_factory=dict)
    drive_log: dict[str, Any] = field(default_factory=dict)
    frames: tuple[Frame, ...] = ()
    pieces: PieceSnapshot | None = None
    components: tuple[Pose3d, ...] = ()
