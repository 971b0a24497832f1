"""What the config loader reports: one ConfigIssue per problem (or warning), and the
ConfigError that carries a file's errors."""

from __future__ import annotations

from dataclasses import dataclass


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
