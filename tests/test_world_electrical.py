"""World-level electrical behaviour: the battery, every motor controller, brownout, the main
breaker and pneumatics, all stepped together by :class:`simserver.world.World`.

The pure models (battery, controller, motors, pneumatics) have their own unit tests in
tests/models/; these tests check how the world wires them together. Real configs (the bundled
kitbot plus TOML), real worlds, no mocks.
"""

from __future__ import annotations

import math
from itertools import pairwise

import pytest

from simserver.config.loader import ConfigError, default_config_text, loads
from simserver.models.battery import breaker_trip_time
from simserver.models.motor import motor_by_name
from simserver.models.pneumatics import ATMOSPHERIC_PRESSURE, GAS_CONSTANT, PSI, TANK_VOLUME
from simserver.world import World
from tests.worlds import ARM, IDEAL_DRIVE, LIFT, SHOULDER_NEO, make_world

H = 0.005  # s: the kitbot's substep (sim.substep = "5 ms")
V_NOM = 12.7  # V: kitbot battery nominal_voltage
R_BATT = 0.015  # ohm: kitbot battery resistance
BACKGROUND = 0.5  # A: the battery's default background_current

# Float rounding through a handful of products and sums: far below any physical effect.
REL = 1e-9

MECHANISMS = """
[motors.lift]
type = "Kraken X60"
count = 2
supply_limit = "25 A"

[motors.shoulder]
type = "NEO"
stator_limit = "30 A"

[motors.shooter]
type = "Falcon 500"
neutral = "coast"
""" + LIFT + ARM + """
[mechanisms.shooter]
type = "flywheel"
motor = "shooter"
gearing = 1.5
moment_of_inertia = "0.002 kg*m^2"
"""

# An arm already resting on its upper stop: driven up, it stays stalled from the first substep.
STALLED_ARM = SHOULDER_NEO + ARM + 'start_angle = "100 deg"\n'

PNEUMATICS = """
[pneumatics]
tanks = 1
extra_volume = "0.1 L"
switch_off_pressure = "60 psi"
switch_on_pressure = "40 psi"

[solenoids.grab]

[cylinders.grabber]
solenoid = "grab"
bore = "1 in"
stroke = "4 in"
"""


def kitbot(*subs: tuple[str, str]) -> str:
    """The bundled kitbot text with exact substitutions (each must match)."""
    text = default_config_text()
    for old, new in subs:
        assert old in text, f"kitbot.toml no longer contains {old!r}"
        text = text.replace(old, new)
    return text


def drive_motor_keys(extra: str) -> list[tuple[str, str]]:
    """Substitutions adding ``extra`` TOML lines to both drivetrain motor tables."""
    return [(f'[motors.{side}]\ntype = "CIM"\ncount = 2',
             f'[motors.{side}]\ntype = "CIM"\ncount = 2\n{extra}')
            for side in ("left", "right")]


def config_error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as exc:
        loads(text, source="robot.toml")
    return exc.value


def substeps(world: World, seconds: float):
    """Advance one substep at a time, yielding the snapshot after each."""
    for _ in range(round(seconds / world.substep)):
        world.step(world.substep)
        yield world.snapshot()


# --- power balance ---------------------------------------------------------------------------

# mechanism name -> (motor name, motor shaft rad/s per unit of its published velocity)
_RADIUS = 0.0254  # m, "1 in" drum
_SHAFT = {
    "lift": ("lift", 10 / _RADIUS),  # m/s -> rad/s: gearing / drum radius
    "arm": ("shoulder", 60 * math.pi / 180),  # deg/s -> rad/s, times gearing
    "shooter": ("shooter", 1.5),  # rad/s -> rad/s, times gearing
}


