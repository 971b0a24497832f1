"""A PotentiometerPID-like test program: an elevator on PWM 7 whose height is read by a
multi-turn potentiometer on analog 1 scaled to 1.5 m over 5 V; teleop holds 0.2 m with a PID.
Every loop the potentiometer's height (m) goes to $READING_LOG."""

import json
import os

import wpilib
import wpimath.controller


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.heightPot = wpilib.AnalogPotentiometer(1, 1.5)
        self.elevatorMotor = wpilib.PWMSparkMax(7)
        self.pid = wpimath.controller.PIDController(8.0, 0.0, 0.2)

    def robotPeriodic(self) -> None:
        log = os.environ.get("READING_LOG")
        if log:
            with open(log, "w") as f:
                json.dump({"height": self.heightPot.get()}, f)

    def teleopPeriodic(self) -> None:
        self.elevatorMotor.set(self.pid.calculate(self.heightPot.get(), 0.2))
