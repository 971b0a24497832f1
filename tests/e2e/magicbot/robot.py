"""A magicbot robot on Phoenix 6 devices (issue 18): two Talon FX driving a kitbot chassis and
a Pigeon 2. magicbot runs its own loop (robotpy_ext's NotifierDelay, a new HAL notifier at
each mode change) and Phoenix 6 its enable feed on a wpilib.Notifier thread. Autonomous (the
state machine in autonomous/) drives straight, rests, spins and rests; the drivetrain
component appends what its sensors say to the JSON-lines file $MAGICBOT_LOG."""

import magicbot
from components.drivetrain import Drivetrain
from phoenix6.hardware import Pigeon2, TalonFX


class MyRobot(magicbot.MagicRobot):
    drivetrain: Drivetrain

    def createObjects(self) -> None:
        self.drivetrain_left = TalonFX(1)
        self.drivetrain_right = TalonFX(2)
        self.drivetrain_pigeon = Pigeon2(0)

    def teleopPeriodic(self) -> None:
        pass
