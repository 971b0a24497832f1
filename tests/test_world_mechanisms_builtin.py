"""The built-in mechanism types (elevator, arm, flywheel, linear) inside a World: soft limits and
hard stops, stall currents, neutral modes and ramps through the motor controllers, limit
switches and encoders on mechanisms, and their config validation.

The pure models have unit tests in tests/models/test_mechanisms.py; these tests drive them
through real configs and :class:`simserver.world.World`, without mocks.
"""

from __future__ import annotations

import math

import pytest

from simserver.config.loader import ConfigError, default_config_text, loads
from simserver.contract.snapshot import SIDE_SPEEDS
from simserver.models.mechanisms import GRAVITY
from simserver.models.motor import motor_by_name
from simserver.world import World
from tests.worlds import ARM as ARM_MECHANISM
from tests.worlds import LIFT, SHOULDER_NEO, TWO_KRAKENS, make_world

H = 0.005  # s: the kitbot's substep
RADIUS = 0.0254  # m: the elevator's "1 in" drum
REL = 1e-9  # float rounding through a few products: far below any physical effect

ELEVATOR = TWO_KRAKENS + LIFT
ARM = '\n[motors.shoulder]\ntype = "NEO"\ncount = 2\n' + ARM_MECHANISM

FLYWHEEL = """
[motors.shooter]
type = "Falcon 500"
neutral = "{neutral}"
ramp = "{ramp}"

[mechanisms.shooter]
type = "flywheel"
motor = "shooter"
gearing = 1.5
moment_of_inertia = "0.002 kg*m^2"
losses = {{ ideal = true }}
"""


def config_error(extra: str) -> ConfigError:
    with pytest.raises(ConfigError) as exc:
        loads(default_config_text() + extra, source="robot.toml")
    return exc.value


def substeps(world: World, seconds: float):
    """Advance one substep at a time, yielding the snapshot after each."""
    for _ in range(round(seconds / world.substep)):
        world.step(world.substep)
        yield world.snapshot()


def angle_diff(a: float, b: float) -> float:
    """a - b in degrees, wrapped into [-180, 180)."""
    return (a - b + 180.0) % 360.0 - 180.0


# --- soft limits and hard stops --------------------------------------------------------------


def brake_time_constant(motor: str, count: int, ratio: float, inertia: float) -> float:
    """1/α of a mechanism with shorted windings: J·R·Kv/(n·c²·Kt), s (c = motor rad per unit
    of the joint, J its generalized inertia)."""
    m = motor_by_name(motor)
    return inertia * m.R * m.kv / (count * ratio**2 * m.kt)


@pytest.mark.parametrize("duty", [1.0, 0.6, 0.3])
def test_elevator_soft_max_cuts_the_output_and_holds_near_it(duty):
    world = make_world(ELEVATOR + 'soft_max = "1.1 m"\n')
    world.set_motor("lift", duty)
    heights, speeds = [0.0], [0.0]
    for snap in substeps(world, 4.0):
        out = snap.mechanisms["lift"]
        assert not out["at_upper"], "never reaches the hard stop"
        heights.append(out["height"])
        speeds.append(out["velocity"])
    top, v_max = max(heights), max(speeds)
    assert top > 1.1, "it got there"
    # The limit is checked at the start of each substep, so the carriage finishes the substep
    # in which it crossed 1.1 m (at most v_max·h), then the shorted windings stop it within
    # v_max·τ (exponential decay; gravity only shortens it). τ ≈ 2.2 ms here. This is more
    # than "one substep's travel" by the braking distance, as with real firmware.
    tau = brake_time_constant("Kraken X60", 2, 10 / RADIUS, 8.0)
    assert top - 1.1 <= v_max * (H + tau)
    reached = next(i for i, h in enumerate(heights) if h >= 1.1)
    # Held near: with the output cut it sinks at the brake-limited g·τ ≈ 22 mm/s (0.11 mm per
    # substep) before the output returns, so it never drops 0.5 mm below the limit.
    sink = GRAVITY * tau
    assert sink * H < 0.5e-3
    assert min(heights[reached:]) >= 1.1 - 0.5e-3
    assert heights[-1] == pytest.approx(1.1, abs=v_max * (H + tau))


