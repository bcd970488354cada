"""The ``random`` agent: a uniformly random legal move (the floor every other agent must beat)."""

from __future__ import annotations

import numpy as np

from .base import BaseAgent, Observation, legal_actions


class RandomAgent(BaseAgent):
    """Picks uniformly among the legal actions with its seeded generator."""

    name = "random"

    def act(self, observation: Observation, action_mask: np.ndarray) -> int:
        return int(self.rng.choice(legal_actions(action_mask)))
