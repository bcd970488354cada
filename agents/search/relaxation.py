"""The relaxed game: a small over-approximation of a position whose loss proves the real loss.

Rule 7 of the solver (see :mod:`agents.search.solver`). In the relaxed game

* each column is its *prefix*, the cards it holds now, which leave from the top only;
* the waste and the stock keep their order (the stock is turned one card at a time, and
  only the waste's top card can leave);
* a card moved onto a card one rank up in its suit joins the *pool*: it is free from then on
  (it can go home at any time and serves as the card to build on for the card one rank
  below), whatever would lie on it in the real game; except
* a card moved onto the top card of a *tracked* column's prefix, or into an empty column,
  is that column's *cover*: it holds the column (the prefix under it cannot move) until it
  goes home, into the pool or elsewhere; cards put on a cover join the pool. A cover in an
  empty column is a *head*; a column is empty when it has neither prefix nor cover;
* nothing is ever moved off a foundation, and the piles are real (two per suit).

Which columns are tracked is fixed from the start position: those with a card under the
top that is at most ``TRACK_SLACK`` ranks above the lower pile of its suit (at the deal: an
ace under other cards). Tracking every column would be tighter still, but its search is far
larger (a cover or not on each column): from classic deals it ran out of 5 million relaxed
positions where these few tracked columns need under a million. The choice does not matter
for soundness: an untracked column is only freer.

Every real line maps to a relaxed one. Along it, each relaxed prefix is the bottom of the
real column of the same place (the relaxed game only lets cards leave sooner); a cover lies
in its real column somewhere above the prefix, so a covered prefix is covered for real too;
the relaxed waste is a subsequence of the real one; every other card not home for real is
in the pool or home. A real move of a card: a pool card needs nothing; a card in a prefix,
a cover or the waste's top is uncovered in the relaxed game too, and its target is there:
a card one rank up on top of a real column is a pool card or a cover (where the closure
below would already have freed the moving card), or the uncovered top of a prefix (of an
untracked one: a free move; of a tracked one: a cover move); an empty real column is empty
in the relaxed game; home is home (pool cards fill in the ranks between). So when the
relaxed game from ``s`` cannot be won, neither can ``s``.

The relaxed game is searched depth-first with its own small transposition table, after a
*closure* that is played without branching: every uncovered card (a cover, a prefix's top,
the waste's top) with a free card one rank up (a pool card, a cover, an untracked prefix's
uncovered top) goes into the pool, and every *safe* card in the pool or uncovered goes home
(the next card of a suit's lower pile: both copies one rank down are home, so nothing can be
built on it). Neither loses anything in the relaxed game: a pool card can do whatever it
could do before, and the card under it is uncovered; a safe card's only use, as a card to
build on, is over, and home it lets the pile go on. Other pool cards go home *lazily*, only
as the cards a home move needs (a pool card that went home earlier would only stop being a
card to build on). What is left to choose is when to turn the stock, which card goes into
an empty column or onto a tracked prefix, and which card goes home on which pile; the search
tries home moves first, then the turn, then the moves that hold a column, which finds the
relaxed wins of live positions soonest. A relaxed position is small (no order among pool
cards), so this search is far smaller than the real one; it is cut at ``budget`` positions
and then proves nothing.

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
#: Most children one relaxed position has: a turn, and for each uncovered card (columns and
#: the waste's top: 13 at most with 12 columns) a head, two home moves and two covers.
MAX_CHILDREN = 96
#: A column's prefix is *tracked* (a card put on its top covers it) when a card under its
#: top is at most this many ranks above the lowest of its suit's piles.
TRACK_SLACK = 0
#: Positions of the relaxed search from the prover's root (about three CPU-seconds at most).
ROOT_BUDGET = 1_500_000


class R(IntEnum):
    """Slots of a relaxed position (one int16 array), after its C prefix lengths (slots
    ``0..C-1``): ``r[c + R.WASTE_LEN]``; the covers start at ``c + R.COVER``, the pool's 52
    counts at ``2 * c + R.POOL``."""

    TURNED = 0  # stock cards turned so far (the stock: the search's ``stock``, in turning order)
    WASTE_LEN = 1  # cards in the waste
    FOUND = 2  # (8,) foundation heights, two piles a suit
    WASTE = 10  # (MAX_PILE,) the waste, bottom first
    COVER = 10 + MAX_PILE  # (C,) each column's cover card, -1 for none
    POOL = 10 + MAX_PILE  # (52,) pool count of each card code, at 2 * C + POOL


def relaxed_size(columns: int) -> int:
    """Length of a relaxed position's array for ``columns`` columns."""
    return 2 * columns + R.POOL + N_CODES


