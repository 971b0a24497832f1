"""The tank drivetrain (``type = "differential"``): a left and a right side, each a motor output
through a gearbox (optionally a two-speed one shifted by a solenoid), on
:class:`~simserver.models.differential.DifferentialDrive`.

    tank = Differential(drive, left="left", right="right", shift=None)
    tank.reset(1.0, 2.0, 0.0)
    tank.begin_tick(world)                       # duties held for the tick
    bus, supply = tank.substep(0.005, source, enabled=True)
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from simserver.config.issues import missing_name
from simserver.config.losses import DriveLossesConfig, losses_from_config
from simserver.config.model import Config, DrivetrainConfig
from simserver.config.plausible import wheel_speed_warning
from simserver.contract.snapshot import SIDE_SPEEDS
from simserver.models.api import DriveMotor, DriveView, Joint, ModelType, OutputSpec
from simserver.models.battery import Source
from simserver.models.differential import (
    CharacterizedLongitudinal,
    DifferentialDrive,
    DifferentialParams,
    Electrical,
    InductiveLongitudinal,
    KinematicLongitudinal,
    Longitudinal,
    PhysicalLongitudinal,
    SideGains,
    robosim_moment_of_inertia,
    side_currents,
)
from simserver.models.losses import (
    IDEAL,
    CharacterizationError,
    Feedforward,
    JointMotors,
    Losses,
    from_feedforward,
)
from simserver.models.motor import motor_by_name
from simserver.models.tank_traction import GRAVITY, Traction, TractionDrive, side_joint


class Differential:
    """A tank drivetrain seen by the world (:class:`~simserver.models.api.Drivetrain`).

    drive: the pure model. left, right: the motor outputs of the sides. shift: (solenoid,
    high gearing) of a two-speed gearbox, None for one speed (``drive.params.gearing``).
    """

    def __init__(self, drive: DifferentialDrive, left: str, right: str,
                 shift: tuple[str, float] | None = None):
        self.drive = drive
        self.left, self.right = left, right
        self.shift = shift
        self.mass = drive.params.mass
        self.moment_of_inertia = drive.params.moment_of_inertia
        self._robot: DriveView | None = None
        self._tick: tuple[Any, ...] = ()
        self.reset(0.0, 0.0, 0.0)

    def reset(self, x: float, y: float, heading: float) -> None:
        """At rest at (x m, y m, heading rad), the wheels' travel zeroed."""
        self.drive.reset(x, y, heading)
        self._elec = Electrical(0.0, 0.0, 0.0, 0.0)
        self._before = (0.0, 0.0, 0.0, 0.0)
        self._rotor = [0.0, 0.0]  # motor rad per side gained from shifts (see joint)
        self._inputs: tuple[float, float, Source] | None = None  # of the last substep

    @property
    def pose(self) -> tuple[float, float, float]:
        """(x m, y m, heading rad)."""
        st = self.drive.state
        return st.x, st.y, st.heading

    @property
    def body_velocity(self) -> tuple[float, float, float]:
        """(vx m/s, vy m/s, omega rad/s) in the robot frame."""
        return self.drive.v_forward, self.drive.state.v_lat, self.drive.omega

    def place(self, x: float, y: float, vx: float, vy: float, omega: float) -> None:
        """Take an impact's position and velocity. Without tires (an ideal, kinematic or
        characterized drive) the wheels roll without slipping: the push-back along the heading
        undoes wheel travel. With tires the wheels keep turning and slip."""
        drive = self.drive
        st = drive.state
        if isinstance(drive, TractionDrive):  # the wheels keep their speed: so do the currents
            st.x, st.y = x, y
            drive.set_body_velocity(vx, vy, omega)
            return
        c, s = math.cos(st.heading), math.sin(st.heading)
        along = (x - st.x) * c + (y - st.y) * s
        st.s_left += along
        st.s_right += along
        st.x, st.y = x, y
        drive.set_body_velocity(vx, vy, omega)
        if self._inputs is not None and not isinstance(drive.longitudinal,
                                                       InductiveLongitudinal):
            # The currents at the speeds the impact left (a wall stalls the wheels).
            duty_l, duty_r, source = self._inputs
            self._elec = side_currents(drive.params, drive.gearing, duty_l, duty_r,
                                       st.v_left, st.v_right, source, drive.coast)

    def _gearing(self, robot: DriveView) -> float:
        if self.shift is not None and robot.solenoid(self.shift[0]):
            return self.shift[1]
        return self.drive.params.gearing

    def begin_tick(self, robot: DriveView) -> None:
        """Take the sides' duty cycles and the gear the shifter selects, held for the tick."""
        self._robot = robot
        drive = self.drive
        gearing = self._gearing(robot)
        if gearing != drive.gearing:
            # A motor shaft keeps its angle across a shift: what gearing × travel no longer
            # accounts for goes into the rotor term of the joints.
            st, r = drive.state, drive.params.wheel_radius
            for i, s in enumerate((st.s_left, st.s_right)):
                self._rotor[i] += s * (drive.gearing - gearing) / r
            drive.gearing = gearing
        ctrl_l, ctrl_r = robot.controller(self.left), robot.controller(self.right)
        dl = max(-1.0, min(1.0, robot.motor(self.left)))
        dr = max(-1.0, min(1.0, robot.motor(self.right)))
        self._tick = (dl, dr, ctrl_l, ctrl_r, gearing / drive.params.wheel_radius,
                      ctrl_l.passthrough and ctrl_r.passthrough,
                      (dl == 0.0 and ctrl_l.neutral == "coast",
                       dr == 0.0 and ctrl_r.neutral == "coast"))

    def substep(self, dt: float, source: Source, enabled: bool) -> tuple[float, float]:
        """Advance ``dt`` s: each side's controller (or the plain duty), then the model."""
        drive, robot = self.drive, self._robot
        assert robot is not None, "begin_tick() comes first"
        st = drive.state
        dl, dr, ctrl_l, ctrl_r, to_motor, passthrough, plain = self._tick
        self._before = (st.s_left, st.s_right, st.x, st.y)
        if passthrough and enabled:
            eff_l, eff_r = dl, dr
            drive.coast = plain
        else:
            bus = robot.bus_voltage
            out_l = ctrl_l.apply(dl, bus, st.v_left * to_motor, dt, enabled)
            out_r = ctrl_r.apply(dr, bus, st.v_right * to_motor, dt, enabled)
            eff_l, eff_r = out_l.duty, out_r.duty
            drive.coast = (out_l.coasting, out_r.coasting)
        elec = self._elec = drive.step(dt, eff_l, eff_r, source)
        self._inputs = (eff_l, eff_r, source)
        return elec.bus_voltage, elec.supply_current

    @property
    def travelled(self) -> float:
        """Distance the centre covered in the last substep, m, push-backs included."""
        st = self.drive.state
        s_l, s_r, x, y = self._before
        if isinstance(self.drive, TractionDrive):  # the wheels may spin: the chassis' path
            return math.hypot(st.x - x, st.y - y)
        return abs(0.5 * (st.s_left - s_l + st.s_right - s_r))

    def end_tick(self) -> None:
        """Nothing is taken once per tick."""

    def motor_states(self) -> dict[str, tuple[float, float]]:
        """Each side's stator current A (its terminal voltage is not tracked: 0)."""
        return {self.left: (self._elec.current_left, 0.0),
                self.right: (self._elec.current_right, 0.0)}

    def joint(self, motor: str) -> Joint | None:
        """A side's wheel: travel m, speed m/s, wheel radius, the gearing in use, and the
        motor angle shifts added beyond it."""
        if motor not in (self.left, self.right):
            return None
        st, drive = self.drive.state, self.drive
        if motor == self.left:
            return Joint(st.s_left, st.v_left, drive.params.wheel_radius, drive.gearing,
                         self._rotor[0])
        return Joint(st.s_right, st.v_right, drive.params.wheel_radius, drive.gearing,
                     self._rotor[1])

    def outputs(self) -> dict[str, Any]:
        """Each side's wheel surface speed, m/s."""
        st = self.drive.state
        return {SIDE_SPEEDS[0]: st.v_left, SIDE_SPEEDS[1]: st.v_right}


