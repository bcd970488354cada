"""A slow, plain reference implementation of the Forty Thieves family, for checking the engine.

Written from the rule pages and the :class:`~forty_thieves_env.engine.variants.Variant` docstring, not
from :mod:`forty_thieves_env.engine.rules`: it never calls the engine's kernels and keeps the game in
readable structures instead of a flat array.

* ``columns``: one list of card texts per column (``"TS"``), bottom first;
* ``face_down``: how many cards at the bottom of each column lie face down;
* ``stock``: the next card to turn first; ``waste``: bottom first, the playable top last;
* ``foundations``: for each suit letter the heights of its two piles (0 = empty, 13 = done).

The only things taken from the package are the Variant fields (the options in force) and, in
:meth:`RefGame.from_state`, the decoded lists of a GameState, to start from the same position.

One choice the rules leave open is made here the way the engine makes it: auto-play
(``auto_play_safe``) looks at the waste and then the columns left to right, sends home each
safe card it sees, and repeats until a whole pass sends nothing. The order only matters when
both copies of a card are safe and only one pile can take one (possible with
``build="alternate"``, whose safety test ignores the card's own suit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from forty_thieves_env.engine.variants import Variant
from forty_thieves_env.envs.observation import FACE_DOWN, NO_CARD

RANKS = "A23456789TJQK"
SUITS = "CSHD"  # the engine's code order: code = suit index * 13 + rank index


def rank(card: str) -> int:
    """1 (ace) .. 13 (king)."""
    return RANKS.index(card[0]) + 1


def suit(card: str) -> str:
    return card[1]


def is_red(card: str) -> bool:
    return suit(card) in "HD"


def from_code(code: int) -> str:
    """Card text of an engine card code."""
    return RANKS[code % 13] + SUITS[code // 13]


def to_code(card: str) -> int:
    return SUITS.index(suit(card)) * 13 + rank(card) - 1


@dataclass
class RefGame:
    """One game in plain lists; see the module docstring for the fields."""

    variant: Variant
    columns: list[list[str]]
    face_down: list[int]
    stock: list[str]
    waste: list[str]
    foundations: dict[str, list[int]] = field(default_factory=lambda: {s: [0, 0] for s in SUITS})
    redeals_left: int = 0

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_state(cls, state) -> RefGame:
        """The same position as an engine GameState (read through its decoding properties)."""
        heights = state.foundations
        return cls(
            variant=state.variant,
            columns=[[from_code(c) for c in col] for col in state.columns],
            face_down=list(state.face_down),
            stock=[from_code(c) for c in state.stock],
            waste=[from_code(c) for c in state.waste],
            foundations={s: [heights[2 * i], heights[2 * i + 1]] for i, s in enumerate(SUITS)},
            redeals_left=state.redeals_left,
        )

    @classmethod
    def deal(cls, variant: Variant, pack: list[int]) -> RefGame:
        """Deal a shuffled pack (card codes, *top of the pack last*) as the rule pages say.

        Cards come off the top one per column, left to right, a whole row per pass; the rows
        dealt first are the bottom ones (and the face-down ones). The rest is the stock, the
        next card of the pack being the next to turn.
        """
        cards = [from_code(c) for c in reversed(list(pack))]  # top of the pack first
        n = variant.columns
        columns: list[list[str]] = [[] for _ in range(n)]
        for row in range(variant.cards_per_column):
            for col in range(n):
                columns[col].append(cards[row * n + col])
        game = cls(
            variant=variant,
            columns=columns,
            face_down=[variant.face_down] * n,
            stock=cards[n * variant.cards_per_column :],
            waste=[],
            redeals_left=variant.redeals,
        )
        if variant.auto_play_safe:
            game.auto_play()
        return game

    def copy(self) -> RefGame:
        return RefGame(
            self.variant,
            [list(c) for c in self.columns],
            list(self.face_down),
            list(self.stock),
            list(self.waste),
            {s: list(p) for s, p in self.foundations.items()},
            self.redeals_left,
        )

    def key(self) -> tuple:
        """Everything that makes up the position; piles of a suit are unordered."""
        return (
            tuple(tuple(c) for c in self.columns),
            tuple(self.face_down),
            tuple(self.stock),
            tuple(self.waste),
            tuple(tuple(sorted(self.foundations[s], reverse=True)) for s in SUITS),
            self.redeals_left,
        )

    # ----------------------------------------------------------------------- rules
    def goes_on(self, card: str, target: str) -> bool:
        """Whether ``card`` may be built on ``target`` in a column: one rank lower, and in suit
        (``build="suit"``) or in the other colour (``"alternate"``). No wrapping: nothing is one
        rank lower than an ace, and a king is one rank lower than nothing."""
        if rank(card) != rank(target) - 1:
            return False
        if self.variant.build == "suit":
            return suit(card) == suit(target)
        return is_red(card) != is_red(target)

    def home_pile(self, card: str) -> int | None:
        """Index (0 or 1) of a pile of the card's suit that takes it now, else None."""
        for p, height in enumerate(self.foundations[suit(card)]):
            if height == rank(card) - 1:
                return p
        return None

    def copies_home(self, card_rank: int, card_suit: str) -> int:
        """How many copies of a card are on the foundations (a pile holds ace..height)."""
        return sum(h >= card_rank for h in self.foundations[card_suit])

    def is_safe(self, card: str) -> bool:
        """Safe to auto-play: it can go home now and every card that could ever be built on it
        in a column (both copies of each) is home already. Aces are always safe."""
        if self.home_pile(card) is None:
            return False
        if rank(card) == 1:
            return True
        # The suits whose rank r - 1 could be built on the card.
        builders = [suit(card)] if self.variant.build == "suit" else [s for s in SUITS if (s in "HD") != is_red(card)]
        return all(self.copies_home(rank(card) - 1, s) == 2 for s in builders)

    def run_at_end(self, i: int) -> int:
        """How many face-up cards at the end of column ``i`` form a run by the build rule."""
        col = self.columns[i]
        if not col:
            return 0
        k = 1
        while len(col) - k - 1 >= self.face_down[i] and self.goes_on(col[-k], col[-k - 1]):
            k += 1
        return k

    def most_cards(self, dst_empty: bool) -> int:
        """How many cards one move may carry to a destination column."""
        if self.variant.run_moves == "none":
            return 1
        if self.variant.run_moves == "free":
            return 13
        # Supermove: what single-card moves through the spare empty columns could do.
        spare = sum(not c for c in self.columns) - (1 if dst_empty else 0)
        return 2**spare

    def legal_moves(self) -> set[str]:
        """Every legal move as text (``s``, ``w>f``, ``w>3``, ``3>f``, ``3>7``, ``3>7x2``)."""
        moves: set[str] = set()
        if self.stock or (self.redeals_left > 0 and self.waste):
            moves.add("s")
        if self.waste:
            top = self.waste[-1]
            if self.home_pile(top) is not None:
                moves.add("w>f")
            for j, dst in enumerate(self.columns):
                if not dst or self.goes_on(top, dst[-1]):
                    moves.add(f"w>{j + 1}")
        for i, src in enumerate(self.columns):
            if not src:
                continue
            if self.home_pile(src[-1]) is not None:
                moves.add(f"{i + 1}>f")
            run = self.run_at_end(i)
            for j, dst in enumerate(self.columns):
                if j == i:
                    continue
                for k in range(1, min(run, self.most_cards(not dst)) + 1):
                    if not dst or self.goes_on(src[-k], dst[-1]):
                        moves.add(f"{i + 1}>{j + 1}" + (f"x{k}" if k > 1 else ""))
        return moves

    # ---------------------------------------------------------------------- moving
    def _take_from_column(self, i: int, k: int) -> list[str]:
        col = self.columns[i]
        moved = col[-k:]
        del col[-k:]
        # A face-down card that becomes the exposed card turns face up.
        if col:
            self.face_down[i] = min(self.face_down[i], len(col) - 1)
        else:
            self.face_down[i] = 0
        return moved

    def _send_home(self, card: str) -> None:
        pile = self.home_pile(card)
        assert pile is not None, card
        self.foundations[suit(card)][pile] += 1

    def auto_play(self) -> int:
        """Send safe cards home (pass order: waste, then columns left to right) until none is left."""
        sent = 0
        while True:
            before = sent
            if self.waste and self.is_safe(self.waste[-1]):
                self._send_home(self.waste.pop())
                sent += 1
            for i, col in enumerate(self.columns):
                if col and self.is_safe(col[-1]):
                    self._send_home(self._take_from_column(i, 1)[0])
                    sent += 1
            if sent == before:
                return sent

    def apply(self, move: str) -> int:
        """Play a legal move; return how many cards reached the foundations (auto-play included).

        Raises:
            ValueError: the move is not legal here (the game is left as it was).
        """
        if move not in self.legal_moves():
            raise ValueError(f"illegal move {move!r}")
        home = 0
        if move == "s":
            if self.stock:
                self.waste.append(self.stock.pop(0))
            else:
                # Turn the waste over: its bottom card, the first one turned, comes out first again.
                self.stock, self.waste = self.waste, []
                self.redeals_left -= 1
        else:
            src, dst = move.split(">")
            k = 1
            if "x" in dst:
                dst, count = dst.split("x")
                k = int(count)
            cards = [self.waste.pop()] if src == "w" else self._take_from_column(int(src) - 1, k)
            if dst == "f":
                self._send_home(cards[0])
                home = 1
            else:
                self.columns[int(dst) - 1].extend(cards)
        if self.variant.auto_play_safe:
            home += self.auto_play()
        return home

    def is_won(self) -> bool:
        return all(h == 13 for piles in self.foundations.values() for h in piles)

    def is_stuck(self) -> bool:
        return not self.is_won() and not self.legal_moves()


def reference_observation(game: Any) -> dict[str, np.ndarray]:
    """What the oracle observation of a ``GameState`` must hold, computed from its properties (the
    ``dict`` observation is its first four fields)."""
    v = game.variant
    c, d, t = v.columns, v.max_depth, v.stock_size
    tab = np.full((c, d), NO_CARD, dtype=np.int8)
    revealed = np.full((c, d), NO_CARD, dtype=np.int8)
    for i, (col, down) in enumerate(zip(game.columns, game.face_down, strict=True)):
        for k, code in enumerate(col):
            tab[i, k] = FACE_DOWN if k < down else code
            revealed[i, k] = code
    waste = np.full(t, NO_CARD, dtype=np.int8)
    if game.waste:
        waste[t - len(game.waste) :] = game.waste
    stock = np.full(t, NO_CARD, dtype=np.int8)
    stock[: len(game.stock)] = game.stock
    return {
        "tableau": tab,
        "waste": waste,
        "foundations": np.array(game.foundations, dtype=np.int8),
        "counts": np.array([len(game.stock), game.redeals_left], dtype=np.int8),
        "stock": stock,
        "tableau_revealed": revealed,
    }
