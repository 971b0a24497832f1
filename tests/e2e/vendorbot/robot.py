"""A test robot on vendor CAN devices: Talon FX (Phoenix 6) left, SPARK MAX (REV) right, a
Pigeon 2 gyro. Autonomous: drive straight 1 s, rest 1 s, spin 1 s, rest. At the end of each rest
it appends what its own sensors say to the JSON-lines file named by $VENDORBOT_LOG."""

import json
import math
import os

import phoenix6
import rev
import wpilib
from phoenix6 import controls
from phoenix6.hardware import Pigeon2, TalonFX

GEARING = 10.71
WHEEL_CIRCUMFERENCE = math.pi * 0.1524


class Robot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.left = TalonFX(1)
        self.right = rev.SparkMax(2, rev.SparkLowLevel.MotorType.kBrushless)
        self.pigeon = Pigeon2(0)
        self.timer = wpilib.Timer()
        self.logged: set[str] = set()

    def autonomousInit(self) -> None:
        self.left.set_position(0)
        self.right.getEncoder().setPosition(0)
        self.pigeon.set_yaw(0)
        self.timer.restart()

    def drive(self, left: float, right: float) -> None:
        self.left.set_control(controls.DutyCycleOut(left))
        self.right.set(right)

    def log(self, phase: str) -> None:
        if phase in self.logged:
            return
        self.logged.add(phase)
        record = {
            "phase": phase,
            "left_m": self.left.get_position().value / GEARING * WHEEL_CIRCUMFERENCE,
            "right_m": self.right.getEncoder().getPosition() / GEARING * WHEEL_CIRCUMFERENCE,
            "yaw_deg": self.pigeon.get_yaw().value,
            "battery_v": wpilib.RobotController.getBatteryVoltage(),
        }
        with open(os.environ["VENDORBOT_LOG"], "a") as fh:
            fh.write(json.dumps(record) + "\n")

    def autonomousPeriodic(self) -> None:
        t = self.timer.get()
        if t < 1.0:
            self.drive(0.5, 0.5)
        elif t < 2.0:
            self.drive(0.0, 0.0)
        elif t < 3.0:
            self.log("straight")
            self.drive(-0.4, 0.4)
        else:
            self.drive(0.0, 0.0)
            if t > 4.0:
                self.log("spin")


assert phoenix6  # imported for its side effects in simulation