def zobrist_size(columns: int) -> int:
    """Entries of the relaxed search's Zobrist table."""
    return columns * 32 + (MAX_PILE + 1) + MAX_PILE * N_CODES + columns * N_CODES + 2 * N_CODES + 4 * 14 * 14


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
    heads = at + c * N_CODES
    for i in range(c):
        x = r[c + R.COVER + i]
        if x < 0:
            continue
        if r[i] > 0:  # the cover of column i's prefix
            h ^= z[at + i * N_CODES + x]
        else:  # a head: the columns without a prefix are a multiset, so heads are summed
            h += z[heads + x] * np.uint64(0x9E3779B97F4A7C15) + z[heads + N_CODES + x]
    at = heads + 2 * N_CODES
    for su in range(4):  # the two piles of a suit as a multiset
        a = r[c + R.FOUND + 2 * su]
        b = r[c + R.FOUND + 2 * su + 1]
        if a < b:
            a, b = b, a
        h ^= z[at + su * 196 + a * 14 + b]
    return h


@njit(cache=True)
def _parent_free(r, c, cols, tracked, x):
    """A copy of the card one rank up from ``x`` is free to build on: in the pool, a column's
    cover, or the uncovered top card of an untracked column's prefix (on a tracked column's
    it would cover the prefix: a move to choose, not a free one)."""
    if x % N_RANKS == N_RANKS - 1:
        return False
    y = x + 1
    if r[2 * c + R.POOL + y] > 0:
        return True
    for i in range(c):
        z = r[c + R.COVER + i]
        if z == y:
            return True
        if z < 0 and not tracked[i] and r[i] > 0 and cols[i, r[i] - 1] == y:
            return True
    return False


@njit(cache=True, inline="always")
def _uncovered(r, c, cols, src):
    """The uncovered card of source ``src`` (column ``src < C``: its cover, else its prefix's
    top; ``C``: the waste's top), or -1."""
    if src < c:
        x = r[c + R.COVER + src]
        if x >= 0:
            return x
        return cols[src, r[src] - 1] if r[src] > 0 else -1
    return r[c + R.WASTE + r[c + R.WASTE_LEN] - 1] if r[c + R.WASTE_LEN] > 0 else -1


@njit(cache=True, inline="always")
def _take(r, c, src):
    """Remove the uncovered card of ``src``."""
    if src < c:
        if r[c + R.COVER + src] >= 0:
            r[c + R.COVER + src] = -1
        else:
            r[src] -= 1
    else:
        r[c + R.WASTE_LEN] -= 1


@njit(cache=True)
def _closure(r, c, cols, tracked):
    """Put every uncovered card with a free card one rank up into the pool, and send home
    every safe card (one whose both copies one rank down are home: the card for a suit's
    lower pile) that is in the pool or uncovered, until nothing changes."""
    pool = 2 * c + R.POOL
    changed = True
    while changed:
        changed = False
        for src in range(c + 1):
            x = _uncovered(r, c, cols, src)
            while x >= 0 and _parent_free(r, c, cols, tracked, x):
                r[pool + x] += 1
                _take(r, c, src)
                changed = True
                x = _uncovered(r, c, cols, src)
        for su in range(4):
            f = c + R.FOUND + 2 * su
            while True:
                lower = f if r[f] <= r[f + 1] else f + 1
                if r[lower] >= N_RANKS:
                    break
                x = su * N_RANKS + r[lower]
                if r[pool + x] > 0:
                    r[pool + x] -= 1
                else:
                    src = 0
                    while src <= c and _uncovered(r, c, cols, src) != x:
                        src += 1
                    if src > c:
                        break
                    _take(r, c, src)
                r[lower] += 1
                changed = True


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
    """No prefix, waste or stock card is left: the pool and the covers (each alone on its
    column, nothing under it) can then go home in order."""
    if r[c + R.TURNED] != stock_len or r[c + R.WASTE_LEN] != 0:
        return False
    for i in range(c):
        if r[i] != 0:
            return False
    return True


# A relaxed move is coded ``kind * 1024 + src * 32 + arg``: kind 0 turns the stock; 1 puts the
# uncovered card of ``src`` (a column 0..C-1, the waste C) into empty column ``arg`` (the
# first); 2 sends it home on pile ``arg``; 3 puts it on the uncovered top card of column
# ``arg``'s prefix (one rank up). Kinds 1 and 3 both make the card column ``arg``'s cover.
TURN, HEAD, HOME, COVER = 0, 1, 2, 3


