"""A robot program whose robotInit fails (for `simserver init`'s error message)."""

import wpilib


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.motor = wpilib.PWMSparkMax(0)
        raise RuntimeError("the intake is not plugged in")
