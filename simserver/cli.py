"""Command line: ``simserver run | plot | check | sysid | motors | models | config |
robot-requirements | init | sweep``.

Exit codes: 0 success, 1 runtime failure, 2 bad configuration, inputs or usage.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from simserver import __version__
from simserver.config.limits import ROBOT_NT_PORT
from simserver.config.model import Config
from simserver.runs.health import MAX_AGE
from simserver.util.console import utf8_output

if TYPE_CHECKING:  # imported where used: `simserver --help` loads none of them
    from simserver.io.nt import Endpoint
    from simserver.io.scripted import Script
    from simserver.runs.report import Summary
    from simserver.runs.robotrun import RobotRun
    from simserver.runs.scenario import Scenario, ScenarioCheck, ScenarioResult
    from simserver.runs.session import RunOptions, Session

EXIT_BAD_CONFIG = 2


def _setup_logging(verbose: int, quiet: bool) -> None:
    level = logging.WARNING if quiet else (logging.DEBUG if verbose > 1 else logging.INFO)
    logging.basicConfig(level=level, format="simserver: %(message)s", stream=sys.stderr)
    # ntcore's own connection chatter only with -vv.
    logging.getLogger("nt").setLevel(logging.DEBUG if verbose > 1 else logging.WARNING)


def _warn(cfg: Config) -> None:
    """Show the unusual values a config loaded with, one line each, as errors are shown."""
    for line in cfg.warnings:
        click.echo(line, err=True)


def _load(config: str | None) -> Config:
    from simserver.config.loader import ConfigError, load, load_default

    try:
        cfg = load(config) if config else load_default()
        _warn(cfg)
        return cfg
    except ConfigError as exc:
        for issue in exc.issues:
            click.echo(issue.render(exc.source), err=True)
        n = len(exc.issues)
        click.echo(f"{exc.source}: {n} problem{'s' if n != 1 else ''}; nothing was started.",
                   err=True)
        sys.exit(EXIT_BAD_CONFIG)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="simserver")
def main() -> None:
    """Headless physics for FRC robot programs in WPILib simulation, over NetworkTables 4.

    Start your robot program in simulation, then `simserver run` beside it. Docs: docs/.
    """
    utf8_output()


@main.command()
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--server", "server", metavar="HOST[:PORT]",
              help="Connect to this NT server (default: the robot program at "
                   "localhost:5810, or the port the config's bridge.nt_port gives it).")
@click.option("--serve", "serve", metavar="[HOST:]PORT",
              help="Host an NT server instead, bound to 127.0.0.1 unless HOST is given "
                   "(an IPv4 address or a name that resolves to one; 0.0.0.0 for every "
                   "interface). A port in use stops the run (exit 2).")
@click.option("--fast", is_flag=True, help="Run as fast as possible instead of in real time.")
@click.option("--duration", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Stop after this much simulated time.")
@click.option("--inputs", "inputs", type=click.Path(dir_okay=False), metavar="CSV",
              help="Drive motors/solenoids from a CSV (time column + one column per name) "
                   "instead of NetworkTables; with --enable, columns joystick<n>/axis<k> and "
                   "joystick<n>/button<k> drive the robot program's joysticks. Without "
                   "--serve/--server/--enable/--lockstep, nothing is published.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), metavar="PNG",
              help="Write a plot of path, wheel speeds, yaw rate, motor currents, battery "
                   "voltage and current.")
@click.option("--record", "record_path", type=click.Path(dir_okay=False), metavar="WPILOG",
              help="Record every tick (inputs, sensors, outputs, true pose, battery, "
                   "mechanisms) to a WPILib data log for AdvantageScope or `simserver plot`; "
                   "timestamps are simulated time. Parent directories are created; the file "
                   "is complete after Ctrl-C too.")
@click.option("--record-robot-topics", "record_robot", multiple=True, metavar="PREFIX",
              help="With --record: which of the robot program's own NetworkTables topics to "
                   "record too, as NT:<topic> entries stamped with the simulated time they "
                   "were published at (its odometry beside the true pose in AdvantageScope). "
                   "Repeat for several prefixes, e.g. /SmartDashboard/ /kitbot/; 'none' records "
                   "none. Default: every topic (/).")
@click.option("--summary/--no-summary", default=None,
              help="Print the summary table at the end (default: on for --duration runs).")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar for --duration runs (default: on when stderr is a terminal).")
@click.option("--seed", type=click.IntRange(min=0), help="Override sim.seed.")
@click.option("--enable", type=click.Choice(["autonomous", "teleop", "test"]),
              help="Enable the robot program in this mode through the bridge "
                   "(`robotpy sim --simserver`); --duration then counts from enabling.")
@click.option("--lockstep/--no-lockstep", default=None,
              help="Step the robot program's clock period by period through the bridge "
                   "(default: the config's bridge.lockstep).")
@click.option("--check", "check_path", type=click.Path(dir_okay=False), metavar="TOML",
              help="Scenario file of expectations (docs/scenarios.md); exit 1 if one fails. "
                   "Gives --enable and --duration unless they are given.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write a machine-readable summary (with the scenario's verdict).")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), metavar="CSV",
              help="Write the pose at every tick (time, x, y, heading), exact to the bit.")
@click.option("--halsim-ws", "halsim_ws", metavar="[HOST:]PORT",
              help="Play the hardware of a robot program (Java, C++ or Python) through its "
                   "halsim_ws WebSocket server (default localhost:3300) instead of the bridge; "
                   "NetworkTables then only feeds dashboards.")
@click.option("--wait", type=click.FloatRange(min=0, min_open=True), default=60.0,
              show_default=True, metavar="SECONDS",
              help="With --enable or --lockstep: how long to wait for the robot program.")
@click.option("--robot", "robot_dir", type=click.Path(file_okay=False), metavar="PROJECT_DIR",
              help="Start the RobotPy program in PROJECT_DIR (`python -m robotpy --main "
                   "PROJECT_DIR/robot.py sim --nogui --simserver`, with this Python) on free "
                   "ports, and stop it at the end. If it exits before the run's end, the run "
                   "stops at once (exit 1) and shows the end of its output. CONFIG defaults "
                   "to PROJECT_DIR/simserver.toml. Excludes --server, --serve, --halsim-ws.")
@click.option("--robot-log", "robot_log", type=click.Path(dir_okay=False), metavar="FILE",
              help="With --robot: where the robot program's output goes (default: robot.log "
                   "in a new temporary folder, named at the start).")
@click.option("-v", "--verbose", count=True, help="More log output.")
@click.option("-q", "--quiet", is_flag=True, help="Only warnings and errors.")
def run(config: str | None, server: str | None, serve: str | None, fast: bool,
        duration: float | None, inputs: str | None, plot_path: str | None,
        record_path: str | None, record_robot: tuple[str, ...], summary: bool | None,
        progress: bool | None, seed: int | None, enable: str | None,
        lockstep: bool | None, check_path: str | None, json_path: str | None,
        trace_path: str | None, halsim_ws: str | None, wait: float, robot_dir: str | None,
        robot_log: str | None, verbose: int, quiet: bool) -> None:
    """Simulate the robot in CONFIG (default: the bundled kitbot).

    \b
    Examples:
      simserver run                       # beside `robotpy sim`, real time
      simserver run simserver.toml --enable autonomous --duration 15
      simserver run simserver.toml --lockstep --check auto-check.toml --json result.json
      simserver run --robot . --lockstep --fast --check auto-check.toml   # starts robot.py
      simserver run simserver.toml --halsim-ws 3300 --enable autonomous   # Java/C++
      simserver run robot.toml --serve 5811
      simserver run --inputs drive.csv --fast --plot run.png
      simserver run --inputs drive.csv --fast --record run.wpilog
    """
    from simserver.runs.session import RunOptions

    _setup_logging(verbose, quiet)
    if server and serve:
        raise click.UsageError("--server and --serve exclude each other")
    project = _robot_project(robot_dir, robot_log, server, serve, halsim_ws)
    if project is not None and config is None:
        config = _project_config(project)
    cfg = _run_config(config, seed)
    check = None
    if check_path:
        check, scenario = _scenario(check_path)
        enable = enable or scenario.enable
        duration = duration or scenario.duration
    lockstep = cfg.bridge.lockstep if lockstep is None else lockstep
    if lockstep and serve:
        raise click.UsageError("--lockstep connects to the robot program's bridge; it cannot "
                               "be combined with --serve")
    ws_target = _halsim_target(halsim_ws, lockstep, cfg, config) if halsim_ws else None
    robot = None
    if project is not None and config is not None:
        from simserver.runs.robotrun import RobotRun

        robot = RobotRun(project, Path(config).resolve(), lockstep, wait,
                         Path(robot_log).resolve() if robot_log else None)
        cfg = robot.configure(cfg)
        if lockstep and fast and robot.wall_clock_sims():
            click.echo(f"simserver: {project} uses Phoenix 6, whose simulated devices run on a "
                       "wall-clock thread: --lockstep --fast outruns them (the robot misses "
                       "its marks); drop --fast for paced lock-step (docs/bridge.md)", err=True)
    endpoint = _endpoint(server, serve, bool(inputs),
                         bool(enable or lockstep or halsim_ws or robot), cfg.bridge.nt_port)
    script = _script(inputs, cfg) if inputs else None
    if script is not None and duration is None:
        duration = script.duration
    # The in-memory trace (about 10 kB per simulated second) only when a plot or trace file
    # asks for it: a long real-time run must not grow without bound.
    opts = RunOptions(fast=fast, duration=duration, script=script, endpoint=endpoint,
                      record=bool(plot_path or trace_path), enable=enable, lockstep=lockstep,
                      wait=wait, check=check, halsim_ws=ws_target, wpilog=record_path,
                      record_robot=_robot_prefixes(record_robot))
    session = _session(cfg, opts, config)
    logging.getLogger("simserver").info("simulating %s", _run_description(config, opts, inputs))
    if robot is None:
        result = _simulate(session, duration, progress)
        failure = _failure(session)
    else:
        result, failure = _simulate_with_robot(robot, session, duration, progress)
    verdict = _report(session, result, check, summary, duration,
                      stopped=session.stop_requested and not (robot and robot.left_early))
    written = _write_outputs(session, result, verdict, failure, config, trace_path, json_path,
                             plot_path)
    if failure is not None:
        click.echo(f"simserver: {failure}", err=True)
    _exit(_status(failure, written, verdict))


def _simulate_with_robot(robot: RobotRun, session: Session, duration: float | None,
                         progress: bool | None) -> tuple[Summary, str | None]:
    """``_simulate`` with the robot program of --robot started beside it and stopped after
    it; (the summary, why the run failed or None). Exit 2 if it cannot be started."""
    from simserver.runs.robotrun import RobotStartError

    try:
        with robot:
            click.echo(f"simserver: started the robot program in {robot.project} "
                       f"(pid {robot.pid}); its output: {robot.log}", err=True)
            result = robot.simulate(session, lambda: _simulate(session, duration, progress))
            return result, robot.failure(session) or _failure(session)
    except RobotStartError as exc:
        click.echo(f"simserver: {exc}; nothing was started.", err=True)
        sys.exit(EXIT_BAD_CONFIG)


def _robot_project(robot_dir: str | None, robot_log: str | None, server: str | None,
                   serve: str | None, halsim_ws: str | None) -> Path | None:
    """The project folder of --robot (None without it): a usage error with the options it
    excludes, exit 2 if it has no robot.py."""
    from simserver.runs.robotprogram import ROBOT_MAIN

    if robot_dir is None:
        if robot_log is not None:
            raise click.UsageError("--robot-log needs --robot")
        return None
    for given, name in ((server, "--server"), (serve, "--serve"), (halsim_ws, "--halsim-ws")):
        if given:
            raise click.UsageError(f"--robot starts the robot program with simserver's bridge "
                                   f"on ports of its own; it cannot be combined with {name}")
    project = Path(robot_dir).resolve()
    if not (project / ROBOT_MAIN).is_file():
        click.echo(f"simserver: --robot: no {project / ROBOT_MAIN} (PROJECT_DIR is a RobotPy "
                   "project's folder, the one with robot.py); nothing was started.", err=True)
        sys.exit(EXIT_BAD_CONFIG)
    return project


def _project_config(project: Path) -> str:
    """The config of a --robot run without CONFIG: the project's simserver.toml (exit 2
    without one)."""
    from simserver.bridge import CONFIG_NAME

    path = project / CONFIG_NAME
    if not path.is_file():
        click.echo(f"simserver: --robot: no {path}: put the robot's simserver.toml (hal wiring, "
                   "[bridge]) beside robot.py or name a CONFIG; nothing was started.", err=True)
        sys.exit(EXIT_BAD_CONFIG)
    return str(path)


def _status(failure: str | None, written: list[bool], verdict: ScenarioResult | None) -> int:
    """The exit status of a run: 1 if it failed, a file it was asked for could not be
    written or the scenario failed; else 0."""
    if failure is not None or not all(written) or (verdict is not None and not verdict.passed):
        return 1
    return 0


def _run_config(config: str | None, seed: int | None) -> Config:
    """The config of a run (exit 2 if it is not usable), with --seed in sim.seed."""
    import dataclasses

    cfg = _load(config)
    if seed is not None:
        cfg = dataclasses.replace(cfg, sim=dataclasses.replace(cfg.sim, seed=seed))
    return cfg


def _scenario(check_path: str) -> tuple[ScenarioCheck, Scenario]:
    """The checks of --check's scenario file and the scenario; exit 2 if it is not usable."""
    from simserver.config.loader import ConfigError
    from simserver.runs.scenario import ScenarioCheck, load_scenario

    try:
        scenario = load_scenario(check_path)
        return ScenarioCheck(scenario), scenario
    except ConfigError as exc:
        for issue in exc.issues:
            click.echo(issue.render(exc.source), err=True)
        click.echo(f"{exc.source}: scenario not usable; nothing was started.", err=True)
        sys.exit(EXIT_BAD_CONFIG)


