"""simserver: a headless physics server for FRC robot programs in WPILib simulation."""

__version__ = "0.1.0"
