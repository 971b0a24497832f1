"""Reads Python source for what works on Linux and macOS but not on Windows, used outside a
guard. simserver runs on students' Windows laptops and mentors' Macs: each such use must sit
behind a guard or be replaced by a portable call.

    for finding in check_tree(Path("simserver")):
        print(finding)        # simserver/x.py:12: os.killpg: POSIX-only (os) ...

What it finds (the names: nonposix/posix_only.py):

- an import of a POSIX-only module (fcntl, resource, termios, pwd, grp, ...), or ``from os
  import fork`` / ``from signal import SIGKILL``;
- ``os.<name>`` and ``signal.<name>`` that Windows lacks (``os.fork``, ``os.killpg``,
  ``os.getuid``, ``signal.SIGKILL``, ``signal.SIGHUP``, ``signal.alarm``, ...), any
  ``.SIGKILL``-style attribute (``signal.Signals.SIGSTOP``), and ``getattr(m, "SIGHUP")``
  without a default;
- calls that exist on Windows but do something else there: ``os.kill`` (TerminateProcess,
  whatever the signal: ``os.kill(pid, 0)`` kills), ``select.select`` (sockets only, not
  pipes), ``socket.SO_REUSEADDR`` (lets a second socket take a port in use), the C library
  through ctypes (``CDLL(None)``, ``prctl``), subprocess's POSIX-only arguments
  (``preexec_fn``, ``pass_fds``, ``process_group``, ...) and ``shell=True`` (cmd.exe is no
  POSIX shell);
- string literals that start with a POSIX system path (``"/tmp..."``, ``"/dev/..."``,
  ``"/proc/..."``, ``"/sys/..."``), docstrings aside;
- a file path split on "/" (``x.filename.rsplit("/")``, ``__file__.split("/")``).

A use is guarded, and not reported, when it is

- in either branch of an ``if`` (or a conditional expression, or after the first operand of
  ``and``/``or``) whose test asks the platform: ``sys.platform``, ``os.name``,
  ``platform.system()``, ``hasattr(...)``, ``getattr(m, name, default)``, or a module-level
  name assigned from one of those;
- after such an ``if`` whose body leaves (``raise``, ``return``, ``continue``, ``break``,
  ``sys.exit``): ``if not hasattr(os, "fork"): raise ImportError(...)`` at the top of a
  module guards the module;
- in the body of a ``try`` with an ``except`` for ImportError, ModuleNotFoundError or
  AttributeError, or of ``with contextlib.suppress(...)`` of one of those.

It reads, it does not run: a use reached only through a guarded caller is still reported
(move it behind its own guard, or into a module that refuses to import elsewhere).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.portability.nonposix.posix_only import MODULES, OS_NAMES, PATH_PREFIXES, SIGNAL_NAMES

#: Exceptions whose handler makes a ``try`` body a guard.
GUARD_EXCEPTIONS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})
#: Statements after which the rest of a block is not reached.
EXITS = (ast.Raise, ast.Return, ast.Continue, ast.Break)
#: subprocess keyword arguments that Windows refuses (or that mean a POSIX shell).
POSIX_KEYWORDS = frozenset({"preexec_fn", "pass_fds", "user", "group", "extra_groups", "umask",
                            "process_group", "restore_signals"})
SUBPROCESS_CALLS = frozenset({"Popen", "run", "call", "check_call", "check_output"})
#: Attributes that exist on Windows but behave differently there, by module.
DIFFERENT = {
    "os": {"kill": "on Windows os.kill ends the process at once (TerminateProcess) whatever the "
                   "signal, and os.kill(pid, 0) kills instead of probing: use Popen.poll/"
                   "terminate/kill, or guard it"},
    "select": {name: "on Windows select() takes sockets only, not pipes or files, and has no "
                     "poll/epoll/kqueue: guard it or use threads" for name in
               ("select", "poll", "epoll", "kqueue", "devpoll")},
    "socket": {"SO_REUSEADDR": "on Windows it lets a second socket bind a port in use: set it "
                               "only where os.name == 'posix' (asyncio's rule)",
               "SO_REUSEPORT": "Windows has no SO_REUSEPORT",
               "AF_UNIX": "Windows' Python has no AF_UNIX sockets: use loopback TCP"},
}
PATH_WORDS = ("file", "dir", "path")


@dataclass(frozen=True)
class Finding:
    """One unguarded use: where, what and why it fails on Windows."""

    path: str
    line: int
    what: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}: {self.why}"


def check_tree(root: Path) -> list[Finding]:
    """The findings in every ``*.py`` under ``root``, paths relative to its parent."""
    found: list[Finding] = []
    for path in sorted(root.rglob("*.py")):
        found += check_source(path.read_text(encoding="utf-8"),
                              path.relative_to(root.parent).as_posix())
    return found


def check_source(source: str, path: str = "<source>") -> list[Finding]:
    """The findings in one module's ``source``."""
    tree = ast.parse(source, path)
    checker = _Checker(path, _module_aliases(tree))
    checker.guard_names = {t.id for node in tree.body if isinstance(node, ast.Assign)
                           and checker.is_guard(node.value)
                           for t in node.targets if isinstance(t, ast.Name)}
    checker.docstrings = set(_docstrings(tree))
    checker.block(tree.body, guarded=False)
    return sorted(checker.found, key=lambda f: f.line)


