"""Bit-identical traces before and after a change: digests of simserver's recorded runs, and
a comparison with another commit that names the first differing record.

Usage (from the repository root, with the project's virtualenv)::

    python tools/traces.py list                      # the cases
    python tools/traces.py digest [--out FILE]       # per-case sha256 + tick counts (JSON)
    python tools/traces.py compare --base REV        # traces of REV vs the working tree
    python tools/traces.py trace --dir DIR           # write the traces themselves

Options of every command that runs cases: ``--cases PATTERN`` (fnmatch, repeatable, e.g.
``'world/*'``), ``--fast`` (only the cases tests/test_traces_unchanged.py runs: no robot
programs), ``--jobs N`` (parallel subprocess cases, default 2).

What a trace is (tools/trace_records.py): every field of every ``World.snapshot()`` after
every tick for in-process worlds; for command-line runs the ``--trace`` CSV, every record of
the ``--record`` data log and the ``--json`` summary. The cases are in tools/trace_cases.py.

Left out, because they depend on the wall clock or the machine, not on the simulation:
the data log's header string (``simserver <version>``), its entry ids and the order of
records sharing one timestamp (the robot program's ``NT:`` values arrive asynchronously),
and the JSON summary's ``wall_time``, ``late_periods`` and ``clock_gap``; absolute paths in
the summary are written ``<repo>`` and ``<work>``.

``compare --base REV`` checks REV out in a temporary git worktree and builds both sides'
traces, each with its own code and its own entry points (model types register through
``[project.entry-points."simserver.models"]``): the virtualenv in use (``sys.prefix``) is
copied once to a cached directory per side (``$TMPDIR/simserver-traces-{base,head}-*``,
copied again when that virtualenv's packages change) and the side's checkout (and its
plugins/) is installed into the copy with ``pip install -e --no-deps``. The worktree is
removed afterwards (``--keep DIR`` keeps both sides' traces in DIR). Exit status: 0 all
identical, 1 a difference, 2 the comparison could not be made.

Golden digests: tests/golden/traces.json, checked by tests/test_traces_unchanged.py. After an
intended change of behaviour, regenerate with ``python tools/traces.py digest --at HEAD
--out tests/golden/traces.json`` (docs/traces.md).
"""

from __future__ import annotations

import argparse
import fcntl
import fnmatch
import hashlib
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from trace_cases import CASES, Case, python_env
from trace_records import FIELDS_SHOWN, Difference, first_difference, line, wpilog_records

__all__ = ["CASES", "environment", "first_difference", "line", "print_table", "run_cases",
           "wpilog_records"]

REPO = Path(__file__).resolve().parents[1]
DIGESTS = "digests.json"
#: Packages whose arithmetic the traces depend on: digests made with other versions differ.
NUMERIC_PACKAGES = ("numpy", "robotpy-wpimath", "robotpy-wpiutil", "robotpy-apriltag",
                    "pyntcore", "photonlibpy")
#: OpenBLAS (numpy's matmul and dot) chooses its kernels for the CPU as it loads, and they
#: round differently (Sapphire Rapids' and Haswell's gave other digests for the camera and
#: game-piece cases): traces are made with Haswell's (AVX2 and FMA) on every x86-64 CPU that
#: has those.
BLAS_CORE = "Haswell"
BLAS_VARIABLE = "OPENBLAS_CORETYPE"


@dataclass
class Result:
    """A case's trace: its file, sha256, ticks (distinct tick/row times), records, wall s."""

    case: str
    path: Path
    sha256: str
    ticks: int
    records: int
    seconds: float


def _cpu_flags() -> set[str]:
    """The CPU's feature flags (Linux; empty elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    found = re.search(r"^flags\s*:(.*)$", text, re.M)
    return set(found.group(1).split()) if found else set()


def numeric_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (this process's environment) with OpenBLAS's kernels pinned to BLAS_CORE,
    where the CPU runs them and nobody chose others."""
    env = dict(os.environ if base is None else base)
    if (BLAS_VARIABLE not in env and platform.machine().lower() in ("x86_64", "amd64")
            and {"avx2", "fma"} <= _cpu_flags()):
        env[BLAS_VARIABLE] = BLAS_CORE
    return env


def pinned() -> bool:
    """Whether numpy's OpenBLAS in this process loaded with the kernels traces are made
    with (the variable is read as the library loads: a process must start with it)."""
    return os.environ.get(BLAS_VARIABLE) == numeric_env().get(BLAS_VARIABLE)