def test_arm_soft_limits_cut_the_output_driving_past_them():
    world = make_world(ARM + 'soft_min = "-30 deg"\nsoft_max = "45 deg"\nstart_angle = "0 deg"\n')
    tau = brake_time_constant("NEO", 2, 60.0, 3 * 0.3**2 + 3 * 0.6**2 / 12)  # J = m·d² + m·L²/12
    for duty in (0.5, -0.5):
        world.set_motor("shoulder", duty)
        angles, rates = [world.snapshot().mechanisms["arm"]["angle"]], [0.0]
        for snap in substeps(world, 1.5):
            before = angles[-1]
            out = world.controllers["shoulder"].output
            past = before >= 45.0 if duty > 0 else before <= -30.0
            # Firmware rule: output driving further past a soft limit is cut (brake: 0 V).
            assert (out.duty == 0.0) == past, (before, out)
            angles.append(snap.mechanisms["arm"]["angle"])
            rates.append(abs(snap.mechanisms["arm"]["velocity"]))
        if duty > 0:  # above horizontal gravity helps stop it: overshoot ≤ v·(h + τ)
            assert 45.0 < max(angles) <= 45.0 + max(rates) * (H + tau)
            assert angles[-1] == pytest.approx(45.0, abs=max(rates) * (H + tau))
        else:  # below the limit gravity keeps pulling: it sinks on, braked, off the stop
            assert min(angles) < -30.0
            assert not world.snapshot().mechanisms["arm"]["at_lower"]


def test_elevator_without_soft_limits_stops_exactly_at_its_hard_stop():
    world = make_world(ELEVATOR)
    # 0.3: two stalled Kraken X60s at full duty would draw ~400 A and brown the robot out
    # (correctly), which is not what this test is about.
    world.set_motor("lift", 0.3)
    world.step(3.5)  # ~0.48 m/s at this duty: the 1.2 m stop is reached after ~2.5 s
    out = world.snapshot().mechanisms["lift"]
    assert out["at_upper"] is True and out["at_lower"] is False
    assert out["height"] == 1.2  # the stop is found to the instant and clamped exactly
    assert out["velocity"] == 0.0
    world.set_motor("lift", 0.0)
    world.step(0.5)
    out = world.snapshot().mechanisms["lift"]
    assert not out["at_upper"] and out["height"] < 1.2, "braked, it sinks off the stop"


def test_arm_on_its_hard_stop_draws_the_stall_current_of_all_its_motors():
    world = make_world(ARM)
    world.set_motor("shoulder", 0.7)
    world.step(2.0)
    snap = world.snapshot()
    out = snap.mechanisms["arm"]
    assert out["at_upper"] is True
    assert out["angle"] == pytest.approx(100.0, rel=1e-12)
    assert out["velocity"] == 0.0
    volts = world.controllers["shoulder"].output.voltage
    assert volts == pytest.approx(0.7 * world.bus_voltage, rel=REL)
    # At rest the back-EMF is 0: I = V/R per motor, times 2 motors.
    assert snap.currents["shoulder"] == pytest.approx(2 * volts / motor_by_name("NEO").R,
                                                      rel=1e-6)


# --- neutral modes and ramp ------------------------------------------------------------------


def _spun_up(neutral: str, ramp: str = "0 s") -> tuple[World, float]:
    world = make_world(FLYWHEEL.format(neutral=neutral, ramp=ramp))
    world.set_motor("shooter", 1.0)
    world.step(0.5)
    return world, world.snapshot().mechanisms["shooter"]["velocity"]


def test_flywheel_coasting_at_zero_duty_keeps_its_speed_exactly():
    world, w0 = _spun_up("coast")
    assert w0 > 300.0
    world.set_motor("shooter", 0.0)
    for snap in substeps(world, 1.0):
        assert snap.mechanisms["shooter"]["velocity"] == w0  # no friction is modelled
        assert snap.currents["shooter"] == 0.0
        assert world.controllers["shooter"].output.coasting


def test_flywheel_braking_at_zero_duty_decays_with_the_motor_time_constant():
    world, w0 = _spun_up("brake")
    world.set_motor("shooter", 0.0)
    falcon = motor_by_name("Falcon 500")
    # Shorted windings: J·dw/dt = -G²·Kt·w/(R·Kv)  =>  w = w0·e^(-t/τ), τ = J·R·Kv/(G²·Kt).
    tau = 0.002 * falcon.R * falcon.kv / (1.5**2 * falcon.kt)
    t0 = world.time
    for _ in range(10):
        world.step(0.05)
        snap = world.snapshot()
        t = world.time - t0
        w = snap.mechanisms["shooter"]["velocity"]
        # The linear model is advanced exactly at any substep: only rounding remains.
        assert w == pytest.approx(w0 * math.exp(-t / tau), rel=1e-6)
        # Braking current per motor: (0 - G·w/Kv)/R.
        assert snap.currents["shooter"] == pytest.approx(-1.5 * w / falcon.kv / falcon.R,
                                                         rel=1e-6)
    assert w < 0.2 * w0


