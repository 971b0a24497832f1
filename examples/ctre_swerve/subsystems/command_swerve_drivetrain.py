"""The drivetrain subsystem in the shape Tuner X generates it: CTRE's SwerveDrivetrain as a
commands-v2 subsystem, with CTRE's own simulation run from a 4 ms Notifier."""

from __future__ import annotations

from collections.abc import Callable

from commands2 import Command, Subsystem
from generated.tuner_constants import TunerSwerveDrivetrain
from phoenix6 import swerve, units, utils
from wpilib import Notifier, RobotController


class CommandSwerveDrivetrain(Subsystem, TunerSwerveDrivetrain):
    """Swerve drivetrain subsystem (CTRE's odometry runs on its own 250 Hz thread)."""

    _SIM_LOOP_PERIOD: units.second = 0.004

    def __init__(self, drivetrain_constants: swerve.SwerveDrivetrainConstants,
                 modules: list[swerve.SwerveModuleConstants]):
        Subsystem.__init__(self)
        TunerSwerveDrivetrain.__init__(self, drivetrain_constants, modules)
        self._sim_notifier: Notifier | None = None
        self._last_sim_time: units.second = 0.0
        if utils.is_simulation():
            self._start_sim_thread()

    def apply_request(self, request: Callable[[], swerve.requests.SwerveRequest]) -> Command:
        """A command that applies the request ``request()`` returns, every loop."""
        return self.run(lambda: self.set_control(request()))

    def _start_sim_thread(self) -> None:
        def _sim_periodic() -> None:
            now = utils.get_current_time_seconds()
            dt = now - self._last_sim_time
            self._last_sim_time = now
            self.update_sim_state(dt, RobotController.getBatteryVoltage())

        self._last_sim_time = utils.get_current_time_seconds()
        self._sim_notifier = Notifier(_sim_periodic)
        self._sim_notifier.startPeriodic(self._SIM_LOOP_PERIOD)
