"""The relaxed game: a small over-approximation of a position whose loss proves the real loss.

Rule 7 of the solver (see :mod:`agents.search.solver`). In the relaxed game

* each column is its *prefix*, the cards it holds now, which leave from the top only;
* the waste and the stock keep their order (the stock is turned one card at a time, and
  only the waste's top card can leave);
* a card moved onto a card one rank up in its suit joins the *pool*: it is free from then on
  (it can go home at any time and serves as the card to build on for the card one rank
  below), whatever would lie on it in the real game;
* a card moved into an empty column is a *head*: it holds that column until it goes home or
  into the pool; a column is empty when its prefix is and no head holds it;
* nothing is ever moved off a foundation, and the piles are real (two per suit).

Every real line maps to a relaxed one: a real move onto a card one rank up needs that card on
top of a column, which in the relaxed game is a prefix's top card, a head or a pool card;
a move into an empty column needs one, and the relaxed game counts at most as many columns
held as the real one (a real run moved into an empty column stays in the pool here). So when
the relaxed game from ``s`` cannot be won, neither can ``s``.

The relaxed game is searched depth-first with its own small transposition table, after a
*closure* that is played without branching: every uncovered card (a prefix's top, the
waste's top, a head) with a free card one rank up goes into the pool. That loses nothing in
the relaxed game: a pool card can do whatever it could do before, and the card under it is
uncovered. Pool cards go home *lazily*, only as the cards a home move needs (a pool card
that went home earlier would only stop being a card to build on). What is left to choose is
when to turn the stock, which card goes into an empty column, and which card goes home on
which pile. A relaxed position is small (no order among pool cards), so this search is far
smaller than the real one; it is cut at ``budget`` positions and then proves nothing.

Only for single-card moves, suit building and no redeal left (a redeal puts the waste back
into the stock, which the relaxed game does not model); elsewhere :func:`relaxed_dead` is
False.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
from numba import njit

from agents.hashing import key_insert
from forty_thieves_env.engine.cards import N_CODES, N_RANKS
from forty_thieves_env.engine.layout import Cfg, Slot

#: Most stock and waste cards a relaxed position holds (the largest preset stock is 68).
MAX_PILE = 72
#: Most children one relaxed position has: a turn, and for each uncovered card (columns,
#: waste top, heads: 25 at most with 12 columns) a head and two home moves.
MAX_CHILDREN = 96
#: Positions of the relaxed search from a position the prover enters after a stock turn.
TURN_BUDGET = 2000
#: The prover earns this many relaxed positions for each position it generates, and runs a
#: relaxed search after a turn only with ``TURN_BUDGET`` of them in hand: so the relaxed
#: searches take about twice as many positions as the prover itself (a relaxed position is
#: cheaper), however rarely they succeed.
RELAX_RATE = 2
#: The most relaxed positions the prover holds in hand, and what it starts with: the first
#: turns of its line are tested, where a dead one cuts the most.
CREDIT_CAP = 100 * TURN_BUDGET
#: Positions of the relaxed search from the prover's root (about a CPU-second at most).
ROOT_BUDGET = 1_000_000


class R(IntEnum):
    """Slots of a relaxed position (one int16 array), after its C prefix lengths (slots
    ``0..C-1``): ``r[c + R.WASTE_LEN]``; the pool's 52 counts start at ``2 * c + R.POOL``."""

    TURNED = 0  # stock cards turned so far (the stock: the search's ``stock``, in turning order)
    WASTE_LEN = 1  # cards in the waste
    HEADS_LEN = 2  # heads held
    FOUND = 3  # (8,) foundation heights, two piles a suit
    WASTE = 11  # (MAX_PILE,) the waste, bottom first
    HEADS = 11 + MAX_PILE  # (C,) the heads' cards
    POOL = 11 + MAX_PILE  # (52,) pool count of each card code, at 2 * C + POOL


def relaxed_size(columns: int) -> int:
    """Length of a relaxed position's array for ``columns`` columns."""
    return 2 * columns + R.POOL + N_CODES