def test_flywheel_ramp_slows_the_spin_up_but_not_the_final_speed():
    plain = make_world(FLYWHEEL.format(neutral="coast", ramp="0 s"))
    ramped = make_world(FLYWHEEL.format(neutral="coast", ramp="0.1 s"))
    for world in (plain, ramped):
        world.set_motor("shooter", 1.0)
    for tick in range(300):  # 3 s in 10 ms ticks
        plain.step(0.01)
        ramped.step(0.01)
        a = plain.snapshot().mechanisms["shooter"]["velocity"]
        b = ramped.snapshot().mechanisms["shooter"]["velocity"]
        if tick < 30:
            assert b < a, f"ramped slower at t = {(tick + 1) * 10} ms"
    # After 30 ramp time constants the command is reached to e^-30: same speed to 1e-6.
    assert b == pytest.approx(a, rel=1e-6)


def test_a_coasting_elevator_falls_freely():
    world = make_world(ELEVATOR.replace('count = 2', 'count = 2\nneutral = "coast"')
                       + 'start_height = "1.0 m"\nlosses = { ideal = true }\n')
    world.step(0.2)  # duty 0: the windings are open, nothing holds the carriage
    out = world.snapshot().mechanisms["lift"]
    t = world.time
    assert out["velocity"] == pytest.approx(-GRAVITY * t, rel=1e-6)
    assert out["height"] == pytest.approx(1.0 - 0.5 * GRAVITY * t * t, rel=1e-6)


# --- linear mechanism ------------------------------------------------------------------------

LINEAR = """
[motors.slide]
type = "NEO"

[mechanisms.slide]
type = "linear"
motor = "slide"
speed = "1 m/s"
max_position = "0.8 m"
"""


def test_linear_mechanism_moves_at_duty_times_speed_and_draws_no_current():
    world = make_world(LINEAR)
    world.set_motor("slide", 0.5)
    world.step(0.5)
    snap = world.snapshot()
    assert snap.mechanisms["slide"]["position"] == pytest.approx(0.25, rel=REL)
    assert snap.battery_current == world.battery.background_current
    world.set_motor("slide", 1.0)
    world.step(1.0)
    out = world.snapshot().mechanisms["slide"]
    assert out["position"] == 0.8 and out["at_upper"]


# --- limit switches --------------------------------------------------------------------------

SWITCHES = """
[switches.lift_bottom]
mechanism = "lift"
position = "0.005 m"

[switches.lift_top]
mechanism = "lift"
position = "1 m"
trigger = "above"

[switches.arm_up]
mechanism = "arm"
position = "90 deg"
trigger = "above"

[switches.slide_out]
mechanism = "slide"
position = "50 cm"
trigger = "above"
"""


def test_limit_switches_follow_their_mechanism_position_and_trigger():
    world = make_world(ELEVATOR + ARM + LINEAR + SWITCHES)
    snap = world.snapshot()
    assert snap.switches == {"lift_bottom": True, "lift_top": False, "arm_up": False,
                             "slide_out": False}
    world.set_motor("lift", 0.5)
    world.set_motor("shoulder", 0.3)
    world.set_motor("slide", 1.0)
    seen = {name: set() for name in snap.switches}
    for snap in substeps(world, 3.0):
        lift = snap.mechanisms["lift"]["height"]
        arm = math.radians(snap.mechanisms["arm"]["angle"])
        slide = snap.mechanisms["slide"]["position"]
        expected = {"lift_bottom": lift <= 0.005, "lift_top": lift >= 1.0,
                    "arm_up": arm >= math.radians(90.0), "slide_out": slide >= 0.5}
        assert snap.switches == expected
        for name, pressed in snap.switches.items():
            seen[name].add(pressed)
    assert all(states == {True, False} for states in seen.values()), seen
    world.set_motor("lift", -0.5)
    world.step(3.0)
    assert world.snapshot().switches["lift_bottom"] is True, "pressed again back at the bottom"
    assert world.snapshot().switches["lift_top"] is False


def test_a_switch_with_a_length_position_on_an_arm_is_a_config_error():
    err = config_error(ARM + '[switches.s]\nmechanism = "arm"\nposition = "0.5 m"\n')
    assert [i.path for i in err.issues] == ["switches.s.position"]
    assert "mechanism 'arm'" in str(err) and 'give an angle such as "1 deg"' in str(err)