def _halsim_target(halsim_ws: str, lockstep: bool, cfg: Config, config: str | None
                   ) -> tuple[str, int]:
    """(host, port) of --halsim-ws; a usage error with lock-step, exit 2 for a config whose
    hardware halsim_ws cannot play."""
    from simserver.io.halsim_ws import DEFAULT_PORT, check_config
    from simserver.io.nt import parse_hostport

    if lockstep:
        raise click.UsageError("halsim_ws has no clock control: --halsim-ws runs in real "
                               "time and excludes --lockstep (and bridge.lockstep)")
    try:
        target = parse_hostport(halsim_ws, "localhost", DEFAULT_PORT)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--halsim-ws") from None
    problems = check_config(cfg)
    if problems:
        for problem in problems:
            click.echo(f"{config or 'kitbot'}: {problem}", err=True)
        click.echo(f"{config or 'kitbot'}: not usable over halsim_ws; nothing was started.",
                   err=True)
        sys.exit(EXIT_BAD_CONFIG)
    return target


def _endpoint(server: str | None, serve: str | None, scripted: bool, robot_link: bool,
              robot_port: int) -> Endpoint | None:
    """Where NetworkTables runs: a server of our own (--serve), a client of --server or of
    the robot program (at localhost:``robot_port``, the config's bridge.nt_port); none for a
    scripted run (``scripted``) that talks to no robot program (``robot_link``: --enable,
    --lockstep or --halsim-ws)."""
    from simserver.io.nt import Endpoint, listen_address, parse_hostport

    try:
        if serve:
            host, port = parse_hostport(serve, "127.0.0.1", ROBOT_NT_PORT)
            return Endpoint("server", listen_address(host, port), port)
        if server or not scripted or robot_link:
            host, port = parse_hostport(server or "localhost", "localhost", robot_port)
            return Endpoint("client", host, port)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--serve" if serve else "--server") from None
    return None


