"""Load and validate a TOML configuration into a :class:`Config` of SI floats.

Every problem is reported with the file, the key path, what was expected and what was found;
all problems in a file are collected before anything fails, so one `simserver check` shows them
all.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import sys
import types
import typing
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from simserver import units
from simserver.config import hal, pieces, plausible
from simserver.config.fields import ABSENT_MODEL, Spec, spec_of
from simserver.config.issues import ConfigError, ConfigIssue, missing_name
from simserver.config.model import Config, MechanismSection, SwitchConfig
from simserver.config.references import drivetrain_motors, motor_mechanisms
from simserver.config.registry import registry
from simserver.config.tomlshape import TomlShapeError, check_shape
from simserver.field.seasons import field_size
from simserver.models.api import DriveMotor, ModelType
from simserver.models.motor import MotorCatalogError, motor_by_name
from simserver.models.obstacles import convex_ccw
from simserver.util.untrusted import FileRefused, control_character, excerpt, read_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: tomli, the package the standard library's tomllib came from
    import tomli as tomllib

DEFAULT_CONFIG_NAME = "kitbot.toml"
_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
MAX_FILE_BYTES = 1 << 20
"""Largest config file read (1 MiB; a full robot's config is a few kB)."""
_TOML_INT = 2**63  # TOML integers are 64-bit signed


def default_config_text() -> str:
    """The bundled kitbot configuration, as TOML text."""
    return resources.files("simserver.config").joinpath(DEFAULT_CONFIG_NAME).read_text("utf-8")


def load_default() -> Config:
    """The bundled kitbot configuration."""
    return loads(default_config_text(), source=f"<bundled {DEFAULT_CONFIG_NAME}>")


def _read(path: str | Path) -> str:
    """The text of a TOML file; ConfigError naming the file if it cannot be read. Only a
    regular UTF-8 file of at most MAX_FILE_BYTES is read: a FIFO would block, /dev/zero never
    ends."""
    try:
        return read_text(path, MAX_FILE_BYTES, "a simserver config (TOML)")
    except FileRefused as exc:
        raise ConfigError(str(path), [ConfigIssue("", exc.reason)]) from None


def _parse(text: str, source: str) -> dict[str, Any]:
    """TOML text as a table; ConfigError naming ``source`` on a syntax error or a structure
    tomllib cannot take (nesting too deep for its recursion, an integer too long)."""
    try:
        check_shape(text)
        return tomllib.loads(text)
    except TomlShapeError as exc:
        raise ConfigError(source, [ConfigIssue("", f"not usable TOML: {exc}")]) from None
    except ValueError as exc:  # TOMLDecodeError, or int() of more than 4300 digits
        raise ConfigError(source, [ConfigIssue("", f"not valid TOML: {exc}")]) from None


def load(path: str | Path) -> Config:
    """Load and validate a config file. Raises ConfigError naming the file on any problem;
    problems that do not stop it are in ``Config.warnings``."""
    return _load_file(Path(path), (), None)


def loads(text: str, source: str = "<string>", base: str | Path = ".") -> Config:
    """Validate TOML text. ``source`` names the file in error messages; the files of
    ``[robots]`` are found relative to ``base``."""
    return _loads(text, source, Path(base), (), None)


def _errors(issues: list[ConfigIssue]) -> list[ConfigIssue]:
    """The issues that stop a file from loading (not the warnings)."""
    return [i for i in issues if not i.warning]


def _load_file(path: Path, chain: tuple[Path, ...], listed_in: str | None) -> Config:
    return _loads(_read(path), str(path), path.parent, (*chain, path), listed_in)


def _loads(text: str, source: str, base: Path, chain: tuple[Path, ...],
           listed_in: str | None) -> Config:
    """``loads`` of a file reached through ``chain`` (the files being loaded, this one last);
    ``listed_in`` names the file whose [robots] lists this one."""
    raw = _parse(text, source)
    issues: list[ConfigIssue] = []
    cfg = _build(Config, raw, "", issues)
    if not _errors(issues):
        _cross_check(cfg, issues, own_field=listed_in is None)
    if errors := _errors(issues):
        raise ConfigError(source, errors)
    warnings = tuple(i.render(source) for i in issues if i.warning)
    if cfg.robots:
        robots = {name: dataclasses.replace(
            entry, config=str(base / entry.config),
            inputs=None if entry.inputs is None else str(base / entry.inputs))
            for name, entry in cfg.robots.items()}
        cfg = dataclasses.replace(cfg, robots=robots)
        _refuse_cycles(cfg, source, chain)
        if listed_in is not None:
            raise ConfigError(source, [ConfigIssue(
                "robots", f"a robot listed in {listed_in} [robots] cannot list robots itself")])
        others = _load_others(cfg, source, chain)
        warnings += tuple(w for other in others.values() for w in other.warnings)
        cfg = dataclasses.replace(cfg, others=others)
    return dataclasses.replace(cfg, warnings=warnings)


def _refuse_cycles(cfg: Config, source: str, chain: tuple[Path, ...]) -> None:
    """A [robots] entry naming a file already being loaded (itself, or the file that lists
    it) would load forever: refuse it, naming the chain of files."""
    loading = [p.resolve() for p in chain]
    for name, entry in cfg.robots.items():
        target = Path(entry.config)
        if target.resolve() in loading:
            at = loading.index(target.resolve())
            names = " → ".join(str(p) for p in (*chain[at:], target))
            raise ConfigError(source, [ConfigIssue(
                f"robots.{name}.config", f"names a file already being loaded ({names}): a "
                "robot's own config cannot list [robots]")])


def _is_file(path: Path) -> bool:
    """Whether ``path`` names a file (False, not OSError, for a name too long to exist)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _load_others(cfg: Config, source: str, chain: tuple[Path, ...]) -> dict[str, Config]:
    """The configs of the other robots (paths already resolved), each on this config's field
    and clock."""
    out: dict[str, Config] = {}
    for name, entry in cfg.robots.items():
        path = Path(entry.config)
        if not _is_file(path):
            raise ConfigError(source, [ConfigIssue(f"robots.{name}.config",
                                                   f"no such file: {excerpt(str(path), 200)}")])
        other = _load_file(path, chain, source)
        if entry.inputs is not None and not _is_file(Path(entry.inputs)):
            raise ConfigError(source, [ConfigIssue(
                f"robots.{name}.inputs", f"no such file: {excerpt(entry.inputs, 200)}")])
        other = dataclasses.replace(other, field=cfg.field, sim=cfg.sim)
        issues: list[ConfigIssue] = []
        plausible.check_start(other, issues)
        if errors := _errors(issues):
            raise ConfigError(str(path), [dataclasses.replace(
                i, message=f"{i.message} (on the field of {source})") for i in errors])
        out[name] = dataclasses.replace(other, warnings=other.warnings + tuple(
            i.render(str(path)) for i in issues))
    return out


def load_section(cls: type, table: dict[str, Any], source: str = "<section>") -> Any:
    """Validate one table against a config dataclass (for plugin tests: build a mechanism's
    config the way the loader does, defaults and units included). Raises ConfigError."""
    issues: list[ConfigIssue] = []
    out = _build(cls, table, "", issues)
    if errors := _errors(issues):
        raise ConfigError(source, errors)
    return out


# --- structural validation -------------------------------------------------------------------


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _unwrap_optional(tp: Any) -> Any:
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0]
    return tp


def _join(prefix: str, key: str) -> str:
    """The key path of ``key`` in ``prefix``, for messages (an odd key shown as an excerpt)."""
    if not key:
        return prefix
    if len(key) > 60 or control_character(key):
        key = excerpt(key)
    return f"{prefix}.{key}" if prefix else key


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"{str(value).lower()} (boolean)"
    if isinstance(value, str):
        return f"{excerpt(value)} (string)"
    if isinstance(value, int):
        return f"{value} (integer)"
    if isinstance(value, float):
        return f"{value} (number)"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _build(cls: type, raw: Any, prefix: str, issues: list[ConfigIssue]) -> Any:
    """Build dataclass ``cls`` from the TOML table ``raw``; record problems in ``issues``."""
    raw = _table(raw, prefix, issues)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    # A derived value (drivetrain_type, warnings) is no key of the file.
    keys = [name for name, f in fields.items() if spec_of(f).kind != "derived"]
    _check_keys(raw, keys, prefix, issues)
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for name in keys:
        values.update(_build_key(spec_of(fields[name]), _unwrap_optional(hints[name]), name,
                                 raw, _join(prefix, name), issues))
    try:
        return cls(**values)
    except TypeError:  # only reachable when issues were already recorded
        return None


def _table(raw: Any, path: str, issues: list[ConfigIssue]) -> dict[str, Any]:
    """``raw`` if it is a TOML table; else an empty one, recording the issue."""
    if isinstance(raw, dict):
        return raw
    issues.append(ConfigIssue(path, f"expected a table, got {_describe(raw)}"))
    return {}


def _check_keys(raw: dict[str, Any], keys: list[str], prefix: str,
                issues: list[ConfigIssue]) -> None:
    """Every key of the table ``raw`` is one of ``keys``; an unknown one names the closest."""
    for key in raw:
        if key not in keys:
            hint = difflib.get_close_matches(key, keys, n=1, cutoff=0.6)
            msg = "unknown key"
            msg += f"; did you mean {hint[0]!r}?" if hint else f"; known keys: {', '.join(keys)}"
            issues.append(ConfigIssue(_join(prefix, key), msg))


def _build_key(spec: Spec, tp: Any, name: str, raw: dict[str, Any], path: str,
               issues: list[ConfigIssue]) -> dict[str, Any]:
    """The field values that key ``name`` of the table ``raw`` (of type ``tp``) gives: its
    value, and for a model also the model's type name (field ``<name>_type``)."""
    present = name in raw
    if spec.kind == "model":
        if spec.optional and not present:
            return {name: None, f"{name}_type": ABSENT_MODEL}
        tname, conf = _build_model(spec.choices[0], raw.get(name, {}), path, issues,
                                   spec.default)
        return {name: conf, f"{name}_type": tname}
    if spec.kind == "models":
        return {name: _build_models(spec.choices[0], raw.get(name, {}), path, issues)}
    if spec.kind == "section":
        if not present and spec.default is None:
            return {name: None}
        return {name: _build(tp, raw.get(name, {}), path, issues)}
    if spec.kind == "table":
        return {name: _build_entries(typing.get_args(tp)[1], raw.get(name, {}), path, issues)}
    if present:
        return {name: _convert(spec, raw[name], path, issues)}
    if spec.required:
        issues.append(ConfigIssue(path, f"missing required key ({_expected(spec)})"))
        return {name: None}
    return {name: None if spec.default is None else _convert(spec, spec.default, path, issues)}


def _build_models(role: str, raw: Any, path: str, issues: list[ConfigIssue]
                  ) -> dict[str, MechanismSection]:
    """A table of named models of ``role`` (each a table whose ``type`` names its model)."""
    out: dict[str, MechanismSection] = {}
    for entry, body in _table(raw, path, issues).items():
        epath = _join(path, entry)
        if not _NAME_RE.match(entry):
            issues.append(ConfigIssue(epath, "names may use letters, digits, '_', '-' "
                                             "and '.' only, 64 at most"))
        tname, conf = _build_model(role, body, epath, issues, None)
        out[entry] = MechanismSection(tname or "", conf)
    return out


def _build_entries(cls: type, raw: Any, path: str, issues: list[ConfigIssue]
                   ) -> dict[str, Any]:
    """A table of named entries ([motors.NAME], ...), each built as dataclass ``cls``."""
    out: dict[str, Any] = {}
    for entry, body in _table(raw, path, issues).items():
        if not _NAME_RE.match(entry):
            issues.append(ConfigIssue(
                _join(path, entry),
                "names may use letters, digits, '_', '-' and '.' only, 64 at most "
                "(they become NetworkTables topic names)",
            ))
        out[entry] = _build(cls, body, _join(path, entry), issues)
    return out


def _build_model(role: str, body: Any, path: str, issues: list[ConfigIssue],
                 default_type: str | None) -> tuple[str | None, Any]:
    """Validate a table whose ``type`` key names a registered model type of ``role``."""
    reg = registry()
    body = _table(body, path, issues)
    tname = body.get("type", default_type)
    known = ", ".join(repr(n) for n in reg.names(role)) or "none installed"
    if tname is None:
        issues.append(ConfigIssue(_join(path, "type"),
                                  f"missing required key (a {role} model type: {known})"))
        return None, None
    if not isinstance(tname, str) or len(tname) > 64:
        issues.append(ConfigIssue(_join(path, "type"),
                                  f"expected a model type name, got {_describe(tname)}"))
        return None, None
    mt = reg.get(role, tname)
    if mt is None:
        failed = reg.failure_for(tname)
        if failed is not None:
            msg = (f"model type {tname!r} comes from the plugin {failed.distribution!r}, which "
                   f"could not be loaded: {failed.reason}")
        else:
            hint = difflib.get_close_matches(tname, reg.names(role), n=1)
            msg = f"unknown {role} model type {tname!r}"
            msg += f"; did you mean {hint[0]!r}?" if hint else f" (installed: {known})"
            msg += " `simserver models` lists every type."
        issues.append(ConfigIssue(_join(path, "type"), msg))
        return tname, None
    rest = {k: v for k, v in body.items() if k != "type"}
    return tname, _build(mt.config, rest, path, issues)


def _expected(spec: Spec) -> str:
    if spec.kind == "quantity":
        unit, per = units.display_unit(spec.dimension or "")
        rng = spec.range_text(unit, per)
        return f"a {spec.dimension} such as \"1 {unit}\"" + (f", {rng}" if rng else "")
    if spec.kind in ("number", "integer"):
        rng = spec.range_text()
        word = "an integer" if spec.kind == "integer" else "a number"
        return word + (f", {rng}" if rng else "")
    if spec.kind == "boolean":
        return "true or false"
    if spec.kind == "choice":
        return "one of " + ", ".join(repr(c) for c in spec.choices)
    if spec.kind == "unit":
        return "a length (m, ft, in), an angle (rotations, deg, rad) or \"ticks\""
    if spec.kind == "motor":
        return "a motor type name (see `simserver motors`)"
    if spec.kind == "position":
        return ("a length (such as \"0.5 m\") or an angle (such as \"90 deg\"), "
                f"{spec.range_text('m or rad')}")
    if spec.kind == "points":
        return (f"a list of 3 to {MAX_POINTS} [x, y] points, each coordinate a length such as "
                f"\"1.5 m\", {spec.range_text('m')}")
    if spec.kind == "hal":
        role = spec.choices[0]
        many = " or a list of them" if role == "motor" else ""
        return f"a HAL device address such as {hal.examples(role)}{many}"
    return "a string"


MAX_TEXT = 1024
"""Characters of a string value at most (names, paths, addresses; a quantity: 100)."""
MAX_CONTROLLERS = 8
"""Controllers in one `hal` or `followers` list at most (a motor output drives 8 motors)."""
MAX_POINTS = 64
"""Corners of a polygon at most (field elements are a handful)."""


def _check_range(spec: Spec, value: float, shown: str, path: str,
                 issues: list[ConfigIssue], unit: str = "", per: float = 1.0) -> None:
    """Refuse ``value`` (SI) outside the spec's range; warn outside its usual range."""
    if spec.refused(value):
        issues.append(ConfigIssue(path, f"must be {spec.range_text(unit, per)}, got {shown}"))
    elif spec.unusual(value):
        issues.append(ConfigIssue(path, f"{shown} is unusual: expected "
                                        f"{spec.usual_text(unit, per)} (docs/config.md)",
                                  warning=True))


def _convert(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]) -> Any:
    """The value of a key of ``spec``'s kind from its TOML value (SI for a quantity), or None
    after recording in ``issues`` why it is not usable."""
    problem = _unreadable(spec, value)
    if problem is not None:
        issues.append(ConfigIssue(path, problem))
        return None
    convert = _CONVERTERS.get(spec.kind)
    if convert is None:
        raise AssertionError(f"unhandled kind {spec.kind}")
    return convert(spec, value, path, issues)


