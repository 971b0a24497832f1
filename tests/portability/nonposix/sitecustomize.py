"""A Python without what Windows lacks, as simserver's code sees it, on Linux.

With this folder first on PYTHONPATH, every interpreter that starts (and each one it starts,
which inherits PYTHONPATH: the robot program of ``simserver init``, a sweep's programs) gives
the modules in scope (``simserver.*``; more with SIMSERVER_NON_POSIX_SCOPE, comma-separated
prefixes) a standard library without what Windows' lacks (the lists: ``posix_only``):
``import fcntl`` (resource, termios, pwd, grp ...) raises ModuleNotFoundError, and their
``os`` and ``signal`` have no ``fork``, ``killpg``, ``getuid``, ``SIGKILL``, ``SIGHUP`` ...

Only the modules in scope: numpy, ntcore, matplotlib and the standard library itself keep
their Linux branches (they ask ``sys.platform``, which stays "linux"; each ships for Windows
and tests there). ``os.name`` stays "posix" and paths keep "/": code that tests what exists
(``hasattr(os, "killpg")``, ``try: import fcntl``) takes its Windows branch here, code that
asks ``os.name`` or ``sys.platform`` its POSIX one (the AST checker reads both branches).

Its stdout and stderr are cp1252, as Windows' Python writes a redirected stream (a CI log,
``simserver models > types.txt``) in the ANSI code page: strict on stdout, backslashreplace on
stderr. It also turns a text file opened with the locale's encoding by simserver into an error
(EncodingWarning, with PYTHONWARNDEFAULTENCODING=1): Windows' locale encoding is not UTF-8.
"""

from __future__ import annotations

import builtins
import os
import signal
import sys
import types
import warnings
from typing import Any

from posix_only import MODULES, OS_NAMES, SIGNAL_NAMES

SCOPE = ("simserver", *filter(None, os.environ.get("SIMSERVER_NON_POSIX_SCOPE", "").split(",")))


class _Without(types.ModuleType):
    """``real`` without the attributes ``hidden`` (AttributeError, as on Windows)."""

    def __init__(self, real: types.ModuleType, hidden: frozenset[str]):
        super().__init__(real.__name__, real.__doc__)
        self.__dict__["_real"], self.__dict__["_hidden"] = real, hidden

    def __getattr__(self, name: str) -> Any:
        if name in self._hidden:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r} "
                                 "(non-POSIX test interpreter)")
        return getattr(self._real, name)

    def __dir__(self) -> list[str]:
        return [n for n in dir(self._real) if n not in self._hidden]


VIEWS = {"os": _Without(os, OS_NAMES), "signal": _Without(signal, SIGNAL_NAMES)}
_real_import = builtins.__import__


def _in_scope(globals_: dict[str, Any] | None) -> bool:
    if not globals_:
        return False
    name = globals_.get("__name__") or ""
    spec = globals_.get("__spec__")
    if name == "__main__" and spec is not None:
        name = spec.name
    return any(name == p or name.startswith(p + ".") for p in SCOPE)


def _import(name: str, globals: dict[str, Any] | None = None, locals: Any = None,
            fromlist: Any = (), level: int = 0) -> Any:
    if level == 0 and _in_scope(globals):
        top = name.partition(".")[0]
        if top in MODULES:
            raise ModuleNotFoundError(f"No module named {name!r} (non-POSIX test "
                                      "interpreter)", name=name)
        if top in VIEWS:
            module = _real_import(name, globals, locals, fromlist, level)
            return VIEWS[top] if module is sys.modules[top] else module
    return _real_import(name, globals, locals, fromlist, level)


def install() -> None:
    builtins.__import__ = _import
    warnings.filterwarnings("ignore", category=EncodingWarning)  # the libraries' own
    warnings.filterwarnings("error", category=EncodingWarning, module=r"simserver(\.|$)")
    if not os.environ.get("PYTHONIOENCODING"):
        sys.stdout.reconfigure(encoding="cp1252", errors="strict")  # type: ignore[union-attr]
        sys.stderr.reconfigure(encoding="cp1252",  # type: ignore[union-attr]
                               errors="backslashreplace")
    os.environ["SIMSERVER_NON_POSIX_TEST"] = "1"


install()
