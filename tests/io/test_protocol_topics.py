"""docs/protocol.md against what a real session publishes.

`simserver run --serve` with scripted inputs and a config that has a bit of everything (a swerve
drivetrain, one mechanism of each built-in type with encoders and a limit switch, pneumatics with
a cylinder, a PhotonVision camera, a Limelight camera, a bearing target and another robot driven
over NetworkTables); a real ntcore client subscribes to every topic (prefix "", topics only)
and compares what it was announced with the document: every topic published is listed there
(placeholders such as ``<camera>`` match one path level, ``<name...>`` several) with the type
published, every concrete topic the declarations give for this config
(``simserver.io.formats.topics_for``) was published, and every row of the document was
published unless it is one of ``NOT_IN_THIS_RUN`` (topics that appear only on events this run
does not have, or only for a drivetrain or plugin it does not use). The ``log`` rows (the
recording's own entries) must not appear on NetworkTables.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import ntcore
import pytest

from simserver.config.loader import load
from simserver.contract.topics import OTHER_ROBOT, PREFIX, matcher
from simserver.io.formats import topics_for
from tests.ntutil import REPO, SimserverProcess, client, free_port, wait_for
from tests.worlds import ARM, LIFT, SHOULDER_NEO, TWO_KRAKENS

pytestmark = [pytest.mark.network, pytest.mark.slow]

PROTOCOL = REPO / "docs" / "protocol.md"
ROW = re.compile(r"^\| `([^`]+)` \| `([^`]+)` \| ([a-z/]+) \|", re.MULTILINE)
SETTLE = 1.0  # s to keep listening once every expected topic has appeared

# Rows of the document this run does not publish, and why.
NOT_IN_THIS_RUN = {
    "/SmartDashboard/SimField/Trajectory": "only with --check of a scenario with a trajectory",
    "/SmartDashboard/SimField/<mechanism>": "only for a type with a field2d output (a plugin)",
    "/simserver/drive/wheel_speeds": "a mecanum drivetrain's (this robot is a swerve)",
    "/simserver/ds/mode": "only with --enable",
    "/simserver/ds/joystick<n>/axes": "only with --enable",
    "/simserver/ds/joystick<n>/buttons": "only with --enable",
    "/<table>/robot_orientation_set": "published by the robot program (MegaTag2's input)",
    "/<table>/imumode_set": "published by the robot program (MegaTag2's heading source)",
    **dict.fromkeys(("/<table>/pipeline", "/<table>/priorityid",
                     "/<table>/fiducial_id_filters_set", "/<table>/camerapose_robotspace_set",
                     "/<table>/ledMode", "/<table>/throttle_set",
                     "/photonvision/<camera>/pipelineIndexRequest",
                     "/photonvision/<camera>/driverModeRequest", "/photonvision/ledModeRequest"),
                    "a camera setting published by the robot program"),
    **dict.fromkeys(("/simserver/pieces/<state>/<type>", "/simserver/pieces/scores/<alliance>",
                     "/simserver/pieces/goals/<goal>", "/simserver/pieces/picked_up",
                     "/simserver/pieces/shots", "/SmartDashboard/SimField/Pieces",
                     "/simserver/pieces/feed"),
                    "only on a field with game pieces ([pieces])"),
}

EXTRA = SHOULDER_NEO + TWO_KRAKENS + ARM + LIFT + """
[motors.shooter]
type = "Falcon 500"

[motors.slide]
type = "NEO"

[mechanisms.shooter]
type = "flywheel"
motor = "shooter"
gearing = 1.5
moment_of_inertia = "0.002 kg*m^2"

[motors.roller]
type = "775pro"

[motors.indexer]
type = "775pro"

[mechanisms.intake]
type = "intake"
motor = "roller"

[mechanisms.launcher]
type = "shooter"
motor = "indexer"
feed = "intake"
flywheel = "shooter"
piece_mass = "0.2 kg"

[switches.beam]
mechanism = "intake"
trigger = "holding"

[mechanisms.slide]
type = "linear"
motor = "slide"
speed = "1 m/s"
max_position = "0.8 m"

[encoders.shoulder]
motor = "shoulder"
unit = "deg"

[encoders.lift_ticks]
motor = "lift"
unit = "ticks"

[switches.lift_bottom]
mechanism = "lift"
position = "0.01 m"

[solenoids.claw]

[pneumatics]
tanks = 1

[cylinders.claw]
solenoid = "claw"
bore = "1.5 in"
stroke = "6 in"

[cameras.front]
x = "0.3 m"
protocol = "photonvision"

[cameras.rear]
x = "-0.3 m"
yaw = "180 deg"
protocol = "limelight"

[vision.targets.speaker]
x = "0 m"
y = "5.5 m"
z = "2 m"

