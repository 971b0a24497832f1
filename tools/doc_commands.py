"""The shell commands a Markdown page gives in its code blocks, section by section, so a test
can run them exactly as written (``make docker-test`` runs docs/ci.md's).

A section is a ``##`` heading and everything up to the next ``##`` heading (its ``###``
subsections included), named by the start of its heading text. The commands are the lines of
its fenced code blocks that have no language or a shell one (sh, bash, shell); blank lines and
``#`` comments are left out, and a line ending in ``\\`` is joined with the next. Printed one
command per line, in page order::

    python3 tools/doc_commands.py docs/ci.md "The image" "Compose"

Exit 2 when the file cannot be read or a section is missing or has no command. Standard
library only: it runs before any virtual environment exists.
"""

from __future__ import annotations

import sys
from pathlib import Path

SHELL_FENCES = ("", "sh", "bash", "shell")


def sections(text: str) -> dict[str, list[str]]:
    """Heading text of each ``##`` section -> its commands."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    fence: str | None = None  # the open fence's language, None outside a block
    pending = ""  # a command continued with a backslash
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            fence = line[3:].strip().lower() if fence is None else None
            pending = ""
            continue
        if fence is None:
            if raw.startswith("## "):
                current = found.setdefault(raw[3:].strip(), [])
            continue
        if current is None or fence not in SHELL_FENCES:
            continue
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        current.append(pending + line)
        pending = ""
    return found


def commands(text: str, names: list[str]) -> list[str]:
    """The commands of the sections whose headings start with each of ``names``, in order.
    KeyError naming the first section that is missing or has no command."""
    found = sections(text)
    out: list[str] = []
    for name in names:
        matched = [cmds for heading, cmds in found.items() if heading.startswith(name)]
        if not matched or not any(matched):
            raise KeyError(name)
        for cmds in matched:
            out += cmds
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: doc_commands.py PAGE.md SECTION...", file=sys.stderr)
        return 2
    page, names = Path(argv[0]), argv[1:]
    try:
        found = commands(page.read_text(encoding="utf-8"), names)
    except OSError as exc:
        print(f"doc_commands: {page}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyError as exc:
        print(f"doc_commands: {page}: no section starting {exc.args[0]!r} with a command",
              file=sys.stderr)
        return 2
    print("\n".join(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
