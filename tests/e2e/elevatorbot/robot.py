"""ElevatorSimulation as in robotpy/examples (a P loop to 0.762 m on four 775pro, its own
physics.py with WPILib's ElevatorSim on the same encoder), plus one line per enabled period of
what robot code reads, for the tests: robot time (s) and encoder distance (m), to the file
$MECHBOT_LOG. Held in teleop with the trigger (joystick 0, button 1) pressed."""

import json
import math
import os

import wpilib
import wpimath.controller

K_P = 5.0
SETPOINT_M = 0.762
DRUM_RADIUS_M = 0.0508
DIST_PER_PULSE = 2.0 * math.pi * DRUM_RADIUS_M / 4096.0


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.controller = wpimath.controller.PIDController(K_P, 0, 0)
        self.encoder = wpilib.Encoder(0, 1)
        self.motor = wpilib.PWMSparkMax(0)
        self.joystick = wpilib.Joystick(0)
        self.encoder.setDistancePerPulse(DIST_PER_PULSE)
        path = os.environ.get("MECHBOT_LOG")
        self.log = open(path, "w", encoding="utf-8") if path else None  # noqa: SIM115

    def robotPeriodic(self) -> None:
        if self.log is not None and wpilib.DriverStation.isEnabled():
            self.log.write(json.dumps({"t": wpilib.Timer.getFPGATimestamp(),
                                       "x": self.encoder.getDistance()}) + "\n")
            self.log.flush()

    def teleopPeriodic(self) -> None:
        if self.joystick.getTrigger():
            self.motor.setVoltage(self.controller.calculate(self.encoder.getDistance(),
                                                            SETPOINT_M))
        else:
            self.motor.set(0.0)

    def disabledInit(self) -> None:
        self.motor.set(0.0)
