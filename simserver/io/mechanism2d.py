"""Mechanism2d on NetworkTables, in the layout WPILib's Mechanism2d publishes (and Glass,
Shuffleboard and AdvantageScope draw).

Table ``/SmartDashboard/<name>``: ``.type`` = "Mechanism2d" (topic property
{"SmartDashboard": "Mechanism2d"}), ``.name``, ``.controllable``, ``dims`` [w, h],
``backgroundColor``; per root ``<root>/x``, ``<root>/y``; per ligament
``<root>/<parents...>/<ligament>/`` with ``.type`` = "line", ``angle`` (deg), ``length``,
``weight`` and ``color``. The topics are declared in :data:`TOPICS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ntcore

from simserver.contract.topics import TopicGroup, TopicSpec
from simserver.models.api import Drawing, Ligament

TABLE = "/SmartDashboard/<mechanism>"
ROOT = f"{TABLE}/<root>"
LIGAMENT = f"{ROOT}/<ligament...>"


def _spec(name: str, nt_type: str, unit: str, doc: str) -> TopicSpec:
    return TopicSpec(name, nt_type, "out", unit, doc)


TYPE = _spec(f"{TABLE}/.type", "string", "",
             '"Mechanism2d" (topic property {"SmartDashboard": "Mechanism2d"}).')
TITLE = _spec(f"{TABLE}/.name", "string", "", "The mechanism's name.")
CONTROLLABLE = _spec(f"{TABLE}/.controllable", "boolean", "", "false.")
DIMS = _spec(f"{TABLE}/dims", "double[]", "m", "Canvas [width, height].")
BACKGROUND = _spec(f"{TABLE}/backgroundColor", "string", "", 'Canvas colour ("#000020").')
ROOT_X = _spec(f"{ROOT}/x", "double", "m", "Root position, x.")
ROOT_Y = _spec(f"{ROOT}/y", "double", "m", "Root position, y.")
LIGAMENT_TYPE = _spec(f"{LIGAMENT}/.type", "string", "",
                      '"line" (topic property {"SmartDashboard": "line"}).')
ANGLE = _spec(f"{LIGAMENT}/angle", "double", "deg",
              "Ligament angle relative to its parent, CCW from +x.")
LENGTH = _spec(f"{LIGAMENT}/length", "double", "m", "Ligament length.")
WEIGHT = _spec(f"{LIGAMENT}/weight", "double", "px", "Line width.")
COLOR = _spec(f"{LIGAMENT}/color", "string", "", 'Line colour ("#rrggbb").')
TOPICS = TopicGroup(
    "Mechanism2d", "Per mechanism whose type draws itself (the built-in types all do), in the "
    "table WPILib's Mechanism2d publishes, which Glass, Shuffleboard and AdvantageScope draw. "
    "`<root>` is a root of the drawing, `<ligament...>` a ligament path: its parent "
    "ligaments, then its own name, joined by `/`.",
    (TYPE, TITLE, CONTROLLABLE, DIMS, BACKGROUND, ROOT_X, ROOT_Y, LIGAMENT_TYPE, ANGLE, LENGTH,
     WEIGHT, COLOR))


def ligament_path(drawing: Drawing, lig: Ligament) -> tuple[str, str]:
    """(root, path from the root) of ligament ``lig``: its parents then itself, by ``/``."""
    by_name = {item.name: item for item in drawing.ligaments}
    parts = [lig.name]
    parent = lig.parent
    while parent:
        parts.append(parent)
        parent = by_name[parent].parent
    return by_name[parts[-1]].root, "/".join(reversed(parts))


BACKGROUND_COLOR = "#000020"


def entries(name: str, drawing: Drawing, background: str = BACKGROUND_COLOR
            ) -> dict[str, str | bool | float | list[float]]:
    """Topic -> value of every entry of mechanism ``name``'s table for ``drawing`` (the
    declarations above, filled): what :class:`Mechanism2dPublisher` publishes and
    ``--record`` records. Numbers are floats, as WPILib publishes them."""
    out: dict[str, str | bool | float | list[float]] = {
        TYPE.at(mechanism=name): "Mechanism2d", TITLE.at(mechanism=name): name,
        CONTROLLABLE.at(mechanism=name): False,
        DIMS.at(mechanism=name): [float(drawing.width), float(drawing.height)],
        BACKGROUND.at(mechanism=name): background}
    for root, (x, y) in drawing.roots.items():
        out[ROOT_X.at(mechanism=name, root=root)] = float(x)
        out[ROOT_Y.at(mechanism=name, root=root)] = float(y)
    for lig in drawing.ligaments:
        root, path = ligament_path(drawing, lig)
        names = {"mechanism": name, "root": root, "ligament": path}
        out[LIGAMENT_TYPE.at(**names)] = "line"
        out[ANGLE.at(**names)] = float(lig.angle)
        out[LENGTH.at(**names)] = float(lig.length)
        out[WEIGHT.at(**names)] = float(lig.weight)
        out[COLOR.at(**names)] = lig.color
    return out


class Mechanism2dPublisher:
    """Publishes one Drawing; call :meth:`update` every tick."""

    def __init__(self, inst: ntcore.NetworkTableInstance, name: str, drawing: Drawing,
                 options: ntcore.PubSubOptions, background: str = BACKGROUND_COLOR):
        self._inst = inst
        self._name = name
        self._opts = options
        self._background = background
        self._pubs: dict[str, Callable[[Any], None]] = {}
        self.update(drawing)

    def update(self, drawing: Drawing) -> None:
        """Publish the current root positions and ligament lengths, angles and colours."""
        for topic, value in entries(self._name, drawing, self._background).items():
            pub = self._pubs.get(topic)
            if pub is None:
                pub = self._pubs[topic] = self._publisher(topic, value)
            pub(value)

    def _publisher(self, topic: str, value: Any) -> Callable[[Any], None]:
        """The setter of ``topic`` for values like ``value``; a ``.type`` entry carries the
        SmartDashboard topic property WPILib's SendableBuilder gives it."""
        inst, opts = self._inst, self._opts
        if isinstance(value, str):
            if topic.endswith("/.type"):
                return inst.getStringTopic(topic).publishEx(
                    "string", {"SmartDashboard": value}, opts).set
            return inst.getStringTopic(topic).publish(opts).set
        if isinstance(value, bool):
            return inst.getBooleanTopic(topic).publish(opts).set
        if isinstance(value, list):
            return inst.getDoubleArrayTopic(topic).publish(opts).set
        return inst.getDoubleTopic(topic).publish(opts).set
