"""The drivetrain component: duty-cycle requests to both Talon FX every loop."""

import json
import math
import os

import wpilib
from magicbot import feedback
from phoenix6 import controls
from phoenix6.hardware import Pigeon2, TalonFX

GEARING = 10.71
WHEEL_CIRCUMFERENCE = math.pi * 0.1524


class Drivetrain:
    left: TalonFX
    right: TalonFX
    pigeon: Pigeon2

    def setup(self) -> None:
        self.left_out = self.right_out = 0.0
        self.request = controls.DutyCycleOut(0)

    def on_enable(self) -> None:
        self.left.set_position(0)
        self.right.set_position(0)
        self.pigeon.set_yaw(0)

    def drive(self, left: float, right: float) -> None:
        self.left_out, self.right_out = left, right

    @feedback
    def yaw(self) -> float:
        return self.pigeon.get_yaw().value

    def log(self, phase: str) -> None:
        record = {
            "phase": phase,
            "left_m": self.left.get_position().value / GEARING * WHEEL_CIRCUMFERENCE,
            "right_m": self.right.get_position().value / GEARING * WHEEL_CIRCUMFERENCE,
            "yaw_deg": self.pigeon.get_yaw().value,
            "battery_v": wpilib.RobotController.getBatteryVoltage(),
        }
        with open(os.environ["MAGICBOT_LOG"], "a") as fh:
            fh.write(json.dumps(record) + "\n")

    def execute(self) -> None:
        self.left.set_control(self.request.with_output(self.left_out))
        self.right.set_control(self.request.with_output(self.right_out))
        self.left_out = self.right_out = 0.0
