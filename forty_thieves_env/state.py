"""Game state: one flat ``int8`` array per game, and a readable wrapper around it.

Every game lives in a single contiguous array so that snapshot and restore are one
``memcpy`` (search copies states constantly) and a batch of games is a 2-D array.

Layout of a state array for a variant with ``C`` columns, column capacity ``D`` and stock
size ``T`` (offsets are stored in the variant's config array, see :func:`make_config`):

=================  ===========  ==========================================================
slice              shape        meaning
=================  ===========  ==========================================================
``[0]``            ()           stock length
``[1]``            ()           waste length
``[2]``            ()           redeals left
``[3:11]``         (8,)         foundation heights, pile ``2*suit + k``; kept so that
                                pile ``2*suit`` is never lower than ``2*suit + 1``
``len``            (C,)         cards in each column
``down``           (C,)         face-down cards at the bottom of each column
``tab``            (C, D)       column cards bottom first, ``EMPTY`` past the end
``stock``          (T,)         stock cards; the *last* used slot is the next card to turn
``waste``          (T,)         waste cards bottom first; the last used slot is the top
=================  ===========  ==========================================================

The config array (``int64``) carries the variant's options and the offsets; kernels read
it with the ``CFG_*`` indices below, which numba folds in as constants.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .cards import EMPTY, N_CARDS, N_FOUNDATIONS, N_RANKS
from .variants import Variant

# Header slots of a state array.
S_STOCK_LEN = 0
S_WASTE_LEN = 1
S_REDEALS = 2
S_FOUND = 3
HEADER = S_FOUND + N_FOUNDATIONS

# Slots of a config array.
CFG_COLUMNS = 0
CFG_DEPTH = 1
CFG_STOCK = 2
CFG_ALTERNATE = 3
CFG_RUN = 4
CFG_AUTO = 5
CFG_MAX_RUN = 6
CFG_OFF_LEN = 7
CFG_OFF_DOWN = 8
CFG_OFF_TAB = 9
CFG_OFF_STOCK = 10
CFG_OFF_WASTE = 11
CFG_SIZE = 12
CFG_N_ACTIONS = 13
CFG_REDEALS = 14
CFG_PER_COLUMN = 15
CFG_FACE_DOWN = 16
CFG_LEN = 17

RUN_NONE = 0
RUN_SUPERMOVE = 1
RUN_FREE = 2
_RUN_CODES = {"none": RUN_NONE, "supermove": RUN_SUPERMOVE, "free": RUN_FREE}


def n_actions_for(columns: int, max_run: int) -> int:
    """Size of the Discrete action space (see :mod:`forty_thieves_env.moves`)."""
    return 2 + 2 * columns + columns * (columns - 1) * max_run


def make_config(variant: Variant) -> np.ndarray:
    """Build the ``(CFG_LEN,) int64`` config array that every kernel takes."""
    c, d, t = variant.columns, variant.max_depth, variant.stock_size
    cfg = np.zeros(CFG_LEN, dtype=np.int64)
    cfg[CFG_COLUMNS] = c
    cfg[CFG_DEPTH] = d
    cfg[CFG_STOCK] = t
    cfg[CFG_ALTERNATE] = variant.build == "alternate"
    cfg[CFG_RUN] = _RUN_CODES[variant.run_moves]
    cfg[CFG_AUTO] = variant.auto_play_safe
    cfg[CFG_MAX_RUN] = variant.max_run
    cfg[CFG_OFF_LEN] = HEADER
    cfg[CFG_OFF_DOWN] = HEADER + c
    cfg[CFG_OFF_TAB] = HEADER + 2 * c
    cfg[CFG_OFF_STOCK] = HEADER + 2 * c + c * d
    cfg[CFG_OFF_WASTE] = HEADER + 2 * c + c * d + t
    cfg[CFG_SIZE] = HEADER + 2 * c + c * d + 2 * t
    cfg[CFG_N_ACTIONS] = n_actions_for(c, variant.max_run)
    cfg[CFG_REDEALS] = variant.redeals
    cfg[CFG_PER_COLUMN] = variant.cards_per_column
    cfg[CFG_FACE_DOWN] = variant.face_down
    cfg.flags.writeable = False
    return cfg


_CONFIGS: dict[Variant, np.ndarray] = {}


def config_for(variant: Variant) -> np.ndarray:
    """Cached :func:`make_config` (variants are frozen, hence hashable)."""
    cfg = _CONFIGS.get(variant)
    if cfg is None:
        cfg = _CONFIGS[variant] = make_config(variant)
    return cfg


def column_room_problem(variant: Variant, column: Sequence[int]) -> str:
    """Why ``column`` could outgrow its ``variant.max_depth`` slots in play, or ``""``.

    A card at position ``p`` (1-based) of rank ``r`` (0 = ace) can have at most ``r`` cards
    built on it, so the column can reach ``p + r`` cards once the cards above it are gone.
    Every dealt position satisfies ``p + r <= max_depth``; a hand-made column might not.
    """
    d = variant.max_depth
    if len(column) > d:
        return f"holds {len(column)} cards, at most {d} fit"
    for p, code in enumerate(column, start=1):
        if p + code % N_RANKS > d:
            return (
                f"card {p} (rank {code % N_RANKS + 1}) could carry a run to {p + code % N_RANKS} cards, "
                f"more than the {d} a column holds"
            )
    return ""


def stock_room_problem(variant: Variant, stock: int, waste: int) -> str:
    """Why a stock and waste of these sizes cannot occur, or ``""``: together they hold at most the stock size."""
    t = variant.stock_size
    if stock + waste > t:
        return f"stock ({stock}) and waste ({waste}) together hold {stock + waste} cards; {variant.name} deals {t}"
    return ""


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in the current position; the state is unchanged."""