def zobrist_size(columns: int) -> int:
    """Entries of the relaxed search's Zobrist table."""
    return columns * 32 + (MAX_PILE + 1) + MAX_PILE * N_CODES + 2 * N_CODES + 4 * 14 * 14


@njit(cache=True)
def relaxed_hash(r, c, z):
    """64-bit hash of relaxed position ``r`` (the pool follows from the rest)."""
    h = np.uint64(0)
    for i in range(c):
        h ^= z[i * 32 + r[i]]  # a column holds at most 16 cards in every preset
    at = c * 32
    h ^= z[at + r[c + R.TURNED]]
    at += MAX_PILE + 1
    for p in range(r[c + R.WASTE_LEN]):
        h ^= z[at + p * N_CODES + r[c + R.WASTE + p]]
    at += MAX_PILE * N_CODES
    for k in range(r[c + R.HEADS_LEN]):  # a multiset: summed, so the order of the heads does not matter
        x = r[c + R.HEADS + k]
        h += z[at + x] * np.uint64(0x9E3779B97F4A7C15) + z[at + N_CODES + x]
    at += 2 * N_CODES
    for su in range(4):  # the two piles of a suit as a multiset
        a = r[c + R.FOUND + 2 * su]
        b = r[c + R.FOUND + 2 * su + 1]
        if a < b:
            a, b = b, a
        h ^= z[at + su * 196 + a * 14 + b]
    return h


@njit(cache=True)
def _parent_free(r, c, cols, x):
    """A copy of the card one rank up from ``x`` is free to build on: in the pool, a head or
    a prefix's top card."""
    if x % N_RANKS == N_RANKS - 1:
        return False
    y = x + 1
    if r[2 * c + R.POOL + y] > 0:
        return True
    for k in range(r[c + R.HEADS_LEN]):
        if r[c + R.HEADS + k] == y:
            return True
    for i in range(c):
        n = r[i]
        if n > 0 and cols[i, n - 1] == y:
            return True
    return False


@njit(cache=True)
def _closure(r, c, cols):
    """Put every uncovered card with a free card one rank up into the pool, until none is left."""
    pool = 2 * c + R.POOL
    heads = c + R.HEADS
    changed = True
    while changed:
        changed = False
        for i in range(c):
            while r[i] > 0 and _parent_free(r, c, cols, cols[i, r[i] - 1]):
                r[pool + cols[i, r[i] - 1]] += 1
                r[i] -= 1
                changed = True
        while r[c + R.WASTE_LEN] > 0 and _parent_free(r, c, cols, r[c + R.WASTE + r[c + R.WASTE_LEN] - 1]):
            r[pool + r[c + R.WASTE + r[c + R.WASTE_LEN] - 1]] += 1
            r[c + R.WASTE_LEN] -= 1
            changed = True
        k = 0
        while k < r[c + R.HEADS_LEN]:
            x = r[heads + k]
            if _parent_free(r, c, cols, x):
                r[pool + x] += 1
                r[heads + k] = r[heads + r[c + R.HEADS_LEN] - 1]
                r[c + R.HEADS_LEN] -= 1
                changed = True
            else:
                k += 1


@njit(cache=True)
def _can_go_home(r, c, x, pile):
    """``x`` can go home on ``pile`` (0 or 1 of its suit) once pool cards fill the ranks between."""
    su = x // N_RANKS
    rank = x % N_RANKS
    h = r[c + R.FOUND + 2 * su + pile]
    if h > rank:
        return False
    for q in range(h, rank):
        if r[2 * c + R.POOL + su * N_RANKS + q] == 0:
            return False
    return True


@njit(cache=True)
def _go_home(r, c, x, pile):
    su = x // N_RANKS
    rank = x % N_RANKS
    f = c + R.FOUND + 2 * su + pile
    for q in range(r[f], rank):
        r[2 * c + R.POOL + su * N_RANKS + q] -= 1
    r[f] = rank + 1


