"""The score line of the scored rule page: points for cards home, a clock penalty, a win bonus.

"Every card played to a foundation scores 10 points. Every 30 seconds of play costs 30 points,
although your score never drops below zero. When you win, a time bonus of 600,000 divided by
the seconds you took is added. Undoing a move takes its points back."

:func:`score_of` is a function of the cards sent home and the seconds played, so undoing a move
takes its points back by itself; "never below zero" applies to the points less the penalty.
"""

from __future__ import annotations

__all__ = ["PENALTY", "PENALTY_SECONDS", "POINTS_PER_CARD", "WIN_BONUS", "clock_text", "score_of"]

POINTS_PER_CARD = 10
PENALTY = 30  # points lost ...
PENALTY_SECONDS = 30  # ... per this many whole seconds of play
WIN_BONUS = 600_000  # divided by the seconds taken (at least one)


def score_of(cards_home: int, seconds: float, won: bool) -> int:
    """The score for ``cards_home`` cards sent home in ``seconds`` of play (and the bonus on a win)."""
    penalty = PENALTY * int(seconds // PENALTY_SECONDS)
    score = max(0, POINTS_PER_CARD * cards_home - penalty)
    if won:
        score += int(WIN_BONUS / max(seconds, 1.0))
    return score


def clock_text(seconds: float) -> str:
    """``"1:05"``: whole minutes and seconds."""
    t = int(seconds)
    return f"{t // 60}:{t % 60:02d}"
