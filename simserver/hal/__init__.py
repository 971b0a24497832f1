"""How HAL devices (PWM, CAN controllers, encoders, solenoids) map to simserver's motors and
sensors, shared by the RobotPy bridge and halsim_ws."""
