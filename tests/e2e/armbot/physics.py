"""ArmSimulation's physics.py (robotpy/examples): WPILib's SingleJointedArmSim on the same
motor and encoder simserver simulates. With --simserver, simserver's values must win."""

import math

import wpilib
import wpilib.simulation
import wpimath.system.plant
from pyfrc.physics.core import PhysicsInterface


class PhysicsEngine:
    def __init__(self, physics_controller: PhysicsInterface, robot) -> None:
        self.physics_controller = physics_controller
        self.arm_sim = wpilib.simulation.SingleJointedArmSim(
            wpimath.system.plant.DCMotor.vex775Pro(2), 200,
            wpilib.simulation.SingleJointedArmSim.estimateMOI(0.762, 8.0), 0.762,
            math.radians(-75), math.radians(255), True, 0.0)
        self.encoder_sim = wpilib.simulation.EncoderSim(robot.encoder)
        self.motor_sim = wpilib.simulation.PWMSim(robot.motor.getChannel())

    def update_sim(self, now: float, tm_diff: float) -> None:
        self.arm_sim.setInput(0, self.motor_sim.getSpeed()
                              * wpilib.RobotController.getInputVoltage())
        self.arm_sim.update(tm_diff)
        self.encoder_sim.setDistance(self.arm_sim.getAngle())
        wpilib.simulation.RoboRioSim.setVInVoltage(
            wpilib.simulation.BatterySim.calculate([self.arm_sim.getCurrentDraw()]))
