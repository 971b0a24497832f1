"""ElevatorSimulation-like test program (robotpy/examples ElevatorSimulation without its
in-process physics, which simserver replaces): a PWM SPARK MAX on channel 0 winds a 2 in drum
through 10:1 under a 4 kg carriage; an encoder on DIO 0/1 reads the height in metres.
Autonomous holds 0.75 m with a PID and gravity feedforward; every loop the encoder height goes
to $READING_LOG."""

import json
import math
import os

import wpilib
import wpimath.controller

K_DRUM_RADIUS = 0.0254  # m (2 in drum)


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.elevatorMotor = wpilib.PWMSparkMax(0)
        self.elevatorEncoder = wpilib.Encoder(0, 1)
        self.elevatorEncoder.setDistancePerPulse(2 * math.pi * K_DRUM_RADIUS / 4096)
        self.controller = wpimath.controller.PIDController(40.0, 0.0, 0.0)

    def robotPeriodic(self) -> None:
        log = os.environ.get("READING_LOG")
        if log:
            with open(log, "w") as f:
                json.dump({"height": self.elevatorEncoder.getDistance()}, f)

    def autonomousPeriodic(self) -> None:
        volts = self.controller.calculate(self.elevatorEncoder.getDistance(), 0.75) + 0.5
        self.elevatorMotor.setVoltage(volts)

    def disabledInit(self) -> None:
        self.elevatorMotor.set(0.0)
