"""A PPO rollout held as torch tensors on the training device, and its advantages (GAE).

:class:`Rollout` keeps ``T`` steps of ``N`` games: the observations the policy read (each
``Dict`` field, or the flat rows, as ``int8``), the action masks, actions, their
log-probabilities, the value estimates, rewards and episode ends. Every tensor is allocated
once and refilled in place each rollout, so collecting one allocates nothing per step.
:meth:`Rollout.compute_advantages` is GAE(λ) exactly as stable-baselines3 computes it (the
comparison with MaskablePPO depends on it), and :meth:`Rollout.minibatches` yields shuffled
index tensors: a minibatch is gathered with one ``index_select`` per tensor, on the device.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch


class Rollout:
    """``T`` steps of ``N`` games, as preallocated tensors on ``device``.

    Args:
        n_steps: ``T``, steps per game per rollout.
        num_envs: ``N``, the games.
        obs_template: One step's policy input (a dict of ``(N, ...)`` tensors or an ``(N, F)``
            tensor: the observation, or a network's encoding of it): the shapes and dtypes
            to store (``int64`` is stored as ``int32``).
        n_actions: Size of the action space.
        device: Where the tensors live.
    """

    def __init__(self, n_steps: int, num_envs: int, obs_template: Any, n_actions: int, device: torch.device) -> None:
        t, n = n_steps, num_envs
        self.n_steps, self.num_envs, self.device = t, n, device

        def like(x: torch.Tensor) -> torch.Tensor:
            # Integer inputs (card codes, table rows) are small: int64 ones are kept as int32.
            dtype = torch.int32 if x.dtype == torch.int64 else x.dtype
            return torch.zeros((t, *x.shape), dtype=dtype, device=device)

        if isinstance(obs_template, dict):
            self.obs: Any = {k: like(v) for k, v in obs_template.items()}  # (T, N, ...) per field
        else:
            self.obs = like(obs_template)  # (T, N, F)
        self.masks = torch.zeros((t, n, n_actions), dtype=torch.bool, device=device)
        self.actions = torch.zeros((t, n), dtype=torch.int64, device=device)
        self.log_probs = torch.zeros((t, n), dtype=torch.float32, device=device)
        self.values = torch.zeros((t, n), dtype=torch.float32, device=device)
        self.rewards = torch.zeros((t, n), dtype=torch.float32, device=device)
        self.dones = torch.zeros((t, n), dtype=torch.float32, device=device)  # 1: the episode ended at step t
        self.advantages = torch.zeros((t, n), dtype=torch.float32, device=device)
        self.returns = torch.zeros((t, n), dtype=torch.float32, device=device)

    @property
    def size(self) -> int:
        """Samples in a rollout (``T * N``)."""
        return self.n_steps * self.num_envs

    def store_obs(self, step: int, obs: Any) -> None:
        """Copy one step's observation (live views of the games) into slot ``step``."""
        if isinstance(self.obs, dict):
            for k, v in self.obs.items():
                v[step].copy_(obs[k])
        else:
            self.obs[step].copy_(obs)

    def compute_advantages(self, last_values: torch.Tensor, gamma: float, gae_lambda: float) -> None:
        """GAE(λ) advantages and λ-returns, as stable-baselines3's ``RolloutBuffer``.

        ``last_values``: ``(N,)`` value of each game's observation after the last step. A step
        whose episode ended (``dones``) does not look past itself; truncated episodes were
        already bootstrapped into their last reward while collecting.
        """
        last_gae = torch.zeros_like(last_values)
        next_values = last_values
        for t in reversed(range(self.n_steps)):
            live = 1.0 - self.dones[t]
            delta = self.rewards[t] + gamma * next_values * live - self.values[t]
            last_gae = delta + gamma * gae_lambda * live * last_gae
            self.advantages[t] = last_gae
            next_values = self.values[t]
        torch.add(self.advantages, self.values, out=self.returns)

    def minibatches(self, batch_size: int, generator: torch.Generator | None = None) -> Iterator[torch.Tensor]:
        """Shuffled ``(batch_size,)`` index tensors over the ``T * N`` samples; a smaller last
        one when ``batch_size`` does not divide them (as stable-baselines3)."""
        order = torch.randperm(self.size, generator=generator, device="cpu").to(self.device)
        for start in range(0, self.size, batch_size):
            yield order[start : start + batch_size]

    def gather(self, idx: torch.Tensor) -> dict[str, Any]:
        """The samples ``idx`` (flat indices into ``T * N``) of every tensor, in one dict."""

        def pick(x: torch.Tensor) -> torch.Tensor:
            return x.reshape(self.size, *x.shape[2:]).index_select(0, idx)

        obs = {k: pick(v) for k, v in self.obs.items()} if isinstance(self.obs, dict) else pick(self.obs)
        return {
            "obs": obs,
            "masks": pick(self.masks),
            "actions": pick(self.actions),
            "log_probs": pick(self.log_probs),
            "values": pick(self.values),
            "advantages": pick(self.advantages),
            "returns": pick(self.returns),
        }
