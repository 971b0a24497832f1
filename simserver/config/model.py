"""The configuration schema: typed sections, each key declaring its unit, range, default and doc.

All physical values are SI floats once loaded (m, kg, s, rad, V, A, ohm). The loader in
``simserver.config.loader`` builds these from a TOML file; ``docs/config.md`` is generated from
them (``make docs``) and a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simserver.config.fields import (
    boolean,
    choice,
    derived,
    hal_device,
    integer,
    model,
    models,
    motor_type,
    number,
    optional_quantity,
    optional_section,
    points,
    position_quantity,
    quantity,
    section,
    sensor_unit,
    table,
    text,
)
from simserver.config.hal import INTEGRATED_SENSORS, HalAddress
from simserver.config.limits import (
    DEG,
    DRIVE_GEARING,
    FRC_OUTLINE_PERIMETER,
    HEAVIEST_FRC_ROBOT,
    HEAVIEST_ROBOT,
    INCH,
    LARGEST_CURRENT,
    LARGEST_FIELD,
    LARGEST_ROBOT,
    LARGEST_WHEEL,
    LIGHTEST_ROBOT,
    MAX_SUBSTEPS_PER_TICK,
    MS,
    PSI,
    ROBOT_NT_PORT,
    SMALLEST_FIELD,
    SMALLEST_ROBOT,
    SMALLEST_SUBSTEP,
    SMALLEST_WHEEL,
    TRAVEL,
    USUAL_FIELD,
)
from simserver.config.losses import DriveLossesConfig, LinearCharacterization
from simserver.config.pieces import PiecesConfig
from simserver.config.vision import CameraConfig, VisionConfig

SEASONS = ("2022", "2023", "2024", "2025", "2026")
FIDELITIES = ("kinematic", "characterized", "physical")


@dataclass(frozen=True)
class SimConfig:
    """How time advances."""

    substep: float = quantity(
        "5 ms", "time", "Fixed physics substep. Every model advances by exactly this much. "
        f"A tick is at most {MAX_SUBSTEPS_PER_TICK} substeps, so that it finishes (and Ctrl-C "
        "is handled) in bounded time. Above 10 ms, contacts and controller ramps, resolved "
        "once a substep, get coarse.",
        minimum=SMALLEST_SUBSTEP, maximum=50 * MS, usual=(None, 10 * MS),
    )
    tick: float = quantity(
        "10 ms", "time",
        "Input-read / publish period: inputs are sampled, the world advances by whole substeps, "
        "then one snapshot is published and flushed. Rounded to a whole number of substeps. "
        "Above 100 ms a robot program (a loop every 20 ms) reads sensors several loops old.",
        minimum=SMALLEST_SUBSTEP, maximum=1.0, usual=(None, 100 * MS),
    )
    seed: int = integer(0, "Seed of the random generator behind every noise source.", minimum=0)
    reset_on_connect: bool = boolean(
        True,
        "Reset the world (pose, encoders, gyro, battery) when a robot program connects "
        "(client mode) or starts publishing motor inputs (--serve mode).",
    )
    enable_delay: float = quantity(
        "0.5 s", "time",
        "With `--enable` (or a scenario): how long the robot program runs disabled, reading "
        "simserver's sensors, before simserver enables it, as a robot waits disabled on the "
        "field before a match. Vendor devices report values written to them a few loops "
        "later (Phoenix 6: one or two), so code that zeroes its odometry in autonomousInit "
        "would otherwise start from the sensors' boot values.", minimum=0.0, maximum=60.0)
    input_timeout: float = quantity(
        "100 ms", "time",
        "Real time over NetworkTables: when no input (motor, solenoid, robot mode) arrives for "
        "this long from a robot program that re-sends unchanged values every loop (the "
        "bridge does; an NT client publishing with keepDuplicates does), the program is "
        "taken as frozen and every motor goes to 0 until its inputs come again, as WPILib's "
        "MotorSafety stops a motor that was not fed for 100 ms. A publisher that sends only "
        "changes is never timed out. 0 turns the watchdog off.", minimum=0.0, maximum=10.0)


@dataclass(frozen=True)
class BridgeConfig:
    """The robot-side bridge (`robotpy sim --simserver`) and lock-step."""

    lockstep: bool = boolean(
        False,
        "Lock-step: the robot program's clock is paused and advances one `period` at a time, "
        "each only after simserver has sent the sensors for it. The robot program waits up to "
        "`connect_timeout` for simserver. Without it the program runs in real time, and "
        "`simserver run` exchanges each of its loops with it over `port` (or, with "
        "`--lockstep`, switches it to lock-step).")
    period: float = quantity("20 ms", "time", "Robot loop period (TimedRobot's, 20 ms by "
                             "default); one exchange with simserver per period.", minimum=MS,
                             maximum=1.0, usual=(5 * MS, 100 * MS))
    port: int = integer(5811, "TCP port the bridge listens on for simserver (its step port: "
                        "one exchange per robot loop, in real time and in lock-step).",
                        minimum=1, maximum=65535)
    nt_port: int = integer(
        ROBOT_NT_PORT, "TCP port of the robot program's NetworkTables (NT4) server, which "
        "`simserver run` connects to by default. Another port than 5810 moves it: the bridge "
        "starts the program's server there before RobotBase starts its own on 5810 (ntcore "
        "keeps the first), without the legacy NT3 port 1735, so several robot programs run "
        "side by side, each with its own `nt_port` and `port`.", minimum=1, maximum=65535)
    bind: str = text("127.0.0.1", "Address the step port binds to (\"0.0.0.0\" when "
                     "simserver runs on another host or container).")
    connect_timeout: float = quantity(
        "60 s", "time", "With `lockstep = true`: how long the robot program waits for simserver "
        "before it exits with an error.", minimum=0.1, maximum=3600.0)
    timeout: float = quantity(
        "10 s", "time", "How long either side waits for the other's next message before "
        "failing (lock-step) or detaching (real time: simserver sets the motors to 0 and "
        "waits for the program again). Below 0.5 s a pause of the other process (a garbage "
        "collection, a slow machine) detaches it.", minimum=0.1, maximum=3600.0,
        usual=(0.5, None))


@dataclass(frozen=True)
class ObstacleConfig:
    """A field element of your own (`[field.obstacles.<name>]`): a convex polygon robots bump
    into and cameras cannot see through."""

    points: tuple[tuple[float, float], ...] = points(
        "Corners in field coordinates (x from the blue alliance wall, y from the right-hand "
        "wall seen from blue), in order around the outline, e.g. "
        "`[[\"4 m\", \"3 m\"], [\"5 m\", \"3 m\"], [\"5 m\", \"4 m\"]]`. Must be convex.",
        minimum=-LARGEST_FIELD, maximum=LARGEST_FIELD)
    height: float = quantity("1 m", "length", "Height of its top above the carpet (cameras see "
                             "over lower elements).", minimum=0.01, maximum=10.0)


@dataclass(frozen=True)
class FieldConfig:
    """The playing field: its perimeter walls and fixed elements."""

    season: str = choice(
        "2026", SEASONS,
        "Season whose official field size (from robotpy-apriltag's layout) sets the walls. "
        "Write it as a string or a number.",
    )
    length: float | None = optional_quantity(
        "length", "Override the field length (x extent). Default: the season's (the FRC "
        "fields of 2022-2026 are 16.46-17.55 m long). It must hold the robot.",
        minimum=SMALLEST_FIELD, maximum=LARGEST_FIELD, usual=USUAL_FIELD)
    width: float | None = optional_quantity(
        "length", "Override the field width (y extent). Default: the season's (8.01-8.23 m "
        "in 2022-2026). It must hold the robot.",
        minimum=SMALLEST_FIELD, maximum=LARGEST_FIELD, usual=(2.0, 12.0))
    restitution: float = number(
        0.2, "Coefficient of restitution of bumper-wall impacts: 0 stops dead, 1 is elastic.",
        minimum=0.0, maximum=1.0,
    )
    wall_friction: float = number(
        0.3, "Friction coefficient between bumpers and walls, field elements and other robots "
        "(tangential impulse limit).",
        minimum=0.0, maximum=2.0,
    )
    elements: bool = boolean(
        False, "Place the season's large fixed field elements (hubs, reefs, stage legs, charge "
        "stations: `simserver field` lists them) as obstacles.")
    obstacles: dict[str, ObstacleConfig] = table(
        "Extra obstacles by name (`[field.obstacles.<name>]`).")


@dataclass(frozen=True)
class StartConfig:
    """Where the robot starts (and returns to on reset), in field coordinates."""

    x: float = quantity("2 m", "length", "Start x, from the blue alliance wall: the robot's "
                        "centre must be on the field (a warning when its outline crosses a "
                        "wall).", minimum=0.0, maximum=LARGEST_FIELD)
    y: float = quantity("4 m", "length", "Start y, from the right-hand wall seen from blue; on "
                        "the field, as x.", minimum=0.0, maximum=LARGEST_FIELD)
    heading: float = quantity("0 deg", "angle", "Start heading, CCW positive, 0 = facing red.",
                              minimum=-360 * DEG, maximum=360 * DEG)


@dataclass(frozen=True)
class RobotConfig:
    """The robot's body."""

    mass: float = quantity(
        "60 lb", "mass", "Total mass with battery and bumpers. The usual maximum is the FRC "
        "weight limit (R103: 125 lb until 2024, 115 lb since, without bumpers and battery) plus "
        "bumpers and a 13 lb battery, 154 lb; the largest 220 lb. A Romi weighs under 1 kg.",
        minimum=LIGHTEST_ROBOT, maximum=HEAVIEST_ROBOT, usual=(None, HEAVIEST_FRC_ROBOT))
    length: float = quantity(
        "32 in", "length", "Outline along x (front to back), bumpers included. A warning when "
        f"the outline's perimeter exceeds {FRC_OUTLINE_PERIMETER / INCH:g} in (R101's largest "
        "frame perimeter of recent games, 120 in, plus bumpers).",
        minimum=SMALLEST_ROBOT, maximum=LARGEST_ROBOT)
    width: float = quantity(
        "28 in", "length", "Outline along y (side to side), bumpers included.",
        minimum=SMALLEST_ROBOT, maximum=LARGEST_ROBOT)
    moment_of_inertia: float | None = optional_quantity(
        "moment of inertia",
        "Yaw moment of inertia. Default: the drivetrain's estimate (tank: RoboSim's "
        "m/12·((0.9·length)² + track_width²); others: a uniform box of the outline, "
        "m/12·(length² + width²)). At most mass·(length² + width²)/4 (all the "
        "mass at the corners) and at least a hundredth of that; a warning below a quarter "
        "of a uniform box's m·(length² + width²)/12.",
        minimum=1e-4, maximum=500.0)
    height: float = quantity(
        "0.8 m", "length", "Height of the robot's top above the carpet: what it hides from "
        "other robots' cameras (object detection).", minimum=0.05, maximum=3.0)
    start: StartConfig = section(StartConfig, "Start pose.")

    def box_inertia(self) -> float:
        """``moment_of_inertia``, or that of a uniform box of the outline when unset, kg·m²."""
        return self.moment_of_inertia or self.mass / 12.0 * (self.length**2 + self.width**2)


