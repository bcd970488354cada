"""The errors the engine's callers see: a refused move, bad position text, a step with no game."""

from __future__ import annotations


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in the current position; the state is unchanged."""


class ActionSpaceError(IllegalMoveError):
    """An action outside the action space (an integer not in ``[0, n)``): a caller's bug, refused in every
    ``illegal_action`` mode (Gymnasium envs refuse such actions), the state unchanged. An
    :class:`IllegalMoveError`, so code that catches those under ``illegal_action="raise"`` still does."""


def action_space_error(action: int, n_actions: int, variant: str, game: int | None = None) -> ActionSpaceError:
    """The error for ``action`` outside ``Discrete(n_actions)``; ``game``: its index in a batch."""
    where = "" if game is None else f"game {game}: "
    return ActionSpaceError(
        f"{where}action {action} is out of range 0..{n_actions - 1} for {variant}: outside the action space "
        f"Discrete({n_actions}) (refused in every illegal_action mode; an in-space illegal move follows the mode)"
    )


class PositionError(ValueError):
    """Bad position text; the message names the line and the problem."""


class ResetNeededError(RuntimeError):
    """A batch (:class:`~forty_thieves_env.envs.batch.BatchGames`) stepped before its first reset.

    The Gymnasium and stable-baselines3 environments raise ``gymnasium.error.ResetNeeded``
    instead, Gymnasium's own error for a step with no episode in progress.
    """
