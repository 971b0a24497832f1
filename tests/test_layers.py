"""The layering of ARCHITECTURE.md, checked on every module's imports (parsed with ``ast``: the
module level, function bodies and ``TYPE_CHECKING`` blocks alike).

- models/ (pure physics) imports only models/, units and util/ (leaf helpers that import no
  other layer). Not field/: field/ holds season data built from models' types (``Fiducial``,
  ``Obstacle``), so it sits above models; a model gets field data from its caller.
- field/ imports only models/ and units.
- contract/ (the Snapshot and the topic contract) imports only models/, units, util/ and
  config/: the contract of a robot is assembled from its Config (``contract_for``), and
  config/ never imports contract/, so there is no cycle.
- config/ never imports world/, io/ or runs/ (nor contract/).
- io/ never imports world/, runs/, bridge/, initcmd/ or the cli: it depends on the snapshot and
  the topic declarations.
- world/ never imports io/, runs/, bridge/ or the cli.
- sysid/ (``simserver sysid``: the SysId routine on a World, its fit and log) imports only
  world/, config/, models/, util/ and units; nothing below it (world/, config/, io/, and the
  layers with an allow-list) imports sysid/.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "simserver"

# layer -> the layers it may import (None: any but FORBIDDEN's)
ALLOWED: dict[str, set[str]] = {
    "models": {"models", "units", "util"},
    "field": {"field", "models", "units"},
    "contract": {"contract", "models", "units", "util", "config"},
    "sysid": {"sysid", "world", "config", "models", "util", "units"},
}
FORBIDDEN: dict[str, set[str]] = {
    "config": {"world", "io", "runs", "contract", "sysid"},
    "io": {"world", "runs", "bridge", "initcmd", "cli", "sysid"},
    "world": {"io", "runs", "bridge", "cli", "sysid"},
}
# Tolerated violations: (module, imported module) -> why. None today; one added here must say
# why and when it goes.
KNOWN: dict[tuple[str, str], str] = {}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (ROOT.parent / rel).with_suffix(".py").is_file() or (ROOT.parent / rel).is_dir()


def imports(path: Path) -> set[str]:
    """Every simserver module ``path`` imports, anywhere in the file."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if _is_module(sub) else base)
    return {m for m in out if m == "simserver" or m.startswith("simserver.")}


def layer(module: str) -> str:
    """``simserver.io.nt`` -> "io"; ``simserver.units`` -> "units"; the package itself -> ""."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def violations() -> list[tuple[str, str]]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        module = module_name(path)
        own = layer(module)
        for target in sorted(imports(path)):
            other = layer(target)
            if other in ("", own):
                continue
            allowed, forbidden = ALLOWED.get(own), FORBIDDEN.get(own, set())
            if (allowed is not None and other not in allowed) or other in forbidden:
                out.append((module, target))
    return out


def test_the_import_parser_sees_local_relative_and_type_checking_imports(tmp_path):
    found = imports(ROOT / "io" / "nt.py")
    assert "simserver.contract.topics" in found and "simserver.io.field2d" in found
    assert "simserver.models.camera" in found  # imported under a name, not a module
    assert "simserver.io.photonresult" in found  # inside a function
    assert "simserver.models.obstacles" in imports(ROOT / "models" / "camera.py")  # TYPE_CHECKING


@pytest.mark.parametrize("rule", sorted({*ALLOWED, *FORBIDDEN}))
def test_layer_imports_only_what_it_may(rule):
    assert (ROOT / rule).is_dir(), f"no layer {rule}"
    mine = [v for v in violations() if layer(v[0]) == rule]
    found = [v for v in mine if v not in KNOWN]
    assert not found, "\n".join(f"{m} imports {t}" for m, t in found)
    tolerated = [KNOWN[v] for v in mine if v in KNOWN]
    if tolerated:
        pytest.xfail("; ".join(tolerated))


def test_tolerated_violations_are_still_there():
    """A tolerated violation that is gone must leave KNOWN, so the list stays true."""
    gone = [k for k in KNOWN if k not in violations()]
    assert not gone, f"no longer imported, remove from KNOWN: {gone}"
