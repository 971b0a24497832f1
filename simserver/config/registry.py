"""The model registry: every model type, built-in or plugin, found under the entry-point group
``simserver.models``.

A plugin that fails to import, or whose entry point is not a ModelType, is recorded in
:attr:`Registry.failures` with the reason; it never takes the server down. It is only an error
when a config names its type.
"""

from __future__ import annotations

import dataclasses
import re
import traceback
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import EntryPoint, entry_points

from simserver import DISTRIBUTION
from simserver.config.fields import spec_of
from simserver.models.api import InputSpec, ModelType, OutputSpec

GROUP = "simserver.models"
#: The distribution whose entry points are the built-in model types.
BUILTIN = DISTRIBUTION
_TOPIC_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TOPIC_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)+$")


@dataclass
class Failure:
    """A plugin entry point that could not be loaded."""

    entry_point: str
    distribution: str
    reason: str


@dataclass
class Registry:
    """Model types by role and name, plus the plugins that failed to load."""

    types: dict[str, dict[str, ModelType]] = field(
        default_factory=lambda: {"drivetrain": {}, "mechanism": {}})
    failures: list[Failure] = field(default_factory=list)

    def get(self, role: str, name: str) -> ModelType | None:
        """The type called ``name`` for ``role``, or None."""
        return self.types[role].get(name)

    def names(self, role: str) -> list[str]:
        """Type names for ``role``, sorted."""
        return sorted(self.types[role])

    def failure_for(self, name: str) -> Failure | None:
        """The load failure of an entry point called ``name``, if any."""
        return next((f for f in self.failures if f.entry_point == name), None)

    def add(self, mt: ModelType, source: str) -> None:
        """Register ``mt``; a second type of the same role and name is a failure."""
        problem = validate_type(mt)
        if problem:
            self.failures.append(Failure(mt.name, source, problem))
            return
        if mt.name in self.types[mt.role]:
            other = self.types[mt.role][mt.name].source
            self.failures.append(Failure(mt.name, source,
                                         f"{mt.role} type {mt.name!r} is already provided by "
                                         f"{other}"))
            return
        self.types[mt.role][mt.name] = dataclasses.replace(mt, source=source)


def validate_type(mt: ModelType) -> str:
    """What is wrong with a ModelType declaration, or "" (the plugin author's checker)."""
    if not isinstance(mt, ModelType):
        return f"entry point must be a simserver.models.api.ModelType, got {type(mt).__name__}"
    if not (isinstance(mt.config, type) and dataclasses.is_dataclass(mt.config)):
        return (f"{mt.name}: config must be a dataclass class (not an instance) declared with "
                "simserver.config.fields")
    kinds = {}
    for f in dataclasses.fields(mt.config):
        try:
            kinds[f.name] = spec_of(f).kind
        except KeyError:
            return (f"{mt.name}: config field {f.name!r} has no schema; declare it with "
                    "simserver.config.fields (quantity, number, text, ...)")
    if "type" in kinds:
        return f"{mt.name}: config must not have a field called 'type' (it selects the model)"
    for inp in mt.inputs:
        if not isinstance(inp, InputSpec):
            return f"{mt.name}: inputs must be InputSpec objects, got {type(inp).__name__}"
        if inp.key not in kinds:
            return f"{mt.name}: input {inp.key!r} is not a config field"
        if kinds[inp.key] != "text":
            return f"{mt.name}: input {inp.key!r} must be a text field (it holds a name)"
    problem = _outputs_problem(mt)
    if problem:
        return problem
    if not callable(mt.create):
        return f"{mt.name}: create must be callable"
    return ""


def _outputs_problem(mt: ModelType) -> str:
    """What is wrong with the declared outputs of ``mt``, or "": unique names, a path under
    /simserver for a drivetrain, a plain name for a mechanism, at most one field2d."""
    seen = set()
    if sum(1 for o in mt.outputs if getattr(o, "type", None) == "field2d") > 1:
        return (f"{mt.name}: at most one field2d output (it is the Field2d object named after "
                "the mechanism)")
    for out in mt.outputs:
        if not isinstance(out, OutputSpec):
            return f"{mt.name}: outputs must be OutputSpec objects, got {type(out).__name__}"
        if mt.role == "drivetrain":
            if not _TOPIC_PATH.match(out.name) or out.name in seen:
                return (f"{mt.name}: drivetrain output {out.name!r} must be unique and a path "
                        "under /simserver such as 'drive/wheel_speeds' (letters, digits, '_')")
        elif not _TOPIC_NAME.match(out.name) or out.name in seen:
            return (f"{mt.name}: output name {out.name!r} must be unique and use letters, "
                    "digits and '_' only (it becomes a topic name)")
        seen.add(out.name)
    return ""


def _load(ep: EntryPoint, reg: Registry) -> None:
    dist = ep.dist.name if ep.dist is not None else "?"
    try:
        obj = ep.load()
    except (Exception, SystemExit) as exc:  # a broken plugin must not take the server down
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        reg.failures.append(Failure(ep.name, dist, f"import failed: {last}"))
        return
    problem = validate_type(obj)
    if problem:
        reg.failures.append(Failure(ep.name, dist, problem))
        return
    if obj.name != ep.name:
        reg.failures.append(Failure(ep.name, dist, f"entry point {ep.name!r} provides a type "
                                                   f"named {obj.name!r}; use the same name"))
        return
    reg.add(obj, dist)


@cache
def registry() -> Registry:
    """Every installed model type (loaded once per process)."""
    reg = Registry()
    for ep in sorted(entry_points(group=GROUP), key=lambda e: (e.name, e.value)):
        _load(ep, reg)
    if not reg.types["drivetrain"]:
        reg.failures.append(Failure("differential", BUILTIN,
                                    "built-in models not found: is frc-simserver installed "
                                    "(pip install -e .)?"))
    return reg
