"""A robot with a roller intake and a beam break, for the beam-break tests. Autonomous: run
the roller inward until the beam break (DIO 2, true when broken) sees a piece, hold it 0.5 s,
then run the roller outward. DIO 3 is the same beam break wired normally closed (false when
broken). One JSON line per enabled period to $HANDLERBOT_LOG: robot time s, both inputs, the
roller duty."""

import json
import os

import wpilib


class Robot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.roller = wpilib.PWMSparkMax(0)
        self.beam = wpilib.DigitalInput(2)
        self.beam_nc = wpilib.DigitalInput(3)
        self.timer = wpilib.Timer()
        self.seen_at: float | None = None
        path = os.environ.get("HANDLERBOT_LOG")
        self.log = open(path, "w", encoding="utf-8") if path else None  # noqa: SIM115

    def autonomousInit(self) -> None:
        self.timer.restart()
        self.seen_at = None

    def autonomousPeriodic(self) -> None:
        broken = self.beam.get()
        if broken and self.seen_at is None:
            self.seen_at = self.timer.get()
        if self.seen_at is None or self.timer.get() < self.seen_at + 0.5:
            duty = 0.0 if self.seen_at is not None else 0.8
        else:
            duty = -0.8
        self.roller.set(duty)
        if self.log is not None:
            self.log.write(json.dumps({"t": wpilib.Timer.getFPGATimestamp(), "beam": broken,
                                       "beam_nc": self.beam_nc.get(), "duty": duty}) + "\n")
            self.log.flush()

    def disabledInit(self) -> None:
        self.roller.set(0.0)
