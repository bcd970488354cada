"""The card-attention extractor: its output's shape and order (a column's features follow that
column's cards), empty columns and wastes without NaNs, the oracle's fields unread, its config
options, and a MaskablePPO run that trains it through ``forty-thieves train``."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from tiny_training import IMITATION, PPO_YAML, ROLLOUT, schedule, train_quietly

import forty_thieves_env  # noqa: F401  (registers the ids)
from agents.configs.config_file import load_config
from agents.configs.policy_config import AttentionKwargs
from agents.configs.train_config import ConfigError
from agents.training.networks.card_attention import CardAttentionExtractor
from forty_thieves_env.envs.observation import NO_CARD

D_MODEL = 16
SMALL = "{top_cards: 4, waste_cards: 3, d_model: 16, n_heads: 2, n_layers: 1, dim_feedforward: 32, features_dim: 32}"


def _extractor(env_id: str = "FortyThieves-v0", **env_kwargs) -> CardAttentionExtractor:
    torch.manual_seed(0)
    space = gym.make(env_id, **env_kwargs).observation_space
    ext = CardAttentionExtractor(space, top_cards=4, waste_cards=3, d_model=D_MODEL, n_heads=2, features_dim=32)
    return ext.eval()


def _batch(n: int = 8, steps: int = 30, env_id: str = "FortyThieves-v0", **env_kwargs) -> dict[str, torch.Tensor]:
    """Observations of ``n`` games after ``steps`` random legal moves, as the policy gets them (float)."""
    envs = gym.make_vec(env_id, num_envs=n, **env_kwargs)
    obs, _ = envs.reset(seed=3)
    for _ in range(steps):
        obs, *_ = envs.step(envs.unwrapped.random_legal_actions())
    envs.close()
    return {k: torch.as_tensor(v).float() for k, v in obs.items()}


def _pooled(ext: CardAttentionExtractor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """The features before the output layer, ``(B, 1 + C + W, d_model)``: what each column contributes."""
    seen: list[torch.Tensor] = []
    hook = ext.head.register_forward_hook(lambda _m, args, _out: seen.append(args[0]))
    with torch.no_grad():
        ext(batch)
    hook.remove()
    return seen[0].reshape(seen[0].shape[0], -1, D_MODEL)


def test_output_shape_for_a_batch_of_the_dict_space() -> None:
    ext = _extractor()
    batch = _batch()
    out = ext(batch)
    assert out.shape == (8, 32) and ext.features_dim == 32
    assert torch.isfinite(out).all()
    # A batch drawn from the space itself (any codes at all) goes through as well.
    space = gym.make("FortyThieves-v0").observation_space
    space.seed(0)
    sampled = [space.sample() for _ in range(4)]
    drawn = {k: torch.as_tensor(np.stack([s[k] for s in sampled])).float() for k in sampled[0]}
    assert ext(drawn).shape == (4, 32)


def test_a_card_changed_in_column_3_changes_column_3_features() -> None:
    """The pooled features keep column order: changing column 3's top card changes column 3's
    features, and with the encoder's attention off (nothing mixed across tokens) no other's."""
    ext = _extractor()
    batch = _batch()
    tableau = batch["tableau"]
    length = int((tableau[0, 3] != NO_CARD).sum())
    assert length > 0
    changed = {k: v.clone() for k, v in batch.items()}
    top = int(tableau[0, 3, length - 1])
    changed["tableau"][0, 3, length - 1] = (top + 1) % 52
    a, b = _pooled(ext, batch), _pooled(ext, changed)
    moved = (a[0] - b[0]).abs().amax(-1)  # (1 + C + W,): CLS, columns, waste tokens
    assert moved[1 + 3] > 1e-4  # column 3's features
    torch.testing.assert_close(a[1:], b[1:])  # the other games untouched

    # Without attention across tokens (every layer's attention output zeroed) a column's
    # features are its own tokens' alone: only column 3's change.
    for layer in ext.encoder.layers:
        with torch.no_grad():
            layer.self_attn.out_proj.weight.zero_()
            layer.self_attn.out_proj.bias.zero_()
    a, b = _pooled(ext, batch), _pooled(ext, changed)
    moved = (a[0] - b[0]).abs().amax(-1)
    assert moved[1 + 3] > 1e-4
    assert torch.count_nonzero(moved) == 1


def test_empty_columns_and_an_empty_waste_give_no_nan() -> None:
    ext = _extractor().train()  # the training path too
    batch = _batch(n=4, steps=0)
    batch["tableau"][:, [0, 5, 9]] = NO_CARD  # three empty columns
    batch["tableau"][1] = NO_CARD  # a game with every column empty
    batch["waste"][:] = NO_CARD
    out = ext(batch)
    assert torch.isfinite(out).all()
    out.sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in ext.parameters() if p.grad is not None)
    pooled = _pooled(ext.eval(), batch)
    assert torch.isfinite(pooled).all()


def test_the_oracle_fields_are_never_read() -> None:
    """On the oracle observation the stock and the revealed tableau change nothing."""
    ext = _extractor(observation="oracle")
    batch = _batch(n=6, observation="oracle")
    shuffled = dict(batch)
    gen = torch.Generator().manual_seed(0)
    shuffled["stock"] = batch["stock"][:, torch.randperm(batch["stock"].shape[1], generator=gen)]
    shuffled["tableau_revealed"] = torch.zeros_like(batch["tableau_revealed"])
    player = {k: batch[k] for k in ("tableau", "waste", "foundations", "counts")}
    with torch.no_grad():
        out = ext(batch)
        torch.testing.assert_close(out, ext(shuffled), rtol=0, atol=0)
        torch.testing.assert_close(out, ext(player), rtol=0, atol=0)


def test_config_takes_its_options_and_refuses_others() -> None:
    base = ["imitation=null", "env_kwargs.observation=dict", "policy_kwargs.features_extractor=card_attention"]
    _, cfg = load_config(PPO_YAML, "FortyThieves-v0", [*base, "policy_kwargs.features_extractor_kwargs=null"])
    assert cfg.policy_kwargs.features_extractor_kwargs == AttentionKwargs()
    _, cfg = load_config(PPO_YAML, "FortyThieves-v0", [*base, f"policy_kwargs.features_extractor_kwargs={SMALL}"])
    kwargs = cfg.policy_kwargs.features_extractor_kwargs
    assert isinstance(kwargs, AttentionKwargs) and (kwargs.d_model, kwargs.n_layers) == (16, 1)
    with pytest.raises(ConfigError, match=r"bogus: unknown key"):
        load_config(PPO_YAML, "FortyThieves-v0", [*base, "policy_kwargs.features_extractor_kwargs={bogus: 3}"])
    with pytest.raises(ConfigError, match=r"hidden do not apply to card_attention"):
        load_config(PPO_YAML, "FortyThieves-v0", [*base, "policy_kwargs.features_extractor_kwargs={hidden: 8}"])
    with pytest.raises(ConfigError, match=r"n_heads: d_model 30 is not a multiple of n_heads 4"):
        load_config(PPO_YAML, "FortyThieves-v0", [*base, "policy_kwargs.features_extractor_kwargs={d_model: 30}"])
    with pytest.raises(ConfigError, match=r"--set env_kwargs.observation"):  # the oracle: its logits would read it
        load_config(PPO_YAML, "FortyThieves-v0", [*base[:2], "env_kwargs.observation=oracle", *base[2:]])


def test_maskable_ppo_trains_it_from_the_command(tmp_path: Path) -> None:
    """``forty-thieves train`` with ``card_attention``: the imitation warm start, a PPO rollout,
    and the saved model is the extractor's."""
    from sb3_contrib import MaskablePPO

    overrides = [
        *ROLLOUT,
        "env_kwargs.observation=dict",
        "policy_kwargs.features_extractor=card_attention",
        f"policy_kwargs.features_extractor_kwargs={SMALL}",
        "policy_kwargs.net_arch=[16]",
        *IMITATION,
        *schedule(64, 2, 2),
    ]
    run = train_quietly(overrides, tmp_path, "attn", 64, seed=1, env_id="FortyThieves-v0")
    model = MaskablePPO.load(run / "final_model.zip")
    assert isinstance(model.policy.features_extractor, CardAttentionExtractor)
    assert model.num_timesteps >= 64
    assert (run / "imitation_model.zip").exists()
