"""The errors the engine's callers see: a refused move and bad position text."""

from __future__ import annotations


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in the current position; the state is unchanged."""


class PositionError(ValueError):
    """Bad position text; the message names the line and the problem."""
