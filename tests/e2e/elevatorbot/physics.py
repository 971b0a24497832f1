"""ElevatorSimulation's physics.py (robotpy/examples): WPILib's ElevatorSim on the same motor
and encoder simserver simulates. With --simserver, simserver's values must win."""

import wpilib
import wpilib.simulation
import wpimath.system.plant
from pyfrc.physics.core import PhysicsInterface


class PhysicsEngine:
    def __init__(self, physics_controller: PhysicsInterface, robot) -> None:
        self.elevator_sim = wpilib.simulation.ElevatorSim(
            wpimath.system.plant.DCMotor.vex775Pro(4), 10.0, 4.0, 0.0508, 0.0508, 1.27, True,
            0, [0.01, 0.0])
        self.encoder_sim = wpilib.simulation.EncoderSim(robot.encoder)
        self.motor_sim = wpilib.simulation.PWMSim(robot.motor.getChannel())

    def update_sim(self, now: float, tm_diff: float) -> None:
        self.elevator_sim.setInput(0, self.motor_sim.getSpeed()
                                   * wpilib.RobotController.getInputVoltage())
        self.elevator_sim.update(tm_diff)
        self.encoder_sim.setDistance(self.elevator_sim.getPosition())
        wpilib.simulation.RoboRioSim.setVInVoltage(
            wpilib.simulation.BatterySim.calculate([self.elevator_sim.getCurrentDraw()]))
