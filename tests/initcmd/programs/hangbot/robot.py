"""A robot program whose robotInit never returns (for `simserver init --timeout`)."""

import time

import wpilib


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        print("waiting for a camera that never comes", flush=True)
        while True:
            time.sleep(0.1)
