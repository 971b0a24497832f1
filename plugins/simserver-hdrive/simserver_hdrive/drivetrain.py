"""The H-drive as simserver's world steps it: its config (``[drivetrain]`` with
``type = "hdrive"``), the adapter that implements :class:`simserver.models.api.Drivetrain` on
:class:`~simserver_hdrive.model.HDriveModel`, and the :data:`HDRIVE` model type the entry point
names.

Each substep (:meth:`HDrive.substep`):

1. the bus voltage is solved with the three motor groups as loads linear in it
   (:func:`~simserver_hdrive.model.bus_voltage`);
2. each motor output's controller (``robot.controller(name).apply``: ramp, noise, current
   limits, neutral mode, brownout) turns the tick's duty cycle into a terminal voltage;
3. the model advances with those voltages;
4. the supply current ``Σ I·V/V_bus`` is returned to the world, which loads the battery with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from simserver.config.fields import number, quantity, text
from simserver.config.limits import (
    DRIVE_GEARING,
    LARGEST_ROBOT,
    LARGEST_WHEEL,
    ROBOT_REACH,
    SMALLEST_WHEEL,
)
from simserver.config.model import Config
from simserver.config.plausible import wheel_speed_warning
from simserver.models.api import DriveMotor, DriveView, Joint, ModelType, OutputSpec
from simserver.models.battery import Source
from simserver.models.controller import MotorController
from simserver.models.motor import motor_by_name
from simserver.units import INCH
from simserver_hdrive.model import SIDES, HDriveModel, HDriveParams, WheelGroup, bus_voltage

# Paths under /simserver. A path keeps one type whichever drivetrain publishes it: mecanum's
# drive/wheel_speeds is a struct, so the H-drive's arrays take names of their own.
WHEEL_SPEEDS = "drive/hdrive_speeds"
CENTER_SPEED = "drive/center_speed"
WHEEL_DISTANCES = "drive/hdrive_distances"


@dataclass(frozen=True)
class HDriveConfig:
    """An H-drive (`type = "hdrive"`): a left and a right side of omni wheels rolling forward,
    and a centre omni wheel rolling sideways, each side and the centre a motor output."""

    left: str = text("left", "Motor (in [motors]) driving the left side's wheels.")
    right: str = text("right", "Motor (in [motors]) driving the right side's wheels.")
    center: str = text("center", "Motor (in [motors]) driving the centre (strafe) wheel.")
    track_width: float = quantity(
        "22 in", "length", "Distance between the left and right wheels' contact lines (a "
        "warning when wider than the robot).", minimum=0.05, maximum=LARGEST_ROBOT)
    wheel_diameter: float = quantity(
        "4 in", "length", "Diameter of the side wheels.", minimum=SMALLEST_WHEEL,
        maximum=LARGEST_WHEEL, usual=(None, 8 * INCH))
    gearing: float = number(
        10.71, "Reduction from a side's motors to its wheels. A warning when the free speed it "
        "gives is outside 0.3-8 m/s.", minimum=DRIVE_GEARING[0], maximum=DRIVE_GEARING[1])
    center_wheel_diameter: float = quantity(
        "4 in", "length", "Diameter of the centre wheel.", minimum=SMALLEST_WHEEL,
        maximum=LARGEST_WHEEL, usual=(None, 8 * INCH))
    center_gearing: float = number(
        10.71, "Reduction from the centre motor to its wheel. A warning when the free speed it "
        "gives is outside 0.3-8 m/s.", minimum=DRIVE_GEARING[0], maximum=DRIVE_GEARING[1])
    center_x: float = quantity(
        "0 in", "length", "Where the centre wheel touches the carpet, forward of the robot "
        "centre (a warning outside the robot's outline). Off the centre, strafing also turns "
        "the robot.", minimum=-ROBOT_REACH, maximum=ROBOT_REACH)


def _groups(c: HDriveConfig, cfg: Config) -> tuple[WheelGroup, WheelGroup, WheelGroup]:
    """The left, right and centre wheel groups of ``c``."""
    geometry = ((c.left, c.gearing, c.wheel_diameter), (c.right, c.gearing, c.wheel_diameter),
                (c.center, c.center_gearing, c.center_wheel_diameter))
    left, right, center = (WheelGroup(motor_by_name(cfg.motors[m].type), cfg.motors[m].count,
                                      gearing, diameter / 2.0)
                           for m, gearing, diameter in geometry)
    return left, right, center


class HDrive:
    """An H-drive seen by the world (:class:`~simserver.models.api.Drivetrain`).

    model: the pure chassis model. motors: the left, right and centre motor output names.
    """

    def __init__(self, model: HDriveModel, motors: tuple[str, str, str]):
        self.model = model
        self.motors = motors
        self.mass = model.params.mass
        self.moment_of_inertia = model.params.moment_of_inertia
        self._index = {name: i for i, name in enumerate(motors)}
        self._ctrls: list[MotorController] = []
        self._duty = [0.0, 0.0, 0.0]
        self.reset(0.0, 0.0, 0.0)

    def reset(self, x: float, y: float, heading: float) -> None:
        """At rest at (x m, y m, heading rad); wheel travel and currents zeroed."""
        self.model.reset(x, y, heading)
        self._currents = [0.0, 0.0, 0.0]
        self._volts = [0.0, 0.0, 0.0]
        self._travelled = 0.0

    @property
    def pose(self) -> tuple[float, float, float]:
        """(x m, y m, heading rad) of the robot centre."""
        m = self.model
        return m.x, m.y, m.heading

    @property
    def body_velocity(self) -> tuple[float, float, float]:
        """(vx m/s, vy m/s, omega rad/s) in the robot frame."""
        m = self.model
        return m.vx, m.vy, m.omega

    def place(self, x: float, y: float, vx: float, vy: float, omega: float) -> None:
        """Take an impact's position and robot-frame velocity; the wheels roll with it."""
        self.model.place(x, y)
        self.model.set_body_velocity(vx, vy, omega)

    def begin_tick(self, robot: DriveView) -> None:
        """Take the three duty cycles (clamped to [-1, 1], NaN as 0) and the controllers."""
        self._ctrls = [robot.controller(name) for name in self.motors]
        self._duty = [_clamp(robot.motor(name)) for name in self.motors]

    def substep(self, dt: float, source: Source, enabled: bool) -> tuple[float, float]:
        """Advance ``dt`` s: bus voltage, controllers, model. Returns (bus voltage V, supply
        current A)."""
        model, duty = self.model, self._duty
        speeds = model.motor_speeds()
        groups = model.params.groups
        bus = bus_voltage(source, groups, duty if enabled else (0.0, 0.0, 0.0), speeds)
        outs = [ctrl.apply(d, bus, w, dt, enabled)
                for ctrl, d, w in zip(self._ctrls, duty, speeds, strict=True)]
        volts = [o.voltage for o in outs]
        x, y, _ = self.pose
        currents = model.step(dt, volts, [o.coasting for o in outs])
        self._travelled = math.hypot(model.x - x, model.y - y)
        self._currents, self._volts = currents, volts
        supply = sum(i * v for i, v in zip(currents, volts, strict=True)) / bus if bus else 0.0
        return bus, supply

    @property
    def travelled(self) -> float:
        """Distance the centre covered in the last substep, m (before any impact)."""
        return self._travelled

    def end_tick(self) -> None:
        """Nothing is taken once per tick."""

    def motor_states(self) -> dict[str, tuple[float, float]]:
        """Each motor output's stator current (all its motors, A) and terminal voltage (V) in
        the last substep."""
        return {name: (i, v) for name, i, v in zip(self.motors, self._currents, self._volts,
                                                    strict=True)}

    def joint(self, motor: str) -> Joint | None:
        """What ``motor`` turns: its wheels' rim travel (m), rim speed (m/s), wheel radius and
        gearing; None for a motor not ours."""
        i = self._index.get(motor)
        if i is None:
            return None
        grp = self.model.params.groups[i]
        return Joint(self.model.travel[i], self.model.rim_speeds()[i], grp.radius, grp.gearing)

    def outputs(self) -> dict[str, Any]:
        """The declared outputs: rim speeds (m/s), the centre's alone, and rim travel (m)."""
        speeds = self.model.rim_speeds()
        return {WHEEL_SPEEDS: list(speeds), CENTER_SPEED: speeds[2],
                WHEEL_DISTANCES: list(self.model.travel)}


