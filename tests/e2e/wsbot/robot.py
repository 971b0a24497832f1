"""A test robot for the halsim_ws client: PWM drive, one quadrature encoder, an ADXRS450 gyro.
Autonomous: spin 1 s, rest; log the gyro and reset it; spin 1 s more, rest; log again. Each log
line (JSON) goes to the file named by $WSBOT_LOG."""

import json
import os

import wpilib


class Robot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.left = wpilib.PWMSparkMax(0)
        self.right = wpilib.PWMSparkMax(1)
        self.right.setInverted(True)
        self.encoder = wpilib.Encoder(0, 1)
        self.gyro = wpilib.ADXRS450_Gyro()
        self.timer = wpilib.Timer()
        self.logged: set[str] = set()

    def robotPeriodic(self) -> None:
        wpilib.SmartDashboard.putNumber("gyro", self.gyro.getAngle())

    def autonomousInit(self) -> None:
        self.timer.restart()

    def log(self, phase: str) -> None:
        if phase in self.logged:
            return
        self.logged.add(phase)
        record = {"phase": phase, "gyro_deg": self.gyro.getAngle(),
                  "rotation_deg": self.gyro.getRotation2d().degrees(),
                  "left_counts": self.encoder.get()}
        with open(os.environ["WSBOT_LOG"], "a") as fh:
            fh.write(json.dumps(record) + "\n")

    def autonomousPeriodic(self) -> None:
        t = self.timer.get()
        turn = 0.4 if t < 1.0 or 2.0 <= t < 3.0 else 0.0
        self.left.set(-turn)
        self.right.set(turn)
        if 1.8 <= t < 2.0 and "first" not in self.logged:
            self.log("first")
            self.gyro.reset()
        if t >= 3.8:
            self.log("second")
