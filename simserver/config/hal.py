"""HAL device addresses: how a config entry names the robot program's device it maps to.

A ``hal`` key holds one address (or, for motors, a list whose outputs are averaged: motors
geared together each get their own controller). Addresses are ``kind:channel`` strings:

========== ======================================================== =======================
role       addresses                                                HAL device
========== ======================================================== =======================
motor      ``pwm:N``                                                PWM motor controller
           ``talonfx:N``                                            Phoenix 6 Talon FX (CAN id N)
           ``sparkmax:N``, ``sparkflex:N``                          REV SPARK (CAN id N)
           ``simdevice:DEVICE/VALUE``                               any SimDevice double
encoder    ``encoder:A``                                            ``wpilib.Encoder`` on DIO A
           ``talonfx:N``                                            Talon FX rotor sensor
           ``cancoder:N``                                           Phoenix 6 CANcoder
           ``sparkmax:N``, ``sparkflex:N``                          SPARK relative encoder
           ``sparkmax:N/absolute``, ``sparkflex:N/absolute``        SPARK absolute encoder
                                                                    (data port)
           ``sparkmax:N/alternate``, ``sparkflex:N/external``       SPARK MAX alternate /
                                                                    SPARK Flex external
                                                                    encoder
           ``analog:N``                                             analog input N (a
                                                                    potentiometer: 0..5 V over
                                                                    one turn)
           ``simdevice:DEVICE/VALUE``                               any SimDevice double
gyro       ``analoggyro:N``, ``adxrs450``, ``navx``, ``pigeon2:N``,   yaw gyro
           ``adis16470``, ``adis16448``, ``simdevice:DEVICE/VALUE``
solenoid   ``ctre:N``, ``rev:N``                                    solenoid channel N of a
                                                                    CTRE PCM / REV PH
switch     ``dio:N`` (reads true when pressed), ``!dio:N``          ``wpilib.DigitalInput``
           (reads false when pressed: a normally-open switch on
           the roboRIO's pull-up)
========== ======================================================== =======================

Pure parsing: the robot-side bridge (``simserver.bridge``) turns addresses into devices.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from simserver.util.untrusted import excerpt

ROLES: dict[str, tuple[str, ...]] = {
    "motor": ("pwm", "talonfx", "sparkmax", "sparkflex", "simdevice"),
    "encoder": ("encoder", "talonfx", "cancoder", "sparkmax", "sparkflex", "analog",
                "simdevice"),
    "gyro": ("analoggyro", "adxrs450", "navx", "pigeon2", "adis16470", "adis16448",
             "simdevice"),
    "solenoid": ("ctre", "rev"),
    "switch": ("dio",),
}
# Kinds that take no channel.
BARE_KINDS = {"adxrs450", "navx", "adis16470", "adis16448"}
# The encoder ports of a SPARK besides its relative encoder: ``sparkmax:N/absolute``.
SPARK_PORTS = {"sparkmax": ("absolute", "alternate"), "sparkflex": ("absolute", "external")}
# Encoders on CAN devices report shaft rotations: their config unit must be an angle.
CAN_ENCODERS = ("talonfx", "cancoder", "sparkmax", "sparkflex")
# Encoders that are a motor controller's own sensor: they turn with its motor.
INTEGRATED_SENSORS = ("talonfx", "sparkmax", "sparkflex")
# Highest channel of each kind on a roboRIO (WPILib's SensorUtil: 20 PWM, 31 DIO, analog gyros
# on the 2 accumulator inputs).
CHANNEL_MAX = {"pwm": 19, "encoder": 30, "dio": 30, "analoggyro": 1, "analog": 7, "ctre": 7,
               "rev": 15}


class HalAddressError(ValueError):
    """An address that cannot be parsed; the message says what is expected."""


@dataclass(frozen=True)
class HalAddress:
    """One HAL device: ``kind`` (``pwm``, ``talonfx``, ...), ``channel`` (PWM/DIO channel or
    CAN id; None for bare kinds and SimDevices), ``device``/``value`` for SimDevices, and
    ``inverted`` (``!dio:N``), ``port`` for a SPARK's other encoders (``absolute``, ...; ""
    for its relative encoder)."""

    kind: str
    channel: int | None = None
    device: str = ""
    value: str = ""
    inverted: bool = False
    port: str = ""

    def __str__(self) -> str:
        if self.kind == "simdevice":
            return f"simdevice:{self.device}/{self.value}"
        if self.channel is None:
            return self.kind
        port = f"/{self.port}" if self.port else ""
        return f"{'!' if self.inverted else ''}{self.kind}:{self.channel}{port}"

    @property
    def controller(self) -> str:
        """The motor controller's address of a SPARK encoder port (``sparkmax:3`` of
        ``sparkmax:3/absolute``); the address itself otherwise."""
        return f"{self.kind}:{self.channel}" if self.port else str(self)


def examples(role: str) -> str:
    """Example addresses for ``role``, for error messages and docs."""
    return ", ".join(f'"{k}:0"' if k not in BARE_KINDS and k != "simdevice" else
                     ('"simdevice:DEVICE/VALUE"' if k == "simdevice" else f'"{k}"')
                     for k in ROLES[role])


def parse(text: str, role: str) -> HalAddress:
    """Parse one address for a device of ``role`` (a key of :data:`ROLES`)."""
    kinds = ROLES[role]
    raw = text.strip()
    inverted = raw.startswith("!")
    if inverted:
        raw = raw[1:]
    kind, sep, rest = raw.partition(":")
    kind = kind.strip().lower()
    if kind not in kinds:
        hint = difflib.get_close_matches(kind, kinds, n=1)
        msg = f"unknown {role} device kind {excerpt(kind)}"
        msg += f"; did you mean {hint[0]!r}?" if hint else ""
        raise HalAddressError(f"{msg} (expected one of {examples(role)})")
    if inverted and kind != "dio":
        raise HalAddressError("'!' (inverted) applies to dio switches only")
    if kind in BARE_KINDS:
        if sep:
            raise HalAddressError(f"{kind!r} takes no channel")
        return HalAddress(kind)
    if kind == "simdevice":
        device, slash, value = rest.rpartition("/")
        if not sep or not slash or not device or not value:
            raise HalAddressError('expected "simdevice:DEVICE/VALUE", such as '
                                  '"simdevice:CANMotor:Talon FX (v6)[1]/dutyCycle"')
        return HalAddress(kind, device=device, value=value)
    rest, slash, port = rest.strip().partition("/")
    rest, port = rest.strip(), port.strip().lower()
    if slash:
        ports = SPARK_PORTS.get(kind, ()) if role == "encoder" else ()
        if port not in ports:
            raise HalAddressError(
                f"{kind}:N/{excerpt(port)[1:-1]} is not an encoder port" + (
                    f": a {kind} has " + ", ".join(f'"{kind}:N/{p}"' for p in ports) +
                    f' besides its relative encoder "{kind}:N"' if ports else ""))
    if not sep or not (rest.isascii() and rest.isdigit()):
        raise HalAddressError(f'expected "{kind}:N" with a channel number N, got '
                              f'{excerpt(text)}')
    top = CHANNEL_MAX.get(kind, 62)  # CAN ids are 0..62
    if len(rest) > 6 or int(rest) > top:
        raise HalAddressError(f"{kind} channels are 0..{top}, got {excerpt(rest)[1:-1]}")
    channel = int(rest)
    return HalAddress(kind, channel, inverted=inverted, port=port)