@njit(cache=True)
def _is_won(r, c, stock_len):
    """Everything is home or in the pool (pool cards can always go home then)."""
    if r[c + R.TURNED] != stock_len or r[c + R.WASTE_LEN] != 0 or r[c + R.HEADS_LEN] != 0:
        return False
    for i in range(c):
        if r[i] != 0:
            return False
    return True


# A relaxed move is coded ``kind * 256 + src * 2 + pile``: kind 0 turns the stock, 1 puts the
# uncovered card of ``src`` (a prefix 0..C-1, the waste C, head C+1+k) into an empty column, 2
# sends it home on ``pile``.
TURN, HEAD, HOME = 0, 1, 2


@njit(cache=True)
def _moves(r, c, cols, stock_len, out):
    """The relaxed moves of closed position ``r``, coded into ``out``; returns how many."""
    n = 0
    held = r[c + R.HEADS_LEN]
    for i in range(c):
        if r[i] > 0:
            held += 1
    if r[c + R.TURNED] < stock_len:
        out[n] = TURN * 256
        n += 1
    for src in range(c + 1 + r[c + R.HEADS_LEN]):
        x = _uncovered(r, c, cols, src)
        if x < 0:
            continue
        # Into an empty column (a prefix's last card would only change columns).
        if src <= c and held < c and not (src < c and r[src] == 1):
            out[n] = HEAD * 256 + src * 2
            n += 1
        su = x // N_RANKS
        same = r[c + R.FOUND + 2 * su] == r[c + R.FOUND + 2 * su + 1]
        for pile in range(1 if same else 2):
            if _can_go_home(r, c, x, pile):
                out[n] = HOME * 256 + src * 2 + pile
                n += 1
    return n


@njit(cache=True, inline="always")
def _uncovered(r, c, cols, src):
    """The uncovered card of source ``src``, or -1."""
    if src < c:
        return cols[src, r[src] - 1] if r[src] > 0 else -1
    if src == c:
        return r[c + R.WASTE + r[c + R.WASTE_LEN] - 1] if r[c + R.WASTE_LEN] > 0 else -1
    return r[c + R.HEADS + src - c - 1]


@njit(cache=True)
def _play(r, c, cols, stock, move):
    """Play coded ``move`` on ``r``."""
    kind = move // 256
    if kind == TURN:
        r[c + R.WASTE + r[c + R.WASTE_LEN]] = stock[r[c + R.TURNED]]
        r[c + R.WASTE_LEN] += 1
        r[c + R.TURNED] += 1
        return
    src = (move % 256) // 2
    x = _uncovered(r, c, cols, src)
    heads = c + R.HEADS
    if src < c:
        r[src] -= 1
    elif src == c:
        r[c + R.WASTE_LEN] -= 1
    else:
        r[heads + src - c - 1] = r[heads + r[c + R.HEADS_LEN] - 1]
        r[c + R.HEADS_LEN] -= 1
    if kind == HEAD:
        r[heads + r[c + R.HEADS_LEN]] = x
        r[c + R.HEADS_LEN] += 1
    else:
        _go_home(r, c, x, move % 2)


@njit(cache=True)
def relaxed_search(r, c, cols, stock, stock_len, work, budget):
    """Depth-first search of the relaxed game from ``r`` (overwritten).

    Returns ``(status, positions)``: status 1 when it wins, 2 when it exhausts the relaxed
    game (a proof that the real position is lost), 0 when it stopped first (``budget``
    positions, a full table or stack); and how many positions it generated.
    """
    z, table, stack, nmov, nxt, moves = work[0], work[1], work[2], work[3], work[4], work[5]
    table[:] = 0
    limit = table.shape[0] * 7 // 10
    _closure(r, c, cols)
    if _is_won(r, c, stock_len):
        return 1, 0
    h = relaxed_hash(r, c, z)
    key_insert(table, h >> np.uint64(17), h)  # the index from other bits than the word's
    stored = 1
    stack[0, :] = r
    nmov[0] = _moves(stack[0], c, cols, stock_len, moves[0])
    nxt[0] = 0
    depth = 0
    nodes = 0
    while nodes < budget:
        if nxt[depth] >= nmov[depth]:
            if depth == 0:
                return 2, nodes
            depth -= 1
            continue
        ch = stack[depth + 1]
        ch[:] = stack[depth]
        _play(ch, c, cols, stock, moves[depth, nxt[depth]])
        nxt[depth] += 1
        _closure(ch, c, cols)
        nodes += 1
        if _is_won(ch, c, stock_len):
            return 1, nodes
        h = relaxed_hash(ch, c, z)
        if not key_insert(table, h >> np.uint64(17), h):
            continue
        stored += 1
        if stored >= limit or depth + 2 >= stack.shape[0]:
            return 0, nodes
        depth += 1
        nmov[depth] = _moves(ch, c, cols, stock_len, moves[depth])
        nxt[depth] = 0
    return 0, nodes