def test_the_switch_unit_error_message_is_grammatical():
    err = config_error(ARM + '[switches.s]\nmechanism = "arm"\nposition = "0.5 m"\n')
    assert "an angles" not in str(err)


def test_a_switch_on_a_missing_mechanism_suggests_the_closest_name():
    err = config_error(ELEVATOR + '[switches.s]\nmechanism = "lfit"\nposition = "0.1 m"\n')
    assert [i.path for i in err.issues] == ["switches.s.mechanism"]
    assert "robot.toml: switches.s.mechanism: no mechanism named 'lfit' in [mechanisms]; did " \
           "you mean 'lift'?" in str(err)


# --- encoders on mechanisms ------------------------------------------------------------------

ENCODERS = """
[encoders.lift_m]
motor = "lift"
unit = "m"

[encoders.lift_in]
motor = "lift"
unit = "in"
inverted = true

[encoders.lift_rot]
motor = "lift"
unit = "rotations"
mount = "motor"

[encoders.lift_ticks]
motor = "lift"
unit = "ticks"
ticks_per_revolution = 42

[encoders.arm_abs]
motor = "shoulder"
unit = "deg"
absolute = true
offset = "300 deg"

[encoders.arm_abs_inv]
motor = "shoulder"
unit = "deg"
absolute = true
inverted = true
offset = "30 deg"

[encoders.arm_rad]
motor = "shoulder"
unit = "rad"

[encoders.arm_pot]
motor = "shoulder"
unit = "deg"
absolute = true
offset = "135 deg"
full_range = "270 deg"
"""


def test_encoders_on_an_elevator_and_an_arm_read_their_joint_in_every_unit():
    world = make_world(ELEVATOR + 'start_height = "0.1 m"\n' + ARM + ENCODERS)
    enc = world.snapshot().encoders
    # Incremental encoders count from the start; absolute ones read the angle at once.
    assert enc["lift_m"] == (0.0, 0.0) and enc["lift_rot"] == (0.0, 0.0)
    assert enc["arm_abs"][0] == pytest.approx(220.0, rel=REL)  # -80 + 300
    assert enc["arm_abs_inv"][0] == pytest.approx(110.0, rel=REL)  # -(-80) + 30
    assert enc["arm_pot"][0] == pytest.approx(55.0, rel=REL)  # -80 + 135
    world.set_motor("lift", 0.3)
    world.set_motor("shoulder", 0.4)
    for _ in range(150):  # 1.5 s: the arm swings through 0 deg up onto its stop at 100 deg
        world.step(0.01)
        snap = world.snapshot()
        enc = snap.encoders
        travel = snap.mechanisms["lift"]["height"] - 0.1  # m since reset
        v = snap.mechanisms["lift"]["velocity"]
        assert enc["lift_m"] == pytest.approx((travel, v), rel=REL, abs=1e-12)
        assert enc["lift_in"] == pytest.approx((-travel / 0.0254, -v / 0.0254), rel=REL,
                                               abs=1e-12)
        drum_turns = travel / RADIUS / (2 * math.pi)
        assert enc["lift_rot"] == pytest.approx(
            (10 * drum_turns, 10 * v / RADIUS / (2 * math.pi)), rel=REL, abs=1e-12)
        ticks = drum_turns * 42
        reading = enc["lift_ticks"][0]
        assert reading == math.floor(reading)  # whole counts
        assert ticks - 1 - 1e-9 < reading <= ticks + 1e-9  # floor, up to rounding of ticks
        angle = snap.mechanisms["arm"]["angle"]  # deg
        rate = snap.mechanisms["arm"]["velocity"]  # deg/s
        for name, sign, offset in (("arm_abs", 1.0, 300.0), ("arm_abs_inv", -1.0, 30.0)):
            pos, vel = enc[name]
            assert 0.0 <= pos < 360.0
            assert angle_diff(pos, sign * angle + offset) == pytest.approx(0.0, abs=1e-9)
            assert vel == pytest.approx(sign * rate, rel=REL, abs=1e-9)
        assert enc["arm_rad"][0] == pytest.approx(math.radians(angle + 80.0), rel=REL,
                                                  abs=1e-12)
        assert enc["arm_pot"][0] == pytest.approx((angle + 135.0) % 270.0, rel=REL)
    assert snap.mechanisms["arm"]["at_upper"]
    assert enc["arm_abs"][0] == pytest.approx(40.0, rel=1e-9)  # 100 + 300 wraps to 40
    assert enc["arm_abs_inv"][0] == pytest.approx(290.0, rel=1e-9)  # -100 + 30 wraps to 290
    assert enc["arm_pot"][0] == pytest.approx(235.0, rel=1e-9)  # 100 + 135, within 270
    world.reset()
    enc = world.snapshot().encoders
    assert enc["lift_m"] == (0.0, 0.0) and enc["lift_ticks"] == (0.0, 0.0)
    assert enc["arm_abs"][0] == pytest.approx(220.0, rel=REL)


