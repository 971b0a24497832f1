"""The model API: how a model type declares itself, and what it may see of the world.

Built-in models and plugins use the same API and register the same way, under the entry-point
group ``simserver.models`` (see docs/plugins.md). A model type declares:

- ``config``: a frozen dataclass whose fields are declared with ``simserver.config.fields``
  helpers (units, ranges, defaults, docs); the loader validates the ``[mechanisms.<name>]``
  table against it exactly as it validates built-in sections.
- ``inputs``: which config keys name a motor or a solenoid (checked to exist at load time).
- ``outputs``: what the model publishes each tick (type, unit, meaning): each becomes the topic
  ``/simserver/mechanisms/<name>/<output>``; ``field2d`` outputs become an object ``<name>``
  on the SimField Field2d.
- ``create(name, config, whole_config)``: builds a :class:`Model` (``reset()``,
  ``step(dt, robot)``, ``outputs()``) from the validated section and the whole
  ``simserver.config.model.Config`` (motor types, robot size, ...).

A drivetrain type (``role="drivetrain"``, the ``[drivetrain]`` table) builds a
:class:`Drivetrain` instead, and declares which motors it consumes (``motors``) so the loader can
check encoders on them. Its outputs are named by path under ``/simserver`` (``drive/...``).

Models are pure: they see the world only through :class:`RobotView` (a drivetrain through
:class:`DriveView`) and never import ntcore.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

if TYPE_CHECKING:
    from simserver.models.battery import Source
    from simserver.models.controller import MotorController

STRUCT_TYPES = ("struct:ChassisSpeeds", "struct:SwerveModuleState[]",
                "struct:MecanumDriveWheelSpeeds", "struct:DifferentialDriveWheelSpeeds")
"""wpimath struct types an output may have: its value is the wpimath object (a list of them
for ``[]``), published as WPILib's struct topics that AdvantageScope and Elastic read."""
OUTPUT_TYPES = ("double", "boolean", "int", "double[]", "field2d", *STRUCT_TYPES)


@dataclass(frozen=True)
class InputSpec:
    """A config key of the model that names a motor (``kind="motor"``) or a solenoid."""

    key: str
    kind: str
    doc: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("motor", "solenoid"):
            raise ValueError(f"InputSpec.kind must be 'motor' or 'solenoid', got {self.kind!r}")


@dataclass(frozen=True)
class OutputSpec:
    """One published value. type: one of OUTPUT_TYPES; ``field2d`` values are lists of
    (x m, y m, heading rad) poses. nt: published on NetworkTables (False: only recorded by
    ``--record``, such as a drivetrain's true wheel speeds)."""

    name: str
    type: str
    unit: str
    doc: str
    nt: bool = True

    def __post_init__(self) -> None:
        if self.type not in OUTPUT_TYPES:
            raise ValueError(f"OutputSpec.type must be one of {OUTPUT_TYPES}, got {self.type!r}")


@dataclass(frozen=True)
class Ligament:
    """One segment of a Mechanism2d drawing: attached to ``root`` (or to the ligament named by
    ``parent``), ``length`` m long at ``angle`` deg (relative to its parent, CCW from +x)."""

    name: str
    length: float
    angle: float
    root: str = "base"
    parent: str = ""
    weight: float = 6.0
    color: str = "#FF8000"


@dataclass(frozen=True)
class Drawing:
    """A Mechanism2d picture, as Glass and Shuffleboard draw it: a ``width`` × ``height`` m
    canvas, named roots at (x, y) m, and ligaments."""

    width: float
    height: float
    roots: dict[str, tuple[float, float]]
    ligaments: tuple[Ligament, ...]


