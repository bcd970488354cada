"""The ``guided_solver`` agent: the ``sampling_solver`` with a learned policy as its prior.

The :class:`~agents.players.sampling_solver.SamplingSolverAgent` votes with the winning lines of
solved samples; where no sample's line wins, or two moves tie, it falls back on the hand-written
heuristic. This agent keeps the votes and hands those choices to a trained policy (a ``ppo``
model, :mod:`.ppo`; by default the shipped model named like the variant):

* **Fallback.** With no vote, it plays the policy's move, not the heuristic's: drawn from the
  policy's distribution over the legal moves that do not lead back to a position seen this
  game (the heuristic's cycle test), with the agent's seeded generator; ``greedy=True`` takes
  the most likely of them instead.
* **Order.** Ties between votes, and ``mode="child"``'s candidates, go in the policy's order.
* **Confidence** (``confident``, off by default). Where the policy gives its move at least
  this probability among the legal moves, the move is played without search: the game's node
  budget is kept for the decisions the policy is unsure of.

What stays the heuristic's: a safe card sent home is played without search, the ``max_idle``
rule (after that many moves without progress the heuristic's cycle-avoiding move is played),
and the "sensible moves" test that decides whether a decision is searched at all. The policy
reads a player's observation only (an asymmetric-critic model's logits read no hidden card),
one forward pass a decision; its CPU time counts in the game's ``seconds``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from forty_thieves_env.engine.variants import Variant

from .base import Observation
from .sampling_solver import SamplingSolverAgent
from .weights import CYCLE


class GuidedSolverAgent(SamplingSolverAgent):
    """Determinized solving with votes, a learned policy deciding what the votes leave open.

    Args:
        variant: The rules in force.
        seed: Seeds the samples and the heuristic's tie-breaks.
        model: The prior: a shipped model's name, a model ``.zip`` or a run folder (see
            :func:`agents.players.shipped.resolve_model`); None: the shipped model named
            like the variant.
        confident: Play the policy's move without search where its probability among the
            legal moves is at least this (None: always search as the ``sampling_solver`` does).
        greedy: The fallback is the policy's most likely move (True) or a draw from its
            distribution over the legal moves (False, the default: a policy trained with
            sampled moves, such as the shipped ``classic``, goes in circles when greedy).
        threads: torch threads for the policy (1 suits one game a process).
        **options: The ``sampling_solver``'s options (``samples``, ``nodes_per_solve``,
            ``game_nodes``, ``game_seconds``, ``mode``, ...).
    """

    name = "guided_solver"
    observation = "dict"

    def __init__(
        self,
        variant: str | Variant = "classic",
        seed: int | None = None,
        model: str | Path | None = None,
        confident: float | None = None,
        greedy: bool = False,
        threads: int = 1,
        **options: Any,
    ) -> None:
        if confident is not None and not 0.0 < float(confident) <= 1.0:
            raise ValueError(f"confident must be in (0, 1] or None, got {confident!r}")
        super().__init__(variant, seed, **options)
        from .ppo import PPOAgent

        name = self.variant.name if model is None else model
        self.prior = PPOAgent(self.variant, model=name, deterministic=True, threads=threads)
        if self.prior.observation != "dict":
            raise ValueError(
                f"{self.prior._label} needs the hidden cards (an oracle policy); the guided_solver's "
                "prior must read a player's observation only"
            )
        self.confident = None if confident is None else float(confident)
        self.greedy = bool(greedy)
        #: Decisions this game where the policy's confidence skipped the search.
        self.trusted = 0

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.trusted = 0

    def _ranking(
        self, observation: Observation, legal: np.ndarray, best: int, tie_seed: np.uint64
    ) -> tuple[int, list[int], bool]:
        logits = self.prior.logits(observation)[legal].astype(np.float64)  # (n_legal,)
        rank = np.argsort(-logits, kind="stable")
        order = legal[rank].tolist()
        p = np.exp(logits - logits.max())
        p /= p.sum()
        # The heuristic's cycle test ran on every legal move (``check_all``): no move back.
        ok = self._scores[legal] > CYCLE
        if not ok.any():
            ok[:] = True
        if self.greedy:
            fallback = next((a for a in order if self._scores[a] > CYCLE), order[0])
        else:  # a draw from the policy, as it was trained to play (its greedy moves go in circles)
            q = np.where(ok, p, 0.0)
            fallback = int(legal[self.rng.choice(legal.size, p=q / q.sum())])
        sure = self.confident is not None and fallback == order[0] and bool(p[rank[0]] >= self.confident)
        self.trusted += sure
        return int(fallback), order, sure

    def __repr__(self) -> str:
        return (
            f"GuidedSolverAgent(variant={self.variant.name!r}, model={self.prior.model_path!r}, "
            f"samples={self.samples}, confident={self.confident!r})"
        )
