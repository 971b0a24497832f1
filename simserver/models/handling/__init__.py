"""Mechanisms that handle game pieces (intake, shooter) through ``robot.pieces``."""