def test_battery_current_is_background_plus_every_supply_current_and_bridges_conserve_power():
    world = make_world(MECHANISMS + "[pneumatics]\n")
    duties = {"left": 0.4, "right": 0.25, "lift": 0.4, "shoulder": 0.5, "shooter": 0.5}
    for name, duty in duties.items():
        world.set_motor(name, duty)
    stator_limited = False
    for _ in range(100):  # 1 s in 10 ms ticks: elevator climbing, arm reaching its stop, ...
        world.step(0.01)
        snap = world.snapshot()
        # Precondition: no brownout, so every controller drives its commanded duty.
        assert not snap.brownout and not snap.breaker_tripped
        v_bus = world.bus_voltage  # what the controllers were fed in the last substep
        # Drivetrain: no ramp/noise/limits on left/right, so the bridge duty is the command and
        # the PWM bridge draws duty x stator current from the bus.
        drive = duties["left"] * snap.currents["left"] + duties["right"] * snap.currents["right"]
        mech = 0.0
        for mech_name, (motor, to_shaft) in _SHAFT.items():
            cfg = world.cfg.motors[motor]
            spec = motor_by_name(cfg.type)
            applied = world.applied_voltage[motor]  # the controller's, or a limit's re-step
            stator = snap.currents[motor]
            # The reported stator current is the motor equation at the controller's terminal
            # voltage and the mechanism's (published) motor speed.
            omega = snap.mechanisms[mech_name]["velocity"] * to_shaft
            assert stator == pytest.approx(cfg.count * (applied - omega / spec.kv) / spec.R,
                                           rel=REL, abs=1e-9)  # abs: A, for a current near 0
            supply = stator * applied / v_bus
            # Lossless bridge: V_bus * I_supply = V_applied * I_stator, as the controller says.
            ctl_stator, ctl_supply = world.controllers[motor].currents(applied, v_bus, omega)
            assert ctl_stator == pytest.approx(stator, rel=REL, abs=1e-9)
            assert ctl_supply == pytest.approx(supply, rel=REL, abs=1e-9)
            assert v_bus * supply == pytest.approx(applied * stator, rel=REL, abs=1e-9)
            mech += supply
        compressor = snap.pneumatics.compressor_current
        assert compressor > 0.0
        assert snap.battery_current - BACKGROUND == pytest.approx(drive + mech + compressor,
                                                                  rel=REL)
        # The terminal voltage comes from the same substep's total current.
        assert snap.battery_voltage == pytest.approx(V_NOM - R_BATT * snap.battery_current,
                                                     rel=REL)
        stator_limited |= world.controllers["shoulder"].output.stator_limited
    assert stator_limited, "the balance also holds with a current limit acting"
    assert world.snapshot().mechanisms["arm"]["at_upper"], "the arm stalled on its stop"


def test_current_limits_hold_while_climbing_and_while_stalled():
    # The lift climbs from rest (supply limited at first), the arm starts on its upper stop
    # (stalled from the first substep, stator limited throughout).
    world = make_world(MECHANISMS.replace('max_angle = "100 deg"',
                                          'max_angle = "100 deg"\nstart_angle = "100 deg"'))
    world.set_motor("lift", 0.4)
    world.set_motor("shoulder", 0.5)
    lift_limited = 0
    for snap in substeps(world, 0.5):
        assert snap.mechanisms["lift"]["velocity"] > 0.0 and not snap.mechanisms["lift"]["at_upper"]
        out = world.controllers["lift"].output
        supply = snap.currents["lift"] * out.voltage / world.bus_voltage
        # The limit is set from the substep's starting speed; the climb only raises the
        # back-EMF, so the current at the end is at or below it (1e-9: rounding of the root).
        assert supply / 2 <= 25.0 * (1 + REL)
        lift_limited += out.supply_limited
        assert snap.mechanisms["arm"]["at_upper"]
        assert snap.currents["shoulder"] == pytest.approx(30.0, rel=REL)  # stalled: exactly
    assert lift_limited > 0


def test_stator_limit_holds_in_the_substep_a_mechanism_hits_its_stop():
    world = make_world(MECHANISMS)
    world.set_motor("shoulder", 0.5)
    peak = 0.0
    for snap in substeps(world, 1.0):
        peak = max(peak, abs(snap.currents["shoulder"]))
    assert world.snapshot().mechanisms["arm"]["at_upper"]
    assert peak <= 30.0 * (1 + REL)


