"""What a player knows: game states rebuilt from the environment's observations.

Agents receive the env's default ``Dict`` observation (see :mod:`forty_thieves_env.envs.observation`),
which shows every face-up card and hides the stock order and the face-down cards. An agent
that wants to search needs a whole :class:`~forty_thieves_env.text.game.GameState`; here it gets a
*determinized* one: the visible cards where the observation shows them, and the hidden slots
(face-down cards, then the stock) filled with the *unseen* cards, which are the 104-card pack
minus every card in sight (columns, waste, foundations). With an ``rng`` the unseen cards are
shuffled, so repeated calls sample the positions the player cannot tell apart; without one
they go in code order (one fixed, valid filling, for agents that only need legal moves).

:func:`determinize` reads nothing but the observation, so its output cannot depend on the
true hidden cards (the tests check this by shuffling them). The one thing a player can know
beyond the current observation is the order of a redealt stock: a redeal turns the waste over,
so the new stock is the old waste, bottom card first. :class:`StockRecall` remembers it.

Also here: :func:`state_from_oracle` (the exact state from an ``observation="oracle"``
observation, for the perfect-information solver agent).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numba import njit

from forty_thieves_env.engine.cards import N_CODES, N_RANKS
from forty_thieves_env.engine.config import config_for
from forty_thieves_env.engine.layout import Cfg, Slot
from forty_thieves_env.engine.variants import Variant
from forty_thieves_env.envs.observation import FACE_DOWN, NO_CARD
from forty_thieves_env.text.game import GameState

Observation = Mapping[str, np.ndarray]


@njit(cache=True)
def unseen_into(tableau, waste, foundations, known, n_known, out):
    """Write the unseen cards (codes ascending, each as often as it is unseen) into ``out``.

    ``known``: cards the caller knows to be in the stock (its first ``n_known`` entries),
    counted as seen. Returns how many were written; ``-1`` if some card shows up more than
    twice (an observation no deal can give).
    """
    seen = np.zeros(N_CODES, dtype=np.int64)
    c, d = tableau.shape
    for i in range(c):
        for t in range(d):
            x = tableau[i, t]
            if x < N_CODES:
                seen[x] += 1
    for t in range(waste.shape[0]):
        x = waste[t]
        if x < N_CODES:
            seen[x] += 1
    for p in range(foundations.shape[0]):
        suit = p // 2
        for r in range(foundations[p]):
            seen[suit * N_RANKS + r] += 1
    for t in range(n_known):
        seen[known[t]] += 1
    n = 0
    for code in range(N_CODES):
        left = 2 - seen[code]
        if left < 0:
            return -1
        for _ in range(left):
            out[n] = code
            n += 1
    return n


@njit(cache=True)
def fill_state(tableau, waste, foundations, counts, cfg, hidden, known, n_known, s):
    """Write into state array ``s`` the position the observation shows, hidden slots from ``hidden``.

    ``hidden`` fills the face-down slots (columns in order, bottom first), then the stock
    slots not covered by ``known`` (next card to turn first); the stock is ``known[:n_known]``
    followed by those cards.
    """
    c = cfg[Cfg.COLUMNS]
    d = cfg[Cfg.DEPTH]
    off_len = cfg[Cfg.OFF_LEN]
    off_down = cfg[Cfg.OFF_DOWN]
    off_tab = cfg[Cfg.OFF_TAB]
    for q in range(cfg[Cfg.SIZE]):
        s[q] = -1 if q >= off_tab else 0
    h = 0
    for i in range(c):
        n = 0
        down = 0
        for t in range(d):
            x = tableau[i, t]
            if x == NO_CARD:
                break
            if x == FACE_DOWN:
                s[off_tab + i * d + t] = hidden[h]
                h += 1
                down += 1
            else:
                s[off_tab + i * d + t] = x
            n += 1
        s[off_len + i] = n
        s[off_down + i] = down
    sl = counts[0]
    off_st = cfg[Cfg.OFF_STOCK]
    # The stock is stored with the next card to turn last.
    for t in range(sl):
        card = known[t] if t < n_known else hidden[h + t - n_known]
        s[off_st + sl - 1 - t] = card
    cap = cfg[Cfg.STOCK]
    wl = 0
    off_w = cfg[Cfg.OFF_WASTE]
    for t in range(cap):
        x = waste[t]
        if x != NO_CARD:
            s[off_w + wl] = x
            wl += 1
    s[Slot.STOCK_LEN] = sl
    s[Slot.WASTE_LEN] = wl
    s[Slot.REDEALS] = counts[1]
    for p in range(8):
        s[Slot.FOUND + p] = foundations[p]


_NO_KNOWN = np.zeros(0, dtype=np.int8)


class Determinizer:
    """Fills state arrays from observations for one variant (buffers reused between calls).

    :meth:`fill` is the allocation-light form of :func:`determinize` that search agents call
    many times per move.
    """

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.cfg = config_for(variant)
        self._unseen = np.zeros(2 * N_CODES, dtype=np.int8)

    def unseen(self, obs: Observation, known_stock: np.ndarray | None = None) -> np.ndarray:
        """The unseen cards, codes ascending (a copy)."""
        known = _NO_KNOWN if known_stock is None else np.asarray(known_stock, dtype=np.int8)
        n = unseen_into(obs["tableau"], obs["waste"], obs["foundations"], known, len(known), self._unseen)
        if n < 0:
            raise ValueError("the observation shows some card more than twice")
        return self._unseen[:n].copy()

    def fill(
        self,
        obs: Observation,
        out: np.ndarray,
        rng: np.random.Generator | None = None,
        known_stock: np.ndarray | None = None,
    ) -> np.ndarray:
        """Write a determinized state array into ``out`` and return it (see :func:`determinize`)."""
        known = _NO_KNOWN if known_stock is None else np.asarray(known_stock, dtype=np.int8)
        counts = obs["counts"]
        if len(known) > counts[0]:
            raise ValueError(f"{len(known)} known stock cards, but the stock holds {int(counts[0])}")
        n = unseen_into(obs["tableau"], obs["waste"], obs["foundations"], known, len(known), self._unseen)
        hidden_slots = int(np.count_nonzero(obs["tableau"] == FACE_DOWN)) + int(counts[0]) - len(known)
        if n != hidden_slots:
            raise ValueError(f"the observation leaves {n} cards unseen for {hidden_slots} hidden places")
        hidden = self._unseen[:n]
        if rng is not None:
            hidden = hidden[rng.permutation(n)]
        fill_state(obs["tableau"], obs["waste"], obs["foundations"], counts, self.cfg, hidden, known, len(known), out)
        return out


_DETERMINIZERS: dict[Variant, Determinizer] = {}


def determinizer(variant: Variant) -> Determinizer:
    d = _DETERMINIZERS.get(variant)
    if d is None:
        d = _DETERMINIZERS[variant] = Determinizer(variant)
    return d


def determinize(
    obs: Observation,
    variant: Variant,
    rng: np.random.Generator | None = None,
    known_stock: np.ndarray | None = None,
) -> GameState:
    """A full game state consistent with what the observation shows.

    Args:
        obs: The env's ``Dict`` observation (an ``"oracle"`` one works too: its extra fields
            are ignored).
        variant: The rules in force (fixes the shapes).
        rng: Shuffles the unseen cards into the hidden slots; ``None`` puts them in code
            order (deterministic).
        known_stock: Stock cards the player knows, next to turn first (after a redeal: see
            :class:`StockRecall`); they head the stock, unseen cards fill the rest.

    Raises:
        ValueError: the observation is impossible (a card shown three times, or the unseen
            cards do not match the hidden places).
    """
    d = determinizer(variant)
    state = GameState(variant)
    d.fill(obs, state.array, rng, known_stock)
    return state


def state_from_oracle(obs: Observation, variant: Variant) -> GameState:
    """The exact state shown by an ``observation="oracle"`` observation (stock and face-down cards included)."""
    if "stock" not in obs or "tableau_revealed" not in obs:
        raise ValueError("an oracle observation is needed (make the env with observation='oracle')")
    stock = obs["stock"][: int(obs["counts"][0])].astype(np.int8)
    state = GameState(variant)
    args = (obs["tableau_revealed"], obs["waste"], obs["foundations"], obs["counts"], state.cfg)
    fill_state(*args, _NO_KNOWN, stock, len(stock), state.array)
    # Face-down counts: the hidden cards sit at the bottom of each column.
    off = int(state.cfg[Cfg.OFF_DOWN])
    state.array[off : off + variant.columns] = np.count_nonzero(obs["tableau"] == FACE_DOWN, axis=1)
    return state


class StockRecall:
    """Remembers a redealt stock: the waste turned over, its bottom card the next to turn.

    Call :meth:`update` with every observation of a game, in order (it notices a redeal as a
    drop in the redeals left, and takes the waste of the observation before it). Between
    redeals, :meth:`known_stock` is what is left of that sequence: its last ``counts[0]``
    cards, next to turn first.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._prev_waste: np.ndarray | None = None
        self._prev_redeals = -1
        self._redealt: np.ndarray | None = None

    def update(self, obs: Observation) -> None:
        redeals = int(obs["counts"][1])
        if self._prev_waste is not None and redeals < self._prev_redeals:
            self._redealt = self._prev_waste
        self._prev_redeals = redeals
        waste = obs["waste"]
        self._prev_waste = waste[waste != NO_CARD].astype(np.int8)

    def known_stock(self, obs: Observation) -> np.ndarray | None:
        """The stock, next card first, when it is known; else ``None``."""
        if self._redealt is None:
            return None
        n = int(obs["counts"][0])
        if n > len(self._redealt):  # not the stock we saw dealt (e.g. a new game): forget it
            return None
        return self._redealt[len(self._redealt) - n :]
