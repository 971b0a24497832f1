"""A RobotPy program that drives simserver's kitbot over NetworkTables, with no HAL wiring.

Run it in simulation, then simserver beside it:

    python -m robotpy sim          # in this folder (add --nogui to run headless)
    simserver run                  # in another terminal: the bundled kitbot

Enable Autonomous in the sim GUI: the robot drives an arc using its gyro and encoders, and
the SmartDashboard/SimField Field2d shows where it really is.
"""

import ntcore
import wpilib

FAST = ntcore.PubSubOptions(periodic=0.001)


class Robot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        nt = ntcore.NetworkTableInstance.getDefault()
        self.left = nt.getDoubleTopic("/simserver/motors/left").publish(FAST)
        self.right = nt.getDoubleTopic("/simserver/motors/right").publish(FAST)
        self.left_m = nt.getDoubleTopic("/simserver/encoders/left/position").subscribe(0.0, FAST)
        self.right_m = nt.getDoubleTopic("/simserver/encoders/right/position").subscribe(0.0, FAST)
        self.yaw = nt.getDoubleTopic("/simserver/gyro/yaw").subscribe(0.0, FAST)
        self.volts = nt.getDoubleTopic("/simserver/battery/voltage").subscribe(0.0, FAST)

    def robotPeriodic(self) -> None:
        distance = (self.left_m.get() + self.right_m.get()) / 2
        wpilib.SmartDashboard.putNumber("distance (m)", distance)
        wpilib.SmartDashboard.putNumber("heading (deg)", self.yaw.get())
        wpilib.SmartDashboard.putNumber("battery (V)", self.volts.get())

    def autonomousPeriodic(self) -> None:
        # An arc to the left until the gyro reads 90 degrees, then stop.
        if self.yaw.get() < 90.0:
            self.left.set(0.3)
            self.right.set(0.5)
        else:
            self.left.set(0.0)
            self.right.set(0.0)

    def disabledInit(self) -> None:
        self.left.set(0.0)
        self.right.set(0.0)
