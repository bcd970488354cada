"""Small policies and real observations for the tests of building, saving and loading a policy
(:func:`agents.training.networks.policies.build_policy`, :mod:`agents.storage.policyfile`)."""

from __future__ import annotations

import json
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.configs.train_config import TrainConfig

#: ``policy_kwargs`` of each network, small enough to build in a blink.
NETWORKS: dict[str, dict[str, Any]] = {
    "lookup_scorer": {
        "features_extractor": "lookup_scorer",
        "features_extractor_kwargs": {"hidden": 8, "rank": 2, "value_dim": 8},
    },
    "move_scorer": {
        "features_extractor": "move_scorer",
        "features_extractor_kwargs": {"embed_dim": 4, "hidden": 8, "rank": 2, "value_dim": 8},
    },
    "card_embedding": {
        "features_extractor": "card_embedding",
        "features_extractor_kwargs": {"embed_dim": 4, "column_dim": 8, "features_dim": 16},
        "net_arch": [16],
    },
    "card_attention": {
        "features_extractor": "card_attention",
        "features_extractor_kwargs": {"top_cards": 3, "d_model": 8, "n_heads": 2, "n_layers": 1, "features_dim": 16},
        "net_arch": [16],
    },
    "mlp": {"features_extractor": "mlp", "net_arch": {"pi": [16], "vf": [8]}},
}


def tiny_config(network: str, **updates: Any) -> TrainConfig:
    """A config of the small ``network`` (``mlp`` reads the flat observation), with ``updates``."""
    settings: dict[str, Any] = {"num_envs": 4, "n_steps": 8, "batch_size": 16, "n_epochs": 1, "seed": 5}
    settings["policy_kwargs"] = NETWORKS[network]
    if network == "mlp":
        settings.update(policy="MlpPolicy", env_kwargs={"observation": "flat"})
    settings.update(updates)
    return TrainConfig(**settings)


def model_of(config: TrainConfig, env_id: str, seed: int | None = None) -> Any:
    """The MaskablePPO model :func:`~agents.training.networks.policies.build_model` makes on a one-game env."""
    from agents.training.networks.policies import build_model
    from forty_thieves_env.envs.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env(env_id, n_envs=1, num_threads=1, **config.env_kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's remark that a one-game buffer is smaller than a minibatch
        model = build_model(config, venv, config.seed if seed is None else seed, env_id)
    venv.close()
    return model


def run_spaces(env_id: str, env_kwargs: dict[str, Any] | None = None) -> tuple[Any, Any, Any]:
    """``(variant, observation_space, action_space)`` of a run of ``env_id`` with ``env_kwargs``
    (the env resolved as the spine resolves it; the trainer-only keys left out)."""
    from agents.training.networks.policies import spaces_for
    from forty_thieves_env.envs.resolved import ResolvedEnv

    kwargs = {k: v for k, v in (env_kwargs or {}).items() if k not in ("deals", "render_mode")}
    env = ResolvedEnv.resolve(env_id, kwargs)
    return (env.variant, *spaces_for(env.variant, env.observation))


def rewrite_data(source: Path, dest: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """A copy of the model zip ``source`` at ``dest`` whose ``data`` entry ``edit`` changed in place."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(dest, "w") as zout:
        for name in zin.namelist():
            entry = zin.read(name)
            if name == "data":
                doc = json.loads(entry)
                edit(doc)
                entry = json.dumps(doc).encode()
            zout.writestr(name, entry)
    return dest


def observations(env_id: str, n: int, seed: int = 0, **env_kwargs: Any) -> tuple[Any, np.ndarray]:
    """``n`` observations of real games (a batch: a dict of stacked fields, or an array) and their
    action masks, from positions reached by random legal moves."""
    import gymnasium as gym

    import forty_thieves_env  # noqa: F401  (registers the ids)

    env = gym.make(env_id, **env_kwargs)
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    seen, masks = [], []
    while len(seen) < n:
        seen.append(obs)
        masks.append(info["action_mask"].copy())
        for _ in range(int(rng.integers(1, 6))):
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                obs, info = env.reset()
    env.close()
    if isinstance(seen[0], dict):
        return {key: np.stack([o[key] for o in seen]) for key in seen[0]}, np.stack(masks)
    return np.stack(seen), np.stack(masks)


def outputs(policy: Any, obs: Any, masks: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """The masked action logits ``(n, n_actions)`` and the values ``(n, 1)`` of ``policy`` on a batch."""
    policy.set_training_mode(False)
    with torch.no_grad():
        tensor, _ = policy.obs_to_tensor(obs)
        logits = policy.get_distribution(tensor, action_masks=masks).distribution.logits
        return logits.cpu(), policy.predict_values(tensor).cpu()


def adam_step(policy: Any, obs: Any, masks: np.ndarray) -> None:
    """One optimizer step on a made-up loss, so that the optimizer has moments to save."""
    policy.set_training_mode(True)
    tensor, _ = policy.obs_to_tensor(obs)
    actions = torch.as_tensor(masks.argmax(axis=1), device=policy.device)
    values, log_prob, entropy = policy.evaluate_actions(tensor, actions, action_masks=masks)
    loss = values.square().mean() - log_prob.mean() - 0.01 * entropy.mean()
    policy.optimizer.zero_grad()
    loss.backward()
    policy.optimizer.step()


def same_state(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two state dicts (a module's or an optimizer's, nested) hold the same keys and values."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and torch.equal(a.cpu(), b.cpu())
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_state(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_state(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
