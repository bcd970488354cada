"""No policy network's logits change when only the hidden cards change (a player never sees them).

Every network the docs name on every observation they name, as a config builds it: the combinations a
config refuses (a network whose logits would read the oracle's hidden cards; the flat observation with
a network that reads fields) are refused naming the fix, and every other is built and held to it: two
positions that differ only in their hidden cards (the stock's order, the face-down cards of Rank and
File) give the same logits. On the oracle observation the two inputs do differ, and the asymmetric
critic's value does read them: a network that let the stock into its logits would fail here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from hidden_cards import permute_hidden, random_states

from agents.configs.config_file import load_env_config
from agents.configs.train_config import ConfigError
from agents.players.policy import policy_input, policy_logits
from agents.training.networks.policies import build_policy, spaces_for
from forty_thieves_env.envs.observation import ObservationEncoder

PPO_YAML = Path(__file__).resolve().parents[4] / "configs" / "ppo.yaml"
NETWORKS = ("card_embedding", "card_attention", "mlp", "move_scorer", "lookup_scorer")
OBSERVATIONS = ("dict", "flat", "oracle")


def configured(env_id: str, network: str, observation: str) -> tuple:
    overrides = [
        "imitation=null",
        f"policy_kwargs.features_extractor={network}",
        "policy_kwargs.features_extractor_kwargs=null",
        f"env_kwargs.observation={observation}",
        f"policy={'MlpPolicy' if observation == 'flat' else 'MultiInputPolicy'}",
    ]
    if network == "lookup_scorer" and observation == "oracle":
        overrides.append("policy_kwargs.features_extractor_kwargs={critic_stock: 8}")
    return load_env_config(PPO_YAML, env_id, overrides)


def refused(network: str, observation: str) -> bool:
    """What the config rules refuse: the oracle for every network but lookup_scorer's, flat
    observations for a network that reads the fields."""
    return (observation == "oracle" and network != "lookup_scorer") or (observation == "flat" and network != "mlp")


@pytest.mark.parametrize("observation", OBSERVATIONS)
@pytest.mark.parametrize("network", NETWORKS)
def test_logits_never_read_a_hidden_card(network: str, observation: str) -> None:
    env_id = "FortyThieves-RankAndFile-v0"  # three of each four tableau cards face down, and a stock
    if refused(network, observation):
        with pytest.raises(ConfigError, match=r"--set "):  # one line that names the fix
            configured(env_id, network, observation)
        return
    env, config = configured(env_id, network, observation)
    torch.manual_seed(0)
    policy = build_policy(config, *spaces_for(env.variant, env.observation), "cpu", 0, variant=env.variant)
    with torch.no_grad():  # trained weights everywhere: the critic's stock table starts at zero
        for param in policy.parameters():
            param.add_(torch.randn_like(param) * 0.1)
    policy.set_training_mode(False)
    encode = ObservationEncoder(env.variant, env.observation)
    rng = np.random.default_rng(1)
    compared = inputs_differ = values_differ = 0
    for game in random_states(env.variant.name, 30, seed=5, stock_bias=0.5):
        other = permute_hidden(game, rng)
        if other is None:
            continue
        a, b = encode(game.array), encode(other.array)
        compared += 1
        if isinstance(a, dict):
            inputs_differ += not all(np.array_equal(a[k], b[k]) for k in a)
        else:
            inputs_differ += not np.array_equal(a, b)
        logits_a, logits_b = (policy_logits(policy, policy_input(policy, x)) for x in (a, b))
        torch.testing.assert_close(logits_a, logits_b, rtol=0, atol=0)
        with torch.no_grad():
            va = policy.predict_values(policy.obs_to_tensor(a)[0])
            vb = policy.predict_values(policy.obs_to_tensor(b)[0])
        values_differ += not torch.equal(va, vb)
    assert compared >= 10
    if observation == "oracle":
        assert inputs_differ > 0  # the oracle shows the hidden cards ...
        assert values_differ > 0  # ... and the critic reads them: only the logits must not
    else:
        assert inputs_differ == 0  # a player's observation holds no hidden card to begin with