@dataclass(frozen=True)
class BatteryConfig:
    """The main battery as a voltage source behind an internal resistance (RoboSim)."""

    nominal_voltage: float = quantity(
        "12.7 V", "voltage", "Open-circuit voltage of a charged battery (a 12 V lead-acid "
        "FRC battery: 12.6-13.3 V).", minimum=1.0, maximum=20.0, usual=(11.0, 14.0),
    )
    resistance: float = quantity(
        "0.015 ohm", "resistance",
        "Internal resistance plus wiring. An ES17-12 is about 0.012 Ω; wiring and the main "
        "breaker add a few mΩ.",
        minimum=0.0, maximum=1.0, usual=(0.005, 0.05),
    )
    background_current: float = quantity(
        "0.5 A", "current", "Constant draw of the roboRIO, radio and lights (RoboSim).",
        minimum=0.0, maximum=50.0, usual=(None, 5.0),
    )
    capacity: float = quantity("17 A*h", "charge", "Charge of a full battery (ES17-12: 17 Ah; "
                               "FRC batteries are 17-18.2 Ah).", minimum=0.1, maximum=100.0,
                               usual=(10.0, 25.0))
    discharge_voltage: bool = boolean(
        False, "Let the open-circuit voltage fall as charge is used, to 11.7 V when empty "
        "(otherwise it stays at nominal_voltage, RoboSim's assumption for short runs); needs "
        "nominal_voltage of at least 11.7 V.",
    )
    brownout_voltage: float = quantity(
        "6.75 V", "voltage", "Below this the roboRIO browns out and cuts every motor output "
        "(roboRIO 2: settable, 6.75 V by default). A warning when it is not below "
        "nominal_voltage.", minimum=0.0, maximum=12.0, usual=(4.5, 7.5),
    )
    breaker: bool = boolean(True, "Model the 120 A main breaker (trips on sustained overcurrent).")


