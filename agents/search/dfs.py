"""The depth-first search: complete, with an explicit stack, children best first."""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.hashing import key_insert, pair_contains, pair_insert
from forty_thieves_env.engine.layout import Cfg
from forty_thieves_env.engine.rules import apply_action, is_won
from forty_thieves_env.text.game import GameState

from .control import (
    DEPTH_FULL,
    EXHAUSTED,
    MAX_FRAME_MOVES,
    RUNNING,
    TABLE_FULL,
    WON,
    Ctl,
    Search,
    new_table,
    new_work,
    table_slots,
)
from .heuristics import HEURISTICS, heuristic
from .moves import auto_safe, play_child, search_moves
from .pruning import blocked_suits
from .zobrist import child_hash, child_parts, hash_parts, new_parts, state_hash


@njit(cache=True)
def expand(s, cfg, z, root_redeals, tt, work, out_moves, prune, w):
    """Fill ``out_moves`` with the moves of ``s`` worth searching, best first; return how
    many. Pruned: :func:`keep_move` symmetries and :func:`stock_only`; children already
    in the transposition table ``tt`` are skipped (a win comes first). ``work`` is
    :func:`~agents.search.control.new_work`'s tuple."""
    k1, k2 = tt
    mask, tmp, scratch, out_scores = work
    col1, col2, wh = new_parts(cfg)
    todo = np.empty(cfg[Cfg.N_ACTIONS], dtype=np.int64)
    n = search_moves(s, cfg, mask, prune, todo)
    hash_parts(s, cfg, z, col1, col2, wh)
    m = 0
    for t in range(n):
        a = todo[t]
        play_child(tmp, s, cfg, a, scratch, prune)
        if is_won(tmp):
            sc = 1 << 40
        else:
            h1, h2 = child_hash(tmp, s, cfg, z, root_redeals, col1, col2, wh)
            if pair_contains(k1, k2, h1, h2):
                continue
            sc = heuristic(tmp, cfg, w)
        q = m  # insertion sort, best first
        while q > 0 and out_scores[q - 1] < sc:
            out_scores[q] = out_scores[q - 1]
            out_moves[q] = out_moves[q - 1]
            q -= 1
        out_scores[q] = sc
        out_moves[q] = a
        m += 1
    return m


@njit(cache=True)
def dfs_init(root, cfg, z, tt, frames, ctl, work, prune, w, keys=None, mask=None):
    """Set up the depth-first search at ``root``: safe moves, the root's hash, its moves.
    ``frames`` is :meth:`DepthFirst.new_frames`'s tuple (the prover's, with the hash parts).
    ``tt``/``work``/``w`` or ``keys``/``mask``: as for :func:`dfs_run`."""
    states, moves, nmov, nxt, pend, path = frames[0], frames[1], frames[2], frames[3], frames[4], frames[5]
    st = states[0]
    st[:] = root
    pend[0] = auto_safe(st, cfg, path, 0, prune)
    ctl[Ctl.DEPTH] = 0
    ctl[Ctl.NODES] = 1
    ctl[Ctl.MAX_DEPTH] = 0
    if is_won(st):
        ctl[Ctl.STATUS] = WON
        return
    h1, h2 = state_hash(st, cfg, z, ctl[Ctl.ROOT_REDEALS])
    if tt is not None:
        pair_insert(tt[0], tt[1], h1, h2)
    if keys is not None:
        hash_parts(st, cfg, z, frames[6][0], frames[7][0], frames[8][0])
        key_insert(keys, h1, h2)
    ctl[Ctl.TT_COUNT] = 1
    if tt is not None:
        nmov[0] = expand(st, cfg, z, ctl[Ctl.ROOT_REDEALS], tt, work, moves[0], prune, w)
    if keys is not None:
        nmov[0] = search_moves(st, cfg, mask, prune, moves[0])
    nxt[0] = 0
    ctl[Ctl.STATUS] = RUNNING