def _unreadable(spec: Spec, value: Any) -> str | None:
    """Why a TOML value is refused whatever its kind (a control character, a string too long
    for its kind, an integer beyond 64 bits), or None."""
    if isinstance(value, str) and (where := control_character(value)) is not None:
        return f"{excerpt(value)} contains a control character ({where})"
    longest = units.MAX_LENGTH if spec.kind in ("quantity", "position", "unit") else MAX_TEXT
    if isinstance(value, str) and len(value) > longest:
        return f"{excerpt(value)} is too long (at most {longest} characters)"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _TOML_INT:
        return "integer out of range: TOML integers are 64-bit"
    return None


def _wrong(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]) -> None:
    """Record that ``value`` is not of the kind ``spec`` expects."""
    issues.append(ConfigIssue(path, f"expected {_expected(spec)}, got {_describe(value)}"))


def _quantity(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]) -> float | None:
    """A string with a unit ("1.5 m"), in SI, within the spec's range."""
    assert spec.dimension is not None
    unit, per = units.display_unit(spec.dimension)
    if not isinstance(value, str):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            issues.append(ConfigIssue(
                path, f"expected {units.article(spec.dimension)} with its unit, such as "
                f"{units.example(spec.dimension, value)} (a string), got the bare number "
                f"{value}",
            ))
        else:
            _wrong(spec, value, path, issues)
        return None
    try:
        si = units.to_si(value, spec.dimension)
    except units.UnitError as exc:
        issues.append(ConfigIssue(path, str(exc)))
        return None
    if not math.isfinite(si):
        issues.append(ConfigIssue(path, f"must be finite, got {excerpt(value)}"))
        return None
    _check_range(spec, si, f"{excerpt(value)} = {si / per:g} {unit}", path, issues, unit, per)
    return si


