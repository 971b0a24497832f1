"""Swerve constants in the shape Phoenix Tuner X's swerve project generator writes them
(generated/tuner_constants.py): SDS MK4i L2 modules, Kraken X60 drive and steer motors, a
CANcoder on each azimuth and a Pigeon 2, all on a CANivore named "canivore".

The values are this example's robot, not a real one's: regenerate them with Tuner X for yours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phoenix6 import CANBus, configs, hardware, signals, swerve, units
from wpimath.units import inchesToMeters

if TYPE_CHECKING:
    from subsystems.command_swerve_drivetrain import CommandSwerveDrivetrain


class TunerConstants:
    """Drivetrain-wide and per-module constants, as Tuner X generates them."""

    _steer_gains = (
        configs.Slot0Configs()
        .with_k_p(100).with_k_i(0).with_k_d(0.5)
        .with_k_s(0.1).with_k_v(2.66).with_k_a(0)
        .with_static_feedforward_sign(signals.StaticFeedforwardSignValue.USE_CLOSED_LOOP_SIGN)
    )
    _drive_gains = configs.Slot0Configs().with_k_p(0.1).with_k_i(0).with_k_d(0).with_k_s(0) \
        .with_k_v(0.124)

    _steer_closed_loop_output = swerve.ClosedLoopOutputType.VOLTAGE
    _drive_closed_loop_output = swerve.ClosedLoopOutputType.VOLTAGE
    _drive_motor_type = swerve.DriveMotorArrangement.TALON_FX_INTEGRATED
    _steer_motor_type = swerve.SteerMotorArrangement.TALON_FX_INTEGRATED
    _steer_feedback_type = swerve.SteerFeedbackType.FUSED_CANCODER
    _slip_current: units.ampere = 120.0

    _drive_initial_configs = configs.TalonFXConfiguration().with_current_limits(
        configs.CurrentLimitsConfigs().with_supply_current_limit(70.0)
        .with_supply_current_limit_enable(True))
    _steer_initial_configs = configs.TalonFXConfiguration().with_current_limits(
        configs.CurrentLimitsConfigs().with_stator_current_limit(60.0)
        .with_stator_current_limit_enable(True))
    _encoder_initial_configs = configs.CANcoderConfiguration()
    _pigeon_configs: configs.Pigeon2Configuration | None = None

    canbus = CANBus("canivore")

    speed_at_12_volts: units.meters_per_second = 4.7

    _couple_ratio = 3.5714285714285716  # MK4i: 50/14
    _drive_gear_ratio = 6.746031746031747  # L2
    _steer_gear_ratio = 21.428571428571427  # 150/7
    _wheel_radius: units.meter = inchesToMeters(2)

    _invert_left_side = False
    _invert_right_side = True

    _pigeon_id = 13

    # Only used by CTRE's own simulation (SimSwerveDrivetrain)
    _steer_inertia: units.kilogram_square_meter = 0.01
    _drive_inertia: units.kilogram_square_meter = 0.01
    _steer_friction_voltage: units.volt = 0.2
    _drive_friction_voltage: units.volt = 0.2

    drivetrain_constants = (
        swerve.SwerveDrivetrainConstants()
        .with_can_bus_name(canbus.name)
        .with_pigeon2_id(_pigeon_id)
        .with_pigeon2_configs(_pigeon_configs)
    )

    _constants_creator: swerve.SwerveModuleConstantsFactory = (
        swerve.SwerveModuleConstantsFactory()
        .with_drive_motor_gear_ratio(_drive_gear_ratio)
        .with_steer_motor_gear_ratio(_steer_gear_ratio)
        .with_coupling_gear_ratio(_couple_ratio)
        .with_wheel_radius(_wheel_radius)
        .with_steer_motor_gains(_steer_gains)
        .with_drive_motor_gains(_drive_gains)
        .with_steer_motor_closed_loop_output(_steer_closed_loop_output)
        .with_drive_motor_closed_loop_output(_drive_closed_loop_output)
        .with_slip_current(_slip_current)
        .with_speed_at12_volts(speed_at_12_volts)
        .with_drive_motor_type(_drive_motor_type)
        .with_steer_motor_type(_steer_motor_type)
        .with_feedback_source(_steer_feedback_type)
        .with_drive_motor_initial_configs(_drive_initial_configs)
        .with_steer_motor_initial_configs(_steer_initial_configs)
        .with_encoder_initial_configs(_encoder_initial_configs)
        .with_steer_inertia(_steer_inertia)
        .with_drive_inertia(_drive_inertia)
        .with_steer_friction_voltage(_steer_friction_voltage)
        .with_drive_friction_voltage(_drive_friction_voltage)
    )

    # (steer id, drive id, CANcoder id, CANcoder offset in rotations, x, y, side inverted,
    # steer inverted, CANcoder inverted) per module: front left, front right, back left,
    # back right.
    front_left = _constants_creator.create_module_constants(
        5, 1, 9, -0.125, inchesToMeters(11.375), inchesToMeters(11.375),
        _invert_left_side, True, False)
    front_right = _constants_creator.create_module_constants(
        6, 2, 10, 0.25, inchesToMeters(11.375), inchesToMeters(-11.375),
        _invert_right_side, True, False)
    back_left = _constants_creator.create_module_constants(
        7, 3, 11, -0.375, inchesToMeters(-11.375), inchesToMeters(11.375),
        _invert_left_side, True, False)
    back_right = _constants_creator.create_module_constants(
        8, 4, 12, 0.0, inchesToMeters(-11.375), inchesToMeters(-11.375),
        _invert_right_side, True, False)

    @classmethod
    def create_drivetrain(cls) -> CommandSwerveDrivetrain:
        """The robot's drivetrain; call once."""
        from subsystems.command_swerve_drivetrain import CommandSwerveDrivetrain

        return CommandSwerveDrivetrain(
            cls.drivetrain_constants,
            [cls.front_left, cls.front_right, cls.back_left, cls.back_right])


class TunerSwerveDrivetrain(
    swerve.SwerveDrivetrain[hardware.TalonFX, hardware.TalonFX, hardware.CANcoder]
):
    """CTRE's swerve drivetrain with this robot's device types."""

    def __init__(self, drivetrain_constants: swerve.SwerveDrivetrainConstants,
                 modules: list[swerve.SwerveModuleConstants]):
        swerve.SwerveDrivetrain.__init__(
            self, hardware.TalonFX, hardware.TalonFX, hardware.CANcoder,
            drivetrain_constants, modules)
