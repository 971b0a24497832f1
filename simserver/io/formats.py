"""Every topic simserver writes or reads, by output format.

simserver's own topics are the contract (:mod:`simserver.contract.topics`); the SimField,
PhotonVision, Limelight and Mechanism2d formats declare theirs next to their publishers, and
the recorder the entries only ``--record`` writes. :func:`groups` gathers them with
placeholders, as docs/protocol.md lists them (``make docs``); :func:`topics_for` gives the
topics of one config.
"""

from __future__ import annotations

import dataclasses

from simserver.config.model import Config
from simserver.config.registry import registry
from simserver.contract import topics
from simserver.contract.topics import TopicGroup, TopicSpec
from simserver.io import field2d, limelight, mechanism2d, photonvision, wpilog

SCHEMA = TopicSpec("/.schema/struct:<struct>", "structschema", "out", "",
                   "The schema of each struct type above and of the structs inside them "
                   "(`Pose2d`, `Translation2d`, `Rotation2d`, ...), which ntcore publishes with "
                   "the first publisher of the type: AdvantageScope and Elastic decode struct "
                   "values with it.")
OWN_INTRO = (
    "Under `/simserver`: the robot program's inputs (motor duty cycles, solenoids), the "
    "sensors the bridge writes into its HAL, and the true state of the simulated robot. "
    "Names in angle brackets are the names given in the config (`[motors.<motor>]`, "
    "`[solenoids.<solenoid>]`, `[encoders.<encoder>]`, `[switches.<switch>]`, "
    "`[cylinders.<cylinder>]`, `[cameras.<camera>]`, `[vision.targets.<target>]`); "
    "`<arm>`, `<elevator>`, ... stand for a `[mechanisms.<name>]` of that built-in type. A "
    "plugin's types publish the outputs they declare (`simserver models` lists them): a "
    "mechanism's as `/simserver/mechanisms/<name>/<output>`, a drivetrain's under the path it "
    "gives, a `field2d` output as a SimField object.")
BRIDGE_INTRO = (
    "Between simserver and the robot-side bridge (`robotpy sim --simserver`, "
    "[bridge.md](bridge.md)). simserver publishes the Driver Station commands only with "
    "`simserver run --enable`.")
RECORD_INTRO = (
    "Entries only the WPILib data log of `simserver run --record` has, never published on "
    "NetworkTables. The log also records, under their names, the main robot's /simserver topics "
    "above except the heartbeat and the bearing targets (the game pieces' and the components' "
    "pose arrays only when they change), the bridge commands, each mechanism's `field2d` "
    "output, each drawn mechanism's Mechanism2d table (as WPILib's Mechanism2d publishes it, "
    "for AdvantageScope's Mechanism tab), and the robot program's own topics as `NT:<topic>` "
    "(`--record-robot-topics`).")


def groups() -> list[TopicGroup]:
    """Every topic with placeholders, grouped by format, in the order docs/protocol.md lists
    them."""
    own = topics.own_reference()
    bridge = set(topics.BRIDGE)
    return [
        TopicGroup("simserver (`/simserver`)", OWN_INTRO, (
            *(s for s in own if s.direction != "log" and s not in bridge), SCHEMA)),
        field2d.TOPICS, photonvision.TOPICS, limelight.TOPICS, mechanism2d.TOPICS,
        TopicGroup("Bridge commands", BRIDGE_INTRO, topics.BRIDGE),
        TopicGroup("Recorded only (`--record`)", RECORD_INTRO, (
            *(s for s in own if s.direction == "log"), *wpilog.LOG_SPECS)),
    ]


def topics_for(cfg: Config) -> list[TopicSpec]:
    """Every topic of a run of ``cfg`` over NetworkTables and ``--record``, names filled in:
    its /simserver topics (:func:`~simserver.contract.topics.contract_for`) and those of
    the robots of ``[robots]`` driven over NetworkTables, the SimField objects, each camera's
    PhotonVision or Limelight topics and each drawn mechanism's Mechanism2d table. Left out:
    the roots and ligaments of drawings (their names come from the drawing), struct schemas,
    the SimField's ``Trajectory`` (``--check`` only) and the recorder's own entries
    (``wpilog.LOG_SPECS``)."""
    out = topics.contract_for(cfg)
    out += [field2d.TYPE, field2d.TITLE, field2d.CONTROLLABLE, field2d.ROBOT]
    out += [field2d.CAMERA_TAGS.of(camera=c) for c in cfg.cameras]
    out += _mechanisms(cfg, drawn=True)
    for name, cam in cfg.cameras.items():
        if cam.protocol in ("photonvision", "both"):
            out += [s.of(camera=name) for s in photonvision.TOPICS.specs]
        if cam.protocol in ("limelight", "both"):
            table = limelight.limelight_table(name)
            out += [s.of(table=table) for s in limelight.TOPICS.specs]
    # Another robot has no cameras, drawings or Driver Station commands of its own.
    skip = [topics.matcher(s.name) for s in (topics.BEARING, *topics.BRIDGE)]
    for name, other in (cfg.others or {}).items():
        if cfg.robots[name].inputs is not None:
            continue  # scripted: neither read nor published
        out.append(field2d.OTHER_ROBOT.of(robot=name))
        prefix = topics.robot_prefix(name)
        out += [dataclasses.replace(s, name=prefix + s.name.removeprefix(topics.PREFIX))
                for s in topics.contract_for(other)
                if not any(m.fullmatch(s.name) for m in skip)]
        out += _mechanisms(other, drawn=False)
    return out


def _mechanisms(cfg: Config, drawn: bool) -> list[TopicSpec]:
    """The SimField objects of the mechanisms of ``cfg`` and, when ``drawn``, the fixed topics
    of their Mechanism2d tables."""
    reg = registry()
    out: list[TopicSpec] = []
    for name, section in cfg.mechanisms.items():
        mt = reg.get("mechanism", section.type)
        if mt is None:
            continue
        out += [field2d.PIECES.of(mechanism=name) for o in mt.outputs if o.type == "field2d"]
        if drawn and mt.mechanism2d:
            out += [s.of(mechanism=name) for s in (mechanism2d.TYPE, mechanism2d.TITLE,
                                                   mechanism2d.CONTROLLABLE, mechanism2d.DIMS,
                                                   mechanism2d.BACKGROUND)]
    return out
