"""A Field2d on NetworkTables, in the layout Glass, Shuffleboard and Elastic read.

Table ``/SmartDashboard/<name>``: ``.type`` = "Field2d" (with the SmartDashboard topic
property WPILib's SendableBuilder sets), ``.name``, ``.controllable`` and one ``double[]`` per
object holding ``[x_m, y_m, heading_deg, ...]`` triplets.
"""

from __future__ import annotations

import math
import typing

import ntcore


class Field2dPublisher:
    """Publishes one Field2d with a ``Robot`` object (and any extra named objects)."""

    def __init__(self, inst: ntcore.NetworkTableInstance, name: str,
                 options: ntcore.PubSubOptions):
        table = f"/SmartDashboard/{name}"
        self._inst = inst
        self._table = table
        self._options = options
        self._type = inst.getStringTopic(f"{table}/.type").publishEx(
            "string", {"SmartDashboard": "Field2d"}, options)
        self._type.set("Field2d")
        self._name = inst.getStringTopic(f"{table}/.name").publish(options)
        self._name.set(name)
        self._controllable = inst.getBooleanTopic(f"{table}/.controllable").publish(options)
        self._controllable.set(False)
        self._objects: dict[str, ntcore.DoubleArrayPublisher] = {}

    def set_poses(self, obj: str, poses: list[tuple[float, float, float]]) -> None:
        """Set object ``obj`` to poses given as (x m, y m, heading rad)."""
        pub = self._objects.get(obj)
        if pub is None:
            pub = self._inst.getDoubleArrayTopic(f"{self._table}/{obj}").publish(self._options)
            self._objects[obj] = pub
        flat: list[typing.SupportsFloat | typing.SupportsIndex] = []
        for x, y, heading in poses:
            flat += (x, y, math.degrees(heading))
        pub.set(flat)

    def close(self) -> None:
        """Unpublish everything."""
        self._type.close()
        self._name.close()
        self._controllable.close()
        for pub in self._objects.values():
            pub.close()