@njit(cache=True)
def _moves(r, c, cols, tracked, stock_len, out):
    """The relaxed moves of closed position ``r``, coded into ``out``; returns how many. In
    the order the search tries them: home moves, the turn, then the moves that hold a
    column (they find relaxed wins soonest in this order)."""
    n = 0
    for src in range(c + 1):
        x = _uncovered(r, c, cols, src)
        if x < 0:
            continue
        su = x // N_RANKS
        same = r[c + R.FOUND + 2 * su] == r[c + R.FOUND + 2 * su + 1]
        for pile in range(1 if same else 2):
            if _can_go_home(r, c, x, pile):
                out[n] = HOME * 1024 + src * 32 + pile
                n += 1
    if r[c + R.TURNED] < stock_len:
        out[n] = TURN * 1024
        n += 1
    empty = -1
    for i in range(c):
        if r[i] == 0 and r[c + R.COVER + i] < 0:
            empty = i
            break
    for src in range(c + 1):
        x = _uncovered(r, c, cols, src)
        if x < 0:
            continue
        # Into an empty column (a column's only card would only change columns).
        if empty >= 0 and not (src < c and r[src] + (r[c + R.COVER + src] >= 0) == 1):
            out[n] = HEAD * 1024 + src * 32 + empty
            n += 1
        if x % N_RANKS == N_RANKS - 1:
            continue
        for j in range(c):
            if tracked[j] and j != src and r[j] > 0 and r[c + R.COVER + j] < 0 and cols[j, r[j] - 1] == x + 1:
                out[n] = COVER * 1024 + src * 32 + j
                n += 1
    return n


@njit(cache=True)
def _play(r, c, cols, stock, move):
    """Play coded ``move`` on ``r``."""
    kind = move // 1024
    if kind == TURN:
        r[c + R.WASTE + r[c + R.WASTE_LEN]] = stock[r[c + R.TURNED]]
        r[c + R.WASTE_LEN] += 1
        r[c + R.TURNED] += 1
        return
    src = (move % 1024) // 32
    arg = move % 32
    x = _uncovered(r, c, cols, src)
    _take(r, c, src)
    if kind == HOME:
        _go_home(r, c, x, arg)
    else:  # HEAD or COVER (``src`` is neither column ``arg`` nor emptied by the take)
        r[c + R.COVER + arg] = x


@njit(cache=True)
def relaxed_search(r, c, cols, tracked, stock, stock_len, work, budget):
    """Depth-first search of the relaxed game from ``r`` (overwritten).

    Returns ``(status, positions)``: status 1 when it wins, 2 when it exhausts the relaxed
    game (a proof that the real position is lost), 0 when it stopped first (``budget``
    positions, a full table or stack); and how many positions it generated.
    """
    z, table, stack, nmov, nxt, moves = work[0], work[1], work[2], work[3], work[4], work[5]
    table[:] = 0
    limit = table.shape[0] * 7 // 10
    _closure(r, c, cols, tracked)
    if _is_won(r, c, stock_len):
        return 1, 0
    h = relaxed_hash(r, c, z)
    key_insert(table, h >> np.uint64(17), h)  # the index from other bits than the word's
    stored = 1
    stack[0, :] = r
    nmov[0] = _moves(stack[0], c, cols, tracked, stock_len, moves[0])
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
        _closure(ch, c, cols, tracked)
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
        nmov[depth] = _moves(ch, c, cols, tracked, stock_len, moves[depth])
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
        np.zeros(columns, dtype=np.bool_),
    )


@njit(cache=True)
def relaxed_dead(s, cfg, work, budget, slack=TRACK_SLACK):
    """Whether the relaxed game from position ``s`` provably cannot be won (rule 7), and the
    positions that took: ``(dead, positions)``.

    ``work`` is :func:`new_relaxed_work`'s tuple for ``s``'s number of columns. ``dead`` is
    False when the relaxed search wins, runs past ``budget`` positions or its table, or does
    not apply (then ``positions`` is 0). ``slack`` picks the tracked columns (see
    ``TRACK_SLACK``): -1 tracks none, 12 every column with two cards or more.
    """
    if cfg[Cfg.ALTERNATE] != 0 or cfg[Cfg.MAX_RUN] != 1 or s[Slot.REDEALS] != 0:
        return False, 0
    r, cols, stock = work[6], work[7], work[8]
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    tracked = work[9]
    r[:] = 0
    for i in range(c):
        r[c + R.COVER + i] = -1
        n = s[cfg[Cfg.OFF_LEN] + i]
        tracked[i] = False
        for p in range(n):
            x = s[cfg[Cfg.OFF_TAB] + i * d + p]
            cols[i, p] = x
            su = x // N_RANKS
            low = min(s[Slot.FOUND + 2 * su], s[Slot.FOUND + 2 * su + 1])
            if p < n - 1 and x % N_RANKS <= low + slack:
                tracked[i] = True
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
    status, nodes = relaxed_search(r, c, cols, tracked, stock, sl, work, budget)
    return status == 2, nodes
