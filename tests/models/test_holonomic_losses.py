"""Losses on the holonomic drivetrains (swerve, mecanum) against closed forms.

Each wheel obeys the joint equation of simserver.models.losses at its angle; with the wheels
rolling on a straight line the robot is one joint of inertia ``m/n + J/r²`` per wheel (kg, in
wheel metres): ``M·dv/dt = k·V − B·v − F_c`` with k, B, F_c of one wheel divided by r.
"""

from __future__ import annotations

import itertools
import math

import pytest

from simserver.config.losses import DriveLossesConfig, LinearCharacterization
from simserver.models.differential import GRAVITY
from simserver.models.losses import IDEAL, JointMotors, Losses
from simserver.models.mecanum import MecanumDrive, MecanumWheelParams
from simserver.models.motor import motor_by_name
from simserver.models.swerve import SwerveDrive, SwerveModuleParams
from simserver.world.drivetrains.holonomic import MotorGroup, drive_wheel

KRAKEN = motor_by_name("Kraken X60")
CIM = motor_by_name("CIM")
MASS, YAW = 60.0, 4.0
R, G, JW = 0.0508, 6.75, 0.006
PLACES = [(0.28, 0.28), (0.28, -0.28), (-0.28, 0.28), (-0.28, -0.28)]
H = 0.005


def swerve(drive: Losses, friction: float = 1.2, rolling: float = 0.0, wheel_j: float = JW,
           steer: Losses = IDEAL) -> SwerveDrive:
    mods = [SwerveModuleParams(x, y, R, KRAKEN, 1, G, wheel_j, KRAKEN, 1, 150 / 7, 0.004,
                               drive, steer) for x, y in PLACES]
    return SwerveDrive(mods, MASS, YAW, friction, rolling_resistance=rolling)


def run(drive, volts: float, seconds: float, h: float = H, coast: bool = False) -> None:
    for _ in range(round(seconds / h)):
        drive.step(h, [volts] * 4, [0.0] * 4, drive_coast=[coast] * 4 if coast else None)


def test_free_speed_with_efficiency_and_free_current_is_the_catalog_free_speed():
    """No load but the motors' own: at 12 V the wheels turn at the catalog free speed, drawing
    the catalog free current, whatever the gearbox efficiency."""
    drive = swerve(Losses(efficiency=0.8, free_current=True))
    run(drive, 12.0, 6.0)
    assert drive.wheel_speed.tolist() == pytest.approx([KRAKEN.free_speed / G] * 4, rel=1e-9)
    assert drive.vx == pytest.approx(KRAKEN.free_speed / G * R, rel=1e-9)
    assert drive.drive_currents.tolist() == pytest.approx([KRAKEN.free_current] * 4, rel=1e-6)


def test_steady_speed_under_efficiency_free_current_and_viscous_friction():
    """v = k·V/B at steady state (k, B from JointMotors), 1e-9."""
    lo = Losses(efficiency=0.85, viscous=0.02, free_current=True)
    drive = swerve(lo)
    run(drive, 7.0, 6.0)
    joint = JointMotors(KRAKEN, 1, G, lo)
    assert drive.vx == pytest.approx(7.0 * joint.force_per_volt / joint.damping * R, rel=1e-9)


def test_coast_down_under_rolling_resistance_coulomb_and_viscous_friction():
    """From 3 m/s with the windings open: M·dv/dt = −B·v − F, so v(t) = (v0 + F/B)·e^(−Bt/M)
    − F/B until it stops at t_s = (M/B)·ln(1 + B·v0/F), then stays stopped. The wheels and
    chassis are stepped as two bodies with a rolling contact (second order in h, measured
    1.2e-5 m/s at 1 ms), the stop within one substep."""
    lo = Losses(efficiency=0.9, coulomb=0.3, viscous=0.01, free_current=True)
    rolling = 0.02
    h = 0.001
    drive = swerve(lo, rolling=rolling)
    drive.vx = 3.0
    drive.wheel_speed = [3.0 / R] * 4
    joint = JointMotors(KRAKEN, 1, G, lo)
    m = MASS / 4 + JW / R**2
    b = joint.loss_damping / R**2
    f = (lo.coulomb + rolling * MASS * GRAVITY / 4 * R) / R
    t_stop = m / b * math.log(1.0 + b * 3.0 / f)
    worst = 0.0
    for step in range(1, round((t_stop + 0.5) / h)):
        drive.step(h, [0.0] * 4, [0.0] * 4, drive_coast=[True] * 4)
        t = step * h
        expect = max(0.0, (3.0 + f / b) * math.exp(-b * t / m) - f / b)
        if t < t_stop - h:
            worst = max(worst, abs(drive.vx - expect))
        elif t > t_stop + h:
            assert abs(drive.vx) < 1e-12 and drive.wheel_speed.tolist() == [0.0] * 4
    assert worst < 5e-5


