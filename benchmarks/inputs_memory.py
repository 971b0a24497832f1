"""Memory: loading a large ``--inputs`` CSV, next to the rows kept as text.

What is measured
    A CSV of ``time,left,right`` rows at 1 ms (``12.345,0.123456,-0.654321``: 27 bytes a row,
    random duties) of the given size, written to a temporary directory, then loaded by
    ``simserver.io.scripted.load_script`` for the kitbot's two motors in a fresh process: its
    peak RSS (VmHWM of /proc/self/status) and the wall time of the load.

Reference
    The same file read by ``csv.reader`` into a list of rows (lists of strings), which is what
    ``load_script`` kept before it stored values as 8-byte floats. Each process's share for the
    file is its peak above a fresh process with the same imports only.

Usage: run by ``benchmarks/run_all.py``, or alone::

    python benchmarks/inputs_memory.py [MEGABYTES]     # default 60
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    from benchmarks._common import text_table
    from benchmarks.memory import process_kib
except ImportError:  # run as a script: benchmarks/ itself is on sys.path
    from _common import text_table  # type: ignore
    from memory import process_kib  # type: ignore

IMPORT = "from simserver.io.scripted import load_script"
LOAD = IMPORT + "\nscript = load_script({path!r}, ['left', 'right'], [])"
CSV = "import csv"
AS_TEXT = CSV + "\nrows = list(csv.reader(open({path!r}, newline='', encoding='utf-8')))"


def write_csv(path: Path, megabytes: float, seed: int = 1) -> int:
    """Write the benchmark's CSV of about ``megabytes`` MB (10^6 bytes); its data rows."""
    rng = random.Random(seed)
    rows = 0
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write("time,left,right\n")
        while fh.tell() < megabytes * 1e6:
            lines = [f"{(rows + k) * 0.001:.3f},{rng.uniform(-1, 1):.6f},"
                     f"{rng.uniform(-1, 1):.6f}\n" for k in range(10000)]
            fh.write("".join(lines))
            rows += len(lines)
    return rows


def _timed_kib(code: str) -> tuple[dict[str, int], float]:
    start = time.perf_counter()
    kib = process_kib(code)
    return kib, time.perf_counter() - start


def measure_inputs_memory(megabytes: float = 60.0) -> dict[str, Any]:
    """Peak RSS (KiB) and wall time (s) of each process, for a CSV of ``megabytes`` MB."""
    with tempfile.TemporaryDirectory(prefix="simserver-bench-") as tmp:
        path = Path(tmp) / "inputs.csv"
        rows = write_csv(path, megabytes)
        size = path.stat().st_size
        imports = process_kib(IMPORT)
        csv_only = process_kib(CSV)
        loaded, t_load = _timed_kib(LOAD.format(path=str(path)))
        text, t_text = _timed_kib(AS_TEXT.format(path=str(path)))
    return {"bytes": size, "rows": rows, "import": imports, "csv": csv_only, "load": loaded,
            "text": text, "t_load": t_load, "t_text": t_text}


def _mib(kib: float) -> str:
    return f"{kib / 1024:.1f}"


HEAD = ["process", "peak RSS MiB", "of which the file MiB", "wall s"]


def _rows(res: dict[str, Any]) -> list[list[str]]:
    """The file's share: peak RSS above the same process's imports alone."""
    load, text = res["load"]["hwm"], res["text"]["hwm"]
    return [
        ["load_script (values as 8-byte floats)", _mib(load),
         _mib(load - res["import"]["hwm"]), f"{res['t_load']:.1f}"],
        ["reference: csv.reader, rows kept as text", _mib(text),
         _mib(text - res["csv"]["hwm"]), f"{res['t_text']:.1f}"],
    ]


def _title(res: dict[str, Any]) -> str:
    return (f"Inputs CSV: {res['bytes'] / 1e6:.0f} MB, {res['rows']:,} rows of time and two "
            "duty cycles at 1 ms, loaded in a fresh process")


def _notes(res: dict[str, Any]) -> list[str]:
    per_row = (res["load"]["hwm"] - res["import"]["hwm"]) * 1024 / max(1, res["rows"])
    return [f"The file's share is the peak RSS above the same process with its imports only "
            f"({_mib(res['import']['hwm'])} MiB for load_script, {_mib(res['csv']['hwm'])} MiB "
            "for csv); wall time includes starting the process.",
            f"load_script keeps {per_row:.0f} bytes a row above its imports (three 8-byte "
            "values and the arrays' growth room); inputs CSVs are refused above 64 MiB "
            "(docs/quickstart.md).",
            "Before values were kept as floats (commit aeb784f kept every row as text, then "
            "each value as a Python float), a 60 MB file of the same shape took 1,312 MiB "
            "peak RSS in load_script and 1,316 MiB in `simserver run --fast --duration 1 "
            "--inputs` (/usr/bin/time -v, maximum resident set size); after, 110 MiB and "
            "124 MiB (the same run with the bundled S-curve: 75 MiB)."]


def format_table(res: dict[str, Any]) -> str:
    """Plain-text table."""
    return "\n".join([_title(res), *text_table(HEAD, _rows(res)), "", *_notes(res)])


def format_markdown(res: dict[str, Any]) -> str:
    """Markdown section."""
    lines = [f"### {_title(res)}", "", "| " + " | ".join(HEAD) + " |", "|---|---:|---:|---:|"]
    lines += ["| " + " | ".join(r) + " |" for r in _rows(res)]
    lines += ["", *[f"- {n}" for n in _notes(res)]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    res = measure_inputs_memory(float(args[0]) if args else 60.0)
    print(format_table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
