"""A test program with a bit of everything `simserver init` lists: a wpilib.drive
DifferentialDrive on PWM Victor SPX controllers (motor objects kept only by the drive object's
caller in a list), a Talon FX and a CANcoder (Phoenix 6) on a wrist, a Pigeon 2, a double
solenoid and a solenoid on a CTRE PCM, a limit switch and a potentiometer."""

import phoenix6.hardware
import wpilib
import wpilib.drive


class MyRobot(wpilib.TimedRobot):
    def robotInit(self) -> None:
        self.sideMotors = [wpilib.PWMVictorSPX(0), wpilib.PWMVictorSPX(1)]
        self.sideMotors[1].setInverted(True)
        self.robotDrive = wpilib.drive.DifferentialDrive(self.sideMotors[0], self.sideMotors[1])
        self.wristMotor = phoenix6.hardware.TalonFX(5)
        self.wristEncoder = phoenix6.hardware.CANcoder(6)
        self.pigeon = phoenix6.hardware.Pigeon2(7)
        self.claw = wpilib.DoubleSolenoid(wpilib.PneumaticsModuleType.CTREPCM, 0, 1)
        self.shifter = wpilib.Solenoid(wpilib.PneumaticsModuleType.CTREPCM, 2)
        self.wristLimit = wpilib.DigitalInput(9)
        self.wristPot = wpilib.AnalogPotentiometer(1, 270.0)

    def teleopPeriodic(self) -> None:
        self.robotDrive.arcadeDrive(0.0, 0.0)