class PieceAccess(Protocol):
    """The game pieces as a mechanism that handles them sees them (``robot.pieces``): find
    loose pieces near the robot, take them in, let them go. Pieces are named by an id that stays
    the same for the whole run. Positions in the robot frame: x forward, y left, z up from the
    carpet, origin at the robot centre, m; in the field frame: WPILib's, z up from the carpet."""

    def loose_in(self, zone: Sequence[tuple[float, float]], height: float) -> list[int]:
        """Ids of loose pieces (on the carpet, or in flight with their centre below ``height``
        m) whose footprint overlaps the convex polygon ``zone`` (robot frame, counter-clockwise,
        m), nearest the zone's first edge first."""
        ...

    def take(self, piece: int, at: tuple[float, float, float]) -> str:
        """Take loose piece ``piece`` into the robot, carried at robot-frame point ``at`` (m)
        until released; its type name."""
        ...

    def carry(self, piece: int, at: tuple[float, float, float]) -> None:
        """Move held piece ``piece`` to robot-frame point ``at`` (m) (an indexer moving it)."""
        ...

    def release(self, piece: int, position: tuple[float, float, float],
                velocity: tuple[float, float, float],
                spin: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
        """Held piece ``piece`` leaves the robot at field ``position`` (m) with field
        ``velocity`` (m/s) and ``spin`` (rad/s, field frame): it flies, or rolls when it is on
        the carpet."""
        ...

    def kind(self, piece: int) -> str:
        """Type name of piece ``piece``."""
        ...

    def mass(self, piece: int) -> float:
        """Mass of piece ``piece``, kg."""
        ...

    def preloaded(self, mechanism: str) -> list[int]:
        """The pieces mechanism ``mechanism`` of this robot holds at the start (its config's
        ``preload``): held by the robot since the reset, in order; [] for none."""
        ...


class RobotView(Protocol):
    """What a model may read of the world during ``step``. Units: s, m, rad, m/s, rad/s."""

    @property
    def time(self) -> float: ...
    @property
    def pose(self) -> tuple[float, float, float]:
        """(x, y, heading) of the robot centre in field coordinates."""
        ...
    @property
    def velocity(self) -> tuple[float, float, float]:
        """(vx, vy, omega) in the field frame."""
        ...
    @property
    def outline(self) -> tuple[float, float]:
        """(length, width) of the robot outline, bumpers included."""
        ...
    @property
    def field_size(self) -> tuple[float, float]:
        """(length, width) of the field inside its walls."""
        ...
    @property
    def rng(self) -> np.random.Generator:
        """The seeded generator: every random number must come from it."""
        ...

    @property
    def pieces(self) -> PieceAccess | None:
        """The game pieces, or None when the field has none."""
        ...

    def motor(self, name: str) -> float:
        """Duty cycle of a motor output (inversion applied), -1..1."""
        ...

    def mechanism(self, name: str) -> Any:
        """Another mechanism model of this robot, by its name in ``[mechanisms]`` (a shooter
        reads its flywheel, hood and turret), or None."""
        ...

    def solenoid(self, name: str) -> bool:
        """State of a solenoid input."""
        ...

    def cylinder(self, name: str) -> float:
        """Extension of pneumatic cylinder ``name``, 0 (retracted) .. 1 (extended)."""
        ...

    def motor_voltage(self, name: str, motor_speed: float, dt: float,
                      duty: float | None = None) -> float:
        """For a model that simulates its motor: run the motor's controller for this substep
        (duty or ``duty`` override, ramp, noise, current limits, brownout) and return the
        voltage across each motor's terminals, V. ``motor_speed``: shaft speed, rad/s."""
        ...

    def motor_coasting(self, name: str) -> bool:
        """Whether motor ``name``'s controller left the windings open this substep (coast at
        zero output): the model must then apply no motor torque."""
        ...

    def motor_current(self, name: str, stator_current: float, motor_speed: float,
                      voltage: float | None = None) -> None:
        """Report one motor's stator current after the substep, A, so its supply current
        loads the battery and ``/simserver/currents/<name>`` shows it; ``voltage``: the
        terminal voltage actually applied, when the model changed it."""
        ...


class Joint(NamedTuple):
    """What an encoder on a mechanism's output or a drivetrain's wheel or module can measure.

    position, velocity: of the output, m and m/s (a wheel's rim travel, a carriage) or rad and
    rad/s (an azimuth, an arm). radius: m, turns travel into the angle of the drum or wheel that
    makes it (0 for a rotary output). gearing: motor turns per output turn. rotor, rotor_rate:
    rad, rad/s the motor shaft turns beyond ``gearing`` × the output (a coaxial swerve's drive
    motor turning with its module's azimuth).
    """

    position: float
    velocity: float
    radius: float = 0.0
    gearing: float = 1.0
    rotor: float = 0.0
    rotor_rate: float = 0.0


class DriveMotor(NamedTuple):
    """A motor output a drivetrain consumes: its name in ``[motors]``, the key of the
    drivetrain's table that names it (``"left"``, ``"modules.fl.steer"``), what its joint
    moves (``"length"``: a wheel, measured as travel; ``"angle"``: a module's azimuth) and, for
    messages, what it turns ("a drivetrain side", "a swerve module's azimuth")."""

    motor: str
    key: str
    joint: str
    role: str


class DriveView(RobotView, Protocol):
    """What a drivetrain may read of the world: a :class:`RobotView` plus each motor output's
    controller (ramp, noise, current limits, neutral mode), which the drivetrain runs itself
    with the bus voltage it solves."""

    @property
    def bus_voltage(self) -> float:
        """The battery's terminal voltage at the end of the last substep, V."""
        ...

    def controller(self, name: str) -> MotorController:
        """The controller of motor output ``name``."""
        ...


class Drivetrain(Protocol):
    """A drivetrain as the world steps it, whatever its kind (see docs/plugins.md).

    Life cycle each tick: :meth:`begin_tick` (take the duty cycles, held for the tick), then per
    substep :meth:`substep` (the world then resolves collisions, which may call :meth:`place`),
    then :meth:`end_tick`. Units: s, m, rad, m/s, rad/s, V, A; poses in field coordinates,
    velocities in the robot frame (x forward, y left, CCW positive).
    """

    mass: float
    """kg, bumpers and battery included."""
    moment_of_inertia: float
    """Yaw moment of inertia, kg·m²."""

    def reset(self, x: float, y: float, heading: float) -> None:
        """At rest at (x, y, heading); wheels, modules and counters at zero."""
        ...

    @property
    def pose(self) -> tuple[float, float, float]:
        """(x m, y m, heading rad) of the robot centre."""
        ...

    @property
    def body_velocity(self) -> tuple[float, float, float]:
        """(vx m/s, vy m/s, omega rad/s) in the robot frame."""
        ...

    def place(self, x: float, y: float, vx: float, vy: float, omega: float) -> None:
        """Take the position (m) and robot-frame velocity an impact gave the chassis."""
        ...

    def begin_tick(self, robot: DriveView) -> None:
        """Take this tick's duty cycles (``robot.motor(name)``) and anything else held for
        the tick."""
        ...

    def substep(self, dt: float, source: Source, enabled: bool) -> tuple[float, float]:
        """Advance ``dt`` s with the battery seen as ``source`` (motors disabled when not
        ``enabled``: a brownout). Returns (bus voltage V, supply current A drawn)."""
        ...

    @property
    def travelled(self) -> float:
        """Distance the chassis covered in the last substep, m."""
        ...

    def end_tick(self) -> None:
        """Close the tick (bookkeeping taken once per tick)."""
        ...

    def motor_states(self) -> dict[str, tuple[float, float]]:
        """Motor output -> (stator current A, terminal voltage V) in the last substep."""
        ...

    def joint(self, motor: str) -> Joint | None:
        """What motor output ``motor`` turns, for encoders on it (None: not one of ours)."""
        ...

    def outputs(self) -> dict[str, Any]:
        """Current value of every declared output, by output name."""
        ...


class Model(Protocol):
    """A model instance: explicit state, reset, step, outputs."""

    def reset(self) -> None:
        """Back to the initial state (called at start and on every world reset)."""
        ...

    def step(self, dt: float, robot: RobotView) -> None:
        """Advance ``dt`` seconds (one physics substep) with inputs read from ``robot``."""
        ...

    def outputs(self) -> dict[str, Any]:
        """Current value of every declared output, by output name."""
        ...

    # Optional: ``drawing() -> Drawing`` for a Mechanism2d at /SmartDashboard/<name>,
    # ``joint() -> (position, velocity)`` (m or rad) when the type declares ``joint``, and
    # ``holding() -> bool`` (it holds a game piece) when the type declares ``holds``, and
    # ``components() -> tuple[wpimath.geometry.Pose3d, ...]`` when it declares
    # ``components``: the pose of each moving part in the robot frame (x forward, y left,
    # z up from the carpet, origin under the robot centre), in AdvantageScope's
    # articulated-component convention (each part's pose as if its model, zeroed at the
    # origin, were moved to where it is now), published in /simserver/robot/components.


@dataclass(frozen=True)
class ModelType:
    """A registered model type.

    name: the ``type = "..."`` value in config. role: "mechanism" (``[mechanisms.<name>]``) or
    "drivetrain" (``[drivetrain]``). check: optional cross-reference check of the whole config,
    returning (key, message) pairs for problems; warn: the same for values that are allowed but
    unusual (printed as warnings). motors (drivetrains): ``motors(config)`` -> a :class:`DriveMotor`
    for every motor output the drivetrain consumes (the loader checks that each exists and
    drives nothing else). joint: "length" or "angle"
    when the model's ``joint()`` returns (position, velocity) of a linear or rotary output, so
    encoders and limit switches can be attached to it; "" for none. mechanism2d: the model has
    ``drawing()`` (a Mechanism2d at ``/SmartDashboard/<name>``). holds: the model holds game
    pieces and has ``holding()``, so a switch with ``trigger = "holding"`` (a beam break) can
    sense it. components: the model has ``components()`` (poses of its moving parts for
    AdvantageScope's 3-D field). roller: its ``joint`` is a free-running roller's motor shaft
    (an intake's, an indexer's): encoders may read it, limit switches and aiming may not.
    """

    name: str
    config: type
    doc: str
    create: Callable[..., Any]
    role: str = "mechanism"
    inputs: Sequence[InputSpec] = ()
    outputs: Sequence[OutputSpec] = ()
    check: Callable[[Any, Any], list[tuple[str, str]]] | None = None
    warn: Callable[[Any, Any], list[tuple[str, str]]] | None = None
    motors: Callable[[Any], Sequence[DriveMotor]] | None = None
    joint: str = ""
    mechanism2d: bool = False
    holds: bool = False
    roller: bool = False
    components: bool = False
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.role not in ("mechanism", "drivetrain"):
            raise ValueError(f"role must be 'mechanism' or 'drivetrain', got {self.role!r}")
        if self.joint not in ("", "length", "angle"):
            raise ValueError(f"joint must be '', 'length' or 'angle', got {self.joint!r}")