def _points(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]
            ) -> tuple[tuple[float, float], ...] | None:
    """A polygon: 3 to MAX_POINTS [x, y] pairs of lengths, in m, each within range."""
    if not isinstance(value, list) or not 3 <= len(value) <= MAX_POINTS or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(c, str) for c in p)
            for p in value):
        _wrong(spec, value, path, issues)
        return None
    try:
        corners = tuple((units.to_si(px, "length"), units.to_si(py, "length"))
                        for px, py in value)
    except units.UnitError as exc:
        issues.append(ConfigIssue(path, f"{exc} (expected {_expected(spec)})"))
        return None
    far = next((c for point in corners for c in point if not math.isfinite(c)
                or spec.refused(c)), None)
    if far is not None:
        issues.append(ConfigIssue(path, f"each coordinate must be "
                                        f"{spec.range_text('m')}, got {far:g} m"))
        return None
    return corners


def _position(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]
              ) -> tuple[str, float] | None:
    """A length or an angle: ("length", m) or ("angle", rad), within range."""
    if not isinstance(value, str):
        _wrong(spec, value, path, issues)
        return None
    for kind in ("length", "angle"):
        try:
            position = units.to_si(value, kind)
        except units.UnitError:
            continue
        if not math.isfinite(position) or spec.refused(position):
            issues.append(ConfigIssue(path, f"must be {spec.range_text('m or rad')}, got "
                                            f"{excerpt(value)}"))
            return None
        return (kind, position)
    issues.append(ConfigIssue(path, f"{excerpt(value)} is neither a length (such as "
                                    "\"0.5 m\") nor an angle (such as \"90 deg\")"))
    return None


