"""Text output that cannot fail on a Windows console's code page.

Windows' Python writes redirected output (``simserver models > types.txt``, a CI log, a pipe)
in the ANSI code page (cp1252 in the Americas and Western Europe), which has no "≤", "→" or
"Δ": a ``print`` of one raised UnicodeEncodeError and ended the command with a traceback.
:func:`utf8_output` makes redirected stdout and stderr UTF-8 (what Python 3.15 does by
default, PEP 686) and a terminal that cannot show a character show "?" instead.
PYTHONIOENCODING, where set, is left as the user chose it, with "?" for what it cannot encode.

    utf8_output()   # first thing in a command

A Python program simserver starts and reads (the robot program of ``simserver init``, a
sweep's robot programs) gets ``PYTHONIOENCODING=CHILD_ENCODING``: its output is UTF-8 on
every system, and simserver reads it as such.
"""

from __future__ import annotations

import io
import os
import sys

#: PYTHONIOENCODING for the Python programs simserver starts and reads the output of.
CHILD_ENCODING = "utf-8:backslashreplace"


def utf8_output() -> None:
    """Make ``sys.stdout`` and ``sys.stderr`` unable to fail on a character (see above)."""
    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper) or _is_utf8(stream.encoding):
            continue
        if stream.isatty() or os.environ.get("PYTHONIOENCODING"):
            if stream.errors == "strict":
                stream.reconfigure(errors="replace")
        else:
            stream.reconfigure(encoding="utf-8")


def _is_utf8(encoding: str | None) -> bool:
    return (encoding or "").lower().replace("-", "").replace("_", "") in ("utf8", "utf8sig")
