"""The real-time loop clock (`simserver.runs.session.LoopClock`): one world period per robot loop,
whatever robot code's time, more only for loops that were really skipped."""

from __future__ import annotations

import numpy as np
import pytest

from simserver.runs.session import MAX_CATCH_UP, LoopClock

PERIOD = 0.02


def stamps(loops: list[int], code_time: np.ndarray, t0: float = 3.217) -> list[float]:
    """Bridge stamps of TimedRobot loops ``loops`` (indices) whose code took ``code_time``."""
    return [t0 + n * PERIOD + c for n, c in zip(loops, code_time, strict=True)]


@pytest.mark.parametrize("seed", range(5))
def test_jittered_robot_code_advances_the_world_one_period_per_loop(seed):
    rng = np.random.default_rng(seed)
    n = 3000  # 60 s of loops
    clock = LoopClock(PERIOD)
    steps = [clock.advance(t) for t in stamps(list(range(n)), rng.uniform(0, 0.95 * PERIOD, n))]
    assert steps == [1] * n
    assert clock.index == n - 1


def test_skipped_loops_are_caught_up_and_nothing_else():
    rng = np.random.default_rng(7)
    loops = list(range(100)) + list(range(103, 200)) + list(range(201, 300))
    clock = LoopClock(PERIOD)
    steps = [clock.advance(t) for t in stamps(loops, rng.uniform(0, 0.5 * PERIOD, len(loops)))]
    # The world advanced exactly as many periods as the robot's clock did.
    assert sum(steps) == loops[-1] + 1
    assert steps[100] == 4 and steps[197] == 2
    assert steps.count(1) == len(loops) - 2
    # World and robot clock stay within one period at every loop.
    assert 0.0 <= clock.gap < PERIOD


def test_a_clock_jump_is_not_simulated():
    clock = LoopClock(PERIOD)
    for n in range(10):
        assert clock.advance(1.0 + n * PERIOD + 0.001) == 1
    assert clock.advance(1.0 + (10 + 10 * MAX_CATCH_UP) * PERIOD) == 1
    assert clock.advance(1.0 + (11 + 10 * MAX_CATCH_UP) * PERIOD) == 1
