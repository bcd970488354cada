"""The shipped models play the same games as when they were shipped.

Each row was recorded by playing a shipped model on its own variant, on deals 1-3, as its metadata
says (all four draw their moves from the policy: ``deterministic: false``) with the agent seeded by
the deal number: the number of moves, the outcome and a digest of the whole move list. The
``classic`` and ``relaxed`` rows were recorded at commit 353d0af, the ``streets`` rows when it was
shipped (on top of 9409991), the ``josephine`` rows when it was shipped (on top of aeccd57). A
change of code that moves a network class, touches the observation or the action encoding shows
up here as another game.
"""

from __future__ import annotations

import hashlib
import json

import pytest
import torch

import forty_thieves_env  # noqa: F401  (registers the ids)
from agents.players.base import make_agent
from forty_thieves_env.envs.env import FortyThievesEnv

#: (model, deal) -> (moves, won, cards on the foundations, sha256 of the JSON move list, first 16 hex digits)
GAMES = {
    ("classic", 1): (162, False, 37, "5e63ca0da401cf2a"),
    ("classic", 2): (257, True, 104, "2cfb237071d2ba0b"),
    ("classic", 3): (1000, False, 44, "ecf677a245289dbd"),
    ("relaxed", 1): (263, True, 104, "411c320e2e17f774"),
    ("relaxed", 2): (241, True, 104, "0b3038c38344c890"),
    ("relaxed", 3): (264, True, 104, "8e0f4649d050b5a6"),
    ("streets", 1): (1000, False, 33, "515929ed89b554de"),
    ("streets", 2): (267, True, 104, "93ed4d8fd35e2635"),
    ("streets", 3): (1000, False, 56, "829558d0e4e3dd83"),
    ("josephine", 1): (1000, False, 41, "81d7d91e71e617fe"),
    ("josephine", 2): (230, True, 104, "3ee2e8712ac9e55c"),
    ("josephine", 3): (179, False, 61, "bf27af8e07c53363"),
}


def play(model: str, deal: int) -> tuple[int, bool, int, str]:
    """One game of the shipped model ``model`` on its own variant (each is named after it); the move list's digest."""
    agent = make_agent("ppo", model, model=model)
    env = FortyThievesEnv(model)
    obs, info = env.reset(options={"deal": deal})
    agent.reset(seed=deal)
    moves: list[int] = []
    for _ in range(1000):
        action = agent.act(obs, info["action_mask"])
        moves.append(int(action))
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    digest = hashlib.sha256(json.dumps(moves).encode()).hexdigest()[:16]
    return len(moves), bool(info["won"]), int(info["cards_on_foundations"]), digest


@pytest.mark.parametrize(("model", "deal"), sorted(GAMES))
def test_a_shipped_model_plays_its_recorded_game(model: str, deal: int) -> None:
    torch.set_num_threads(1)
    assert play(model, deal) == GAMES[model, deal]
