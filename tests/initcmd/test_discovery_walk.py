"""Discovery's object walk (simserver.bridge.discovery.walk): which of the robot's objects it
reaches and the attribute paths it names them by. Plain Python stand-ins, no HAL."""

from __future__ import annotations

import sys

from simserver.bridge.discovery import program_modules, walk


class Encoder:  # stands in for wpilib.Encoder (matched by class name)
    pass


class PWMMotorController:
    pass


class PWMSparkMax(PWMMotorController):
    pass


class Module:
    def __init__(self) -> None:
        self.driveMotor = PWMSparkMax()
        self.driveEncoder = Encoder()
        self.gains = {"kP": 1.0}


class Robot:
    def __init__(self) -> None:
        self.swerve = [Module(), Module()]
        self.byName = {"intake": PWMSparkMax()}
        self.me = self  # a cycle
        self.label = "robot"


def test_walk_names_devices_by_attribute_path_through_lists_dicts_and_cycles():
    found = dict(walk(Robot(), "robot"))
    assert set(found) == {"robot.swerve[0].driveMotor", "robot.swerve[0].driveEncoder",
                          "robot.swerve[1].driveMotor", "robot.swerve[1].driveEncoder",
                          "robot.byName['intake']"}
    assert isinstance(found["robot.byName['intake']"], PWMSparkMax)


def test_walk_stops_at_its_depth():
    assert list(walk(Robot(), "robot", depth=1)) == []


def test_program_modules_are_the_projects_own_imported_files(tmp_path, monkeypatch):
    # Teams keep kinematics in constants.py as a module global, out of the robot's reach.
    (tmp_path / "teamconstants_probe.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import teamconstants_probe  # noqa: F401

    try:
        names = [name for name, _ in program_modules(str(tmp_path))]
        assert names == ["teamconstants_probe"]
        assert "pytest" not in [name for name, _ in program_modules(str(tmp_path))]
    finally:
        sys.modules.pop("teamconstants_probe", None)
