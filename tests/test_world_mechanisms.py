"""Mechanisms in the world: stepped every substep, reset with the world, isolated when they fail,
and validated like built-in sections."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest

from simserver.config import fields
from simserver.config.loader import ConfigError, default_config_text, loads
from simserver.config.registry import registry
from simserver.models.api import InputSpec, ModelType, OutputSpec
from simserver.world import ModelBuildError, World


@dataclass(frozen=True)
class CounterConfig:
    motor: str = fields.text(None, "Motor whose duty is integrated.")
    gain: float = fields.number(1.0, "Scale.")


class Counter:
    """Counts substeps and integrates the motor's duty: a model whose effect is exactly known."""

    def __init__(self, cfg: CounterConfig, explode_at: int | None = None):
        self.cfg = cfg
        self.explode_at = explode_at
        self.reset()

    def reset(self) -> None:
        self.steps = 0
        self.integral = 0.0

    def step(self, dt: float, robot) -> None:
        self.steps += 1
        if self.explode_at is not None and self.steps >= self.explode_at:
            raise RuntimeError("plugin bug")
        self.integral += self.cfg.gain * robot.motor(self.cfg.motor) * dt

    def outputs(self) -> dict[str, object]:
        return {"steps": self.steps, "integral": self.integral}


def _type(name: str, explode_at: int | None = None) -> ModelType:
    return ModelType(
        name=name, config=CounterConfig, doc="test counter",
        create=lambda _n, c, _cfg: Counter(c, explode_at),
        inputs=(InputSpec("motor", "motor"),),
        outputs=(OutputSpec("steps", "int", "count", "substeps"),
                 OutputSpec("integral", "double", "s", "∫ duty dt")),
    )


@pytest.fixture
def registered():
    reg = registry()
    for mt in (_type("counter"), _type("exploder", explode_at=3)):
        reg.add(mt, "tests")
    yield reg
    for name in ("counter", "exploder"):
        reg.types["mechanism"].pop(name, None)


def _config(extra: str) -> str:
    return default_config_text() + "\n[motors.spin]\ntype = \"NEO\"\n" + extra


def test_mechanism_is_stepped_every_substep_and_reset_with_the_world(registered):
    cfg = loads(_config('[mechanisms.c]\ntype = "counter"\nmotor = "spin"\ngain = 2.0\n'))
    world = World(cfg)
    world.set_motor("spin", 0.5)
    world.step(0.02)  # 4 substeps of 5 ms
    out = world.snapshot().mechanisms["c"]
    assert out["steps"] == 4
    assert out["integral"] == pytest.approx(2.0 * 0.5 * 0.02, rel=1e-12)
    world.reset()
    assert world.snapshot().mechanisms["c"] == {"steps": 0, "integral": 0.0}


def test_a_mechanism_that_raises_is_disabled_and_the_world_keeps_running(registered, caplog):
    cfg = loads(_config('[mechanisms.bad]\ntype = "exploder"\nmotor = "spin"\n'
                        '[motors.spin2]\ntype = "NEO"\n'
                        '[mechanisms.good]\ntype = "counter"\nmotor = "spin2"\n'))
    world = World(cfg)
    world.set_motor("left", 1.0)
    world.set_motor("right", 1.0)
    with caplog.at_level(logging.ERROR, logger="simserver.world"):
        for _ in range(10):
            world.step(0.01)
    assert "bad" in world.failed and "plugin bug" in world.failed["bad"]
    assert world.snapshot().mechanisms["good"]["steps"] == 20, "others keep stepping"
    assert world.snapshot().x > 2.0, "the robot keeps driving"
    assert sum("'bad'" in r.getMessage() for r in caplog.records) == 1, "logged once"
    world.reset()
    assert world.failed == {}, "a reset gives it another chance"


def test_mechanism_inputs_must_name_existing_motors(registered):
    with pytest.raises(ConfigError) as exc:
        loads(_config('[mechanisms.c]\ntype = "counter"\nmotor = "spni"\n'), source="r.toml")
    assert "r.toml: mechanisms.c.motor: no motor named 'spni' in [motors]; did you mean " \
           "'spin'?" in str(exc.value)


def test_a_motor_cannot_drive_two_things(registered):
    with pytest.raises(ConfigError) as exc:
        loads(_config('[mechanisms.c]\ntype = "counter"\nmotor = "left"\n'))
    assert "mechanisms.c.motor: motor 'left' already drives drivetrain.left" in str(exc.value)


def test_mechanism_keys_are_validated_with_did_you_mean(registered):
    with pytest.raises(ConfigError) as exc:
        loads(_config('[mechanisms.c]\ntype = "counter"\nmotor = "spin"\ngian = 2\n'))
    assert "mechanisms.c.gian: unknown key; did you mean 'gain'?" in str(exc.value)


