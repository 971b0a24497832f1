"""How long the CI recipe teams paste (examples/ci/simserver.yml) takes, cold and warm.

Runs the recipe's own steps, read from the YAML, as a GitHub runner would after checkout and
setup-python: a fresh virtualenv, then "Install simserver and the robot's requirements" and
"Autonomous scenario check" in a copy of a robot project (examples/kitbot; examples/ctre_swerve,
whose pyproject.toml requires phoenix6 and commands2). Cold: an empty pip cache, everything
downloaded from the package index. Warm: the same cache again in a new virtualenv, as
setup-python's `cache: pip` gives a later job. frc-simserver itself comes from a wheel built
from this checkout (--find-links), since this version is not on PyPI yet; the rest from the
index. The figures go in docs/ci.md.

Not part of `make bench`: it downloads several hundred MB and depends on the network.

Usage::

    python benchmarks/ci_recipe.py [--projects kitbot,ctre_swerve] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "examples" / "ci" / "simserver.yml"
INSTALL = "Install simserver and the robot's requirements"
CHECK = "Autonomous scenario check"


def recipe_steps() -> tuple[dict[str, str], str]:
    """(the job's env, {step name: script}) of the recipe."""
    doc = yaml.safe_load(RECIPE.read_text())
    (job,) = doc["jobs"].values()
    return doc["env"], {s["name"]: s["run"] for s in job["steps"] if "run" in s}


def bash(script: str, cwd: Path, env: dict[str, str]) -> float:
    """Run ``script`` as a `run:` step; its wall time (s). Raises on failure."""
    start = time.monotonic()
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                          cwd=cwd, env=env, capture_output=True, text=True)
    took = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"step failed in {cwd} (exit {done.returncode}):\n"
                         f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return took


def phase(name: str, work: Path, wheels: Path, cache: Path, projects: list[str],
          python: str) -> list[tuple[str, str, float]]:
    """One runner's worth: a new venv, then the recipe's steps per project."""
    job_env, scripts = recipe_steps()
    venv = work / f"venv-{name}"
    start = time.monotonic()
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    rows = [(name, "python -m venv (setup-python's part)", time.monotonic() - start)]
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(work),
           "PIP_CACHE_DIR": str(cache), "PIP_FIND_LINKS": str(wheels),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONUNBUFFERED": "1", **job_env}
    for cert in ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"):
        if cert in os.environ:
            env[cert] = os.environ[cert]
    for project in projects:
        copy = work / f"{name}-{project}"
        shutil.copytree(REPO / "examples" / project, copy)
        rows.append((name, f"{project}: {INSTALL}", bash(scripts[INSTALL], copy, env)))
        rows.append((name, f"{project}: {CHECK}", bash(scripts[CHECK], copy, env)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--projects", default="kitbot,ctre_swerve")
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temp dir)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter the runner's setup-python would give")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="simserver-ci-recipe-"))
    work.mkdir(parents=True, exist_ok=True)
    wheels, cache = work / "wheels", work / "pip-cache"
    shutil.rmtree(cache, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(REPO),
                    "-w", str(wheels)], check=True)
    projects = args.projects.split(",")
    rows = []
    for name in ("cold", "warm"):
        rows += phase(name, work, wheels, cache, projects, args.python)
    print("| cache | step | wall s |\n| --- | --- | ---: |")
    for name, what, took in rows:
        print(f"| {name} | {what} | {took:.1f} |")
    for name in ("cold", "warm"):
        total = sum(t for n, _, t in rows if n == name)
        print(f"| {name} | total | {total:.1f} |")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
