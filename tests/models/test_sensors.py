"""Encoders and the gyro: what robot code reads, from the true motion.

Encoder readings are checked against the true wheel travel of the drivetrain state converted by
hand (6 in wheels, 10.71:1 gearing, 1 ft = 0.3048 m); the gyro against the true heading.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from simserver.config.loader import default_config_text, loads
from simserver.models.api import Joint
from simserver.models.sensors import Encoder, Gyro
from simserver.world import World

WHEEL_RADIUS = 3 * 0.0254  # m
GEARING = 10.71
WHEEL_REV_PER_M = 1 / (2 * math.pi * WHEEL_RADIUS)

EXTRA_ENCODERS = """
[encoders.ft]
motor = "left"
unit = "ft"

[encoders.wheel_rot]
motor = "left"
unit = "rotations"
mount = "wheel"

[encoders.motor_rot]
motor = "left"
unit = "rotations"
mount = "motor"

[encoders.deg]
motor = "right"
unit = "deg"

[encoders.ticks]
motor = "left"
unit = "ticks"
mount = "motor"
ticks_per_revolution = 2048

[encoders.inv]
motor = "right"
unit = "m"
inverted = true
"""

# Readings are sums of per-substep increments, the reference one product: 1e-9 relative covers
# the accumulated rounding of a few hundred additions and nothing else.
REL = 1e-9


@pytest.fixture(scope="module")
def driven():
    """A kitbot with many encoders after 1 s on an arc (left 0.7, right 0.4)."""
    world = World(loads(default_config_text() + EXTRA_ENCODERS, source="enc.toml"))
    world.set_motor("left", 0.7)
    world.set_motor("right", 0.4)
    world.step(1.0)
    return world.snapshot(), world.drivetrain.drive.state


def test_metre_encoder_reads_wheel_travel(driven):
    snap, st_ = driven
    assert snap.encoders["left"][0] == pytest.approx(st_.s_left, rel=REL)
    assert snap.encoders["right"][1] == pytest.approx(st_.v_right, rel=REL)


def test_foot_encoder_reads_travel_in_feet(driven):
    snap, st_ = driven
    assert snap.encoders["ft"][0] == pytest.approx(st_.s_left / 0.3048, rel=REL)
    assert snap.encoders["ft"][1] == pytest.approx(st_.v_left / 0.3048, rel=REL)


def test_rotation_encoder_at_wheel_counts_wheel_turns(driven):
    snap, st_ = driven
    assert snap.encoders["wheel_rot"][0] == pytest.approx(st_.s_left * WHEEL_REV_PER_M, rel=REL)


def test_rotation_encoder_at_motor_counts_motor_turns(driven):
    snap, st_ = driven
    assert snap.encoders["motor_rot"][0] == pytest.approx(
        st_.s_left * WHEEL_REV_PER_M * GEARING, rel=REL)
    assert snap.encoders["motor_rot"][1] == pytest.approx(
        st_.v_left * WHEEL_REV_PER_M * GEARING, rel=REL)


def test_degree_encoder_reads_wheel_angle_in_degrees(driven):
    snap, st_ = driven
    assert snap.encoders["deg"][0] == pytest.approx(
        math.degrees(st_.s_right / WHEEL_RADIUS), rel=REL)


def test_tick_encoder_reports_whole_counts_floored(driven):
    snap, st_ = driven
    exact = st_.s_left * WHEEL_REV_PER_M * GEARING * 2048
    # The reference is a float product, the reading a running sum: only compare when they
    # cannot straddle an integer.
    assert 1e-6 < exact % 1 < 1 - 1e-6
    assert snap.encoders["ticks"][0] == math.floor(exact)
    assert snap.encoders["ticks"][0] == int(snap.encoders["ticks"][0])


def test_inverted_encoder_negates_reading(driven):
    snap, st_ = driven
    assert st_.s_right > 0.1
    assert snap.encoders["inv"][0] == pytest.approx(-st_.s_right, rel=REL)
    assert snap.encoders["inv"][1] == pytest.approx(-st_.v_right, rel=REL)


def test_tick_encoder_floors_fractional_counts_in_both_directions():
    enc = Encoder("ticks", per_unit=2 * math.pi / 100.0)  # 100 counts a turn, on a 1 m wheel
    enc.zero(Joint(0.0, 0.0, radius=1.0))
    assert enc.read(Joint(0.0149 * 2 * math.pi, 0.0, radius=1.0))[0] == 1.0  # 1.49 counts
    # −1.51 counts: floor, as a counter steps at each edge
    assert enc.read(Joint(-0.0151 * 2 * math.pi, 0.0, radius=1.0))[0] == -2.0


def test_encoder_velocity_is_speed_in_reading_units():
    enc = Encoder("length", per_unit=0.3048)
    enc.zero(Joint(0.0, 0.0, radius=0.05))
    position, velocity = enc.read(Joint(0.3048, 0.6096, radius=0.05))
    assert position == pytest.approx(1.0, rel=1e-15)  # rounding of one division
    assert velocity == pytest.approx(2.0, rel=1e-15)


def test_encoder_zero_counts_from_where_the_joint_is():
    enc = Encoder("length", per_unit=1.0)
    enc.zero(Joint(2.5, 1.0))
    assert enc.read(Joint(2.5, 0.0)) == (0.0, 0.0)
    assert enc.read(Joint(3.0, 1.0)) == (0.5, 1.0)


def test_motor_mounted_encoder_reads_gearing_times_output_plus_rotor():
    """A rotor sensor on a coaxial swerve's drive motor: shaft angle = gearing × wheel angle +
    the coupling's rotor term, in rotations (exact sums of the terms)."""
    enc = Encoder("angle", per_unit=2 * math.pi, on_motor=True)
    enc.zero(Joint(0.0, 0.0, radius=0.05, gearing=6.75))
    wheel = 0.05 * 2 * math.pi  # one wheel turn of travel
    position, velocity = enc.read(Joint(wheel, 0.0, 0.05, 6.75, rotor=math.pi, rotor_rate=2.0))
    assert position == pytest.approx(6.75 + 0.5, rel=1e-15)
    assert velocity == pytest.approx(2.0 / (2 * math.pi), rel=1e-15)


