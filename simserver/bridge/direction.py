"""The missing-``inverted`` check: an encoder that counts against the way robot code drives.

Robot code that inverts a PWM motor controller (``setInverted(True)``) sends a negative PWM
output to drive that motor forward; simserver only sees the PWM output, so without
``inverted = true`` on the motor in simserver.toml it turns the motor the wrong way (the robot
spins or backs into the wall). A reversed ``wpilib.Encoder`` without ``inverted = true`` on the
encoder does the same to readings. Both show from inside the program: while robot code drives a
motor forward, the encoder it reads counts backwards.

During the first seconds of motion (while enabled), for each quadrature encoder whose motor is
on PWM, the bridge compares the direction robot code commands the motor (the leader's PWM
output, un-inverted as the program's controller object says) with the sign of the rate the
program reads. Motion counts where the command is at least ``MIN_DUTY`` and the rate is not
zero; after ``DECIDE_AFTER`` such loops, if at least ``AGAINST_SHARE`` of them disagree, it
warns once, naming the keys to check.
"""

from __future__ import annotations

from dataclasses import dataclass

import wpilib
from wpilib.simulation import EncoderSim, PWMSim

from simserver.bridge.discovery import the_robot, walk
from simserver.config.model import Config

MIN_DUTY = 0.3  # |duty| below this may be held against gravity or friction: not counted
DECIDE_AFTER = 25  # loops of motion (0.5 s at 20 ms) before judging an encoder
AGAINST_SHARE = 0.8


@dataclass
class _Pair:
    encoder: str
    motor: str
    pwm: int
    encoder_channel: int
    motor_inverted: bool  # `inverted` of the motor in simserver.toml
    inverted_in_code: bool = False
    against: int = 0
    seen: int = 0


class DirectionWatch:
    """Call :meth:`start` once after robotInit, then :meth:`periodic` every loop; warnings go
    to ``warnings``."""

    def __init__(self, cfg: Config):
        self.pairs: list[_Pair] = []
        for name, enc in cfg.encoders.items():
            motor = cfg.motors.get(enc.motor) if enc.motor else None
            if not enc.hal or enc.hal[0].kind != "encoder" or motor is None or not motor.hal:
                continue
            if motor.hal[0].kind == "pwm":
                self.pairs.append(_Pair(name, str(enc.motor), motor.hal[0].channel or 0,
                                        enc.hal[0].channel or 0, motor.inverted))
        self.warnings: list[str] = []
        self._sims: dict[str, EncoderSim] = {}

    def start(self) -> None:
        """Learn which PWM controllers robot code inverts (the controller objects reachable
        from its robot object; pybind11 objects are not on the garbage collector's list)."""
        robot = the_robot()
        found = walk(robot, "robot") if robot is not None else iter(())
        inverted = {ctrl.getChannel(): ctrl.getInverted() for _, ctrl in found
                    if isinstance(ctrl, wpilib.PWMMotorController)}
        for pair in self.pairs:
            pair.inverted_in_code = inverted.get(pair.pwm, False)

    def periodic(self) -> None:
        """One enabled loop: sample every undecided pair."""
        for pair in list(self.pairs):
            intent = PWMSim(pair.pwm).getSpeed() * (-1.0 if pair.inverted_in_code else 1.0)
            sim = self._encoder(pair)
            rate = sim.getRate() if sim is not None else 0.0
            if abs(intent) < MIN_DUTY or rate == 0.0:
                continue
            pair.seen += 1
            pair.against += (intent > 0) != (rate > 0)
            if pair.seen >= DECIDE_AFTER:
                self.pairs.remove(pair)
                if pair.against >= AGAINST_SHARE * pair.seen:
                    self.warnings.append(self._message(pair))

    def _encoder(self, pair: _Pair) -> EncoderSim | None:
        sim = self._sims.get(pair.encoder)
        if sim is None:
            try:
                sim = self._sims[pair.encoder] = EncoderSim.createForChannel(
                    pair.encoder_channel)
            except IndexError:
                return None
        return sim

    @staticmethod
    def _message(pair: _Pair) -> str:
        seen = (f"encoders.{pair.encoder} counts backwards while robot code drives "
                f"motors.{pair.motor} forward ({pair.against} of {pair.seen} loops of motion)")
        if pair.motor_inverted != pair.inverted_in_code:
            fix = (f"set `inverted = {str(pair.inverted_in_code).lower()}` in "
                   f"[motors.{pair.motor}]: robot.py "
                   f"{'inverts' if pair.inverted_in_code else 'does not invert'} the "
                   f"controller on PWM {pair.pwm}, and `inverted` must say the same")
        else:
            fix = (f"the motor's `inverted` matches robot.py, so the encoder reads backwards: "
                   f"set `inverted = true` in [encoders.{pair.encoder}] (or false, if set), "
                   "as the encoder counts on the robot")
        return f"{seen}: {fix}; until then the robot moves unlike it would on the carpet"