def _script(inputs: str, cfg: Config) -> Script:
    """The scripted inputs of --inputs for ``cfg``'s motors and solenoids; exit 2 if the CSV
    is not usable."""
    from simserver.io.scripted import ScriptError, load_script

    try:
        return load_script(inputs, list(cfg.motors), list(cfg.solenoids))
    except ScriptError as exc:
        click.echo(f"simserver: {exc}", err=True)
        sys.exit(EXIT_BAD_CONFIG)


def _session(cfg: Config, opts: RunOptions, config: str | None) -> Session:
    """The session of a run; exit 2 if a model, the recording or a robot's inputs cannot be
    set up (nothing has started)."""
    from simserver.io.scripted import ScriptError
    from simserver.io.wpilog import RecordError
    from simserver.runs.session import Session
    from simserver.world import ModelBuildError

    try:
        return Session(cfg, opts)
    except ModelBuildError as exc:
        click.echo(f"{config or 'kitbot'}: {exc}; nothing was started.", err=True)
    except RecordError as exc:
        click.echo(f"simserver: --record {exc}; nothing was started.", err=True)
    except ScriptError as exc:
        click.echo(f"simserver: [robots] inputs: {exc}; nothing was started.", err=True)
    sys.exit(EXIT_BAD_CONFIG)


