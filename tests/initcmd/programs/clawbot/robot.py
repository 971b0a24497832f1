"""A test program on CAN followers, a potentiometer and a double solenoid, as teams wire them:

- an arm on a REV SPARK MAX (CAN 3) with a second SPARK MAX (CAN 4) configured to follow it
  inverted, its angle read by a 270-degree potentiometer on analog 0 scaled to read -90 deg at
  0 V (the arm hanging down);
- a shooter on a Talon FX (CAN 1) with a Talon FX (CAN 2) following it opposed (Phoenix 6
  ``Follower``);
- a claw on a CTRE PCM double solenoid (channels 0 and 1).

Autonomous holds the arm at 30 deg with a P loop on the potentiometer, runs the shooter, and
fires the claw forward for 1 s, leaves it off for 1 s, then reverse. Every loop the
potentiometer angle (deg) goes to $READING_LOG."""

import json
import os

import rev
import wpilib
from phoenix6 import controls, hardware, signals


class Arm:
    def __init__(self) -> None:
        self.motor = rev.SparkMax(3, rev.SparkLowLevel.MotorType.kBrushless)
        self.follower = rev.SparkMax(4, rev.SparkLowLevel.MotorType.kBrushless)
        config = rev.SparkMaxConfig()
        config.follow(3, True)
        self.follower.configure(config, rev.ResetMode.kResetSafeParameters,
                                rev.PersistMode.kNoPersistParameters)
        self.pot = wpilib.AnalogPotentiometer(0, 270.0, -90.0)

    def hold(self, setpoint: float) -> None:
        volts = 0.5 * (setpoint - self.pot.get())
        self.motor.setVoltage(max(-12.0, min(12.0, volts)))


class Shooter:
    def __init__(self) -> None:
        self.leader = hardware.TalonFX(1)
        self.follower = hardware.TalonFX(2)
        self.follower.set_control(controls.Follower(1, signals.MotorAlignmentValue.OPPOSED))

    def run(self, duty: float) -> None:
        self.leader.set_control(controls.DutyCycleOut(duty))


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.arm = Arm()
        self.shooter = Shooter()
        self.claw = wpilib.DoubleSolenoid(wpilib.PneumaticsModuleType.CTREPCM, 0, 1)
        self.timer = wpilib.Timer()

    def robotPeriodic(self) -> None:
        log = os.environ.get("READING_LOG")
        if log:
            with open(log, "w") as f:
                json.dump({"angle": self.arm.pot.get()}, f)

    def autonomousInit(self) -> None:
        self.timer.restart()

    def autonomousPeriodic(self) -> None:
        self.arm.hold(30.0)
        self.shooter.run(0.5)
        t = self.timer.get()
        value = wpilib.DoubleSolenoid.Value
        self.claw.set(value.kForward if t < 1.0 else value.kOff if t < 2.0 else value.kReverse)
