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

Models are pure: they see the world only through :class:`RobotView` and never import ntcore.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

OUTPUT_TYPES = ("double", "boolean", "int", "double[]", "field2d")


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
    (x m, y m, heading rad) poses."""

    name: str
    type: str
    unit: str
    doc: str

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

    def motor(self, name: str) -> float:
        """Duty cycle of a motor output (inversion applied), -1..1."""
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

    # Optional: ``drawing() -> Drawing`` for a Mechanism2d at /SmartDashboard/<name>, and
    # ``joint() -> (position, velocity)`` (m or rad) when the type declares ``joint``.


@dataclass(frozen=True)
class ModelType:
    """A registered model type.

    name: the ``type = "..."`` value in config. role: "mechanism" (``[mechanisms.<name>]``) or
    "drivetrain" (``[drivetrain]``). check: optional cross-reference check of the whole config,
    returning (key, message) pairs for problems. joint: "length" or "angle" when the model's
    ``joint()`` returns (position, velocity) of a linear or rotary output, so encoders and
    limit switches can be attached to it; "" for none. mechanism2d: the model has ``drawing()``
    (a Mechanism2d at ``/SmartDashboard/<name>``).
    """

    name: str
    config: type
    doc: str
    create: Callable[..., Any]
    role: str = "mechanism"
    inputs: Sequence[InputSpec] = ()
    outputs: Sequence[OutputSpec] = ()
    check: Callable[[Any, Any], list[tuple[str, str]]] | None = None
    joint: str = ""
    mechanism2d: bool = False
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.role not in ("mechanism", "drivetrain"):
            raise ValueError(f"role must be 'mechanism' or 'drivetrain', got {self.role!r}")
        if self.joint not in ("", "length", "angle"):
            raise ValueError(f"joint must be '', 'length' or 'angle', got {self.joint!r}")