def _run_description(config: str | None, opts: RunOptions, inputs: str | None) -> str:
    """What a run simulates, how, for how long and from which inputs (logged at its start)."""
    mode = ("in lock-step with the robot program" if opts.lockstep else
            "as fast as possible" if opts.fast else "in real time")
    span = f"{opts.duration:g} s" if opts.duration else "until stopped (Ctrl-C)"
    if opts.enable:
        span += f" after the robot program is enabled in {opts.enable}"
    source = f"inputs from {inputs}" if inputs else "inputs from NetworkTables"
    if opts.lockstep:
        source = "inputs from the bridge"
    if opts.halsim_ws:
        source = f"inputs from halsim_ws at {opts.halsim_ws[0]}:{opts.halsim_ws[1]}"
    return f"{config or 'the kitbot'} {mode}, {span}; {source}"


def _simulate(session: Session, duration: float | None, progress: bool | None) -> Summary:
    """Run the session to its end, with a progress bar on stderr for a run of known
    ``duration`` (s) if --progress asks for one (by default: when stderr is a terminal)."""
    show_progress = progress if progress is not None else (
        duration is not None and sys.stderr.isatty())
    if not show_progress or duration is None:
        return session.run()
    with click.progressbar(length=1000, label="simulating", file=sys.stderr,
                           show_eta=True) as bar:
        done = [0]

        def advance(t: float) -> None:
            target = min(1000, int(1000 * t / duration))
            if target > done[0]:
                bar.update(target - done[0])
                done[0] = target

        return session.run(advance)