def _number(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]) -> float | None:
    """A finite number (an integer taken as one), within range."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _wrong(spec, value, path, issues)
        return None
    v = float(value)
    if not math.isfinite(v):
        issues.append(ConfigIssue(path, f"must be finite, got {value}"))
        return None
    _check_range(spec, v, f"{value}", path, issues)
    return v


def _integer(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]) -> int | None:
    """An integer within range."""
    if isinstance(value, bool) or not isinstance(value, int):
        _wrong(spec, value, path, issues)
        return None
    _check_range(spec, value, f"{value}", path, issues)
    return value


def _boolean(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]) -> bool | None:
    if not isinstance(value, bool):
        _wrong(spec, value, path, issues)
        return None
    return value


def _choice(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]) -> str | None:
    """One of the spec's choices (an integer taken as its digits), with a hint if close."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or value not in spec.choices:
        hint = difflib.get_close_matches(value, spec.choices, n=1, cutoff=0.5) \
            if isinstance(value, str) and len(value) <= MAX_TEXT else []
        msg = f"expected {_expected(spec)}, got {_describe(value)}"
        issues.append(ConfigIssue(path, msg + (f"; did you mean {hint[0]!r}?" if hint else "")))
        return None
    return value


def _text(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]) -> str | None:
    if not isinstance(value, str):
        _wrong(spec, value, path, issues)
        return None
    return value