@dataclass(frozen=True)
class MotorConfig:
    """One motor controller output: a duty-cycle input driving `count` identical motors."""

    type: str = motor_type(None, "Motor type from the catalog (`simserver motors` lists them).")
    count: int = integer(1, "Motors on this output, geared together.", minimum=1, maximum=8)
    inverted: bool = boolean(
        False, "The motor is mounted so that turning its positive way (counter-clockwise "
        "seen from its face) drives its side or mechanism backward: a positive duty drives "
        "backward. Set it where the program inverts the controller (`setInverted(True)`, "
        "`InvertedValue.CLOCKWISE_POSITIVE`, a SPARK's `inverted(True)`); the controller then "
        "outputs, and its integrated sensor reads, the right way round.")
    neutral: str = choice(
        "brake", ("brake", "coast"),
        "At zero output: `brake` shorts the windings (the motor resists turning), `coast` opens "
        "them (no current, no braking).",
    )
    ramp: float = quantity(
        "0 s", "time", "First-order time constant of the controller output (PyFlyt's ramp); "
        "0 = instant.", minimum=0.0, maximum=10.0, usual=(None, 2.0),
    )
    noise: float = number(
        0.0, "Relative standard deviation of multiplicative noise on the output (PyFlyt), from "
        "the seeded generator.", minimum=0.0, maximum=1.0, usual=(None, 0.2),
    )
    stator_limit: float = quantity(
        "0 A", "current", "Stator current limit, as the controller firmware enforces it; "
        "0 = none. The catalog's largest stall current is 483 A.",
        minimum=0.0, maximum=LARGEST_CURRENT,
    )
    supply_limit: float = quantity(
        "0 A", "current", "Supply current limit, as the controller firmware enforces it; "
        "0 = none.", minimum=0.0, maximum=LARGEST_CURRENT,
    )
    hal: tuple[HalAddress, ...] = hal_device(
        "motor", "The robot program's motor controller(s) driving this output, for the bridge "
        "(`robotpy sim --simserver`): `pwm:N`, `talonfx:N`, `sparkmax:N`, `sparkflex:N` or "
        "`simdevice:DEVICE/VALUE`; a list averages several controllers.")
    followers: tuple[HalAddress, ...] = hal_device(
        "motor", "Controllers that follow `hal` in their firmware or in WPILib (Phoenix 6 "
        "`Follower`, REV `follow()`, `PWMMotorController.addFollower`), either direction: "
        "not read (the leader's output drives them), counted as wired. Their motors are in "
        "`count`.")
    inductance: float = quantity(
        "0 H", "inductance", "Winding inductance per motor (RoboSim's L-R model); 0 = the "
        "current follows the voltage instantly. On drivetrain motors it needs the `physical` "
        "fidelity. FRC motors have tens of µH; below 1 µH the winding's time constant is under "
        "a nanosecond (use 0).", minimum=1e-6, maximum=0.1, or_zero=True, usual=(None, 1e-3),
    )

    @property
    def controllers(self) -> tuple[HalAddress, ...]:
        """Every controller of this output: ``hal`` (read), then ``followers``."""
        return self.hal + self.followers