def _failure(session: Session) -> str | None:
    """Why the run failed (its session's failure, else a recording that stopped early), or
    None."""
    failure = session.failure
    stopped = session.recorder.stopped if session.recorder is not None else None
    if failure is None and stopped is not None:
        failure = f"recording incomplete: {stopped}"
    return failure


def _report(session: Session, result: Summary, check: ScenarioCheck | None,
            summary: bool | None, duration: float | None, stopped: bool
            ) -> ScenarioResult | None:
    """Print what a run did: that it was ``stopped`` (Ctrl-C), the summary table (--summary;
    by default for a run of known ``duration`` or one stopped after a tick), the scenario's
    verdict and the recording. Returns the verdict (None without --check)."""
    show_summary = summary if summary is not None else (
        duration is not None or (session.stop_requested and session.ticks > 0))
    if stopped:
        click.echo("simserver: stopped; results so far follow." if show_summary else
                   "simserver: stopped.", err=True)
    if show_summary:
        click.echo(result.table())
    verdict = check.result() if check is not None else None
    if verdict is not None:
        click.echo(verdict.report())
    recorder = session.recorder
    if recorder is not None:
        click.echo(f"recording written to {recorder.path} ({recorder.records} values"
                   f"{', incomplete' if recorder.stopped is not None else ''})")
    return verdict