def _unit(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]) -> str | None:
    """The name of a length or angle unit, or "ticks"."""
    if not isinstance(value, str):
        _wrong(spec, value, path, issues)
        return None
    try:
        units.unit_kind(value)
    except units.UnitError:
        _wrong(spec, value, path, issues)
        return None
    return value


def _motor(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]) -> str | None:
    """A motor type of the catalog (`simserver motors`)."""
    if not isinstance(value, str):
        _wrong(spec, value, path, issues)
        return None
    try:
        motor_by_name(value)
    except MotorCatalogError as exc:
        issues.append(ConfigIssue(path, str(exc)))
        return None
    return value


def _hal(spec: Spec, value: Any, path: str, issues: list[ConfigIssue]
         ) -> tuple[hal.HalAddress, ...] | None:
    """HAL device addresses of the spec's role: one, or (for a motor) a list of up to
    MAX_CONTROLLERS; () when not wired."""
    if value == ():  # the default: not wired
        return ()
    role = spec.choices[0]
    items = value if isinstance(value, list) and role == "motor" else [value]
    if not 0 < len(items) <= MAX_CONTROLLERS or not all(isinstance(v, str) for v in items):
        _wrong(spec, value, path, issues)
        return ()
    out = []
    for i, item in enumerate(items):
        try:
            out.append(hal.parse(item, role))
        except hal.HalAddressError as exc:
            where = path if len(items) == 1 and not isinstance(value, list) else f"{path}[{i}]"
            issues.append(ConfigIssue(where, str(exc)))
    return tuple(out)


_CONVERTERS: dict[str, Callable[[Spec, Any, str, list[ConfigIssue]], Any]] = {
    "quantity": _quantity, "points": _points, "position": _position, "number": _number,
    "integer": _integer, "boolean": _boolean, "choice": _choice, "text": _text,
    "unit": _unit, "motor": _motor, "hal": _hal,
}
"""The converter of each kind of value a key can hold (spec.kind)."""


# --- cross references -------------------------------------------------------------------------


def _check_integrated(cfg: Config, name: str, address: hal.HalAddress,
                      issues: list[ConfigIssue]) -> None:
    """An integrated sensor turns with the motor its controller drives: it must be one of
    its motor's read controllers, and takes that motor's direction."""
    enc = cfg.encoders[name]
    motor = cfg.motors.get(enc.motor or "")
    if motor is not None and motor.hal and address not in motor.hal:
        where = "follows" if address in motor.followers else "is not a controller of"
        issues.append(ConfigIssue(f"encoders.{name}.hal", f"{address} {where} motors."
                                  f"{enc.motor} (hal = {', '.join(map(str, motor.hal))}): "
                                  "an integrated sensor is read on its own motor; use "
                                  "the leader's"))
    if enc.inverted:
        issues.append(ConfigIssue(f"encoders.{name}.inverted", f"{address} is the sensor "
                                  "of the motor itself: it turns with its motor and takes "
                                  f"motors.{enc.motor}.inverted; remove this key"))