def test_unknown_mechanism_type_suggests_installed_types(registered):
    with pytest.raises(ConfigError) as exc:
        loads(_config('[mechanisms.c]\ntype = "countr"\nmotor = "spin"\n'))
    assert "mechanisms.c.type: unknown mechanism model type 'countr'; did you mean " \
           "'counter'?" in str(exc.value)


def test_mechanism_without_type_is_an_error(registered):
    with pytest.raises(ConfigError) as exc:
        loads(_config('[mechanisms.c]\nmotor = "spin"\n'))
    assert "mechanisms.c.type: missing required key" in str(exc.value)


def test_a_model_type_that_builds_nothing_is_a_config_error_not_a_crash(tmp_path):
    from click.testing import CliRunner

    from simserver.cli import main

    broken = ModelType(name="hollow", config=CounterConfig, doc="returns None",
                       create=lambda *_: None, inputs=(InputSpec("motor", "motor"),))
    reg = registry()
    reg.add(broken, "tests")
    try:
        path = tmp_path / "robot.toml"
        path.write_text(_config('[mechanisms.h]\ntype = "hollow"\nmotor = "spin"\n'))
        with pytest.raises(ModelBuildError) as exc:
            World(loads(path.read_text()))
        assert exc.value.path == "mechanisms.h"
        assert "built a NoneType without reset, step, outputs()" in exc.value.message
        # `run` fails while building the world, before any NetworkTables connection is made.
        for args in (["check", str(path)], ["run", str(path), "--fast", "--duration", "1"]):
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 2, (args, result.output)
            assert "mechanisms.h: model type 'hollow' (from tests) built a NoneType" in \
                result.stderr
    finally:
        reg.types["mechanism"].pop("hollow", None)


def test_a_mechanism_can_read_a_cylinder_extension(registered):
    seen = []

    class Reader:
        def reset(self):
            seen.clear()

        def step(self, dt, robot):
            seen.append(robot.cylinder("grabber"))

        def outputs(self):
            return {}

    reg = registry()
    reg.add(ModelType(name="cylreader", config=CounterConfig, doc="reads a cylinder",
                      create=lambda *_: Reader(), inputs=(InputSpec("motor", "motor"),)), "tests")
    try:
        cfg = loads(_config('[mechanisms.r]\ntype = "cylreader"\nmotor = "spin"\n'
                            '[pneumatics]\n[solenoids.grab]\n'
                            '[cylinders.grabber]\nsolenoid = "grab"\nbore = "1 in"\n'
                            'stroke = "4 in"\nextend_time = "0.1 s"\n'))
        world = World(cfg)
        world.step(0.05)
        assert seen[-1] == 0.0
        world.set_solenoid("grab", True)
        world.step(0.05)  # half of the 0.1 s stroke
        assert seen[-1] == pytest.approx(0.5, abs=1e-9)
        world.step(0.1)
        assert seen[-1] == 1.0
    finally:
        reg.types["mechanism"].pop("cylreader", None)


@pytest.mark.parametrize(("create", "expected"), [
    (lambda *_: None, "built a NoneType without mass, moment_of_inertia, reset, pose"),
    (lambda *_: 1 / 0, "failed to build: ZeroDivisionError: division by zero"),
])
def test_a_drivetrain_type_that_builds_no_drivetrain_is_a_config_error(tmp_path, create,
                                                                      expected):
    """A plugin drivetrain whose create() returns something without the Drivetrain members,
    or raises, stops `check` and `run` with exit 2 naming [drivetrain], not a traceback."""
    from click.testing import CliRunner

    from simserver.cli import main
    from simserver.config.model import DrivetrainConfig
    from simserver.world.drivetrains.differential import DIFFERENTIAL

    reg = registry()
    reg.add(ModelType(name="flat", role="drivetrain", config=DrivetrainConfig,
                      doc="builds no drivetrain", create=create, motors=DIFFERENTIAL.motors),
            "tests")
    try:
        path = tmp_path / "robot.toml"
        path.write_text(default_config_text().replace("[drivetrain]\n",
                                                      '[drivetrain]\ntype = "flat"\n'))
        with pytest.raises(ModelBuildError) as exc:
            World(loads(path.read_text()))
        assert exc.value.path == "drivetrain"
        assert expected in exc.value.message
        for args in (["check", str(path)], ["run", str(path), "--fast", "--duration", "1"]):
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 2, (args, result.output)
            assert "drivetrain: model type 'flat' (from tests)" in result.stderr
    finally:
        reg.types["drivetrain"].pop("flat", None)