def new_relaxed_work(columns: int, depth: int, table_bits: int, max_depth: int = 400) -> tuple[np.ndarray, ...]:
    """The arrays :func:`relaxed_dead` works in, ``(z, table, stack, nmov, nxt, moves, r, cols, stock)``.

    Fields: ``z`` the Zobrist table (uint64); ``table`` ``(2**table_bits,)`` uint64, the
    transposition table; ``stack`` ``(max_depth + 1, size)`` int16, the line of relaxed
    positions; ``nmov``/``nxt`` ``(max_depth + 1,)`` int64, how many moves each has and the
    next to try; ``moves`` ``(max_depth + 1, MAX_CHILDREN)`` int16, its coded moves; ``r``
    ``(size,)`` int16, the start; ``cols`` ``(C, depth)`` int16, the prefixes' cards;
    ``stock`` ``(MAX_PILE,)`` int16, the stock in turning order.
    """
    size = relaxed_size(columns)
    z = np.random.default_rng(0x7E1A).integers(0, 2**63, size=zobrist_size(columns), dtype=np.uint64)
    return (
        z,
        np.zeros(1 << table_bits, dtype=np.uint64),
        np.zeros((max_depth + 1, size), dtype=np.int16),
        np.zeros(max_depth + 1, dtype=np.int64),
        np.zeros(max_depth + 1, dtype=np.int64),
        np.zeros((max_depth + 1, MAX_CHILDREN), dtype=np.int16),
        np.zeros(size, dtype=np.int16),
        np.zeros((columns, depth), dtype=np.int16),
        np.zeros(MAX_PILE, dtype=np.int16),
    )


@njit(cache=True)
def relaxed_dead(s, cfg, work, budget):
    """Whether the relaxed game from position ``s`` provably cannot be won (rule 7), and the
    positions that took: ``(dead, positions)``.

    ``work`` is :func:`new_relaxed_work`'s tuple for ``s``'s number of columns. ``dead`` is
    False when the relaxed search wins, runs past ``budget`` positions or its table, or does
    not apply (then ``positions`` is 0).
    """
    if cfg[Cfg.ALTERNATE] != 0 or cfg[Cfg.MAX_RUN] != 1 or s[Slot.REDEALS] != 0:
        return False, 0
    r, cols, stock = work[6], work[7], work[8]
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    r[:] = 0
    for i in range(c):
        n = s[cfg[Cfg.OFF_LEN] + i]
        for p in range(n):
            cols[i, p] = s[cfg[Cfg.OFF_TAB] + i * d + p]
        r[i] = n
    sl = s[Slot.STOCK_LEN]
    for k in range(sl):  # the engine turns the stock's last slot first
        stock[k] = s[cfg[Cfg.OFF_STOCK] + sl - 1 - k]
    wl = s[Slot.WASTE_LEN]
    r[c + R.WASTE_LEN] = wl
    for p in range(wl):
        r[c + R.WASTE + p] = s[cfg[Cfg.OFF_WASTE] + p]
    for f in range(8):
        r[c + R.FOUND + f] = s[Slot.FOUND + f]
    status, nodes = relaxed_search(r, c, cols, stock, sl, work, budget)
    return status == 2, nodes