@dataclass(frozen=True)
class SideCharacterization:
    """Measured feedforward gains of one drivetrain side (pyfrc TankModel semantics)."""

    kv: float = quantity(None, "kV (voltage per speed)", "Volts per m/s of steady speed (about "
                         "2-4 V·s/m for an FRC drivetrain; at least 0.5, a top speed of 25 m/s "
                         "at 12.7 V).", minimum=0.5, maximum=100.0, usual=(1.0, 20.0))
    ka: float = quantity(None, "kA (voltage per acceleration)", "Volts per m/s² of acceleration "
                         "(about 0.1-1 V·s²/m).", minimum=0.01, maximum=100.0,
                         usual=(0.05, 5.0))
    ks: float = quantity("0 V", "voltage", "Static-friction voltage (pyfrc's Vintercept).",
                         minimum=0.0, maximum=12.0, usual=(None, 2.0))


@dataclass(frozen=True)
class CharacterizedConfig:
    """Gains used when `fidelity = "characterized"`."""

    left: SideCharacterization = section(SideCharacterization, "Left side gains.")
    right: SideCharacterization = section(SideCharacterization, "Right side gains.")


@dataclass(frozen=True)
class KinematicConfig:
    """Parameters used when `fidelity = "kinematic"` (pyfrc TwoMotor/FourMotorDrivetrain)."""

    max_speed: float = quantity(
        None, "speed", "Wheel speed at full duty cycle (pyfrc's `speed`; FRC drivetrains "
        "reach 3-6 m/s).", minimum=0.01, maximum=20.0, usual=(None, 8.0),
    )
    deadzone: float = number(
        0.0, "Duty cycle below which a side does not move; above it, output is rescaled "
        "linearly (pyfrc's linear_deadzone).", minimum=0.0, maximum=0.99,
    )


