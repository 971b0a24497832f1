"""simserver-hdrive: an H-drive drivetrain for simserver.

Installing this package registers the drivetrain type ``hdrive`` under the ``simserver.models``
entry-point group; use it as ``[drivetrain]`` with ``type = "hdrive"``.
"""

from simserver_hdrive.drivetrain import HDRIVE, HDrive, HDriveConfig
from simserver_hdrive.model import HDriveModel, HDriveParams, WheelGroup

__all__ = ["HDRIVE", "HDrive", "HDriveConfig", "HDriveModel", "HDriveParams", "WheelGroup"]
__version__ = "0.1.0"