def test_a_robot_at_rest_stays_at_rest_below_its_static_friction():
    lo = Losses(coulomb=0.5)
    drive = swerve(lo, rolling=0.02)
    torque_per_volt = JointMotors(KRAKEN, 1, G, lo).force_per_volt
    below = (0.5 + 0.02 * MASS * GRAVITY / 4 * R) / torque_per_volt * 0.99
    run(drive, below, 1.0)
    assert (drive.x, drive.vx, drive.wheel_speed.tolist()) == (0.0, 0.0, [0.0] * 4)
    run(drive, below * 1.05, 0.1)
    assert drive.vx > 0.0


def test_traction_limited_launch_with_losses_is_mu_g():
    drive = swerve(Losses(efficiency=0.9, coulomb=0.2, free_current=True), friction=0.5,
                   rolling=0.02)
    v = []
    for _ in range(20):
        drive.step(H, [12.0] * 4, [0.0] * 4)
        v.append(drive.vx)
    assert all(drive.slipping)
    assert [b - a for a, b in itertools.pairwise(v)] == pytest.approx([0.5 * GRAVITY * H] * 19,
                                                            rel=1e-9)


def test_steer_coulomb_friction_holds_a_module_and_steady_rate_matches():
    steer = Losses(efficiency=0.9, coulomb=0.05, free_current=True)
    drive = swerve(Losses(), steer=steer)
    joint = JointMotors(KRAKEN, 1, 150 / 7, steer)
    hold = 0.05 / joint.force_per_volt * 0.99
    for _ in range(100):
        drive.step(H, [0.0] * 4, [hold] * 4)
    assert drive.steer_angle.tolist() == [0.0] * 4
    for _ in range(400):
        drive.step(H, [0.0] * 4, [3.0] * 4)
    expect = (3.0 * joint.force_per_volt - 0.05) / joint.damping
    assert drive.steer_rate.tolist() == pytest.approx([expect] * 4, rel=1e-9)


# --- mecanum roller losses ---------------------------------------------------------------

def mecanum(efficiency: float, losses: Losses = IDEAL) -> MecanumDrive:
    wheels = [MecanumWheelParams(x, y, 0.0762, CIM, 1, 10.71, 0.02, losses)
              for x, y in ((0.25, 0.3), (0.25, -0.3), (-0.25, 0.3), (-0.25, -0.3))]
    return MecanumDrive(wheels, 50.0, 3.0, 1.5, rolling_resistance=0.02,
                        strafe_efficiency=efficiency)


@pytest.mark.parametrize("efficiency", [1.0, 0.8, 0.6])
def test_mecanum_strafes_at_strafe_efficiency_of_its_forward_speed(efficiency):
    lo = Losses(efficiency=0.9, coulomb=0.1, free_current=True)
    ahead, side = mecanum(efficiency, lo), mecanum(efficiency, lo)
    for _ in range(2000):
        ahead.step(H, [8.0] * 4)
        side.step(H, [-8.0, 8.0, 8.0, -8.0])
    assert abs(side.vx) < 1e-9 and abs(ahead.vy) < 1e-9
    assert side.vy / ahead.vx == pytest.approx(efficiency, rel=1e-9)


# --- SysId in --------------------------------------------------------------------------------

def characterized(ks: float, kv: float, ka: float) -> SwerveDrive:
    group = MotorGroup("d", KRAKEN, 1, G, R)
    wheel = drive_wheel(DriveLossesConfig(False, 0.9, True, 0.0, 0.0, 0.02),
                        LinearCharacterization(ks, kv, ka, None), group, JW,
                        MASS, 4)
    mods = [SwerveModuleParams(x, y, R, KRAKEN, 1, G, wheel.inertia, KRAKEN, 1, 150 / 7,
                               0.004, wheel.losses) for x, y in PLACES]
    return SwerveDrive(mods, MASS, YAW, 3.0, rolling_resistance=wheel.rolling_resistance)


def test_characterization_constants_come_back_from_the_model():
    ks, kv, ka = 0.15, 2.6, 0.9
    speeds = []
    for volts in (4.0, 9.0):
        drive = characterized(ks, kv, ka)
        run(drive, volts, 8.0)
        assert not any(drive.slipping)
        speeds.append(drive.vx)
    got_kv = (9.0 - 4.0) / (speeds[1] - speeds[0])
    assert got_kv == pytest.approx(kv, rel=1e-6)
    assert 4.0 - got_kv * speeds[0] == pytest.approx(ks, rel=1e-6)
    drive = characterized(ks, kv, ka)
    h = 1e-8
    drive.step(h, [6.0] * 4, [0.0] * 4)
    assert (6.0 - ks) / (drive.vx / h) == pytest.approx(ka, rel=1e-6)
