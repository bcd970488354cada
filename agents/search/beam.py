"""Beam searches of growing width: they only find wins (no ``lost`` verdict)."""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.hashing import pair_contains, pair_insert
from forty_thieves_env.engine.layout import Cfg
from forty_thieves_env.engine.rules import apply_action, is_won
from forty_thieves_env.text.game import GameState

from .control import GAVE_UP, RUNNING, WON, Ctl, Search, new_ctl, new_table, new_work, pow2_at_most
from .heuristics import HEURISTICS, heuristic
from .moves import auto_safe, play_child, search_moves
from .zobrist import child_hash, hash_parts, new_parts, state_hash

#: The heuristics each width runs, in this order. Which deals a beam search wins changes
#: a lot with its heuristic, so in the same time four at each width win more than two
#: (which reach twice the width):
#: a beam search alone at 3 CPU-s wins 102 of classic deals 1..200 and 111 of validation
#: deals 1001..1200 with these four, 99 and 109 with the first two; the portfolio at 10
#: CPU-s wins 109 of 1..200 and 118 of 1001..1200, 106 and 115 with two, but the same 508
#: of 1..1000 (nine gained, nine lost): a small gain (``docs/solver.md``).
BEAM_HEURISTICS = ("balanced", "waste", "balanced+turns", "waste+turns")


@njit(cache=True)
def beam_init(root, cfg, z, tt, beam, ctl, prune):
    """Seed a beam search with ``root`` (after its safe moves) as its only position."""
    k1, k2 = tt
    scratch = np.zeros(256, np.int16)
    beam[0, 0] = root
    auto_safe(beam[0, 0], cfg, scratch, 0, prune)
    ctl[Ctl.NODES] = 1
    ctl[Ctl.LAYER] = 0
    ctl[Ctl.WIDTH] = 1
    ctl[Ctl.DEPTH] = 0
    if is_won(beam[0, 0]):
        ctl[Ctl.STATUS] = WON
        return
    h1, h2 = state_hash(beam[0, 0], cfg, z, ctl[Ctl.ROOT_REDEALS])
    pair_insert(k1, k2, h1, h2)
    ctl[Ctl.TT_COUNT] = 1
    ctl[Ctl.STATUS] = RUNNING


@njit(cache=True)
def beam_run(cfg, z, tt, layers, cand, ctl, work, node_limit, prune, w):
    """Continue a beam search layer by layer until it ends or ``ctl[Ctl.NODES]`` reaches
    ``node_limit`` (checked between layers).

    Layer ``L + 1`` holds the ``width`` best children (heuristic ``w``) of the positions of
    layer ``L`` that the transposition table has not seen; ``par[L + 1]`` / ``act[L + 1]``
    record each one's parent and move. Moves follow the pruning rules of the complete
    searches, but keeping only ``width`` positions a layer cuts the space arbitrarily, so
    a beam search only ever finds wins: when a layer comes out empty (or ``par`` is full)
    it stops with ``GAVE_UP``. On ``WON`` the winning position is child ``ctl[Ctl.DEPTH]``
    of layer ``ctl[Ctl.LAYER]``. ``layers`` and ``cand`` are :meth:`Beam.new_layers`'s and
    :meth:`Beam.new_candidates`' tuples, ``work`` :func:`~agents.search.control.new_work`'s
    (its ``scores`` unused)."""
    if ctl[Ctl.STATUS] != RUNNING:
        return
    k1, k2 = tt
    beam, par, act = layers
    cand_b, cand_a, cand_s, cand_h1, cand_h2 = cand
    mask, tmp, scratch, _ = work
    width = beam.shape[1]
    max_layers = par.shape[0] - 1
    root_redeals = ctl[Ctl.ROOT_REDEALS]
    n_act = cfg[Cfg.N_ACTIONS]
    n_cand_max = cand_b.shape[0]
    nodes = ctl[Ctl.NODES]
    count = ctl[Ctl.TT_COUNT]
    col1, col2, wh = new_parts(cfg)
    todo = np.empty(n_act, dtype=np.int64)
    tt_cap = (k1.shape[0] * 7) // 10
    while nodes < node_limit:
        layer = ctl[Ctl.LAYER]
        if layer >= max_layers:
            ctl[Ctl.STATUS] = GAVE_UP
            break
        cur = beam[layer & 1]
        nxt = beam[(layer + 1) & 1]
        n_cur = ctl[Ctl.WIDTH]
        nc = 0
        won = -1
        for b in range(n_cur):
            s = cur[b]
            n = search_moves(s, cfg, mask, prune, todo)
            hash_parts(s, cfg, z, col1, col2, wh)
            for t in range(n):
                a = todo[t]
                play_child(tmp, s, cfg, a, scratch, prune)
                nodes += 1
                if is_won(tmp):
                    nxt[0] = tmp
                    par[layer + 1, 0] = b
                    act[layer + 1, 0] = a
                    won = 0
                    break
                h1, h2 = child_hash(tmp, s, cfg, z, root_redeals, col1, col2, wh)
                if pair_contains(k1, k2, h1, h2) or nc >= n_cand_max:
                    continue
                cand_b[nc] = b
                cand_a[nc] = a
                cand_s[nc] = -heuristic(tmp, cfg, w)
                cand_h1[nc] = h1
                cand_h2[nc] = h2
                nc += 1
            if won >= 0:
                break
        if won >= 0:
            ctl[Ctl.LAYER] = layer + 1
            ctl[Ctl.DEPTH] = 0
            ctl[Ctl.STATUS] = WON
            break
        order = np.argsort(cand_s[:nc], kind="mergesort")  # stable: ties keep generation order
        q = 0
        for t in range(nc):
            if q >= width:
                break
            c = order[t]
            if not pair_insert(k1, k2, cand_h1[c], cand_h2[c]):
                continue  # a sibling reached the same position
            count += 1
            b = cand_b[c]
            nxt[q] = cur[b]
            apply_action(nxt[q], cfg, cand_a[c])
            auto_safe(nxt[q], cfg, scratch, 0, prune)
            par[layer + 1, q] = b
            act[layer + 1, q] = cand_a[c]
            q += 1
        ctl[Ctl.LAYER] = layer + 1
        ctl[Ctl.WIDTH] = q
        if q == 0 or count >= tt_cap:
            ctl[Ctl.STATUS] = GAVE_UP
            break
    ctl[Ctl.NODES] = nodes
    ctl[Ctl.TT_COUNT] = count