def test_a_stalled_arm_sags_the_bus_by_r_times_its_supply_current():
    idle = make_world(STALLED_ARM)
    stalled = make_world(STALLED_ARM)
    stalled.set_motor("shoulder", 1.0)
    for world in (idle, stalled):
        world.step(1.0)  # long enough for the explicit mechanism/battery coupling to settle
    a, b = idle.snapshot(), stalled.snapshot()
    assert b.mechanisms["arm"]["at_upper"] and b.mechanisms["arm"]["velocity"] == 0.0
    assert a.battery_voltage == pytest.approx(V_NOM - R_BATT * BACKGROUND, rel=REL)
    neo = motor_by_name("NEO")
    out = stalled.controllers["shoulder"].output
    stator = b.currents["shoulder"]
    assert stator == pytest.approx(out.voltage / neo.R, rel=1e-6)  # at stall I = V/R
    supply = stator * out.voltage / stalled.bus_voltage
    assert supply > 50.0
    assert a.battery_voltage - b.battery_voltage == pytest.approx(R_BATT * supply, rel=REL)
    # Settled: the arm is driven from the battery's own terminal voltage (duty 1).
    assert out.voltage == pytest.approx(b.battery_voltage, rel=REL)


def test_mechanisms_are_driven_from_the_battery_voltage_of_the_same_substep():
    world = make_world(STALLED_ARM)
    world.set_motor("shoulder", 1.0)
    world.step(H)  # one substep from rest; the arm is stalled against its stop throughout
    snap = world.snapshot()
    out = world.controllers["shoulder"].output
    supply = snap.battery_current - BACKGROUND  # the drivetrain is idle (0 A)
    assert out.voltage == pytest.approx(snap.battery_voltage, rel=1e-6)
    assert snap.battery_voltage * supply == pytest.approx(out.voltage * snap.currents["shoulder"],
                                                          rel=1e-6)


# --- brownout --------------------------------------------------------------------------------


def test_brownout_cuts_every_output_and_recovers_only_above_7_5_volts():
    # A 0.5 ohm battery cannot feed the drivetrain at stall: the bus collapses below 6.75 V.
    # Every output coasts at neutral, so "cut" means exactly 0 A.
    base = kitbot(('resistance = "0.015 ohm"', 'resistance = "0.5 ohm"'),
                  *drive_motor_keys('neutral = "coast"'))
    world = make_world("""
[motors.lift]
type = "Kraken X60"
count = 2
neutral = "coast"
""" + LIFT, base)
    for name in ("left", "right", "lift"):
        world.set_motor(name, 1.0)
    was_brownout = world.snapshot().brownout
    assert not was_brownout
    onsets = recoveries = cut_substeps = driven_substeps = 0
    for snap in substeps(world, 0.5):
        outputs = {n: world.controllers[n].output for n in ("left", "right", "lift")}
        if was_brownout:  # the flag was up when this substep began: every output is cut
            cut_substeps += 1
            for name, out in outputs.items():
                assert out.coasting and out.duty == 0.0, name
                assert snap.currents[name] == 0.0, name
            assert snap.battery_current == BACKGROUND
        else:
            driven_substeps += 1
            # Driven: current flows (it may be slightly negative when the collapsed bus sits
            # below the wheels' back-EMF, which is regeneration, not a cut).
            assert snap.currents["left"] != 0.0 and snap.currents["right"] != 0.0
        if snap.brownout and not was_brownout:
            onsets += 1
            assert snap.battery_voltage < 6.75
        if was_brownout and not snap.brownout:
            recoveries += 1
            assert snap.battery_voltage > 7.5
        if was_brownout and snap.brownout:
            assert snap.battery_voltage <= 7.5
        was_brownout = snap.brownout
    assert onsets >= 1 and recoveries >= 1 and cut_substeps >= 1 and driven_substeps >= 1
    world.zero_inputs()
    world.step(0.1)
    snap = world.snapshot()
    assert not snap.brownout
    assert snap.battery_voltage > 7.5


