"""Swerve drivetrain: physical and kinematic levels.

References: wpimath's SwerveDrive{2,3,4,6}Kinematics (forward and inverse) and
SwerveDrive{2,3,4,6}Odometry; closed forms written out here from the MotorSpec constants (a
straight-line launch of a rigid robot on rolling wheels, a DC motor turning an inertia); energy
bookkeeping of the chassis, wheels and azimuths.

Robot used throughout: 60 kg, 4 kg·m², Kraken X60 drive at 6.75:1 on 2 in (0.0508 m) wheels
with 0.006 kg·m² at each wheel, Kraken X60 steer at 150/7 on 0.004 kg·m².
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wpimath.geometry import Pose2d, Rotation2d, Translation2d
from wpimath.kinematics import (
    ChassisSpeeds,
    SwerveDrive2Kinematics,
    SwerveDrive2Odometry,
    SwerveDrive3Kinematics,
    SwerveDrive3Odometry,
    SwerveDrive4Kinematics,
    SwerveDrive4Odometry,
    SwerveDrive6Kinematics,
    SwerveDrive6Odometry,
    SwerveModulePosition,
    SwerveModuleState,
)

from simserver.models import tires
from simserver.models.differential import GRAVITY
from simserver.models.motor import MotorSpec, motor_by_name
from simserver.models.swerve import (
    DEFAULT_SCRUB_DAMPING,
    KinematicSwerve,
    SwerveDrive,
    SwerveModuleParams,
)
from tests.models.test_tires import CountingContacts

KRAKEN = motor_by_name("Kraken X60")
FALCON = motor_by_name("Falcon 500")
MASS, YAW_INERTIA = 60.0, 4.0
RADIUS, DRIVE_G, WHEEL_J = 0.0508, 6.75, 0.006
STEER_G, STEER_J = 150 / 7, 0.004
V_FREE = KRAKEN.kv * 12.0 / DRIVE_G * RADIUS  # m/s at 12 V

LAYOUTS = {
    2: [(0.3, 0.3), (-0.3, -0.3)],
    3: [(0.3, 0.0), (-0.2, 0.25), (-0.2, -0.25)],
    4: [(0.28, 0.28), (0.28, -0.28), (-0.28, 0.28), (-0.28, -0.28)],
    6: [(0.3, 0.28), (0.3, -0.28), (0.0, 0.3), (0.0, -0.3), (-0.3, 0.28), (-0.3, -0.28)],
}
KINEMATICS = {2: (SwerveDrive2Kinematics, SwerveDrive2Odometry),
              3: (SwerveDrive3Kinematics, SwerveDrive3Odometry),
              4: (SwerveDrive4Kinematics, SwerveDrive4Odometry),
              6: (SwerveDrive6Kinematics, SwerveDrive6Odometry)}


def module(x: float, y: float, steer: MotorSpec = KRAKEN) -> SwerveModuleParams:
    return SwerveModuleParams(x, y, RADIUS, KRAKEN, 1, DRIVE_G, WHEEL_J, steer, 1, STEER_G,
                              STEER_J)


def swerve(n: int = 4, friction: float = 1.2, steer: MotorSpec = KRAKEN,
           scrub: float | None = DEFAULT_SCRUB_DAMPING) -> SwerveDrive:
    return SwerveDrive([module(x, y, steer) for x, y in LAYOUTS[n]], MASS, YAW_INERTIA, friction,
                       scrub)


def kinematics(n: int):
    return KINEMATICS[n][0](*(Translation2d(x, y) for x, y in LAYOUTS[n]))


def states(drive) -> tuple[SwerveModuleState, ...]:
    return tuple(SwerveModuleState(v, Rotation2d(a)) for v, a in drive.module_states())


def positions(drive) -> tuple[SwerveModulePosition, ...]:
    return tuple(SwerveModulePosition(d, Rotation2d(a)) for d, a in drive.module_positions())


def kinetic_energy(drive: SwerveDrive) -> float:
    """Chassis, wheels and azimuths, J."""
    chassis = 0.5 * MASS * (drive.vx**2 + drive.vy**2) + 0.5 * YAW_INERTIA * drive.omega**2
    return (chassis + 0.5 * WHEEL_J * float(np.sum(drive.wheel_speed**2))
            + 0.5 * STEER_J * float(np.sum(drive.steer_rate**2)))


def clamp(v: float, limit: float = 12.0) -> float:
    return max(-limit, min(limit, v))


def icr_angles(kin, center: tuple[float, float]) -> tuple[list[float], list[float]]:
    """Azimuths (rad) and relative rim speeds that make every module roll about one instant
    centre (body frame, m): wpimath's inverse kinematics of a rotation about ``center``.
    ``center=None`` would be a translation; here (inf) is handled by the caller."""
    module_states = kin.toSwerveModuleStates(ChassisSpeeds(0.0, 0.0, 1.0),
                                             Translation2d(*center))
    speeds = [s.speed for s in module_states]
    top = max(abs(v) for v in speeds)
    return [s.angle.radians() for s in module_states], [v / top for v in speeds]


def steer_to(drive: SwerveDrive, angles: list[float]) -> list[float]:
    """P control of each azimuth toward ``angles`` (rad), 25 V/rad, clamped to ±12 V."""
    return [clamp(25.0 * math.remainder(a - b, math.tau))
            for a, b in zip(angles, drive.steer_angle.tolist(), strict=True)]


# --- no-slip limit ------------------------------------------------------------------------------

def maneuver(kin, n: int):
    """Segments (seconds, azimuth targets, drive volts), or None where the robot is brought to
    rest (the model has no rolling resistance, so braking only approaches rest, and re-steering
    a moving robot misaligns its modules). A diagonal translation launched at 12 V and braked;
    re-steering at rest to an arc about (0.2, 1.0) m, driven along it and braked; re-steering
    to spin in place, spun up at 12 V and reversed. While the robot moves its modules hold
    kinematically consistent azimuths (one instant centre)."""
    parallel = [0.6] * n
    arc, arc_speeds = icr_angles(kin, (0.2, 1.0))
    spin, spin_speeds = icr_angles(kin, (0.0, 0.0))
    return [
        (0.7, parallel, [12.0] * n),
        (0.4, parallel, [-6.0] * n),
        (0.3, parallel, [0.0] * n),
        None,
        (0.5, arc, [0.0] * n),
        (0.6, arc, [10.0 * v for v in arc_speeds]),
        (0.4, arc, [-4.0 * v for v in arc_speeds]),
        (0.3, arc, [0.0] * n),
        None,
        (0.5, spin, [0.0] * n),
        (0.5, spin, [12.0 * v for v in spin_speeds]),
        (0.3, spin, [-12.0 * v for v in spin_speeds]),
    ]


@pytest.mark.parametrize(("n", "h"), [(2, 0.005), (3, 0.005), (4, 0.005), (6, 0.005),
                                      (4, 0.001), (4, 0.02)])
def test_no_slip_forward_kinematics_and_odometry_match_truth_to_1e9(n, h):
    """μ = 100 and rigid scrub, 4.9 s of launches, braking, arcs and spins (see maneuver): at
    every substep nothing slides, wpimath's forward kinematics of the module states equals
    (vx, vy, omega) to 1e-9, and wpimath's odometry fed the module positions and the true
    heading every substep equals the true pose to 1e-9."""
    drive = swerve(n, friction=100.0, scrub=None)
    kin = kinematics(n)
    drive.reset(1.0, 2.0, 0.5, [0.6] * n)
    odometry = KINEMATICS[n][1](kin, Rotation2d(drive.heading), positions(drive),
                                Pose2d(1.0, 2.0, Rotation2d(0.5)))
    travelled = turned = peak_accel = 0.0
    for segment in maneuver(kin, n):
        if segment is None:
            drive.set_body_velocity(0.0, 0.0, 0.0)
            drive.wheel_speed = np.zeros(n)
            continue
        seconds, angles, volts = segment
        for _ in range(round(seconds / h)):
            v0 = math.hypot(drive.vx, drive.vy)
            drive.step(h, volts, steer_to(drive, angles))
            assert not drive.slipping.any()
            fk = kin.toChassisSpeeds(states(drive))
            assert abs(fk.vx - drive.vx) < 1e-9
            assert abs(fk.vy - drive.vy) < 1e-9
            assert abs(fk.omega - drive.omega) < 1e-9
            pose = odometry.update(Rotation2d(drive.heading), positions(drive))
            assert abs(pose.X() - drive.x) < 1e-9
            assert abs(pose.Y() - drive.y) < 1e-9
            assert abs(math.remainder(pose.rotation().radians() - drive.heading,
                                      math.tau)) < 1e-9
            travelled += math.hypot(drive.vx, drive.vy) * h
            turned += abs(drive.omega) * h
            peak_accel = max(peak_accel, abs(math.hypot(drive.vx, drive.vy) - v0) / h)
    assert travelled > 3.0 and turned > 3.0 and peak_accel > 5.0  # a real maneuver


def track(drive: SwerveDrive, seconds: float = 8.0, h: float = 0.005) -> tuple[float, float]:
    """Drive with a typical module controller (azimuth P at 25 V/rad, optimised to ±90°;
    wheel feedforward + P) after varying chassis targets; returns (fraction of substeps with a
    module sliding, mean |v − v_target| m/s)."""
    kin = kinematics(len(drive.modules))
    drive.reset(0.0, 0.0, 0.0)
    slid = error = 0.0
    for i in range(round(seconds / h)):
        t = i * h
        target = ChassisSpeeds(3.0 * math.sin(0.5 * t), 2.0 * math.sin(0.37 * t + 0.4),
                               2.0 * math.sin(0.23 * t))
        drive_v, steer_v = [], []
        measured = drive.module_states()
        for j, state in enumerate(kin.toSwerveModuleStates(target)):
            speed = state.speed
            err = math.remainder(state.angle.radians() - drive.steer_angle[j], math.tau)
            if abs(err) > math.pi / 2:
                err = math.remainder(err + math.pi, math.tau)
                speed = -speed
            steer_v.append(clamp(25.0 * err))
            drive_v.append(clamp(12.0 * speed / V_FREE + 5.0 * (speed - measured[j][0])))
        drive.step(h, drive_v, steer_v)
        slid += bool(drive.slipping.any())
        error += math.hypot(drive.vx - target.vx, drive.vy - target.vy)
    steps = round(seconds / h)
    return slid / steps, error / steps


def test_rigid_scrub_binds_lagging_modules_and_the_default_scrub_does_not():
    """A steering controller always lags its targets by a fraction of a degree. With rigid scrub
    rows (exact no-slip) four such modules bind: at μ = 100 some module skids in 99.5 % of the
    substeps and the robot misses its target velocity by 1.97 m/s on average (measured). With
    the default scrub damping at μ = 1.2: 0.8 % of substeps slide, mean error 0.034 m/s."""
    rigid_slip, rigid_error = track(swerve(4, friction=100.0, scrub=None))
    slip, error = track(swerve(4, friction=1.2))
    assert rigid_slip > 0.5
    assert slip < 0.02
    assert error < 0.05 and rigid_error > 2.0 * error


def test_set_body_velocity_keeps_wheels_spinning_and_contacts_resolve_it():
    drive = swerve(4, friction=100.0, scrub=None)
    drive.reset(0.0, 0.0, 0.0)
    for _ in range(100):
        drive.step(0.005, [6.0] * 4, [0.0] * 4)
    wheels = drive.wheel_speed.copy()
    drive.set_body_velocity(-1.0, 0.5, 0.0)  # a collision
    assert np.array_equal(drive.wheel_speed, wheels)
    drive.step(0.005, [6.0] * 4, [0.0] * 4)
    fk = kinematics(4).toChassisSpeeds(states(drive))
    assert (fk.vx, fk.vy, fk.omega) == pytest.approx((drive.vx, drive.vy, drive.omega),
                                                     abs=1e-9)


# --- traction ----------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("h", [0.001, 0.005, 0.02])
def test_traction_limited_launch_accelerates_at_mu_g_to_1e9(n, h):
    """μ = 0.3, 12 V from rest: the motors could give ~60 m/s², the carpet allows μ·g. Every
    module slides, the chassis accelerates at exactly μ·g, and the wheel encoders run ahead of
    the true motion."""
    mu = 0.3
    drive = swerve(n, friction=mu)
    drive.reset(0.0, 0.0, 0.0)
    steps = round(0.5 / h)
    for _ in range(steps):
        v0 = drive.vx
        drive.step(h, [12.0] * n, [0.0] * n)
        assert drive.slipping.all()
        assert abs((drive.vx - v0) / h - mu * GRAVITY) < 1e-9
        assert abs(drive.vy) < 1e-12 and abs(drive.omega) < 1e-12
    true_distance = drive.x  # Σ v_k·h with v_k = k·μ·g·h (end-of-step velocities)
    assert true_distance == pytest.approx(mu * GRAVITY * h * h * steps * (steps + 1) / 2,
                                          rel=1e-12)
    for distance, _ in drive.module_positions():
        assert distance - true_distance > 0.5  # encoders ahead by over half a metre
    for speed, _ in drive.module_states():
        assert speed > drive.vx + 1.0


def test_traction_limited_strafe_and_sliding_stop_decelerate_at_mu_g_to_1e9():
    mu = 0.5
    drive = swerve(4, friction=mu)
    drive.reset(0.0, 0.0, 0.0, [math.pi / 2] * 4)
    for _ in range(100):
        v0 = drive.vy
        drive.step(0.005, [12.0] * 4, [0.0] * 4)
        assert abs((drive.vy - v0) / 0.005 - mu * GRAVITY) < 1e-9
    # Wheels locked hard (full reverse): the robot skids to a stop at μ·g.
    for _ in range(20):
        v0 = drive.vy
        drive.step(0.005, [-12.0] * 4, [0.0] * 4)
        assert abs((drive.vy - v0) / 0.005 + mu * GRAVITY) < 1e-9


def motor_limited_errors(h: float, seconds: float = 2.0) -> tuple[float, float]:
    """Max |v − v_exact| (m/s) and |x − x_exact| (m) of a 12 V straight launch with μ = 100.

    Closed form: m_eff·dv/dt = F_stall − b·v with m_eff = m + N·J_w/r²,
    F_stall = N·G·Kt·V/(R·r), b = N·G²·Kt/(R·Kv·r²).
    """
    n = 4
    drive = swerve(n, friction=100.0)
    drive.reset(0.0, 0.0, 0.0)
    m_eff = MASS + n * WHEEL_J / RADIUS**2
    f_stall = n * DRIVE_G * KRAKEN.kt * 12.0 / (KRAKEN.R * RADIUS)
    b = n * DRIVE_G**2 * KRAKEN.kt / (KRAKEN.R * KRAKEN.kv * RADIUS**2)
    v_inf, rate = f_stall / b, b / m_eff
    err_v = err_x = 0.0
    for i in range(1, round(seconds / h) + 1):
        drive.step(h, [12.0] * n, [0.0] * n)
        assert not drive.slipping.any()
        t = i * h
        v = v_inf * -math.expm1(-rate * t)
        x = v_inf * (t + math.expm1(-rate * t) / rate)
        err_v = max(err_v, abs(drive.vx - v))
        err_x = max(err_x, abs(drive.x - x))
    return err_v, err_x


def test_motor_limited_launch_matches_closed_form_and_converges_with_h():
    """Measured max velocity errors over 2 s: 1.23e-4 m/s at 1 ms, 3.06e-3 at 5 ms (0.064 % of
    the 4.75 m/s free speed), 4.6e-2 at 20 ms: second order in h. Bounds: 1.5e-4, 4e-3,
    6e-2 m/s. The position leads by about v·h/2 (the pose moves with end-of-step velocities, as
    odometry does): measured 2.3e-3, 1.1e-2, 3.5e-2 m; bounds 3e-3, 1.3e-2, 4e-2 m."""
    e1, x1 = motor_limited_errors(0.001)
    e5, x5 = motor_limited_errors(0.005)
    e20, x20 = motor_limited_errors(0.02)
    assert e1 < 1.5e-4 and e5 < 4e-3 and e20 < 6e-2
    assert x1 < 3e-3 and x5 < 1.3e-2 and x20 < 4e-2
    assert e5 / e1 > 10.0 and e20 / e5 > 8.0  # shrinks faster than h


# --- steer ------------------------------------------------------------------------------------

STEER_PROFILE = [(0.04, 12.0), (0.06, -6.0), (0.1, 0.0), (0.2, 3.0)]  # (seconds, volts)


def analytic_steer(motor: MotorSpec, theta0: float, rate0: float, volts: float,
                   t: float) -> tuple[float, float]:
    """θ(t), θ̇(t) of J·θ̈ = G·Kt/R·(V − G·θ̇/Kv) from first principles."""
    tau = STEER_J * motor.R * motor.kv / (STEER_G**2 * motor.kt)
    rate_inf = volts * motor.kv / STEER_G
    decay = math.exp(-t / tau)
    return (theta0 + rate_inf * t + (rate0 - rate_inf) * tau * (1.0 - decay),
            rate_inf + (rate0 - rate_inf) * decay)


@pytest.mark.parametrize("motor", [KRAKEN, FALCON], ids=["krakenx60", "falcon500"])
@pytest.mark.parametrize("h", [0.001, 0.005, 0.02])
def test_steer_150_7_matches_analytic_solution_to_1e9(motor, h):
    tau = STEER_J * motor.R * motor.kv / (STEER_G**2 * motor.kt)
    assert 0.5e-3 < tau < 1.5e-3  # the stiff case: explicit Euler diverges above 2τ
    drive = swerve(4, steer=motor)
    drive.reset(0.0, 0.0, 0.0, [0.1, -0.2, 0.3, 0.0])
    theta = drive.steer_angle.copy()
    rate = np.zeros(4)
    for seconds, volts in STEER_PROFILE:
        for _ in range(round(seconds / h)):
            drive.step(h, [0.0] * 4, [volts, -volts, 0.5 * volts, 0.0])
            for i, v in enumerate((volts, -volts, 0.5 * volts, 0.0)):
                theta[i], rate[i] = analytic_steer(motor, theta[i], rate[i], v, h)
            assert np.abs(drive.steer_angle - theta).max() < 1e-9
            assert np.abs(drive.steer_rate - rate).max() < 1e-9
    assert drive.steer_rate[0] == pytest.approx(3.0 * motor.kv / STEER_G, rel=1e-9)  # settled


@pytest.mark.parametrize("h", [0.005, 0.02])
def test_steer_decay_is_stable_and_monotone_at_5_and_20ms(h):
    drive = swerve(4)
    drive.reset(0.0, 0.0, 0.0)
    drive.steer_rate = [30.0, -30.0, 5.0, 0.0]
    previous = np.abs(drive.steer_rate)
    for _ in range(round(0.2 / h)):
        drive.step(h, [0.0] * 4, [0.0] * 4)  # brake: back-EMF only
        now = np.abs(drive.steer_rate)
        assert np.all(now <= previous)
        previous = now
    assert previous.max() < 1e-6
    # At 12 V it settles on the free speed from below, no overshoot.
    for _ in range(round(0.1 / h)):
        drive.step(h, [0.0] * 4, [12.0] * 4)
        assert np.all(drive.steer_rate <= 12.0 * KRAKEN.kv / STEER_G * (1 + 1e-12))


def test_steer_current_is_the_exact_step_average():
    """For the azimuth the average current over a substep is n·(V − G·ω̄/Kv)/R with ω̄ = Δθ/h
    (charge = ∫I dt), to 1e-9 relative."""
    drive = swerve(4)
    drive.reset(0.0, 0.0, 0.0)
    h = 0.005
    for volts in (12.0, 12.0, -4.0, 0.0):
        before = drive.steer_angle.copy()
        drive.step(h, [0.0] * 4, [volts, 0.5 * volts, -volts, 0.0])
        mean_rate = (drive.steer_angle - before) / h
        applied = np.array([volts, 0.5 * volts, -volts, 0.0])
        expect = (applied - STEER_G * mean_rate / KRAKEN.kv) / KRAKEN.R
        assert np.allclose(drive.steer_currents, expect, rtol=1e-9, atol=1e-9)
    assert drive.steer_currents[0] != 0.0  # braking current at 0 V flows (WPILib reports 0)


# --- electrical --------------------------------------------------------------------------------

def test_free_spinning_wheel_current_is_the_exact_step_average():
    """μ = 0: the wheels spin in the air; the drive current equals the analytic average of
    n·(V − G·ω(t)/Kv)/R over the substep, to 1e-9 relative."""
    drive = swerve(4, friction=0.0)
    drive.reset(0.0, 0.0, 0.0)
    h = 0.005
    b = DRIVE_G**2 * KRAKEN.kt / (KRAKEN.R * KRAKEN.kv)
    w = 0.0
    for volts in (12.0, 12.0, 6.0, 0.0, -12.0):
        w_inf = volts * KRAKEN.kv / DRIVE_G
        decay = math.exp(-b * h / WHEEL_J)
        mean = w_inf + (w - w_inf) * (WHEEL_J / (b * h)) * (1.0 - decay)
        w = w_inf + (w - w_inf) * decay
        drive.step(h, [volts] * 4, [0.0] * 4)
        assert drive.wheel_speed == pytest.approx([w] * 4, rel=1e-12, abs=1e-12)
        expect = (volts - DRIVE_G * mean / KRAKEN.kv) / KRAKEN.R
        assert drive.drive_currents == pytest.approx([expect] * 4, rel=1e-9)
    assert drive.drive_currents[0] < -50.0  # plugging at −12 V against the spin


def test_coasting_groups_have_no_torque_no_current_and_no_back_emf_braking():
    drive = swerve(4, friction=0.0)
    drive.reset(0.0, 0.0, 0.0)
    drive.wheel_speed = [50.0, 50.0, 50.0, 50.0]
    drive.steer_rate = [10.0, 10.0, 10.0, 10.0]
    coast = [True, True, False, False]
    drive.step(0.005, [12.0, -12.0, 0.0, 0.0], [12.0, -12.0, 0.0, 0.0], coast, coast)
    assert list(drive.drive_currents[:2]) == [0.0, 0.0]
    assert list(drive.steer_currents[:2]) == [0.0, 0.0]
    assert list(drive.wheel_speed[:2]) == [50.0, 50.0]
    assert list(drive.steer_rate[:2]) == [10.0, 10.0]
    assert np.all(drive.wheel_speed[2:] < 50.0) and np.all(drive.steer_rate[2:] < 10.0)
    assert np.all(drive.drive_currents[2:] < 0.0)  # braking (shorted windings)


def test_motor_shaft_speeds_are_mechanism_speeds_times_gearing():
    drive = swerve(4)
    drive.reset(0.0, 0.0, 0.0)
    for _ in range(20):
        drive.step(0.005, [6.0, 5.0, 4.0, 3.0], [1.0, -1.0, 2.0, 0.0])
    assert np.allclose(drive.drive_motor_speeds(), drive.wheel_speed * DRIVE_G, rtol=1e-15)
    assert np.allclose(drive.steer_motor_speeds(), drive.steer_rate * STEER_G, rtol=1e-15)
    assert [s for s, _ in drive.module_states()] == pytest.approx(
        list(drive.wheel_speed * RADIUS), rel=1e-15)


# --- energy ------------------------------------------------------------------------------------

@pytest.mark.parametrize("coast", [True, False], ids=["coast", "brake"])
@pytest.mark.parametrize("n", [2, 4])
def test_sliding_spinning_robot_never_gains_energy(coast, n):
    """Zero volts, after a collision left the robot sliding at 3.4 m/s and spinning at 8 rad/s
    with the modules at odd angles: kinetic energy (chassis + wheels + azimuths) never rises
    from one substep to the next (beyond 1e-12 relative rounding), and it does fall."""
    drive = swerve(n, friction=1.0)
    drive.reset(0.0, 0.0, 0.0, [0.3, 1.2, -0.7, 2.0][:n])
    drive.set_body_velocity(3.0, -1.5, 8.0)
    drive.steer_rate = [4.0, -4.0, 2.0, 0.0][:n]
    energy = start = kinetic_energy(drive)
    slid = 0
    for _ in range(400):
        drive.step(0.005, [0.0] * n, [0.0] * n, [coast] * n, [coast] * n)
        now = kinetic_energy(drive)
        assert now <= energy * (1 + 1e-12)
        energy = now
        slid += bool(drive.slipping.any())
    assert slid > 20
    assert energy < 0.5 * start


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([2, 3, 4, 6]),
       st.sampled_from([0.001, 0.005, 0.02]), st.booleans(), st.floats(0.05, 2.0))
def test_never_gains_energy_from_random_sliding_states(seed, n, h, coast, friction):
    rng = np.random.default_rng(seed)
    drive = swerve(n, friction=friction)
    drive.reset(0.0, 0.0, 0.0, rng.uniform(-3, 3, n))
    drive.set_body_velocity(*rng.uniform(-4, 4, 2), rng.uniform(-10, 10))
    drive.wheel_speed = rng.uniform(-80, 80, n)
    drive.steer_rate = rng.uniform(-20, 20, n)
    energy = kinetic_energy(drive)
    for _ in range(40):
        drive.step(h, [0.0] * n, [0.0] * n, [coast] * n, [coast] * n)
        now = kinetic_energy(drive)
        assert now <= energy * (1 + 1e-12) + 1e-12
        energy = now


def test_frictionless_spinning_robot_slides_in_a_straight_line():
    """μ = 0: the body velocity turns under the spinning frame, so the field-frame course is
    a straight line (every substep's displacement has the same direction, to 1e-12 rad) at
    constant speed and spin."""
    drive = swerve(4, friction=0.0)
    drive.reset(1.0, 1.0, 0.2)
    drive.set_body_velocity(2.0, 1.0, 5.0)
    prev = (drive.x, drive.y)
    directions = []
    for _ in range(400):
        drive.step(0.005, [0.0] * 4, [0.0] * 4)
        directions.append(math.atan2(drive.y - prev[1], drive.x - prev[0]))
        prev = (drive.x, drive.y)
        assert math.hypot(drive.vx, drive.vy) == pytest.approx(math.sqrt(5.0), rel=1e-12)
        assert drive.omega == 5.0
    assert max(directions) - min(directions) < 1e-12
    assert drive.heading == pytest.approx(0.2 + 400 * 0.005 * 5.0, rel=1e-12)


# --- determinism, validation -------------------------------------------------------------------

def run_scripted(drive: SwerveDrive) -> list[np.ndarray]:
    drive.reset(0.5, 0.5, 0.1, [0.0, 0.5, -0.5, 1.0])
    out = []
    for i in range(300):
        t = i * 0.005
        drive.step(0.005, [12 * math.sin(3 * t), 12.0, -8.0, 6 * math.cos(t)],
                   [4 * math.sin(5 * t), -3.0, 2.0, 0.0], [False, False, i > 150, False])
        out.append(np.array([drive.x, drive.y, drive.heading, drive.vx, drive.vy, drive.omega,
                             *drive.wheel_speed, *drive.steer_angle, *drive.drive_currents]))
    return out


def test_two_identical_runs_are_bit_identical():
    a = run_scripted(swerve(4, friction=0.8))
    b = run_scripted(swerve(4, friction=0.8))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert any(np.any(x != a[0]) for x in a)


def test_a_run_after_reset_repeats_a_fresh_run_bit_for_bit():
    """The contact solver's warm start is state: reset must clear it with the rest."""
    def run(drive: SwerveDrive) -> tuple[list[tuple[float, ...]], int]:
        drive.reset(0.0, 0.0, 0.0, [0.0, 0.5, -0.5, 1.0])
        out, slid = [], 0
        for i in range(200):
            drive.step(0.005, [12.0, 12.0, -12.0, 12.0 * math.cos(0.1 * i)], [3.0, 0.0, 0.0, 0.0])
            out.append((drive.x, drive.y, drive.heading, drive.vx, drive.vy, drive.omega))
            slid += bool(drive.slipping.any())
        return out, slid

    drive = swerve(4, friction=0.5)
    first, slid = run(drive)
    assert slid > 50  # the warm-started sliding solver was used
    assert run(drive) == (first, slid)
    assert run(swerve(4, friction=0.5)) == (first, slid)


def pushing_contacts(monkeypatch) -> list[tuple[list, list, list, list]]:
    """The contact problems (rows, compliance, rhs, limit) of a swerve pushing against
    something with its wheels spinning and its modules turning: 300 substeps, the chassis
    stopped after each as a wall stops it."""
    seen = []
    solver = tires.contact_impulses

    def record(system, limit, k, kappa=None):
        seen.append((list(system.rows), list(system.compliance), list(system.rhs), list(limit)))
        return solver(system, limit, k, kappa)

    monkeypatch.setattr(tires, "contact_impulses", record)
    drive = swerve(4, friction=0.8)
    drive.reset(0.0, 0.0, 0.0, [0.0, 0.3, -0.3, 0.6])
    for i in range(300):
        drive.step(0.005, [12.0, 11.0, 12.0 * math.cos(0.02 * i), 10.0], [0.3, -0.3, 0.2, 0.0])
        drive.set_body_velocity(0.0, 0.0, 0.0)
    monkeypatch.undo()
    return seen


def test_warm_started_contacts_are_closer_to_coulomb_with_fewer_solves(monkeypatch):
    """On a pushing swerve's contacts, the sliding solver started from the last substep's
    damping makes fewer solves than a cold start and lands closer to the exact Coulomb
    impulses: the converged solve (300 damped iterations), checked against Coulomb's
    conditions (each sliding impulse on its limit, opposite to the slip it leaves)."""
    problems = pushing_contacts(monkeypatch)
    kappa = [0.0] * 4
    cold_err, warm_err, cold_solves, warm_solves, slid = [], [], 0, 0, 0
    for rows, compliance, rhs, limit in problems:
        CountingContacts.solves = 0
        cold, _ = tires.contact_impulses(CountingContacts(rows, compliance, rhs), limit, 2)
        cold_solves += CountingContacts.solves
        CountingContacts.solves = 0
        warm, _ = tires.contact_impulses(CountingContacts(rows, compliance, rhs), limit, 2,
                                         kappa)
        warm_solves += CountingContacts.solves
        monkeypatch.setattr(tires, "SLIDE_ITERATIONS", 300)
        system = tires.ReducedContacts(rows, compliance, rhs)
        best, sliding = tires.contact_impulses(system, limit, 2)
        monkeypatch.undo()
        slip = system.residual(best)
        slid += all(sliding)
        for i, slides in enumerate(sliding):
            p_i, s_i = np.array(best[2 * i:2 * i + 2]), np.array(slip[2 * i:2 * i + 2])
            if slides:
                assert np.linalg.norm(p_i) == pytest.approx(limit[i], rel=1e-12)
                assert -(s_i @ p_i) / (np.linalg.norm(s_i) * limit[i]) > 1.0 - 1e-9
            else:
                assert np.abs(s_i).max() < 1e-9
        cold_err.append(max(abs(x - y) / limit[0] for x, y in zip(cold, best, strict=True)))
        warm_err.append(max(abs(x - y) / limit[0] for x, y in zip(warm, best, strict=True)))
    print(f"all modules sliding in {slid} of {len(problems)} substeps; solves: cold "
          f"{cold_solves}, warm {warm_solves}; error p90 / median, cold "
          f"{np.quantile(cold_err, 0.9):.1e} / {np.median(cold_err):.1e}, warm "
          f"{np.quantile(warm_err, 0.9):.1e} / {np.median(warm_err):.1e}")
    assert slid > 200
    assert warm_solves <= 0.7 * cold_solves
    # Measured: solves 922 → 604; error p90 2.8e-5 → 5.4e-6, median 2.7e-6 → 3.5e-7.
    assert np.quantile(warm_err, 0.9) < 0.5 * np.quantile(cold_err, 0.9)
    assert np.median(warm_err) < 0.2 * np.median(cold_err)


def test_step_groups_is_step_in_group_order():
    """step (numpy arrays per motor kind, as a user may pass) and step_groups (lists in group
    order, as the world passes) are one step."""
    a, b = swerve(4, friction=0.8), swerve(4, friction=0.8)
    for drive in (a, b):
        drive.reset(0.0, 0.0, 0.0, [0.2, -0.1, 0.4, 0.0])
    for i in range(50):
        drive_v, steer_v = [12.0, 9.0, -3.0, 6.0], [2.0 * math.sin(i), -1.0, 0.5, 0.0]
        coast = [False, False, i > 25, False]
        a.step(0.005, np.array(drive_v), np.array(steer_v), np.array(coast), None)
        b.step_groups(0.005, drive_v + steer_v, coast + [False] * 4)
    assert (a.x, a.y, a.heading, a.vx, a.vy, a.omega) == (b.x, b.y, b.heading, b.vx, b.vy,
                                                         b.omega)
    assert a.currents == b.currents and a.motor_speeds() == b.motor_speeds()
    with pytest.raises(ValueError):
        b.step_groups(0.005, [0.0] * 4)


def test_wrong_input_lengths_and_steps_are_rejected():
    drive = swerve(4)
    with pytest.raises(ValueError):
        drive.step(0.005, [0.0] * 3, [0.0] * 4)
    with pytest.raises(ValueError):
        drive.step(0.005, [0.0] * 4, [0.0] * 4, drive_coast=[False] * 2)
    with pytest.raises(ValueError):
        drive.step(0.0, [0.0] * 4, [0.0] * 4)
    with pytest.raises(ValueError):
        drive.reset(0.0, 0.0, 0.0, [0.0])
    with pytest.raises(ValueError):
        SwerveDrive([module(0.0, 0.0)], MASS, YAW_INERTIA, 1.0)


def test_reset_places_the_robot_at_rest_with_the_given_azimuths():
    drive = swerve(4)
    drive.step(0.005, [12.0] * 4, [12.0] * 4)
    drive.reset(3.0, 4.0, 1.0, [0.1, 0.2, 0.3, 0.4])
    assert (drive.x, drive.y, drive.heading, drive.vx, drive.vy, drive.omega) == (
        3.0, 4.0, 1.0, 0.0, 0.0, 0.0)
    assert list(drive.steer_angle) == [0.1, 0.2, 0.3, 0.4]
    assert not drive.wheel_speed.any() and not drive.steer_rate.any()
    assert not drive.wheel_angle.any() and not drive.drive_currents.any()


# --- kinematic level ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_kinematic_swerve_matches_wpimath_kinematics_and_odometry(n):
    kin = kinematics(n)
    drive = KinematicSwerve(LAYOUTS[n], max_speed=4.0, max_steer_rate=10.0, wheel_radius=RADIUS)
    drive.reset(1.0, 1.0, 0.3)
    odometry = KINEMATICS[n][1](kin, Rotation2d(0.3), positions(drive),
                                Pose2d(1.0, 1.0, Rotation2d(0.3)))
    rng = np.random.default_rng(n)
    for _ in range(200):
        duties, steer = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
        angles = drive.steer_angle + steer * 10.0 * 0.02
        drive.step(0.02, duties, steer)
        assert np.allclose(drive.steer_angle, angles, rtol=0, atol=1e-15)
        want = kin.toChassisSpeeds(tuple(
            SwerveModuleState(d * 4.0, Rotation2d(a)) for d, a in zip(duties, angles,
                                                                     strict=True)))
        assert (drive.vx, drive.vy, drive.omega) == (want.vx, want.vy, want.omega)
        pose = odometry.update(Rotation2d(drive.heading), positions(drive))
        assert abs(pose.X() - drive.x) < 1e-9 and abs(pose.Y() - drive.y) < 1e-9
    assert drive.drive_currents.tolist() == [0.0] * n


def test_kinematic_swerve_deadzone_is_pyfrc_linear_deadzone():
    drive = KinematicSwerve(LAYOUTS[4], max_speed=4.0, max_steer_rate=10.0, deadzone=0.2)
    drive.step(0.02, [0.1, 0.2, 0.6, -1.0], [0.0] * 4)
    assert [s for s, _ in drive.module_states()] == pytest.approx([0.0, 0.0, 2.0, -4.0])
    with pytest.raises(ValueError):
        KinematicSwerve(LAYOUTS[4][:1] * 5, 4.0, 10.0)
