"""``simserver init [ROBOT_DIR]``: write a simserver.toml from the devices a RobotPy program
creates (discovery: :mod:`simserver.initcmd.discover`; guesses: :mod:`simserver.initcmd.draft`;
text: :mod:`simserver.initcmd.render`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from simserver.config.loader import ConfigError, loads
from simserver.initcmd.discover import DiscoveryError, discover
from simserver.initcmd.draft import CONFIRM, build
from simserver.initcmd.render import render


@click.command("init")
@click.argument("robot_dir", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write (default: ROBOT_DIR/simserver.toml).")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.option("--python", default=sys.executable, show_default="this Python",
              help="Python that runs the robot program (its robotpy, wpilib and vendor "
              "libraries, and simserver for the bridge).")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(min=1),
              help="Seconds the robot program gets to start and list its devices.")
def init_cmd(robot_dir: Path, output: Path | None, force: bool, python: str,
             timeout: float) -> None:
    """Write a simserver.toml for the RobotPy program in ROBOT_DIR (default: here).

    Starts the program once (`robotpy sim --nogui --simserver` in discovery mode: no physics,
    its NT server on free ports), lists every motor controller, encoder, gyro, solenoid and
    input it creates, guesses the drivetrain and mechanisms, and writes each device wired with
    `hal = ...`. Values the program cannot tell (motor types, gearing, wheel size, mass) get
    typical values marked `# CONFIRM:`.

    \b
    Example:
      simserver init my-robot              # writes my-robot/simserver.toml
      simserver check my-robot/simserver.toml
    """
    target = output if output is not None else robot_dir / "simserver.toml"
    if target.exists() and not force:
        click.echo(f"simserver init: {target} exists; not overwriting it (use --force)",
                   err=True)
        sys.exit(2)
    click.echo(f"simserver init: starting the robot program in {robot_dir} to list its "
               "devices...", err=True)
    try:
        listing = discover(robot_dir, python, timeout)
    except DiscoveryError as exc:
        click.echo(f"simserver init: {exc}", err=True)
        sys.exit(exc.code)
    listing["physics_py"] = (robot_dir / "physics.py").is_file()
    text = render(build(listing), str(robot_dir.resolve().name or robot_dir))
    try:
        loads(text, source=str(target))
    except ConfigError as exc:  # a bug of init, not of the program: say so and keep the text
        click.echo(f"simserver init: the drafted config does not pass `simserver check` "
                   f"(please report this):\n{exc}", err=True)
        target.write_text(text, encoding="utf-8")
        sys.exit(1)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    confirms = sum(CONFIRM in line and not line.startswith("#") for line in text.splitlines())
    click.echo(f"wrote {target}: {len(listing.get('devices', []))} devices found; check the "
               f"{confirms} `# CONFIRM:` values, then `simserver check {target}`")