# --- main breaker ----------------------------------------------------------------------------

# The kitbot's bumpers are 32 in long: at x = 16 in its rear bumper touches the x = 0 wall.
PINNED = ('x = "2 m"', 'x = "16 in"')


def _run_until_trip(world: World, limit: float) -> list:
    history = []
    while world.time < limit:
        world.step(world.substep)
        snap = world.snapshot()
        history.append(snap)
        if snap.breaker_tripped:
            break
    return history


def test_breaker_trips_a_robot_pinned_against_the_wall_when_the_trip_curve_says():
    world = make_world(IDEAL_DRIVE, base=kitbot(PINNED))  # rigid traction: stalled
    world.set_motor("left", -1.0)
    world.set_motor("right", -1.0)  # full reverse, into the wall behind it
    history = _run_until_trip(world, 12.0)
    tripped = history[-1]
    assert tripped.breaker_tripped
    before = history[:-1]
    stall = before[-1].battery_current
    # Pinned from the first substep: the current is the stall current throughout (the wheels
    # creep at ~1e-8 m/s into the wall, so 1e-6 relative), ~163 A per side.
    for snap in before:
        assert snap.battery_current == pytest.approx(stall, rel=1e-6)
        assert snap.x == pytest.approx(0.4064, abs=1e-5)
    side = before[-1].currents["left"]
    assert -175.0 < side < -155.0  # reverse
    predicted = breaker_trip_time(stall)
    # The breaker is checked at the end of each substep, so it trips at the first substep end
    # at or after the predicted time: within [T, T + one substep] (1e-9 s: time sums).
    assert predicted - 1e-9 <= tripped.time <= predicted + H + 1e-9
    # Open circuit: no bus, no current, no motion even when driven away from the wall.
    assert tripped.battery_voltage == 0.0 and tripped.battery_current == 0.0
    world.set_motor("left", 1.0)
    world.set_motor("right", 1.0)
    x = tripped.x
    for snap in substeps(world, 1.0):
        assert snap.breaker_tripped
        assert snap.battery_voltage == 0.0 and snap.battery_current == 0.0
        assert world.bus_voltage == 0.0
        # Shorted windings (brownout at 0 V) brake the ~1e-8 m/s creep: microamps at most.
        assert snap.currents["left"] == pytest.approx(0.0, abs=1e-3)
        assert snap.currents["right"] == pytest.approx(0.0, abs=1e-3)
    assert snap.x == pytest.approx(x, abs=1e-6)  # m: the ~1e-8 m/s creep, stopped
    assert snap.vx == pytest.approx(0.0, abs=1e-6)


def test_breaker_trips_after_driving_into_the_wall_from_the_start_pose():
    world = make_world(IDEAL_DRIVE)
    world.set_motor("left", -1.0)
    world.set_motor("right", -1.0)
    history = _run_until_trip(world, 15.0)
    assert history[-1].breaker_tripped
    before = history[:-1]
    # Pinned: at the wall and at rest from some substep on, for good.
    t_pin = None
    for snap in before:
        at_rest = abs(snap.x - 0.4064) < 1e-5 and abs(snap.vx) < 1e-6
        if at_rest and t_pin is None:
            t_pin = snap.time
        elif not at_rest:
            t_pin = None
    assert t_pin is not None and 0.3 < t_pin < 2.0
    stall = before[-1].battery_current
    peak = max(s.battery_current for s in before)
    # Rigorous bounds from the heat model (heating ∝ I², exact for held currents): it cannot
    # trip before a cold breaker would at the peak current seen, and once pinned at the stall
    # current it trips within the cold trip time of that current (+ one substep of detection).
    assert breaker_trip_time(peak) <= history[-1].time <= t_pin + breaker_trip_time(stall) + H
    # Not a bound but a large margin (7.8 s vs 7.4 s): during the ~0.5 s approach the back-EMF
    # keeps the current below stall, so it trips later than a breaker pinned from the start.
    assert history[-1].time > breaker_trip_time(stall)


