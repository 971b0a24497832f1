"""`simserver.hal.halmap.Rezero` and `Watch`: the robot program's resets are kept, a physics.py's
writes are not (pure: a dict stands in for the HAL value)."""

from __future__ import annotations

from simserver.hal.halmap import Rezero, Watch


class Cell:
    """One HAL value that several writers share."""

    def __init__(self) -> None:
        self.value = 0.0

    def read(self) -> float:
        return self.value

    def write(self, x: float) -> None:
        self.value = x


def loop(cell: Cell, rz: Rezero, physical: float, program=None, physics=None) -> bool:
    """One robot loop: program code, SimPeriodicBefore, physics.py, SimPeriodicAfter + write.
    Returns whether a foreign write was seen."""
    if program is not None:
        cell.value = program
    rz.observe()
    if physics is not None:
        cell.value = physics
    foreign = rz.settle()
    rz(physical)
    return foreign


def test_without_physics_the_program_reads_simservers_value():
    cell = Cell()
    rz = Rezero(cell.read, cell.write)
    for k in range(5):
        assert not loop(cell, rz, physical=10.0 * k)
        assert cell.value == 10.0 * k


def test_a_program_reset_is_kept_as_an_offset():
    cell = Cell()
    rz = Rezero(cell.read, cell.write)
    loop(cell, rz, 50.0)
    assert not loop(cell, rz, 60.0, program=0.0)  # encoder.reset() at physical 50
    assert cell.value == 10.0
    loop(cell, rz, 75.0)
    assert cell.value == 25.0


def test_physics_writes_are_overwritten_counted_and_never_taken_for_resets():
    cell = Cell()
    rz = Rezero(cell.read, cell.write)
    loop(cell, rz, 1.0)
    for k in range(2, 10):
        assert loop(cell, rz, float(k), physics=1000.0 + k)  # physics.py writes every loop
        assert cell.value == float(k)  # simserver's value, no offset taken from physics.py
    assert rz.overwritten == 8
    # A reset by the program is still recognised between physics.py's writes.
    loop(cell, rz, 20.0, program=0.0, physics=5.0)
    assert cell.value == 20.0 - 9.0


def test_a_loop_without_an_answer_takes_no_physics_write_for_a_reset():
    cell = Cell()
    rz = Rezero(cell.read, cell.write)
    loop(cell, rz, 3.0)
    rz.observe()  # a loop whose answer came late: physics.py wrote, nothing was written
    cell.value = 999.0
    assert rz.settle()
    assert not loop(cell, rz, 4.0)
    assert cell.value == 4.0


def test_without_loop_hooks_any_change_is_the_programs():
    cell = Cell()
    rz = Rezero(cell.read, cell.write)  # halsim_ws: no observe/settle
    rz(50.0)
    cell.value = 0.0
    rz(60.0)
    assert cell.value == 10.0


def test_watch_tells_a_change_between_observe_and_settle():
    cell = Cell()
    w = Watch(cell.read)
    assert not w.settle()  # never observed
    w.observe()
    assert not w.settle()
    w.observe()
    cell.value = 1.0
    assert w.settle()


def test_watch_takes_a_value_the_device_wraps_as_unchanged():
    # Phoenix's Pigeon 2 writes its raw yaw back within [0, 360) in its own callback
    cell = Cell()
    w = Watch(cell.read, tolerance=1e-3, wrap=360.0)
    cell.value = -0.0002
    w.observe()
    cell.value = 359.99981689453125  # what the Pigeon 2 wrote back (float32)
    assert not w.settle()
    w.observe()
    cell.value = 10.0  # someone else's write
    assert w.settle()
