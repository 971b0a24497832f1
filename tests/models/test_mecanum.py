"""Mecanum drivetrain: physical and kinematic levels.

References: wpimath's MecanumDriveKinematics (toWheelSpeeds, toChassisSpeeds) and
MecanumDriveOdometry; pyfrc's MecanumDrivetrain; closed forms written out here from the
MotorSpec constants; energy bookkeeping of chassis and wheels.

Robot used throughout: 50 kg, 3 kg·m², one CIM at 10.71:1 per 6 in (0.0762 m) wheel with
0.02 kg·m² at each wheel; wheels at (±0.25, ±0.3) m.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyfrc.physics.drivetrains import MecanumDrivetrain
from pyfrc.physics.drivetrains import units as pyfrc_units
from wpimath.geometry import Pose2d, Rotation2d, Translation2d
from wpimath.kinematics import (
    ChassisSpeeds,
    MecanumDriveKinematics,
    MecanumDriveOdometry,
    MecanumDriveWheelPositions,
    MecanumDriveWheelSpeeds,
)

from simserver.models.differential import GRAVITY
from simserver.models.mecanum import KinematicMecanum, MecanumDrive, MecanumWheelParams
from simserver.models.motor import motor_by_name

CIM = motor_by_name("CIM")
MASS, YAW_INERTIA = 50.0, 3.0
RADIUS, GEARING, WHEEL_J = 0.0762, 10.71, 0.02
LOCATIONS = [(0.25, 0.3), (0.25, -0.3), (-0.25, 0.3), (-0.25, -0.3)]  # FL, FR, RL, RR
KIN = MecanumDriveKinematics(*(Translation2d(x, y) for x, y in LOCATIONS))


def mecanum(friction: float = 0.7) -> MecanumDrive:
    wheels = [MecanumWheelParams(x, y, RADIUS, CIM, 1, GEARING, WHEEL_J) for x, y in LOCATIONS]
    return MecanumDrive(wheels, MASS, YAW_INERTIA, friction)


def wheel_positions(drive) -> MecanumDriveWheelPositions:
    out = MecanumDriveWheelPositions()
    out.frontLeft, out.frontRight, out.rearLeft, out.rearRight = drive.wheel_positions()
    return out


def kinetic_energy(drive: MecanumDrive) -> float:
    return (0.5 * MASS * (drive.vx**2 + drive.vy**2) + 0.5 * YAW_INERTIA * drive.omega**2
            + 0.5 * WHEEL_J * float(np.sum(drive.wheel_speed**2)))


def volts_at(t: float) -> list[float]:
    """Four unrelated voltage profiles: launches, reversals, strafes and spins."""
    return [12.0 * math.sin(1.3 * t), 12.0 * math.cos(0.7 * t), -9.0 * math.sin(0.9 * t + 1.0),
            12.0 * math.sin(2.1 * t + 0.3)]


@pytest.mark.parametrize("h", [0.001, 0.005, 0.02])
def test_no_slip_wheel_speeds_forward_kinematics_and_odometry_match_to_1e9(h):
    """μ = 100, 4 s of arbitrary wheel voltages: at every substep the rim speeds equal
    wpimath's toWheelSpeeds of (vx, vy, omega) (this checks the roller orientation: front-left
    rim = vx − vy − ω·(x + y), ...), its forward kinematics gives back the chassis speeds, and
    its odometry fed wheel positions and the true heading every substep equals the pose, all to
    1e-9."""
    drive = mecanum(friction=100.0)
    drive.reset(1.0, 2.0, -0.4)
    odometry = MecanumDriveOdometry(KIN, Rotation2d(-0.4), wheel_positions(drive),
                                    Pose2d(1.0, 2.0, Rotation2d(-0.4)))
    moved = turned = strafed = 0.0
    for i in range(round(4.0 / h)):
        drive.step(h, volts_at(i * h))
        assert not drive.slipping.any()
        want = KIN.toWheelSpeeds(ChassisSpeeds(drive.vx, drive.vy, drive.omega))
        got = drive.wheel_speeds()
        for g, w in zip(got, (want.frontLeft, want.frontRight, want.rearLeft, want.rearRight),
                        strict=True):
            assert abs(g - w) < 1e-9
        fk = KIN.toChassisSpeeds(MecanumDriveWheelSpeeds(*got))
        assert abs(fk.vx - drive.vx) < 1e-9 and abs(fk.vy - drive.vy) < 1e-9
        assert abs(fk.omega - drive.omega) < 1e-9
        pose = odometry.update(Rotation2d(drive.heading), wheel_positions(drive))
        assert abs(pose.X() - drive.x) < 1e-9 and abs(pose.Y() - drive.y) < 1e-9
        assert abs(math.remainder(pose.rotation().radians() - drive.heading, math.tau)) < 1e-9
        moved += abs(drive.vx) * h
        strafed += abs(drive.vy) * h
        turned += abs(drive.omega) * h
    assert moved > 1.0 and strafed > 1.0 and turned > 1.0


def test_strafe_voltages_move_the_robot_left():
    """Front-left and rear-right backwards, the other two forwards: a pure strafe left."""
    drive = mecanum(friction=100.0)
    drive.reset(0.0, 0.0, 0.0)
    for _ in range(200):
        drive.step(0.005, [-12.0, 12.0, 12.0, -12.0])
    assert drive.vy > 1.0
    assert abs(drive.vx) < 1e-9 and abs(drive.omega) < 1e-9


@pytest.mark.parametrize("h", [0.001, 0.005, 0.02])
def test_traction_limited_launch_accelerates_at_mu_g_cos45_to_1e9(h):
    """μ = 0.2, 12 V from rest: the rollers push along their normals at 45°, so the forward
    acceleration is μ·g/√2 exactly; the wheel encoders run ahead of the true motion."""
    mu = 0.2
    drive = mecanum(friction=mu)
    drive.reset(0.0, 0.0, 0.0)
    for _ in range(round(0.5 / h)):
        v0 = drive.vx
        drive.step(h, [12.0] * 4)
        assert drive.slipping.all()
        assert abs((drive.vx - v0) / h - mu * GRAVITY / math.sqrt(2.0)) < 1e-9
        assert abs(drive.vy) < 1e-12 and abs(drive.omega) < 1e-12
    for distance in drive.wheel_positions():
        assert distance - drive.x > 0.3


def test_motor_limited_launch_matches_closed_form_and_converges_with_h():
    """Straight launch at 12 V, μ = 100: m_eff·dv/dt = F_stall − b·v with m_eff = m + 4·J_w/r²,
    F_stall = 4·G·Kt·V/(R·r), b = 4·G²·Kt/(R·Kv·r²). Measured max velocity errors over 2 s:
    1.25e-5 m/s at 1 ms, 3.1e-4 at 5 ms, 5.0e-3 at 20 ms (free speed 4.04 m/s): second order;
    bounds 2e-5, 5e-4, 7e-3."""
    errors = {}
    for h in (0.001, 0.005, 0.02):
        drive = mecanum(friction=100.0)
        drive.reset(0.0, 0.0, 0.0)
        m_eff = MASS + 4 * WHEEL_J / RADIUS**2
        f_stall = 4 * GEARING * CIM.kt * 12.0 / (CIM.R * RADIUS)
        b = 4 * GEARING**2 * CIM.kt / (CIM.R * CIM.kv * RADIUS**2)
        worst = 0.0
        for i in range(1, round(2.0 / h) + 1):
            drive.step(h, [12.0] * 4)
            worst = max(worst, abs(drive.vx - f_stall / b * -math.expm1(-b / m_eff * i * h)))
        errors[h] = worst
    assert errors[0.001] < 2e-5 and errors[0.005] < 5e-4 and errors[0.02] < 7e-3
    assert errors[0.005] / errors[0.001] > 10.0 and errors[0.02] / errors[0.005] > 8.0


@pytest.mark.parametrize(("coast", "kept"), [(True, 0.8), (False, 1e-3)], ids=["coast", "brake"])
def test_sliding_spinning_robot_never_gains_energy(coast, kept):
    """Zero volts after a collision: energy never rises from one substep to the next (beyond
    1e-12 relative). Coasting wheels and free rollers leave a mecanum robot three free rolling
    directions, so it keeps 68 % (measured) once the slip is gone; braked it nearly stops."""
    drive = mecanum(friction=0.7)
    drive.reset(0.0, 0.0, 0.0)
    drive.set_body_velocity(2.5, -2.0, 7.0)
    energy = start = kinetic_energy(drive)
    for _ in range(400):
        drive.step(0.005, [0.0] * 4, [coast] * 4)
        now = kinetic_energy(drive)
        assert now <= energy * (1 + 1e-12)
        energy = now
    assert energy < kept * start


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.001, 0.005, 0.02]), st.booleans(),
       st.floats(0.05, 2.0))
def test_never_gains_energy_from_random_sliding_states(seed, h, coast, friction):
    rng = np.random.default_rng(seed)
    drive = mecanum(friction=friction)
    drive.reset(0.0, 0.0, 0.0)
    drive.set_body_velocity(*rng.uniform(-4, 4, 2), rng.uniform(-10, 10))
    drive.wheel_speed = rng.uniform(-60, 60, 4)
    energy = kinetic_energy(drive)
    for _ in range(40):
        drive.step(h, [0.0] * 4, [coast] * 4)
        now = kinetic_energy(drive)
        assert now <= energy * (1 + 1e-12) + 1e-12
        energy = now


def test_free_wheel_current_is_the_exact_step_average_and_coast_draws_none():
    drive = mecanum(friction=0.0)
    drive.reset(0.0, 0.0, 0.0)
    h = 0.005
    b = GEARING**2 * CIM.kt / (CIM.R * CIM.kv)
    w = 0.0
    for volts in (12.0, 12.0, 0.0):
        w_inf = volts * CIM.kv / GEARING
        decay = math.exp(-b * h / WHEEL_J)
        mean = w_inf + (w - w_inf) * (WHEEL_J / (b * h)) * (1.0 - decay)
        w = w_inf + (w - w_inf) * decay
        drive.step(h, [volts, volts, volts, volts], [False, False, False, True])
        expect = (volts - GEARING * mean / CIM.kv) / CIM.R
        assert list(drive.currents[:3]) == pytest.approx([expect] * 3, rel=1e-9)
        assert drive.currents[3] == 0.0
    assert drive.currents[0] < 0.0  # braking at 0 V draws (negative) current
    assert drive.wheel_speed[3] == 0.0  # the coasting wheel never felt a torque
    assert np.allclose(drive.motor_speeds(), drive.wheel_speed * GEARING, rtol=1e-15)


def run_scripted(drive: MecanumDrive) -> list[np.ndarray]:
    drive.reset(0.5, 0.5, 0.1)
    out = []
    for i in range(300):
        drive.step(0.005, volts_at(i * 0.005), [False, i > 100, False, False])
        out.append(np.array([drive.x, drive.y, drive.heading, drive.vx, drive.vy, drive.omega,
                             *drive.wheel_speed, *drive.currents]))
    return out


def test_two_identical_runs_are_bit_identical():
    a = run_scripted(mecanum(friction=0.5))
    b = run_scripted(mecanum(friction=0.5))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_wrong_inputs_are_rejected():
    drive = mecanum()
    with pytest.raises(ValueError):
        drive.step(0.005, [0.0] * 3)
    with pytest.raises(ValueError):
        drive.step(-0.005, [0.0] * 4)
    with pytest.raises(ValueError):
        drive.step(0.005, [0.0] * 4, [True] * 3)
    with pytest.raises(ValueError):
        MecanumDrive(mecanum().wheels[:3], MASS, YAW_INERTIA, 1.0)


# --- kinematic level ---------------------------------------------------------------------------

def test_kinematic_mecanum_matches_wpimath_kinematics_and_odometry():
    drive = KinematicMecanum(LOCATIONS, max_speed=3.0, wheel_radius=RADIUS)
    drive.reset(1.0, 1.0, 0.3)
    odometry = MecanumDriveOdometry(KIN, Rotation2d(0.3), wheel_positions(drive),
                                    Pose2d(1.0, 1.0, Rotation2d(0.3)))
    rng = np.random.default_rng(7)
    for _ in range(200):
        duties = rng.uniform(-1, 1, 4)
        drive.step(0.02, duties)
        want = KIN.toChassisSpeeds(MecanumDriveWheelSpeeds(*(duties * 3.0)))
        assert (drive.vx, drive.vy, drive.omega) == (want.vx, want.vy, want.omega)
        pose = odometry.update(Rotation2d(drive.heading), wheel_positions(drive))
        assert abs(pose.X() - drive.x) < 1e-9 and abs(pose.Y() - drive.y) < 1e-9


def test_kinematic_mecanum_with_inverted_right_side_matches_pyfrc():
    """pyfrc's MecanumDrivetrain(x_wheelbase, y_wheelbase, speed) puts the wheels at
    (±x/2, ±y/2) and negates the right motors; with invert_right=True the chassis speeds are
    identical."""
    pyfrc = MecanumDrivetrain(0.5 * pyfrc_units.meters, 0.6 * pyfrc_units.meters,
                              3.0 * pyfrc_units.mps)
    drive = KinematicMecanum(LOCATIONS, max_speed=3.0, invert_right=True)
    rng = np.random.default_rng(3)
    for _ in range(50):
        fl, fr, rl, rr = rng.uniform(-1, 1, 4)
        want = pyfrc.calculate(fl, rl, fr, rr)
        drive.step(0.02, [fl, fr, rl, rr])
        assert (drive.vx, drive.vy, drive.omega) == pytest.approx(
            (want.vx, want.vy, want.omega), abs=1e-12)


def test_kinematic_mecanum_deadzone():
    drive = KinematicMecanum(LOCATIONS, max_speed=3.0, deadzone=0.2)
    drive.step(0.02, [0.1, 0.6, -0.6, 1.0])
    assert drive.wheel_speeds() == pytest.approx([0.0, 1.5, -1.5, 3.0])
