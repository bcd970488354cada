"""The ``solver`` agent: perfect information (stock order and face-down cards known).

It needs the env made with ``observation="oracle"`` (its ``observation`` attribute says so;
the evaluator does this by itself). On the first move of a game it rebuilds the exact state
from the oracle observation (:func:`agents.players.view.state_from_oracle`), runs
:func:`agents.search.solver.solve` once, and then replays the winning line move by move. When the
solver finds no win within its budget (``lost`` or ``unknown``), or the game leaves the line,
the heuristic agent plays the rest from the ordinary part of the observation.

This is an upper reference for the other agents, not a fair player: it sees what a player
cannot.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from forty_thieves_env.engine.variants import Variant
from forty_thieves_env.text.notation import parse_move

from .base import BaseAgent, Observation
from .heuristic import HeuristicAgent
from .view import state_from_oracle


class SolverAgent(BaseAgent):
    """Solves the deal at its first move and replays the line (see the module docstring).

    Args:
        variant: The rules in force.
        seed: Seeds the heuristic fallback.
        max_nodes: The solver's node budget per game.
        max_seconds: The solver's time budget per game (``None``: nodes only, which keeps
            the play reproducible).
        **solver_options: Further keyword arguments for :func:`agents.search.solver.solve`.
    """

    name = "solver"
    observation = "oracle"

    def __init__(
        self,
        variant: str | Variant = "classic",
        seed: int | None = None,
        max_nodes: int = 2_000_000,
        max_seconds: float | None = 30.0,
        **solver_options: Any,
    ) -> None:
        super().__init__(variant, seed)
        self.max_nodes = int(max_nodes)
        self.max_seconds = max_seconds
        self.solver_options = solver_options
        self._fallback = HeuristicAgent(self.variant, seed)
        self.result: Any = None  # the last SolveResult
        self._plan: list[int] | None = None
        self._next = 0
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._fallback.reset(seed)
        self.result = None
        self._plan = None
        self._next = 0

    def _solve(self, observation: Observation) -> list[int]:
        from agents.search.solver import solve

        state = state_from_oracle(observation, self.variant)
        budget: dict[str, Any] = {"max_nodes": self.max_nodes}
        budget["max_seconds"] = float("inf") if self.max_seconds is None else float(self.max_seconds)
        self.result = solve(state, **budget, **self.solver_options)
        if self.result.verdict != "won":
            return []
        return [parse_move(self.variant, m) for m in self.result.moves]

    @property
    def on_plan(self) -> bool:
        """Whether the agent is still replaying the solver's line."""
        return self._plan is not None and self._next < len(self._plan)

    def act(self, observation: Observation, action_mask: np.ndarray) -> int:
        if self._plan is None:
            self._plan = self._solve(observation)
        if self._next < len(self._plan) and action_mask[self._plan[self._next]]:
            self._next += 1
            return self._plan[self._next - 1]
        self._next = len(self._plan)  # off the line (or none): the heuristic plays on
        return self._fallback.act(observation, action_mask)
