"""``build_policy``: the policy a config names, built from the spaces alone, is the one MaskablePPO
builds (same class, same initial weights for the same seed, an optimizer); ``spaces_for`` and
``run_spaces`` give the spaces an env of those rules has."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import gymnasium as gym
import torch
from tiny_policy import model_of, run_spaces, same_state, tiny_config

from agents.training.networks.policies import (
    build_policy,
    policy_kwargs_for,
    resolve_policy_class,
    spaces_for,
)
from forty_thieves_env import get_variant
from forty_thieves_env.envs.sb3 import make_sb3_vec_env

#: The small lookup_scorer with a value that reads the next stock cards (the oracle observation).
STOCK_CRITIC = {
    "features_extractor": "lookup_scorer",
    "features_extractor_kwargs": {"hidden": 8, "rank": 2, "value_dim": 8, "critic_stock": 4},
}
CASES = [
    ("lookup_scorer", "FortyThieves-Streets-v0", {}),  # the alternate build rule
    ("lookup_scorer", "FortyThieves-v0", {"env_kwargs": {"observation": "oracle"}, "policy_kwargs": STOCK_CRITIC}),
    ("move_scorer", "FortyThieves-Easy-v0", {}),  # a level: runs capped, so fewer actions
    ("card_embedding", "FortyThieves-v0", {"learning_rate": "lin_1e-3_1e-4"}),
    ("card_attention", "FortyThieves-Maria-v0", {}),  # 9 columns
    ("mlp", "FortyThieves-Relaxed-v0", {}),
]


@pytest.mark.parametrize(("network", "env_id", "updates"), CASES)
def test_a_built_policy_is_the_one_maskable_ppo_builds(network: str, env_id: str, updates: dict) -> None:
    config = tiny_config(network, **updates)
    model = model_of(config, env_id)
    variant, obs_space, action_space = run_spaces(env_id, config.env_kwargs)
    policy = build_policy(config, obs_space, action_space, "cpu", config.seed, variant=variant)

    assert type(policy) is type(model.policy)
    assert same_state(policy.state_dict(), model.policy.state_dict())
    assert same_state(policy.optimizer.state_dict(), model.policy.optimizer.state_dict())
    assert policy.optimizer.param_groups[0]["lr"] == pytest.approx(model.lr_schedule(1.0))
    # The comparison can tell weights apart: another seed builds other weights.
    other = build_policy(config, obs_space, action_space, "cpu", config.seed + 1, variant=env_id)
    assert not same_state(other.state_dict(), model.policy.state_dict())


def test_the_scorers_build_rule_comes_from_the_variant() -> None:
    config = tiny_config("lookup_scorer")
    streets = get_variant("streets")
    assert policy_kwargs_for(config.policy_kwargs, streets)["features_extractor_kwargs"]["alternate"] is True
    assert policy_kwargs_for(config.policy_kwargs, "FortyThieves-Streets-v0") == policy_kwargs_for(
        config.policy_kwargs, streets
    )
    classic = policy_kwargs_for(config.policy_kwargs, get_variant("classic"))
    assert classic["features_extractor_kwargs"]["alternate"] is False
    assert "alternate" not in policy_kwargs_for(config.policy_kwargs)["features_extractor_kwargs"]


@pytest.mark.parametrize(
    ("env_id", "env_kwargs"),
    [
        ("FortyThieves-v0", {}),
        ("FortyThieves-v0", {"observation": "oracle"}),
        ("FortyThieves-Streets-v0", {"observation": "flat"}),
        ("FortyThieves-Easy-v0", {}),
        ("FortyThieves-Relaxed-v0", {"redeals": 2, "reward": "win"}),
    ],
)
def test_run_spaces_are_the_envs_spaces(env_id: str, env_kwargs: dict) -> None:
    venv = make_sb3_vec_env(env_id, n_envs=1, num_threads=1, **env_kwargs)
    variant, obs_space, action_space = run_spaces(env_id, env_kwargs)
    assert (obs_space, action_space) == (venv.observation_space, venv.action_space)
    assert variant == venv.variant
    venv.close()


def test_spaces_for_takes_a_variant_an_env_id_or_a_preset() -> None:
    spaces = spaces_for(get_variant("streets"), "oracle")
    assert spaces_for("FortyThieves-Streets-v0", "oracle") == spaces == spaces_for("streets", "oracle")
    assert isinstance(spaces[1], gym.spaces.Discrete)
    assert spaces_for("maria", "oracle") != spaces  # maria deals 9 columns, streets 10


def test_a_policy_is_built_on_the_device_asked() -> None:
    config = tiny_config("lookup_scorer")
    policy = build_policy(config, *spaces_for("classic"), device="cpu")
    assert all(p.device == torch.device("cpu") for p in policy.parameters())
    assert policy.optimizer.param_groups[0]["params"][0] is next(policy.parameters())  # the optimizer's are its own


def test_an_unknown_policy_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown policy 'CnnPolicyX'"):
        resolve_policy_class("CnnPolicyX")
