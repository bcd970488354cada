"""The ``guided_solver``: the sampling solver with a learned policy deciding what its votes leave open."""

from __future__ import annotations

import numpy as np
import pytest

from agents.evaluation.evaluate import evaluate
from agents.players.base import make_agent
from agents.players.guided_solver import GuidedSolverAgent
from agents.players.heuristic import HeuristicAgent
from agents.players.lookahead import is_safe_home
from agents.players.weights import CYCLE
from forty_thieves_env.envs.env import FortyThievesEnv

pytest.importorskip("sb3_contrib")


def lowest_first(agent: GuidedSolverAgent) -> None:
    """Replace the prior's logits with a fixed preference: the lower the action number, the likelier."""
    n = agent.n_actions
    agent.prior.logits = lambda observation: -np.arange(n, dtype=np.float32)  # type: ignore[method-assign]


def test_without_budget_it_plays_the_policys_move_unless_the_heuristic_must():
    # No nodes to spend, so no vote: each greedy move is the policy's first move that does not lead
    # back to a seen position, except a safe card home or a lone legal move (the heuristic's).
    agent = GuidedSolverAgent("classic", seed=2, game_nodes=0, max_idle=10**6, greedy=True)
    lowest_first(agent)
    heuristic = HeuristicAgent("classic", seed=2)  # fed the same positions: the same cycle table and ties
    env = FortyThievesEnv("classic", illegal_action="raise")
    obs, info = env.reset(options={"deal": 3})
    agent.reset(seed=2)
    heuristic.reset(seed=2)
    policy_moves = 0
    for _ in range(300):
        mask = info["action_mask"]
        h, s, _, _ = heuristic._choose(obs, mask, check_all=True)
        legal = np.flatnonzero(mask)
        if legal.size == 1 or is_safe_home(heuristic._cfg, s, h):
            expected = h
        else:
            expected = next((int(a) for a in legal if heuristic._scores[a] > CYCLE), int(legal[0]))
            policy_moves += expected != h
        move = agent.act(obs, mask)
        assert move == expected
        obs, _, terminated, truncated, info = env.step(move)
        if terminated or truncated:
            break
    assert agent.solves == 0
    assert policy_moves > 10  # the policy, not the heuristic, chose many of the moves


def fallback_game(seed: int) -> list[int]:
    """The first 120 moves of deal 3 by a guided solver without budget whose policy is uniform."""
    agent = GuidedSolverAgent("classic", game_nodes=0, max_idle=10**6)
    n = agent.n_actions
    agent.prior.logits = lambda observation: np.zeros(n, dtype=np.float32)
    env = FortyThievesEnv("classic", illegal_action="raise")
    heuristic = HeuristicAgent("classic")
    obs, info = env.reset(options={"deal": 3})
    agent.reset(seed=seed)
    heuristic.reset(seed=seed)
    moves = []
    for _ in range(120):
        mask = info["action_mask"]
        heuristic._choose(obs, mask, check_all=True)
        move = agent.act(obs, mask)
        assert heuristic._scores[move] > CYCLE or (heuristic._scores[mask] <= CYCLE).all()  # never a move back
        moves.append(move)
        obs, _, terminated, truncated, info = env.step(move)
        if terminated or truncated:
            break
    return moves


def test_the_sampled_fallback_is_seeded_and_avoids_cycles():
    first = fallback_game(seed=4)
    assert fallback_game(seed=4) == first
    assert fallback_game(seed=5) != first


def test_a_confident_policy_is_played_without_search():
    env = FortyThievesEnv("classic", illegal_action="raise")
    figures = {}
    for confident in (None, 0.9):
        agent = GuidedSolverAgent("classic", seed=0, samples=2, nodes_per_solve=1000, confident=confident)
        n = agent.n_actions
        agent.prior.logits = lambda observation, n=n: -50.0 * np.arange(n, dtype=np.float32)  # sure of its move
        obs, info = env.reset(options={"deal": 5})
        agent.reset(seed=0)
        for _ in range(60):
            obs, _, terminated, truncated, info = env.step(agent.act(obs, info["action_mask"]))
            if terminated or truncated:
                break
        figures[confident] = (agent.solves, agent.trusted)
    assert figures[None][0] > 0 and figures[None][1] == 0
    assert figures[0.9] == (0, figures[0.9][1]) and figures[0.9][1] > 0


def test_options_and_the_prior_are_checked():
    with pytest.raises(ValueError, match="confident"):
        GuidedSolverAgent("classic", confident=1.5)
    with pytest.raises(ValueError, match="samples"):
        GuidedSolverAgent("classic", samples=0)
    with pytest.raises((ValueError, FileNotFoundError)):
        GuidedSolverAgent("classic", model="no-such-model")
    agent = make_agent("guided_solver", "classic", seed=1, samples=2)
    assert agent.prior.info is not None and agent.prior.info.name == "classic"  # the shipped model by default
    assert "classic" in repr(agent)


def test_evaluate_plays_it_with_the_shipped_prior():
    result = evaluate(
        "guided_solver",
        "classic",
        deals=[2],
        seed=0,
        workers=1,
        max_moves=60,
        progress=False,
        agent_kwargs={"samples": 2, "nodes_per_solve": 1000},
    )
    assert result.summary["games"] == 1
    assert 0 < result.results[0].moves <= 60