def _write_outputs(session: Session, result: Summary, verdict: ScenarioResult | None,
                   failure: str | None, config: str | None, trace_path: str | None,
                   json_path: str | None, plot_path: str | None) -> list[bool]:
    """Write the files a run was asked for (--trace, --json, --plot), saying where; whether
    each could be written (what could not stops the run with status 1 at the end)."""
    from simserver.runs.report import plot, write_trace

    written = []
    trace = session.trace
    if trace_path and trace is not None:
        written.append(_write("trace", lambda: write_trace(trace, trace_path)))
    if json_path:
        doc: dict[str, object] = {"summary": result.as_dict(), "error": failure}
        if verdict is not None:
            doc.update(verdict.to_json())
        else:
            doc["passed"] = failure is None
        written.append(_write("summary", lambda: _write_json(Path(json_path), doc)))
    if plot_path and trace is not None:
        walls = session.world.walls
        written.append(_write("plot", lambda: plot(
            trace, plot_path, (walls.length, walls.width),
            title=f"simserver: {config or 'kitbot'}")))
    return written


def _write(what: str, write: Callable[[], object]) -> bool:
    """Write one output file of a run, saying where (or why not: a full disk)."""
    try:
        click.echo(f"{what} written to {write()}")
    except OSError as exc:
        click.echo(f"simserver: {what} not written: {exc.strerror or exc} "
                   f"({exc.filename or ''})", err=True)
        return False
    return True


def _write_json(path: Path, doc: Mapping[str, object]) -> Path:
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path


def _exit(code: int) -> None:
    """End ``run`` with ``code``; with ``os._exit`` after a recording's writer failed, since
    wpiutil aborts the process when such a writer is destroyed."""
    from simserver.io import wpilog

    if wpilog.abandoned():
        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(code)
    sys.exit(code)



def _robot_prefixes(given: tuple[str, ...]) -> tuple[str, ...]:
    """The topic prefixes of --record-robot-topics: every topic by default, none with
    'none'; a prefix must start with '/' (a usage error, exit 2, otherwise)."""
    if not given:
        return ("/",)
    if given == ("none",):
        return ()
    for prefix in given:
        if not prefix.startswith("/"):
            raise click.BadParameter(f"{prefix!r}: a topic prefix starts with '/' (or give "
                                     "only 'none')", param_hint="--record-robot-topics")
    return tuple(given)


@main.command("plot")
@click.argument("recording", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), metavar="PNG",
              help="Where to write the plot (default: RECORDING with the suffix .png).")
@click.option("--title", help="Plot title (default: the recording's file name).")
def plot_cmd(recording: str, output: str | None, title: str | None) -> None:
    """Plot a recording of `simserver run --record RECORDING` (headless, PNG).

    Path on the field, wheel speeds, yaw rate, motor currents, battery voltage and current,
    and the game pieces (last positions, scores over time) when the field has them; the field
    size comes from the recording (the 2026 field if it has none).

    \b
    Example:
      simserver run --inputs drive.csv --fast --record run.wpilog
      simserver plot run.wpilog -o run.png
    """
    from simserver.field.seasons import field_size
    from simserver.io.wpilog import RecordError
    from simserver.runs.recording import read_recording
    from simserver.runs.report import plot

    try:
        rec = read_recording(recording)
    except RecordError as exc:
        click.echo(f"simserver: {exc}", err=True)
        sys.exit(EXIT_BAD_CONFIG)
    out = Path(output) if output else Path(recording).with_suffix(".png")
    try:
        plot(rec.trace, out, rec.field_size or field_size("2026"),
             title=title or f"simserver: {Path(recording).name}")
    except OSError as exc:
        click.echo(f"simserver: {out}: cannot write: {exc.strerror or exc}", err=True)
        sys.exit(1)
    click.echo(f"plot written to {out}")


