"""``simserver sweep SWEEP.toml``: many seeded lock-step runs of one robot program on Ray, and
what passed (spec: :mod:`~simserver.sweeps.spec`; one run: :mod:`~simserver.sweeps.run`; Ray:
:mod:`~simserver.sweeps.distributed`; results: :mod:`~simserver.sweeps.results`)."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from simserver.config.issues import ConfigError

EXIT_BAD_INPUT = 2
#: The exit status of a sweep stopped by Ctrl-C (the shell's for SIGINT).
EXIT_INTERRUPTED = 130


def _echo_error(exc: ConfigError) -> None:
    for issue in exc.issues:
        click.echo(issue.render(exc.source), err=True)


def load_checked(path: str, progress: bool = False) -> Any:
    """The sweep in ``path`` with every run's config loaded and built as its run will (what
    ``simserver check`` accepts, ``simserver sweep`` runs); exit 2 naming the file and key
    otherwise."""
    from simserver.sweeps.sampling import check_runs
    from simserver.sweeps.spec import load_sweep

    try:
        sweep = load_sweep(path)
        if progress:
            with click.progressbar(length=sweep.runs, label="checking each run's config",
                                   file=sys.stderr) as bar:
                check_runs(sweep, lambda done: bar.update(1))
        else:
            check_runs(sweep)
    except ConfigError as exc:
        _echo_error(exc)
        click.echo(f"{path}: sweep not usable; nothing was started.", err=True)
        sys.exit(EXIT_BAD_INPUT)
    for line in (*sweep.config.warnings, *sweep.warnings):
        click.echo(line, err=True)
    return sweep


def check_sweep(path: str) -> str:
    """The line ``simserver check`` prints for a usable sweep file (exit 2 otherwise)."""
    sweep = load_checked(path)
    what = f"robot program {sweep.robot}" if sweep.robot else f"inputs {sweep.inputs}"
    varied = ", ".join(v.key for v in sweep.vary) or "sim.seed only"
    return (f"{path}: OK (sweep of {sweep.runs} runs of {what} against {sweep.check_path}; "
            f"varies {varied}; every run's config checked)")


@click.command("sweep")
@click.argument("sweep_file", type=click.Path(dir_okay=False))
@click.option("--address", metavar="ADDRESS",
              help="A Ray cluster to run on (as `ray start --head` printed it, e.g. "
              "192.168.1.10:6379; default: $RAY_ADDRESS, else a local Ray instance).")
@click.option("--workers", type=click.IntRange(min=1),
              help="Runs at once on a local Ray instance (default: one per core).")
@click.option("--runs", "count", type=click.IntRange(min=1),
              help="Only the first N runs of the sweep (a quick try; at most its `runs`).")
@click.option("--run", "one", type=click.IntRange(min=0), metavar="I",
              help="Repeat run I alone, here, without Ray, keeping its files (its config, the "
              "robot program's output, a trace) in OUT/run-I.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Where results go (default: SWEEP_FILE's name + '-results', here).")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar on stderr (default: when stderr is a terminal).")
def sweep_cmd(sweep_file: str, address: str | None, workers: int | None, count: int | None,
              one: int | None, out: Path | None, progress: bool | None) -> None:
    """Run the robot program of SWEEP_FILE many times, each run with its own seed and drawn
    config values, and report what share passed its scenario (docs/sweeps.md).

    Writes OUT/runs.jsonl (one record per run, by run), OUT/summary.json, OUT/sweep.png and
    the robot program's output of each failed run. Exit status: 0 when the pass rate meets
    the sweep's pass_rate, 1 when not, 2 for a sweep file, config or scenario that is not
    usable (nothing runs), 130 when stopped by Ctrl-C (what ended is written).

    \b
    Examples:
      simserver sweep sweep.toml                      # local Ray, one run per core
      simserver sweep sweep.toml --runs 20            # the first 20 runs only
      simserver sweep sweep.toml --address head:6379  # a Ray cluster
      simserver sweep sweep.toml --run 37             # repeat run 37 alone
    """
    show = progress if progress is not None else sys.stderr.isatty()
    sweep = load_checked(sweep_file, progress=show)
    out = out or Path(f"{Path(sweep_file).stem}-results")
    if one is not None:
        sys.exit(_repeat(sweep, sweep_file, one, out))
    if count is not None and count > sweep.runs:
        raise click.BadParameter(f"{count}: {sweep_file} has {sweep.runs} runs (its "
                                 "`runs`)", param_hint="--runs")
    planned = count or sweep.runs
    sys.exit(_sweep(sweep, sweep_file, planned, address, workers, out, show))


def _repeat(sweep: Any, sweep_file: str, index: int, out: Path) -> int:
    """Run ``index`` alone with its files kept; its verdict printed; 0 if it passed."""
    from simserver.sweeps.run import run_one
    from simserver.sweeps.sampling import plan_run

    if index >= sweep.runs:
        click.echo(f"{sweep_file}: the sweep has runs 0 to {sweep.runs - 1}, not {index}",
                   err=True)
        return EXIT_BAD_INPUT
    plan = plan_run(sweep, index)
    folder = out / f"run-{index}"
    click.echo(f"run {index}: sim.seed {plan.seed}; "
               + ", ".join(f"{k} = {v!r}" for k, v in plan.values.items()), err=True)
    record = run_one(sweep, plan, keep=folder)
    for check in record["checks"]:
        click.echo(f"  {check['name']}: {'PASS' if check['passed'] else 'FAIL'}  "
                   f"expected {check['expected']}, measured {check['measured']}")
    if record["error"]:
        click.echo(f"  error: {record['error']}")
    click.echo(f"run {index}: {'PASS' if record['passed'] else 'FAIL'}; files in {folder}")
    (folder / "record.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return 0 if record["passed"] else 1


def _sweep(sweep: Any, sweep_file: str, planned: int, address: str | None,
           workers: int | None, out: Path, show: bool) -> int:
    """Run the sweep's first ``planned`` runs on Ray, write the results, return the status."""
    from simserver.config.plausible import field_dimensions
    from simserver.sweeps.distributed import (
        ClusterUnavailable,
        NotShippable,
        RayMissing,
        Where,
        run_all,
    )
    from simserver.sweeps.plot import plot
    from simserver.sweeps.results import Report

    started = time.monotonic()
    tally = {"passed": 0, "ended": 0}
    bar: Any = click.progressbar(
        length=planned, label="runs", file=sys.stderr, show_eta=True,
        item_show_func=lambda _: f"{tally['passed']} of {tally['ended']} passed"
    ) if show else contextlib.nullcontext()
    with bar:
        def ended(record: dict[str, Any]) -> None:
            tally["ended"] += 1
            tally["passed"] += bool(record["passed"])
            if show:
                bar.update(1, record)

        try:
            outcome = run_all(sweep, range(planned), Where(address, workers), ended)
        except (RayMissing, NotShippable, ClusterUnavailable) as exc:
            click.echo(f"simserver: {exc}", err=True)
            return EXIT_BAD_INPUT
    report = Report.of(sweep, outcome.records, planned, outcome.interrupted,
                       outcome.workers, time.monotonic() - started)
    click.echo(report.table())
    written = report.write(out)
    written.append(plot(report, out / "sweep.png", field_dimensions(sweep.config)))
    click.echo(f"results written to {out}/ ({', '.join(p.name for p in written)})")
    if outcome.interrupted:
        click.echo(f"simserver: stopped after {len(outcome.records)} of {planned} runs.",
                   err=True)
        return EXIT_INTERRUPTED
    return 0 if report.met else 1
