"""The model registry: built-in types found through entry points, declaration checks, conflicts.

Plugins discovered through real entry points (and their failure modes) are tested end to end in
tests/test_plugins_tutorial.py; here the registry is exercised in-process.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

import pytest

from simserver.config import fields
from simserver.config.fields import spec_of
from simserver.config.model import DrivetrainConfig
from simserver.config.registry import BUILTIN, GROUP, Registry, registry, validate_type
from simserver.models.api import OUTPUT_TYPES, InputSpec, ModelType, OutputSpec
from simserver.world.drivetrains.differential import DIFFERENTIAL


@dataclass(frozen=True)
class GoodConfig:
    motor: str = fields.text(None, "Motor that drives it.")
    speed: float = fields.quantity("1 m/s", "speed", "Speed at full duty.", positive=True)


@dataclass(frozen=True)
class NoSchemaConfig:
    motor: str = fields.text(None, "Motor that drives it.")
    gain: float = 1.0  # a plain dataclass field: no simserver.config.fields helper


@dataclass(frozen=True)
class TypeFieldConfig:
    type: str = fields.text("roller", "Clashes with the key that selects the model type.")


class PlainConfig:
    motor = "roller"


def _create(name: str, config: Any, cfg: Any) -> None:
    return None


GOOD = ModelType(
    name="roller", config=GoodConfig, doc="A roller.", create=_create,
    inputs=[InputSpec("motor", "motor")],
    outputs=[OutputSpec("speed", "double", "m/s", "Surface speed.")],
)


# --- built-in types come through the same entry-point group as plugins -----------------------


def test_the_builtin_differential_is_declared_as_an_entry_point():
    eps = {ep.name: ep for ep in entry_points(group=GROUP)}
    assert "differential" in eps, "is simserver installed (pip install -e .)?"
    ep = eps["differential"]
    assert ep.value == "simserver.world.drivetrains.differential:DIFFERENTIAL"
    assert ep.dist is not None and ep.dist.name == BUILTIN


def test_the_registry_finds_differential_with_source_simserver():
    reg = registry()
    mt = reg.get("drivetrain", "differential")
    assert mt is not None
    assert mt.source == BUILTIN
    assert mt.config is DrivetrainConfig
    assert mt.create is DIFFERENTIAL.create
    assert "differential" in reg.names("drivetrain")
    assert reg.get("mechanism", "differential") is None  # roles are separate namespaces
    assert not [f for f in reg.failures if f.distribution == BUILTIN], reg.failures


def test_the_builtin_declaration_is_valid():
    assert validate_type(DIFFERENTIAL) == ""


# --- validate_type: each declaration mistake, with a message that says what to do -------------


def test_a_correct_declaration_passes():
    assert validate_type(GOOD) == ""


@pytest.mark.parametrize(
    ("mt", "expected"),
    [
        pytest.param(dataclasses.replace(GOOD, config=PlainConfig),
                     "roller: config must be a dataclass class (not an instance) declared with "
                     "simserver.config.fields",
                     id="config-not-a-dataclass"),
        pytest.param(dataclasses.replace(GOOD, config=NoSchemaConfig),
                     "roller: config field 'gain' has no schema; declare it with "
                     "simserver.config.fields",
                     id="field-without-schema"),
        pytest.param(dataclasses.replace(GOOD, config=TypeFieldConfig, inputs=()),
                     "roller: config must not have a field called 'type'",
                     id="field-named-type"),
        pytest.param(dataclasses.replace(GOOD, inputs=[InputSpec("motr", "motor")]),
                     "roller: input 'motr' is not a config field",
                     id="input-key-not-a-field"),
        pytest.param(dataclasses.replace(GOOD, create="roller:create"),
                     "roller: create must be callable",
                     id="create-not-callable"),
        pytest.param(_create,
                     "entry point must be a simserver.models.api.ModelType, got function",
                     id="not-a-model-type"),
        pytest.param(GoodConfig,
                     "entry point must be a simserver.models.api.ModelType, got type",
                     id="a-config-class-instead-of-the-type"),
    ],
)
def test_validate_type_names_each_mistake(mt, expected):
    assert expected in validate_type(mt)


def test_a_bad_output_type_is_refused_when_declared():
    with pytest.raises(ValueError, match=r"OutputSpec.type must be one of .*'double'.*'float'"):
        OutputSpec("speed", "float", "m/s", "Surface speed.")
    assert "float" not in OUTPUT_TYPES


def test_a_bad_input_kind_is_refused_when_declared():
    with pytest.raises(ValueError) as err:
        InputSpec("motor", "servo")
    assert str(err.value) == "InputSpec.kind must be 'motor' or 'solenoid', got 'servo'"


def test_a_bad_role_is_refused_when_declared():
    with pytest.raises(ValueError) as err:
        dataclasses.replace(GOOD, role="arm")
    assert str(err.value) == "role must be 'mechanism' or 'drivetrain', got 'arm'"


def test_inputs_that_are_not_inputspecs_are_reported_not_raised():
    mt = dataclasses.replace(GOOD, inputs=[("motor", "motor")])
    assert "input" in validate_type(mt)


def test_outputs_that_are_not_outputspecs_are_reported():
    mt = dataclasses.replace(GOOD, outputs=[("speed", "double", "m/s", "Surface speed.")])
    assert "output" in validate_type(mt)


# --- Registry.add -----------------------------------------------------------------------------


def test_add_registers_under_role_and_name_with_its_source():
    reg = Registry()
    reg.add(GOOD, "simserver-roller")
    mt = reg.get("mechanism", "roller")
    assert mt is not None and mt.source == "simserver-roller"
    assert reg.names("mechanism") == ["roller"]
    assert reg.failures == []


def test_add_refuses_a_duplicate_name_and_names_the_first_provider():
    reg = Registry()
    reg.add(GOOD, "simserver-roller")
    reg.add(dataclasses.replace(GOOD, doc="Another roller."), "simserver-roller-fork")
    kept = reg.get("mechanism", "roller")
    assert kept is not None and kept.source == "simserver-roller" and kept.doc == "A roller."
    [failure] = reg.failures
    assert failure.entry_point == "roller"
    assert failure.distribution == "simserver-roller-fork"
    assert failure.reason == "mechanism type 'roller' is already provided by simserver-roller"
    assert reg.failure_for("roller") is failure


def test_the_same_name_in_another_role_is_not_a_duplicate():
    reg = Registry()
    reg.add(GOOD, "simserver-roller")
    reg.add(dataclasses.replace(GOOD, role="drivetrain", inputs=(), outputs=()),
            "simserver-roller-drive")
    assert reg.failures == []
    assert reg.get("drivetrain", "roller") is not None
    assert reg.get("mechanism", "roller") is not None


def test_add_records_an_invalid_declaration_as_a_failure_instead_of_registering_it():
    reg = Registry()
    reg.add(dataclasses.replace(GOOD, config=NoSchemaConfig), "simserver-roller")
    assert reg.get("mechanism", "roller") is None
    [failure] = reg.failures
    assert failure.distribution == "simserver-roller"
    assert "config field 'gain' has no schema" in failure.reason


def test_a_dataclass_instance_is_not_a_config_class():
    instance = GOOD.config(**{f.name: None for f in dataclasses.fields(GOOD.config)})
    mt = dataclasses.replace(GOOD, config=instance)
    assert "must be a dataclass class (not an instance)" in validate_type(mt)


def test_an_input_key_must_be_a_text_field():
    fields_ = {f.name: spec_of(f).kind for f in dataclasses.fields(GOOD.config)}
    not_text = next((k for k, kind in fields_.items() if kind != "text"), None)
    assert not_text is not None, "GOOD.config needs a non-text field for this test"
    mt = dataclasses.replace(GOOD, inputs=[InputSpec(not_text, "motor")])
    assert f"input {not_text!r} must be a text field" in validate_type(mt)


def test_output_names_must_be_unique_topic_names():
    out = OutputSpec("speed", "double", "m/s", "x")
    assert "must be unique" in validate_type(dataclasses.replace(GOOD, outputs=[out, out]))
    bad = OutputSpec("sp eed", "double", "m/s", "x")
    assert "must be unique" in validate_type(dataclasses.replace(GOOD, outputs=[bad]))


def test_at_most_one_field2d_output_per_type():
    a = OutputSpec("a", "field2d", "m", "x")
    b = OutputSpec("b", "field2d", "m", "y")
    assert "at most one field2d output" in validate_type(dataclasses.replace(GOOD,
                                                                             outputs=[a, b]))