def test_breaker_false_never_trips():
    no_breaker = ('resistance = "0.015 ohm"', 'resistance = "0.015 ohm"\nbreaker = false')
    world = make_world(IDEAL_DRIVE, base=kitbot(PINNED, no_breaker))
    world.set_motor("left", -1.0)
    world.set_motor("right", -1.0)
    world.step(H)
    stall = world.snapshot().battery_current
    trip = breaker_trip_time(stall)
    assert 5.0 < trip < 10.0
    for snap in substeps(world, 2.0 * trip):
        assert not snap.breaker_tripped
    assert snap.battery_current == pytest.approx(stall, rel=1e-6)  # still pinned, still stalled
    assert snap.battery_voltage > 7.0


# --- pneumatics ------------------------------------------------------------------------------


def _pump_up(world: World) -> list:
    """Run until the pressure switch stops the compressor; the snapshots on the way."""
    history = []
    while world.time < 30.0:
        world.step(0.01)
        snap = world.snapshot()
        history.append(snap)
        if not snap.pneumatics.compressor_running:
            return history
    raise AssertionError("the compressor never stopped")


def test_compressor_current_is_part_of_the_battery_current_and_pressure_rises():
    world = make_world(PNEUMATICS)
    history = _pump_up(world)
    pressures = [s.pneumatics.pressure_psi for s in history]
    assert all(b > a for a, b in pairwise(pressures)), \
        "pressure rises every tick while the compressor runs"
    assert pressures[-1] >= 60.0  # the switch opens at switch_off_pressure
    for snap in history:
        # Drivetrain idle at rest (0 A): the battery carries background + compressor.
        assert snap.battery_current - BACKGROUND == pytest.approx(
            snap.pneumatics.compressor_current, rel=REL, abs=1e-12)
        assert snap.battery_voltage == pytest.approx(V_NOM - R_BATT * snap.battery_current,
                                                     rel=REL)
    assert all(7.0 <= s.pneumatics.compressor_current <= 10.0 for s in history[:-1])
    world.step(0.01)
    assert world.snapshot().battery_current == BACKGROUND, "compressor off: no current"


def test_cylinder_extends_on_its_solenoid_and_takes_its_swept_volume_of_air():
    world = make_world(PNEUMATICS)
    _pump_up(world)
    cfg = world.cfg.pneumatics
    volume = cfg.tanks * TANK_VOLUME + cfg.extra_volume  # m³: 0.5 L tank + 0.1 L tubing
    sweep = math.pi * 0.0254**2 / 4 * (4 * 0.0254)  # m³: 1 in bore x 4 in stroke
    temperature = cfg.temperature
    p0 = world.snapshot().pneumatics.pressure_psi * PSI  # Pa gauge
    n0 = world.pneumatics.moles
    world.set_solenoid("grab", True)
    world.step(H)
    snap = world.snapshot()
    assert not snap.pneumatics.compressor_running, "still above the 40 psi switch-on pressure"
    taken = (ATMOSPHERIC_PRESSURE + p0) * sweep / (GAS_CONSTANT * temperature)  # mol: PV/RT
    assert n0 - world.pneumatics.moles == pytest.approx(taken, rel=REL)
    drop = taken * GAS_CONSTANT * temperature / volume  # Pa
    assert p0 - snap.pneumatics.pressure_psi * PSI == pytest.approx(drop, rel=1e-8)
    # (1e-8: a ~44 kPa difference of two ~515 kPa absolute pressures loses a digit.)
    assert snap.pneumatics.extensions["grabber"] == pytest.approx(H / 0.2, rel=REL)
    world.step(0.2)
    snap = world.snapshot()
    assert snap.pneumatics.extensions["grabber"] == 1.0
    assert snap.pneumatics.pressure_psi * PSI == pytest.approx(p0 - drop, rel=1e-8), \
        "travel itself costs no air"


def test_cylinder_without_pneumatics_is_a_config_error_naming_it():
    err = config_error(default_config_text() + """
[solenoids.grab]

[cylinders.grabber]
solenoid = "grab"
bore = "1 in"
stroke = "4 in"
""")
    assert [i.path for i in err.issues] == ["cylinders.grabber"]
    assert "robot.toml: cylinders.grabber: cylinders need air: add a [pneumatics] section" \
        in str(err)


