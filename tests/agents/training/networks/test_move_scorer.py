"""The move-scoring network: logits in the action codec's order, distances from home, SB3 wiring."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch
from scorer_checks import assert_logits_follow_the_columns, played_positions

import forty_thieves_env  # noqa: F401
from agents.training.networks.move_scorer import DIST_FACE_DOWN, DIST_NO_CARD, MoveScorer, MoveScorerPolicy
from forty_thieves_env.engine.variants import get_variant

IDS = {"classic": "FortyThieves-v0", "relaxed": "FortyThieves-Relaxed-v0"}


def _observations(env_id: str, n: int = 6, moves: int = 25) -> dict[str, torch.Tensor]:
    """``n`` positions after ``moves`` random legal moves from deals 1..n, as a batch."""
    return played_positions(env_id, n, moves, seed=0, random_lengths=False)


def _scorer(env_id: str) -> MoveScorer:
    env = gym.make(env_id)
    torch.manual_seed(0)
    net = MoveScorer(env.observation_space, max_run=env.unwrapped.variant.max_run)
    for p in net.parameters():  # big random weights: every logit differs
        torch.nn.init.normal_(p, std=0.5)
    return net.eval()


@pytest.mark.parametrize("name", ["classic", "relaxed"])
def test_logits_follow_the_columns(name: str) -> None:
    """Swapping two columns swaps the logits of the moves that name them (the codec order)."""
    assert_logits_follow_the_columns(_scorer(IDS[name]), name, _observations(IDS[name]))


def test_distances_from_home() -> None:
    net = _scorer(IDS["classic"])
    heights = torch.zeros(1, 8)
    heights[0, 0] = 3  # clubs pile 0 holds A-3: the 4 can go home, the 5 is one away
    heights[0, 2] = 13  # a finished diamonds pile; the other is empty
    d = net._distances(heights)[0]
    assert d[0].item() == 0  # the other clubs pile is empty: an ace goes home now
    assert d[3].item() == 0 and d[4].item() == 1 and d[12].item() == 9
    assert d[13].item() == 0 and d[13 + 12].item() == 12  # diamonds: the empty pile counts
    assert d[26 + 5].item() == 5
    assert d[52].item() == DIST_FACE_DOWN and d[53].item() == DIST_NO_CARD


def test_policy_masks_and_trains() -> None:
    """MaskablePPO builds the policy, plays only legal moves and takes a gradient step."""
    from sb3_contrib import MaskablePPO

    env = gym.make(IDS["classic"])
    model = MaskablePPO(MoveScorerPolicy, env, n_steps=32, batch_size=16, n_epochs=1, seed=0, verbose=0)
    assert isinstance(model.policy.action_net, torch.nn.Identity)
    obs, info = env.reset(options={"deal": 5})
    before = [p.detach().clone() for p in model.policy.parameters()]
    for _ in range(20):
        action, _ = model.predict(obs, action_masks=info["action_mask"])
        assert info["action_mask"][int(action)]
        obs, _, term, trunc, info = env.step(int(action))
        assert not info["illegal_action"]
        if term or trunc:
            obs, info = env.reset()
    model.learn(64)
    changed = [not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True)]
    assert any(changed)


@pytest.mark.parametrize("alternate", [False, True])
def test_card_facts(alternate: bool) -> None:
    """Fits-on-a-top and builders-still-out, against the rules' own ``fits`` and a direct count."""
    from forty_thieves_env.engine.config import config_for
    from forty_thieves_env.engine.rules import fits

    cfg = config_for(get_variant("streets" if alternate else "classic"))
    env = gym.make(IDS["classic"])
    net = MoveScorer(env.observation_space, alternate=alternate)
    tops = torch.tensor([[5, 30, 51, 13, 40, 53, 0, 26, 44, 19]])
    heights = torch.tensor([[3, 0, 13, 5, 0, 0, 7, 2]]).float()
    fits_all, out_all = net._facts(tops, heights)
    got_fits, got_out = fits_all[0, :52], out_all[0, :52]
    assert fits_all[0, 52:].tolist() == out_all[0, 52:].tolist() == [0, 0]  # face-down, no card
    h = heights[0].long().tolist()
    for code in range(52):
        want_fit = any(t < 52 and fits(cfg, code, t) for t in tops[0].tolist())
        assert bool(got_fits[code]) == want_fit, code
        suit, rank = divmod(code, 13)
        if rank == 0:
            assert got_out[code] == 0
            continue
        suits = ((2, 3) if suit < 2 else (0, 1)) if alternate else (suit,)
        out = sum(1 for s in suits for p in (2 * s, 2 * s + 1) if h[p] < rank)  # rank-1 not yet on pile p
        assert got_out[code] == out, code
