"""Drivetrains as the world steps them: each module adapts one pure model (``simserver.models``)
to the :class:`~simserver.models.api.Drivetrain` protocol and declares its model type (config
section, checks, the motors it consumes, the outputs it publishes).

- ``differential.py``: tank (``type = "differential"``, the default)
- ``swerve.py`` and ``mecanum.py``: the holonomic drivetrains, on ``holonomic.py``
- ``stationary.py``: the chassis of a config without ``[drivetrain]``

A new drivetrain is a new module here (or a plugin's, registered by entry point): nothing else
in simserver names a drivetrain kind.
"""
