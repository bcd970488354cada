"""PPO whose games, rollouts and updates stay on one torch device: the ``TorchPPO`` trainer's algorithm.

:class:`TorchPPO` trains a MaskablePPO policy (the same ``nn.Module``, so the model it saves is
an ordinary MaskablePPO ``.zip``) on a :class:`~forty_thieves_env.envs.torch_games.TorchGames`
batch. Each rollout is ``n_steps`` steps of every game: the policy's forward pass on the
games' observation tensors (views, no copy), a masked sample, one engine call; then GAE and
clipped PPO updates on minibatches gathered by index. Nothing goes through Python per game,
and on a GPU nothing crosses to the host per step.

It computes what sb3-contrib's MaskablePPO computes, so that the two train alike from the
same config: masked log-probabilities with masked logits at ``-1e8``, the entropy over legal
actions, time-limit truncations bootstrapped with ``gamma * V(last observation)``, GAE(λ),
advantages normalised per minibatch, the clipped surrogate, optional value clipping
(``clip_range_vf``), ``ent_coef``/``vf_coef``, gradient-norm clipping, Adam with the learning
rate of the schedule at each update, and the early stop of an update once the approximate KL
passes ``1.5 * target_kl`` (checked before that minibatch's step).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.players.policy import PolicyInputs, masked_entropy, masked_log_probs, sample_actions

from .rollout import Rollout


@dataclass
class PPOSettings:
    """The PPO hyperparameters (the config's keys of the same names; schedules as callables of
    ``progress_remaining``, 1 at the start of the run and 0 at its end)."""

    n_steps: int
    batch_size: int
    n_epochs: int
    gamma: float
    gae_lambda: float
    learning_rate: Callable[[float], float]
    clip_range: Callable[[float], float]
    clip_range_vf: Callable[[float], float] | None
    ent_coef: Callable[[float], float]
    vf_coef: float
    max_grad_norm: float
    target_kl: float | None
    normalize_advantage: bool


class EpisodeLog:
    """Sums over the episodes that ended during a rollout, kept on the games' device (no host
    round trip per step; read once a rollout by :meth:`means`)."""

    def __init__(self, device: torch.device) -> None:
        self.sums = torch.zeros(5, dtype=torch.float64, device=device)  # episodes, won, cards, length, return

    def add(self, done: torch.Tensor, won: torch.Tensor, cards: torch.Tensor, length: torch.Tensor, ret: Any) -> None:
        d = done.double()
        parts = (d, d * won, d * cards, d * length, d * ret)
        self.sums += torch.stack([x.sum() for x in parts])

    def means(self) -> dict[str, float]:
        """``episodes`` and the mean ``won``, ``cards``, ``length``, ``return`` of the episodes since :meth:`clear`."""
        n, won, cards, length, ret = self.sums.tolist()
        if n == 0:
            return {"episodes": 0.0}
        return {"episodes": n, "won": won / n, "cards": cards / n, "length": length / n, "return": ret / n}

    def clear(self) -> None:
        self.sums.zero_()


class TorchPPO:
    """Clipped PPO on a :class:`~forty_thieves_env.envs.torch_games.TorchGames` batch (module docstring).

    Args:
        policy: An SB3 maskable actor-critic policy on the games' device (its ``optimizer`` is
            the one stepped, so its state saves and resumes with the model).
        games: The training games (``autoreset="same_step"``), already :meth:`reset`.
        settings: The hyperparameters.
        seed: Seeds the action samples and the minibatch order.
    """

    def __init__(self, policy: Any, games: Any, settings: PPOSettings, seed: int = 0) -> None:
        if games.autoreset != "same_step":
            raise ValueError("TorchPPO needs games with autoreset='same_step'")
        self.policy, self.games, self.s = policy, games, settings
        self.device = games.device
        self.optimizer: torch.optim.Optimizer = policy.optimizer
        self.inputs = PolicyInputs(policy)
        template = self.inputs(games.obs)
        self.rollout = Rollout(settings.n_steps, games.num_envs, template, games.n_actions, self.device)
        self.sample_gen = torch.Generator(device=self.device).manual_seed(seed)
        self.order_gen = torch.Generator().manual_seed(seed + 1)
        self.episodes = EpisodeLog(self.device)
        self.n_updates = 0

    # ----- rollouts -----------------------------------------------------------------------
    @torch.no_grad()
    def collect(self) -> int:
        """Play ``n_steps`` steps of every game into :attr:`rollout`; returns the env steps taken."""
        s, r, g = self.s, self.rollout, self.games
        self.policy.set_training_mode(False)
        info = g.info
        for t in range(s.n_steps):
            r.store_obs(t, self.inputs(g.obs))
            r.masks[t].copy_(info["action_mask"])
            logits, values = self.inputs.forward(self._stored(t))
            log_probs, probs = masked_log_probs(logits, r.masks[t])
            actions = sample_actions(probs, self.sample_gen)
            r.actions[t] = actions
            r.log_probs[t] = log_probs.gather(1, actions.unsqueeze(1)).squeeze(1)
            r.values[t] = values
            _, rewards, terminated, truncated, info = g.step(actions)
            done = terminated | truncated
            r.rewards[t].copy_(rewards)
            r.dones[t].copy_(done)
            self.episodes.add(done, info["won"], info["final_cards"], info["final_length"], info["final_return"])
            cut = truncated & ~terminated
            if bool(cut.any()):  # rare (the time limit): one flag read a step
                self._bootstrap(t, cut.nonzero().squeeze(-1), info)
        _, last_values = self.inputs.forward(self.inputs(g.obs))
        r.compute_advantages(last_values.float(), s.gamma, s.gae_lambda)
        return r.size

    def _stored(self, t: int) -> Any:
        """The observation stored for step ``t`` (the policy reads the rollout's copy)."""
        r = self.rollout
        return {k: v[t] for k, v in r.obs.items()} if isinstance(r.obs, dict) else r.obs[t]

    def _bootstrap(self, t: int, cut: torch.Tensor, info: Any) -> None:
        """Add ``gamma * V(last observation)`` to the step-``t`` reward of the games ``cut`` whose
        episode the time limit ended (SB3's treatment of truncation)."""
        final = info["final_obs"]
        if isinstance(final, dict):
            last = {k: v.index_select(0, cut) for k, v in final.items()}
        else:
            last = final.index_select(0, cut)
        _, v = self.inputs.forward(self.inputs(last))
        self.rollout.rewards[t].index_add_(0, cut, self.s.gamma * v.float())

    # ----- updates ------------------------------------------------------------------------
    def update(self, progress_remaining: float) -> dict[str, float]:
        """``n_epochs`` passes of clipped PPO over the rollout; returns the update's statistics."""
        s, r = self.s, self.rollout
        self.policy.set_training_mode(True)
        lr = s.learning_rate(progress_remaining)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        clip = s.clip_range(progress_remaining)
        clip_vf = s.clip_range_vf(progress_remaining) if s.clip_range_vf is not None else None
        ent_coef = s.ent_coef(progress_remaining)
        sums: dict[str, list[float]] = {k: [] for k in ("pg", "value", "entropy", "kl", "clip", "loss")}
        stop = False
        for _ in range(s.n_epochs):
            for idx in r.minibatches(s.batch_size, self.order_gen):
                b = r.gather(idx)
                logits, values = self.inputs.forward(b["obs"])
                log_probs, probs = masked_log_probs(logits, b["masks"])
                new_logp = log_probs.gather(1, b["actions"].unsqueeze(1)).squeeze(1)
                adv = b["advantages"]
                if s.normalize_advantage and adv.numel() > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                log_ratio = new_logp - b["log_probs"]
                ratio = log_ratio.exp()
                pg_loss = -torch.min(adv * ratio, adv * ratio.clamp(1 - clip, 1 + clip)).mean()
                if clip_vf is not None:
                    values = b["values"] + (values - b["values"]).clamp(-clip_vf, clip_vf)
                value_loss = nn.functional.mse_loss(b["returns"], values)
                entropy_loss = -masked_entropy(log_probs, probs).mean()
                loss = pg_loss + ent_coef * entropy_loss + s.vf_coef * value_loss
                with torch.no_grad():
                    kl = float(((ratio - 1) - log_ratio).mean())
                    clipped = float(((ratio - 1).abs() > clip).float().mean())
                sums["pg"].append(float(pg_loss.detach()))
                sums["value"].append(float(value_loss.detach()))
                sums["entropy"].append(float(entropy_loss.detach()))
                sums["kl"].append(kl)
                sums["clip"].append(clipped)
                if s.target_kl is not None and kl > 1.5 * s.target_kl:
                    stop = True
                    break
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(self.policy.parameters(), s.max_grad_norm)
                self.optimizer.step()
                sums["loss"].append(float(loss.detach()))
                self.n_updates += 1
            if stop:
                break
        values, returns = r.values.flatten(), r.returns.flatten()
        var = float(returns.var())
        explained = float("nan") if var == 0 else 1.0 - float((returns - values).var()) / var
        out = {k: float(np.mean(v)) for k, v in sums.items() if v}
        out.update(
            learning_rate=lr, clip_range=clip, ent_coef=ent_coef, explained_variance=explained, n_updates=self.n_updates
        )
        out["stopped_early"] = float(stop)
        return out
