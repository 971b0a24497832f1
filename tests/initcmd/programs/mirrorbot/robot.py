"""A test program whose vendor devices invert themselves, as teams configure them: a tank with
a Talon FX on the left (CAN 1) and a SPARK MAX on the right (CAN 2) configured
``inverted(True)`` (the right gearbox is mirrored), and a wrist on a Talon FX (CAN 4)
configured ``InvertedValue.CLOCKWISE_POSITIVE`` with a CANcoder (CAN 5) on the wrist shaft
configured ``SensorDirectionValue.CLOCKWISE_POSITIVE`` (it faces the other way).

Autonomous drives forward at 0.4 and lifts the wrist at 0.2 (duty). Every loop the program's
own readings go to $READING_LOG: both drive sides in rotor rotations, the wrist's rotor
rotations and its CANcoder rotations."""

import json
import os

import rev
import wpilib
from phoenix6 import configs, controls, hardware, signals


class Drive:
    def __init__(self) -> None:
        self.leftMotor = hardware.TalonFX(1)
        self.rightMotor = rev.SparkMax(2, rev.SparkLowLevel.MotorType.kBrushless)
        config = rev.SparkMaxConfig()
        config.inverted(True)
        self.rightMotor.configure(config, rev.ResetMode.kResetSafeParameters,
                                  rev.PersistMode.kNoPersistParameters)

    def drive(self, duty: float) -> None:
        self.leftMotor.set_control(controls.DutyCycleOut(duty))
        self.rightMotor.set(duty)


class Wrist:
    def __init__(self) -> None:
        self.motor = hardware.TalonFX(4)
        motor = configs.TalonFXConfiguration()
        motor.motor_output.inverted = signals.InvertedValue.CLOCKWISE_POSITIVE
        self.motor.configurator.apply(motor)
        self.encoder = hardware.CANcoder(5)
        sensor = configs.CANcoderConfiguration()
        sensor.magnet_sensor.sensor_direction = signals.SensorDirectionValue.CLOCKWISE_POSITIVE
        self.encoder.configurator.apply(sensor)


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.drive = Drive()
        self.wrist = Wrist()

    def robotPeriodic(self) -> None:
        log = os.environ.get("READING_LOG")
        if log:
            with open(log, "w") as f:
                json.dump({"left": self.drive.leftMotor.get_position().value,
                           "right": self.drive.rightMotor.getEncoder().getPosition(),
                           "wrist_rotor": self.wrist.motor.get_position().value,
                           "wrist_cancoder": self.wrist.encoder.get_position().value}, f)

    def autonomousPeriodic(self) -> None:
        self.drive.drive(0.4)
        self.wrist.motor.set_control(controls.DutyCycleOut(0.2))
