"""A compiled copy of the simserver package (the modules simserver/compiled.py lists, built
with mypyc as the release's wheels are), for the benchmarks and tests/test_compiled.py:

    python tools/compile.py [--out build/compiled]

Then ``PYTHONPATH=build/compiled`` runs simserver (its commands, the benchmarks, the robot
bridge) with those modules compiled; the checkout itself stays plain Python, so an edited
source takes effect at once. The copy is rebuilt from scratch each time.
"""

from __future__ import annotations

import argparse
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def build(out: Path) -> Path:
    """Copy simserver/ to ``out`` and compile the listed modules there; returns ``out``."""
    spec = runpy.run_path(str(REPO / "simserver" / "compiled.py"))
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copytree(REPO / "simserver", out / "simserver",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    env = dict(os.environ, CFLAGS=" ".join([os.environ.get("CFLAGS", ""),
                                            *spec["COMPILE_ARGS"]]).strip())
    run = subprocess.run([sys.executable, "-m", "mypyc", *spec["MODULES"]], cwd=out, env=env,
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"mypyc failed:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}")
    shutil.rmtree(out / "build", ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "build" / "compiled",
                    help="where the compiled copy goes (default build/compiled)")
    args = ap.parse_args(argv)
    out = build(args.out.resolve())
    print(f"compiled copy of simserver in {out}: PYTHONPATH={out} runs it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
