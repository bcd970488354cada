"""TorchPPO's algorithm held to sb3-contrib's MaskablePPO: GAE, the masked distribution, the
policy's outputs, the truncation bootstrap, and what an update does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents.configs.config_file import load_env_config
from agents.players.policy import encoder_of, masked_entropy, masked_log_probs, policy_forward, sample_actions
from agents.training.rollout import Rollout
from agents.training.torch_ppo import PPOSettings, TorchPPO
from agents.training.trainers.torch_ppo import TorchPPOTrainer, settings_of
from forty_thieves_env.envs.torch_games import TorchGames

PPO_YAML = Path(__file__).resolve().parents[3] / "configs" / "ppo.yaml"


SMALL = [
    "imitation=null",
    "num_envs=8",
    "n_steps=16",
    "batch_size=32",
    "policy_kwargs.features_extractor_kwargs={hidden: 8, rank: 2, value_dim: 8, critic_stock: 4}",
]


def small_setup(overrides: list[str] = SMALL, env_id: str = "FortyThieves-v0") -> tuple:
    torch.manual_seed(0)
    env, config = load_env_config(PPO_YAML, env_id, overrides)
    policy = TorchPPOTrainer(env, config).fresh_policy("cpu")
    games = env.torch_games(config.num_envs, seed=5, num_threads=1)
    games.reset()
    return config, policy, games


def test_gae_is_sb3s() -> None:
    """Advantages and returns equal SB3's RolloutBuffer on the same rewards, values and episode ends."""
    from gymnasium import spaces
    from stable_baselines3.common.buffers import RolloutBuffer

    t, n, gamma, lam = 12, 5, 0.97, 0.9
    rng = np.random.default_rng(1)
    rewards = rng.normal(size=(t, n)).astype(np.float32)
    values = rng.normal(size=(t, n)).astype(np.float32)
    dones = rng.random((t, n)) < 0.2
    last_values = rng.normal(size=n).astype(np.float32)
    sb3 = RolloutBuffer(t, spaces.Box(0, 1, (1,)), spaces.Discrete(3), gamma=gamma, gae_lambda=lam, n_envs=n)
    starts = np.zeros(n, dtype=bool)  # SB3 stores whether each step *starts* an episode
    for k in range(t):
        sb3.add(np.zeros((n, 1)), np.zeros((n, 1)), rewards[k], starts, torch.as_tensor(values[k]), torch.zeros(n))
        starts = dones[k]
    sb3.compute_returns_and_advantage(torch.as_tensor(last_values), dones[-1])

    ours = Rollout(t, n, torch.zeros(n, 1), 3, torch.device("cpu"))
    ours.rewards.copy_(torch.as_tensor(rewards))
    ours.values.copy_(torch.as_tensor(values))
    ours.dones.copy_(torch.as_tensor(dones))
    ours.compute_advantages(torch.as_tensor(last_values), gamma, lam)
    np.testing.assert_allclose(ours.advantages.numpy(), sb3.advantages, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.returns.numpy(), sb3.returns, rtol=1e-5, atol=1e-6)


def test_masked_distribution_is_sb3s() -> None:
    from sb3_contrib.common.maskable.distributions import MaskableCategorical

    gen = torch.Generator().manual_seed(2)
    logits = torch.randn(64, 20, generator=gen) * 3
    masks = torch.rand(64, 20, generator=gen) < 0.4
    masks[:, 7] = True  # every row has a legal action
    log_probs, probs = masked_log_probs(logits, masks)
    ref = MaskableCategorical(logits=logits, masks=masks)
    torch.testing.assert_close(probs, log_probs.exp())
    actions = sample_actions(probs, gen)
    assert bool(masks.gather(1, actions.unsqueeze(1)).all()), "a masked action was sampled"
    torch.testing.assert_close(log_probs.gather(1, actions.unsqueeze(1)).squeeze(1), ref.log_prob(actions))
    torch.testing.assert_close(masked_entropy(log_probs, probs), ref.entropy())


