"""Property-based fuzzing of the config loader: whatever the text, ``loads`` returns a Config or
raises ConfigError (one clean message per problem), never another exception; and a Config it
accepts builds a World or fails with ModelBuildError, as ``simserver run`` expects.

Three sources of configs: arbitrary text; arbitrary TOML documents; and the bundled kitbot (plus
an elevator, an arm, pneumatics and a camera) with one to three random mutations: a value
replaced by a value of any TOML type or by a unit string from a hostile alphabet, a key deleted,
an unknown key added, a table replaced by a scalar; string values are most often replaced by
unit strings, where the loader hands text to pint. Runs are derandomized (the same examples
every run, as CI needs); raise ``SIMSERVER_FUZZ_EXAMPLES`` to search longer.
"""

from __future__ import annotations

import contextlib
import datetime
import math
import os
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simserver.config.loader import ConfigError, default_config_text, loads, tomllib
from simserver.world import ModelBuildError, World
from tests.worlds import ARM, LIFT, SHOULDER_NEO, TWO_KRAKENS

EXAMPLES = int(os.environ.get("SIMSERVER_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

RICH = default_config_text() + LIFT + ARM + TWO_KRAKENS + SHOULDER_NEO + """
[solenoids.claw]
initial = false

[pneumatics]
tanks = 2

[cylinders.claw]
solenoid = "claw"
bore = "1.5 in"
stroke = "6 in"

[cameras.front]
x = "0.3 m"
z = "0.5 m"
pitch = "-15 deg"
fps = 30
"""

# --- a TOML writer for generated documents (tomllib only reads) --------------------------------

BARE = set(string.ascii_letters + string.digits + "_-")


def _key(k: str) -> str:
    if k and set(k) <= BARE:
        return k
    return _string(k)


def _string(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def dumps(doc: dict[str, Any]) -> str:
    """TOML text of ``doc``: scalars and inline tables first, then one [table] per sub-table."""
    lines: list[str] = []

    def table(prefix: list[str], t: dict[str, Any]) -> None:
        subs = {k: v for k, v in t.items() if isinstance(v, dict)}
        for k, v in t.items():
            if k not in subs:
                lines.append(f"{_key(k)} = {_value(v)}")
        for k, v in subs.items():
            path = [*prefix, _key(k)]
            lines.append(f"\n[{'.'.join(path)}]")
            table(path, v)

    table([], doc)
    return "\n".join(lines) + "\n"


def test_the_writer_round_trips_the_rich_config():
    doc = tomllib.loads(RICH)
    assert tomllib.loads(dumps(doc)) == doc
    loads(dumps(doc))  # and the rich config itself is valid


# --- strategies ---------------------------------------------------------------------------------

UNIT_WORDS = ["m", "kg", "lb", "in", "deg", "rad", "s", "ms", "V", "A", "ohm", "psi", "N", "rpm",
              "rotations", "furlong", "degC", "kelvin", "%", "percent", "inf", "nan", "e", "pi"]
HOSTILE = st.text(alphabet="0123456789.eE+-*/^()[]{} _'\"\\,;:#=!~`@$&|<>?\t\n", max_size=20)

quantity_text = st.one_of(
    st.builds(lambda n, u: f"{n} {u}", st.floats(allow_nan=True, allow_infinity=True),
              st.sampled_from(UNIT_WORDS)),
    st.builds(lambda a, op, b, u: f"{a}{op}{b} {u}", st.integers(-10**6, 10**6),
              st.sampled_from(["**", "^", "*", "/", "e", " "]), st.integers(-500, 500),
              st.sampled_from(UNIT_WORDS)),
    st.builds(lambda u, p: f"{u}**{p}", st.sampled_from(UNIT_WORDS),
              st.floats(allow_nan=False, allow_infinity=True)),
    HOSTILE,
    st.text(max_size=30),
)

scalars = st.one_of(
    st.booleans(),
    st.integers(),
    st.floats(),
    quantity_text,
    st.datetimes(),
    st.dates(),
    st.times(),
)
toml_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=10,
)


def _paths(doc: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    return out


def _parent(doc: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for k in path[:-1]:
        doc = doc[k]
    return doc


@st.composite
def mutated_configs(draw: st.DrawFn) -> str:
    doc = tomllib.loads(RICH)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _parent(doc, path)
        op = draw(st.sampled_from(["quantity", "quantity", "replace", "replace", "delete", "add",
                                   "scalar"]))
        if op == "quantity":  # a unit string where the schema most likely wants one
            strings = [p for p in paths if isinstance(_parent(doc, p)[p[-1]], str)]
            path = draw(st.sampled_from(strings)) if strings else path
            _parent(doc, path)[path[-1]] = draw(quantity_text)
        elif op == "replace":
            parent[path[-1]] = draw(toml_values)
        elif op == "delete":
            del parent[path[-1]]
        elif op == "add":
            target = parent[path[-1]] if isinstance(parent[path[-1]], dict) else parent
            target[draw(st.text(min_size=1, max_size=10))] = draw(toml_values)
        else:
            parent[path[-1]] = draw(scalars)
    return dumps(doc)


# --- properties ---------------------------------------------------------------------------------


def check_clean(text: str, base: Path) -> None:
    """``loads`` gives a Config that builds a World, or a clean ConfigError / ModelBuildError."""
    try:
        cfg = loads(text, source="fuzz.toml", base=base)
    except ConfigError as exc:
        assert exc.issues, "a ConfigError must say what is wrong"
        for issue in exc.issues:
            line = issue.render(exc.source)
            assert line.startswith("fuzz.toml") and "Traceback" not in line, line
        return
    with contextlib.suppress(ModelBuildError):
        World(cfg)


@FUZZ
@given(text=st.text(max_size=300))
def test_any_text_loads_or_raises_config_error(text, tmp_path_factory):
    check_clean(text, tmp_path_factory.getbasetemp())


@FUZZ
@given(doc=st.dictionaries(st.sampled_from(["sim", "field", "robot", "battery", "motors",
                                            "drivetrain", "encoders", "gyro", "mechanisms",
                                            "cameras", "robots", "bridge", "x"]),
                           toml_values, max_size=6))
def test_any_toml_document_loads_or_raises_config_error(doc, tmp_path_factory):
    check_clean(dumps(doc), tmp_path_factory.getbasetemp())


@FUZZ
@given(text=mutated_configs())
def test_mutated_configs_load_or_raise_config_error(text, tmp_path_factory):
    check_clean(text, tmp_path_factory.getbasetemp())


@pytest.mark.parametrize("text", [
    "kg**1e9",  # pint: a unit to a huge power
    "10 ** 400 lb",  # an integer too large for a float
    "1e400 lb",
    "nan lb",
    "-inf lb",
    "2**1000000000 lb",  # an integer power that would take minutes to compute
    "9**9**9 lb",
])
def test_hostile_quantities_are_config_errors(text):
    bad = default_config_text().replace('mass = "60 lb"', f"mass = {_string(text)}")
    with pytest.raises(ConfigError, match=r"robot\.mass"):
        loads(bad)
