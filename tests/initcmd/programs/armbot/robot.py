"""ArmSimulation-like test program (robotpy/examples ArmSimulation without its in-process
physics, which simserver replaces): a PWM SPARK MAX on channel 2 turns a 30 in, 8 kg arm
through 200:1; a quadrature encoder on DIO 0/1 reads the arm angle in radians. Autonomous holds
the arm at 75 degrees with a PID; every loop the encoder angle (deg) goes to $READING_LOG."""

import json
import math
import os

import wpilib
import wpimath.controller


class Arm:
    def __init__(self) -> None:
        self.motor = wpilib.PWMSparkMax(2)
        self.encoder = wpilib.Encoder(0, 1)
        self.encoder.setDistancePerPulse(2 * math.pi / 4096)
        self.controller = wpimath.controller.PIDController(50.0, 0.0, 0.0)

    def reach(self, setpoint: float) -> None:
        """Drive towards ``setpoint`` rad above the start."""
        self.motor.setVoltage(self.controller.calculate(self.encoder.getDistance(), setpoint))

    def stop(self) -> None:
        self.motor.set(0.0)


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.arm = Arm()

    def robotPeriodic(self) -> None:
        log = os.environ.get("READING_LOG")
        if log:
            with open(log, "w") as f:
                json.dump({"angle": math.degrees(self.arm.encoder.getDistance())}, f)

    def autonomousPeriodic(self) -> None:
        self.arm.reach(math.radians(75.0))

    def disabledInit(self) -> None:
        self.arm.stop()
