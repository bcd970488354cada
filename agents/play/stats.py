"""Statistics per level, kept in one small JSON file.

The rule page's results screen shows, per level, "wins, losses, win rate and streaks", and
"fewer moves on the same deal number is a new record". :class:`LevelStats` holds those for one
level (or one variant played outside the levels); :class:`StatsFile` reads and writes them all.

A game counts once: a win when the last card goes home; a loss when the player resigns, or
abandons a deal after the first move by restarting it or starting another ("Undo alone does not
record a loss"; a game saved on quit is not abandoned).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .storage import read_json, write_json

__all__ = ["STATS_VERSION", "LevelStats", "StatsFile"]

#: The statistics file's version (a file of another version is refused, not misread).
STATS_VERSION = 1


@dataclass
class LevelStats:
    """One level's record.

    Attributes:
        wins: Games won.
        losses: Games lost (resigned or abandoned after the first move).
        streak: The current streak: ``+n`` after ``n`` wins in a row, ``-n`` after ``n`` losses.
        best_win_streak: The longest run of wins.
        worst_loss_streak: The longest run of losses.
        best_score: The highest score of a won game.
        best_moves: Per deal number (as text, a JSON key), the fewest moves it was won in.
    """

    wins: int = 0
    losses: int = 0
    streak: int = 0
    best_win_streak: int = 0
    worst_loss_streak: int = 0
    best_score: int = 0
    best_moves: dict[str, int] = field(default_factory=dict)

    @property
    def games(self) -> int:
        return self.wins + self.losses

    @property
    def win_rate(self) -> float:
        """Wins over games, 0.0 before the first game."""
        return self.wins / self.games if self.games else 0.0

    def record(self, won: bool, deal: int, moves: int, score: int) -> bool:
        """Count one game; return whether it set a new fewest-moves record for its deal."""
        if won:
            self.wins += 1
            self.streak = self.streak + 1 if self.streak > 0 else 1
            self.best_win_streak = max(self.best_win_streak, self.streak)
            self.best_score = max(self.best_score, score)
            key = str(deal)
            previous = self.best_moves.get(key)
            if previous is None or moves < previous:
                self.best_moves[key] = moves
                return True
            return False
        self.losses += 1
        self.streak = self.streak - 1 if self.streak < 0 else -1
        self.worst_loss_streak = max(self.worst_loss_streak, -self.streak)
        return False

    def summary(self) -> str:
        """One line: ``"3 won, 5 lost (37.5 %); streak: 2 won; longest: 2 won, 4 lost"``."""
        if self.streak > 0:
            current = f"{self.streak} won"
        elif self.streak < 0:
            current = f"{-self.streak} lost"
        else:
            current = "none"
        return (
            f"{self.wins} won, {self.losses} lost ({100 * self.win_rate:.1f} %); streak: {current}; "
            f"longest: {self.best_win_streak} won, {self.worst_loss_streak} lost"
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LevelStats:
        known = {k: data[k] for k in asdict(cls()) if k in data}
        out = cls(**known)
        for name in ("wins", "losses", "streak", "best_win_streak", "worst_loss_streak", "best_score"):
            if not isinstance(getattr(out, name), int):
                raise ValueError(f"{name} must be a whole number, got {getattr(out, name)!r}")
        return out


class StatsFile:
    """The statistics of every level, read from and written to ``path`` (JSON).

    Args:
        path: The file; a missing file means no games yet. ``None`` keeps them in memory only.

    Raises:
        ValueError: the file exists but is not a statistics file (it is then left as it is).
    """

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = Path(path) if path is not None else None
        self.levels: dict[str, LevelStats] = {}
        if self.path is not None and self.path.exists():
            try:
                doc = read_json(self.path, STATS_VERSION)
                self.levels = {str(k): LevelStats.from_json(v) for k, v in doc["levels"].items()}
            except (ValueError, KeyError, TypeError, AttributeError) as err:
                raise ValueError(
                    f"{self.path} is not a statistics file ({err}); move it away to start afresh"
                ) from None

    def get(self, level: str) -> LevelStats:
        """The record of ``level`` (an empty one before its first game)."""
        return self.levels.get(level, LevelStats())

    def record(self, level: str, won: bool, deal: int, moves: int, score: int) -> bool:
        """Count one game of ``level`` and write the file; return whether it set a moves record."""
        stats = self.levels.setdefault(level, LevelStats())
        new_record = stats.record(won, deal, moves, score)
        self.save()
        return new_record

    def save(self) -> None:
        """Write the file (:func:`write_json`)."""
        if self.path is None:
            return
        levels = {k: asdict(v) for k, v in sorted(self.levels.items())}
        write_json({"version": STATS_VERSION, "levels": levels}, self.path)
