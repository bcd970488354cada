"""Numba kernels of the perfect-information solver (:mod:`agents.solver`).

Only *search* machinery lives here: canonical hashing, the transposition table, move
ordering, the explicit-stack depth-first search and dead-position tests. Every rule of the
game (legal moves, applying a move, safe foundation moves, winning) comes from the engine
kernels in :mod:`forty_thieves_env.rules`; these helpers only read the state array.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from forty_thieves_env.engine.actions import KIND_COLUMN_COLUMN, KIND_WASTE_COLUMN, column_to_foundation, decode
from forty_thieves_env.engine.cards import N_CODES, N_RANKS
from forty_thieves_env.engine.layout import (
    CFG_ALTERNATE,
    CFG_COLUMNS,
    CFG_DEPTH,
    CFG_MAX_RUN,
    CFG_N_ACTIONS,
    CFG_OFF_DOWN,
    CFG_OFF_LEN,
    CFG_OFF_STOCK,
    CFG_OFF_TAB,
    CFG_OFF_WASTE,
    CFG_STOCK,
    S_FOUND,
    S_REDEALS,
    S_STOCK_LEN,
    S_WASTE_LEN,
)
from forty_thieves_env.engine.rules import apply_action, fits, is_safe, is_won, legal_mask

#: Heuristic weights (cards home, empty columns, blocking column cards, column cards not on a
#: card they build on, blocking waste cards, waste length, burial of the next cards needed).
#: ``balanced`` weighs the tableau; ``waste`` weighs the waste, which a single pass through
#: the stock makes the usual cause of a loss. Each finds wins the other misses.
HEURISTICS = {
    "balanced": np.array([20, 20, 10, 3, 10, 2, 2], dtype=np.int64),
    "waste": np.array([10, 10, 3, 1, 20, 5, 1], dtype=np.int64),
}

# Search status codes (ctl[C_STATUS]).
RUNNING = 0
WON = 1
EXHAUSTED = 2
TABLE_FULL = 3
DEPTH_FULL = 4
#: A search that only finds wins (the beam search) ran out of positions: no verdict.
GAVE_UP = 5

# Slots of the int64 control array that carries the search between chunks.
C_DEPTH = 0
C_NODES = 1
C_STATUS = 2
C_TT_COUNT = 3
C_MAX_DEPTH = 4
C_ROOT_REDEALS = 5
C_TOP = 7  # best-first: highest bucket that may be non-empty
C_OPEN = 8  # best-first: open positions
C_LEN = 9

#: Most moves one frame can hold (moves to empty columns go to the first one only).
MAX_FRAME_MOVES = 256

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


# ----------------------------------------------------------------------------- hashing


def zobrist_size(depth: int, stock: int) -> int:
    """Entries of one Zobrist table for column capacity ``depth`` and stock size ``stock``."""
    return depth * N_CODES + depth + 1 + 2 * stock * N_CODES + stock + 1 + 128


def make_zobrist(depth: int, stock: int, seed: int = 0x5EED_F0A7) -> np.ndarray:
    """``(2, n)`` uint64 random tables: two independent 64-bit halves of a 128-bit hash."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, np.iinfo(np.uint64).max, size=(2, zobrist_size(depth, stock)), dtype=np.uint64)


