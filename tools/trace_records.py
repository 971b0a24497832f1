"""Canonical trace records: what tools/traces.py hashes and compares.

A trace is a text file of records, one a line: ``where <TAB> field <TAB> value``.

- ``where`` says when: ``tick=17`` (in-process worlds), ``t=0.18`` (a ``--trace`` CSV row),
  ``ts=180000`` (a WPILib data log timestamp, µs), ``end`` (a run's JSON summary).
- ``field`` says what: a path into a snapshot (``encoders.fl_drive[0]``,
  ``frames[0].tags[1].corners[2][0]``) or a data log entry name.
- ``value`` is exact and readable: floats by ``repr`` (it round-trips every double; NaN
  carries its bits), ints, booleans as ``true``/``false``, strings JSON-quoted, wpimath
  geometry as its struct's doubles, raw bytes in hex.

Nothing depends on where a class lives (dataclasses, named tuples and mappings are walked by
field name, sorted) or on dict order, so moving modules between packages leaves a trace
unchanged; a changed value, field name, type (int vs float) or count does not.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import re
import struct
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

Record = tuple[str, str, str]  # where, field, value


def number(x: float) -> str:
    """A double exactly: ``repr`` (NaN with its bits, since every NaN reprs alike)."""
    if math.isnan(x):
        return "nan:" + struct.pack("<d", x).hex()
    return repr(x)


def _struct_value(obj: Any) -> str | None:
    """A wpimath geometry object (anything WPILib can pack as a struct) as its doubles, or
    None for anything else."""
    try:
        from wpiutil import wpistruct

        name = wpistruct.getTypeName(type(obj))
        data = wpistruct.pack(obj)
    except (ImportError, TypeError):
        return None
    if len(data) % 8:
        return f"struct:{name}:{data.hex()}"
    doubles = struct.unpack(f"<{len(data) // 8}d", data)
    return f"struct:{name}(" + ", ".join(number(v) for v in doubles) + ")"


def leaf(value: Any) -> str | None:
    """The canonical text of a scalar, or None when ``value`` is a container."""
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return "bytes:" + bytes(value).hex()
    if isinstance(value, enum.Enum):
        return f"enum:{value.name}"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number(value)
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind is not None and getattr(value, "shape", None) == ():  # a numpy scalar
        if kind == "b":
            return "true" if bool(value) else "false"
        if kind in "iu":
            return str(int(value))
        if kind == "f":
            return number(float(value))
    return _struct_value(value)


def _children(value: Any) -> Iterator[tuple[str, Any]] | None:
    """(path suffix, child) of a container, in canonical order; None for anything else."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = sorted(f.name for f in dataclasses.fields(value))
        return ((f".{name}", getattr(value, name)) for name in fields)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return ((f".{name}", getattr(value, name)) for name in sorted(value._fields))
    if isinstance(value, Mapping):
        return ((f"[{json.dumps(str(k))}]", value[k]) for k in sorted(value, key=str))
    if hasattr(value, "tolist") and hasattr(value, "shape"):  # a numpy array
        value = value.tolist()
    if isinstance(value, list | tuple):
        return ((f"[{i}]", v) for i, v in enumerate(value))
    return None


