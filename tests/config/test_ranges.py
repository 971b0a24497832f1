"""The declared ranges themselves: every physical key of the built-in schema has a finite one,
its usual range lies inside it, and every default is inside both (so a file that leaves a key
out never gets a warning for it)."""

from __future__ import annotations

import dataclasses
import math
import typing

import pytest

from simserver.config.fields import Spec, spec_of
from simserver.config.model import Config
from simserver.config.registry import BUILTIN, registry
from simserver.units import to_si

PHYSICAL = ("quantity", "number", "position", "points")
NOT_PHYSICAL = {"sim.seed"}  # any non-negative integer seeds the generator


def specs(cls: type, prefix: str = "") -> list[tuple[str, Spec]]:
    """(key path, Spec) of every key of ``cls`` and its sections, tables and built-in models."""
    out: list[tuple[str, Spec]] = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        spec, path = spec_of(f), f"{prefix}{f.name}"
        tp = hints[f.name]
        if isinstance(tp, type(int | None)):
            tp = next(a for a in typing.get_args(tp) if a is not type(None))
        if spec.kind == "section":
            out += specs(tp, f"{path}.")
        elif spec.kind == "table":
            out += specs(typing.get_args(tp)[1], f"{path}.<name>.")
        elif spec.kind in ("model", "models"):
            for name in registry().names(spec.choices[0]):
                mt = registry().get(spec.choices[0], name)
                if mt is not None and mt.source == BUILTIN:
                    out += specs(mt.config, f"{path}.<{name}>.")
        elif spec.kind != "derived":
            out.append((path, spec))
    return out


ALL = specs(Config)


def test_the_walk_sees_every_section():
    paths = {p for p, _ in ALL}
    for key in ("robot.mass", "drivetrain.<swerve>.modules.<name>.x", "mechanisms.<arm>.length",
                "cameras.<name>.intrinsics.fx", "vision.targets.<name>.max_distance"):
        assert key in paths


@pytest.mark.parametrize(("path", "spec"), [
    (p, s) for p, s in ALL
    if (s.kind in PHYSICAL or s.kind == "integer") and p not in NOT_PHYSICAL])
def test_every_physical_key_has_a_finite_range(path, spec):
    assert spec.minimum is not None and spec.maximum is not None, path
    assert math.isfinite(spec.minimum) and math.isfinite(spec.maximum), path
    assert spec.minimum < spec.maximum, path


@pytest.mark.parametrize(("path", "spec"), [
    (p, s) for p, s in ALL if s.usual_minimum is not None or s.usual_maximum is not None])
def test_a_usual_range_lies_inside_the_allowed_one(path, spec):
    for bound in (spec.usual_minimum, spec.usual_maximum):
        if bound is not None:
            assert not spec.refused(bound), path
    if spec.usual_minimum is not None and spec.usual_maximum is not None:
        assert spec.usual_minimum < spec.usual_maximum, path


@pytest.mark.parametrize(("path", "spec"), [
    (p, s) for p, s in ALL if s.kind in ("quantity", "number") and s.default is not None])
def test_every_default_is_allowed_and_usual(path, spec):
    value = to_si(spec.default, spec.dimension) if spec.kind == "quantity" else spec.default
    assert not spec.refused(value), (path, spec.default)
    assert not spec.unusual(value), (path, spec.default)