@main.command()
@click.argument("configs", nargs=-1, required=True, type=click.Path(dir_okay=False))
def check(configs: tuple[str, ...]) -> None:
    """Validate config files, and sweep files (a `[sweep]` table: with their config, scenario
    and every run's drawn config), without starting anything (exit 2 on any problem)."""
    from simserver.config.loader import ConfigError, load
    from simserver.sweeps.command import check_sweep
    from simserver.sweeps.spec import is_sweep_file
    from simserver.world import ModelBuildError, World

    bad = 0
    for path in configs:
        if is_sweep_file(path):
            click.echo(check_sweep(path))  # exits 2 if it is not usable
            continue
        try:
            cfg = load(path)
            _warn(cfg)
            World(cfg)  # builds every model, as `run` will; nothing is started
        except ConfigError as exc:
            bad += 1
            for issue in exc.issues:
                click.echo(issue.render(exc.source), err=True)
            continue
        except ModelBuildError as exc:
            bad += 1
            click.echo(f"{path}: {exc}", err=True)
            continue
        mechs = ", ".join(f"{n} ({s.type})" for n, s in cfg.mechanisms.items()) or "none"
        extras = "".join(f"; {what}: {', '.join(names)}" for what, names in (
            ("cameras", list(cfg.cameras)), ("other robots", list(cfg.robots))) if names)
        drive = ("no drivetrain" if cfg.drivetrain is None else
                 f"{cfg.drivetrain_type} drivetrain")
        click.echo(f"{path}: OK ({drive}, {len(cfg.motors)} motors, "
                   f"{len(cfg.encoders)} encoders; mechanisms: {mechs}{extras})")
    if bad:
        sys.exit(EXIT_BAD_CONFIG)


@main.command()
def motors() -> None:
    """List the motor types a config can name."""
    from simserver.models.motor import catalog_names, motor_by_name

    click.echo(f"{'type':<18}{'free speed':>12}{'stall torque':>14}{'stall current':>15}"
               f"{'free current':>14}")
    for name in catalog_names():
        m = motor_by_name(name)
        rpm = m.free_speed * 60 / (2 * 3.141592653589793)
        click.echo(f"{name:<18}{rpm:>8.0f} rpm{m.stall_torque:>10.2f} N·m{m.stall_current:>13.0f} A"
                   f"{m.free_current:>12.1f} A")


@main.command("field")
@click.argument("season", required=False, default="2026",
                type=click.Choice(["2022", "2023", "2024", "2025", "2026"]))
def field_cmd(season: str) -> None:
    """List a season's field elements (what `[field] elements = true` places): outline, size
    and height, in field coordinates (metres from the blue alliance wall's right corner)."""
    from simserver.field.elements import season_obstacles
    from simserver.field.seasons import field_size

    length, width = field_size(season)
    click.echo(f"{season} field: {length:.3f} m x {width:.3f} m")
    click.echo(f"{'element':<28}{'x range (m)':>16}{'y range (m)':>16}{'height':>10}")
    for o in season_obstacles(season):
        xs = [p[0] for p in o.points]
        ys = [p[1] for p in o.points]
        click.echo(f"{o.name:<28}{min(xs):>7.2f} - {max(xs):<6.2f}{min(ys):>7.2f} - "
                   f"{max(ys):<6.2f}{o.height:>8.2f} m")


@main.command("models")
def models_cmd() -> None:
    """List every model type (built-in and plugin) with its config keys, units and topics."""
    from simserver import docgen

    click.echo(docgen.model_types_text(), nl=False)


@main.command("config")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to a file.")
def config_cmd(output: str | None) -> None:
    """Print the bundled kitbot config, a starting point for your own."""
    from simserver.config.loader import default_config_text

    text = default_config_text()
    if output:
        path = Path(output)
        if path.exists():
            raise click.ClickException(f"{output} exists; not overwriting it")
        path.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}")
    else:
        click.echo(text, nl=False)


@main.command("sysid")
@click.argument("config", required=False, type=click.Path(dir_okay=False))
@click.option("--mechanism", metavar="NAME",
              help="Characterize this mechanism (elevator, arm, flywheel, linear) instead of "
                   "the drivetrain.")
@click.option("--ramp-rate", type=float, default=1.0, show_default=True, metavar="V/S",
              help="Voltage ramp of the quasistatic tests.")
@click.option("--step-voltage", type=float, default=7.0, show_default=True, metavar="V",
              help="Voltage step of the dynamic tests.")
@click.option("--timeout", type=float, default=10.0, show_default=True, metavar="SECONDS",
              help="Longest a test lasts.")
@click.option("--period", type=float, default=0.02, show_default=True, metavar="SECONDS",
              help="Sample period (the robot loop), rounded to whole physics substeps.")
