"""The ``heuristic`` agent: one-move scoring that follows the rule pages' strategy advice.

Every legal move gets a score from what a player can see (face-up cards, the waste, the
foundations, the counts; never the identity of a stock or face-down card) and the best one
is played; exact ties go to a seeded pseudo-random number, so a game is reproducible from its
seed. The scores put into numbers what the rule pages in ``shared/rules`` advise:

* **Foundations first, with care.** A card that no card still out could be built on
  (``rules.is_safe``; every ace) goes home at once. Another card home is still worth more
  than any table move, less for each card still out that it could have held ("a 3 may still
  be needed on the table to hold a 2"), more for a low rank.
* **Empty columns are gold.** Emptying a column is worth much; filling one costs (less when
  there are several, less for a king, which can only ever start a column) unless what the
  move uncovers pays for it. Moving a whole column into an empty one is pointless.
* **Dig toward low cards.** Taking a card off a column is worth more the nearer a buried card
  is to going home and the fewer cards lie on it; a face-down card turned up is a gain;
  burying such a column deeper costs.
* **Duplicates by what they free.** Between two moves of twin cards, the one that uncovers a
  card that can go home (or onto another column) scores higher; moving a card between twins
  (its new resting card is the same card it sits on) is a last resort.
* **The stock last.** Turning the stock scores 0: it is played only when no table move
  scores above it ("play the table out before turning a card").
* **No cycles.** The agent remembers every position it has seen this game (as a hash of the
  visible cards) and never picks a move that recreates one while another move is left.

The scoring and the choice are numba kernels over a state array (:func:`choose`), so the same
policy drives the lookahead agent's rollouts (:func:`rollout`). The kernels read only the
visible part of a state: face-down slots and stock contents are never looked at (a move that
would turn a card up is judged without knowing the card), which is what lets the agent play
from a *determinized* state (:mod:`agents.players.view`) built from its observation.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numba import njit

from agents.hashing import GOLDEN, mix, noise, table_contains, table_insert
from forty_thieves_env.engine.actions import Kind, decode, first_column_move
from forty_thieves_env.engine.cards import N_CARDS, N_RANKS
from forty_thieves_env.engine.config import config_for
from forty_thieves_env.engine.layout import Cfg, Slot
from forty_thieves_env.engine.rules import apply_action, cards_home, fits, is_safe, legal_mask
from forty_thieves_env.engine.variants import Variant, get_variant

from .base import BaseAgent, Observation
from .view import determinizer
from .weights import (
    CYCLE,
    POINTLESS,
    TWIN,
    W_BREAK,
    W_BURY,
    W_DIG,
    W_EMPTIED,
    W_EMPTY_USE,
    W_FD_URGENCY,
    W_HOME,
    W_KING_EMPTY,
    W_LOW,
    W_PARK,
    W_REDEAL,
    W_REVEAL,
    W_SAFE,
    W_SHORT,
    W_STOCK,
    W_UNBLOCK,
    W_UNCOVER_FIT,
    W_UNCOVER_HOME,
    W_URGENT_SPAN,
    W_WASTE_COL,
    weights_array,
)

# ------------------------------------------------------------------- visible hash

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True, inline="always")
def _feed(h, x):
    return (h ^ np.uint64(np.int64(x) + 1)) * _FNV_PRIME


@njit(cache=True)
def visible_hash(s, cfg):
    """A ``uint64`` hash of what a player sees of state ``s`` (never 0).

    Reads counts, foundations, column lengths, face-down counts, face-up cards and the
    waste; never a face-down card or the stock's contents.
    """
    h = _FNV_OFFSET
    h = _feed(h, s[Slot.STOCK_LEN])
    h = _feed(h, s[Slot.WASTE_LEN])
    h = _feed(h, s[Slot.REDEALS])
    for p in range(8):
        h = _feed(h, s[Slot.FOUND + p])
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    for i in range(c):
        n = s[cfg[Cfg.OFF_LEN] + i]
        down = s[cfg[Cfg.OFF_DOWN] + i]
        h = _feed(h, n)
        h = _feed(h, down)
        base = cfg[Cfg.OFF_TAB] + i * d
        for t in range(down, n):
            h = _feed(h, s[base + t])
    off_w = cfg[Cfg.OFF_WASTE]
    for t in range(s[Slot.WASTE_LEN]):
        h = _feed(h, s[off_w + t])
    h = mix(h)
    if h == np.uint64(0):
        h = np.uint64(1)
    return h


# ------------------------------------------------------------------------- scoring


@njit(cache=True, inline="always")
def _dist(s, card):
    """Ranks between ``card`` and the foundation pile it will go to (0: it can go home now)."""
    suit = card // N_RANKS
    r = np.int64(card % N_RANKS)
    hi = np.int64(s[Slot.FOUND + 2 * suit])
    lo = np.int64(s[Slot.FOUND + 2 * suit + 1])
    if r >= hi:
        return r - hi
    return r - lo


@njit(cache=True)
def _out_below(s, cfg, card):
    """How many cards that could be built on ``card`` in a column are not yet home."""
    r = np.int64(card % N_RANKS)
    if r == 0:
        return 0
    suit = card // N_RANKS
    n = 0
    if cfg[Cfg.ALTERNATE]:
        lo_suit = 0 if suit >= 2 else 2
        for other in range(lo_suit, lo_suit + 2):
            n += (s[Slot.FOUND + 2 * other] < r) + (s[Slot.FOUND + 2 * other + 1] < r)
    else:
        n = (s[Slot.FOUND + 2 * suit] < r) + (s[Slot.FOUND + 2 * suit + 1] < r)
    return n


@njit(cache=True)
def _fits_elsewhere(cfg, card, tops, skip1, skip2):
    for j in range(tops.shape[0]):
        if j in (skip1, skip2) or tops[j] < 0:
            continue
        if fits(cfg, card, tops[j]):
            return True
    return False


@njit(cache=True)
def _uncover_value(s, cfg, w, card, tops, skip1, skip2):
    """Worth of exposing a face-up ``card`` (it can go home, or onto another column)."""
    if _dist(s, card) == 0:
        return w[W_UNCOVER_HOME]
    if _fits_elsewhere(cfg, card, tops, skip1, skip2):
        return w[W_UNCOVER_FIT]
    return 0.0


@njit(cache=True, inline="always")
def _land(sc, w, card, tops, dig, j, empty_cost):
    """``sc`` plus what landing ``card`` (the one that leads what moves) on column ``j`` is
    worth: an empty column's cost (less for a king, which only an empty column takes), or
    burying the cards still to dig out of ``j``. The terms are added in this order so that
    scores stay bit for bit those of the kept figures."""
    if tops[j] < 0:
        sc -= empty_cost
        if card % N_RANKS == N_RANKS - 1:
            sc += w[W_KING_EMPTY]
    else:
        sc -= w[W_BURY] * dig[j]
    return sc


@njit(cache=True)
def score_moves(s, cfg, mask, w, scores):
    """Fill ``scores[a]`` for every legal action ``a`` of state ``s`` (others are left alone).

    Reads only the visible part of ``s`` (see the module docstring).
    """
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    off_len = cfg[Cfg.OFF_LEN]
    off_down = cfg[Cfg.OFF_DOWN]
    off_tab = cfg[Cfg.OFF_TAB]
    tops = np.empty(c, dtype=np.int64)
    lens = np.empty(c, dtype=np.int64)
    downs = np.empty(c, dtype=np.int64)
    dig = np.zeros(c, dtype=np.float64)
    n_empty = 0
    span = w[W_URGENT_SPAN]
    for i in range(c):
        n = np.int64(s[off_len + i])
        lens[i] = n
        downs[i] = s[off_down + i]
        if n == 0:
            tops[i] = -1
            n_empty += 1
            continue
        base = off_tab + i * d
        tops[i] = s[base + n - 1]
        best = 0.0
        for p in range(n - 1):
            if p < downs[i]:
                u = w[W_FD_URGENCY]
            else:
                u = span - _dist(s, s[base + p])
            if u > 0.0:
                v = u / (n - 1 - p)
                if v > best:
                    best = v
        dig[i] = best
    empty_cost = w[W_EMPTY_USE] / max(n_empty, 1)
    wl = s[Slot.WASTE_LEN]
    off_w = cfg[Cfg.OFF_WASTE]
    wtop = np.int64(s[off_w + wl - 1]) if wl > 0 else -1
    wnext = np.int64(s[off_w + wl - 2]) if wl > 1 else -1

    for a in range(cfg[Cfg.N_ACTIONS]):
        if not mask[a]:
            continue
        kind, i, j, k = decode(cfg, a)
        if kind == Kind.STOCK:
            scores[a] = w[W_STOCK] if s[Slot.STOCK_LEN] > 0 else w[W_REDEAL]
            continue
        if kind in (Kind.WASTE_FOUNDATION, Kind.COLUMN_FOUNDATION):
            card = wtop if kind == Kind.WASTE_FOUNDATION else tops[i]
            if is_safe(s, cfg, card):
                sc = w[W_SAFE]
            else:
                sc = w[W_HOME] - w[W_PARK] * _out_below(s, cfg, card)
            sc += w[W_LOW] * (N_RANKS - 1 - card % N_RANKS)
            if kind == Kind.WASTE_FOUNDATION:
                if wnext >= 0:
                    sc += _uncover_value(s, cfg, w, wnext, tops, -1, -1)
            else:
                m = lens[i] - 1
                if m == 0:
                    sc += w[W_EMPTIED]
                elif m - 1 < downs[i]:
                    sc += w[W_REVEAL]
                else:
                    sc += _uncover_value(s, cfg, w, s[off_tab + i * d + m - 1], tops, i, -1)
                sc += w[W_DIG] * dig[i]
            scores[a] = sc
            continue
        if kind == Kind.WASTE_COLUMN:
            sc = _land(w[W_WASTE_COL], w, wtop, tops, dig, j, empty_cost)
            if wnext >= 0:
                sc += _uncover_value(s, cfg, w, wnext, tops, j, -1)
            scores[a] = sc
            continue
        # column to column: k cards from i to j
        n = lens[i]
        m = n - k
        base = off_tab + i * d
        b = np.int64(s[base + m])
        if m == 0 and tops[j] < 0:
            scores[a] = POINTLESS  # a whole column into an empty one
            continue
        under = np.int64(s[base + m - 1]) if m > 0 and m - 1 >= downs[i] else -1
        if under >= 0 and under == tops[j]:
            # Between twins: it rests on the same card again. Only what lies under the two
            # twins differs, so this is a last resort (it picks which twin to free next).
            scores[a] = TWIN
            continue
        sc = 0.0
        if m == 0:
            sc += w[W_EMPTIED]
        elif under < 0:
            sc += w[W_REVEAL]
        elif fits(cfg, b, under):
            # Lifted off the card it is built on: worth it only for what can go home then.
            sc -= w[W_BREAK]
            if _dist(s, under) == 0:
                sc += w[W_UNCOVER_HOME]
        else:
            sc += w[W_UNBLOCK] + _uncover_value(s, cfg, w, under, tops, i, j)
        if m > 0:
            sc += w[W_DIG] * dig[i] + w[W_SHORT] / m
        scores[a] = _land(sc, w, b, tops, dig, j, empty_cost)


@njit(cache=True)
def choose(s, cfg, mask, w, table, seed, scores, tmp, check_all=False):
    """The best legal action of ``s`` by :func:`score_moves`; ``(action, score)``.

    A move into a position whose visible hash is in ``table`` scores :data:`CYCLE`; exact
    ties go to the highest :func:`noise` for ``seed``. ``scores`` (``(n_actions,) float64``)
    and ``tmp`` (a state-sized ``int8`` array) are work space; on return ``scores`` holds
    every legal move's score, with the cycle test applied to the moves that needed it to
    find the best (to all of them with ``check_all``). ``(-1, -inf)`` without a legal move.
    """
    score_moves(s, cfg, mask, w, scores)
    first_cc = first_column_move(cfg)
    if check_all:
        for a in range(first_cc, cfg[Cfg.N_ACTIONS]):
            if mask[a] and _leads_back(s, cfg, a, table, tmp):
                scores[a] = CYCLE
    while True:
        best = -1
        best_score = -np.inf
        best_noise = -1.0
        for a in range(cfg[Cfg.N_ACTIONS]):
            if not mask[a]:
                continue
            sc = scores[a]
            if sc > best_score:
                best, best_score, best_noise = a, sc, -1.0
            elif sc == best_score:
                if best_noise < 0.0:
                    best_noise = noise(seed, best)
                z = noise(seed, a)
                if z > best_noise:
                    best, best_noise = a, z
        # Only column-to-column moves can lead back to a seen position: every other move
        # turns the stock, shrinks the waste or sends a card home, and none of those undo.
        if best < first_cc or best_score <= CYCLE or check_all or not _leads_back(s, cfg, best, table, tmp):
            return best, best_score
        scores[best] = CYCLE


@njit(cache=True)
def _leads_back(s, cfg, a, table, tmp):
    """Whether playing ``a`` in ``s`` gives a position whose visible hash is in ``table``."""
    for q in range(cfg[Cfg.SIZE]):
        tmp[q] = s[q]
    apply_action(tmp, cfg, a)
    return table_contains(table, visible_hash(tmp, cfg))


@njit(cache=True)
def rollout(s, cfg, w, table, seed, max_steps, max_idle, mask, scores, tmp, out):
    """Play the heuristic from ``s`` (in place) until the game ends or looks over.

    Stops when won, stuck, only pointless or cycling moves are left, after ``max_steps``
    moves, or after ``max_idle`` moves in a row that neither sent a card home nor turned the
    stock. ``table`` is cleared first. The moves are written to ``out`` as far as it holds
    them (an empty ``out`` keeps none). Returns ``(won, cards_home, moves played)``.
    """
    table[:] = 0
    idle = 0
    home = cards_home(s)
    step = 0
    while step < max_steps and idle < max_idle:
        if home == N_CARDS:
            break
        if legal_mask(s, cfg, mask) == 0:
            break
        table_insert(table, visible_hash(s, cfg))
        a, sc = choose(s, cfg, mask, w, table, seed + np.uint64(step) * GOLDEN, scores, tmp)
        if sc <= POINTLESS:
            break
        apply_action(s, cfg, a)
        if step < out.size:
            out[step] = a
        step += 1
        h = cards_home(s)
        if h > home or a == 0:
            idle = 0
        else:
            idle += 1
        home = h
    return home == N_CARDS, home, step


def heuristic_win(
    variant: str | Variant, state: np.ndarray, seeds: Iterable[int], max_moves: int = 5000
) -> tuple[int, list[int]] | None:
    """The first game the heuristic wins from the state array ``state``: ``(seed, actions)``.

    One :func:`rollout` (no idle limit, at most ``max_moves`` moves) for each tie-breaking
    seed in turn; ``None`` when none wins. ``state`` is not changed. A won line is a
    certificate that the position is winnable, whatever the heuristic could see: the
    solver's runs (:mod:`agents.solving.sweep`) try a few seeds before searching.
    """
    v = get_variant(variant)
    cfg = config_for(v)
    w = weights_array(v)
    s = np.empty_like(state, dtype=np.int8)
    mask = np.zeros(int(cfg[Cfg.N_ACTIONS]), dtype=np.bool_)
    scores = np.zeros(mask.size, dtype=np.float64)
    tmp = np.zeros_like(s)
    table = np.zeros(1 << 14, dtype=np.uint64)
    out = np.zeros(max_moves, dtype=np.int64)
    for seed in seeds:
        s[:] = state
        won, _, n = rollout(s, cfg, w, table, seed_to_u64(seed), max_moves, max_moves + 1, mask, scores, tmp, out)
        if won:
            return int(seed), [int(a) for a in out[:n]]
    return None


# --------------------------------------------------------------------------- agent


def seed_to_u64(seed: int | None) -> np.uint64:
    """A ``uint64`` kernel seed from any int (``None`` -> 0)."""
    return np.uint64(0 if seed is None else int(seed) % 2**64)


class HeuristicAgent(BaseAgent):
    """Plays the best-scoring legal move (see the module docstring).

    Args:
        variant: The rules in force.
        seed: Breaks exact ties between equally scored moves.
        avoid_cycles: Remember the positions seen this game and avoid moving back into one.
        weights: Overrides of :func:`default_weights` by name.
    """

    name = "heuristic"
    observation = "dict"

    def __init__(
        self,
        variant: str | Variant = "classic",
        seed: int | None = None,
        avoid_cycles: bool = True,
        weights: dict[str, float] | None = None,
    ) -> None:
        super().__init__(variant, seed)
        self.weights = weights_array(self.variant, **(weights or {}))
        self.avoid_cycles = avoid_cycles
        self._det = determinizer(self.variant)
        self._cfg = self._det.cfg
        self._state = np.zeros(int(self._cfg[Cfg.SIZE]), dtype=np.int8)
        self._tmp = np.zeros_like(self._state)
        self._scores = np.zeros(self.n_actions, dtype=np.float64)
        self._table = np.zeros(1 << 14, dtype=np.uint64)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._seed = seed_to_u64(self.seed)
        self._step = 0
        self._table[:] = 0

    def state_from(self, observation: Observation) -> np.ndarray:
        """The agent's state array for an observation (hidden slots in code order)."""
        return self._det.fill(observation, self._state)

    def act(self, observation: Observation, action_mask: np.ndarray) -> int:
        return self._choose(observation, action_mask)[0]

    def _choose(
        self, observation: Observation, action_mask: np.ndarray, check_all: bool = False
    ) -> tuple[int, np.ndarray, np.ndarray, np.uint64]:
        """The heuristic's move, with what it was chosen from: ``(action, state, mask, tie seed)``.

        Remembers the position (with ``avoid_cycles``) and advances the move counter; on return
        ``self._scores`` holds every legal move's score (see :func:`choose`).
        """
        s = self.state_from(observation)
        mask = np.asarray(action_mask, dtype=np.bool_)
        if self.avoid_cycles:
            table_insert(self._table, np.uint64(visible_hash(s, self._cfg)))
        seed = np.uint64((int(self._seed) + self._step * int(GOLDEN)) % 2**64)
        self._step += 1
        a, _ = choose(s, self._cfg, mask, self.weights, self._table, seed, self._scores, self._tmp, check_all)
        if a < 0:
            raise ValueError("no legal action: the game is over")
        return int(a), s, mask, seed

    def scores(self, observation: Observation, action_mask: np.ndarray) -> dict[int, float]:
        """Score of every legal action (no cycle test); for inspection and tests."""
        s = self.state_from(observation)
        mask = np.asarray(action_mask, dtype=np.bool_)
        out = np.zeros(self.n_actions, dtype=np.float64)
        score_moves(s, self._cfg, mask, self.weights, out)
        return {int(a): float(out[a]) for a in np.flatnonzero(mask)}
