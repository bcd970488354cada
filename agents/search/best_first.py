"""The best-first search: complete, highest heuristic first, from a bucket queue."""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.hashing import pair_insert
from forty_thieves_env.engine.layout import Cfg
from forty_thieves_env.engine.rules import is_won
from forty_thieves_env.text.game import GameState

from .control import EXHAUSTED, RUNNING, TABLE_FULL, WON, Ctl, Search, new_table, new_work, pow2_at_most
from .heuristics import HEURISTICS, heuristic
from .moves import auto_safe, play_child, search_moves
from .pruning import blocked_suits
from .zobrist import child_hash, hash_parts, new_parts, state_hash

#: Bucket queue of the best-first search: heuristic scores are small integers, so the open
#: positions live in one LIFO list per score (O(1) push and pop, newest first on ties).
N_BUCKETS = 1 << 16
BUCKET_OFFSET = 1 << 15


@njit(cache=True, inline="always")
def _bucket(score):
    b = score + BUCKET_OFFSET
    if b < 0:
        return 0
    if b >= N_BUCKETS:
        return N_BUCKETS - 1
    return b


@njit(cache=True)
def best_init(root, cfg, z, tt, tree, ctl, prune, w):
    """Seed the best-first search with ``root`` (after its safe moves). ``tree`` is
    :meth:`BestFirst.new_tree`'s tuple."""
    k1, k2 = tt
    arena, parent, act, link, head = tree
    scratch = np.zeros(256, np.int16)
    arena[0] = root
    auto_safe(arena[0], cfg, scratch, 0, prune)
    parent[0] = -1
    act[0] = -1
    ctl[Ctl.NODES] = 1
    ctl[Ctl.MAX_DEPTH] = 0
    if is_won(arena[0]):
        ctl[Ctl.STATUS] = WON
        ctl[Ctl.DEPTH] = 0
        return
    h1, h2 = state_hash(arena[0], cfg, z, ctl[Ctl.ROOT_REDEALS])
    pair_insert(k1, k2, h1, h2)
    ctl[Ctl.TT_COUNT] = 1
    head[:] = -1
    b = _bucket(heuristic(arena[0], cfg, w))
    link[0] = -1
    head[b] = 0
    ctl[Ctl.TOP] = b
    ctl[Ctl.OPEN] = 1
    ctl[Ctl.STATUS] = RUNNING


@njit(cache=True)
def best_run(cfg, z, tt, tree, ctl, work, node_limit, tt_limit, prune, w):
    """Continue the best-first search (highest heuristic first) until it ends or
    ``ctl[Ctl.NODES]`` reaches ``node_limit``. Complete: when no open position is left,
    every position the pruning rules keep has been generated (``EXHAUSTED``). On ``WON``
    the winning node is ``ctl[Ctl.DEPTH]``; follow ``parent`` to the root. ``work`` is
    :func:`~agents.search.control.new_work`'s tuple (its ``tmp`` and ``scores`` unused)."""
    if ctl[Ctl.STATUS] != RUNNING:
        return
    k1, k2 = tt
    arena, parent, act, link, head = tree
    mask, _, scratch, _ = work
    root_redeals = ctl[Ctl.ROOT_REDEALS]
    n_act = cfg[Cfg.N_ACTIONS]
    cap = arena.shape[0]
    nodes = ctl[Ctl.NODES]
    count = ctl[Ctl.TT_COUNT]
    top = ctl[Ctl.TOP]
    n_open = ctl[Ctl.OPEN]
    col1, col2, wh = new_parts(cfg)
    todo = np.empty(n_act, dtype=np.int64)
    while nodes < node_limit:
        if n_open == 0:
            ctl[Ctl.STATUS] = EXHAUSTED
            break
        if count + n_act >= cap or count >= tt_limit:
            ctl[Ctl.STATUS] = TABLE_FULL
            break
        while head[top] < 0:
            top -= 1
        idx = head[top]
        head[top] = link[idx]
        n_open -= 1
        s = arena[idx]
        if prune and blocked_suits(s, cfg):
            continue  # provably lost: nothing below it can win
        n = search_moves(s, cfg, mask, prune, todo)
        hash_parts(s, cfg, z, col1, col2, wh)
        for t in range(n):
            a = todo[t]
            child = arena[count]
            play_child(child, s, cfg, a, scratch, prune)
            nodes += 1
            if is_won(child):
                parent[count] = idx
                act[count] = a
                ctl[Ctl.DEPTH] = count
                count += 1
                ctl[Ctl.STATUS] = WON
                break
            h1, h2 = child_hash(child, s, cfg, z, root_redeals, col1, col2, wh)
            if not pair_insert(k1, k2, h1, h2):
                continue
            parent[count] = idx
            act[count] = a
            b = _bucket(heuristic(child, cfg, w))
            link[count] = head[b]
            head[b] = count
            if b > top:
                top = b
            n_open += 1
            count += 1
        if ctl[Ctl.STATUS] == WON:
            break
    ctl[Ctl.NODES] = nodes
    ctl[Ctl.TT_COUNT] = count
    ctl[Ctl.TOP] = top
    ctl[Ctl.OPEN] = n_open


class BestFirst(Search):
    """A best-first search with ``weights`` (a :data:`~agents.search.heuristics.HEURISTICS`
    name) in arrays sized to ``budget`` bytes and ``max_nodes``."""

    def __init__(self, state: GameState, z: np.ndarray, budget: float, max_nodes: int, prune: bool, weights: str):
        super().__init__(state, prune)
        cfg, size, n_act, ctl = self.cfg, self.size, self.n_act, self.ctl
        self.name = f"best/{weights}"
        # Per stored position: the state, parent, move, queue link and ~2 table slots.
        per = size + 4 + 2 + 4 + 2 * 16
        cap = int(min(max(budget / per, 4096), max_nodes + n_act + 1))
        tt = new_table(pow2_at_most(2 * cap))
        tree = self.new_tree(cap, size)
        _, self.parent, self.act, _, _ = tree  # the line of a win
        work = new_work(size, n_act)
        w = HEURISTICS[weights]
        best_init(state.array, cfg, z, tt, tree, ctl, prune, w)

        def run(limit: int) -> None:
            best_run(cfg, z, tt, tree, ctl, work, limit, cap, prune, w)

        self.run = run

    @staticmethod
    def new_tree(cap: int, size: int) -> tuple[np.ndarray, ...]:
        """The stored positions and the open queue, ``tree = (arena, parent, act, link, head)``.

        Fields: ``arena`` ``(cap, size)`` int8, every position generated, in order;
        ``parent`` ``(cap,)`` int32, the index of its parent (-1 at the root); ``act``
        ``(cap,)`` int16, the move from there; ``link`` ``(cap,)`` int32, the next open
        position of its bucket; ``head`` ``(N_BUCKETS,)`` int32, the newest open position of
        each bucket (-1 when empty).
        """
        return (
            np.empty((cap, size), dtype=np.int8),
            np.empty(cap, dtype=np.int32),
            np.empty(cap, dtype=np.int16),
            np.empty(cap, dtype=np.int32),
            np.empty(N_BUCKETS, dtype=np.int32),
        )

    def line(self) -> np.ndarray:
        chosen = []
        node = int(self.ctl[Ctl.DEPTH])
        while self.parent[node] >= 0:
            chosen.append(int(self.act[node]))
            node = int(self.parent[node])
        return self.replay(chosen)
