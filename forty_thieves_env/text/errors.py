"""The errors the engine's callers see: a refused move, bad position text, a step with no game."""

from __future__ import annotations


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in the current position; the state is unchanged."""


class PositionError(ValueError):
    """Bad position text; the message names the line and the problem."""


class ResetNeededError(RuntimeError):
    """A batch (:class:`~forty_thieves_env.envs.batch.BatchGames`) stepped before its first reset.

    The Gymnasium and stable-baselines3 environments raise ``gymnasium.error.ResetNeeded``
    instead, Gymnasium's own error for a step with no episode in progress.
    """
