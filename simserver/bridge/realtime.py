"""Real-time transport: the robot program's own NetworkTables server carries the topic values.

Every robot loop (the HAL's SimPeriodicAfter callback, on the robot thread) the bridge
publishes the program's outputs and writes the newest sensor values simserver published. The
outputs are published with ``keepDuplicates``, so an unchanged value crosses the wire every
loop too: that is how simserver's stale-input watchdog (``sim.input_timeout``) tells a frozen
program from one that holds its outputs.
"""

from __future__ import annotations

from typing import Any

import ntcore

from simserver.bridge.core import Bridge
from simserver.config.model import Config
from simserver.contract import topics

EVERY_LOOP = ntcore.PubSubOptions(periodic=0.001, keepDuplicates=True)
LATEST = ntcore.PubSubOptions(periodic=0.001)


def sensor_topics(cfg: Config) -> list[str]:
    """Every topic the bridge reads from simserver for ``cfg``."""
    names = [topics.GYRO_YAW, topics.GYRO_RATE, topics.BATTERY_VOLTAGE, topics.DS_MODE]
    for name in cfg.encoders:
        names += [topics.encoder_position(name), topics.encoder_velocity(name)]
    names += [topics.switch(n) for n in cfg.switches]
    for i in range(topics.JOYSTICKS):
        names += [topics.joystick_axes(i), topics.joystick_buttons(i)]
    return names


class NtLink:
    """Publishes outputs and reads sensors on the default NT instance (the program's server)."""

    def __init__(self, bridge: Bridge, inst: ntcore.NetworkTableInstance | None = None):
        self.bridge = bridge
        self.inst = inst or ntcore.NetworkTableInstance.getDefault()
        self._pubs: dict[str, Any] = {}
        self._subs = {name: self.inst.getTopic(name).genericSubscribe(LATEST)
                      for name in sensor_topics(bridge.cfg)}
        # Published now, before the program's NT server starts: ntcore gives a topic its first
        # publisher's type, so a client that publishes a string there first cannot win it.
        for name in bridge.motors:
            self._publisher(topics.motor(name), 0.0)
        for name in bridge.solenoids:
            self._publisher(topics.solenoid(name), False)
        self._publisher(topics.ROBOT_MODE, "")

    def _publisher(self, topic: str, value: Any) -> Any:
        pub = self._pubs.get(topic)
        if pub is None:
            t = self.inst.getTopic(topic)
            if isinstance(value, bool):
                pub = t.genericPublish("boolean", EVERY_LOOP)
            elif isinstance(value, str):
                pub = t.genericPublish("string", EVERY_LOOP)
            else:
                pub = t.genericPublish("double", EVERY_LOOP)
            self._pubs[topic] = pub
        return pub

    def periodic(self) -> None:
        """One robot loop: publish outputs, apply the newest sensor values."""
        for topic, value in self.bridge.outputs().items():
            pub = self._publisher(topic, value)
            if isinstance(value, bool):
                pub.setBoolean(value)
            elif isinstance(value, str):
                pub.setString(value)
            else:
                pub.setDouble(float(value))
        values = {}
        for name, sub in self._subs.items():
            v = sub.get()
            if v.type() != ntcore.NetworkTableType.kUnassigned:
                values[name] = v.value()
        self.bridge.apply(values)
