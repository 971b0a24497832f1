"""simserver: a headless physics server for FRC robot programs in WPILib simulation."""

__version__ = "0.1.0"
#: The distribution pip installs (the PyPI name `simserver` is an unrelated project).
DISTRIBUTION = "frc-simserver"