def test_encoder_on_a_flywheel_counts_motor_rotations():
    world = make_world(FLYWHEEL.format(neutral="brake", ramp="0 s")
                       + '[encoders.spin]\nmotor = "shooter"\nunit = "rotations"\n'
                         'mount = "motor"\n')
    world.set_motor("shooter", 1.0)
    world.step(0.3)
    snap = world.snapshot()
    w = snap.mechanisms["shooter"]["velocity"]
    assert snap.encoders["spin"][1] == pytest.approx(1.5 * w / (2 * math.pi), rel=REL)
    assert snap.encoders["spin"][0] > 0.0


def test_a_length_unit_on_an_arm_encoder_is_a_config_error():
    err = config_error(ARM + '[encoders.a]\nmotor = "shoulder"\nunit = "m"\n')
    assert [i.path for i in err.issues] == ["encoders.a.unit"]
    assert "'arm' turns: use an angle unit" in str(err)


def test_an_absolute_encoder_in_a_length_unit_on_an_elevator_is_a_config_error():
    err = config_error(ELEVATOR + '[encoders.a]\nmotor = "lift"\nunit = "m"\n'
                                  'absolute = true\n')
    assert [i.path for i in err.issues] == ["encoders.a.absolute"]
    assert "an elevator's drum" in str(err)


def test_an_absolute_encoder_on_an_elevator_drum_reads_its_angle_within_full_range():
    # A ten-turn potentiometer on the drum: the drum angle (height / radius) within 10 turns.
    world = make_world(ELEVATOR + '[encoders.pot]\nmotor = "lift"\nunit = "rotations"\n'
                       'absolute = true\nfull_range = "10 rotations"\n')
    world.set_motor("lift", 0.5)
    for _ in range(60):
        world.step(0.01)
    height = world.snapshot().mechanisms["lift"]["height"]
    assert height > 0.1
    reading = world.snapshot().encoders["pot"][0]
    assert reading == pytest.approx((height / RADIUS / (2 * math.pi)) % 10.0, rel=REL)


def test_an_encoder_on_a_motor_that_drives_nothing_is_a_config_error():
    err = config_error('[motors.spare]\ntype = "NEO"\n'
                       '[encoders.a]\nmotor = "spare"\nunit = "rotations"\n')
    assert [i.path for i in err.issues] == ["encoders.a.motor"]
    assert "motor 'spare' drives no drivetrain side and no mechanism" in str(err)


def test_integrated_sensors_count_the_way_their_motor_turns():
    # The kitbot's right motor mounted mirrored (inverted) with a SPARK's built-in encoder,
    # and the arm's motor mirrored too: driving forward and lifting the arm turn both rotors
    # backward, and their integrated encoders count the raw rotor, as a Talon FX's or a
    # SPARK's does before the program's own inversion.
    base = default_config_text().replace("[motors.right]\n", "[motors.right]\ninverted = true\n"
                                         'hal = "sparkmax:4"\n')
    world = make_world(ARM_MECHANISM + SHOULDER_NEO + 'inverted = true\nhal = "talonfx:5"\n' + """
[encoders.right_builtin]
motor = "right"
unit = "rotations"
mount = "motor"
hal = "sparkmax:4"

[encoders.shoulder_rotor]
motor = "shoulder"
unit = "rotations"
mount = "motor"
hal = "talonfx:5"
""", base=base)
    world.set_motor("left", 0.5)
    world.set_motor("right", -0.5)  # a mirrored motor driven backward drives its side forward
    world.set_motor("shoulder", -0.5)
    for _ in range(50):
        world.step(0.01)
    snap = world.snapshot()
    assert snap.drive_log[SIDE_SPEEDS[1]] > 0.5 and snap.mechanisms["arm"]["velocity"] > 0.0
    gearing = world.drivetrain.drive.gearing
    wheel_turns = world.distance / (2 * math.pi * world.drivetrain.drive.params.wheel_radius)
    assert snap.encoders["right_builtin"][0] == pytest.approx(-wheel_turns * gearing, rel=0.02)
    arm_turns = (snap.mechanisms["arm"]["angle"] + 80.0) / 360.0  # from the start angle
    assert snap.encoders["shoulder_rotor"][0] == pytest.approx(-arm_turns * 60, rel=1e-9)
