"""The control array every search kernel keeps its progress in, and the searches' status codes.

A search runs in chunks (:func:`agents.search.solver.solve` interleaves several); everything
it needs to go on lives in arrays, and its counters in one int64 array ``ctl`` whose slots
are named here. The kernels take their arrays grouped in small tuples (numba passes a tuple
of arrays like the arrays themselves; each kernel unpacks it first): the transposition
table of :func:`new_table` and the work arrays of :func:`new_work` are made here, each
search's own tuples in its module. :class:`Search` is the Python side each search driver
shares.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum

import numpy as np

from forty_thieves_env.engine.layout import Cfg, Slot
from forty_thieves_env.text.game import GameState

from .moves import replay_line

# Search status codes (ctl[Ctl.STATUS]).
RUNNING = 0
WON = 1
EXHAUSTED = 2
TABLE_FULL = 3
DEPTH_FULL = 4
#: A search that only finds wins (the beam search) ran out of positions: no verdict.
GAVE_UP = 5


class Ctl(IntEnum):
    """Slots of the int64 control array that carries a search between chunks (``ctl[Ctl.NODES]``).

    Slots 7 and 8 belong to the search that runs: best-first keeps ``TOP`` and ``OPEN`` there,
    the beam ``LAYER`` and ``WIDTH`` (aliases of the same slots).
    """

    DEPTH = 0  # DFS: the current frame; best-first: the winning node
    NODES = 1  # positions expanded so far
    STATUS = 2  # a status code above
    TT_COUNT = 3  # positions stored in the transposition table
    MAX_DEPTH = 4  # deepest line reached
    ROOT_REDEALS = 5  # redeals left at the root (the stock hash depends on it)
    TOP = 7  # best-first: highest bucket that may be non-empty
    OPEN = 8  # best-first: open positions
    LAYER = 7  # beam: layers done
    WIDTH = 8  # beam: positions in the current layer


C_LEN = 9  # length of a control array

#: Most moves one frame can hold (moves to empty columns go to the first one only).
MAX_FRAME_MOVES = 256


def new_ctl(state: GameState) -> np.ndarray:
    """A fresh control array for a search from ``state``."""
    ctl = np.zeros(C_LEN, dtype=np.int64)
    ctl[Ctl.ROOT_REDEALS] = int(state.array[Slot.REDEALS])
    return ctl


def new_table(slots: int) -> tuple[np.ndarray, np.ndarray]:
    """An empty transposition table ``tt = (k1, k2)`` of ``slots`` (a power of two) entries.

    Fields (each ``(slots,)`` uint64): the two 64-bit halves of every stored position's
    hash (:func:`agents.hashing.pair_insert`); ``k2 == 0`` marks a free slot.
    """
    return np.zeros(slots, dtype=np.uint64), np.zeros(slots, dtype=np.uint64)


def new_work(size: int, n_act: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The work arrays ``work = (mask, tmp, scratch, scores)`` a search kernel overwrites as it goes.

    Fields: ``mask`` ``(n_act,)`` bool, the legal moves of the position being expanded;
    ``tmp`` ``(size,)`` int8, a child position; ``scratch`` ``(256,)`` int16, where the safe
    moves of a child are written and dropped; ``scores`` ``(min(n_act, MAX_FRAME_MOVES),)``
    int64, the heuristic of each move of a depth-first frame while it is sorted.
    """
    return (
        np.zeros(n_act, dtype=np.bool_),
        np.empty(size, dtype=np.int8),
        np.zeros(256, dtype=np.int16),
        np.zeros(min(n_act, MAX_FRAME_MOVES), dtype=np.int64),
    )


def pow2_at_most(x: float) -> int:
    """The largest power of two at most ``x`` (at least 1024): a table size."""
    return 1 << max(10, int(np.floor(np.log2(max(x, 1024)))))


#: Most positions a search stores in a CPU-second, with room to spare (they store under
#: 200,000 here): a table sized beyond what its time can fill only costs the zeroing, up to a
#: CPU-second for 2 GB, since the first random writes touch every page.
STATES_PER_SECOND = 2e6


def table_slots(
    budget: float, stack_bytes: float, slot_bytes: int, max_nodes: int, table_states: float
) -> tuple[int, int]:
    """A depth-first search's transposition table: ``(slots, limit)``, the power-of-two size
    that fits ``budget`` bytes less its stack at ``slot_bytes`` a slot and at most twice
    ``min(max_nodes, table_states)`` positions, and the count it stops at (70 % full)."""
    slots = pow2_at_most(max(budget - stack_bytes, 2**16) / slot_bytes)
    slots = min(slots, pow2_at_most(2 * (min(max_nodes, table_states) + 1)))
    return slots, int(slots * 0.7)


class Search:
    """One resumable search: ``run(limit)`` advances it to ``limit`` generated positions.

    Args:
        state: The root position (left unchanged).
        prune: Apply the search reductions (see :mod:`agents.search.solver`).
    """

    name: str
    run: Callable[[int], None]

    def __init__(self, state: GameState, prune: bool) -> None:
        self.state, self.prune = state, prune
        self.cfg = state.cfg
        self.size = int(state.cfg[Cfg.SIZE])
        self.n_act = int(state.cfg[Cfg.N_ACTIONS])
        self.ctl = new_ctl(state)

    def replay(self, chosen: list[int]) -> np.ndarray:
        """The whole line from the root: ``chosen`` (the searched moves, last first) with
        every safe move the search took around them."""
        out = np.zeros(len(chosen) + 128, dtype=np.int16)
        n = replay_line(self.state.array, self.cfg, np.array(chosen[::-1], dtype=np.int16), out, self.prune)
        return out[:n]

    def line(self) -> np.ndarray:  # the winning actions, safe moves included
        raise NotImplementedError

    @property
    def status(self) -> int:
        return int(self.ctl[Ctl.STATUS])

    @property
    def nodes(self) -> int:
        return int(self.ctl[Ctl.NODES])

    @property
    def states(self) -> int:
        return int(self.ctl[Ctl.TT_COUNT])
