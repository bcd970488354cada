"""The results card at the end of a game: moves, time, score, undos, hints, the record, the level's statistics.

"The results card records moves, time, undos and hints, and fewer moves on the same deal number
is a new record"; "the results screen shows your moves, time and score, with your statistics for
that level: wins, losses, win rate and streaks" (the rule pages).
"""

from __future__ import annotations

from typing import Any, Protocol

from .score import clock_text

__all__ = ["results_card", "results_text"]


class PlayedGame(Protocol):
    """What the card reads of a :class:`~.session.PlaySession` (named here, not imported: the
    session imports this module)."""

    deal: int | None
    label: str
    result: str | None
    game: Any
    moves: int
    elapsed: float
    score: int
    undos: int
    hints: int
    new_record: bool
    stats: Any
    won: bool


def results_card(session: PlayedGame) -> dict[str, Any]:
    """The card's figures (also while the game is in progress: ``result`` says so)."""
    st = session.stats.get(session.label)
    return {
        "deal": session.deal,
        "level": session.label,
        "result": session.result or "in progress",
        "cards_home": session.game.cards_on_foundations,
        "moves": session.moves,
        "seconds": round(session.elapsed, 1),
        "score": session.score,
        "undos": session.undos,
        "hints": session.hints,
        "new_record": session.new_record,
        "wins": st.wins,
        "losses": st.losses,
        "win_rate": st.win_rate,
        "streak": st.streak,
        "best_win_streak": st.best_win_streak,
        "worst_loss_streak": st.worst_loss_streak,
    }


def results_text(session: PlayedGame) -> str:
    """The card as lines of text."""
    r = results_card(session)
    lines = [
        "You won!" if session.won else f"Deal {session.deal}: {r['result']}.",
        f"Cards home {r['cards_home']} · moves {r['moves']} · time {clock_text(r['seconds'])} · score {r['score']} "
        f"· undos {r['undos']} · hints {r['hints']}",
    ]
    if r["new_record"]:
        lines.append("New record for this deal: fewest moves yet!")
    lines.append(f"{session.label}: {session.stats.get(session.label).summary()}")
    return "\n".join(lines)
