"""A Talon FX's own closed loops (velocity, position, Motion Magic) under the bridge reach their
setpoints as Phoenix 6's simulation alone makes them: real phoenix6 in child processes
(Phoenix's threads stay out of the test process), WPILib's DCMotorSim as the plant, each robot
loop emulated with the HAL's SimPeriodic callbacks (Phoenix updates the Talon's SimDevice
there) and paced to real time (Phoenix runs its loops on its own wall-clock thread).

The reference is CTRE's documented pattern: feed the plant ``sim_state.motor_voltage``, then
write the rotor position and velocity through ``sim_state``. Through the bridge the plant gets
the Talon's ``dutyCycle`` times the battery voltage, and the rotor goes back through the
bridge's encoder, ``hal = "talonfx:1"``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = r"""
import json, math, os, sys, time
import hal
hal.initialize(500, 0)
from phoenix6 import configs, controls, unmanaged
from phoenix6.hardware import TalonFX
from wpilib.simulation import DCMotorSim, DriverStationSim
from wpimath.system.plant import DCMotor, LinearSystemId
from simserver.bridge.core import Bridge
from simserver.config.loader import loads
from simserver.contract import topics

CONFIG = '''
[motors.m]
type = "Kraken X60"
hal = "talonfx:1"
[mechanisms.m]
type = "flywheel"
motor = "m"
gearing = 1
moment_of_inertia = "0.001 kg*m^2"
[encoders.m]
motor = "m"
unit = "rotations"
mount = "motor"
hal = "talonfx:1"
'''
mode, how = sys.argv[1], sys.argv[2]
DriverStationSim.setDsAttached(True)
DriverStationSim.setEnabled(True)
DriverStationSim.notifyNewData()
talon = TalonFX(1)
cfg = configs.TalonFXConfiguration()
if mode == "velocity":
    cfg.slot0.k_p, cfg.slot0.k_v = 0.5, 0.12
else:
    cfg.slot0.k_p, cfg.slot0.k_d = 4.0, 0.2
cfg.motion_magic.motion_magic_cruise_velocity = 40.0
cfg.motion_magic.motion_magic_acceleration = 160.0
talon.configurator.apply(cfg)
request = {"velocity": controls.VelocityVoltage(40.0),
           "position": controls.PositionVoltage(10.0),
           "motionmagic": controls.MotionMagicVoltage(10.0)}[mode]
motor = DCMotor.krakenX60(1)
plant = DCMotorSim(LinearSystemId.DCMotorSystem(motor, 0.001, 1.0), motor)
bridge = Bridge(loads(CONFIG)) if how == "bridge" else None
out = []
start = time.monotonic()
for k in range(150):
    unmanaged.feed_enable(0.1)
    talon.set_control(request)
    hal.simPeriodicBefore()
    hal.simPeriodicAfter()
    if bridge is not None:
        bridge.apply({topics.BATTERY_VOLTAGE: 12.0})
        volts = bridge.outputs()[topics.motor("m")] * 12.0
    else:
        talon.sim_state.set_supply_voltage(12.0)
        volts = talon.sim_state.motor_voltage
    plant.setInputVoltage(volts)
    plant.update(0.02)
    rot = plant.getAngularPosition() / (2 * math.pi)
    rps = plant.getAngularVelocity() / (2 * math.pi)
    if bridge is not None:
        bridge.apply({topics.encoder_position("m"): rot, topics.encoder_velocity("m"): rps})
    else:
        talon.sim_state.set_raw_rotor_position(rot)
        talon.sim_state.set_rotor_velocity(rps)
    out.append((rps, rot))
    time.sleep(max(0.0, start + 0.02 * (k + 1) - time.monotonic()))
print("OUT " + json.dumps(out), flush=True)
os._exit(0)  # Phoenix's native threads can abort a normal interpreter exit
"""


def runs(mode: str) -> dict[str, list[tuple[float, float]]]:
    """(rotor rot/s, rotor rot) after each loop, Phoenix alone and through the bridge (both
    at once: each is paced to real time)."""
    procs = {how: subprocess.Popen([sys.executable, "-c", PROBE, mode, how],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for how in ("alone", "bridge")}
    out = {}
    for how, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=60)
        lines = [ln for ln in stdout.splitlines() if ln.startswith("OUT ")]
        assert proc.returncode == 0 and lines, stdout + stderr
        out[how] = [tuple(x) for x in json.loads(lines[-1][4:])]
    return out


def settled(values: list[float], target: float, band: float) -> int:
    """The first loop from which every value stays within ``band`` of ``target``."""
    outside = [k for k, v in enumerate(values) if abs(v - target) > band]
    return outside[-1] + 1 if outside else 0


@pytest.mark.parametrize(("mode", "index", "target", "band"), [
    ("velocity", 0, 40.0, 0.4),      # VelocityVoltage(40 rot/s): kV 0.12, kP 0.5
    ("position", 1, 10.0, 0.05),     # PositionVoltage(10 rot): kP 4, kD 0.2
    ("motionmagic", 1, 10.0, 0.05),  # MotionMagicVoltage(10 rot), 40 rot/s, 160 rot/s²
])
def test_talonfx_loop_reaches_its_setpoint_as_phoenix_alone_does(mode, index, target, band):
    got = runs(mode)
    final = {how: run[-1][index] for how, run in got.items()}
    assert final["alone"] == pytest.approx(target, abs=band), final
    assert final["bridge"] == pytest.approx(final["alone"], abs=band / 5), final
    # Phoenix's loops run on its wall clock: allow a few loops either way
    times = {how: settled([r[index] for r in run], target, 2 * band)
             for how, run in got.items()}
    assert abs(times["alone"] - times["bridge"]) <= 5, times
