"""Mechanism2d on NetworkTables, in the layout WPILib's Mechanism2d publishes (and Glass,
Shuffleboard and AdvantageScope draw).

Table ``/SmartDashboard/<name>``: ``.type`` = "Mechanism2d" (topic property
{"SmartDashboard": "Mechanism2d"}), ``.name``, ``.controllable``, ``dims`` [w, h],
``backgroundColor``; per root ``<root>/x``, ``<root>/y``; per ligament
``<root>/<parents...>/<ligament>/`` with ``.type`` = "line", ``angle`` (deg), ``length``,
``weight`` and ``color``.
"""

from __future__ import annotations

import ntcore

from simserver.models.api import Drawing, Ligament


class Mechanism2dPublisher:
    """Publishes one Drawing; call :meth:`update` every tick."""

    def __init__(self, inst: ntcore.NetworkTableInstance, name: str, drawing: Drawing,
                 options: ntcore.PubSubOptions, background: str = "#000020"):
        self._inst = inst
        self._table = f"/SmartDashboard/{name}"
        self._opts = options
        t = self._table
        self._keep: list[ntcore.Publisher] = []
        typ = inst.getStringTopic(f"{t}/.type").publishEx("string",
                                                          {"SmartDashboard": "Mechanism2d"},
                                                          options)
        typ.set("Mechanism2d")
        nm = inst.getStringTopic(f"{t}/.name").publish(options)
        nm.set(name)
        ctl = inst.getBooleanTopic(f"{t}/.controllable").publish(options)
        ctl.set(False)
        dims = inst.getDoubleArrayTopic(f"{t}/dims").publish(options)
        dims.set([drawing.width, drawing.height])
        bg = inst.getStringTopic(f"{t}/backgroundColor").publish(options)
        bg.set(background)
        self._keep += [typ, nm, ctl, dims, bg]
        self._roots: dict[str, tuple[ntcore.DoublePublisher, ntcore.DoublePublisher]] = {}
        self._ligs: dict[str, tuple[ntcore.DoublePublisher, ntcore.DoublePublisher,
                                    ntcore.DoublePublisher, ntcore.StringPublisher]] = {}
        self._paths = {lig.name: self._path(drawing, lig) for lig in drawing.ligaments}
        self.update(drawing)

    def _path(self, drawing: Drawing, lig: Ligament) -> str:
        by_name = {item.name: item for item in drawing.ligaments}
        parts = [lig.name]
        parent = lig.parent
        while parent:
            parts.append(parent)
            parent = by_name[parent].parent
        root = by_name[parts[-1]].root
        return "/".join([self._table, root, *reversed(parts)])

    def update(self, drawing: Drawing) -> None:
        """Publish the current root positions and ligament lengths, angles and colours."""
        inst, opts = self._inst, self._opts
        for root, (x, y) in drawing.roots.items():
            pubs = self._roots.get(root)
            if pubs is None:
                base = f"{self._table}/{root}"
                pubs = (inst.getDoubleTopic(f"{base}/x").publish(opts),
                        inst.getDoubleTopic(f"{base}/y").publish(opts))
                self._roots[root] = pubs
            pubs[0].set(x)
            pubs[1].set(y)
        for lig in drawing.ligaments:
            lpubs = self._ligs.get(lig.name)
            if lpubs is None:
                path = self._paths.get(lig.name) or self._path(drawing, lig)
                typ = inst.getStringTopic(f"{path}/.type").publishEx(
                    "string", {"SmartDashboard": "line"}, opts)
                typ.set("line")
                self._keep.append(typ)
                lpubs = (inst.getDoubleTopic(f"{path}/angle").publish(opts),
                         inst.getDoubleTopic(f"{path}/length").publish(opts),
                         inst.getDoubleTopic(f"{path}/weight").publish(opts),
                         inst.getStringTopic(f"{path}/color").publish(opts))
                self._ligs[lig.name] = lpubs
            lpubs[0].set(lig.angle)
            lpubs[1].set(lig.length)
            lpubs[2].set(lig.weight)
            lpubs[3].set(lig.color)