def _clamp(d: float) -> float:
    """A duty cycle in [-1, 1]; NaN gives 0."""
    return d if -1.0 <= d <= 1.0 else 1.0 if d > 1.0 else -1.0 if d < -1.0 else 0.0


def _create(name: str, c: HDriveConfig, cfg: Config) -> HDrive:
    params = HDriveParams(cfg.robot.mass, cfg.robot.box_inertia(), c.track_width, c.center_x,
                          _groups(c, cfg))
    return HDrive(HDriveModel(params), (c.left, c.right, c.center))


def _motors(c: HDriveConfig) -> list[DriveMotor]:
    roles = ("the left side of an H-drive", "the right side of an H-drive",
             "the centre wheel of an H-drive")
    return [DriveMotor(getattr(c, key), key, "length", role)
            for key, role in zip(SIDES, roles, strict=True)]


def _warn(c: HDriveConfig, cfg: Config) -> list[tuple[str, str]]:
    robot = cfg.robot
    out: list[tuple[str, str]] = []
    if c.track_width > robot.width:
        out.append(("track_width", f"{c.track_width:g} m is wider than the robot "
                                   f"({robot.width:g} m)"))
    if abs(c.center_x) > robot.length / 2.0:
        out.append(("center_x", f"{c.center_x:g} m puts the centre wheel outside the robot's "
                                f"outline (length {robot.length:g} m)"))
    for side in (c.left, c.right):  # the sides may have different motors
        out += [w for w in wheel_speed_warning(cfg, side, "gearing", c.gearing,
                                               c.wheel_diameter) if w not in out]
    out += wheel_speed_warning(cfg, c.center, "center_gearing", c.center_gearing,
                               c.center_wheel_diameter)
    return out


HDRIVE = ModelType(
    name="hdrive",
    role="drivetrain",
    config=HDriveConfig,
    doc="H-drive: left and right sides of omni wheels plus a centre strafe wheel, DC motors "
        "through gearboxes pushing a rigid chassis (no traction limit), battery sag.",
    create=_create,
    warn=_warn,
    motors=_motors,
    outputs=(
        OutputSpec(WHEEL_SPEEDS, "double[]", "m/s",
                   "Rim speeds of the left, right and centre wheels."),
        OutputSpec(CENTER_SPEED, "double", "m/s",
                   "Rim speed of the centre (strafe) wheel, left positive."),
        OutputSpec(WHEEL_DISTANCES, "double[]", "m",
                   "Rim travel of the left, right and centre wheels since reset (recorded "
                   "only).", nt=False),
    ),
)