def _module_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> module, for the modules the checker reads attributes of."""
    wanted = {"os", "signal", "select", "socket", "sys", "platform", "ctypes", "subprocess",
              "contextlib"}
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in wanted:
                    aliases[a.asname or a.name] = a.name
    return aliases


def _docstrings(tree: ast.Module) -> Iterator[int]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                    ast.Constant):
                yield id(body[0].value)


class _Checker:
    def __init__(self, path: str, aliases: dict[str, str]):
        self.path = path
        self.aliases = aliases
        self.guard_names: set[str] = set()
        self.docstrings: set[int] = set()
        self.found: list[Finding] = []

    # --- guards ------------------------------------------------------------------------

    def module_of(self, node: ast.expr) -> str | None:
        """The module a Name stands for (``os`` for ``os`` or ``import os as _os``)."""
        return self.aliases.get(node.id) if isinstance(node, ast.Name) else None

    def is_guard(self, test: ast.expr) -> bool:
        """Whether ``test`` asks which platform this is or what it has."""
        for node in ast.walk(test):
            if isinstance(node, ast.Attribute) and (self.module_of(node.value), node.attr) in (
                    ("sys", "platform"), ("os", "name"), ("platform", "system")):
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                    node.func.id == "hasattr" or (node.func.id == "getattr"
                                                  and len(node.args) == 3)):
                return True
            if isinstance(node, ast.Name) and node.id in self.guard_names:
                return True
        return False

    def _catches(self, handlers: list[ast.ExceptHandler]) -> bool:
        names = set()
        for h in handlers:
            kinds = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
            names |= {k.id for k in kinds if isinstance(k, ast.Name)}
        return bool(names & GUARD_EXCEPTIONS)

    def _suppresses(self, item: ast.withitem) -> bool:
        call = item.context_expr
        return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "suppress"
                and any(isinstance(a, ast.Name) and a.id in GUARD_EXCEPTIONS
                        for a in call.args))

    def _leaves(self, body: list[ast.stmt]) -> bool:
        last = body[-1]
        if isinstance(last, EXITS):
            return True
        return (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
                and isinstance(last.value.func, ast.Attribute)
                and (self.module_of(last.value.func.value), last.value.func.attr)
                in (("sys", "exit"), ("os", "_exit")))

    # --- the walk ----------------------------------------------------------------------

    def block(self, body: list[ast.stmt], guarded: bool) -> None:
        for stmt in body:
            self.statement(stmt, guarded)
            if (isinstance(stmt, ast.If) and not stmt.orelse and self.is_guard(stmt.test)
                    and self._leaves(stmt.body)):
                guarded = True  # what follows runs only where the guard let it through

    def statement(self, stmt: ast.stmt, guarded: bool) -> None:
        if isinstance(stmt, ast.If):
            inner = guarded or self.is_guard(stmt.test)
            self.expr(stmt.test, guarded)
            self.block(stmt.body, inner)
            self.block(stmt.orelse, inner)
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self.block(stmt.body, guarded or self._catches(stmt.handlers))
            for h in stmt.handlers:
                self.block(h.body, guarded)
            self.block(stmt.orelse, guarded)
            self.block(stmt.finalbody, guarded)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.expr(item.context_expr, guarded)
            self.block(stmt.body, guarded or any(self._suppresses(i) for i in stmt.items))
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if not guarded:
                self.imports(stmt)
        else:
            for field, value in ast.iter_fields(stmt):
                if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                    self.block(value, guarded)
                elif isinstance(value, list):
                    for v in value:
                        if isinstance(v, ast.AST):
                            self.expr(v, guarded)
                elif isinstance(value, ast.AST) and field != "ctx":
                    self.expr(value, guarded)

    def expr(self, node: ast.AST, guarded: bool) -> None:
        if isinstance(node, ast.IfExp):
            inner = guarded or self.is_guard(node.test)
            for part in (node.test, node.body, node.orelse):
                self.expr(part, inner)
            return
        if isinstance(node, ast.BoolOp):
            for value in node.values:
                self.expr(value, guarded)
                guarded = guarded or self.is_guard(value)
            return
        if isinstance(node, ast.JoinedStr):  # only its start can be a path's start
            if node.values:
                self.expr(node.values[0], guarded)
            for v in node.values[1:]:
                if isinstance(v, ast.FormattedValue):
                    self.expr(v, guarded)
            return
        if not guarded:
            self.use(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):  # a lambda's or comprehension's body is an expr
                self.statement(child, guarded)
            else:
                self.expr(child, guarded)

    # --- what is reported --------------------------------------------------------------

    def report(self, node: ast.AST, what: str, why: str) -> None:
        self.found.append(Finding(self.path, getattr(node, "lineno", 0), what, why))

    def imports(self, stmt: ast.Import | ast.ImportFrom) -> None:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.name.partition(".")[0] in MODULES:
                    self.report(stmt, f"import {a.name}", "Windows has no such module: import "
                                "it in a try/except ImportError or behind a platform check")
            return
        if stmt.level or stmt.module is None:
            return
        top = stmt.module.partition(".")[0]
        if top in MODULES:
            self.report(stmt, f"from {stmt.module} import ...", "Windows has no such module")
        names = {"os": OS_NAMES, "signal": SIGNAL_NAMES}.get(stmt.module, frozenset())
        for a in stmt.names:
            if a.name in names:
                self.report(stmt, f"from {stmt.module} import {a.name}",
                            f"Windows' {stmt.module} has no {a.name}")

    def use(self, node: ast.AST) -> None:
        if isinstance(node, ast.Attribute):
            self.attribute(node)
        elif isinstance(node, ast.Call):
            self.call(node)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in self.docstrings and node.value.startswith(PATH_PREFIXES)):
            self.report(node, repr(node.value[:30]), "a POSIX system path: Windows has none "
                        "(tempfile.gettempdir(), os.devnull, a guarded Linux-only branch)")

    def attribute(self, node: ast.Attribute) -> None:
        module = self.module_of(node.value)
        name = node.attr
        if module == "os" and name in OS_NAMES:
            self.report(node, f"os.{name}", "POSIX-only: Windows' os has no such name")
        elif name in SIGNAL_NAMES and (module == "signal" or name.startswith("SIG")):
            self.report(node, f"signal.{name}", "POSIX-only: Windows has only SIGINT, SIGTERM, "
                        "SIGABRT, SIGFPE, SIGILL, SIGSEGV and SIGBREAK")
        elif module in DIFFERENT and name in DIFFERENT[module]:
            self.report(node, f"{module}.{name}", DIFFERENT[module][name])
        elif name == "prctl":
            self.report(node, "prctl", "Linux-only system call")

    def call(self, node: ast.Call) -> None:
        func = node.func
        fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if (fname == "getattr" and len(node.args) == 2 and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in OS_NAMES | SIGNAL_NAMES):
            self.report(node, f"getattr(..., {node.args[1].value!r})", "POSIX-only name with "
                        "no default: give getattr a default or guard it with hasattr")
        if fname in ("CDLL", "LoadLibrary") and node.args and (
                isinstance(node.args[0], ast.Constant) and (
                    node.args[0].value is None or "libc" in str(node.args[0].value))):
            self.report(node, f"{fname}({ast.unparse(node.args[0])})",
                        "the C library of POSIX systems: Windows has no libc to load")
        if fname in SUBPROCESS_CALLS:
            for kw in node.keywords:
                if kw.arg in POSIX_KEYWORDS:
                    self.report(node, f"{fname}({kw.arg}=...)", "a POSIX-only argument: "
                                "Windows refuses it")
                elif (kw.arg == "shell" and isinstance(kw.value, ast.Constant)
                      and kw.value.value is True):
                    self.report(node, f"{fname}(shell=True)", "runs cmd.exe on Windows, not a "
                                "POSIX shell: pass an argument list")
        if (fname in ("split", "rsplit") and isinstance(func, ast.Attribute) and node.args
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == "/"
                and _names_a_path(func.value)):
            self.report(node, f"{ast.unparse(func)}('/')", "splits a file path on '/': "
                        "Windows paths use '\\\\' too; use pathlib (Path(p).name, .parts)")


def _names_a_path(node: ast.expr) -> bool:
    """Whether ``node`` (a name or attribute) looks like a file path: __file__, filename, ..."""
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return any(word in name.lower() for word in PATH_WORDS)