def _params(dt: DrivetrainConfig, cfg: Config) -> DifferentialParams:
    left = cfg.motors[dt.left]
    robot = cfg.robot
    moi = robot.moment_of_inertia or robosim_moment_of_inertia(robot.mass, robot.length,
                                                                dt.track_width)
    return DifferentialParams(
        mass=robot.mass, moment_of_inertia=moi, track_width=dt.track_width,
        wheel_radius=dt.wheel_diameter / 2.0, gearing=dt.gearing,
        motor=motor_by_name(left.type), motors_per_side=left.count,
        lateral_friction=dt.lateral_friction, inductance=left.inductance,
    )


def _create(name: str, dt: DrivetrainConfig, cfg: Config) -> Differential:
    params = _params(dt, cfg)
    longitudinal: Longitudinal
    if dt.fidelity == "kinematic":
        assert dt.kinematic is not None
        longitudinal = KinematicLongitudinal(dt.kinematic.max_speed, dt.kinematic.deadzone)
    elif dt.fidelity == "characterized":
        c = dt.characterized
        assert c is not None
        longitudinal = CharacterizedLongitudinal(
            params, SideGains(c.left.kv, c.left.ka, c.left.ks),
            SideGains(c.right.kv, c.right.ka, c.right.ks))
    elif params.inductance > 0.0:
        longitudinal = InductiveLongitudinal(params)
    else:
        longitudinal = PhysicalLongitudinal(params)
    shift = None
    if dt.shifter is not None and dt.high_gearing:
        shift = (dt.shifter, dt.high_gearing)
    drive = DifferentialDrive(params, longitudinal)
    if isinstance(longitudinal, PhysicalLongitudinal) and not dt.losses.ideal:
        drive = TractionDrive(params, traction(dt, params))
    return Differential(drive, dt.left, dt.right, shift)


