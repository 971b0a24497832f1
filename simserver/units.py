"""Unit parsing at the edges: config strings in any unit pint knows, converted once to SI floats.

Nothing in a physics step carries a pint Quantity; this module is the only place that builds one.

    >>> round(to_si("6 in", "length"), 6)
    0.1524
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import pint

from simserver.util.untrusted import control_character, excerpt

# Dimension name -> (pint dimensionality, SI unit used inside simserver).
DIMENSIONS: dict[str, tuple[str, str]] = {
    "length": ("[length]", "m"),
    "mass": ("[mass]", "kg"),
    "time": ("[time]", "s"),
    "angle": ("", "rad"),
    "speed": ("[length] / [time]", "m/s"),
    "acceleration": ("[length] / [time] ** 2", "m/s^2"),
    "angular speed": ("1 / [time]", "rad/s"),
    "angular acceleration": ("1 / [time] ** 2", "rad/s^2"),
    "voltage": ("[mass] * [length] ** 2 / [current] / [time] ** 3", "V"),
    "current": ("[current]", "A"),
    "resistance": ("[mass] * [length] ** 2 / [current] ** 2 / [time] ** 3", "ohm"),
    "moment of inertia": ("[mass] * [length] ** 2", "kg*m^2"),
    "inductance": ("[mass] * [length] ** 2 / [current] ** 2 / [time] ** 2", "H"),
    "charge": ("[current] * [time]", "A*h"),
    "area": ("[length] ** 2", "m^2"),
    "volume": ("[length] ** 3", "m^3"),
    "pressure": ("[mass] / [length] / [time] ** 2", "Pa"),
    "temperature": ("[temperature]", "K"),
    "torque": ("[mass] * [length] ** 2 / [time] ** 2", "N*m"),
    "damping": ("[mass] / [time]", "N*s/m"),
    "kV (voltage per speed)": ("[mass] * [length] / [current] / [time] ** 2", "V*s/m"),
    "kA (voltage per acceleration)": ("[mass] * [length] / [current] / [time]", "V*s^2/m"),
    "kV (voltage per angular speed)": ("[mass] * [length] ** 2 / [current] / [time] ** 2",
                                       "V*s/rad"),
    "kA (voltage per angular acceleration)": ("[mass] * [length] ** 2 / [current] / [time]",
                                              "V*s^2/rad"),
}


# Units ranges are shown in where SI is not what people write: (unit, SI per unit).
_DISPLAY = {
    "angle": ("deg", math.pi / 180.0),
    "angular speed": ("deg/s", math.pi / 180.0),
    "angular acceleration": ("deg/s^2", math.pi / 180.0),
    "volume": ("L", 1e-3),
    "pressure": ("psi", 6894.757293168361),
}


def display_unit(dimension: str) -> tuple[str, float]:
    """The unit a range of ``dimension`` is shown in, and SI per that unit
    (``("deg", 0.01745...)`` for an angle, ``("m", 1.0)`` for a length)."""
    return _DISPLAY.get(dimension, (DIMENSIONS[dimension][1], 1.0))


_ANGLE_UNITS = {
    "radian", "degree", "revolution", "rotation", "turn", "arcminute", "arcsecond", "gradian",
    "milliradian",
}


class UnitError(ValueError):
    """A string that is not a quantity of the expected dimension."""


# pint computes integer powers with Python integers: "9**9**9 m" or "2**1000000000 m" would take
# minutes and gigabytes. Chained powers and exponents above MAX_EXPONENT are refused unparsed.
INCH = 0.0254  # m per inch (exact), for limits and defaults written in inches
MAX_EXPONENT = 100.0
_POWER_CHAIN = re.compile(r"(\*\*|\^)\s*\(?\s*[\w.+-]+\s*\)?\s*(\*\*|\^)")
_EXPONENT = re.compile(r"(?:\*\*|\^)\s*\(?\s*[+-]?(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)")


# pint's parser is superlinear in the length of its input: a 200 kB string took minutes.
MAX_LENGTH = 100
"""Characters of a quantity or unit string pint is given at most."""


def _refuse_unreadable(text: str) -> None:
    """Refuse, before pint sees it, text that is too long, holds a control character (pint
    would skip a NUL: "60\\x00 lb" read as 60 lb) or a power too large to compute."""
    if len(text) > MAX_LENGTH:
        raise UnitError(f"{excerpt(text)} is too long (at most {MAX_LENGTH} characters)")
    where = control_character(text)
    if where is not None:
        raise UnitError(f"{excerpt(text)} contains a control character ({where})")
    _refuse_huge_powers(text)


def _refuse_huge_powers(text: str) -> None:
    if _POWER_CHAIN.search(text):
        raise UnitError(f"{excerpt(text)}: chained powers are not supported")
    for m in _EXPONENT.finditer(text):
        if float(m.group(1)) > MAX_EXPONENT:
            raise UnitError(f"{excerpt(text)}: exponent {m.group(1)} is too large")


@cache
def registry() -> pint.UnitRegistry:
    """The one pint registry (built lazily: building it takes a few hundred ms)."""
    # Offset units ("70 degF") convert to kelvin on parsing instead of raising.
    ureg: pint.UnitRegistry = pint.UnitRegistry(autoconvert_offset_to_baseunit=True)
    ureg.define("rotation = revolution = rot")
    return ureg


@dataclass(frozen=True)
class Parsed:
    """A parsed quantity: its SI magnitude and the unit the user wrote."""

    value: float
    unit: str


def to_si(text: str, dimension: str) -> float:
    """Parse ``text`` (e.g. ``"60 lb"``) and return its magnitude in the SI unit of ``dimension``.

    Raises UnitError with a message that names the expected dimension and an example unit.
    """
    return parse(text, dimension).value


def article(word: str) -> str:
    """``"a length"``, ``"an angle"``."""
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def example(dimension: str, magnitude: object = 1) -> str:
    """An example quantity string for ``dimension`` (degrees for angles: what people write)."""
    unit = {"angle": "deg", "angular speed": "deg/s", "angular acceleration": "deg/s^2",
            "pressure": "psi", "temperature": "degF"}.get(dimension, DIMENSIONS[dimension][1])
    return f'"{magnitude} {unit}"'


def parse(text: str, dimension: str) -> Parsed:
    """Parse ``text`` as a quantity of ``dimension`` (a key of DIMENSIONS)."""
    if isinstance(text, str):
        _refuse_unreadable(text)
    try:
        return _parse(text, dimension)
    except ArithmeticError as exc:  # pint's arithmetic overflowed ("kg**1e9", "10**400 kg")
        raise UnitError(f"cannot use {excerpt(text)} ({exc.__class__.__name__})") from None


def _parse(text: str, dimension: str) -> Parsed:
    _, si_unit = DIMENSIONS[dimension]
    wanted = article(dimension)
    if not isinstance(text, str):
        raise UnitError(f"expected a string with a unit, such as {example(dimension)}")
    ureg = registry()
    try:
        q: Any = ureg.Quantity(text.strip())
    except Exception as exc:  # pint raises many types for bad text
        raise UnitError(f"cannot parse {excerpt(text)} as a quantity "
                        f"({exc.__class__.__name__})") from None
    if not isinstance(q, ureg.Quantity):
        q = ureg.Quantity(q)
    is_angle = q.dimensionless and str(q.units) in _ANGLE_UNITS
    if dimension == "angle":
        if not is_angle:
            found = "has no unit" if q.dimensionless else f"is {article(_describe(q))}"
            raise UnitError(f"{excerpt(text)} {found}: expected an angle such as "
                            f"{example('angle')}")
    elif q.dimensionless:
        found = "is an angle" if is_angle else "has no unit"
        raise UnitError(f"{excerpt(text)} {found}: expected {wanted}, such as "
                        f"{example(dimension)}")
    elif str(q.dimensionality) != str(ureg.Quantity(1, si_unit).dimensionality):
        raise UnitError(f"{excerpt(text)} is {article(_describe(q))}, expected {wanted} "
                        f"(for example {example(dimension)})")
    return Parsed(value=float(q.to(si_unit).magnitude), unit=str(q.units))


def _describe(q: pint.Quantity) -> str:
    for name, (_, unit) in DIMENSIONS.items():
        if str(q.dimensionality) == str(registry().Quantity(1, unit).dimensionality):
            return name
    return f"quantity of dimension {q.dimensionality}"


def unit_kind(text: str) -> str:
    """Classify a sensor unit string: ``"length"``, ``"angle"`` or ``"ticks"``.

    Raises UnitError for anything else.
    """
    if text.strip() in ("tick", "ticks"):
        return "ticks"
    _refuse_unreadable(text)
    ureg = registry()
    try:
        u = ureg.Unit(text.strip())
        if u.dimensionality == ureg.meter.dimensionality:
            return "length"
        if u.dimensionless and str(u) in _ANGLE_UNITS:
            return "angle"
    except Exception:
        raise UnitError(f"unknown unit {excerpt(text)}") from None
    raise UnitError(f"{excerpt(text)} is neither a length, an angle nor ticks")


def unit_scale(text: str) -> float:
    """SI magnitude of one ``text`` unit (metres for lengths, radians for angles)."""
    kind = unit_kind(text)
    ureg = registry()
    if kind == "length":
        return float((1 * ureg.Unit(text)).to("m").magnitude)
    if kind == "angle":
        return float((1 * ureg.Unit(text)).to("radian").magnitude)
    return 1.0