def test_cylinder_with_a_missing_solenoid_is_a_config_error():
    err = config_error(default_config_text() + PNEUMATICS.replace('solenoid = "grab"',
                                                                  'solenoid = "grabb"'))
    assert [i.path for i in err.issues] == ["cylinders.grabber.solenoid"]
    assert "no solenoid named 'grabb' in [solenoids]; did you mean 'grab'?" in str(err)


# --- inductance ------------------------------------------------------------------------------


# Drivetrain motors may now carry inductance with the physical fidelity (docs/config.md,
# motors.<name>.inductance: "On drivetrain motors it needs the `physical` fidelity"); what stays
# a config error is a mismatch between the sides or another fidelity.


def test_inductance_on_one_drivetrain_side_only_is_a_config_error():
    err = config_error(kitbot(('[motors.left]\ntype = "CIM"\ncount = 2',
                               '[motors.left]\ntype = "CIM"\ncount = 2\ninductance = "0.1 mH"')))
    assert [i.path for i in err.issues] == ["drivetrain"]
    assert "must have the same motor type, count and inductance" in str(err)


def test_drivetrain_inductance_needs_the_physical_fidelity():
    err = config_error(kitbot(*drive_motor_keys('inductance = "0.1 mH"'),
                              ('fidelity = "physical"', 'fidelity = "kinematic"\n'
                                                        'kinematic = { max_speed = "3 m/s" }')))
    assert [i.path for i in err.issues] == ["drivetrain.fidelity"]
    world = make_world(base=kitbot(*drive_motor_keys('inductance = "0.1 mH"')))
    world.set_motor("left", 0.5)
    world.set_motor("right", 0.5)
    world.step(1.0)
    snap = world.snapshot()
    assert snap.vx > 1.0 and snap.currents["left"] > 0.0  # physical fidelity: accepted, drives


def test_inductance_on_a_mechanism_motor_is_accepted_and_settles_to_the_stall_current():
    world = make_world(STALLED_ARM.replace('type = "NEO"', 'type = "NEO"\ncount = 2\n'
                                                            'inductance = "0.1 mH"'))
    world.set_motor("shoulder", 0.5)
    world.step(1.0)  # L/R = 0.1 mH / 0.114 ohm ≈ 0.9 ms: settled many times over
    snap = world.snapshot()
    out = world.controllers["shoulder"].output
    assert snap.mechanisms["arm"]["at_upper"]
    assert snap.currents["shoulder"] == pytest.approx(2 * out.voltage / motor_by_name("NEO").R,
                                                      rel=1e-6)


# --- determinism -----------------------------------------------------------------------------


def _noisy_run(seed: int) -> list:
    base = kitbot(("seed = 0", f"seed = {seed}"), *drive_motor_keys("noise = 0.05"))
    extra = MECHANISMS.replace('type = "Kraken X60"', 'type = "Kraken X60"\nnoise = 0.05') \
        .replace('type = "NEO"', 'type = "NEO"\nnoise = 0.05') \
        .replace('type = "Falcon 500"', 'type = "Falcon 500"\nnoise = 0.05')
    world = make_world(extra + "[pneumatics]\n", base)
    for name, duty in {"left": 0.5, "right": 0.3, "lift": 0.4, "shoulder": 0.3,
                       "shooter": 0.7}.items():
        world.set_motor(name, duty)
    out = []
    for _ in range(500):  # 5 s in 10 ms ticks
        world.step(0.01)
        out.append(world.snapshot())
    return out


def test_same_seed_gives_bit_identical_snapshots_and_another_seed_differs():
    a, b, c = _noisy_run(7), _noisy_run(7), _noisy_run(8)
    assert a == b  # dataclass equality: every float bit-identical, every tick
    assert a[-1].x != c[-1].x
    assert a[-1].mechanisms["shooter"]["velocity"] != c[-1].mechanisms["shooter"]["velocity"]
