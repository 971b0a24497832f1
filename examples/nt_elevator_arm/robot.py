"""A RobotPy program that closes position loops on simserver's elevator and arm over NT.

    python -m robotpy sim                          # in this folder
    simserver run simserver.toml                   # in another terminal

Enable Autonomous: the elevator goes to 0.8 m and the arm to 45 degrees with simple P loops on
the simulated encoders, then the grabber closes. Watch SmartDashboard/lift and SmartDashboard/arm
(Mechanism2d) and the battery voltage sag while they move.
"""

import ntcore
import wpilib

FAST = ntcore.PubSubOptions(periodic=0.001)


class Robot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        nt = ntcore.NetworkTableInstance.getDefault()
        self.lift = nt.getDoubleTopic("/simserver/motors/lift").publish(FAST)
        self.shoulder = nt.getDoubleTopic("/simserver/motors/shoulder").publish(FAST)
        self.grab = nt.getBooleanTopic("/simserver/solenoids/grab").publish(FAST)
        self.height = nt.getDoubleTopic("/simserver/encoders/lift/position").subscribe(0.0, FAST)
        self.arm_angle = nt.getDoubleTopic("/simserver/encoders/arm/position").subscribe(0.0, FAST)
        self.bottom = nt.getBooleanTopic("/simserver/switches/lift_bottom").subscribe(True, FAST)
        self.volts = nt.getDoubleTopic("/simserver/battery/voltage").subscribe(0.0, FAST)

    def robotPeriodic(self) -> None:
        wpilib.SmartDashboard.putNumber("lift height (m)", self.height.get())
        wpilib.SmartDashboard.putNumber("arm angle (deg)", self._arm_degrees())
        wpilib.SmartDashboard.putBoolean("lift at bottom", self.bottom.get())
        wpilib.SmartDashboard.putNumber("battery (V)", self.volts.get())

    def _arm_degrees(self) -> float:
        # The absolute encoder reads 0..360; the arm works between -80 and 110 degrees.
        angle = self.arm_angle.get()
        return angle - 360.0 if angle > 180.0 else angle

    def autonomousPeriodic(self) -> None:
        lift_error = 0.8 - self.height.get()
        arm_error = 45.0 - self._arm_degrees()
        self.lift.set(max(-1.0, min(1.0, 4.0 * lift_error + 0.1)))
        self.shoulder.set(max(-1.0, min(1.0, 0.05 * arm_error + 0.05)))
        self.grab.set(abs(lift_error) < 0.05 and abs(arm_error) < 5.0)

    def disabledInit(self) -> None:
        self.lift.set(0.0)
        self.shoulder.set(0.0)
