"""ArmSimulation as in robotpy/examples (a P loop on a 775pro arm, 75° setpoint, its own
physics.py with WPILib's SingleJointedArmSim on the same encoder), plus one line per period
of what robot code believes, for the tests: robot time (s) and encoder angle (deg), to the
file $MECHBOT_LOG. Held in teleop with the trigger (joystick 0, button 1) pressed."""

import json
import math
import os

import wpilib
from wpimath import units
from wpimath.controller import PIDController

K_P = 50.0
SETPOINT_DEG = 75.0
DIST_PER_PULSE = 2.0 * math.pi / 4096


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.controller = PIDController(K_P, 0, 0)
        self.encoder = wpilib.Encoder(0, 1)
        self.motor = wpilib.PWMSparkMax(0)
        self.encoder.setDistancePerPulse(DIST_PER_PULSE)
        self.joystick = wpilib.Joystick(0)
        path = os.environ.get("MECHBOT_LOG")
        self.log = open(path, "w", encoding="utf-8") if path else None  # noqa: SIM115

    def robotPeriodic(self) -> None:
        if self.log is not None and wpilib.DriverStation.isEnabled():
            self.log.write(json.dumps({"t": wpilib.Timer.getFPGATimestamp(),
                                       "deg": math.degrees(self.encoder.getDistance())}) + "\n")
            self.log.flush()

    def teleopPeriodic(self) -> None:
        if self.joystick.getTrigger():
            out = self.controller.calculate(self.encoder.getDistance(),
                                            units.degreesToRadians(SETPOINT_DEG))
            self.motor.setVoltage(out)
        else:
            self.motor.set(0.0)

    def disabledInit(self) -> None:
        self.motor.set(0.0)
