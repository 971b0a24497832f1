"""Bounds on the shape of a TOML document, checked on its text before tomllib parses it.

tomllib reads arrays and inline tables recursively: 50,000 nested brackets raise
RecursionError (or, with a raised recursion limit, overflow the C stack). It also takes time
quadratic in the number of parts of a dotted key or table header (50,000 parts: 38 s). A
simserver config nests a few levels; the bounds below are far above any real one.

    >>> check_shape("a = [[1, 2], [3]]\\n[robot.start]\\nx = '2 m'")
    >>> try:
    ...     check_shape("a = " + "[" * 100)
    ... except TomlShapeError as exc:
    ...     print(exc)
    line 1: arrays and inline tables nested more than 32 deep
"""

from __future__ import annotations

import re

MAX_DEPTH = 32
"""Arrays and inline tables nested in one value, at most."""
MAX_KEY_PARTS = 32
"""Parts of one dotted key or table header (``a.b.c`` has 3), at most."""

# What changes the state of the scan; everything else (bare keys, numbers, spaces) is skipped.
_EVENT = re.compile(r"\"\"\"|'''|[\"'#\[\]{}=,.\n]")


class TomlShapeError(ValueError):
    """Nesting or a dotted key beyond the bounds; the message names the line."""


def _string_end(text: str, i: int) -> int:
    """Index just past the string starting at ``i`` (or the end of the line for an unclosed
    one-line string, where tomllib stops with its own error)."""
    quote = text[i]
    if text.startswith(quote * 3, i):
        j = _skip_escapes(text, i + 3, quote * 3) if quote == '"' else text.find(quote * 3, i + 3)
        if j < 0:
            return len(text)
        end = j + 3
        while end < len(text) and end < j + 5 and text[end] == quote:
            end += 1  # up to two quotes of content may touch the closing delimiter
        return end
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\n":
            return j
        if c == "\\" and quote == '"':
            j += 2
            continue
        if c == quote:
            return j + 1
        j += 1
    return j


def _skip_escapes(text: str, j: int, closing: str) -> int:
    """Index of ``closing`` at or after ``j`` in a basic string, skipping escaped characters
    (-1 if the string never closes)."""
    while True:
        k = text.find(closing, j)
        if k < 0:
            return -1
        backslashes = 0
        while k - backslashes - 1 >= j and text[k - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return k
        j = k + 1


def check_shape(text: str) -> None:
    """Raise TomlShapeError if ``text`` nests arrays and inline tables more than MAX_DEPTH
    deep, or has a key or table header of more than MAX_KEY_PARTS dotted parts."""
    open_: list[str] = []  # the '[' and '{' open in the current value
    in_key = True  # reading a key (or a [table] header) rather than a value
    parts = 1
    pos = 0
    while (m := _EVENT.search(text, pos)) is not None:
        c, pos = m.group(), m.end()
        if c in ('"', "'", '"""', "'''"):
            pos = _string_end(text, m.start())
            continue
        if c == "#":
            newline = text.find("\n", pos)
            pos = len(text) if newline < 0 else newline
            continue
        if c == "\n":
            if not open_:
                in_key, parts = True, 1
            continue
        if in_key:
            if c == ".":
                parts += 1
                if parts > MAX_KEY_PARTS:
                    raise TomlShapeError(f"line {_line(text, pos)}: a key or table header of "
                                         f"more than {MAX_KEY_PARTS} dotted parts")
            elif c in "=]":  # the value starts, or a [table] header ends
                in_key = False
            elif c == "}" and open_:  # an empty inline table
                open_.pop()
                in_key = False
            continue
        if c in "[{":
            open_.append(c)
            if len(open_) > MAX_DEPTH:
                raise TomlShapeError(f"line {_line(text, pos)}: arrays and inline tables "
                                     f"nested more than {MAX_DEPTH} deep")
            if c == "{":
                in_key, parts = True, 1
        elif c in "]}":
            if open_:
                open_.pop()
        elif c == "," and open_ and open_[-1] == "{":
            in_key, parts = True, 1


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1
