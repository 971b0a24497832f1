"""Field declarations for config dataclasses: each field carries its own schema.

A config section is a frozen dataclass whose fields are declared with the helpers below. The
metadata they attach (kind, dimension, range, default, doc) is the single source of truth for the
loader (validation and SI conversion), ``simserver check`` and ``docs/config.md``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Spec:
    """Schema of one config key.

    kind: "quantity" (string with a unit, stored in SI), "number", "integer", "boolean",
    "choice", "text", "unit" (a sensor unit name), "hal" (HAL device addresses of role
    ``choices[0]``), "section" (nested table),
    "table" (name -> section), "motor" (a motor type name from the catalog), "model" (a table
    whose ``type`` key selects a registered model type of role ``choices[0]``, default
    ``default``; with ``optional``, leaving the table out gives None and the type
    :data:`ABSENT_MODEL`), "models" (name -> such a table), "derived" (filled by the loader,
    not read from the file).
    """

    kind: str
    doc: str
    default: Any = None
    required: bool = False
    dimension: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: tuple[str, ...] = ()
    optional: bool = False
    usual_minimum: float | None = None
    usual_maximum: float | None = None
    or_zero: bool = False  # 0 (off) is allowed besides minimum .. maximum

    def range_text(self, unit: str = "", per: float = 1.0) -> str:
        """Human description of the allowed range, e.g. ``> 0 m`` or ``0 .. 1``; bounds are
        divided by ``per`` (SI per ``unit``: degrees for an angle in radians)."""
        text = _range(self.minimum, self.maximum, self.exclusive_minimum, unit, per)
        return f"0 or {text}" if self.or_zero else text

    def usual_text(self, unit: str = "", per: float = 1.0) -> str:
        """The usual range (values outside it load with a warning), like ``range_text``."""
        return _range(self.usual_minimum, self.usual_maximum, False, unit, per)

    def refused(self, value: float) -> bool:
        """Whether ``value`` (SI) is outside the allowed range."""
        lo, hi = self.minimum, self.maximum
        if self.or_zero and value == 0.0:
            return False
        if self.exclusive_minimum and lo is not None and value <= lo:
            return True
        return _outside(value, lo, hi)

    def unusual(self, value: float) -> bool:
        """Whether ``value`` (SI) is outside the usual range."""
        return _outside(value, self.usual_minimum, self.usual_maximum)


# Relative slack on bounds: "120 psi" converted by pint and a bound of 120 * PSI may differ in
# the last bit.
_SLACK = 1e-9


def _outside(value: float, lo: float | None, hi: float | None) -> bool:
    return (lo is not None and value < lo - _SLACK * abs(lo)) or (
        hi is not None and value > hi + _SLACK * abs(hi))


def _range(lo: float | None, hi: float | None, exclusive: bool, unit: str, per: float) -> str:
    suffix = f" {unit}" if unit else ""
    if lo is not None and hi is not None:
        op = "<" if exclusive else "≤"
        return f"{_num(lo / per)} {op} value ≤ {_num(hi / per)}{suffix}"
    if lo is not None:
        return f"{'>' if exclusive else '≥'} {_num(lo / per)}{suffix}"
    if hi is not None:
        return f"≤ {_num(hi / per)}{suffix}"
    return ""


def _num(x: float) -> str:
    return f"{x:g}"


def _field(spec: Spec, default: Any = None) -> Any:
    # The dataclass default only keeps field order legal: the loader always passes every value.
    if isinstance(default, (dict, list)):
        return dataclasses.field(default_factory=lambda: default, metadata={"spec": spec})
    return dataclasses.field(default=default, metadata={"spec": spec})


Usual = tuple[float | None, float | None]
"""A usual range (minimum, maximum; None: open), in SI: values outside it load with a warning."""


def _bounds(minimum: float | None, maximum: float | None, positive: bool,
            usual: Usual, or_zero: bool = False) -> dict[str, Any]:
    """Spec keywords of a range: ``positive`` without a ``minimum`` means > 0; ``or_zero``
    allows 0 (off) besides ``minimum`` .. ``maximum``."""
    open_zero = positive and minimum is None
    return {"minimum": 0.0 if open_zero else minimum, "maximum": maximum,
            "exclusive_minimum": open_zero, "usual_minimum": usual[0],
            "usual_maximum": usual[1], "or_zero": or_zero}


def quantity(
    default: str | None,
    dimension: str,
    doc: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    positive: bool = False,
    usual: Usual = (None, None),
    or_zero: bool = False,
) -> Any:
    """A physical value written as a string with a unit (``"6 in"``), stored as an SI float.
    Values outside ``minimum`` .. ``maximum`` (SI) are refused (but 0 when ``or_zero``: a
    value that can be off), values outside ``usual`` load with a warning."""
    spec = Spec("quantity", doc, default=default, required=default is None,
                dimension=dimension, **_bounds(minimum, maximum, positive, usual, or_zero))
    return _field(spec)


def position_quantity(default: str | None, doc: str, *, minimum: float, maximum: float) -> Any:
    """A length or an angle (which one is checked against what it refers to); stored as
    ``(kind, SI value)`` with kind "length" or "angle"; the SI value (m or rad) must lie in
    ``minimum`` .. ``maximum``."""
    return _field(Spec("position", doc, default=default, required=default is None,
                       minimum=minimum, maximum=maximum))


def points(doc: str, *, minimum: float, maximum: float) -> Any:
    """A polygon: a list of [x, y] points, each coordinate a length string; stored as a tuple of
    (x m, y m); each coordinate must lie in ``minimum`` .. ``maximum`` (m)."""
    return _field(Spec("points", doc, required=True, dimension="length", minimum=minimum,
                       maximum=maximum))


def optional_quantity(dimension: str, doc: str, *, minimum: float | None = None,
                      maximum: float | None = None, positive: bool = False,
                      usual: Usual = (None, None)) -> Any:
    """A physical value that may be left out (then None); ranges as for ``quantity``."""
    spec = Spec("quantity", doc, default=None, dimension=dimension,
                **_bounds(minimum, maximum, positive, usual))
    return _field(spec, None)


def number(
    default: float | None,
    doc: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    positive: bool = False,
    optional: bool = False,
    usual: Usual = (None, None),
) -> Any:
    """A plain (unitless) number; ``optional`` ones may be left out (then None). Ranges as for
    ``quantity``."""
    spec = Spec("number", doc, default=default, required=default is None and not optional,
                **_bounds(minimum, maximum, positive, usual))
    return _field(spec)


def integer(default: int | None, doc: str, *, minimum: int | None = None,
            maximum: int | None = None, usual: Usual = (None, None),
            optional: bool = False) -> Any:
    """A whole number; ``optional`` ones may be left out (then None)."""
    spec = Spec("integer", doc, default=default, required=default is None and not optional,
                **_bounds(minimum, maximum, False, usual))
    return _field(spec)


def boolean(default: bool, doc: str) -> Any:
    """true or false."""
    return _field(Spec("boolean", doc, default=default))


def choice(default: str | None, choices: tuple[str, ...], doc: str) -> Any:
    """One string out of a fixed set."""
    spec = Spec("choice", doc, default=default, required=default is None, choices=choices)
    return _field(spec)


def text(default: str | None, doc: str, *, optional: bool = False) -> Any:
    """A free string (a name); ``optional`` ones may be left out (then None)."""
    spec = Spec("text", doc, default=default, required=default is None and not optional)
    return _field(spec)


def sensor_unit(default: str, doc: str) -> Any:
    """A unit name a sensor reports in: a length, an angle, or ``ticks``."""
    return _field(Spec("unit", doc, default=default))


def motor_type(default: str | None, doc: str) -> Any:
    """A motor type name from the motor catalog (``simserver motors`` lists them)."""
    return _field(Spec("motor", doc, default=default, required=default is None))


def hal_device(role: str, doc: str) -> Any:
    """The robot program's HAL device(s) this entry maps to (``simserver.config.hal``), for
    the robot-side bridge; a list is allowed for motors. Loaded as a tuple of HalAddress."""
    return _field(Spec("hal", doc, default=(), choices=(role,)), ())


def section(cls: type, doc: str) -> Any:
    """A nested table with its own keys, filled with defaults when left out."""
    return _field(Spec("section", doc, default=cls))


def optional_section(doc: str) -> Any:
    """A nested table that may be left out (then None)."""
    return _field(Spec("section", doc), None)


def table(doc: str) -> Any:
    """A table of named entries (``[motors.left]``, ``[motors.right]``), each a section."""
    return _field(Spec("table", doc), {})


ABSENT_MODEL = "none"
"""The type name the loader records for an ``optional`` model table that is left out."""


def model(role: str, default_type: str, doc: str, *, optional: bool = False) -> Any:
    """A table whose ``type`` key picks a registered model type (``default_type`` when the
    table has no ``type``); its keys are that type's. An ``optional`` table may be left out:
    the value is then None and its type :data:`ABSENT_MODEL`."""
    return _field(Spec("model", doc, default=default_type, choices=(role,), optional=optional))


def models(role: str, doc: str) -> Any:
    """A table of named model tables (``[mechanisms.<name>]``), each with a ``type`` key."""
    return _field(Spec("models", doc, choices=(role,)), {})


def derived(doc: str, default: Any = None) -> Any:
    """A value the loader fills in (not a key of the file)."""
    return _field(Spec("derived", doc), default)


def spec_of(field: dataclasses.Field[Any]) -> Spec:
    """The Spec attached to a config dataclass field."""
    spec: Spec = field.metadata["spec"]
    return spec