def environment() -> dict[str, str]:
    """What the digests depend on besides the code: the Python, the machine and its C
    library (libm), the BLAS kernels, the numeric packages' versions."""
    libc, libc_version = platform.libc_ver()
    env = {"python": ".".join(platform.python_version_tuple()[:2]),
           "machine": platform.machine(), "libc": f"{libc} {libc_version}".strip(),
           "openblas_coretype": numeric_env().get(BLAS_VARIABLE, "-")}
    for name in NUMERIC_PACKAGES:
        try:
            env[name] = version(name)
        except PackageNotFoundError:
            env[name] = "-"
    return env


def file_name(case: str) -> str:
    return case.replace("/", "__") + ".trace"


def select(patterns: Sequence[str] | None, fast: bool) -> list[Case]:
    """The cases matching any of ``patterns`` (all when None), only ``fast`` ones if asked."""
    out = [c for c in CASES if (not patterns or any(fnmatch.fnmatch(c.name, p)
                                                      for p in patterns))
           and not (fast and c.name.startswith("robot/"))]
    if patterns and not out:
        raise SystemExit(f"no case matches {' '.join(patterns)} (see `traces.py list`)")
    return out


def available(case: Case) -> bool:
    return not case.needs or importlib.util.find_spec(case.needs) is not None


def check_checkout(repo: Path) -> None:
    """Exit 2 unless the ``simserver`` this interpreter imports is ``repo``'s."""
    import simserver

    where = Path(simserver.__file__).resolve()
    if not where.is_relative_to(repo.resolve()):
        raise SystemExit(f"simserver is imported from {where.parent}, not from {repo}: run "
                         f"with PYTHONPATH={repo} (or a virtualenv where it is installed)")


def run_case(case: Case, repo: Path, out: Path) -> Result:
    """Run one case; its trace goes to ``out``/<case>.trace."""
    start = time.perf_counter()
    path = out / file_name(case.name)
    digest = hashlib.sha256()
    times: set[str] = set()
    records = 0
    with tempfile.TemporaryDirectory(prefix="simserver-trace-") as work, path.open("w") as f:
        for record in case.run(repo, Path(work)):
            text = line(record)
            digest.update(text.encode())
            f.write(text)
            records += 1
            if record[0].startswith(("tick=", "t=")):
                times.add(record[0])
    return Result(case.name, path, digest.hexdigest(), len(times), records,
                  time.perf_counter() - start)


def run_cases(repo: Path, cases: Iterable[Case], out: Path, jobs: int = 2) -> list[Result]:
    """Every case, in-process worlds here while command-line runs go on in ``jobs`` threads
    (each waits on its subprocess) and robot programs one at a time after them (port 5810);
    in a new process with the BLAS kernels pinned when this one was not started so."""
    cases = [c for c in cases if available(c)]
    out.mkdir(parents=True, exist_ok=True)
    if not pinned():
        return _run_pinned(repo, cases, out, jobs)
    results: dict[str, Result] = {}
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        futures: list[Future[Result]] = [pool.submit(run_case, c, repo, out) for c in cases
                                         if c.name.startswith("cli/")]
        for c in cases:
            if c.name.startswith("world/"):
                results[c.name] = run_case(c, repo, out)
        for fut in futures:
            r = fut.result()
            results[r.case] = r
    for c in cases:
        if c.name not in results:
            results[c.name] = run_case(c, repo, out)
    return [results[c.name] for c in cases]


def _run_pinned(repo: Path, cases: list[Case], out: Path, jobs: int) -> list[Result]:
    """run_cases in a ``trace`` subprocess started with numeric_env()."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "trace", "--repo", str(repo),
           "--dir", str(out), "--jobs", str(jobs),
           *[arg for c in cases for arg in ("--cases", c.name)]]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=repo, env=numeric_env(python_env(repo)))
    if done.returncode != 0:
        raise RuntimeError(f"tracing failed (exit {done.returncode}): {' '.join(cmd)}")
    seconds = (time.perf_counter() - start) / max(1, len(cases))  # each case's share
    got = json.loads((out / DIGESTS).read_text())["cases"]
    return [Result(c.name, out / file_name(c.name), got[c.name]["sha256"],
                   got[c.name]["ticks"], got[c.name]["records"], seconds) for c in cases]


def commit_of(repo: Path) -> str:
    """``repo``'s HEAD commit, ``+dirty`` when tracked files differ from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    try:
        sha = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("+dirty" if dirty else "")


def digests(repo: Path, results: Sequence[Result]) -> dict:
    return {
        "about": "sha256 of each case's canonical trace at this commit (tools/traces.py); "
                 "regenerate with `python tools/traces.py digest --at <commit> --out "
                 "tests/golden/traces.json`",
        "commit": commit_of(repo),
        "environment": environment(),
        "cases": {r.case: {"sha256": r.sha256, "ticks": r.ticks, "records": r.records}
                  for r in results},
    }