@njit(cache=True, inline="always")
def _mix(z):
    """splitmix64's finaliser: a bijection of uint64 that scrambles every bit."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def column_hash(s, cfg, z, i):
    """The mixed Zobrist hash ``(x1, x2)`` of column ``i`` alone; ``(0, 0)`` when empty."""
    n = s[cfg[CFG_OFF_LEN] + i]
    if n == 0:
        return np.uint64(0), np.uint64(0)
    d = cfg[CFG_DEPTH]
    k = d * N_CODES + s[cfg[CFG_OFF_DOWN] + i]
    x1 = z[0, k]
    x2 = z[1, k]
    base = cfg[CFG_OFF_TAB] + i * d
    for p in range(n):
        k = p * N_CODES + s[base + p]
        x1 ^= z[0, k]
        x2 ^= z[1, k]
    return _mix(x1), _mix(x2)


@njit(cache=True)
def waste_hash(s, cfg, z, lo, hi):
    """XOR of the Zobrist terms of waste slots ``lo..hi-1`` of ``s``."""
    d = cfg[CFG_DEPTH]
    off_waste_z = d * N_CODES + d + 1
    off_w = cfg[CFG_OFF_WASTE]
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    for p in range(lo, hi):
        k = off_waste_z + p * N_CODES + s[off_w + p]
        h1 ^= z[0, k]
        h2 ^= z[1, k]
    return h1, h2


@njit(cache=True)
def _stock_hash(s, cfg, z, root_redeals):
    d = cfg[CFG_DEPTH]
    t = cfg[CFG_STOCK]
    off_stock_z = d * N_CODES + d + 1 + t * N_CODES
    off_slen_z = off_stock_z + t * N_CODES
    off_red_z = off_slen_z + t + 1
    sl = s[S_STOCK_LEN]
    red = s[S_REDEALS]
    h1 = z[0, off_slen_z + sl] ^ z[0, off_red_z + red]
    h2 = z[1, off_slen_z + sl] ^ z[1, off_red_z + red]
    if red != root_redeals:
        off_st = cfg[CFG_OFF_STOCK]
        for p in range(sl):
            k = off_stock_z + p * N_CODES + s[off_st + p]
            h1 ^= z[0, k]
            h2 ^= z[1, k]
    return h1, h2


@njit(cache=True)
def state_hash(s, cfg, z, root_redeals):
    """128-bit hash ``(h1, h2)`` of the *canonical* position of ``s``.

    Canonical: the columns are taken as a multiset (each column's own hash is mixed and the
    results are added, which does not depend on the column order), so permuted columns and
    in particular interchangeable empty columns hash alike; the two copies of a card share
    one code, so swapping them changes nothing. The waste and stock are hashed position by
    position. While no redeal has been used since the root (``redeals left ==
    root_redeals``), the stock is a prefix of the root's stock and its length identifies
    it. Foundations are a function of where the other cards are, so they need no term.
    """
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    for i in range(cfg[CFG_COLUMNS]):
        x1, x2 = column_hash(s, cfg, z, i)
        h1 += x1
        h2 += x2
    w1, w2 = waste_hash(s, cfg, z, 0, s[S_WASTE_LEN])
    t1, t2 = _stock_hash(s, cfg, z, root_redeals)
    return h1 ^ w1 ^ t1, (h2 ^ w2 ^ t2) | np.uint64(1)  # h2 == 0 marks an empty table slot


@njit(cache=True)
def hash_parts(s, cfg, z, col1, col2, wh):
    """Fill ``col1``/``col2`` with every column's hash and ``wh`` with the waste's, the
    parts :func:`child_hash` reuses for the children of ``s``."""
    for i in range(cfg[CFG_COLUMNS]):
        col1[i], col2[i] = column_hash(s, cfg, z, i)
    wh[0], wh[1] = waste_hash(s, cfg, z, 0, s[S_WASTE_LEN])


@njit(cache=True)
def child_hash(child, parent, cfg, z, root_redeals, col1, col2, wh):
    """:func:`state_hash` of ``child``, a position one move (and its safe moves) away from
    ``parent`` whose parts :func:`hash_parts` computed, recomputing only what changed.

    A move and the safe moves after it only push cards on and pop cards off the ends of
    columns and of the waste, one push at most, before any pop. So a column whose length
    did not change holds the same cards (pushed cards popped again, if any), and the waste
    slots below ``min`` of the two waste lengths are unchanged: only the other columns and
    slots are rehashed. ``tests/test_solver.py`` checks it against :func:`state_hash`.
    """
    off_len = cfg[CFG_OFF_LEN]
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    for i in range(cfg[CFG_COLUMNS]):
        if child[off_len + i] == parent[off_len + i]:
            h1 += col1[i]
            h2 += col2[i]
        else:
            x1, x2 = column_hash(child, cfg, z, i)
            h1 += x1
            h2 += x2
    wp = parent[S_WASTE_LEN]
    wc = child[S_WASTE_LEN]
    m = min(wp, wc)
    w1 = wh[0]
    w2 = wh[1]
    if wp > m:
        a1, a2 = waste_hash(parent, cfg, z, m, wp)
        w1 ^= a1
        w2 ^= a2
    if wc > m:
        a1, a2 = waste_hash(child, cfg, z, m, wc)
        w1 ^= a1
        w2 ^= a2
    t1, t2 = _stock_hash(child, cfg, z, root_redeals)
    return h1 ^ w1 ^ t1, (h2 ^ w2 ^ t2) | np.uint64(1)


# ------------------------------------------------------------------ transposition table


@njit(cache=True)
def tt_find(k1, k2, h1, h2):
    """Whether ``(h1, h2)`` is in the open-addressing table ``(k1, k2)``."""
    mask = k1.shape[0] - 1
    idx = h1 & mask
    while k2[idx] != 0:
        if k1[idx] == h1 and k2[idx] == h2:
            return True
        idx = (idx + 1) & mask
    return False


@njit(cache=True)
def tt_insert(k1, k2, h1, h2):
    """Insert ``(h1, h2)``; return False when it was already there."""
    mask = k1.shape[0] - 1
    idx = h1 & mask
    while k2[idx] != 0:
        if k1[idx] == h1 and k2[idx] == h2:
            return False
        idx = (idx + 1) & mask
    k1[idx] = h1
    k2[idx] = h2
    return True


# ------------------------------------------------------------------------ safe moves


@njit(cache=True)
def auto_safe(s, cfg, path, plen, prune=True):
    """Play every safe foundation move (engine's :func:`~forty_thieves_env.rules.is_safe`).

    Each move is played with the engine's ``apply_action`` and appended to ``path`` at
    ``plen``; returns the new path length. Safe moves lose nothing (see the solver docs),
    so the search takes them without branching.
    """
    if not prune:
        return plen
    c = cfg[CFG_COLUMNS]
    d = cfg[CFG_DEPTH]
    off_len = cfg[CFG_OFF_LEN]
    off_tab = cfg[CFG_OFF_TAB]
    off_w = cfg[CFG_OFF_WASTE]
    changed = True
    while changed:
        changed = False
        wl = s[S_WASTE_LEN]
        if wl > 0 and is_safe(s, cfg, s[off_w + wl - 1]):
            apply_action(s, cfg, 1)
            path[plen] = 1
            plen += 1
            changed = True
        for i in range(c):
            n = s[off_len + i]
            if n > 0 and is_safe(s, cfg, s[off_tab + i * d + n - 1]):
                a = column_to_foundation(cfg, i)
                apply_action(s, cfg, a)
                path[plen] = a
                plen += 1
                changed = True
    return plen


# ------------------------------------------------------------------------ heuristics


@njit(cache=True)
def heuristic(s, cfg, w):
    """Move-ordering score of a position, higher first. It only orders the search; it
    never prunes, so it plays no part in the soundness of a ``lost`` verdict.

    A weighted sum (weights ``w``, see :data:`HEURISTICS`): rewards cards home and empty
    columns; penalises cards lying above a lower card in their column and in the waste (they
    must move before it can go home), column cards not on a card they build on, the
    waste's length, and how deeply the cards the foundations need next (ranks up to one
    above each suit's lower pile) are buried.
    """
    c = cfg[CFG_COLUMNS]
    d = cfg[CFG_DEPTH]
    off_len = cfg[CFG_OFF_LEN]
    off_tab = cfg[CFG_OFF_TAB]
    off_w = cfg[CFG_OFF_WASTE]
    home = 0
    for p in range(S_FOUND, S_FOUND + 8):
        home += s[p]
    n0 = s[S_FOUND + 1]
    n1 = s[S_FOUND + 3]
    n2 = s[S_FOUND + 5]
    n3 = s[S_FOUND + 7]
    block = 0
    empties = 0
    unbuilt = 0
    deep = 0
    for i in range(c):
        n = s[off_len + i]
        if n == 0:
            empties += 1
            continue
        base = off_tab + i * d
        low = N_RANKS
        for p in range(n):
            cd = s[base + p]
            r = cd % N_RANKS
            if r > low:
                block += 1
            elif r < low:
                low = r
            if p > 0 and not fits(cfg, cd, s[base + p - 1]):
                unbuilt += 1
            su = cd // N_RANKS
            need = n0 if su == 0 else n1 if su == 1 else n2 if su == 2 else n3
            if r <= need + 1:
                deep += n - 1 - p
    wl = s[S_WASTE_LEN]
    low = N_RANKS
    wblock = 0
    for p in range(wl):
        cd = s[off_w + p]
        r = cd % N_RANKS
        if r > low:
            wblock += 1
        elif r < low:
            low = r
        su = cd // N_RANKS
        need = n0 if su == 0 else n1 if su == 1 else n2 if su == 2 else n3
        if r <= need + 1:
            deep += wl - 1 - p
    return w[0] * home + w[1] * empties - w[2] * block - w[3] * unbuilt - w[4] * wblock - w[5] * wl - w[6] * deep


@njit(cache=True)
def _first_empty(s, cfg):
    off_len = cfg[CFG_OFF_LEN]
    for i in range(cfg[CFG_COLUMNS]):
        if s[off_len + i] == 0:
            return i
    return -1


@njit(cache=True)
def keep_move(s, cfg, kind, i, j, k, first_empty, prune=True):
    """Symmetry pruning: of the moves into empty columns keep those into the first one
    (the columns are a multiset, so the others give the same position), and never move
    a whole column into an empty column (the same position again)."""
    if prune and kind in (KIND_WASTE_COLUMN, KIND_COLUMN_COLUMN):
        off_len = cfg[CFG_OFF_LEN]
        if s[off_len + j] == 0:
            if j != first_empty:
                return False
            if kind == KIND_COLUMN_COLUMN and s[off_len + i] == k:
                return False
    return True


@njit(cache=True)
def blocked_suits(s, cfg):
    """Whether ``s`` is provably lost by *blocked suits* (see the solver docs, rule 6).

    Only for suit building with single-card moves (classic, limited) and no empty column.
    Computes, as a greatest fixpoint, a set ``P`` of *pinned* cards (column cards, and
    waste cards once no redeal is left) and a set ``T`` of *trapped* cards (both copies
    pinned and each covered by a pinned card above it in its pile). Start with everything
    pinned; unpin an uncovered card that could go home without a trapped card of its suit
    below its rank going home first, or that could go onto a column card (a copy of the
    card one rank up not home, not covered by a pinned card, and not a pinned waste card);
    repeat until nothing changes. Dead when ``T`` is not empty and every column holds a
    pinned card. Returns False whenever it cannot show that.
    """
    if cfg[CFG_ALTERNATE] != 0 or cfg[CFG_MAX_RUN] != 1:
        return False
    c = cfg[CFG_COLUMNS]
    d = cfg[CFG_DEPTH]
    off_len = cfg[CFG_OFF_LEN]
    off_tab = cfg[CFG_OFF_TAB]
    for i in range(c):
        if s[off_len + i] == 0:
            return False
    wl = s[S_WASTE_LEN] if s[S_REDEALS] == 0 else 0
    n_slots = c * d + wl
    # Slots: column i position p is i*d + p; waste position p is c*d + p (bottom first).
    code = np.full(n_slots, -1, dtype=np.int64)
    where = np.full((N_CODES, 2), -1, dtype=np.int64)  # the slots of each card's copies
    for i in range(c):
        for p in range(s[off_len + i]):
            x = s[off_tab + i * d + p]
            code[i * d + p] = x
            where[x, 0 if where[x, 0] < 0 else 1] = i * d + p
    off_w = cfg[CFG_OFF_WASTE]
    for p in range(wl):
        x = s[off_w + p]
        code[c * d + p] = x
        where[x, 0 if where[x, 0] < 0 else 1] = c * d + p
    pinned = code >= 0
    covered = np.zeros(n_slots, dtype=np.bool_)
    trapped = np.zeros(N_CODES, dtype=np.bool_)
    changed = True
    while changed:
        changed = False
        # covered: a pinned card lies above, in the same pile
        for i in range(c + 1):
            lo = i * d
            n = s[off_len + i] if i < c else wl
            above = False
            for p in range(n - 1, -1, -1):
                covered[lo + p] = above
                if pinned[lo + p]:
                    above = True
        any_trapped = False
        for x in range(N_CODES):
            a = where[x, 0]
            b = where[x, 1]
            trapped[x] = a >= 0 and b >= 0 and pinned[a] and pinned[b] and covered[a] and covered[b]
            any_trapped |= trapped[x]
        if not any_trapped:
            return False  # T only shrinks
        # Unpin pile by pile from the top, so that a card uncovered in this pass is tested
        # in it too. (Targets use this pass's ``covered``; the last pass changes nothing,
        # so there every test used up-to-date sets.)
        for i in range(c + 1):
            lo = i * d
            n = s[off_len + i] if i < c else wl
            above = False
            for p in range(n - 1, -1, -1):
                q = lo + p
                if not pinned[q]:
                    continue
                if above:
                    continue
                x = code[q]
                su = x // N_RANKS
                r = x % N_RANKS
                keep = False
                for r2 in range(r):
                    if trapped[su * N_RANKS + r2]:
                        keep = True  # it cannot go home first
                        break
                if keep and r < N_RANKS - 1:
                    y = x + 1
                    blocked = 0
                    for f in range(S_FOUND + 2 * su, S_FOUND + 2 * su + 2):
                        if s[f] > r + 1:
                            blocked += 1
                    for e in range(2):
                        v = where[y, e]
                        if v >= 0 and (covered[v] or (pinned[v] and v >= c * d)):
                            blocked += 1
                    keep = blocked >= 2
                if keep:
                    above = True
                else:
                    pinned[q] = False
                    changed = True
            if i < c and not above:
                return False  # a column without a pinned card: P only shrinks
    return True


@njit(cache=True)
def stock_only(s, mask, prune):
    """The stock-turn reduction: with the waste empty, turning the stock commutes with
    every other legal move and nothing else can touch the waste, so the turn alone is a
    persistent set (see the solver docs). Returns whether it applied (``mask`` cut)."""
    if prune and mask[0] and s[S_WASTE_LEN] == 0:
        mask[:] = False
        mask[0] = True
        return True
    return False


@njit(cache=True)
def search_moves(s, cfg, mask, prune, out):
    """The moves of ``s`` a search tries, in action order, written to ``out``; returns how many.

    The legal moves less the pruned ones (:func:`stock_only`, the :func:`keep_move`
    symmetries); every search generates children from this one list.
    """
    legal_mask(s, cfg, mask)
    stock_only(s, mask, prune)
    first_empty = _first_empty(s, cfg)
    m = 0
    for a in range(cfg[CFG_N_ACTIONS]):
        if mask[a]:
            kind, i, j, k = decode(cfg, a)
            if keep_move(s, cfg, kind, i, j, k, first_empty, prune):
                out[m] = a
                m += 1
    return m


@njit(cache=True, inline="always")
def play_child(child, s, cfg, a, scratch, prune):
    """``child`` becomes ``s`` after move ``a`` and then every safe move."""
    child[:] = s
    apply_action(child, cfg, a)
    auto_safe(child, cfg, scratch, 0, prune)


@njit(cache=True)
def expand(s, cfg, z, root_redeals, k1, k2, mask, tmp, scratch, out_moves, out_scores, prune, w):
    """Fill ``out_moves`` with the moves of ``s`` worth searching, best first; return how
    many. Pruned: :func:`keep_move` symmetries and :func:`stock_only`; children already
    in the transposition table are skipped (a win comes first)."""
    c = cfg[CFG_COLUMNS]
    col1 = np.empty(c, dtype=np.uint64)
    col2 = np.empty(c, dtype=np.uint64)
    wh = np.empty(2, dtype=np.uint64)
    todo = np.empty(cfg[CFG_N_ACTIONS], dtype=np.int64)
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
            if tt_find(k1, k2, h1, h2):
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
def dfs_init(root, cfg, z, k1, k2, states, moves, nmov, nxt, pend, path, ctl, mask, tmp, scratch, scores, prune, w):
    """Set up the depth-first search at ``root``: safe moves, the root's hash, its moves."""
    st = states[0]
    st[:] = root
    pend[0] = auto_safe(st, cfg, path, 0, prune)
    ctl[C_DEPTH] = 0
    ctl[C_NODES] = 1
    ctl[C_MAX_DEPTH] = 0
    if is_won(st):
        ctl[C_STATUS] = WON
        return
    h1, h2 = state_hash(st, cfg, z, ctl[C_ROOT_REDEALS])
    tt_insert(k1, k2, h1, h2)
    ctl[C_TT_COUNT] = 1
    nmov[0] = expand(st, cfg, z, ctl[C_ROOT_REDEALS], k1, k2, mask, tmp, scratch, moves[0], scores, prune, w)
    nxt[0] = 0
    ctl[C_STATUS] = RUNNING


@njit(cache=True)
def dfs_run(
    cfg,
    z,
    k1,
    k2,
    states,
    moves,
    nmov,
    nxt,
    pend,
    path,
    ctl,
    mask,
    tmp,
    scratch,
    scores,
    node_limit,
    tt_limit,
    prune,
    w,
):
    """Continue the depth-first search until it ends or ``ctl[C_NODES]`` reaches
    ``node_limit``. Resumable: everything lives in the arrays. On ``WON`` the winning
    line is ``path[:pend[ctl[C_DEPTH]]]``."""
    if ctl[C_STATUS] != RUNNING:
        return
    root_redeals = ctl[C_ROOT_REDEALS]
    max_d = states.shape[0] - 1
    depth = ctl[C_DEPTH]
    nodes = ctl[C_NODES]
    count = ctl[C_TT_COUNT]
    while nodes < node_limit:
        if nxt[depth] >= nmov[depth]:
            if depth == 0:
                ctl[C_STATUS] = EXHAUSTED
                break
            depth -= 1
            continue
        a = moves[depth, nxt[depth]]
        nxt[depth] += 1
        child = states[depth + 1]
        child[:] = states[depth]
        plen = pend[depth]
        path[plen] = a
        apply_action(child, cfg, a)
        plen = auto_safe(child, cfg, path, plen + 1, prune)
        nodes += 1
        if is_won(child):
            depth += 1
            pend[depth] = plen
            ctl[C_STATUS] = WON
            break
        h1, h2 = state_hash(child, cfg, z, root_redeals)
        if not tt_insert(k1, k2, h1, h2):
            continue
        count += 1
        if count >= tt_limit:
            ctl[C_STATUS] = TABLE_FULL
            break
        if prune and blocked_suits(child, cfg):
            continue  # provably lost: nothing below it can win
        depth += 1
        pend[depth] = plen
        if depth > ctl[C_MAX_DEPTH]:
            ctl[C_MAX_DEPTH] = depth
        nmov[depth] = expand(child, cfg, z, root_redeals, k1, k2, mask, tmp, scratch, moves[depth], scores, prune, w)
        nxt[depth] = 0
        if depth >= max_d and nmov[depth] > 0:
            ctl[C_STATUS] = DEPTH_FULL
            break
    ctl[C_DEPTH] = depth
    ctl[C_NODES] = nodes
    ctl[C_TT_COUNT] = count


# ----------------------------------------------------------------------- best-first


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
def best_init(root, cfg, z, k1, k2, arena, parent, act, link, head, ctl, prune, w):
    """Seed the best-first search with ``root`` (after its safe moves)."""
    scratch = np.zeros(256, np.int16)
    arena[0] = root
    auto_safe(arena[0], cfg, scratch, 0, prune)
    parent[0] = -1
    act[0] = -1
    ctl[C_NODES] = 1
    ctl[C_MAX_DEPTH] = 0
    if is_won(arena[0]):
        ctl[C_STATUS] = WON
        ctl[C_DEPTH] = 0
        return
    h1, h2 = state_hash(arena[0], cfg, z, ctl[C_ROOT_REDEALS])
    tt_insert(k1, k2, h1, h2)
    ctl[C_TT_COUNT] = 1
    head[:] = -1
    b = _bucket(heuristic(arena[0], cfg, w))
    link[0] = -1
    head[b] = 0
    ctl[C_TOP] = b
    ctl[C_OPEN] = 1
    ctl[C_STATUS] = RUNNING


@njit(cache=True)
def best_run(cfg, z, k1, k2, arena, parent, act, link, head, ctl, mask, scratch, node_limit, tt_limit, prune, w):
    """Continue the best-first search (highest heuristic first) until it ends or
    ``ctl[C_NODES]`` reaches ``node_limit``. Complete: when no open position is left,
    every position the pruning rules keep has been generated (``EXHAUSTED``). On ``WON``
    the winning node is ``ctl[C_DEPTH]``; follow ``parent`` to the root."""
    if ctl[C_STATUS] != RUNNING:
        return
    root_redeals = ctl[C_ROOT_REDEALS]
    n_act = cfg[CFG_N_ACTIONS]
    cap = arena.shape[0]
    nodes = ctl[C_NODES]
    count = ctl[C_TT_COUNT]
    top = ctl[C_TOP]
    n_open = ctl[C_OPEN]
    col1 = np.zeros(cfg[CFG_COLUMNS], dtype=np.uint64)
    col2 = np.zeros(cfg[CFG_COLUMNS], dtype=np.uint64)
    wh = np.zeros(2, dtype=np.uint64)
    todo = np.empty(n_act, dtype=np.int64)
    while nodes < node_limit:
        if n_open == 0:
            ctl[C_STATUS] = EXHAUSTED
            break
        if count + n_act >= cap or count >= tt_limit:
            ctl[C_STATUS] = TABLE_FULL
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
                ctl[C_DEPTH] = count
                count += 1
                ctl[C_STATUS] = WON
                break
            h1, h2 = child_hash(child, s, cfg, z, root_redeals, col1, col2, wh)
            if not tt_insert(k1, k2, h1, h2):
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
        if ctl[C_STATUS] == WON:
            break
    ctl[C_NODES] = nodes
    ctl[C_TT_COUNT] = count
    ctl[C_TOP] = top
    ctl[C_OPEN] = n_open


@njit(cache=True)
def replay_line(root, cfg, actions, out, prune):
    """The full move list from ``root``: the chosen ``actions`` with every safe move the
    search took after each of them (and before the first). Returns its length."""
    s = root.copy()
    n = auto_safe(s, cfg, out, 0, prune)
    for a in actions:
        out[n] = a
        apply_action(s, cfg, a)
        n = auto_safe(s, cfg, out, n + 1, prune)
    return n


# ----------------------------------------------------------------------------- beam

# Slots of the beam search's ctl (it shares C_NODES, C_STATUS, C_TT_COUNT, C_DEPTH).
C_LAYER = 7  # layers done
C_WIDTH = 8  # positions in the current layer


@njit(cache=True)
def beam_init(root, cfg, z, k1, k2, beam, ctl, prune):
    """Seed a beam search with ``root`` (after its safe moves) as its only position."""
    scratch = np.zeros(256, np.int16)
    beam[0, 0] = root
    auto_safe(beam[0, 0], cfg, scratch, 0, prune)
    ctl[C_NODES] = 1
    ctl[C_LAYER] = 0
    ctl[C_WIDTH] = 1
    ctl[C_DEPTH] = 0
    if is_won(beam[0, 0]):
        ctl[C_STATUS] = WON
        return
    h1, h2 = state_hash(beam[0, 0], cfg, z, ctl[C_ROOT_REDEALS])
    tt_insert(k1, k2, h1, h2)
    ctl[C_TT_COUNT] = 1
    ctl[C_STATUS] = RUNNING


@njit(cache=True)
def beam_run(cfg, z, k1, k2, beam, par, act, cand_b, cand_a, cand_s, cand_h1, cand_h2, ctl, mask, node_limit, prune, w):
    """Continue a beam search layer by layer until it ends or ``ctl[C_NODES]`` reaches
    ``node_limit`` (checked between layers).

    Layer ``L + 1`` holds the ``width`` best children (heuristic ``w``) of the positions of
    layer ``L`` that the transposition table has not seen; ``par[L + 1]`` / ``act[L + 1]``
    record each one's parent and move. Moves follow the pruning rules of the complete
    searches, but keeping only ``width`` positions a layer cuts the space arbitrarily, so
    a beam search only ever finds wins: when a layer comes out empty (or ``par`` is full)
    it stops with ``GAVE_UP``. On ``WON`` the winning position is child ``ctl[C_DEPTH]``
    of layer ``ctl[C_LAYER]``."""
    if ctl[C_STATUS] != RUNNING:
        return
    width = beam.shape[1]
    max_layers = par.shape[0] - 1
    root_redeals = ctl[C_ROOT_REDEALS]
    n_act = cfg[CFG_N_ACTIONS]
    n_cand_max = cand_b.shape[0]
    nodes = ctl[C_NODES]
    count = ctl[C_TT_COUNT]
    col1 = np.zeros(cfg[CFG_COLUMNS], dtype=np.uint64)
    col2 = np.zeros(cfg[CFG_COLUMNS], dtype=np.uint64)
    wh = np.zeros(2, dtype=np.uint64)
    scratch = np.zeros(256, np.int16)
    tmp = np.empty(beam.shape[2], dtype=np.int8)
    todo = np.empty(n_act, dtype=np.int64)
    tt_cap = (k1.shape[0] * 7) // 10
    while nodes < node_limit:
        layer = ctl[C_LAYER]
        if layer >= max_layers:
            ctl[C_STATUS] = GAVE_UP
            break
        cur = beam[layer & 1]
        nxt = beam[(layer + 1) & 1]
        n_cur = ctl[C_WIDTH]
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
                if tt_find(k1, k2, h1, h2) or nc >= n_cand_max:
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
            ctl[C_LAYER] = layer + 1
            ctl[C_DEPTH] = 0
            ctl[C_STATUS] = WON
            break
        order = np.argsort(cand_s[:nc], kind="mergesort")  # stable: ties keep generation order
        q = 0
        for t in range(nc):
            if q >= width:
                break
            c = order[t]
            if not tt_insert(k1, k2, cand_h1[c], cand_h2[c]):
                continue  # a sibling reached the same position
            count += 1
            b = cand_b[c]
            nxt[q] = cur[b]
            apply_action(nxt[q], cfg, cand_a[c])
            auto_safe(nxt[q], cfg, scratch, 0, prune)
            par[layer + 1, q] = b
            act[layer + 1, q] = cand_a[c]
            q += 1
        ctl[C_LAYER] = layer + 1
        ctl[C_WIDTH] = q
        if q == 0 or count >= tt_cap:
            ctl[C_STATUS] = GAVE_UP
            break
    ctl[C_NODES] = nodes
    ctl[C_TT_COUNT] = count
