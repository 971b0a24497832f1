"""CTRE's swerve simulation is turned off exactly for drivetrains simserver wires.

A real phoenix6 SwerveDrivetrain (examples/ctre_swerve's Tuner X constants) in a child
process (Phoenix's threads stay out of the test process). CTRE's SimSwerveDrivetrain.update
sets each inverted steer motor's sim-state orientation to CLOCKWISE_POSITIVE when it runs, so
that orientation tells whether update_sim_state ran.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.ntutil import REPO

PROBE = """
import sys
import hal
hal.initialize(500, 0)
from phoenix6.sim import ChassisReference
from generated.tuner_constants import TunerConstants
from simserver.bridge.vendorsims import take_over
said = []
dt = TunerConstants.create_drivetrain()
assert take_over([a for a in sys.argv[1].split(",") if a], said.append)
dt.update_sim_state(0.004, 12.0)
steer = dt.modules[0].steer_motor.sim_state.orientation
print("RAN" if steer == ChassisReference.CLOCKWISE_POSITIVE else "OFF", len(said), flush=True)
import os
os._exit(0)  # Phoenix's native threads can abort a normal interpreter exit (seen once)
"""


def run_probe(wired: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE, wired], capture_output=True, text=True,
                          cwd=REPO / "examples" / "ctre_swerve", timeout=60)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith(("RAN", "OFF"))]
    assert done.returncode == 0 and lines, done.stdout + done.stderr
    return lines[-1]


@pytest.mark.slow
@pytest.mark.parametrize(("wired", "expected"), [
    ("", "RAN 0"),                    # nothing wired: CTRE's simulation runs
    ("pwm:0,talonfx:40", "RAN 0"),    # wired devices, none of the drivetrain's
    ("cancoder:9", "OFF 1"),          # one of its devices: off, said once
    ("talonfx:1,pigeon2:13", "OFF 1"),
])
def test_update_sim_state_runs_unless_simserver_wires_the_drivetrain(wired, expected):
    assert run_probe(wired) == expected


REV_PROBE = """
import sys
import hal
hal.initialize(500, 0)
import rev
from wpimath.system.plant import DCMotor
from simserver.bridge.vendorsims import own, take_over_rev
said = []
motor = DCMotor.NEO(1)
wired = rev.SparkMax(60, rev.SparkLowLevel.MotorType.kBrushless)
other = rev.SparkMax(61, rev.SparkLowLevel.MotorType.kBrushless)
program_sims = [rev.SparkMaxSim(wired, motor), rev.SparkMaxSim(other, motor)]
bridge_sim = rev.SparkMaxSim(wired, motor)
own(bridge_sim)
assert take_over_rev(["sparkmax:60", "pwm:0"], said.append)
assert take_over_rev(["sparkmax:60"], said.append)  # once patched, stays as it is
for sim in program_sims:
    sim.iterate(600.0, 12.0, 0.1)  # 600 rpm for 0.1 s: one rotation
    sim.iterate(600.0, 12.0, 0.1)
print("PROGRAM", wired.getEncoder().getPosition(), other.getEncoder().getPosition(), len(said))
bridge_sim.iterate(600.0, 12.0, 0.1)
print("BRIDGE", wired.getEncoder().getPosition(), said[0] if said else "")
import os
os._exit(0)
"""


def test_programs_sparksim_iterate_is_off_for_a_wired_spark_only():
    done = subprocess.run([sys.executable, "-c", REV_PROBE], capture_output=True, text=True,
                          timeout=60)
    lines = {ln.split(" ", 1)[0]: ln.split(" ", 1)[1] for ln in done.stdout.splitlines()
             if ln.startswith(("PROGRAM", "BRIDGE"))}
    assert done.returncode == 0 and len(lines) == 2, done.stdout + done.stderr
    # The program's sims: the wired SPARK did not move, the other one turned two rotations;
    # said once for the wired one.
    assert [float(x) for x in lines["PROGRAM"].split()] == pytest.approx([0.0, 2.0, 1.0])
    position, message = lines["BRIDGE"].split(" ", 1)
    assert float(position) == pytest.approx(1.0)  # the bridge's own sim runs
    assert message.startswith("REV SparkSim.iterate from the robot program is turned off for "
                              "sparkmax:60, since simserver.toml wires it")