def test_sampling_follows_the_probabilities() -> None:
    logits = torch.tensor([[0.0, 1.0, 2.0, 5.0]]).repeat(20000, 1)
    masks = torch.tensor([[True, True, True, False]]).repeat(20000, 1)
    _, probs = masked_log_probs(logits, masks)
    counts = torch.bincount(sample_actions(probs, torch.Generator().manual_seed(0)), minlength=4)
    expected = torch.softmax(torch.tensor([0.0, 1.0, 2.0]), 0) * 20000
    assert counts[3] == 0
    # Binomial standard deviations are under 70 here: 5 of them is a test that can fail only by a bug.
    assert (counts[:3].float() - expected).abs().max() < 350, (counts, expected)


@pytest.mark.parametrize("extractor", ["lookup_scorer", "mlp"])
def test_policy_forward_is_evaluate_actions(extractor: str) -> None:
    """The logits, values, log-probabilities and entropies TorchPPO computes (from the encoded
    inputs, for the lookup_scorer) are those of the policy's own evaluate_actions."""
    overrides = list(SMALL)
    if extractor == "mlp":
        overrides = [*overrides[:-1], "policy=MlpPolicy", "policy_kwargs.features_extractor=mlp"]
        overrides += ["env_kwargs.observation=flat", "policy_kwargs.net_arch=[16]"]
    _, policy, games = small_setup(overrides)
    rng = np.random.default_rng(0)
    for _ in range(20):  # a position a few moves in
        games.step(games.random_actions(rng))
    obs, masks = games.obs, games.masks.clone()
    keys = getattr(policy.observation_space, "spaces", None)
    obs = {k: obs[k].clone() for k in keys} if keys is not None else obs.clone()
    encode = encoder_of(policy)
    assert (encode is not None) == (extractor == "lookup_scorer")
    with torch.no_grad():
        logits, values = policy_forward(policy, encode(obs) if encode else obs, encoded=encode is not None)
        log_probs, probs = masked_log_probs(logits, masks)
        actions = sample_actions(probs, torch.Generator().manual_seed(1))
        ref_values, ref_logp, ref_entropy = policy.evaluate_actions(obs, actions, action_masks=masks.numpy())
    torch.testing.assert_close(values, ref_values.squeeze(-1))
    torch.testing.assert_close(log_probs.gather(1, actions.unsqueeze(1)).squeeze(1), ref_logp)
    torch.testing.assert_close(masked_entropy(log_probs, probs), ref_entropy)


def test_collect_keeps_what_was_played_and_bootstraps_truncations() -> None:
    # A 3-step time limit: every game is truncated (not terminated) at steps 2, 5, 8, ...
    config, policy, games = small_setup()
    games = TorchGames(
        config.num_envs, "FortyThieves-v0", seed=5, num_threads=1, max_episode_steps=3, **config.env_kwargs
    )
    games.reset()
    ppo = TorchPPO(policy, games, settings_of(config), seed=0)
    assert ppo.collect() == config.num_envs * config.n_steps
    r = ppo.rollout
    assert torch.equal(r.dones[2::3], torch.ones_like(r.dones[2::3]))
    assert float(r.dones.sum()) == r.dones[2::3].numel()
    assert bool(r.masks.gather(2, r.actions.unsqueeze(2)).all()), "an illegal action was played"
    # Rewards at truncations hold gamma * V(last observation) on top of the step's own reward
    # (the foundation reward: 1/104 a card, so what is not a multiple of it is the bootstrap).
    step_rewards = r.rewards[0:2] * 104
    assert torch.allclose(step_rewards, step_rewards.round(), atol=1e-4)
    bootstrapped = r.rewards[2] * 104
    assert not torch.allclose(bootstrapped, bootstrapped.round(), atol=1e-4)
    ep = ppo.episodes.means()
    assert ep["episodes"] == float(r.dones.sum()) and ep["length"] == 3.0


