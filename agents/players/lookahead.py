"""The ``lookahead`` agent: Monte Carlo search over the stock orders a player cannot see.

It knows only what a player knows (the ``Dict`` observation, plus a redealt stock's order,
remembered with :class:`~agents.players.view.StockRecall`). Each move it decides by *perfect
information Monte Carlo* (PIMC):

1. Sample ``samples`` determinizations: full game states that agree with everything seen,
   the hidden cards (stock, face-down cards) a random permutation of the unseen cards
   (:mod:`agents.players.view`).
2. Take the ``candidates`` best legal moves by the heuristic's score (pointless moves and
   moves back into a position seen this game only when nothing else is left).
3. For every candidate and every sample, play the candidate, then roll the game out with
   the heuristic policy (:func:`agents.players.heuristic.rollout`, compiled: it plays from the
   visible cards of the sampled state, so it does not cheat inside its own world) until won,
   stuck, only pointless moves, or ``rollout_steps`` moves. All candidates share the same
   samples and the same tie-break noise (common random numbers).
4. Play the candidate with the most rollout wins, then the most cards home on average;
   ties go to the heuristic's order.

The heuristic's move is played without search when it is the only legal move, when it sends
a *safe* card home (one that nothing still out could be built on: such a move never loses a
win), when no other move is sensible, and once the game has gone ``max_idle`` moves without a
card home or a stock turn (the stock spent and the cards only shuffled about: the search has
nothing left to find, and the move cap ends the game).

Budget: ``samples`` x ``candidates`` rollouts of at most ``rollout_steps`` moves per decision,
and optionally ``max_seconds`` per decision (samples are then added one at a time until the
time is up, at least one; the play is then no longer reproducible, since it depends on the
machine's speed). Without ``max_seconds`` the agent is deterministic given its seed.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from agents.hashing import GOLDEN, noise
from forty_thieves_env.engine.actions import Kind, decode
from forty_thieves_env.engine.cards import N_CARDS
from forty_thieves_env.engine.layout import Cfg, Slot
from forty_thieves_env.engine.rules import apply_action, column_top, is_safe
from forty_thieves_env.engine.variants import Variant

from .base import Observation
from .heuristic import HeuristicAgent, rollout, seed_to_u64
from .view import StockRecall
from .weights import POINTLESS


@njit(cache=True)
def evaluate_candidates(states, cfg, cands, w, seed, max_steps, max_idle, wins, home):
    """Add to ``wins[c]`` / ``home[c]`` the outcome of a heuristic rollout after ``cands[c]`` in each of ``states``.

    ``states``: ``(K, size) int8`` sampled positions (left unchanged); sample ``k`` uses the
    rollout seed ``seed + k * golden`` for every candidate.
    """
    size = cfg[Cfg.SIZE]
    s = np.empty(size, dtype=np.int8)
    tmp = np.empty(size, dtype=np.int8)
    mask = np.zeros(cfg[Cfg.N_ACTIONS], dtype=np.bool_)
    scores = np.zeros(cfg[Cfg.N_ACTIONS], dtype=np.float64)
    cap = 64
    while cap < 4 * max_steps:
        cap *= 2
    table = np.zeros(cap, dtype=np.uint64)
    no_moves = np.empty(0, dtype=np.int64)  # the rollouts' moves are not kept
    for k in range(states.shape[0]):
        rseed = seed + np.uint64(k + 1) * GOLDEN
        for c in range(cands.shape[0]):
            for q in range(size):
                s[q] = states[k, q]
            apply_action(s, cfg, cands[c])
            won, h, _ = rollout(s, cfg, w, table, rseed, max_steps, max_idle, mask, scores, tmp, no_moves)
            wins[c] += won
            home[c] += h


def is_safe_home(cfg: np.ndarray, s: np.ndarray, a: int) -> bool:
    """Whether action ``a`` sends a safe card home in state ``s`` (such a move never costs a win)."""
    kind, i, _, _ = decode(cfg, a)
    if kind == Kind.WASTE_FOUNDATION:
        card = int(s[int(cfg[Cfg.OFF_WASTE]) + int(s[Slot.WASTE_LEN]) - 1])
    elif kind == Kind.COLUMN_FOUNDATION:
        card = int(column_top(s, cfg, i))
    else:
        return False
    return bool(is_safe(s, cfg, card))


class LookaheadAgent(HeuristicAgent):
    """PIMC with heuristic rollouts (see the module docstring).

    Args:
        variant: The rules in force.
        seed: Seeds the samples and the rollouts' tie-breaks.
        samples: Determinizations per decision.
        candidates: Moves searched per decision (the heuristic's best ones).
        rollout_steps: Longest rollout, in moves.
        max_idle: A rollout stops, and the agent stops searching, after this many moves in a
            row without a card home or a stock turn (shuffling cards once the stock is spent).
        max_seconds: Optional time budget per decision (makes play machine-dependent).
        weights: Heuristic weight overrides, for the candidate order and the rollouts.
    """

    name = "lookahead"
    observation = "dict"

    def __init__(
        self,
        variant: str | Variant = "classic",
        seed: int | None = None,
        samples: int = 16,
        candidates: int = 4,
        rollout_steps: int = 400,
        max_idle: int = 40,
        max_seconds: float | None = None,
        weights: dict[str, float] | None = None,
    ) -> None:
        if samples < 1 or candidates < 1 or rollout_steps < 1:
            raise ValueError("samples, candidates and rollout_steps must be at least 1")
        self.samples = int(samples)
        self.candidates = int(candidates)
        self.rollout_steps = int(rollout_steps)
        self.max_idle = int(max_idle)
        self.max_seconds = max_seconds
        self._recall = StockRecall()
        super().__init__(variant, seed, avoid_cycles=True, weights=weights)
        self._samples = np.zeros((self.samples, int(self._cfg[Cfg.SIZE])), dtype=np.int8)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._recall.reset()
        self._idle = 0
        self._progress: tuple[int, int, int] | None = None
        self.searched = 0  # decisions that ran rollouts, this game

    def _rollout_seed(self) -> np.uint64:
        return seed_to_u64(int(self.rng.integers(2**63)))

    def act(self, observation: Observation, action_mask: np.ndarray) -> int:
        self._recall.update(observation)
        cfg = self._cfg
        # The state's hidden slots are in code order: the heuristic's scoring never reads them.
        best, s, mask, tie_seed = self._choose(observation, action_mask, check_all=True)
        progress = (int(observation["foundations"].sum()), int(observation["counts"][0]), int(observation["counts"][1]))
        self._idle = 0 if progress != self._progress else self._idle + 1
        self._progress = progress
        legal = np.flatnonzero(mask)
        if legal.size == 1 or self._idle >= self.max_idle or is_safe_home(cfg, s, best):
            return int(best)
        # Candidates: the heuristic's order (its tie-break noise included), sensible moves first.
        order = sorted(legal.tolist(), key=lambda a: (-self._scores[a], -noise(tie_seed, a)))
        sensible = [a for a in order if self._scores[a] > POINTLESS]
        if len(sensible) <= 1:  # one sensible move, or only pointless and cycling ones: nothing to search
            return int(best)
        cands = np.array(sensible[: self.candidates], dtype=np.int64)
        self.searched += 1
        known = self._recall.known_stock(observation)
        wins = np.zeros(cands.size, dtype=np.float64)
        home = np.zeros(cands.size, dtype=np.float64)
        seed = self._rollout_seed()
        t0 = time.perf_counter()
        n = 0
        if self.max_seconds is None:
            for k in range(self.samples):
                self._det.fill(observation, self._samples[k], self.rng, known)
            budget = (self.rollout_steps, self.max_idle)
            evaluate_candidates(self._samples, cfg, cands, self.weights, seed, *budget, wins, home)
            n = self.samples
        else:
            while n < self.samples and (n == 0 or time.perf_counter() - t0 < self.max_seconds):
                one = self._samples[n : n + 1]
                self._det.fill(observation, one[0], self.rng, known)
                seed_n = np.uint64((int(seed) + n * 0x632BE59BD9B4E019) % 2**64)
                budget = (self.rollout_steps, self.max_idle)
                evaluate_candidates(one, cfg, cands, self.weights, seed_n, *budget, wins, home)
                n += 1
        value = wins * (N_CARDS + 1) + home  # wins first, then cards home
        return int(cands[int(np.argmax(value))])  # argmax: the first best, i.e. the heuristic's order
