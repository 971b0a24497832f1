"""Untrusted text (config values, keys) before it is parsed or echoed: a short excerpt for
error messages, and control characters found up front.

    >>> excerpt("x" * 50_000)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'… (50000 characters)"
    >>> control_character("60\\x00 lb")
    'U+0000 at character 3'
"""

from __future__ import annotations

import re

EXCERPT_LENGTH = 40
"""Characters of a bad value an error message echoes."""

# C0 and C1 control characters except tab (TOML allows a tab in a string; pint reads it as a
# space). NUL and the rest would be dropped or misread silently by the parsers behind.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def excerpt(text: str, limit: int = EXCERPT_LENGTH) -> str:
    """``repr(text)``, cut after ``limit`` characters with the full length said."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text)} characters)"


def control_character(text: str) -> str | None:
    """Where the first control character of ``text`` is (``"U+0000 at character 3"``), or
    None if it has none."""
    m = _CONTROL.search(text)
    return None if m is None else f"U+{ord(m.group()):04X} at character {m.start() + 1}"