def test_update_moves_the_policy_and_stops_at_the_kl_limit() -> None:
    config, policy, games = small_setup()
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    ppo = TorchPPO(policy, games, settings_of(config), seed=0)
    ppo.collect()
    stats = ppo.update(1.0)
    assert stats["n_updates"] == config.n_steps * config.num_envs // config.batch_size
    assert stats["learning_rate"] == config.learning_rate
    moved = [k for k, v in policy.state_dict().items() if not torch.equal(v, before[k])]
    assert moved, "the update changed no weight"

    # A KL limit no update can keep: past the first minibatch (whose ratio is 1 up to rounding)
    # the update stops, out of 3 epochs of 4 minibatches.
    tight = settings_of(config.model_copy(update={"target_kl": 1e-12, "n_epochs": 3}))
    _, policy2, games2 = small_setup()
    ppo2 = TorchPPO(policy2, games2, tight, seed=0)
    ppo2.collect()
    out = ppo2.update(1.0)
    assert out["stopped_early"] == 1.0 and out["n_updates"] <= 1


def test_settings_take_the_config_schedules() -> None:
    _, config = load_env_config(PPO_YAML, "FortyThieves-v0", ["learning_rate=lin_1e-3", "clip_range_vf=0.5"])
    s = settings_of(config)
    assert isinstance(s, PPOSettings)
    assert s.learning_rate(1.0) == pytest.approx(1e-3) and s.learning_rate(0.5) == pytest.approx(5e-4)
    assert s.clip_range(0.3) == config.clip_range and s.clip_range_vf is not None and s.clip_range_vf(0.0) == 0.5


def test_the_entropy_bonus_follows_its_schedule() -> None:
    # One epoch of one minibatch: the logged loss is that minibatch's, so its entropy term
    # must carry the schedule's coefficient at the progress the update was given.
    rollout = 8 * 16
    overrides = [*SMALL, "algo=TorchPPO", "ent_coef=lin_0.5_0.1", "n_epochs=1", f"batch_size={rollout}"]
    config, policy, games = small_setup(overrides)
    s = settings_of(config)
    assert s.ent_coef(1.0) == pytest.approx(0.5) and s.ent_coef(0.0) == pytest.approx(0.1)
    ppo = TorchPPO(policy, games, s, seed=0)
    ppo.collect()
    stats = ppo.update(0.5)
    assert stats["ent_coef"] == pytest.approx(0.3)
    expected = stats["pg"] + 0.3 * stats["entropy"] + config.vf_coef * stats["value"]
    assert stats["loss"] == pytest.approx(expected, rel=1e-5)
    assert stats["entropy"] < -0.1, "no entropy to weigh: the check above would not see the coefficient"


@pytest.mark.cuda
def test_a_rollout_and_an_update_on_a_gpu() -> None:
    """On a GPU: the facts in torch equal the compiled ones for the games' observations, and a
    collect and an update run there (legal actions, finite losses, the weights move)."""
    env, config = load_env_config(PPO_YAML, "FortyThieves-v0", [*SMALL, "num_envs=256", "batch_size=1024"])
    policy = TorchPPOTrainer(env, config).fresh_policy("cuda")
    games = env.torch_games(config.num_envs, device="cuda", seed=5)
    games.reset()
    fx = policy.features_extractor
    obs = {k: v.clone() for k, v in games.obs.items()}
    for on_gpu, on_cpu in zip(fx.facts(obs), fx.facts({k: v.cpu() for k, v in obs.items()}), strict=True):
        assert on_gpu.is_cuda and torch.equal(on_gpu.cpu(), on_cpu)
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    ppo = TorchPPO(policy, games, settings_of(config), seed=0)
    ppo.collect()
    r = ppo.rollout
    assert bool(r.masks.gather(2, r.actions.unsqueeze(2)).all())
    stats = ppo.update(1.0)
    assert all(np.isfinite(v) for v in stats.values())
    assert any(not torch.equal(v, before[k]) for k, v in policy.state_dict().items())