def _check_wiring(cfg: Config, issues: list[ConfigIssue]) -> None:
    """HAL wiring: each device wired once per direction, CAN encoders in angle units."""
    wired: dict[tuple[str, str], str] = {}  # (role, address) -> key path
    for name, m in cfg.motors.items():
        _claim(wired, "motor", f"motors.{name}.hal", m.hal, issues)
        _claim(wired, "motor", f"motors.{name}.followers", m.followers, issues)
        if m.followers and not m.hal:
            issues.append(ConfigIssue(f"motors.{name}.followers", "followers follow a leader: "
                                      "set hal to the controller they follow"))
        elif m.followers and m.count < len(m.controllers):
            issues.append(ConfigIssue(f"motors.{name}.count", f"{len(m.controllers)} "
                                      f"controllers (hal and followers) drive at least as many "
                                      f"motors: count = {m.count} is too few"))
    for name, enc in cfg.encoders.items():
        _claim(wired, "encoder", f"encoders.{name}.hal", enc.hal, issues)
        for address in enc.hal:
            _check_encoder_address(cfg, name, address, issues)
    for name, sol in cfg.solenoids.items():
        _claim(wired, "solenoid", f"solenoids.{name}.hal", sol.hal, issues)
        _claim(wired, "solenoid", f"solenoids.{name}.reverse_hal", sol.reverse_hal, issues)
        if sol.reverse_hal and not (sol.hal and sol.hal[0].kind == sol.reverse_hal[0].kind):
            issues.append(ConfigIssue(f"solenoids.{name}.reverse_hal", "a DoubleSolenoid's "
                                      "reverse channel is on the module of its forward "
                                      "channel: set hal to the forward channel, both ctre:N "
                                      "or both rev:N"))
    for name, sw in cfg.switches.items():
        _claim(wired, "switch", f"switches.{name}.hal", sw.hal, issues)


def _claim(wired: dict[tuple[str, str], str], role: str, path: str,
           addresses: tuple[hal.HalAddress, ...], issues: list[ConfigIssue]) -> None:
    """Wire ``addresses`` (a device's direction: an inverted one is the same device) to the
    key ``path`` in ``wired``; an address already wired to another key is an issue."""
    for address in addresses:
        key = (role, str(address).lstrip("!"))
        if key in wired:
            issues.append(ConfigIssue(path, f"{address} is already wired to {wired[key]}"))
        wired[key] = path


def _check_encoder_address(cfg: Config, name: str, address: hal.HalAddress,
                           issues: list[ConfigIssue]) -> None:
    """An encoder's HAL address fits its keys: an analog input or a SPARK's absolute port
    reads an absolute angle; a CAN or analog encoder counts shaft rotations; an integrated
    sensor is its motor's own."""
    enc = cfg.encoders[name]
    if address.kind == "analog" and not enc.absolute:
        issues.append(ConfigIssue(f"encoders.{name}.absolute", "an analog input reads "
                                  "an absolute angle (0..5 V over full_range): "
                                  "set absolute = true"))
    if address.port == "absolute" and not enc.absolute:
        issues.append(ConfigIssue(f"encoders.{name}.absolute", "a SPARK's absolute "
                                  "encoder reads the shaft angle within one turn: "
                                  "set absolute = true"))
    if address.kind not in (*hal.CAN_ENCODERS, "analog"):
        return
    if units.unit_kind(enc.unit) not in ("angle", "ticks"):
        issues.append(ConfigIssue(f"encoders.{name}.unit", f"a {address.kind} encoder "
                                  "counts shaft rotations: use an angle unit "
                                  "(rotations, deg, rad) or ticks"))
    if address.kind in hal.INTEGRATED_SENSORS and not address.port:
        _check_integrated(cfg, name, address, issues)
    if address.kind == "talonfx" and enc.mount != "motor":
        issues.append(ConfigIssue(f"encoders.{name}.mount", "a Talon FX's rotor sensor "
                                  "turns with the motor: set mount = \"motor\""))


def _cross_check(cfg: Config, issues: list[ConfigIssue], own_field: bool = True) -> None:
    """The checks across keys and sections of a config whose keys are each usable: names
    that refer to each other, what drives what, wiring, plausibility."""
    users: dict[str, str] = {}  # motor name -> key path that drives it
    _check_drivetrain(cfg, issues, users)
    _check_mechanisms(cfg, issues, users)
    _check_encoders(cfg, issues)
    _check_cylinders(cfg, issues)
    _check_switches(cfg, issues)
    _check_obstacles(cfg, issues)
    _check_wiring(cfg, issues)
    _check_names(cfg, issues)
    if own_field and cfg.pieces is not None:
        season_length, season_width = field_size(cfg.field.season)
        pieces.check(cfg.pieces, cfg.field.season, (cfg.field.length or season_length,
                                                   cfg.field.width or season_width), issues)
    if cfg.sim.tick < cfg.sim.substep:
        issues.append(ConfigIssue(
            "sim.tick", f"must be at least sim.substep ({cfg.sim.substep * 1e3:g} ms)"
        ))
    if cfg.bridge.nt_port == cfg.bridge.port:
        issues.append(ConfigIssue(
            "bridge.nt_port", f"must differ from bridge.port ({cfg.bridge.port}): both are TCP "
            "ports the robot program listens on"))
    plausible.check(cfg, issues, own_field)


