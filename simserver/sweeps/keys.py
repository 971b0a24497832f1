"""Config keys a sweep varies: what a dotted key path (``robot.start.x``,
``cameras.front.latency``, ``mechanisms.arm.mass``) names in a loaded config, and how a value
is written into a config's TOML table under it.

A key path follows the config's own structure: sections by name, then a named entry of a table
(``motors.left``, ``cameras.front``), then a key. It ends at a value (a quantity, a number, an
integer, a boolean, a choice or a string) or at a whole section (then only whole tables can be
written there).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from simserver import units
from simserver.config.fields import Spec, spec_of
from simserver.config.model import Config

#: Spec kinds a key path can pass through to reach a nested section.
_SECTIONS = ("section", "model")
#: Spec kinds whose next path part names an entry (``motors.left``).
_TABLES = ("table", "models")
#: The kinds of value a sweep can draw numbers for; the others only take listed values.
NUMERIC = ("quantity", "number", "integer")


class UnknownKey(ValueError):
    """A key path that names nothing a sweep can vary; the message says why."""


@dataclass(frozen=True)
class Target:
    """What a key path names in a config.

    kind: the key's spec kind (``"quantity"``, ``"number"``, ``"integer"``, ``"boolean"``,
    ``"choice"``, ``"text"``...) or ``"section"`` for a whole table. dimension: the quantity's
    dimension (a key of :data:`simserver.units.DIMENSIONS`), else None. value: the config's
    value there (SI for a quantity), None for a section or an optional key left out.
    """

    kind: str
    dimension: str | None
    value: Any

    @property
    def si_unit(self) -> str:
        """The SI unit a quantity of this key is written in (``"m"``, ``"rad"``)."""
        assert self.dimension is not None
        return units.DIMENSIONS[self.dimension][1]

    def text(self, si: float) -> Any:
        """The TOML value that gives this key ``si`` (SI for a quantity): a string with the SI
        unit for a quantity, the number itself otherwise."""
        if self.kind == "quantity":
            return f"{si!r} {self.si_unit}"
        if self.kind == "integer":
            return int(si)
        return float(si)


def resolve(cfg: Config, key: str) -> Target:
    """What ``key`` names in ``cfg``; UnknownKey naming the first part that does not exist."""
    parts = key.split(".")
    if not all(parts):
        raise UnknownKey("a key path is names joined by '.', such as \"robot.start.x\"")
    obj: Any = cfg
    walked: list[str] = []
    i = 0
    while i < len(parts):
        part = parts[i]
        here = ".".join(walked) or "the config"
        if not dataclasses.is_dataclass(obj):
            raise UnknownKey(f"{here} has no keys below it")
        fields = {f.name: f for f in dataclasses.fields(obj)}
        spec: Spec | None = spec_of(fields[part]) if part in fields else None
        if spec is None or spec.kind == "derived":
            known = ", ".join(n for n, f in fields.items() if spec_of(f).kind != "derived")
            raise UnknownKey(f"{here} has no key {part!r} (its keys: {known})")
        walked.append(part)
        value = getattr(obj, part)
        if spec.kind in _TABLES:
            if i + 1 == len(parts):
                raise UnknownKey(f"{'.'.join(walked)} is a table of named entries: name one, "
                                f"such as {'.'.join(walked)}.<name>.<key>")
            name = parts[i + 1]
            if name not in value:
                known = ", ".join(sorted(value)) or "none"
                raise UnknownKey(f"the config has no {'.'.join(walked)}.{name} (it has: "
                                f"{known})")
            walked.append(name)
            obj = value[name]
            i += 2
            continue
        if spec.kind in _SECTIONS:
            if value is None and i + 1 < len(parts):
                raise UnknownKey(f"the config has no [{'.'.join(walked)}]: add it to vary its "
                                "keys")
            obj = value
            i += 1
            continue
        if i + 1 < len(parts):
            raise UnknownKey(f"{'.'.join(walked)} is a value, with no keys below it")
        return Target(spec.kind, spec.dimension, value)
    return Target("section", None, None)


def write(table: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` (a dotted path) to ``value`` in a config's TOML ``table``, creating the
    tables on the way that the file leaves out."""
    *path, last = key.split(".")
    for part in path:
        table = table.setdefault(part, {})
    table[last] = value
