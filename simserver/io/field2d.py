"""The SimField: a Field2d on NetworkTables, in the layout Glass, Shuffleboard and Elastic read.

Table ``/SmartDashboard/SimField``: ``.type`` = "Field2d" (with the SmartDashboard topic
property WPILib's SendableBuilder sets), ``.name``, ``.controllable`` and one ``double[]`` per
object holding ``[x_m, y_m, heading_deg, ...]`` triplets. The objects simserver draws are
declared here (:data:`TOPICS`); the robot program's own Field2d is never written.
"""

from __future__ import annotations

import math
import typing

import ntcore
import numpy as np

from simserver.contract import topics
from simserver.contract.snapshot import PieceSnapshot
from simserver.contract.topics import TopicGroup, TopicSpec
from simserver.models.api import OutputSpec
from simserver.models.pieces.types import FLIGHT, LOOSE

NAME = "SimField"
TABLE = f"/SmartDashboard/{NAME}"
FIELD2D_PROPERTY = {"SmartDashboard": "Field2d"}


def _object(obj: str, unit: str, doc: str) -> TopicSpec:
    return TopicSpec(f"{TABLE}/{obj}", "double[]", "out", unit, doc)


TYPE = TopicSpec(f"{TABLE}/.type", "string", "out", "",
                 '"Field2d" (topic property {"SmartDashboard": "Field2d"}).')
TITLE = TopicSpec(f"{TABLE}/.name", "string", "out", "", f'"{NAME}".')
CONTROLLABLE = TopicSpec(f"{TABLE}/.controllable", "boolean", "out", "", "false.")
ROBOT = _object("Robot", "[m, m, deg]", "Robot pose as Field2d reads it: [x, y, heading].")
OTHER_ROBOT = _object("<robot>", "[m, m, deg]",
                      "Another robot of `[robots.<robot>]` driven over NetworkTables.")
CAMERA_TAGS = _object("<camera> tags", "[m, m, deg, ...]",
                      "The tags camera `<camera>` saw in its last frame.")
PIECES = _object("<mechanism>", "[m, m, deg, ...]",
                 "A mechanism's `field2d` output (for example the game pieces of an intake "
                 "plugin), one [x, y, heading] triplet per pose.")
GAME_PIECES = _object("Pieces", "[m, m, deg, ...]",
                      "Only when the field has game pieces: those on the carpet and in flight "
                      "(every type), [x, y, yaw] each.")
TRAJECTORY = _object("Trajectory", "[m, m, deg, ...]",
                     "With `--check` of a scenario with a trajectory: its poses.")
TOPICS = TopicGroup(
    "SimField", f"A Field2d named {NAME} (`{TABLE}`) in the layout WPILib's Field2d publishes, "
    "which Glass, Shuffleboard, Elastic and AdvantageScope draw. Every object is a `double[]` "
    "of [x m, y m, heading deg] triplets. simserver never writes the robot program's own "
    "Field2d.",
    (TYPE, TITLE, CONTROLLABLE, ROBOT, OTHER_ROBOT, CAMERA_TAGS, PIECES, GAME_PIECES,
     TRAJECTORY))


def output_topic(mechanism: str, out: OutputSpec) -> TopicSpec:
    """The topic of one declared output of a mechanism: a SimField object for a ``field2d``
    output (:data:`PIECES`), its /simserver topic otherwise."""
    if out.type == "field2d":
        return PIECES.of(mechanism=mechanism)
    return topics.mechanism_topic(mechanism, out)


def loose_poses(pieces: PieceSnapshot) -> np.ndarray:
    """(n, 3) rows of (x m, y m, yaw rad) of the pieces on the carpet or in flight, by id."""
    shown = (pieces.state == LOOSE) | (pieces.state == FLIGHT)
    return pieces.pose[shown][:, (0, 1, 5)]


def flat(poses: np.ndarray) -> list[typing.SupportsFloat | typing.SupportsIndex]:
    """(n, 3) rows of (x m, y m, heading rad) as the Field2d wire has them: [x, y, deg, ...]."""
    out = np.array(poses, dtype=float).reshape(-1, 3)
    out[:, 2] = np.degrees(out[:, 2])
    values: list[typing.SupportsFloat | typing.SupportsIndex] = out.ravel().tolist()
    return values


class Field2dPublisher:
    """Publishes the SimField: its ``.type``, ``.name``, ``.controllable``, and each object
    set with :meth:`set_poses`."""

    def __init__(self, inst: ntcore.NetworkTableInstance, options: ntcore.PubSubOptions):
        self._inst = inst
        self._options = options
        self._type = inst.getStringTopic(TYPE.name).publishEx("string", FIELD2D_PROPERTY,
                                                               options)
        self._type.set("Field2d")
        self._name = inst.getStringTopic(TITLE.name).publish(options)
        self._name.set(NAME)
        self._controllable = inst.getBooleanTopic(CONTROLLABLE.name).publish(options)
        self._controllable.set(False)
        self._objects: dict[str, ntcore.DoubleArrayPublisher] = {}

    def _object(self, topic: str) -> ntcore.DoubleArrayPublisher:
        pub = self._objects.get(topic)
        if pub is None:
            if not topic.startswith(f"{TABLE}/"):
                raise ValueError(f"{topic!r} is not an object of {TABLE}")
            pub = self._inst.getDoubleArrayTopic(topic).publish(self._options)
            self._objects[topic] = pub
        return pub

    def set_poses(self, topic: str, poses: list[tuple[float, float, float]]) -> None:
        """Set the object on ``topic`` (one of the object specs above, filled) to poses given
        as (x m, y m, heading rad)."""
        values: list[typing.SupportsFloat | typing.SupportsIndex] = []
        for x, y, heading in poses:
            values += (x, y, math.degrees(heading))
        self._object(topic).set(values)

    def set_array(self, topic: str, poses: np.ndarray) -> None:
        """Like :meth:`set_poses`, the poses as an (n, 3) array (hundreds of game pieces)."""
        self._object(topic).set(flat(poses))

    def close(self) -> None:
        """Unpublish everything."""
        self._type.close()
        self._name.close()
        self._controllable.close()
        for pub in self._objects.values():
            pub.close()