def _use_motor(users: dict[str, str], path: str, name: str, issues: list[ConfigIssue]) -> None:
    """Record that the key ``path`` drives motor ``name``: a motor drives one thing."""
    if name in users:
        issues.append(ConfigIssue(path, f"motor {name!r} already drives {users[name]}"))
    users[name] = path


def _check_drivetrain(cfg: Config, issues: list[ConfigIssue], users: dict[str, str]) -> None:
    """The drivetrain type's own checks; the motors it drives (into ``users``)."""
    dt_type = registry().get("drivetrain", cfg.drivetrain_type)
    if dt_type is not None and dt_type.check is not None:
        for key, msg in dt_type.check(cfg.drivetrain, cfg):
            issues.append(ConfigIssue(_join("drivetrain", key), msg))
    for use in drivetrain_motors(cfg):
        path = f"drivetrain.{use.key}"
        if use.motor not in cfg.motors:
            issues.append(ConfigIssue(path, missing_name("motor", use.motor, list(cfg.motors))))
        else:
            _use_motor(users, path, use.motor, issues)


def _check_mechanisms(cfg: Config, issues: list[ConfigIssue], users: dict[str, str]) -> None:
    """Each mechanism's motors and solenoids exist, a motor drives one thing (``users``);
    each mechanism type's own checks."""
    reg = registry()
    for mname, section in cfg.mechanisms.items():
        mt = reg.get("mechanism", section.type)
        if mt is None or section.config is None:
            continue
        prefix = f"mechanisms.{mname}"
        for inp in mt.inputs:
            ref = getattr(section.config, inp.key)
            if ref is None:
                continue
            pool = cfg.motors if inp.kind == "motor" else cfg.solenoids
            if ref not in pool:
                issues.append(ConfigIssue(f"{prefix}.{inp.key}",
                                          missing_name(inp.kind, ref, list(pool))))
            elif inp.kind == "motor":
                _use_motor(users, f"{prefix}.{inp.key}", ref, issues)
        if mt.check is not None:
            for key, msg in mt.check(section.config, cfg):
                issues.append(ConfigIssue(_join(prefix, key), msg))


def _check_encoders(cfg: Config, issues: list[ConfigIssue]) -> None:
    """Each encoder's motor exists and drives something an encoder can measure, in a unit
    and (absolute or not) that fit what it measures."""
    reg = registry()
    drive_users: dict[str, DriveMotor] = {}
    for use in drivetrain_motors(cfg):
        drive_users.setdefault(use.motor, use)
    drive_ok = all(m in cfg.motors for m in drive_users)
    driven = motor_mechanisms(cfg)
    for name, enc in cfg.encoders.items():
        path = f"encoders.{name}"
        if enc.motor not in cfg.motors:
            issues.append(ConfigIssue(f"{path}.motor",
                                      missing_name("motor", enc.motor, list(cfg.motors))))
            continue
        kind = units.unit_kind(enc.unit)
        drive_use = drive_users.get(enc.motor)
        if drive_use is not None:
            if drive_use.joint == "angle" and kind == "length":
                issues.append(ConfigIssue(f"{path}.unit", f"{enc.motor!r} turns {drive_use.role}: "
                                          "use an angle unit (rotations, deg, rad) or ticks"))
            if drive_use.joint == "length" and enc.absolute:
                issues.append(ConfigIssue(f"{path}.absolute",
                                          "absolute encoders measure rotating mechanisms "
                                          "(arms, flywheels, swerve azimuths), not "
                                          f"{drive_use.role} ({enc.motor!r})"))
            continue
        mech = driven.get(enc.motor)
        if mech is None:
            if cfg.drivetrain is None:
                issues.append(ConfigIssue(
                    f"{path}.motor", f"motor {enc.motor!r} drives no mechanism with a position "
                    "(elevator, arm, flywheel, linear), and the config has no [drivetrain]"))
            elif drive_ok:
                issues.append(ConfigIssue(
                    f"{path}.motor", f"motor {enc.motor!r} drives no drivetrain side and no "
                    "mechanism with a position (elevator, arm, flywheel, linear)"))
            continue
        joint = reg.get("mechanism", cfg.mechanisms[mech].type).joint  # type: ignore[union-attr]
        radius = getattr(cfg.mechanisms[mech].config, "drum_radius", None)
        if joint == "angle" and kind == "length":
            issues.append(ConfigIssue(f"{path}.unit", f"{mech!r} turns: use an angle unit "
                                      "(rotations, deg, rad) or ticks"))
        if joint == "length" and kind != "length" and not radius:
            issues.append(ConfigIssue(f"{path}.unit", f"{mech!r} moves in a line with no drum "
                                      "to turn a shaft: use a length unit"))
        if enc.absolute and joint != "angle" and not (radius and kind == "angle"):
            issues.append(ConfigIssue(f"{path}.absolute", "absolute encoders read the angle "
                                      "of a shaft: a rotating mechanism (arm, flywheel) or, "
                                      "in an angle unit, an elevator's drum"))


