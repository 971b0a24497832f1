"""Data from outside simserver: files a user names, messages from a peer.

Each is bounded before it is parsed, so a wrong file or a misbehaving peer gives a short error
instead of a hang, a traceback or gigabytes of memory:

- :func:`open_regular` opens a regular file only, and only up to a stated size. A FIFO, a
  device (``/dev/zero``) or a directory is refused from its ``stat`` without being opened, so
  nothing blocks and no device sees an ``open``; :func:`read_text` reads one whole as UTF-8,
  :func:`utf8` decodes a part of one, each naming the line of a byte that is not UTF-8;
- :func:`excerpt` and :func:`clip` are all an error message shows of a bad value or of a
  peer's text: its first characters, with non-printable ones escaped; :func:`control_character`
  finds what a config value must not hold before a parser sees it.

    with open_regular(path, 64 * 2**20, "an inputs CSV") as fh:   # FileRefused otherwise
        first = fh.readline(4096)
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import BinaryIO

EXCERPT = 40  # characters of a bad value an error message shows
# C0 and C1 control characters except tab (TOML allows a tab in a string; pint reads it as a
# space). NUL and the rest would be dropped or misread silently by the parsers behind.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


class FileRefused(ValueError):
    """A file that is missing, unreadable, not a regular file, too large or not UTF-8 text;
    str() is ``"<path>: <reason>"``."""

    def __init__(self, path: str | Path, reason: str):
        self.path, self.reason = str(path), reason
        super().__init__(f"{path}: {reason}")


def open_regular(path: str | Path, limit: int, what: str) -> BinaryIO:
    """``path`` opened for reading bytes, if it is a regular file of at most ``limit`` bytes;
    FileRefused naming it otherwise. ``what`` says what the file should be ("an inputs CSV")."""
    p = Path(path)
    try:
        _check(p, os.stat(p), limit, what)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
        fd = os.open(p, flags)  # non-blocking: a FIFO swapped in since the stat cannot block
    except FileNotFoundError:
        raise FileRefused(p, "file not found") from None
    except OSError as exc:
        raise FileRefused(p, f"cannot read: {exc.strerror or exc}") from None
    try:
        _check(p, os.fstat(fd), limit, what)  # what was opened, whatever the path is now
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _check(p: Path, st: os.stat_result, limit: int, what: str) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise FileRefused(p, f"is {_kind(st.st_mode)}, not a regular file; {what} must be a "
                          "regular file")
    if st.st_size > limit:
        raise FileRefused(p, _too_large(st.st_size, limit, what))


def _too_large(size: int | None, limit: int, what: str) -> str:
    have = f"more than {size_text(limit)}" if size is None else f"{size:,} bytes"
    return f"is {have}; {what} may be {size_text(limit)} at most"


def read_text(path: str | Path, limit: int, what: str) -> str:
    """The text of the regular UTF-8 file ``path`` of at most ``limit`` bytes (a byte order
    mark dropped); FileRefused naming it otherwise."""
    with open_regular(path, limit, what) as fh:
        try:
            data = fh.read(limit + 1)  # a file that grew since, or one whose size lies
        except OSError as exc:
            raise FileRefused(path, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise FileRefused(path, _too_large(None, limit, what))
    return utf8(data, path).removeprefix("\ufeff")


def utf8(data: bytes, path: str | Path, line: int = 1) -> str:
    """``data``, which starts at line ``line`` of ``path``, as text; FileRefused naming the
    line and byte where it is not UTF-8 (the bytes themselves are not shown)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = exc.start
        line += data.count(b"\n", 0, at)
        column = at - data.rfind(b"\n", 0, at)
        raise FileRefused(path, f"line {line} is not UTF-8 text (byte {column} of the line is "
                          f"0x{data[at]:02x}): save the file as UTF-8") from None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"


def size_text(n: int) -> str:
    """A size in bytes for messages: bytes, KiB or MiB."""
    if n < 2**10:
        return f"{n} bytes"
    if n < 2**20:
        return f"{n / 2**10:.4g} KiB"
    return f"{n / 2**20:.4g} MiB"


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text`` (then "…" and its length), control characters
    escaped: a peer's or a file's text as a log line may show it."""
    head = text[:limit]
    if not head.isprintable():
        head = "".join(c if c.isprintable() else repr(c)[1:-1] for c in head)
    return head if len(text) <= limit else f"{head}… ({len(text)} characters)"


def excerpt(value: str, limit: int = EXCERPT) -> str:
    """A bad value as an error message shows it: quoted, at most ``limit`` characters."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value)} characters)"


def control_character(text: str) -> str | None:
    """Where the first control character of ``text`` is (``"U+0000 at character 3"``), or
    None if it has none."""
    m = _CONTROL.search(text)
    return None if m is None else f"U+{ord(m.group()):04X} at character {m.start() + 1}"
