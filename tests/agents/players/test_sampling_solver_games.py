"""The ``sampling_solver`` plays the same games as before it exposed its votes.

Each row was recorded at commit cf76878 (before ``last_votes`` and its kin were added) by playing
the agent on a classic test deal with the seed :func:`agents.evaluation.games.agent_seed` ``(0,
deal)`` gives: the number of moves, the outcome and the first 16 hex digits of the SHA-256 of the
JSON move list. Recording what a decision was made from must change no move; the figures it
records must agree with the move played.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from agents.evaluation.games import agent_seed
from agents.players.sampling_solver import SamplingSolverAgent
from forty_thieves_env.envs.env import FortyThievesEnv

ROOT = {"samples": 2, "nodes_per_solve": 2000, "game_nodes": 100_000}
CHILD = {"samples": 3, "mode": "child", "nodes_per_solve": 2000, "game_nodes": 200_000}
#: (options, deal) -> (moves, won, digest)
GAMES = [
    (ROOT, 2, (212, True, "c67462ba1dcc7039")),
    (ROOT, 3, (137, False, "57f0e654fa6c47f3")),
    (CHILD, 4, (114, False, "0a79601d5ec8b8be")),
    (CHILD, 2, (211, True, "c956e16b1a38bff8")),
]


def play(options: dict, deal: int) -> tuple[tuple[int, bool, str], list[tuple[int, dict, int, bool, bool]]]:
    env = FortyThievesEnv("classic")
    agent = SamplingSolverAgent("classic", **options)
    obs, info = env.reset(options={"deal": deal})
    agent.reset(seed=agent_seed(0, deal))
    moves, seen = [], []
    for _ in range(1000):
        move = agent.act(obs, info["action_mask"])
        moves.append(int(move))
        seen.append((int(move), agent.last_votes, agent.last_samples, agent.last_searched, agent.last_exact))
        obs, _, terminated, truncated, info = env.step(move)
        if terminated or truncated:
            break
    digest = hashlib.sha256(json.dumps(moves).encode()).hexdigest()[:16]
    return (len(moves), bool(info["won"]), digest), seen


IDS = [f"{o.get('mode', 'root')}-{d}" for o, d, _ in GAMES]


@pytest.mark.parametrize(("options", "deal", "recorded"), GAMES, ids=IDS)
def test_the_recorded_game_is_played_and_the_votes_agree_with_it(options, deal, recorded):
    game, seen = play(options, deal)
    assert game == recorded
    voted = [s for s in seen if s[1]]
    if recorded[1]:  # a won game was won by following a line: its decisions had votes
        assert voted
    for move, votes, samples, _, exact in voted:
        assert votes[move] == max(votes.values())  # the most votes (a tie broken by the heuristic's order)
        assert samples >= 1 and all(v <= samples for v in votes.values())  # a sample votes once for a move
        if exact:
            assert votes == {move: 1} and samples == 1
    assert any(s[3] for s in seen) and not all(s[3] for s in seen)  # searched at some decisions, not all
    assert all(not v and n == 0 and not searched for _, v, n, searched, _ in seen if n == 0)
    if options.get("mode", "root") == "root":  # one vote a sample at most
        assert all(sum(v.values()) <= n for _, v, n, _, _ in voted)
