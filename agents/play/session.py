"""One player's game: moves in notation, undo, restart, new deals, hints, score, save and resume.

:class:`PlaySession` is everything ``forty-thieves play`` does except drawing, so it is tested
without a terminal. The rule pages (``shared/rules``) fix the behaviour:

* **Moves** are move text (``3>7``, ``w>f``, ``s``, ``3>7x2``), or a tap (:meth:`PlaySession.tap`:
  a card to its best place). A refused move raises :class:`PlayError` saying why and changes
  nothing (not the table, the move count, the clock or the undo history).
* **Undo** is unlimited, back to the deal, but not after a win; "an undo counts as a move" and
  "undoing a move takes its points back" (the scored page; another page restores the move count
  instead, the scored page is followed because the score line and levels come from it).
  Undo never rewinds the clock.
* **Score line**: moves, time and score. Score = ``10`` per card on the foundations, minus ``30``
  per whole ``30`` s of play, never below ``0``; on a win ``600000 / seconds`` is added. It is a
  function of the cards home and the clock, so an undo takes a move's points back by itself.
* **Restart** and **new deal** reset the moves and the clock; after the first move of an
  unfinished deal they record the attempt as a loss at its level (undo alone does not).
* **Auto-play safe cards** (an option): after each move, cards that no card still out could be
  built on go home as part of the move (the engine's ``auto_play``; undone with the move).
* **Auto-finish** is offered (:meth:`PlaySession.finish_offered`) only when the stock and waste
  are empty and the column cards can all go home without rearranging the columns; finishing is
  one move.
* **No-progress warning**: once the stock is spent, if no card can ever go home again
  (:func:`~.progress.no_progress`), :meth:`PlaySession.warning` says so and offers undo, resign
  or replay.
* **Hints** come from the heuristic agent (or the lookahead) given only the player's view: the
  env's ``Dict`` observation, which hides the stock order and face-down cards.
* **Pause** stops the clock and refuses moves until resume.
* **Save and resume**: :meth:`PlaySession.save` writes the deal, the options, the clock, the
  counters and the undo history as moves; :meth:`PlaySession.load` replays them, so undo works
  after a resume. Time away does not count. The file's format is :mod:`.saves`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from forty_thieves_env.engine.deals import check_deal_number
from forty_thieves_env.engine.rules import auto_play
from forty_thieves_env.engine.variants import Variant
from forty_thieves_env.envs.levels import Level
from forty_thieves_env.envs.observation import ObservationEncoder
from forty_thieves_env.text.explain import why_illegal
from forty_thieves_env.text.game import GameState, deal, parse_position
from forty_thieves_env.text.notation import format_move, parse_move

from .progress import best_place, finish_line, no_progress
from .results import results_card, results_text
from .saves import SAVE_VERSION, resume, save_document
from .score import clock_text, score_of
from .setup import Setup
from .stats import StatsFile
from .storage import write_json

__all__ = ["SAVE_VERSION", "Entry", "PlayError", "PlaySession"]

#: Random deals are drawn from 1..DEAL_MAX (PySolFC numbers; any number up to 10**20 can be asked for).
DEAL_MAX = 2**31 - 1


class PlayError(ValueError):
    """A refused request: the message says why; the session is unchanged."""


@dataclass
class Entry:
    """One undoable action: the moves it played and the state before it.

    Attributes:
        moves: Move text, one item for a player's move, several for an auto-finish.
        auto: Whether safe cards were auto-played after each of the moves.
        before: The state array before the action (what undo restores).
    """

    moves: list[str]
    auto: bool
    before: np.ndarray


class PlaySession:
    """A game in progress, with its history, clock and options (see the module docstring).

    Args:
        level: ``"easy"``, ``"normal"`` or ``"hard"`` (the rules and deal pool of the rule page);
            or ``None`` to play ``variant``.
        variant: A preset name or :class:`~forty_thieves_env.engine.variants.Variant` (only
            without ``level``); with neither, classic (which is Hard).
        deal: The deal number, or ``None`` for a random one from the pool.
        winnable_only: Deal only proven-winnable deals (Easy always does).
        auto_play: Send safe cards home after each move.
        stats: Where wins and losses are recorded (``None``: nowhere).
        hint_agent: ``"heuristic"`` or ``"lookahead"``.
        clock: Seconds from any fixed origin (``time.monotonic``; tests pass a fake).
        seed: Seeds the random deal draws.
        position: Start from this position (text or a ``GameState`` of the rules in force)
            instead of a deal, to practise it; its deal number is 0 and it cannot be shared.

    Raises:
        ValueError: an unknown level or variant, both given, a bad deal number, or a deal
            outside a winnable-only pool.
    """

    def __init__(
        self,
        level: str | Level | None = None,
        variant: str | Variant | None = None,
        *,
        deal: int | None = None,
        winnable_only: bool = False,
        auto_play: bool = False,
        stats: StatsFile | None = None,
        hint_agent: str = "heuristic",
        clock: Callable[[], float] = time.monotonic,
        seed: int | None = None,
        position: str | GameState | None = None,
    ) -> None:
        if hint_agent not in ("heuristic", "lookahead"):
            raise ValueError(f"hint_agent must be heuristic or lookahead, got {hint_agent!r}")
        self.setup = Setup.of(level, variant, winnable_only)
        self.variant: Variant = self.setup.variant
        self.winnable_only = self.setup.winnable_only
        self.level: Level | None = self.setup.level
        self.auto_play = bool(auto_play)
        self.stats = stats if stats is not None else StatsFile(None)
        self.hint_agent = hint_agent
        self._clock = clock
        self._rng = np.random.default_rng(seed)
        self._pool = self.setup.pool()
        self._agent: Any = None
        self._encoder = ObservationEncoder(self.variant, "dict")
        self._progress_cache: tuple[bytes, bool | None] | None = None
        self._position: GameState | None = None
        if position is not None:
            if deal is not None:
                raise ValueError("give a deal or a position, not both")
            self._position = parse_position(position) if isinstance(position, str) else position.copy()
            if self._position.variant != self.variant:
                raise ValueError(f"the position is a {self._position.variant} position, not {self.variant}")
            self._start(0)
        else:
            self._start(self._check_deal(deal) if deal is not None else self._draw_deal())

    # ----- set-up -----------------------------------------------------------------------
    def _draw_deal(self) -> int:
        if self._pool is not None:
            return int(self._pool[self._rng.integers(len(self._pool))])
        return int(self._rng.integers(1, DEAL_MAX, endpoint=True))

    def _check_deal(self, number: int) -> int:
        try:
            number = check_deal_number(number)
        except (ValueError, TypeError) as err:
            raise PlayError(str(err)) from None
        if self._pool is not None and number not in set(self._pool.tolist()):
            raise PlayError(
                f"deal {number} is not one the solver proved winnable, and {self.label} deals only those "
                f"(for example {int(self._pool[0])}); play it on another level"
            )
        return number

    def _start(self, number: int) -> None:
        """Lay out deal ``number``: a fresh table, history, counters and clock."""
        self.deal = number
        self.game: GameState = self._position.copy() if number == 0 and self._position else deal(self.variant, number)
        self.history: list[Entry] = []
        self.moves = 0  # moves played plus undos (the scored page counts an undo as a move)
        self.undos = 0
        self.hints = 0
        self.started = False  # a move was made: abandoning the deal now counts as a loss
        self.result: str | None = None  # "won" or "resigned" once the game is over
        self.new_record = False
        self._elapsed = 0.0
        self._since: float | None = self._clock()
        self._progress_cache = None
        self._home_at_start = self.game.cards_on_foundations

    # ----- what a player reads ------------------------------------------------------------
    @property
    def label(self) -> str:
        """The statistics key (:attr:`~.setup.Setup.label`)."""
        return self.setup.label

    @property
    def paused(self) -> bool:
        return self._since is None and self.result is None

    @property
    def over(self) -> bool:
        return self.result is not None

    @property
    def won(self) -> bool:
        return self.result == "won"

    @property
    def elapsed(self) -> float:
        """Seconds of play: the clock stops while paused and when the game is over."""
        if self._since is None:
            return self._elapsed
        return self._elapsed + max(0.0, self._clock() - self._since)

    @property
    def score(self) -> int:
        """The score line's score: only cards sent home in this game score (a practised position
        may start with cards on the foundations)."""
        return score_of(self.game.cards_on_foundations - self._home_at_start, self.elapsed, self.won)

    def score_line(self) -> str:
        """``"Moves 12   Time 1:05   Score 40"``."""
        return f"Moves {self.moves}   Time {clock_text(self.elapsed)}   Score {self.score}"

    def finish_offered(self) -> bool:
        """Whether auto-finish may be offered now (see :func:`~.progress.finish_line`)."""
        return not self.over and finish_line(self.game) is not None

    def dead(self) -> bool:
        """Whether the stock is spent and no card can ever go home again (cached per position)."""
        if self.over:
            return False
        key = self.game.array.tobytes()
        if self._progress_cache is None or self._progress_cache[0] != key:
            self._progress_cache = (key, no_progress(self.game))
        return self._progress_cache[1] is True

    def warning(self) -> str | None:
        """The no-progress warning, or ``None``."""
        if not self.dead():
            return None
        what = "no legal move is left" if self.game.is_stuck() else "no card can ever go home again"
        return f"The stock is spent and {what}: undo, resign or replay the deal."

    def legal_moves(self) -> list[str]:
        """The legal moves now, as move text."""
        return [format_move(self.variant, a) for a in self.game.legal_actions()]

    # ----- actions ------------------------------------------------------------------------
    def _check_live(self, what: str) -> None:
        if self.won:
            raise PlayError(f"the deal is won: no {what}; start a new deal or replay this one")
        if self.result == "resigned":
            raise PlayError(f"you resigned this deal: no {what}; start a new deal or replay this one")
        if self.paused:
            raise PlayError(f"the game is paused: resume it first (no {what} while paused)")

    def _apply(self, moves: list[str], auto: bool) -> int:
        """Play ``moves`` as one undoable action (legality checked first); return cards sent home."""
        before = self.game.array.copy()
        home = 0
        for move in moves:
            home += self.game.play(move)
            if auto:
                home += int(auto_play(self.game.array, self.game.cfg))
        self.history.append(Entry(list(moves), auto, before))
        self.moves += 1
        self.started = True
        if self.game.is_won():
            self._end("won")
        return home

    def play(self, text: str) -> str:
        """Play one move given as text; return what happened.

        Raises:
            PlayError: not a move, an illegal move (the message says why), or no play now.
        """
        self._check_live("moves")
        try:
            action = parse_move(self.variant, text)
        except ValueError as err:
            raise PlayError(str(err)) from None
        move = format_move(self.variant, action)
        reason = why_illegal(self.game.array, self.game.cfg, action)
        if reason:
            raise PlayError(f"{move} is refused: {reason}")
        home = self._apply([move], self.auto_play)
        said = f"played {move}" + (f", {home} card(s) home" if home else "")
        return said + (". " + self.results_text() if self.won else "")

    def tap(self, source: str) -> str:
        """Send a card (``"w"`` or a column number) to its best place (:func:`~.progress.best_place`).

        Raises:
            PlayError: no such source, an empty one, or no legal place for its card.
        """
        self._check_live("moves")
        try:
            move = best_place(self.game, source)
        except ValueError as err:
            raise PlayError(str(err)) from None
        return self.play(move)

    def undo(self) -> str:
        """Take back the last action (its points go with it; the clock runs on).

        Raises:
            PlayError: nothing to undo, the game is won or resigned, or paused.
        """
        self._check_live("undo")
        if not self.history:
            raise PlayError("nothing to undo: this is the deal as dealt")
        entry = self.history.pop()
        self.game.restore(entry.before)
        self.moves += 1
        self.undos += 1
        return f"undid {' '.join(entry.moves)}"

    def finish(self) -> str:
        """Play every remaining card home as one move, when auto-finish is offered.

        Raises:
            PlayError: auto-finish is not offered here (the message says why).
        """
        self._check_live("finish")
        line = finish_line(self.game)
        if line is None:
            if self.game.stock or self.game.waste:
                raise PlayError("auto-finish needs the stock and the waste empty")
            raise PlayError("auto-finish needs every column card to reach home without rearranging the columns")
        self._apply(line, False)
        return f"finished: {len(line)} cards home. " + self.results_text()

    def resign(self) -> str:
        """Give the deal up: it counts as a loss."""
        if self.over:
            raise PlayError("the game is already over")
        self._end("resigned")
        return f"resigned deal {self.deal}: recorded as a loss. " + self.stats.get(self.label).summary()

    def _abandon(self) -> str:
        """Record a started, unfinished attempt as a loss before it is thrown away."""
        if self.started and not self.over:
            self._end("abandoned")
            return "the unfinished deal counts as a loss; "
        return ""

    def restart(self) -> str:
        """Lay the same deal out again (moves and clock reset)."""
        note = self._abandon()
        self._start(self.deal)
        return f"{note}deal {self.deal} restarted"

    def new_game(self, number: int | None = None) -> str:
        """Start deal ``number`` (a random one from the level's pool when ``None``).

        Raises:
            PlayError: a bad deal number or one outside a winnable-only pool (nothing changes).
        """
        number = self._check_deal(number) if number is not None else self._draw_deal()
        note = self._abandon()
        self._position = None
        self._start(number)
        return f"{note}deal {number}"

    def pause(self) -> str:
        if self.over or self.paused:
            raise PlayError("nothing to pause: " + ("the game is over" if self.over else "already paused"))
        self._elapsed = self.elapsed
        self._since = None
        return "paused: the clock is stopped; resume to go on"

    def resume(self) -> str:
        if not self.paused:
            raise PlayError("the game is not paused")
        self._since = self._clock()
        return "resumed"

    def set_auto_play(self, on: bool) -> str:
        self.auto_play = bool(on)
        return f"auto-play of safe cards {'on' if on else 'off'}"

    def hint(self) -> str:
        """The move the heuristic (or lookahead) would play, from the player's view only.

        Raises:
            PlayError: no move to hint (game over, paused, or no legal move).
        """
        self._check_live("hint")
        mask = self.game.legal_mask()
        if not mask.any():
            raise PlayError("there is no legal move to hint: undo, resign or replay")
        if self._agent is None:
            from agents.players.base import make_agent

            self._agent = make_agent(self.hint_agent, self.variant, seed=0)
        self._agent.reset(seed=0)
        move = format_move(self.variant, self._agent.act(self._encoder(self.game.array), mask))
        self.hints += 1
        return move

    def share(self) -> str:
        """The command line that lays this deal out again with the same rules.

        Raises:
            PlayError: the game started from a position, not a numbered deal.
        """
        if self.deal == 0:
            raise PlayError("this game started from a position, not a numbered deal: share the position text")
        return self.setup.command_line(self.deal)

    # ----- the end of a game -----------------------------------------------------------------
    def _end(self, how: str) -> None:
        self._elapsed = self.elapsed
        self._since = None
        won = how == "won"
        self.new_record = self.stats.record(self.label, won, self.deal, self.moves, self.score if won else 0)
        if how != "abandoned":
            self.result = how

    def results(self) -> dict[str, Any]:
        """The results card's figures (:func:`~.results.results_card`)."""
        return results_card(self)

    def results_text(self) -> str:
        """The results card as text (:func:`~.results.results_text`)."""
        return results_text(self)

    # ----- save and resume (the file: :mod:`.saves`) ------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The saved game (see :meth:`save`)."""
        return save_document(self, self._position)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the game in progress to ``path`` (JSON; through a temporary file).

        Raises:
            PlayError: the game is over (nothing to resume).
        """
        if self.over:
            raise PlayError("the game is over: there is nothing to save")
        return write_json(self.to_json(), path)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        stats: StatsFile | None = None,
        clock: Callable[[], float] = time.monotonic,
        seed: int | None = None,
    ) -> PlaySession:
        """Resume a saved game, its undo history replayed; the clock goes on from the saved time
        (:func:`~.saves.resume`).

        Raises:
            ValueError: not a save file, another version, or moves that do not replay to the
                saved position (the file is left as it is).
        """
        return resume(cls, path, stats=stats, clock=clock, seed=seed)
