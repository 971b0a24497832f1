"""Helpers shared by the benchmarks: machine description, bundled inputs, timing statistics.

Nothing here measures anything by itself; see ``benchmarks/throughput.py``.
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
from collections.abc import Sequence
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
    return {
        "cpu": cpu_model(),
        "cores": usable_cores(),
        "logical_cpus": os.cpu_count() or 1,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(terse=True),
        "wpilib": wpilib_version,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    }


def machine_line(info: dict[str, str | int]) -> str:
    """One line describing the machine, for tables and reports."""
    cores = f"{info['cores']} usable cores"
    if info["logical_cpus"] != info["cores"]:
        cores += f" of {info['logical_cpus']}"
    return (f"{info['cpu']}, {cores}, {info['python']}, {info['platform']}, "
            f"wpilib {info['wpilib']}, {info['date']}")


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
