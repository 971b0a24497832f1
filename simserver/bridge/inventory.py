"""Every HAL device a robot program created, as simserver's ``hal`` addresses.

One enumeration serves two readers: the bridge's start-up report of devices that
simserver.toml does not wire (:meth:`simserver.bridge.core.Bridge.unwired`) and discovery mode
(``simserver init``, :mod:`simserver.bridge.discovery`), which writes them all as JSON. Runs in
the robot process while the robot thread is between loops.

    for dev in devices():
        print(dev.label, dev.address, dev.detail)   # "PWM 2", "pwm:2", {}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wpilib.simulation import (
    AnalogGyroSim,
    AnalogInputSim,
    CTREPCMSim,
    DIOSim,
    EncoderSim,
    PWMSim,
    REVPHSim,
    SimDeviceSim,
)

from simserver.config import hal

# SimDevice name prefix -> (hal kind, role, the config table the address goes in).
SIM_DEVICES = (("CANMotor:Talon FX (v6)[", "talonfx", "motor", "a [motors.<name>] table"),
               ("SPARK MAX [", "sparkmax", "motor", "a [motors.<name>] table"),
               ("SPARK Flex [", "sparkflex", "motor", "a [motors.<name>] table"),
               ("CANGyro:Pigeon 2 (v6)[", "pigeon2", "gyro", "a [gyro] table"),
               ("navX-Sensor[", "navx", "gyro", "a [gyro] table"),
               ("Gyro:ADXRS450[", "adxrs450", "gyro", "a [gyro] table"),
               ("Gyro:ADIS16470[", "adis16470", "gyro", "a [gyro] table"),
               ("Gyro:ADIS16448[", "adis16448", "gyro", "a [gyro] table"),
               ("CANEncoder:CANcoder (v6)[", "cancoder", "encoder", "a [encoders.<name>] table"))
SOLENOID_CHANNELS = 16  # a REV PH has 16 channels, a CTRE PCM 8


@dataclass(frozen=True)
class Device:
    """One device of the robot program.

    role: "motor", "encoder", "gyro", "pneumatics" (a PCM or PH module), "switch" (a DIO
    input) or "analog" (an analog input that is not a gyro). address: its ``hal`` address.
    label: how a person names it ("PWM 2", "Encoder on DIO 0 and 1"). table: where its
    address goes ("a [motors.<name>] table"). aliases: other addresses that name the same
    device (an encoder's B channel).
    detail: what else the HAL tells (an encoder's ``channels``, ``distance_per_pulse`` and
    ``reverse``)."""

    role: str
    address: str
    label: str
    table: str
    aliases: tuple[str, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        """The report line telling where to wire it."""
        return f'{self.label}: add hal = "{self.address}" to {self.table}'


def devices() -> list[Device]:
    """Every device the program created, PWM outputs first, then encoders, gyros, SimDevices
    (CAN), pneumatics modules, DIO inputs and analog inputs."""
    out = [Device("motor", f"pwm:{ch}", f"PWM {ch}", "a [motors.<name>] table")
           for ch in range(hal.CHANNEL_MAX["pwm"] + 1) if PWMSim(ch).getInitialized()]
    encoders = encoder_sims()
    for channels, sim in encoders:
        where = " and ".join(str(c) for c in channels)
        out.append(Device("encoder", f"encoder:{channels[0]}", f"Encoder on DIO {where}",
                          "an [encoders.<name>] table",
                          tuple(f"encoder:{c}" for c in channels[1:]),
                          {"channels": channels, "distance_per_pulse": sim.getDistancePerPulse(),
                           "reverse": sim.getReverseDirection()}))
    gyros = [ch for ch in range(hal.CHANNEL_MAX["analoggyro"] + 1)
             if AnalogGyroSim(ch).getInitialized()]
    out += [Device("gyro", f"analoggyro:{ch}", f"AnalogGyro on analog {ch}", "the [gyro] table")
            for ch in gyros]
    out += [d for name in SimDeviceSim.enumerateDevices("") if (d := sim_device(name))]
    out += solenoids()
    taken = {c for channels, _ in encoders for c in channels}
    out += [Device("switch", f"dio:{ch}", f"Digital input {ch}", "a [switches.<name>] table")
            for ch in range(hal.CHANNEL_MAX["dio"] + 1)
            if ch not in taken and DIOSim(ch).getInitialized() and DIOSim(ch).getIsInput()]
    out += [Device("analog", f"analog:{ch}", f"Analog input {ch}", "an [encoders.<name>] table "
                   "(absolute = true)")
            for ch in range(hal.CHANNEL_MAX["analog"] + 1)
            if ch not in gyros and AnalogInputSim(ch).getInitialized()]
    return out


def sim_device(name: str) -> Device | None:
    """The device a CAN (or SPI) SimDevice called ``name`` is, if simserver knows its kind."""
    for prefix, kind, role, table in SIM_DEVICES:
        if name.startswith(prefix) and name.endswith("]"):
            can_id = name[len(prefix):-1]
            if not can_id.isdigit():
                return None
            address = kind if kind in hal.BARE_KINDS else f"{kind}:{can_id}"
            return Device(role, address, name, table)
    return None


def solenoids() -> list[Device]:
    """Every CTRE PCM and REV PH module the program created (role "pneumatics", address the
    solenoid kind ``ctre`` or ``rev``). The HAL does not say which solenoid channels a program
    opened, only which modules: the channels come from the program's ``wpilib.Solenoid`` /
    ``DoubleSolenoid`` objects (discovery finds those)."""
    out = []
    for module, kind in ((CTREPCMSim(0), "ctre"), (REVPHSim(1), "rev")):
        if module.getInitialized():
            out.append(Device("pneumatics", kind, f"{kind.upper()} pneumatics module",
                              "[solenoids.<name>] tables as hal = \"" + kind + ":<channel>\"",
                              detail={"module": kind}))
    return out


def encoder_sims() -> list[tuple[list[int], EncoderSim]]:
    """(DIO channels, EncoderSim) of each encoder the program created. EncoderSim finds an
    encoder by either of its channels and does not say which encoder it found, so two
    channels are told apart by writing a probe into one's max-period field and reading the
    other's (then restoring it; this runs while the robot thread is between loops)."""
    found: list[tuple[list[int], EncoderSim]] = []
    for ch in range(hal.CHANNEL_MAX["encoder"] + 1):
        try:
            sim = EncoderSim.createForChannel(ch)
        except IndexError:
            continue
        if not sim.getInitialized():
            continue
        for channels, other in found:
            if same_encoder(other, sim):
                channels.append(ch)
                break
        else:
            found.append(([ch], sim))
    return found


def same_encoder(a: EncoderSim, b: EncoderSim) -> bool:
    """Whether two EncoderSims reach the same encoder (probed through its max period)."""
    saved = a.getMaxPeriod()
    probe = saved * 2.0 + 1.0
    a.setMaxPeriod(probe)
    same = b.getMaxPeriod() == probe
    a.setMaxPeriod(saved)
    return same