class Beam(Search):
    """Beam searches of growing width, each from the start with a fresh table: widths
    ``128 * 2**k`` (the heuristics of :data:`BEAM_HEURISTICS` in turn at each width) up to
    what the memory allows. Only finds wins; it reports ``GAVE_UP`` after its widest search."""

    MAX_LAYERS = 1000
    CAND_PER_STATE = 64

    def __init__(self, state: GameState, z: np.ndarray, budget: float, prune: bool):
        super().__init__(state, prune)
        self.name = "beam"
        self.z = z
        self.schedule = []
        width = 128
        while self._bytes(width) <= budget or not self.schedule:
            self.schedule += [(width, weights) for weights in BEAM_HEURISTICS]
            width *= 2
        self.done_nodes = 0
        self.round = -1
        self._next()

    def _bytes(self, width: int) -> float:
        slots = pow2_at_most(2 * width * 400)
        return 2 * width * self.size + self.MAX_LAYERS * width * 6 + width * self.CAND_PER_STATE * 30 + slots * 16

    def _next(self) -> None:
        self.round += 1
        width, weights = self.schedule[self.round]
        self.name = f"beam/{width}/{weights}"
        state, cfg, size = self.state, self.cfg, self.size
        tt = new_table(pow2_at_most(2 * width * 400))
        layers = self.new_layers(width, size)
        _, self.par, self.act = layers  # the line of a win
        cand = self.new_candidates(width * self.CAND_PER_STATE)
        work = new_work(size, self.n_act)
        self.ctl = ctl = new_ctl(state)  # each round starts afresh
        w = HEURISTICS[weights]
        beam_init(state.array, cfg, self.z, tt, layers[0], ctl, self.prune)
        self.run_round = lambda limit: beam_run(cfg, self.z, tt, layers, cand, ctl, work, limit, self.prune, w)

    def new_layers(self, width: int, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The layers of a beam ``width`` wide, ``layers = (beam, par, act)``.

        Fields: ``beam`` ``(2, width, size)`` int8, the positions of the current layer and
        of the next (layer ``L`` in ``beam[L & 1]``); ``par`` ``(MAX_LAYERS + 1, width)``
        int32 and ``act`` ``(MAX_LAYERS + 1, width)`` int16, each position's parent in the
        layer before and the move from there.
        """
        return (
            np.empty((2, width, size), dtype=np.int8),
            np.zeros((self.MAX_LAYERS + 1, width), dtype=np.int32),
            np.zeros((self.MAX_LAYERS + 1, width), dtype=np.int16),
        )

    @staticmethod
    def new_candidates(n: int) -> tuple[np.ndarray, ...]:
        """Room for ``n`` children of one layer, ``cand = (cand_b, cand_a, cand_s, cand_h1, cand_h2)``.

        Fields (each ``(n,)``): ``cand_b`` int32, the parent's place in its layer;
        ``cand_a`` int16, the move; ``cand_s`` int64, minus the child's heuristic (the sort
        key); ``cand_h1``, ``cand_h2`` uint64, the child's hash.
        """
        return (
            np.empty(n, dtype=np.int32),
            np.empty(n, dtype=np.int16),
            np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.uint64),
            np.empty(n, dtype=np.uint64),
        )

    def run(self, limit: int) -> None:  # type: ignore[override]
        self.run_round(limit - self.done_nodes)
        if self.ctl[Ctl.STATUS] == GAVE_UP and self.round + 1 < len(self.schedule):
            self.done_nodes += int(self.ctl[Ctl.NODES])
            self._next()

    @property
    def nodes(self) -> int:
        return self.done_nodes + int(self.ctl[Ctl.NODES])

    def line(self) -> np.ndarray:
        layer = int(self.ctl[Ctl.LAYER])
        q = int(self.ctl[Ctl.DEPTH])
        chosen = []
        while layer > 0:
            chosen.append(int(self.act[layer, q]))
            q = int(self.par[layer, q])
            layer -= 1
        return self.replay(chosen)
