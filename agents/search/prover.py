"""The prover: a lean depth-first search whose job is to exhaust the space and so prove a loss.

Best-first and the beam search are good at finding wins and poor at proving losses: best-first
stores every position whole (about 350 bytes each) and computes a heuristic for every child,
so 2 GB hold a few million positions. A loss is proved only by generating *every* position
the pruned graph reaches, and for that the order of the moves does not matter. The prover
therefore

* keeps one 8-byte word per position in its transposition table (:func:`key_insert`: the
  table index comes from the first 64-bit half of the position's 128-bit Zobrist hash, the
  word stored is the second half with its lowest bit set). A false "already seen" needs a
  stored position in the probed run of slots with the same 63-bit word: with ``n`` lookups
  probing ``L`` slots each, a chance of about ``n * L / 2**63``, below ``1e-10`` for the
  ``1e8`` positions a run of this budget reaches (the 16-byte table of the other searches
  compares 127 bits);
* keeps positions only on its stack (a frame per depth: the position, its moves to try and
  the hash parts of its columns and waste, from which each child's hash is updated rather
  than recomputed);
* tries the moves in the order :func:`~agents.search.moves.search_moves` gives them, with
  no heuristic, and enters each child as soon as it is new (one position generated, one
  entered at a time: no child is generated twice).

It applies every pruning rule of the other searches (see :mod:`agents.search.solver`) and
one of its own, the relaxed game (rule 7, :mod:`agents.search.relaxation`), once, at its
root. (It used to run a small relaxed search after each stock turn too: that took about
two thirds of its time and cut few positions; without it, classic 123 and 129 are proved
lost in 3.1 and 2.3 CPU-s instead of 8.9 and 6.9.) The same proof makes ``EXHAUSTED``
mean ``lost``, and it reports a win it stumbles on with its line.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.hashing import key_insert  # noqa: F401  (the prover's table insert, named where it is described)
from forty_thieves_env.engine.layout import Cfg

from .control import EXHAUSTED, MAX_FRAME_MOVES, RUNNING, Ctl, table_slots
from .dfs import DepthFirst, dfs_init, dfs_run
from .pruning import blocked_suits
from .relaxation import ROOT_BUDGET, new_relaxed_work, relaxed_dead


@njit(cache=True)
def prove_init(root, cfg, z, table, frames, ctl, mask, prune, relax, relax_budget):
    """Set up the prover at ``root``: :func:`~agents.search.dfs.dfs_init` with its table;
    ``relax`` the root's :func:`new_relaxed_work` tuple: when the relaxed game from the root
    cannot be won within ``relax_budget`` relaxed positions (rule 7), the space is exhausted
    at once."""
    dfs_init(root, cfg, z, None, frames, ctl, None, prune, None, table, mask)
    st = frames[0][0]
    if ctl[Ctl.STATUS] != RUNNING or not prune:
        return
    if blocked_suits(st, cfg) or relaxed_dead(st, cfg, relax, relax_budget)[0]:
        ctl[Ctl.STATUS] = EXHAUSTED


class Prover(DepthFirst):
    """The prover from ``state``, its table sized to ``budget`` bytes (8 a slot, filled to
    70 %), ``max_nodes`` and ``table_states`` (the most positions it can store in its time
    budget: a 2 GB table costs about a CPU-second to zero, since its first random writes touch
    every page), its stack to ``max_depth`` positions."""

    def start(self, z: np.ndarray, budget: float, max_nodes: int, max_depth: int, table_states: float) -> None:
        """Allocate the stack, the 8-byte table and the root's relaxed search; set up the root."""
        cfg, size, n_act, ctl, prune = self.cfg, self.size, self.n_act, self.ctl, self.prune
        self.name = "prover"
        columns = int(cfg[Cfg.COLUMNS])
        m = min(n_act, MAX_FRAME_MOVES)
        stack_bytes = (max_depth + 1) * (size + 2 * m + 16 * columns + 32) + 2 * (max_depth + 256)
        depth = int(cfg[Cfg.DEPTH])
        # The root's relaxed search (rule 7): 16 MB of table, out of the memory budget too.
        root_relax = new_relaxed_work(columns, depth, 21)
        stack_bytes += sum(a.nbytes for a in root_relax)
        slots, tt_limit = table_slots(budget, stack_bytes, 8, max_nodes, table_states)
        table = np.zeros(slots, dtype=np.uint64)
        frames = self.new_frames(max_depth, size, m) + self.new_parts(max_depth, columns)
        self.pend, self.path = frames[4], frames[5]  # the line of a win
        mask = np.zeros(n_act, dtype=np.bool_)
        # A node budget bounds the root's relaxed search too (a small one stays quick).
        root_budget = min(ROOT_BUDGET, max_nodes)
        prove_init(self.state.array, cfg, z, table, frames, ctl, mask, prune, root_relax, root_budget)

        def run(limit: int) -> None:
            dfs_run(cfg, z, None, frames, ctl, None, limit, tt_limit, prune, None, table, mask)

        self.run = run

    @staticmethod
    def new_parts(max_depth: int, columns: int) -> tuple[np.ndarray, ...]:
        """The hash parts the prover's frames carry after :meth:`DepthFirst.new_frames`'s,
        ``(col1, col2, wh)``, one row a depth: ``col1``/``col2`` ``(max_depth + 1, columns)``
        uint64, each column's hash halves; ``wh`` ``(max_depth + 1, 2)`` uint64, the waste's.
        """
        n = max_depth + 1
        return (
            np.zeros((n, columns), dtype=np.uint64),
            np.zeros((n, columns), dtype=np.uint64),
            np.zeros((n, 2), dtype=np.uint64),
        )