@dataclass(frozen=True)
class DrivetrainConfig:
    """A differential (tank) drivetrain (`type = "differential"`)."""

    left: str = text("left", "Name of the motor (in [motors]) driving the left side.")
    right: str = text("right", "Name of the motor (in [motors]) driving the right side.")
    fidelity: str = choice(
        "physical", FIDELITIES,
        "Model level: `kinematic` (speed ∝ duty), `characterized` (measured kV/kA/kS per side), "
        "`physical` (motor torque → wheel force → rigid body, the default).",
    )
    track_width: float = quantity(
        "26 in", "length", "Distance between left and right wheel contact lines (a warning "
        "when wider than the robot).", minimum=0.05, maximum=LARGEST_ROBOT)
    wheel_diameter: float = quantity(
        "6 in", "length", "Drive wheel diameter (FRC: 3-8 in; a Romi's is 70 mm).",
        minimum=SMALLEST_WHEEL, maximum=LARGEST_WHEEL, usual=(None, 8 * INCH))
    gearing: float = number(10.71, "Reduction from motor to wheel (10.71 for 10.71:1). A "
                            "warning when the wheels' free speed it gives is outside 0.3-8 m/s "
                            "(FRC drivetrains: 3-6 m/s).",
                            minimum=DRIVE_GEARING[0], maximum=DRIVE_GEARING[1])
    lateral_friction: float = number(
        1.0, "Sideways friction coefficient of the wheels, across them (traction ≈ 1.0, "
        "omni ≈ 0.1): the largest sideways acceleration, in g, before the robot skids in a "
        "turn or when pushed sideways.",
        minimum=0.0, maximum=3.0,
    )
    friction: float = number(
        1.1, "`physical`: tire friction coefficient μ along the wheels, the traction limit of "
        "each side (μ·mass·g/2; beyond it the wheels spin). Typical planning values on carpet: "
        "Colson 1.0, blue nitrile 1.2, neoprene 1.3 (±20 %: measure yours).",
        minimum=0.01, maximum=3.0)
    wheel_inertia: float = quantity(
        "0.025 kg*m^2", "moment of inertia",
        "`physical`: inertia turning with each side's wheels, seen at the wheel axle: wheels, "
        "gears and the motors' rotors (rotor inertia × gearing² per motor). An estimate for "
        "the kitbot: two CIM rotors of about 1e-4 kg·m² each through 10.71:1 give 0.023, "
        "three 6 in wheels about 0.002.", minimum=1e-5, maximum=1.0, usual=(None, 0.2))
    losses: DriveLossesConfig = section(
        DriveLossesConfig, "`physical`: losses of each side (gearbox efficiency, free "
        "current, static friction, rolling resistance, viscous). `ideal = true` gives the "
        "ideal machine with rigid traction (no wheel slip, no wheel inertia): the model of "
        "WPILib's DifferentialDrivetrainSim.")
    characterization: LinearCharacterization | None = optional_section(
        "`physical`: SysId results of each side (kS, kV, kA in metres of wheel travel), applied "
        "to both sides: the losses and the wheel inertia are derived so that each side has "
        "exactly these constants (docs/models.md, Differential drivetrain).")
    shifter: str | None = text(
        None, "Optional name of a solenoid (in [solenoids]) that selects `high_gearing` when on.",
        optional=True,
    )
    high_gearing: float | None = number(
        None, "Reduction in high gear, when `shifter` is set.", optional=True,
        minimum=DRIVE_GEARING[0], maximum=DRIVE_GEARING[1])
    characterized: CharacterizedConfig | None = optional_section(
        "Measured gains, required when `fidelity = \"characterized\"`."
    )
    kinematic: KinematicConfig | None = optional_section(
        "Speed and deadzone, required when `fidelity = \"kinematic\"`."
    )


