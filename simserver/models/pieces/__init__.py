"""Game pieces as pure physics: what a piece is (:mod:`.types`), pieces on the carpet and their
contacts (:mod:`.floor`), pieces in flight (:mod:`.flight`) and the goals they enter
(:mod:`.goals`). The world connects them to robots (:mod:`simserver.world.pieces`); the season
data (piece types, starting layouts, goals, stations) lives in :mod:`simserver.field.gamepieces`.
"""
