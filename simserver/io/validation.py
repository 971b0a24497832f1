"""Validation of inputs before they reach a model.

Motor duty cycles: NaN and ±inf become 0, values outside [-1, 1] are clamped, non-numbers
(strings, booleans, arrays) are ignored and the previous value kept. Solenoids: only booleans.
Each kind of problem is logged once per topic, so a flood cannot flood the log.

    >>> v = InputValidator()
    >>> v.duty("/simserver/motors/left", float("nan"))
    0.0
    >>> v.duty("/simserver/motors/left", 3.0)
    1.0
    >>> v.duty("/simserver/motors/left", "fast") is None
    True
"""

from __future__ import annotations

import logging
import math
from typing import Any

from simserver.contract import topics

log = logging.getLogger("simserver.inputs")


class InputValidator:
    """Checks raw input values; remembers which warnings it has already given per topic."""

    def __init__(self) -> None:
        self._warned: set[tuple[str, str]] = set()
        self.rejected = 0

    def _warn(self, topic: str, kind: str, message: str) -> None:
        self.rejected += 1
        if (topic, kind) not in self._warned:
            self._warned.add((topic, kind))
            log.warning("%s: %s (further such values on this topic are handled silently)",
                        topic, message)

    def duty(self, topic: str, value: Any) -> float | None:
        """A safe duty cycle in [-1, 1], or None when the value must be ignored."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self._warn(topic, "type", f"ignored a value of type {type(value).__name__}; "
                       "expected a double duty cycle")
            return None
        x = float(value)
        if not math.isfinite(x):
            self._warn(topic, "nonfinite", f"read {x} as 0")
            return 0.0
        if x > 1.0 or x < -1.0:
            self._warn(topic, "range", f"clamped {x} to [-1, 1]")
            return 1.0 if x > 0 else -1.0
        return x

    def solenoid(self, topic: str, value: Any) -> bool | None:
        """A solenoid state, or None when the value must be ignored."""
        if not isinstance(value, bool):
            self._warn(topic, "type", f"ignored a value of type {type(value).__name__}; "
                       "expected a boolean")
            return None
        return value


def decode_inputs(values: dict[str, Any], motors: list[str], solenoids: list[str],
                  validator: InputValidator) -> tuple[dict[str, float], dict[str, bool]]:
    """Validated motor duties and solenoid states from a topic -> value mapping (a lock-step
    message); topics it does not hold keep their previous values."""
    duties: dict[str, float] = {}
    states: dict[str, bool] = {}
    for name in motors:
        topic = topics.motor(name)
        if topic in values and (duty := validator.duty(topic, values[topic])) is not None:
            duties[name] = duty
    for name in solenoids:
        topic = topics.solenoid(name)
        if topic in values and (on := validator.solenoid(topic, values[topic])) is not None:
            states[name] = on
    return duties, states