def flatten(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(field path, canonical text) of every leaf of ``value``; an empty container is a leaf
    (``[]``), so a list that empties shows."""
    text = leaf(value)
    if text is not None:
        yield path, text
        return
    children = _children(value)
    if children is None:
        raise TypeError(f"{path or 'value'}: cannot canonicalise a {type(value).__name__}")
    empty = True
    for suffix, child in children:
        empty = False
        yield from flatten(child, path + suffix if path else suffix.lstrip("."))
    if empty:
        yield path, "[]"


# --- WPILib data logs ------------------------------------------------------------------------


def _payload(kind: str, data: bytes) -> str:
    """A data log payload of type ``kind`` as readable, exact text."""
    if kind == "double" and len(data) == 8:
        return number(struct.unpack("<d", data)[0])
    if kind == "int64" and len(data) == 8:
        return str(struct.unpack("<q", data)[0])
    if kind == "boolean" and len(data) == 1:
        return "true" if data[0] else "false"
    if kind == "double[]" and len(data) % 8 == 0:
        return "[" + ", ".join(number(v) for v in struct.unpack(f"<{len(data) // 8}d", data)) + "]"
    if kind in ("string", "json", "structschema"):
        try:
            return json.dumps(data.decode())
        except UnicodeDecodeError:
            pass
    return "bytes:" + data.hex()


ROBOT_ENTRY = "NT:"  # entry names of the robot program's own topics (simserver.io.wpilog)


def wpilog_records(path: Path) -> list[Record]:
    """The records of a ``.wpilog``, canonical.

    Compared: every entry start (name, type, metadata, timestamp), every data record (entry
    name, timestamp, payload) and any finish or set-metadata record. Left out:

    - the header's extra string (``simserver <version>``) and entry ids (numbers given in
      start order);
    - the order of records that share a timestamp: records are sorted by (timestamp, entry
      name), stably. The robot program's own topics (``NT:...``) arrive over NetworkTables
      while a tick runs, so where they land between simserver's records of the same tick
      varies from run to run; their values and timestamps do not;
    - the timestamps of the robot program's values stamped before the run's first tick
      (``ts=pre``, ordered by entry name, then as received). Those were published before
      the lock-step clock started, and simserver stamps them through NetworkTables' server
      time offset against the wall clock (``NtAdapter.sim_time``): 1 µs in most runs, 8182
      µs in one of 25 runs on a loaded machine. Their values and per-topic order are
      compared.
    """
    from wpiutil.log import DataLogReader

    reader = DataLogReader(str(path))
    if not reader.isValid():
        raise ValueError(f"{path}: not a WPILib data log")
    names: dict[int, tuple[str, str]] = {}
    rows: list[tuple[int, str, int, str]] = []  # ts, name, kind order, text
    for rec in reader:
        ts = rec.getTimestamp()
        if rec.isStart():
            s = rec.getStartData()
            names[s.entry] = (s.name, s.type)
            rows.append((ts, s.name, 0, f"start type={json.dumps(s.type)} "
                                        f"metadata={json.dumps(s.metadata)}"))
        elif rec.isFinish():
            name = names.pop(rec.getFinishEntry(), ("?", ""))[0]
            rows.append((ts, name, 2, "finish"))
        elif rec.isSetMetadata():
            m = rec.getSetMetadataData()
            rows.append((ts, names.get(m.entry, ("?", ""))[0], 1,
                         f"metadata={json.dumps(m.metadata)}"))
        elif not rec.isControl():
            name, kind = names.get(rec.getEntry(), ("?", ""))
            rows.append((ts, name, 1, _payload(kind, bytes(rec.getRaw()))))
    # The first tick: simserver's earliest record after the ones made at the start (1 µs).
    first_tick = min((ts for ts, name, kind, _ in rows if kind == 1 and ts > 1
                      and not name.startswith(ROBOT_ENTRY)), default=0)

    def pre(row: tuple[int, str, int, str]) -> bool:
        return row[1].startswith(ROBOT_ENTRY) and row[0] < first_tick

    early = sorted((r for r in rows if pre(r)), key=lambda r: r[1])
    rest = sorted((r for r in rows if not pre(r)), key=lambda r: (r[0], r[1], r[2]))
    return ([("ts=pre", name, text) for _, name, _, text in early] +
            [(f"ts={ts}", name, text) for ts, name, _, text in rest])


def csv_records(path: Path) -> list[Record]:
    """A ``--trace`` CSV: one record per cell, exactly as written, keyed by its time cell."""
    lines = path.read_text().splitlines()
    if not lines:
        return []
    head = lines[0].split(",")
    out: list[Record] = []
    for line in lines[1:]:
        cells = line.split(",")
        for name, cell in zip(head, cells, strict=True):
            out.append((f"t={cells[0]}", f"trace.csv:{name}", cell))
    return out


def json_records(data: Any, drop: Iterable[str], replace: Mapping[str, str]) -> list[Record]:
    """A JSON summary: its leaves except the paths in ``drop``; ``replace`` rewrites text
    (machine-specific paths) inside string values."""
    dropped = set(drop)
    out: list[Record] = []
    for path, text in flatten(data):
        if path in dropped:
            continue
        for old, new in replace.items():
            text = text.replace(json.dumps(old)[1:-1], new)
        out.append(("end", path, text))
    return out


# --- trace files -----------------------------------------------------------------------------


def line(record: Record) -> str:
    """A record as one line of a trace file (tabs and newlines cannot occur in its parts:
    strings are JSON-quoted)."""
    where, field, value = record
    return f"{where}\t{field}\t{value}\n"


class Difference(NamedTuple):
    """Where two traces differ: the first differing record (None on a side that has ended
    there) and, while both traces keep the same (where, field) sequence, how many records
    differ in all and in which fields (the first few, list indices as ``[*]``)."""

    position: int
    base: Record | None
    head: Record | None
    differing: int = 1
    fields: tuple[str, ...] = ()
    misaligned_at: int | None = None  # where the traces stop listing the same records


FIELDS_SHOWN = 8


def parse(text: str) -> Record:
    where, field, value = text.rstrip("\n").split("\t", 2)
    return where, field, value


def first_difference(base: Path, head: Path) -> Difference | None:
    """How two trace files differ, or None when they are identical."""
    first: Difference | None = None
    count, fields = 0, dict[str, None]()
    with base.open() as a, head.open() as b:
        position = 0
        while True:
            la, lb = a.readline(), b.readline()
            if not la and not lb:
                break
            if la != lb:
                ra, rb = (parse(la) if la else None), (parse(lb) if lb else None)
                if first is None:
                    first = Difference(position, ra, rb)
                if ra is None or rb is None or ra[:2] != rb[:2]:
                    return first._replace(differing=count, fields=tuple(fields),
                                          misaligned_at=position)
                count += 1
                if len(fields) < FIELDS_SHOWN:
                    fields[_generic(ra[1])] = None
            position += 1
    return None if first is None else first._replace(differing=count, fields=tuple(fields))


def _generic(field: str) -> str:
    """A field path with list indices as ``[*]`` (module 0..3 is one field)."""
    return re.sub(r"\[\d+\]", "[*]", field)