class GameState:
    """A readable, mutable view of one game: a variant plus its state array.

    The array is the single source of truth; properties decode it on demand (they allocate,
    so hot loops should call the kernels in :mod:`forty_thieves_env.rules` directly).

    Args:
        variant: The rules in force.
        array: A state array laid out as in this module's docstring (copied), or ``None``
            for an all-empty table.
    """

    __slots__ = ("array", "cfg", "variant")

    def __init__(self, variant: Variant, array: np.ndarray | None = None) -> None:
        self.variant = variant
        self.cfg = config_for(variant)
        size = int(self.cfg[CFG_SIZE])
        if array is None:
            self.array = np.zeros(size, dtype=np.int8)
            self.array[self.cfg[CFG_OFF_TAB] :] = EMPTY
        else:
            array = np.asarray(array)
            if array.shape != (size,) or array.dtype != np.int8:
                raise ValueError(f"state array must be ({size},) int8, got {array.shape} {array.dtype}")
            self.array = array.copy()

    # ----- construction ---------------------------------------------------------------
    @classmethod
    def from_parts(
        cls,
        variant: Variant,
        columns: Sequence[Sequence[int]],
        stock: Sequence[int] = (),
        waste: Sequence[int] = (),
        foundations: Sequence[int] = (0,) * N_FOUNDATIONS,
        face_down: Sequence[int] | None = None,
        redeals_left: int | None = None,
    ) -> GameState:
        """Assemble a state from card-code lists (no validation of card counts: see notation).

        Args:
            columns: One list per column, bottom card first.
            stock: Stock cards, *next card to turn first*.
            waste: Waste cards, bottom first (top last).
            foundations: Eight pile heights, pile ``2*suit + k``.
            face_down: Face-down count per column (default none).
            redeals_left: Defaults to the variant's ``redeals``.
        """
        s = cls(variant)
        c, d = variant.columns, variant.max_depth
        if len(columns) != c:
            raise ValueError(f"{variant.name} has {c} columns, got {len(columns)}")
        problem = stock_room_problem(variant, len(stock), len(waste))
        if problem:
            raise ValueError(problem)
        a, cfg = s.array, s.cfg
        a[S_STOCK_LEN] = len(stock)
        a[S_WASTE_LEN] = len(waste)
        a[S_REDEALS] = variant.redeals if redeals_left is None else redeals_left
        found = np.asarray(foundations, dtype=np.int64).reshape(4, 2)
        if found.min() < 0 or found.max() > N_RANKS:
            raise ValueError("foundation heights must be 0..13")
        a[S_FOUND : S_FOUND + N_FOUNDATIONS] = np.sort(found, axis=1)[:, ::-1].ravel()
        for i, col in enumerate(columns):
            problem = column_room_problem(variant, col)
            if problem:
                raise ValueError(f"column {i + 1} {problem}")
            a[cfg[CFG_OFF_LEN] + i] = len(col)
            down = 0 if face_down is None else face_down[i]
            if not 0 <= down <= max(len(col) - 1, 0):
                raise ValueError(f"column {i + 1}: {down} face-down cards under {len(col)} cards")
            a[cfg[CFG_OFF_DOWN] + i] = down
            base = cfg[CFG_OFF_TAB] + i * d
            a[base : base + len(col)] = col
        # Stored with the next card to turn last.
        off = cfg[CFG_OFF_STOCK]
        a[off : off + len(stock)] = list(stock)[::-1]
        off = cfg[CFG_OFF_WASTE]
        a[off : off + len(waste)] = waste
        return s

    # ----- decoding -------------------------------------------------------------------
    def _slice(self, slot: int, n: int) -> np.ndarray:
        off = int(self.cfg[slot])
        return self.array[off : off + n]

    @property
    def column_lengths(self) -> np.ndarray:
        """``(C,)`` cards per column."""
        return self._slice(CFG_OFF_LEN, self.variant.columns).astype(np.int64)

    @property
    def face_down(self) -> list[int]:
        """Face-down cards at the bottom of each column."""
        return self._slice(CFG_OFF_DOWN, self.variant.columns).astype(int).tolist()

    @property
    def tableau(self) -> np.ndarray:
        """``(C, D)`` int8 view of the column cards, ``EMPTY`` past each column's end."""
        c, d = self.variant.columns, self.variant.max_depth
        return self._slice(CFG_OFF_TAB, c * d).reshape(c, d)

    @property
    def columns(self) -> list[list[int]]:
        """Column cards, bottom first, face-down ones included."""
        tab = self.tableau
        return [tab[i, :n].astype(int).tolist() for i, n in enumerate(self.column_lengths)]

    @property
    def stock(self) -> list[int]:
        """Stock cards, next card to turn first."""
        n = int(self.array[S_STOCK_LEN])
        return self._slice(CFG_OFF_STOCK, n)[::-1].astype(int).tolist()

    @property
    def waste(self) -> list[int]:
        """Waste cards, bottom first (the playable top card last)."""
        return self._slice(CFG_OFF_WASTE, int(self.array[S_WASTE_LEN])).astype(int).tolist()

    @property
    def foundations(self) -> list[int]:
        """Eight foundation heights, pile ``2*suit + k``."""
        return self.array[S_FOUND : S_FOUND + N_FOUNDATIONS].astype(int).tolist()

    @property
    def redeals_left(self) -> int:
        return int(self.array[S_REDEALS])

    @property
    def cards_on_foundations(self) -> int:
        return int(self.array[S_FOUND : S_FOUND + N_FOUNDATIONS].sum())

    # ----- rules (thin wrappers over the compiled kernels) ----------------------------
    def legal_mask(self) -> np.ndarray:
        """``(n_actions,)`` bool: which actions are legal now."""
        from .rules import legal_mask

        out = np.zeros(int(self.cfg[CFG_N_ACTIONS]), dtype=np.bool_)
        legal_mask(self.array, self.cfg, out)
        return out

    def legal_actions(self) -> list[int]:
        """Legal action numbers, ascending."""
        return np.flatnonzero(self.legal_mask()).tolist()

    def is_legal(self, action: int) -> bool:
        from .rules import is_legal

        return 0 <= action < self.cfg[CFG_N_ACTIONS] and bool(is_legal(self.array, self.cfg, action))

    def apply(self, action: int) -> int:
        """Play ``action``; return how many cards reached the foundations (auto-play included).

        Raises:
            IllegalMoveError: the move is not legal here; the state is left unchanged.
        """
        from .moves import describe_action
        from .rules import apply_action, why_illegal

        action = int(action)
        if not 0 <= action < self.cfg[CFG_N_ACTIONS]:
            raise IllegalMoveError(
                f"action {action} is out of range 0..{int(self.cfg[CFG_N_ACTIONS]) - 1} for {self.variant.name}"
            )
        reason = why_illegal(self.array, self.cfg, action)
        if reason:
            raise IllegalMoveError(f"illegal move {describe_action(self.variant, action)}: {reason}")
        return int(apply_action(self.array, self.cfg, action))

    def play(self, move: str) -> int:
        """Play a move given as text (``"3>7"``, ``"w>f"``, ``"s"``)."""
        from .moves import parse_move

        return self.apply(parse_move(self.variant, move))

    def is_won(self) -> bool:
        return self.cards_on_foundations == N_CARDS

    def is_stuck(self) -> bool:
        """True when the game is not won and no legal move remains."""
        from .rules import count_legal

        return not self.is_won() and count_legal(self.array, self.cfg) == 0

    # ----- snapshots ------------------------------------------------------------------
    def copy(self) -> GameState:
        new = GameState.__new__(GameState)
        new.variant, new.cfg, new.array = self.variant, self.cfg, self.array.copy()
        return new

    # Without this, copy.copy goes through __getstate__/__setstate__ and the "copy" shares
    # the original's array, so playing on it would change the original.
    __copy__ = copy

    def snapshot(self) -> np.ndarray:
        """A copy of the state array (restore with :meth:`restore`)."""
        return self.array.copy()

    def restore(self, snapshot: np.ndarray) -> None:
        """Put back a snapshot taken from a state of the same variant (in place, no allocation)."""
        self.array[:] = snapshot

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, GameState) and self.variant == other.variant and np.array_equal(self.array, other.array)
        )

    def __hash__(self) -> int:
        return hash((self.variant, self.array.tobytes()))

    def __repr__(self) -> str:
        from .notation import format_position

        return f"GameState(\n{format_position(self)})"

    def __getstate__(self) -> tuple[Variant, np.ndarray]:
        return self.variant, self.array

    def __setstate__(self, state: tuple[Variant, np.ndarray]) -> None:
        self.variant, self.array = state
        self.cfg = config_for(self.variant)
