"""What the table allows: where a tapped card goes, the auto-finish line, the no-progress test.

Each reads a :class:`~forty_thieves_env.text.game.GameState` and changes nothing.

* :func:`best_place`: "tap a card and it goes to its best place: a foundation when that is safe,
  otherwise the card of its suit one rank higher, otherwise an empty column" (the scored rule
  page); a card with none of those but a legal foundation goes there.

* :func:`finish_line`: the rule page offers auto-finish "only when the stock and waste are empty
  and the remaining column cards can all reach foundations without rearranging the columns".
  Only column-to-foundation moves are tried; sending a card home never stops another from going
  (it only raises a foundation), so playing them greedily finds a finish whenever one exists.
* :func:`no_progress`: "once the stock is used up the page checks whether any card can still go
  home, and if none can it says so". It searches every position the columns and the waste can
  reach without a foundation move (column to column, waste to column) for one where a card can
  go home. The search has a node budget; past it the answer is "unknown" and nothing is said,
  so a warning is never wrong, only sometimes missing. A face-down card that can be turned up
  counts as hope: the search never reads a card the player has not seen.
"""

from __future__ import annotations

from collections import deque
from functools import cache

import numpy as np

from forty_thieves_env.engine.actions import Kind, decode
from forty_thieves_env.engine.config import config_for
from forty_thieves_env.engine.layout import Cfg
from forty_thieves_env.engine.rules import apply_action, is_safe, legal_mask
from forty_thieves_env.engine.variants import Variant
from forty_thieves_env.text.game import GameState
from forty_thieves_env.text.notation import card_text, format_move

#: Positions the no-progress search visits before it gives up (about a second).
SEARCH_NODES = 20_000


@cache
def _kinds(variant: Variant) -> np.ndarray:
    """``(n_actions,)`` the kind of every action (:class:`~forty_thieves_env.engine.actions.Kind`)."""
    cfg = config_for(variant)
    return np.array([int(decode(cfg, a)[0]) for a in range(int(cfg[Cfg.N_ACTIONS]))], dtype=np.int64)


def best_place(game: GameState, source: str) -> str:
    """The move that sends the card of ``source`` (``"w"`` or a column number) to its best place.

    A foundation when the card is safe there (no card still out could be built on it), else the
    leftmost column where it builds on a card, else the leftmost empty column, else a foundation
    all the same.

    Raises:
        ValueError: not a source, an empty one, or no legal place for its card.
    """
    src = source.strip().lower()
    if src == "w":
        if not game.waste:
            raise ValueError("the waste is empty")
        card = game.waste[-1]
    elif src.isdigit() and 1 <= int(src) <= game.variant.columns:
        column = game.columns[int(src) - 1]
        if not column:
            raise ValueError(f"column {src} is empty")
        card = column[-1]
    else:
        raise ValueError(f"{source!r} is not a source: w or a column 1..{game.variant.columns}")
    legal = {format_move(game.variant, a) for a in game.legal_actions()}
    home = f"{src}>f"
    onto = [f"{src}>{j + 1}" for j, col in enumerate(game.columns) if col]
    empty = [f"{src}>{j + 1}" for j, col in enumerate(game.columns) if not col]
    safe = home in legal and bool(is_safe(game.array, game.cfg, card))
    for move in ([home] if safe else []) + onto + empty + [home]:
        if move in legal:
            return move
    raise ValueError(f"{card_text(card)} has nowhere to go")


def stock_spent(game: GameState) -> bool:
    """Whether the stock can give no more cards: empty, and no redeal left to refill it."""
    return not game.stock and (game.redeals_left == 0 or not game.waste)


def finish_line(game: GameState) -> list[str] | None:
    """The column-to-foundation moves that bring every card home, or ``None`` when there are none.

    ``None`` too while the stock or the waste holds a card (the rule page offers auto-finish
    only when both are empty) and when the game is already won.
    """
    if game.stock or game.waste or game.is_won():
        return None
    g = game.copy()
    kinds = _kinds(g.variant)
    moves: list[str] = []
    progressed = True
    while progressed:
        progressed = False
        for a in g.legal_actions():
            if kinds[a] == Kind.COLUMN_FOUNDATION:
                moves.append(format_move(g.variant, a))
                g.apply(a)
                progressed = True
    return moves if g.is_won() else None


def no_progress(game: GameState, max_nodes: int = SEARCH_NODES) -> bool | None:
    """Whether no card can ever go home again: ``True`` (dead), ``False``, or ``None`` (unknown).

    Asked only once the stock is spent (:func:`stock_spent`); before that the stock may still
    bring the card that is needed, so the answer is ``False``. Won games are ``False``.
    """
    if game.is_won() or not stock_spent(game):
        return False
    kinds = _kinds(game.variant)
    cfg = game.cfg
    down = cfg[Cfg.OFF_DOWN] + np.arange(game.variant.columns)
    hidden = int(game.array[down].sum())
    mask = np.zeros(len(kinds), dtype=np.bool_)
    home = (Kind.COLUMN_FOUNDATION, Kind.WASTE_FOUNDATION)
    start = game.array.copy()
    seen = {start.tobytes()}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        if int(s[down].sum()) < hidden:
            # A face-down card turned up: what it is, the player cannot know, so the search
            # does not look (it could be the card that is needed): not dead.
            return False
        legal_mask(s, cfg, mask)
        actions = np.flatnonzero(mask)
        if np.isin(kinds[actions], home).any():
            return False
        for a in actions:
            if kinds[a] == Kind.STOCK:
                continue  # cannot happen with the stock spent; kept out on principle
            nxt = s.copy()
            apply_action(nxt, cfg, a)
            key = nxt.tobytes()
            if key not in seen:
                if len(seen) >= max_nodes:
                    return None
                seen.add(key)
                queue.append(nxt)
    return True