@dataclass(frozen=True)
class EncoderConfig:
    """An encoder on a drivetrain side or a mechanism (quadrature, integrated or absolute)."""

    motor: str = text(None, "Motor (in [motors]) whose drivetrain side or mechanism this "
                            "encoder measures.")
    unit: str = sensor_unit(
        "m",
        "Unit of `position` (and `velocity` per second): a length (m, ft, in) for distance "
        "travelled by the wheel, an angle (rotations, deg, rad) of the shaft at `mount`, or "
        "`ticks`.",
    )
    mount: str = choice(
        "wheel", ("wheel", "motor"),
        "Shaft the encoder turns with, for angle and tick units: the output (wheel axle, drum, "
        "arm or flywheel shaft: `wheel`) or the motor.",
    )
    ticks_per_revolution: int = integer(
        2048, "Counts per shaft revolution, when `unit = \"ticks\"`.", minimum=1,
        maximum=1 << 20)
    inverted: bool = boolean(
        False, "The sensor is mounted to count against its mechanism's positive direction: "
        "set it where the program reverses the sensor (`Encoder(a, b, True)`, a CANcoder's "
        "`SensorDirectionValue.CLOCKWISE_POSITIVE`), which then reads it the right way round. "
        "Not for an integrated sensor (`talonfx:N`, `sparkmax:N`, `sparkflex:N`): it turns "
        "with its motor and takes the motor's `inverted`.")
    absolute: bool = boolean(
        False, "An absolute encoder (CANcoder, duty-cycle, potentiometer) on a rotating shaft "
        "(an arm, a flywheel, or in an angle unit an elevator's drum): reads the shaft angle "
        "within `full_range`, `offset` added, instead of counting from 0 at reset. A "
        "CANcoder (`cancoder:N`) gets the reading as the multi-turn position the device "
        "keeps: it starts there and counts turns.")
    offset: float = quantity("0 deg", "angle", "Added to an absolute encoder's reading.",
                             minimum=-360 * DEG, maximum=360 * DEG)
    full_range: float = quantity(
        "360 deg", "angle", "Shaft angle an absolute encoder reads before it wraps, and over "
        "which an analog one's 0..5 V spans: one turn for an absolute encoder, the travel of "
        "a potentiometer (`\"270 deg\"`, `\"10 rotations\"`).", minimum=1 * DEG,
        maximum=100 * 360 * DEG)
    hal: tuple[HalAddress, ...] = hal_device(
        "encoder", "The robot program's encoder, for the bridge: `encoder:A` (a "
        "`wpilib.Encoder` whose channel A is A), `talonfx:N` (rotor sensor), `cancoder:N`, "
        "`sparkmax:N`, `sparkflex:N` (relative encoder), `sparkmax:N/absolute`, "
        "`sparkflex:N/absolute` (absolute encoder on the data port; needs `absolute = true`), "
        "`sparkmax:N/alternate`, `sparkflex:N/external` (a quadrature encoder on the data "
        "port), `analog:N` (a potentiometer or analog absolute encoder, 0..5 V over "
        "`full_range`; needs `absolute = true`) or `simdevice:DEVICE/VALUE`.")

    @property
    def wrap(self) -> float:
        """Shaft angle (rad) the reading wraps at: ``full_range`` for an absolute encoder, 0
        for one that counts on."""
        return self.full_range if self.absolute else 0.0

    @property
    def integrated(self) -> bool:
        """Whether this is a motor controller's own sensor (a Talon FX rotor, a SPARK's
        relative encoder): it turns with the motor the controller drives."""
        return bool(self.hal) and self.hal[0].kind in INTEGRATED_SENSORS \
            and not self.hal[0].port


