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
and the offsets; kernels read it with the :class:`Cfg` slots below, which numba folds in as
constants. :meth:`~forty_thieves_env.text.game.GameState.from_parts` builds a state array from card lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

from .cards import N_FOUNDATIONS, N_RANKS
from .variants import Variant


class Slot(IntEnum):
    """Header slots of a state array: ``s[Slot.STOCK_LEN]`` (numba folds them in as constants)."""

    STOCK_LEN = 0  # cards in the stock
    WASTE_LEN = 1  # cards in the waste
    REDEALS = 2  # redeals left
    FOUND = 3  # first of the eight foundation heights (pile 2*suit + k)


HEADER = Slot.FOUND + N_FOUNDATIONS  # where the per-variant part (columns, stock, waste) starts


class Cfg(IntEnum):
    """Slots of a config array: ``cfg[Cfg.COLUMNS]`` (numba folds them in as constants)."""

    COLUMNS = 0  # C, number of columns
    DEPTH = 1  # D, cards a column can hold (variant.max_depth)
    STOCK = 2  # T, stock size after the deal
    ALTERNATE = 3  # 1: columns build in alternate colours, 0: in suit
    RUN = 4  # RUN_* code of variant.run_moves
    AUTO = 5  # 1: safe cards go home by themselves after every move
    MAX_RUN = 6  # K, most cards one action moves (1 or 13)
    OFF_LEN = 7  # offset of the (C,) column lengths
    OFF_DOWN = 8  # offset of the (C,) face-down counts
    OFF_TAB = 9  # offset of the (C, D) column cards
    OFF_STOCK = 10  # offset of the (T,) stock
    OFF_WASTE = 11  # offset of the (T,) waste
    SIZE = 12  # length of a state array
    N_ACTIONS = 13  # size of the action space (see .actions)
    REDEALS = 14  # redeals of a fresh deal
    PER_COLUMN = 15  # cards dealt to each column
    FACE_DOWN = 16  # of which face down


CFG_LEN = len(Cfg)  # length of a config array

# Codes of ``variant.run_moves`` in ``cfg[Cfg.RUN]``.
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
