"""halmap's pure device conversions for pneumatics and analog sensors: a double solenoid's
valve holds its spool between pulses; an analog sensor spans 0..5 V over its travel."""

from __future__ import annotations

import math

import pytest

from simserver.hal.halmap import Valve, analog_voltage


def test_single_solenoid_follows_its_channel_and_falls_off_when_disabled():
    valve = Valve(initial=True, double=False)
    assert [valve.update(True, on) for on in (True, False, True)] == [True, False, True]
    assert valve.update(False, True) is False  # the roboRIO cuts the output


def test_double_solenoid_latches_on_forward_and_off_on_reverse():
    valve = Valve(initial=False, double=True)
    pulses = [(True, False), (False, False), (False, True), (False, False), (True, False)]
    assert [valve.update(True, f, r) for f, r in pulses] == [True, True, False, False, True]


def test_double_solenoid_holds_while_disabled_and_resets_to_initial():
    valve = Valve(initial=True, double=True)
    assert valve.update(True, False, False) is True  # never fired: the initial state
    assert valve.update(True, False, True) is False
    assert valve.update(False, True, False) is False  # disabled: outputs are cut, it holds
    valve.reset()
    assert valve.state is True


@pytest.mark.parametrize(("position", "unit", "full_range", "volts"), [
    (90.0, "deg", 2 * math.pi, 1.25),
    (450.0, "deg", 2 * math.pi, 1.25),  # an absolute encoder wraps every turn
    (135.0, "deg", math.radians(270.0), 2.5),
    (2.5, "rotations", 10 * 2 * math.pi, 1.25),  # a ten-turn potentiometer
    (math.pi, "rad", 4 * math.pi, 1.25),
])
def test_analog_voltage_spans_five_volts_over_the_full_range(position, unit, full_range,
                                                               volts):
    assert analog_voltage(position, unit, 2048, full_range) == pytest.approx(volts)