@dataclass(frozen=True)
class GyroConfig:
    """The yaw gyro (published as /simserver/gyro/yaw and /rate)."""

    noise: float = quantity(
        "0 deg", "angle", "Standard deviation of white noise added to each yaw reading.",
        minimum=0.0, maximum=10 * DEG, usual=(None, 1 * DEG),
    )
    drift: float = quantity(
        "0 deg/s", "angular speed", "Constant bias added to the rate, integrated into yaw "
        "(a Pigeon 2 or navX drifts well under 0.1 deg/s).",
        minimum=-10 * DEG, maximum=10 * DEG, usual=(-1 * DEG, 1 * DEG),
    )
    hal: tuple[HalAddress, ...] = hal_device(
        "gyro", "The robot program's gyro, for the bridge: `analoggyro:N`, `adxrs450`, `navx`, "
        "`pigeon2:N` or `simdevice:DEVICE/VALUE` (yaw in degrees, CCW positive).")


@dataclass(frozen=True)
class SwitchConfig:
    """A limit switch (`/simserver/switches/<name>`, boolean) on a mechanism's position, or a
    beam break that sees a mechanism holding a game piece (`trigger = "holding"`)."""

    mechanism: str = text(None, "Mechanism (in [mechanisms]) whose position it senses (with "
                          "`holding`: a mechanism that holds game pieces, such as an intake).")
    position: tuple[str, float] | None = position_quantity(
        None, "Where it trips: a length for elevators and linear motions, an angle for arms "
        "(a warning when outside the mechanism's travel). Required with `below` and `above`; "
        "left out with `holding`.", minimum=-TRAVEL, maximum=TRAVEL, optional=True)
    trigger: str = choice(
        "below", ("below", "above", "holding"),
        "Pressed while the mechanism is at or `below` (or `above`) `position`; `holding`: "
        "while it holds at least one game piece (a beam break).",
    )
    hal: tuple[HalAddress, ...] = hal_device(
        "switch", "The robot program's digital input, for the bridge: `dio:N` reads true "
        "when pressed, `!dio:N` false when pressed (normally-open switch on the pull-up).")


@dataclass(frozen=True)
class PneumaticsConfig:
    """Compressor, tanks and pressure switch (RoboSim §7; Viair 90C)."""

    tanks: int = integer(2, "Number of 0.5 L storage tanks.", minimum=0, maximum=20)
    extra_volume: float = quantity(
        "0.1 L", "volume", "Tubing, fittings and valves beyond the tanks. With the tanks at "
        "least 10 mL.", minimum=0.0, maximum=0.01, usual=(None, 2e-3))
    temperature: float = quantity("70 degF", "temperature", "Assumed air temperature.",
                                  minimum=233.15, maximum=333.15, usual=(273.15, 313.15))
    switch_off_pressure: float = quantity(
        "120 psi", "pressure", "The pressure switch stops the compressor at this gauge "
        "pressure (FRC: stored air at most 120 psi; the Viair 90C's table ends at 150 psi).",
        minimum=1 * PSI, maximum=150 * PSI, usual=(None, 120 * PSI))
    switch_on_pressure: float = quantity(
        "95 psi", "pressure", "The switch restarts the compressor below this gauge pressure; "
        "below switch_off_pressure.", minimum=0.0, maximum=150 * PSI)
    compressor: bool = boolean(True, "Whether a compressor is fitted and enabled.")


@dataclass(frozen=True)
class CylinderConfig:
    """A pneumatic cylinder moved by a solenoid (`/simserver/cylinders/<name>/extension`)."""

    solenoid: str = text(None, "Solenoid (in [solenoids]) whose state extends it when on.")
    bore: float = quantity(None, "length", "Bore diameter (FRC cylinders: 5/16 to 2 in).",
                           minimum=1e-3, maximum=0.2, usual=(None, 3 * INCH))
    stroke: float = quantity(None, "length", "Stroke length.", minimum=1e-3, maximum=2.0)
    rod_diameter: float = quantity("0 in", "length", "Rod diameter (reduces the retract "
                                   "volume of a double-acting cylinder); less than the bore.",
                                   minimum=0.0, maximum=0.2)
    double_acting: bool = boolean(True, "Air both ways (a single-acting one springs back).")
    extend_time: float = quantity("0.2 s", "time", "Time to travel the full stroke.",
                                  minimum=1e-3, maximum=60.0)


