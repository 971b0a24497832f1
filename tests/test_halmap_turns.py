"""`simserver.hal.halmap.TurnCounter`: a CANcoder or Talon FX rotor counts turns where
simserver's absolute reading wraps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simserver.hal.halmap import TurnCounter


def test_starts_at_the_first_reading_and_follows_the_shaft_across_the_wrap():
    shaft = np.concatenate([np.linspace(0.9, 3.4, 60), np.linspace(3.4, -2.2, 120)])
    counter = TurnCounter(1.0)
    offset = 0.125
    out = [counter((x + offset) % 1.0) for x in shaft]
    assert out[0] == pytest.approx(0.025)  # (0.9 + 0.125) wrapped: where the device starts
    np.testing.assert_allclose(out, shaft + offset - 1.0, atol=1e-12)


def test_a_period_in_degrees_and_a_wrap_at_either_side():
    counter = TurnCounter(360.0)
    assert [counter(a) for a in (359.0, 1.0, 3.0, 358.0, 2.0)] == \
        pytest.approx([359.0, 361.0, 363.0, 358.0, 362.0])


def test_no_period_passes_readings_through():
    counter = TurnCounter(0.0)
    assert [counter(x) for x in (0.9, 0.1, -5.0)] == [0.9, 0.1, -5.0]


def test_steps_just_under_half_a_turn_are_taken_the_short_way_both_ways():
    step = math.pi - 0.04
    for sign in (1.0, -1.0):
        counter = TurnCounter(math.tau)
        out = [counter((sign * k * step) % math.tau) for k in range(8)]
        assert out == pytest.approx([sign * k * step for k in range(8)], abs=1e-12)
