"""The modules the release wheels compile with mypyc, and whether this copy of them is.

The pure-float hot spots (tire contacts, the swerve, tank-traction and mecanum steps, polygon
collisions, the game pieces' pair solver, the linear-system closed forms) compile unchanged
with mypyc, the mypy project's compiler of type-annotated Python: the same IEEE double
arithmetic and math library in C (floating-point contraction off), bit for bit the
interpreted results (tests/test_compiled.py), in about three quarters of the time for a whole
world (benchmarks/RESULTS.md). The source stays plain Python: a checkout runs it as it is; wheels
are compiled when built with ``SIMSERVER_COMPILE=1`` (setup.py; the release does), and
``make compiled`` builds a compiled copy of the package in build/compiled for the benchmarks.
"""

from __future__ import annotations

import importlib
import importlib.machinery

#: Source files compiled, relative to the project root.
MODULES = (
    "simserver/models/tires.py",
    "simserver/models/swerve.py",
    "simserver/models/tank_traction.py",
    "simserver/models/mecanum.py",
    "simserver/models/collision.py",
    "simserver/models/linear.py",
    "simserver/models/pieces/few.py",
)

#: Compiler flags: no fused multiply-add (a·b + c rounded once), which would change results.
COMPILE_ARGS = ("-ffp-contract=off",)


def module_names() -> list[str]:
    """The compiled modules' import names."""
    return [path.removesuffix(".py").replace("/", ".") for path in MODULES]


def compiled() -> list[str]:
    """Those of :data:`MODULES` that this interpreter loaded as compiled extension modules."""
    out = []
    for name in module_names():
        module = importlib.import_module(name)
        if any(str(getattr(module, "__file__", "")).endswith(suffix)
               for suffix in importlib.machinery.EXTENSION_SUFFIXES):
            out.append(name)
    return out
