"""A 2026 REBUILT scoring autonomous: collect FUEL from the blue DEPOT, turn to the HUB, shoot.

A kitbot-style differential drive with an intake at the front, an indexer and a flywheel
shooter, a beam break that sees FUEL in the indexer, drive encoders, a flywheel encoder and an
analog gyro (wiring in constants.py). Autonomous is a small state machine:

1. drive forward into the DEPOT with the intake running (heading held on the gyro);
2. back out, stop the intake;
3. turn in place to face the HUB (from where odometry puts the robot);
4. hold the flywheel at the shot speed and the heading; while both are on target, run the
   indexer;
5. once the beam break has stayed clear for a second, stop.

Teleop: arcade drive on an Xbox controller; right bumper intakes, A spins the flywheel,
B feeds.
"""

import math

import constants
import wpilib
import wpilib.drive
from wpimath.geometry import Pose2d, Rotation2d
from wpimath.kinematics import DifferentialDriveOdometry


def wrap_deg(angle: float) -> float:
    """An angle in degrees into (-180, 180]."""
    return -((-angle + 180.0) % 360.0 - 180.0)


class Robot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.left = wpilib.PWMSparkMax(constants.LEFT_LEADER_PWM)
        self.left.addFollower(wpilib.PWMSparkMax(constants.LEFT_FOLLOWER_PWM))
        self.right = wpilib.PWMSparkMax(constants.RIGHT_LEADER_PWM)
        self.right.addFollower(wpilib.PWMSparkMax(constants.RIGHT_FOLLOWER_PWM))
        self.right.setInverted(True)
        self.drive = wpilib.drive.DifferentialDrive(self.left, self.right)
        self.intake = wpilib.PWMSparkMax(constants.INTAKE_PWM)
        self.indexer = wpilib.PWMSparkMax(constants.INDEXER_PWM)
        self.flywheel = wpilib.PWMSparkMax(constants.FLYWHEEL_PWM)

        self.left_encoder = wpilib.Encoder(*constants.LEFT_ENCODER_DIO)
        self.right_encoder = wpilib.Encoder(*constants.RIGHT_ENCODER_DIO)
        for encoder in (self.left_encoder, self.right_encoder):
            encoder.setDistancePerPulse(constants.DISTANCE_PER_PULSE_M)
        self.flywheel_encoder = wpilib.Encoder(*constants.FLYWHEEL_ENCODER_DIO)
        self.flywheel_encoder.setDistancePerPulse(1.0 / constants.FLYWHEEL_COUNTS_PER_REV)
        self.beam = wpilib.DigitalInput(constants.BEAM_BREAK_DIO)
        self.gyro = wpilib.AnalogGyro(constants.GYRO_ANALOG)
        self.controller = wpilib.XboxController(0)
        self.timer = wpilib.Timer()
        self.state = "idle"
        self.odometry = DifferentialDriveOdometry(Rotation2d(), 0.0, 0.0)
        self.field = wpilib.Field2d()
        wpilib.SmartDashboard.putData("Field", self.field)

    # --- sensors ----------------------------------------------------------------------------

    def heading(self) -> float:
        """Field heading, degrees CCW (the gyro reads clockwise from its zero at the start)."""
        return wrap_deg(constants.START_HEADING_DEG - self.gyro.getAngle())

    def distance(self) -> float:
        """Mean wheel travel since the encoders were reset, m."""
        return (self.left_encoder.getDistance() + self.right_encoder.getDistance()) / 2.0

    def fuel_in_indexer(self) -> bool:
        return not self.beam.get()

    def robotPeriodic(self) -> None:
        self.odometry.update(Rotation2d.fromDegrees(self.heading()),
                             self.left_encoder.getDistance(), self.right_encoder.getDistance())
        self.field.setRobotPose(self.odometry.getPose())
        wpilib.SmartDashboard.putString("Auto state", self.state)
        wpilib.SmartDashboard.putNumber("Flywheel (rps)", self.flywheel_encoder.getRate())
        wpilib.SmartDashboard.putBoolean("FUEL in indexer", self.fuel_in_indexer())

    # --- actuators --------------------------------------------------------------------------

    def hold_flywheel(self, rps: float) -> bool:
        """Drive the flywheel toward ``rps`` (feedforward plus proportional); True when within
        tolerance."""
        rate = self.flywheel_encoder.getRate()
        duty = rps / constants.FLYWHEEL_FREE_RPS + 0.05 * (rps - rate)
        self.flywheel.set(max(-1.0, min(1.0, duty)))
        return abs(rate - rps) < constants.SHOT_TOLERANCE_RPS

    def aim(self) -> bool:
        """Turn in place toward the HUB from where odometry says the robot is (PD on the
        gyro); True when on target and still."""
        pose = self.odometry.getPose()
        target = math.degrees(
            math.atan2(constants.HUB_Y_M - pose.Y(), constants.HUB_X_M - pose.X()))
        error = wrap_deg(target - self.heading())
        rate = -self.gyro.getRate()  # deg/s, CCW positive
        # PD plus a static term that overcomes the wheels' scrub when turning in place.
        turn = 0.015 * error - 0.002 * rate
        if abs(error) > 1.0:
            turn += math.copysign(constants.TURN_KS, error)
        self.drive.arcadeDrive(0.0, max(-0.5, min(0.5, turn)), False)
        return abs(error) < constants.AIM_TOLERANCE_DEG and abs(rate) < 5.0

    def drive_straight(self, speed: float, heading: float) -> None:
        turn = 0.03 * wrap_deg(heading - self.heading())
        self.drive.arcadeDrive(speed, max(-0.5, min(0.5, turn)), False)

    # --- autonomous -------------------------------------------------------------------------

    def autonomousInit(self) -> None:
        self.left_encoder.reset()
        self.right_encoder.reset()
        self.gyro.reset()
        self.odometry.resetPosition(
            Rotation2d.fromDegrees(self.heading()), 0.0, 0.0,
            Pose2d(constants.START_X_M, constants.START_Y_M,
                   Rotation2d.fromDegrees(constants.START_HEADING_DEG)))
        self.state = "collect"
        self.timer.restart()

    def autonomousPeriodic(self) -> None:
        if self.state == "collect":
            self.intake.set(0.8)
            self.drive_straight(0.45, constants.START_HEADING_DEG)
            if self.distance() >= constants.INTAKE_DRIVE_M:
                self.state = "back off"
        elif self.state == "back off":
            self.drive_straight(-0.45, constants.START_HEADING_DEG)
            if self.distance() <= constants.INTAKE_DRIVE_M - constants.BACK_OFF_M:
                self.intake.set(0.0)
                self.state = "turn"
        elif self.state == "turn":
            aimed = self.aim()
            self.hold_flywheel(constants.SHOT_RPS)
            if aimed:
                self.state = "shoot"
                self.timer.restart()
        elif self.state == "shoot":
            aimed = self.aim()
            ready = self.hold_flywheel(constants.SHOT_RPS)
            self.indexer.set(0.8 if ready and aimed else 0.0)
            if self.fuel_in_indexer():
                self.timer.restart()
            elif self.timer.hasElapsed(1.0):
                self.state = "done"
        else:
            self.drive.stopMotor()
            self.flywheel.set(0.0)
            self.indexer.set(0.0)

    # --- teleop -----------------------------------------------------------------------------

    def teleopPeriodic(self) -> None:
        c = self.controller
        self.drive.arcadeDrive(-c.getLeftY(), -c.getRightX())
        self.intake.set(0.8 if c.getRightBumper() else 0.0)
        if c.getAButton():
            self.hold_flywheel(constants.SHOT_RPS)
        else:
            self.flywheel.set(0.0)
        self.indexer.set(0.8 if c.getBButton() else 0.0)

    def disabledInit(self) -> None:
        self.state = "idle"
