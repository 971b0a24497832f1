"""simserver-intake: a roller intake mechanism model for simserver.

Installing this package registers the model type ``roller_intake`` under the
``simserver.models`` entry-point group; use it as ``[mechanisms.<name>]`` with
``type = "roller_intake"``.
"""

from simserver_intake.model import INTAKE, Intake, IntakeConfig, PieceStart

__all__ = ["INTAKE", "Intake", "IntakeConfig", "PieceStart"]
__version__ = "0.1.0"