def _check_cylinders(cfg: Config, issues: list[ConfigIssue]) -> None:
    """Cylinders need a [pneumatics] section and an existing solenoid."""
    for name, cyl in cfg.cylinders.items():
        if cfg.pneumatics is None:
            issues.append(ConfigIssue(f"cylinders.{name}",
                                      "cylinders need air: add a [pneumatics] section"))
        if cyl.solenoid not in cfg.solenoids:
            issues.append(ConfigIssue(f"cylinders.{name}.solenoid",
                                      missing_name("solenoid", cyl.solenoid,
                                                   list(cfg.solenoids))))


def _check_switches(cfg: Config, issues: list[ConfigIssue]) -> None:
    """Each limit switch senses an existing mechanism with a position, at a position of its
    kind (length or angle)."""
    reg = registry()
    for name, sw in cfg.switches.items():
        sensed = cfg.mechanisms.get(sw.mechanism)
        if sensed is None:
            hint = difflib.get_close_matches(sw.mechanism, list(cfg.mechanisms), n=1)
            msg = f"no mechanism named {excerpt(sw.mechanism)} in [mechanisms]"
            issues.append(ConfigIssue(f"switches.{name}.mechanism",
                                      msg + (f"; did you mean {hint[0]!r}?" if hint else "")))
            continue
        mt = reg.get("mechanism", sensed.type)
        if sw.trigger == "holding":
            _check_holding(name, sw, sensed.type, mt, issues)
            continue
        joint = mt.joint if mt is not None and not mt.roller else ""
        if sw.position is None:
            issues.append(ConfigIssue(f"switches.{name}.position", "missing required key "
                                      f"with trigger {sw.trigger!r} (a length or an angle "
                                      "such as \"0.5 m\" or \"30 deg\")"))
        elif not joint:
            issues.append(ConfigIssue(f"switches.{name}.mechanism",
                                      f"a {sensed.type!r} mechanism has no position to sense"))
        elif sw.position[0] != joint:
            issues.append(ConfigIssue(f"switches.{name}.position",
                                      f"mechanism {sw.mechanism!r} has {units.article(joint)} "
                                      f"position: give {units.article(joint)} such as "
                                      f"{units.example(joint)}"))


def _check_holding(name: str, sw: SwitchConfig, type_name: str, mt: ModelType | None,
                   issues: list[ConfigIssue]) -> None:
    """A beam break (``trigger = "holding"``) senses a mechanism that holds game pieces, and
    has no position."""
    if mt is not None and not mt.holds:
        issues.append(ConfigIssue(f"switches.{name}.mechanism",
                                  f"a {type_name!r} mechanism holds no game pieces: a "
                                  "`holding` switch needs one that does (an intake)"))
    if sw.position is not None:
        issues.append(ConfigIssue(f"switches.{name}.position",
                                  "a `holding` switch has no position: leave it out"))


def _check_obstacles(cfg: Config, issues: list[ConfigIssue]) -> None:
    """Each field obstacle given by its points is a convex polygon."""
    for name, obs in cfg.field.obstacles.items():
        if obs.points is not None and convex_ccw(obs.points) is None:
            issues.append(ConfigIssue(f"field.obstacles.{name}.points",
                                      "the points must outline a convex polygon, in order around "
                                      "it (split a concave element into convex pieces)"))


def _check_names(cfg: Config, issues: list[ConfigIssue]) -> None:
    """Inputs (motors and solenoids) have names unique among them all."""
    for name in cfg.motors:
        if name in cfg.solenoids:
            issues.append(ConfigIssue(
                f"solenoids.{name}", "a motor has the same name; input names must be unique"
            ))


MAX_SCHEMA_FILE = 2**20  # bytes; a scenario file is a few hundred


def read_toml(path: str | Path) -> dict[str, Any]:
    """The table of a TOML file other than a robot config (a CI scenario, a sweep): a missing
    file, anything but a regular UTF-8 file of at most MAX_SCHEMA_FILE bytes and a TOML syntax
    error raise ConfigError naming the file."""
    try:
        text = read_text(path, MAX_SCHEMA_FILE, "a TOML file")
    except FileRefused as exc:
        raise ConfigError(str(path), [ConfigIssue("", exc.reason)]) from None
    return _parse(text, str(path))


def load_schema_file(cls: type, path: str | Path) -> Any:
    """Read a TOML file other than a robot config (a CI scenario, say) and validate it against
    the schema dataclass ``cls`` the way `load` validates a config (see :func:`read_toml`;
    every key problem raises ConfigError naming the file)."""
    return load_section(cls, read_toml(path), source=str(path))
