"""What the config loader reports: one ConfigIssue per problem (or warning), and the
ConfigError that carries a file's errors."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from simserver.util.untrusted import excerpt


@dataclass(frozen=True)
class ConfigIssue:
    """One problem found in a config file, at key ``path``; a ``warning`` (an unusual value)
    does not stop the file from loading."""

    path: str
    message: str
    warning: bool = False

    def render(self, source: str) -> str:
        """The line shown to the user: ``FILE: KEY: [warning: ]MESSAGE``."""
        where = f"{source}: {self.path}" if self.path else source
        return f"{where}: {'warning: ' if self.warning else ''}{self.message}"


class ConfigError(Exception):
    """A configuration that cannot be used; ``issues`` lists every problem found."""

    def __init__(self, source: str, issues: list[ConfigIssue]):
        self.source = source
        self.issues = issues
        super().__init__("\n".join(i.render(source) for i in issues))


def missing_name(kind: str, name: str, known: list[str]) -> str:
    """Message for a reference to a motor or solenoid that the config does not define."""
    hint = difflib.get_close_matches(name, known, n=1)
    msg = f"no {kind} named {excerpt(name)} in [{kind}s]"
    if hint:
        return msg + f"; did you mean {hint[0]!r}?"
    return msg + (f" (known: {', '.join(known)})" if known else
                  f"; none are defined: add a [{kind}s.NAME] table")
