"""The card-embedding extractor: its fast lookup gives exactly nn.Embedding's rows and gradients."""

from __future__ import annotations

import gymnasium as gym
import torch

import forty_thieves_env  # noqa: F401
from agents.training.networks import CardEmbeddingExtractor
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
