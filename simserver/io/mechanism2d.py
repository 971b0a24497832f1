"""Mechanism2d on NetworkTables, in the layout WPILib's Mechanism2d publishes (and Glass,
Shuffleboard and AdvantageScope draw).

Table ``/SmartDashboard/<name>``: ``.type`` = "Mechanism2d" (topic property
{"SmartDashboard": "Mechanism2d"}), ``.name``, ``.controllable``, ``dims`` [w, h],
``backgroundColor``; per root ``<root>/x``, ``<root>/y``; per ligament
``<root>/<parents...>/<ligament>/`` with ``.type`` = "line", ``angle`` (deg), ``length``,
``weight`` and ``color``. The topics are declared in :data:`TOPICS`.
"""

from __future__ import annotations

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


class Mechanism2dPublisher:
    """Publishes one Drawing; call :meth:`update` every tick."""

    def __init__(self, inst: ntcore.NetworkTableInstance, name: str, drawing: Drawing,
                 options: ntcore.PubSubOptions, background: str = "#000020"):
        self._inst = inst
        self._name = name
        self._opts = options
        self._keep: list[ntcore.Publisher] = []
        typ = inst.getStringTopic(TYPE.at(mechanism=name)).publishEx(
            "string", {"SmartDashboard": "Mechanism2d"}, options)
        typ.set("Mechanism2d")
        nm = inst.getStringTopic(TITLE.at(mechanism=name)).publish(options)
        nm.set(name)
        ctl = inst.getBooleanTopic(CONTROLLABLE.at(mechanism=name)).publish(options)
        ctl.set(False)
        dims = inst.getDoubleArrayTopic(DIMS.at(mechanism=name)).publish(options)
        dims.set([drawing.width, drawing.height])
        bg = inst.getStringTopic(BACKGROUND.at(mechanism=name)).publish(options)
        bg.set(background)
        self._keep += [typ, nm, ctl, dims, bg]
        self._roots: dict[str, tuple[ntcore.DoublePublisher, ntcore.DoublePublisher]] = {}
        self._ligs: dict[str, tuple[ntcore.DoublePublisher, ntcore.DoublePublisher,
                                    ntcore.DoublePublisher, ntcore.StringPublisher]] = {}
        self._paths = {lig.name: ligament_path(drawing, lig) for lig in drawing.ligaments}
        self.update(drawing)

    def update(self, drawing: Drawing) -> None:
        """Publish the current root positions and ligament lengths, angles and colours."""
        inst, opts = self._inst, self._opts
        for root, (x, y) in drawing.roots.items():
            pubs = self._roots.get(root)
            if pubs is None:
                names = {"mechanism": self._name, "root": root}
                pubs = (inst.getDoubleTopic(ROOT_X.at(**names)).publish(opts),
                        inst.getDoubleTopic(ROOT_Y.at(**names)).publish(opts))
                self._roots[root] = pubs
            pubs[0].set(x)
            pubs[1].set(y)
        for lig in drawing.ligaments:
            lpubs = self._ligs.get(lig.name)
            if lpubs is None:
                root, path = self._paths.get(lig.name) or ligament_path(drawing, lig)
                names = {"mechanism": self._name, "root": root, "ligament": path}
                typ = inst.getStringTopic(LIGAMENT_TYPE.at(**names)).publishEx(
                    "string", {"SmartDashboard": "line"}, opts)
                typ.set("line")
                self._keep.append(typ)
                lpubs = (inst.getDoubleTopic(ANGLE.at(**names)).publish(opts),
                         inst.getDoubleTopic(LENGTH.at(**names)).publish(opts),
                         inst.getDoubleTopic(WEIGHT.at(**names)).publish(opts),
                         inst.getStringTopic(COLOR.at(**names)).publish(opts))
                self._ligs[lig.name] = lpubs
            lpubs[0].set(lig.angle)
            lpubs[1].set(lig.length)
            lpubs[2].set(lig.weight)
            lpubs[3].set(lig.color)
