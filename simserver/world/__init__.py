"""The world layer: one robot (:class:`World`) or several (:mod:`simserver.world.arena`) on a
field, the drivetrain adapters between motor outputs and the pure models, and the built-in
model types."""

from simserver.world.world import ModelBuildError, World

__all__ = ["ModelBuildError", "World"]
