"""``GameState``: one game as a readable, mutable object over its state array.

The façade over the engine for people, tests and notebooks: properties decode the array,
methods call the compiled rules, refusals raise :class:`~.errors.IllegalMoveError` with the
reason in words (:mod:`.explain`), and positions read and write as text (:mod:`.position`).
Hot loops call the kernels in :mod:`forty_thieves_env.engine.rules` directly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..engine.cards import EMPTY, N_CARDS, N_FOUNDATIONS, N_RANKS
from ..engine.checks import check_action
from ..engine.config import config_for
from ..engine.deals import deal_layout, shuffled_pack
from ..engine.layout import Cfg, Slot, column_room_problem, stock_room_problem
from ..engine.rules import apply_action, count_legal, is_legal, legal_mask
from ..engine.state_check import check_state
from ..engine.variants import Variant, get_variant
from .errors import IllegalMoveError
from .explain import why_illegal
from .notation import format_move, parse_move
from .position import format_position, read_position


class GameState:
    """A readable, mutable view of one game: a variant plus its state array.

    The array is the single source of truth; properties decode it on demand (they allocate,
    so hot loops should call the kernels in :mod:`forty_thieves_env.engine.rules` directly).

    Args:
        variant: The rules in force.
        array: A state array laid out as :mod:`forty_thieves_env.engine.layout` says (copied), or ``None``
            for an all-empty table.
        check: Validate ``array`` (:func:`~forty_thieves_env.engine.state_check.check_state`:
            every invariant the kernels rely on; ``ValueError`` naming the first one broken).
            ``False`` is the fast path for code that passes back arrays the engine made.
    """

    __slots__ = ("array", "cfg", "variant")

    def __init__(self, variant: Variant, array: np.ndarray | None = None, *, check: bool = True) -> None:
        if not isinstance(variant, Variant):
            raise TypeError(f"variant must be a Variant (get_variant(name) makes one), got {variant!r}")
        self.variant = variant
        self.cfg = config_for(variant)
        size = int(self.cfg[Cfg.SIZE])
        if array is None:
            self.array = np.zeros(size, dtype=np.int8)
            self.array[self.cfg[Cfg.OFF_TAB] :] = EMPTY
        else:
            if check:
                check_state(variant, array)
            elif not isinstance(array, np.ndarray) or array.shape != (size,) or array.dtype != np.int8:
                raise ValueError(f"state array must be a ({size},) int8 array, got {array!r}")
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
        """Assemble a state from card-code lists (no check of card counts: see :mod:`.position`).

        Args:
            columns: One list per column, bottom card first.
            stock: Stock cards, *next card to turn first*.
            waste: Waste cards, bottom first (top last).
            foundations: Eight pile heights, pile ``2*suit + k``.
            face_down: Face-down count per column (default none).
            redeals_left: Defaults to the variant's ``redeals``.
        """
        s = cls(variant)
        a, cfg = s.array, s.cfg
        c, d = variant.columns, variant.max_depth
        if len(columns) != c:
            raise ValueError(f"{variant.name} has {c} columns, got {len(columns)}")
        problem = stock_room_problem(variant, len(stock), len(waste))
        if problem:
            raise ValueError(problem)
        a[Slot.STOCK_LEN] = len(stock)
        a[Slot.WASTE_LEN] = len(waste)
        a[Slot.REDEALS] = variant.redeals if redeals_left is None else redeals_left
        found = np.asarray(foundations, dtype=np.int64).reshape(4, 2)
        if found.min() < 0 or found.max() > N_RANKS:
            raise ValueError("foundation heights must be 0..13")
        a[Slot.FOUND : Slot.FOUND + N_FOUNDATIONS] = np.sort(found, axis=1)[:, ::-1].ravel()
        for i, col in enumerate(columns):
            problem = column_room_problem(variant, col)
            if problem:
                raise ValueError(f"column {i + 1} {problem}")
            a[cfg[Cfg.OFF_LEN] + i] = len(col)
            down = 0 if face_down is None else face_down[i]
            if not 0 <= down <= max(len(col) - 1, 0):
                raise ValueError(f"column {i + 1}: {down} face-down cards under {len(col)} cards")
            a[cfg[Cfg.OFF_DOWN] + i] = down
            base = cfg[Cfg.OFF_TAB] + i * d
            a[base : base + len(col)] = col
        # Stored with the next card to turn last.
        off = cfg[Cfg.OFF_STOCK]
        a[off : off + len(stock)] = list(stock)[::-1]
        off = cfg[Cfg.OFF_WASTE]
        a[off : off + len(waste)] = waste
        return s

    # ----- decoding -------------------------------------------------------------------
    def _slice(self, slot: int, n: int) -> np.ndarray:
        off = int(self.cfg[slot])
        return self.array[off : off + n]

    @property
    def column_lengths(self) -> np.ndarray:
        """``(C,)`` cards per column."""
        return self._slice(Cfg.OFF_LEN, self.variant.columns).astype(np.int64)

    @property
    def face_down(self) -> list[int]:
        """Face-down cards at the bottom of each column."""
        return self._slice(Cfg.OFF_DOWN, self.variant.columns).astype(int).tolist()

    @property
    def tableau(self) -> np.ndarray:
        """``(C, D)`` int8 view of the column cards, ``EMPTY`` past each column's end."""
        c, d = self.variant.columns, self.variant.max_depth
        return self._slice(Cfg.OFF_TAB, c * d).reshape(c, d)

    @property
    def columns(self) -> list[list[int]]:
        """Column cards, bottom first, face-down ones included."""
        tab = self.tableau
        return [tab[i, :n].astype(int).tolist() for i, n in enumerate(self.column_lengths)]

    @property
    def stock(self) -> list[int]:
        """Stock cards, next card to turn first."""
        n = int(self.array[Slot.STOCK_LEN])
        return self._slice(Cfg.OFF_STOCK, n)[::-1].astype(int).tolist()

    @property
    def waste(self) -> list[int]:
        """Waste cards, bottom first (the playable top card last)."""
        return self._slice(Cfg.OFF_WASTE, int(self.array[Slot.WASTE_LEN])).astype(int).tolist()

    @property
    def foundations(self) -> list[int]:
        """Eight foundation heights, pile ``2*suit + k``."""
        return self.array[Slot.FOUND : Slot.FOUND + N_FOUNDATIONS].astype(int).tolist()

    @property
    def redeals_left(self) -> int:
        return int(self.array[Slot.REDEALS])

    @property
    def cards_on_foundations(self) -> int:
        return int(self.array[Slot.FOUND : Slot.FOUND + N_FOUNDATIONS].sum())

    # ----- rules (thin wrappers over the compiled kernels) ----------------------------
    def legal_mask(self) -> np.ndarray:
        """``(n_actions,)`` bool: which actions are legal now."""
        out = np.zeros(int(self.cfg[Cfg.N_ACTIONS]), dtype=np.bool_)
        legal_mask(self.array, self.cfg, out)
        return out

    def legal_actions(self) -> list[int]:
        """Legal action numbers, ascending."""
        return np.flatnonzero(self.legal_mask()).tolist()

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` (an integer; ``TypeError`` otherwise) is a legal move now."""
        action = check_action(action)
        return 0 <= action < self.cfg[Cfg.N_ACTIONS] and bool(is_legal(self.array, self.cfg, action))

    def apply(self, action: int) -> int:
        """Play ``action``; return how many cards reached the foundations (auto-play included).

        Raises:
            TypeError: ``action`` is not an integer.
            IllegalMoveError: the move is not legal here; the state is left unchanged.
        """
        action = check_action(action)
        if not 0 <= action < self.cfg[Cfg.N_ACTIONS]:
            raise IllegalMoveError(
                f"action {action} is out of range 0..{int(self.cfg[Cfg.N_ACTIONS]) - 1} for {self.variant.name}"
            )
        reason = why_illegal(self.array, self.cfg, action)
        if reason:
            raise IllegalMoveError(f"illegal move {format_move(self.variant, action)}: {reason}")
        return int(apply_action(self.array, self.cfg, action))

    def play(self, move: str) -> int:
        """Play a move given as text (``"3>7"``, ``"w>f"``, ``"s"``)."""
        return self.apply(parse_move(self.variant, move))

    def is_won(self) -> bool:
        return self.cards_on_foundations == N_CARDS

    def is_stuck(self) -> bool:
        """True when the game is not won and no legal move remains."""
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

    def restore(self, snapshot: np.ndarray, *, check: bool = True) -> None:
        """Put back a snapshot taken from a state of the same variant (in place, no allocation).

        Args:
            snapshot: A state array of this variant (:meth:`snapshot`).
            check: Validate it first (:func:`~forty_thieves_env.engine.state_check.check_state`);
                ``False`` skips that, for search code restoring snapshots it took itself.

        Raises:
            ValueError: (with ``check``) not a valid state of this variant; the state is unchanged.
        """
        if check:
            check_state(self.variant, snapshot, "snapshot")
        elif not isinstance(snapshot, np.ndarray) or snapshot.shape != self.array.shape:
            raise ValueError(f"snapshot must be a {self.array.shape} int8 array, got {snapshot!r}")
        self.array[:] = snapshot

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, GameState) and self.variant == other.variant and np.array_equal(self.array, other.array)
        )

    def __hash__(self) -> int:
        return hash((self.variant, self.array.tobytes()))

    def __repr__(self) -> str:
        return f"GameState(\n{format_position(self)})"

    def __getstate__(self) -> tuple[Variant, np.ndarray]:
        return self.variant, self.array

    def __setstate__(self, state: tuple[Variant, np.ndarray]) -> None:
        self.variant, self.array = state
        self.cfg = config_for(self.variant)


def parse_position(text: str) -> GameState:
    """Load a position written by :func:`~.position.format_position` (or by hand).

    Raises:
        PositionError: names the line number and what is wrong with it.
    """
    return GameState.from_parts(*read_position(text))


def deal(variant: Variant | str = "classic", number: int = 1) -> GameState:
    """The starting position of deal ``number`` in ``variant`` (a preset name or a Variant)."""
    variant = get_variant(variant)
    state = GameState(variant)
    deal_layout(state.array, state.cfg, shuffled_pack(number))
    return state
