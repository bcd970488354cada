"""The array layout: one flat ``int8`` state array per game, one ``int64`` config array per variant.

This module is the contract between the packages: every kernel (rules, observation, batch,
solver, heuristic) reads states and configs through the named slots below, and nothing else
knows an offset.

Every game lives in a single contiguous array so that snapshot and restore are one
``memcpy`` (search copies states constantly) and a batch of games is a 2-D array.

Layout of a state array for a variant with ``C`` columns, column capacity ``D`` and stock
size ``T`` (offsets are stored in the variant's config array, see :mod:`.config`):

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

The config array (``int64``, built by :func:`.config.config_for`) carries the variant's options
and the offsets; kernels read it with the ``CFG_*`` indices below, which numba folds in as
constants. :func:`pack_state` builds a state array from card lists (what
:class:`~forty_thieves_env.text.game.GameState` and the position parser use).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .cards import EMPTY, N_FOUNDATIONS, N_RANKS
from .variants import Variant

# Header slots of a state array.
S_STOCK_LEN = 0  # cards in the stock
S_WASTE_LEN = 1  # cards in the waste
S_REDEALS = 2  # redeals left
S_FOUND = 3  # first of the eight foundation heights (pile 2*suit + k)
HEADER = S_FOUND + N_FOUNDATIONS  # where the per-variant part (columns, stock, waste) starts

# Slots of a config array.
CFG_COLUMNS = 0  # C, number of columns
CFG_DEPTH = 1  # D, cards a column can hold (variant.max_depth)
CFG_STOCK = 2  # T, stock size after the deal
CFG_ALTERNATE = 3  # 1: columns build in alternate colours, 0: in suit
CFG_RUN = 4  # RUN_* code of variant.run_moves
CFG_AUTO = 5  # 1: safe cards go home by themselves after every move
CFG_MAX_RUN = 6  # K, most cards one action moves (1 or 13)
CFG_OFF_LEN = 7  # offset of the (C,) column lengths
CFG_OFF_DOWN = 8  # offset of the (C,) face-down counts
CFG_OFF_TAB = 9  # offset of the (C, D) column cards
CFG_OFF_STOCK = 10  # offset of the (T,) stock
CFG_OFF_WASTE = 11  # offset of the (T,) waste
CFG_SIZE = 12  # length of a state array
CFG_N_ACTIONS = 13  # size of the action space (see .actions)
CFG_REDEALS = 14  # redeals of a fresh deal
CFG_PER_COLUMN = 15  # cards dealt to each column
CFG_FACE_DOWN = 16  # of which face down
CFG_LEN = 17

# Codes of ``variant.run_moves`` in ``cfg[CFG_RUN]``.
RUN_NONE = 0
RUN_SUPERMOVE = 1
RUN_FREE = 2
RUN_CODES = {"none": RUN_NONE, "supermove": RUN_SUPERMOVE, "free": RUN_FREE}


def offsets(columns: int, depth: int, stock: int) -> tuple[int, int, int, int, int, int]:
    """``(len, down, tab, stock, waste, size)``: where each per-variant part starts, and the array size."""
    tab = HEADER + 2 * columns
    stock_at = tab + columns * depth
    return HEADER, HEADER + columns, tab, stock_at, stock_at + stock, stock_at + 2 * stock


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




def pack_state(
    variant: Variant,
    columns: Sequence[Sequence[int]],
    stock: Sequence[int] = (),
    waste: Sequence[int] = (),
    foundations: Sequence[int] = (0,) * N_FOUNDATIONS,
    face_down: Sequence[int] | None = None,
    redeals_left: int | None = None,
) -> np.ndarray:
    """A new state array from card-code lists (no check of card counts: see the position parser).

    Args:
        columns: One list per column, bottom card first.
        stock: Stock cards, *next card to turn first*.
        waste: Waste cards, bottom first (top last).
        foundations: Eight pile heights, pile ``2*suit + k``.
        face_down: Face-down count per column (default none).
        redeals_left: Defaults to the variant's ``redeals``.

    Returns:
        The ``(size,) int8`` state array.

    Raises:
        ValueError: a part does not fit the variant (columns, capacities, heights).
    """
    c, d = variant.columns, variant.max_depth
    off_len, off_down, off_tab, off_stock, off_waste, size = offsets(c, d, variant.stock_size)
    if len(columns) != c:
        raise ValueError(f"{variant.name} has {c} columns, got {len(columns)}")
    problem = stock_room_problem(variant, len(stock), len(waste))
    if problem:
        raise ValueError(problem)
    a = np.zeros(size, dtype=np.int8)
    a[off_tab:] = EMPTY
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
        a[off_len + i] = len(col)
        down = 0 if face_down is None else face_down[i]
        if not 0 <= down <= max(len(col) - 1, 0):
            raise ValueError(f"column {i + 1}: {down} face-down cards under {len(col)} cards")
        a[off_down + i] = down
        base = off_tab + i * d
        a[base : base + len(col)] = col
    # Stored with the next card to turn last.
    a[off_stock : off_stock + len(stock)] = list(stock)[::-1]
    a[off_waste : off_waste + len(waste)] = waste
    return a
