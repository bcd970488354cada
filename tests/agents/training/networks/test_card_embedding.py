"""The card-embedding extractor: its fast lookup gives exactly nn.Embedding's rows and gradients."""

from __future__ import annotations

import gymnasium as gym
import torch

import forty_thieves_env  # noqa: F401
from agents.training.networks.card_embedding import CardEmbeddingExtractor
from forty_thieves_env.envs.observation import N_OBS_CODES


def _extractor() -> CardEmbeddingExtractor:
    torch.manual_seed(0)
    space = gym.make("FortyThieves-v0").observation_space
    return CardEmbeddingExtractor(space, embed_dim=8, column_dim=32, waste_cards=8, features_dim=64)


def test_lookup_is_the_embedding_table() -> None:
    ext = _extractor()
    codes = torch.randint(0, N_OBS_CODES, (5, 10, 16))
    assert torch.equal(ext._lookup(codes), ext.embed(codes))
    assert ext._lookup(codes).shape == (5, 10, 16, 8)


def test_lookup_gradient_matches_the_embedding() -> None:
    ext = _extractor()
    codes = torch.randint(0, N_OBS_CODES, (64, 40))  # many repeats of each code
    weights = torch.randn(64, 40, 8)
    (ext._lookup(codes) * weights).sum().backward()
    fast = ext.embed.weight.grad.clone()
    ext.embed.weight.grad = None
    (ext.embed(codes) * weights).sum().backward()
    torch.testing.assert_close(fast, ext.embed.weight.grad)


def test_extractor_forward_is_unchanged_by_the_lookup() -> None:
    ext = _extractor()
    envs = gym.make_vec("FortyThieves-v0", num_envs=16)
    obs, _ = envs.reset(seed=3)
    for _ in range(30):
        obs, *_ = envs.step(envs.unwrapped.random_legal_actions())
    batch = {k: torch.as_tensor(v).float() for k, v in obs.items()}
    fast = ext(batch)
    ext._lookup = ext.embed  # the plain nn.Embedding call
    assert torch.equal(fast, ext(batch))
    assert fast.shape == (16, 64)


def _plain_forward(ext: CardEmbeddingExtractor, obs: dict[str, torch.Tensor]) -> torch.Tensor:
    """The extractor written the direct way (the reference its faster forward must equal)."""
    from forty_thieves_env.engine.cards import N_RANKS
    from forty_thieves_env.envs.observation import NO_CARD

    tableau, waste = obs["tableau"].long(), obs["waste"].long()
    heights, counts = obs["foundations"], obs["counts"]
    b = tableau.shape[0]
    cols = ext.embed(tableau) + ext.depth_pos
    cols = ext.column(cols.reshape(b, ext.n_cols, -1))
    w = ext.waste_cards
    top = ext.embed(waste[:, -w:]) + ext.waste_pos
    rest = waste[:, :-w]
    present = (rest != NO_CARD).unsqueeze(-1).float()
    bag = (ext.embed(rest) * present).sum(1) / present.sum(1).clamp(min=1.0)
    h = heights.long()
    nxt = torch.where(h < N_RANKS, ext.pile_suit + h, torch.full_like(h, NO_CARD))
    parts = [cols.reshape(b, -1), top.reshape(b, -1), bag, ext.embed(nxt).reshape(b, -1)]
    parts += [heights / N_RANKS, counts * ext.counts_scale]
    return ext.head(torch.cat(parts, dim=1))


def test_forward_equals_the_plain_formulation() -> None:
    ext = _extractor()
    with torch.no_grad():  # non-zero position terms, so that moving them through the layer is tested
        ext.depth_pos.normal_()
        ext.waste_pos.normal_()
    envs = gym.make_vec("FortyThieves-v0", num_envs=32)
    obs, _ = envs.reset(seed=5)
    for _ in range(60):  # a waste of some depth
        obs, *_ = envs.step(envs.unwrapped.random_legal_actions())
    batch = {k: torch.as_tensor(v).float() for k, v in obs.items()}
    assert (batch["waste"][:, :-8] != 53).any()
    torch.testing.assert_close(ext(batch), _plain_forward(ext, batch), atol=1e-5, rtol=1e-5)