def test_absolute_encoder_reads_the_shaft_within_its_range_plus_offset():
    enc = Encoder("angle", per_unit=2 * math.pi, absolute=(0.25 * 2 * math.pi, 2 * math.pi))
    position, _ = enc.read(Joint(0.9 * 2 * math.pi, 0.0))
    assert position == pytest.approx(0.15, abs=1e-12)  # (0.9 + 0.25) mod 1
    reversed_enc = Encoder("angle", per_unit=2 * math.pi, reversed=True,
                           absolute=(0.0, 2 * math.pi))
    assert reversed_enc.read(Joint(0.1 * 2 * math.pi, 0.0))[0] == pytest.approx(0.9, abs=1e-12)


SHIFTER = """
[solenoids.shift]

[encoders.motor_rot]
motor = "left"
unit = "rotations"
mount = "motor"
"""


def test_motor_mounted_encoder_follows_gear_shift():
    text = default_config_text().replace("gearing = 10.71",
                                         'gearing = 10.71\nshifter = "shift"\nhigh_gearing = 5.0')
    world = World(loads(text + SHIFTER, source="shift.toml"))
    world.set_motor("left", 0.5)
    world.set_motor("right", 0.5)
    world.step(0.5)
    low = world.drivetrain.drive.state.s_left
    world.set_solenoid("shift", True)
    world.step(0.5)
    high = world.drivetrain.drive.state.s_left - low
    assert high > 0.1
    expected = (low * GEARING + high * 5.0) * WHEEL_REV_PER_M
    assert world.snapshot().encoders["motor_rot"][0] == pytest.approx(expected, rel=REL)


# --- gyro -----------------------------------------------------------------------------------


def world_with(extra: str = "", start_heading: str = "30 deg", seed: int = 0) -> World:
    text = default_config_text().replace('heading = "0 deg"', f'heading = "{start_heading}"')
    text = text.replace("seed = 0", f"seed = {seed}")
    text = text.replace('noise = "0 deg"', extra or 'noise = "0 deg"')
    return World(loads(text, source="gyro.toml"))


def test_gyro_reads_zero_at_reset_whatever_the_start_heading():
    world = world_with(start_heading="30 deg")
    world.step(0.02)
    assert world.drivetrain.drive.state.heading == pytest.approx(math.radians(30), rel=1e-12)
    assert world.snapshot().gyro_yaw == 0.0


def test_gyro_is_counter_clockwise_positive():
    world = world_with()
    world.set_motor("left", -0.5)
    world.set_motor("right", 0.5)  # right side forward: turning left, CCW
    world.step(0.5)
    snap = world.snapshot()
    turned = world.drivetrain.drive.state.heading - math.radians(30)
    assert turned > 0.5
    # 1e-12 absolute: yaw is heading minus the zero, rounding only.
    assert snap.gyro_yaw == pytest.approx(turned, abs=1e-12)
    assert snap.gyro_rate == pytest.approx(world.drivetrain.drive.omega, abs=1e-12)
    assert snap.gyro_rate > 0


def test_gyro_drift_integrates_into_yaw():
    world = world_with('noise = "0 deg"\ndrift = "1 deg/s"')
    for _ in range(500):  # 10 s at rest in 20 ms reads
        world.step(0.02)
    snap = world.snapshot()
    # 1e-9 absolute: 500 additions of the per-read bias.
    assert snap.gyro_yaw == pytest.approx(math.radians(10.0), abs=1e-9)
    assert snap.gyro_rate == pytest.approx(math.radians(1.0), abs=1e-12)


def test_gyro_drift_adds_to_rate_and_yaw_directly():
    gyro = Gyro(noise=0.0, drift=0.02, rng=np.random.default_rng(0))
    gyro.reset(1.0)
    gyro.read(heading=1.5, omega=0.3, elapsed=2.0)
    assert gyro.yaw == pytest.approx(0.5 + 0.04, rel=1e-12)  # rounding only
    assert gyro.rate == pytest.approx(0.32, rel=1e-12)


def test_gyro_noise_is_reproducible_with_the_same_seed():
    def yaws(seed: int) -> list[float]:
        world = world_with('noise = "0.5 deg"', seed=seed)
        assert world.cfg.sim.seed == seed
        out = []
        for _ in range(50):
            world.step(0.02)
            out.append(world.snapshot().gyro_yaw)
        return out

    first, again, other = yaws(7), yaws(7), yaws(8)
    assert first == again
    assert first != other
    assert any(y != 0.0 for y in first)


def test_gyro_noise_has_the_configured_standard_deviation():
    gyro = Gyro(noise=0.01, drift=0.0, rng=np.random.default_rng(3))
    samples = []
    for _ in range(20000):
        gyro.read(heading=0.0, omega=0.0, elapsed=0.02)
        samples.append(gyro.yaw)
    # Standard error of a sample std over n = 20000 is 0.5 %; 3 % is 6σ (and the seed is fixed).
    assert np.std(samples) == pytest.approx(0.01, rel=0.03)
    # Mean: standard error 0.01/√20000 ≈ 7e-5; 4e-4 is ~6σ.
    assert abs(np.mean(samples)) < 4e-4
