"""Helpers shared by the benchmarks: machine description, bundled inputs, timing statistics,
the machine-wide lock for robot programs (port 5810) and process memory readings.

Nothing here measures anything by itself; see ``benchmarks/throughput.py``.
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import os
import platform
import statistics
import sys
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path

from simserver.config.model import Config
from simserver.io.scripted import Script, load_script

S_CURVE = "s_curve.csv"


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, or what the platform module knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Hardware", "Processor") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def usable_cores() -> int:
    """Cores this process may run on (the affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def machine_info() -> dict[str, str | int]:
    """What the figures were measured on."""
    try:
        from importlib.metadata import version

        wpilib_version = version("wpilib")
    except Exception:  # pragma: no cover - wpilib missing or unreadable metadata
        wpilib_version = "?"
    from simserver.compiled import MODULES, compiled

    done = len(compiled())
    build = ("interpreted" if done == 0 else
             f"{done} of {len(MODULES)} hot modules compiled (mypyc, `make compiled`)")
    return {
        "cpu": cpu_model(),
        "cores": usable_cores(),
        "logical_cpus": os.cpu_count() or 1,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(terse=True),
        "wpilib": wpilib_version,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "simserver": build,
    }


def machine_line(info: dict[str, str | int]) -> str:
    """One line describing the machine, for tables and reports."""
    cores = f"{info['cores']} usable cores"
    if info["logical_cpus"] != info["cores"]:
        cores += f" of {info['logical_cpus']}"
    return (f"{info['cpu']}, {cores}, {info['python']}, {info['platform']}, "
            f"wpilib {info['wpilib']}, simserver {info.get('simserver', '?')}, {info['date']}")


def bundled_script(cfg: Config, name: str = S_CURVE) -> Script:
    """A CSV script shipped in ``simserver/data``, validated against ``cfg``'s inputs."""
    ref = resources.files("simserver").joinpath("data", name)
    with resources.as_file(ref) as path:
        return load_script(Path(path), list(cfg.motors), list(cfg.solenoids))


def summarize(values: Sequence[float], higher_is_better: bool = True) -> dict[str, float]:
    """Best and median of repeated measurements."""
    best = max(values) if higher_is_better else min(values)
    return {"best": best, "median": statistics.median(values)}


def text_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Lines of a plain-text table: first column left-aligned, the rest right-aligned, a rule
    under the header."""
    table = [list(head), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    lines = []
    for n, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:],
                                                                         strict=True)]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def emit(table: str, markdown: str, output: Path | None) -> None:
    """Print a benchmark's table; with ``output``, append its Markdown to that file."""
    print(table)
    if output:
        with output.open("a", encoding="utf-8") as fh:
            if fh.tell() > 0:
                fh.write("\n")
            fh.write(markdown)
        print(f"\nMarkdown appended to {output}")


# --- robot programs: one at a time on this machine ----------------------------------------------

ROBOT_LOCK = Path("/tmp/simserver-5810.lock")


def _parent(pid: int) -> int:
    """Parent pid of ``pid`` (0 when unknown)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _lock_holders(path: Path) -> set[int]:
    """Pids holding a flock(2) lock on ``path`` according to /proc/locks (empty if unknown)."""
    try:
        st = path.stat()
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return set()
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    holders = set()
    for line in lines:
        parts = line.split()
        # "1: FLOCK  ADVISORY  WRITE 14767 fe:00:2146460 0 EOF" (blocked waiters have "->")
        if len(parts) >= 6 and parts[1] == "FLOCK" and "->" not in parts and parts[5] == dev:
            with contextlib.suppress(ValueError):
                holders.add(int(parts[4]))
    return holders


def held_by_an_ancestor(path: Path = ROBOT_LOCK) -> bool:
    """Whether this process or one of its ancestors holds the lock on ``path`` (for instance a
    command run as ``flock /tmp/simserver-5810.lock make bench``): taking it again would wait
    for ourselves."""
    holders = _lock_holders(path)
    pid = os.getpid()
    while pid > 1:
        if pid in holders:
            return True
        pid = _parent(pid)
    return False


@contextlib.contextmanager
def robot_program_lock(path: Path = ROBOT_LOCK) -> Iterator[None]:
    """Hold the machine-wide lock of robot programs for the duration of the block.

    Robot programs (``robotpy sim``) bind TCP port 5810, so only one may run at a time on a
    machine; everyone who starts one takes an exclusive flock(2) on ``path`` first (from a
    shell: ``flock /tmp/simserver-5810.lock <command>``). A lock already held by an ancestor
    process counts as ours. Waits (saying so on stderr) while someone else holds it."""
    if held_by_an_ancestor(path):
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for {path} (another robot program runs on this machine)",
                  file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


# --- memory ----------------------------------------------------------------------------------


def memory_kib(pid: int | str = "self") -> dict[str, int]:
    """Resident set size now (``rss``) and its peak so far (``hwm``, high-water mark) of a
    process, KiB, from /proc/<pid>/status (Linux). Empty when unreadable."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out["rss" if key == "VmRSS" else "hwm"] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        return {}
    return out