def print_table(results: Sequence[Result], stream=sys.stderr) -> None:
    for r in results:
        print(f"  {r.case:24} {r.ticks:6d} ticks {r.records:9d} records {r.seconds:7.2f} s  "
              f"{r.sha256[:16]}", file=stream)
    print(f"  {'total':24} {sum(r.seconds for r in results):49.2f} s", file=stream)


# --- compare ---------------------------------------------------------------------------------


def git(*args: str, cwd: Path = REPO) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def _site_packages(prefix: Path) -> Path:
    found = sorted(prefix.glob("lib/python3*/site-packages"))
    if not found:
        raise SystemExit(f"{prefix}: no lib/python3*/site-packages")
    return found[0]


def side_python(slot: str, tree: Path) -> Path:
    """The python of a copy of this virtualenv (cached per ``slot``) with ``tree`` and its
    plugins installed in it, editable, without dependencies."""
    source = Path(sys.prefix)
    if sys.prefix == sys.base_prefix:
        raise SystemExit("compare needs a virtualenv's python (e.g. .venv/bin/python): it "
                         "copies the virtualenv for each side")
    tag = hashlib.sha256(str(source).encode()).hexdigest()[:10]
    copy = Path(tempfile.gettempdir()) / f"simserver-traces-{slot}-{tag}"
    stamp = str(_site_packages(source).stat().st_mtime_ns)
    stamp_file = copy / ".traces-source"
    if not stamp_file.exists() or stamp_file.read_text() != stamp:
        print(f"copying {source} to {copy} ...", file=sys.stderr)
        partial = copy.with_name(copy.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(source, partial, symlinks=True)
        shutil.rmtree(copy, ignore_errors=True)
        partial.rename(copy)
        stamp_file.write_text(stamp)
    python = copy / "bin" / "python"
    # The distribution was "simserver" before it became "frc-simserver": the side's own name
    # only, or each built-in model type would register twice.
    subprocess.run([str(python), "-m", "pip", "uninstall", "--quiet", "--yes", "simserver",
                    "frc-simserver"], capture_output=True)
    plugins = [str(p.parent) for p in sorted(tree.glob("plugins/*/pyproject.toml"))]
    cmd = [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "-e", str(tree),
           *[arg for p in plugins for arg in ("-e", p)]]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return python


def trace_side(python: Path, tree: Path, out: Path, args: argparse.Namespace) -> dict:
    """Run ``trace`` for checkout ``tree`` with ``python``; its digests."""
    cmd = [str(python), str(Path(__file__).resolve()), "trace", "--repo", str(tree),
           "--dir", str(out), "--jobs", str(args.jobs), *(["--fast"] if args.fast else []),
           *[arg for p in args.cases or () for arg in ("--cases", p)]]
    print(f"tracing {tree} ...", file=sys.stderr)
    done = subprocess.run(cmd, cwd=tree, env=numeric_env(python_env(tree)))
    if done.returncode != 0:
        raise SystemExit(f"tracing {tree} failed (exit {done.returncode}): {' '.join(cmd)}")
    return json.loads((out / DIGESTS).read_text())


def describe(case: str, diff: Difference) -> str:
    """How a case differs, for people: the first differing record, then how many differ."""
    base, head = diff.base, diff.head
    at = f"{case}: first difference at record {diff.position}"
    if base is None or head is None:
        rest = head if base is None else base
        assert rest is not None
        ended = "base" if base is None else "head"
        return (f"{at}: the {ended} trace ends there; the other goes on with {rest[0]} "
                f"{rest[1]} = {rest[2]}")
    if base[:2] == head[:2]:
        text = f"{at} ({base[0]}), field {base[1]}:\n    base: {base[2]}\n    head: {head[2]}"
    else:
        text = (f"{at}:\n    base: {base[0]} {base[1]} = {base[2]}\n"
                f"    head: {head[0]} {head[1]} = {head[2]}")
    fields = ", ".join(diff.fields) + (" ..." if len(diff.fields) == FIELDS_SHOWN else "")
    if diff.misaligned_at is None:
        return text + f"\n    {diff.differing} records differ, in {fields}"
    return (text + f"\n    from record {diff.misaligned_at} on, the traces list different "
            f"records" + (f"; {diff.differing} differed before, in {fields}"
                          if diff.differing else ""))


class BaseCheckout:
    """REV checked out in a temporary git worktree (removed on exit), with the python of a
    virtualenv copy that has it installed; holds the lock of the shared copies meanwhile."""

    def __init__(self, rev: str):
        self.sha = git("rev-parse", "--verify", f"{rev}^{{commit}}")

    def __enter__(self) -> BaseCheckout:
        self._lock = (Path(tempfile.gettempdir()) / "simserver-traces.lock").open("a")
        fcntl.flock(self._lock, fcntl.LOCK_EX)  # the cached virtualenv copies are shared
        self.tmp = Path(tempfile.mkdtemp(prefix="simserver-traces-"))
        self.tree = self.tmp / "base"
        try:
            git("worktree", "add", "--detach", "--quiet", str(self.tree), self.sha)
            self.python = side_python("base", self.tree)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        subprocess.run(["git", "worktree", "remove", "--force", str(self.tree)], cwd=REPO,
                       capture_output=True)
        subprocess.run(["git", "worktree", "prune"], cwd=REPO, capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)
        self._lock.close()


def compare(args: argparse.Namespace) -> int:
    with BaseCheckout(args.base) as base:
        base_dir, head_dir = base.tmp / "base-traces", base.tmp / "head-traces"
        base_digests = trace_side(base.python, base.tree, base_dir, args)
        head_digests = trace_side(side_python("head", REPO), REPO, head_dir, args)
        status = report(base_digests, head_digests, base_dir, head_dir, base.sha)
        if args.keep:
            for side in (base_dir, head_dir):
                shutil.copytree(side, Path(args.keep) / side.name, dirs_exist_ok=True)
            print(f"traces kept in {args.keep}", file=sys.stderr)
        return status


def digest_at(args: argparse.Namespace) -> int:
    """``digest --at REV``: the digests of REV's own code, made as ``compare`` makes its base
    side."""
    with BaseCheckout(args.at) as base:
        out = trace_side(base.python, base.tree, base.tmp / "traces", args)
    text = json.dumps(out, indent=2) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def report(base: dict, head: dict, base_dir: Path, head_dir: Path, sha: str) -> int:
    """Print identical or the first difference per case; 0 when all are identical."""
    print(f"base {sha[:12]} ({base['commit'][:12]}) vs working tree ({head['commit'][:12]})")
    differ = 0
    for case in sorted(set(base["cases"]) | set(head["cases"])):
        a, b = base["cases"].get(case), head["cases"].get(case)
        if a is None or b is None:
            print(f"{case}: only traced on the {'head' if a is None else 'base'} side")
            differ += 1
        elif a["sha256"] == b["sha256"]:
            print(f"{case}: identical ({a['ticks']} ticks, {a['records']} records)")
        else:
            differ += 1
            diff = first_difference(base_dir / file_name(case), head_dir / file_name(case))
            print(describe(case, diff) if diff else f"{case}: digests differ, traces do not?")
    print("all identical" if not differ else f"{differ} case(s) differ")
    return 1 if differ else 0


# --- command line ----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the cases")
    for name, text in (("trace", "write every case's trace and digests.json to --dir"),
                       ("digest", "print or write (--out) the digests JSON"),
                       ("compare", "traces of --base REV against the working tree")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--cases", action="append", metavar="PATTERN",
                       help="only cases matching this fnmatch pattern (repeatable)")
        p.add_argument("--fast", action="store_true", help="no robot-program cases")
        p.add_argument("--jobs", type=int, default=2, help="parallel subprocess cases")
        if name == "trace":
            p.add_argument("--dir", required=True, type=Path)
            p.add_argument("--repo", type=Path, default=REPO, help="the checkout to trace")
        elif name == "digest":
            p.add_argument("--out", type=Path, help="write here instead of stdout")
            p.add_argument("--at", metavar="REV", help="digest REV's code (in a temporary "
                           "worktree, as compare does) instead of the working tree")
        else:
            p.add_argument("--base", required=True, help="commit, branch or tag")
            p.add_argument("--keep", metavar="DIR", help="copy both sides' traces to DIR")
    args = ap.parse_args(argv)
    if args.command == "list":
        for c in CASES:
            print(f"{c.name:24} {c.doc}" + (f" [needs {c.needs}]" if c.needs else ""))
        return 0
    if args.command == "compare":
        return compare(args)
    if args.command == "digest" and args.at:
        return digest_at(args)
    repo = args.repo.resolve() if args.command == "trace" else REPO
    check_checkout(repo)
    cases = select(args.cases, args.fast)
    if args.command == "trace":
        results = run_cases(repo, cases, args.dir, args.jobs)
        (args.dir / DIGESTS).write_text(json.dumps(digests(repo, results), indent=2) + "\n")
    else:
        with tempfile.TemporaryDirectory(prefix="simserver-traces-") as tmp:
            results = run_cases(repo, cases, Path(tmp), args.jobs)
        text = json.dumps(digests(repo, results), indent=2) + "\n"
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text)
        else:
            sys.stdout.write(text)
    print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