@njit(cache=True)
def dfs_run(cfg, z, tt, frames, ctl, work, node_limit, tt_limit, prune, w, keys=None, mask=None):
    """Continue the depth-first search until it ends or ``ctl[Ctl.NODES]`` reaches
    ``node_limit``. Resumable: everything lives in the arrays. ``EXHAUSTED``: every position
    the pruned graph reaches was generated. On ``WON`` the winning line is
    ``path[:pend[ctl[Ctl.DEPTH]]]``.

    The one loop of both depth-first searches; exactly one of ``tt`` and ``keys`` is given.
    With ``tt`` (:class:`DepthFirst`): the 16-byte table, children ordered by heuristic
    ``w`` through :func:`expand` and ``work``. With ``keys`` (the
    :mod:`~agents.search.prover`; ``tt``, ``work`` and ``w`` None): the 8-byte table,
    children in move order through ``mask``, each child's hash updated from its parent's
    parts in ``frames[6:9]``. Numba drops a branch on ``arg is not None`` when that argument
    is None as it compiles, so each search's machine code holds only its own steps."""
    if ctl[Ctl.STATUS] != RUNNING:
        return
    states, moves, nmov, nxt, pend, path = frames[0], frames[1], frames[2], frames[3], frames[4], frames[5]
    root_redeals = ctl[Ctl.ROOT_REDEALS]
    max_d = states.shape[0] - 1
    depth = ctl[Ctl.DEPTH]
    nodes = ctl[Ctl.NODES]
    count = ctl[Ctl.TT_COUNT]
    while nodes < node_limit:
        if nxt[depth] >= nmov[depth]:
            if depth == 0:
                ctl[Ctl.STATUS] = EXHAUSTED
                break
            depth -= 1
            continue
        a = moves[depth, nxt[depth]]
        nxt[depth] += 1
        parent = states[depth]
        child = states[depth + 1]
        child[:] = parent
        plen = pend[depth]
        path[plen] = a
        apply_action(child, cfg, a)
        plen = auto_safe(child, cfg, path, plen + 1, prune)
        nodes += 1
        if is_won(child):
            depth += 1
            pend[depth] = plen
            ctl[Ctl.STATUS] = WON
            break
        if tt is not None:
            h1, h2 = state_hash(child, cfg, z, root_redeals)
            if not pair_insert(tt[0], tt[1], h1, h2):
                continue
        if keys is not None:
            col1, col2, wh = frames[6], frames[7], frames[8]
            h1, h2 = child_parts(
                child, parent, cfg, z, root_redeals, col1[depth], col2[depth], wh[depth],
                col1[depth + 1], col2[depth + 1], wh[depth + 1],
            )  # fmt: skip
            if not key_insert(keys, h1, h2):
                continue
        count += 1
        if count >= tt_limit:
            ctl[Ctl.STATUS] = TABLE_FULL
            break
        if prune and blocked_suits(child, cfg):
            continue  # provably lost: nothing below it can win
        depth += 1
        pend[depth] = plen
        if depth > ctl[Ctl.MAX_DEPTH]:
            ctl[Ctl.MAX_DEPTH] = depth
        if tt is not None:
            nmov[depth] = expand(child, cfg, z, root_redeals, tt, work, moves[depth], prune, w)
        if keys is not None:
            nmov[depth] = search_moves(child, cfg, mask, prune, moves[depth])
        nxt[depth] = 0
        if depth >= max_d and nmov[depth] > 0:
            ctl[Ctl.STATUS] = DEPTH_FULL
            break
    ctl[Ctl.DEPTH] = depth
    ctl[Ctl.NODES] = nodes
    ctl[Ctl.TT_COUNT] = count


class DepthFirst(Search):
    """A depth-first search whose stack holds ``max_depth`` positions and whose table fits
    ``budget`` bytes and ``max_nodes``."""

    def __init__(
        self,
        state: GameState,
        z: np.ndarray,
        budget: float,
        max_nodes: int,
        prune: bool,
        max_depth: int,
        table_states: float = float("inf"),
    ):
        super().__init__(state, prune)
        self.start(z, budget, max_nodes, max_depth, table_states)

    def start(self, z: np.ndarray, budget: float, max_nodes: int, max_depth: int, table_states: float) -> None:
        """Allocate the stack and the table, set up the root and ``self.run``."""
        cfg, size, n_act, ctl, prune = self.cfg, self.size, self.n_act, self.ctl, self.prune
        self.name = "dfs"
        m = min(n_act, MAX_FRAME_MOVES)
        stack_bytes = (max_depth + 1) * (size + 2 * m + 12) + 2 * (max_depth + 256)
        # ``table_states``: the most positions it can store in its time (see the prover).
        slots, tt_limit = table_slots(budget, stack_bytes, 16, max_nodes, table_states)
        tt = new_table(slots)
        frames = self.new_frames(max_depth, size, m)
        self.pend, self.path = frames[4], frames[5]  # the line of a win
        work = new_work(size, n_act)
        w = HEURISTICS["balanced"]
        dfs_init(self.state.array, cfg, z, tt, frames, ctl, work, prune, w)

        def run(limit: int) -> None:
            dfs_run(cfg, z, tt, frames, ctl, work, limit, tt_limit, prune, w)

        self.run = run

    @staticmethod
    def new_frames(max_depth: int, size: int, m: int) -> tuple[np.ndarray, ...]:
        """The search stack ``frames = (states, moves, nmov, nxt, pend, path)``, one frame a depth.

        Fields: ``states`` ``(max_depth + 1, size)`` int8, the position at each depth;
        ``moves`` ``(max_depth + 1, m)`` int16, its moves to try, best first; ``nmov`` and
        ``nxt`` ``(max_depth + 1,)`` int32, how many there are and the next to try;
        ``pend`` ``(max_depth + 1,)`` int32, the length of the line down to each depth;
        ``path`` ``(max_depth + 256,)`` int16, that line (searched and safe moves).
        """
        return (
            np.empty((max_depth + 1, size), dtype=np.int8),
            np.zeros((max_depth + 1, m), dtype=np.int16),
            np.zeros(max_depth + 1, dtype=np.int32),
            np.zeros(max_depth + 1, dtype=np.int32),
            np.zeros(max_depth + 1, dtype=np.int32),
            np.zeros(max_depth + 256, dtype=np.int16),
        )

    def line(self) -> np.ndarray:
        return self.path[: self.pend[self.ctl[Ctl.DEPTH]]]