def side_losses(cfg: DriveLossesConfig, joint: JointMotors, normal: float) -> Losses:
    """The loss terms of one side (at the wheel rim) from its config: the joint's losses
    (``losses_from_config``) with the tires' rolling resistance × ``normal`` (the side's
    weight, N) added to its Coulomb friction."""
    losses = losses_from_config(cfg, joint.motor, joint.count, joint.ratio)
    if cfg.ideal:
        return losses
    return replace(losses, coulomb=losses.coulomb + cfg.rolling_resistance * normal)


def traction(dt: DrivetrainConfig, params: DifferentialParams) -> Traction:
    """The tires and losses of a physical tank. With ``characterization``: per side the joint
    keeps its gearbox efficiency and free-current load, ``from_feedforward`` gives the Coulomb
    and viscous friction (kS, kV) and the mass the side moves when driving straight (kA),
    which is half the robot's mass plus the wheel inertia seen at the rim: the wheel inertia
    is what is left (raises CharacterizationError when nothing is)."""
    normal = params.mass * GRAVITY / 2.0
    joint = side_joint(params, params.gearing, IDEAL)
    losses = side_losses(dt.losses, joint, normal)
    c = dt.characterization
    if c is None:
        return Traction(dt.friction, (dt.wheel_inertia, dt.wheel_inertia), (losses, losses))
    if c.kg:
        raise CharacterizationError("kg", "a drivetrain has no gravity load: leave kg out")
    derived = from_feedforward(replace(joint, losses=losses), Feedforward(c.ks, c.kv, c.ka))
    half = params.mass / 2.0
    if not derived.inertia > half * (1.0 + 1e-9):
        least = half / replace(joint, losses=losses).force_per_volt
        raise CharacterizationError(
            "ka",
            f"ka {c.ka:.4g} V·s²/m is at most {least:.4g}, what half the robot's mass "
            f"({params.mass:.4g} kg) alone needs with these motors and gearing: it leaves no "
            "wheel inertia; check robot.mass, the gearing, the wheel size and the units")
    wheel = (derived.inertia - half) * params.wheel_radius**2
    return Traction(dt.friction, (wheel, wheel), (derived.losses, derived.losses))


def _motors(dt: DrivetrainConfig) -> list[DriveMotor]:
    return [DriveMotor(getattr(dt, side), side, "length", "a drivetrain side")
            for side in ("left", "right")]