@click.option("--out", type=click.Path(dir_okay=False), metavar="WPILOG",
              help="Where to write the data log (default: CONFIG's directory, or the current "
                   "one for the bundled kitbot, named <config>-sysid-<name>.wpilog).")
def sysid_cmd(config: str | None, mechanism: str | None, ramp_rate: float,
              step_voltage: float, timeout: float, period: float, out: str | None) -> None:
    """Run WPILib's SysId routine on the robot in CONFIG and fit its feedforward.

    Quasistatic forward and reverse, then dynamic forward and reverse, as SysIdRoutine does,
    with no robot program; prints kS, kV, kA (kG) with the fit quality and a
    `characterization` table for the config, and writes the data log WPILib's SysId tool
    opens. Docs: docs/sysid.md.

    \b
    Examples:
      simserver sysid robot.toml
      simserver sysid robot.toml --mechanism elevator --step-voltage 4
    """
    from simserver.sysid import FitError, Settings, SysIdError
    from simserver.sysid.characterize import fit_result
    from simserver.sysid.log import write_log
    from simserver.sysid.report import report, toml_snippet
    from simserver.sysid.routine import prepare, run_routine, subject_of
    from simserver.world import ModelBuildError, World

    cfg = _load(config)
    source = config or "the bundled kitbot"
    settings = Settings(ramp_rate, step_voltage, timeout, period)
    try:
        settings.check()
        subject = subject_of(cfg, mechanism)
        runs = run_routine(World(prepare(cfg, subject)), subject, settings)
    except SysIdError as exc:
        click.echo(f"simserver: sysid: {exc}", err=True)
        sys.exit(EXIT_BAD_CONFIG)
    except ModelBuildError as exc:
        click.echo(f"{source}: {exc}; nothing was run.", err=True)
        sys.exit(EXIT_BAD_CONFIG)
    stem = Path(config).stem if config else "kitbot"
    path = Path(out) if out else (Path(config).parent if config else Path.cwd()) / \
        f"{stem}-sysid-{subject.name}.wpilog"
    written = _write("SysId log", lambda: write_log(path, subject.name, runs, subject.angular))
    try:
        result = fit_result(subject, settings, runs)
    except FitError as exc:
        click.echo(f"simserver: sysid: no constants: {exc}", err=True)
        sys.exit(1)
    click.echo(report(result, source))
    click.echo("\n# for the config:\n" + toml_snippet(result))
    if not written:
        sys.exit(1)


@main.command("health")
@click.option("--file", "path", type=click.Path(dir_okay=False), envvar="SIMSERVER_HEARTBEAT",
              show_envvar=True, metavar="FILE",
              help="The heartbeat file a run refreshes (the server image sets the variable).")
@click.option("--max-age", type=click.FloatRange(min=0, min_open=True), default=MAX_AGE,
              show_default=True, metavar="SECONDS",
              help="A heartbeat older than this (wall time) is a frozen or hung run.")
def health_cmd(path: str | None, max_age: float) -> None:
    """Exit 0 while a `simserver run` in this container (or with the same SIMSERVER_HEARTBEAT)
    advances or waits for its robot program, 1 with the reason when its heartbeat is stale
    or missing: the image's HEALTHCHECK."""
    from simserver.runs.health import check as check_health

    if not path:
        raise click.UsageError("no heartbeat file: give --file or set SIMSERVER_HEARTBEAT "
                               "(and set it for `simserver run` too)")
    alive, why = check_health(Path(path), max_age)
    click.echo(f"simserver: {why}", err=not alive)
    sys.exit(0 if alive else 1)


@main.command("docs", hidden=True)
@click.argument("which", type=click.Choice(["config", "protocol"]))
def docs_cmd(which: str) -> None:
    """Print generated reference docs (used by `make docs`)."""
    from simserver import docgen

    click.echo(docgen.config_reference() if which == "config" else docgen.protocol_reference(),
               nl=False)


from simserver.initcmd.command import init_cmd  # noqa: E402
from simserver.initcmd.requirements import robot_requirements_cmd  # noqa: E402
from simserver.sweeps.command import sweep_cmd  # noqa: E402

main.add_command(init_cmd)
main.add_command(robot_requirements_cmd)
main.add_command(sweep_cmd)