[robots.opponent]
config = "opponent.toml"
"""


@dataclass(frozen=True)
class Row:
    """One topic row of the document, with the matchers of its name and type."""

    name: str
    type: str
    direction: str

    def matches(self, name: str, nt_type: str) -> bool:
        return bool(matcher(self.name).fullmatch(name) and matcher(self.type).fullmatch(nt_type))


def document_rows() -> list[Row]:
    return [Row(*m.groups()) for m in ROW.finditer(PROTOCOL.read_text())]


def documented(rows: list[Row], name: str, nt_type: str) -> bool:
    """Whether a row of ``rows`` (not a recorded-only one) lists topic ``name`` of type
    ``nt_type``. Another robot's topic is listed when the row of other robots is there and the
    same topic of the main robot is listed with this type."""
    other = re.fullmatch(rf"{re.escape(PREFIX)}/robots/[^/]+(/.+)", name)
    if other is not None:
        return (any(r.name == OTHER_ROBOT.name for r in rows)
                and documented(rows, PREFIX + other.group(1), nt_type))
    return any(r.matches(name, nt_type) for r in rows if r.direction != "log")


def write_config(tmp_path):
    """(config path, inputs path): examples/swerve plus EXTRA, and an opponent (the mecanum
    example) at the other end of the field."""
    main = (REPO / "examples" / "swerve" / "simserver.toml").read_text() + EXTRA
    opponent = (REPO / "examples" / "mecanum" / "simserver.toml").read_text()
    start = 'start = { x = "2 m", y = "2 m", heading = "0 deg" }'
    assert start in opponent
    (tmp_path / "opponent.toml").write_text(
        opponent.replace(start, 'start = { x = "12 m", y = "6 m", heading = "180 deg" }'))
    path = tmp_path / "robot.toml"
    path.write_text(main)
    inputs = tmp_path / "inputs.csv"
    inputs.write_text("time,shoulder,lift,shooter,slide,claw\n0,0.2,0.3,0.5,0.4,1\n"
                      "60,0.2,0.3,0.5,0.4,1\n")
    return path, inputs


def published_topics(tmp_path) -> tuple[dict[str, str], list]:
    """Every topic (name -> type string) a session of write_config's robot announced to a
    client subscribed to everything, and the topics the declarations give for its config."""
    path, inputs = write_config(tmp_path)
    expected = [s for s in topics_for(load(path))
                if s.direction == "out" and s.name not in NOT_IN_THIS_RUN]
    port = free_port()
    sim = SimserverProcess(str(path), "--serve", f"127.0.0.1:{port}", "--inputs", str(inputs),
                           "--duration", "60", log_dir=tmp_path)
    inst = client(port, "protocol-check")
    try:
        watch = ntcore.MultiSubscriber(inst, [""], ntcore.PubSubOptions(topicsOnly=True))

        def announced():
            return {t.getName(): t.getTypeString() for t in inst.getTopics()}

        def complete():
            return {s.name for s in expected} <= set(announced())

        wait_for(complete, 30, "every declared topic of the config to be published")
        time.sleep(SETTLE)  # anything published later than the rest
        seen = announced()
        assert sim.alive(), sim.stderr()
        del watch
    finally:
        ntcore.NetworkTableInstance.destroy(inst)
        sim.interrupt()
        sim.close()
    return seen, expected


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return published_topics(tmp_path_factory.mktemp("protocol"))


def test_every_published_topic_is_in_the_document_with_its_type(run):
    seen, _ = run
    rows = document_rows()
    undocumented = {name: nt_type for name, nt_type in seen.items()
                    if not documented(rows, name, nt_type)}
    assert not undocumented, f"published but not in docs/protocol.md: {undocumented}"


def test_every_declared_topic_of_the_config_is_published_and_documented(run):
    seen, expected = run
    rows = document_rows()
    for spec in expected:
        assert spec.name in seen, spec.name
        assert matcher(spec.type).fullmatch(seen[spec.name]), (spec.name, seen[spec.name])
        assert documented(rows, spec.name, seen[spec.name]), spec.name


def test_every_row_of_the_document_was_published_or_is_known_not_to_be(run):
    seen, _ = run
    rows = document_rows()
    assert set(NOT_IN_THIS_RUN) <= {r.name for r in rows}, "a stale NOT_IN_THIS_RUN entry"
    unseen = [r.name for r in rows if r.direction != "log" and r.name not in NOT_IN_THIS_RUN
              and not any(matcher(r.name).fullmatch(name) for name in seen)]
    assert not unseen, f"documented but not published: {unseen}"
    # Nor were they: no topic published matches them alone (a placeholder row such as
    # SimField/<mechanism> also matches the SimField's other objects).
    listed = [r for r in rows if r.name not in NOT_IN_THIS_RUN]
    for r in rows:
        if r.name in NOT_IN_THIS_RUN:
            alone = [n for n, t in seen.items()
                     if r.matches(n, t) and not any(o.matches(n, t) for o in listed)]
            assert not alone, (r.name, alone)


def test_recorded_only_entries_stay_off_networktables(run):
    seen, _ = run
    logged = [r for r in document_rows() if r.direction == "log"]
    assert logged
    for r in logged:
        assert not any(matcher(r.name).fullmatch(name) for name in seen), r.name
