"""Drive straight 1 s, rest 1 s, spin 1 s, rest; log at the end of each rest."""

from components.drivetrain import Drivetrain
from magicbot import AutonomousStateMachine, state, timed_state


class DriveAndSpin(AutonomousStateMachine):
    MODE_NAME = "Drive and spin"
    DEFAULT = True

    drivetrain: Drivetrain

    @timed_state(duration=1.0, first=True, next_state="settle")
    def straight(self) -> None:
        self.drivetrain.drive(0.5, 0.5)

    @timed_state(duration=1.0, next_state="spin")
    def settle(self) -> None:
        pass

    @timed_state(duration=1.0, next_state="rest")
    def spin(self, initial_call: bool) -> None:
        if initial_call:
            self.drivetrain.log("straight")
        self.drivetrain.drive(-0.4, 0.4)

    @timed_state(duration=1.0, next_state="finished")
    def rest(self) -> None:
        pass

    @state
    def finished(self, initial_call: bool) -> None:
        if initial_call:
            self.drivetrain.log("spin")