@dataclass(frozen=True)
class SolenoidConfig:
    """A solenoid input (`/simserver/solenoids/<name>`, boolean)."""

    initial: bool = boolean(False, "State before any input arrives and after a reset.")
    hal: tuple[HalAddress, ...] = hal_device(
        "solenoid", "The robot program's solenoid channel, for the bridge: `ctre:N` (CTRE PCM) "
        "or `rev:N` (REV PH); a `DoubleSolenoid`'s forward channel.")
    reverse_hal: tuple[HalAddress, ...] = hal_device(
        "solenoid", "A `DoubleSolenoid`'s reverse channel, on the same module as `hal`: the "
        "solenoid turns on when the forward channel fires, off when the reverse one does, and "
        "keeps its state while neither does (a double valve holds its spool, also while the "
        "robot is disabled).")


@dataclass(frozen=True)
class OtherRobotConfig:
    """Another robot on the field (`[robots.<name>]`), drawn on the SimField as `<name>`. It
    bumps into the main robot, the others, the walls and the field elements."""

    config: str = text(
        None, "Its own simserver config file (robot, drivetrain, motors, encoders...), relative "
        "to this file. Its [field], [sim], [bridge] and [pieces] are not used: it lives on "
        "this file's field and clock.")
    inputs: str | None = text(
        None, "A CSV of scripted inputs (the format of `simserver run --inputs`), relative to "
        "this file. Without it, the robot reads its inputs from NetworkTables under "
        "`/simserver/robots/<name>/` (the same topic names as the main robot's, e.g. "
        "`/simserver/robots/<name>/motors/left`) and publishes its sensors there.",
        optional=True)


@dataclass(frozen=True)
class MechanismSection:
    """A validated ``[mechanisms.<name>]`` table: its model type and that type's config."""

    type: str
    config: Any


@dataclass(frozen=True)
class Config:
    """A whole simserver configuration: one robot on one field."""

    sim: SimConfig = section(SimConfig, "Time stepping.")
    field: FieldConfig = section(FieldConfig, "The field.")
    robot: RobotConfig = section(RobotConfig, "The robot body.")
    battery: BatteryConfig = section(BatteryConfig, "The battery.")
    motors: dict[str, MotorConfig] = table("Motor controller outputs by name.")
    drivetrain: DrivetrainConfig | None = model(
        "drivetrain", "differential",
        "The drivetrain. Leave the whole `[drivetrain]` table out for a robot that does not "
        "drive (a bench test of an arm or an elevator): it stays at its start pose, and "
        "mechanisms, sensors and pneumatics work as usual.", optional=True)
    drivetrain_type: str = derived("Model type of the drivetrain (\"none\" without one).")
    encoders: dict[str, EncoderConfig] = table("Encoders by name.")
    gyro: GyroConfig = section(GyroConfig, "The gyro.")
    solenoids: dict[str, SolenoidConfig] = table("Solenoid inputs by name.")
    switches: dict[str, SwitchConfig] = table("Limit switches by name.")
    pneumatics: PneumaticsConfig | None = optional_section(
        "The pneumatic system; leave out for a robot without one.")
    cylinders: dict[str, CylinderConfig] = table("Pneumatic cylinders by name.")
    mechanisms: dict[str, MechanismSection] = models(
        "mechanism", "Mechanisms by name, each with `type` naming a model type.")
    bridge: BridgeConfig = section(BridgeConfig, "The robot-side bridge and lock-step.")
    cameras: dict[str, CameraConfig] = table(
        "Cameras on the robot by name (PhotonVision and/or Limelight topics).")
    vision: VisionConfig = section(VisionConfig, "What the cameras can see.")
    pieces: PiecesConfig | None = optional_section(
        "Game pieces on the field; leave out for a field without pieces.")
    robots: dict[str, OtherRobotConfig] = table(
        "Other robots on the field by name (opponents, partners, obstacles that move).")
    others: dict[str, Config] | None = derived(
        "The loaded configs of `robots`, by name (filled in by the loader).")
    warnings: tuple[str, ...] = derived(
        "Unusual values the file loaded with (and those of `robots`' files), one line each "
        "naming the file and key, for `simserver check` and `run` to show.", ())

    def encoder_reversed(self, name: str) -> bool:
        """Whether encoder ``name`` counts against its mechanism's (or drivetrain side's)
        positive direction, in the raw frame of its device: an integrated sensor when its
        motor is mounted ``inverted``, any other sensor when it is ``inverted`` itself."""
        e = self.encoders[name]
        if e.integrated:
            motor = self.motors.get(e.motor or "")
            return motor is not None and motor.inverted
        return e.inverted