def _check_characterization(dt: DrivetrainConfig, cfg: Config) -> list[tuple[str, str]]:
    """[drivetrain.characterization] refused where it cannot apply or no tank can have it."""
    out: list[tuple[str, str]] = []
    motors = cfg.motors
    if dt.characterization is None:
        return out
    if dt.fidelity != "physical":
        out.append(("characterization", "needs fidelity = \"physical\" (for fidelity = "
                                        "\"characterized\" give [drivetrain.characterized])"))
    elif dt.losses.ideal:
        out.append(("losses.ideal", "ideal = true has no losses to derive from "
                                    "[drivetrain.characterization]: remove one of them"))
    elif dt.left in motors and motors[dt.left].inductance > 0:
        out.append(("characterization", "not available with winding inductance on the "
                                        "drivetrain motors (the inductive model is ideal)"))
    elif dt.left in motors:
        try:
            params = _params(dt, cfg)
        except (KeyError, ValueError):
            params = None  # a bad motor or size: reported on its own key
        if params is not None:
            try:
                traction(dt, params)
            except CharacterizationError as exc:
                out.append((f"characterization.{exc.key}", str(exc)))
    return out


def _check(dt: DrivetrainConfig, cfg: Config) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    motors = cfg.motors
    if dt.left != dt.right and dt.left in motors and dt.right in motors:
        a, b = motors[dt.left], motors[dt.right]
        if (a.type, a.count, a.inductance) != (b.type, b.count, b.inductance):
            out.append(("", f"left ({a.count}× {a.type}) and right ({b.count}× {b.type}) must "
                            "have the same motor type, count and inductance"))
    if dt.left in motors and motors[dt.left].inductance > 0 and dt.fidelity != "physical":
        out.append(("fidelity", "winding inductance on drivetrain motors needs "
                                "fidelity = \"physical\""))
    out += _check_characterization(dt, cfg)
    if dt.fidelity == "characterized" and dt.characterized is None:
        out.append(("characterized",
                    "required when fidelity = \"characterized\": add "
                    "[drivetrain.characterized.left] and [drivetrain.characterized.right] with "
                    "kv, ka (and ks)"))
    if dt.fidelity == "kinematic" and dt.kinematic is None:
        out.append(("kinematic",
                    "required when fidelity = \"kinematic\": add [drivetrain.kinematic] with "
                    "max_speed"))
    if dt.shifter is not None:
        if dt.shifter not in cfg.solenoids:
            out.append(("shifter", missing_name("solenoid", dt.shifter, list(cfg.solenoids))))
        if dt.high_gearing is None:
            out.append(("high_gearing", "required when shifter is set"))
    return out


def _warn(dt: DrivetrainConfig, cfg: Config) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    robot = cfg.robot
    if dt.track_width > robot.width:
        out.append(("track_width", f"{dt.track_width:g} m is wider than the robot "
                                   f"({robot.width:g} m)"))
    left = cfg.motors.get(dt.left)
    if dt.fidelity == "physical" and left is not None and left.inductance > 0:
        out.append(("fidelity", "with winding inductance the tank runs its ideal model: "
                                "rigid traction (no wheel slip, no wheel inertia) and no "
                                "[drivetrain.losses]"))
    if dt.fidelity == "physical":
        out += wheel_speed_warning(cfg, dt.left, "gearing", dt.gearing, dt.wheel_diameter)
        if dt.high_gearing is not None:
            out += wheel_speed_warning(cfg, dt.left, "high_gearing", dt.high_gearing,
                                       dt.wheel_diameter)
    return out


DIFFERENTIAL = ModelType(
    name="differential",
    role="drivetrain",
    config=DrivetrainConfig,
    doc="Tank drivetrain: kinematic, characterized (kV/kA/kS) or physical (motors, lossy "
        "gears and wheel inertia on traction-limited tires → rigid body; or the ideal machine), "
        "with lateral skid and battery sag.",
    create=_create,
    check=_check,
    warn=_warn,
    motors=_motors,
    outputs=(OutputSpec(SIDE_SPEEDS[0], "double", "m/s", "Left wheel surface speed.", nt=False),
             OutputSpec(SIDE_SPEEDS[1], "double", "m/s", "Right wheel surface speed.",
                        nt=False)),
)
