"""``algo: TorchPPO``: the project's PPO (:mod:`agents.training.torch_ppo`) with games, rollouts and
updates on one torch device, driven through a run folder.

The network is built from the env's spaces and the config (:func:`~agents.training.networks.policies.build_policy`)
and written as a MaskablePPO ``.zip`` without a MaskablePPO model (:mod:`agents.storage.policyfile`).
The loop: collect a rollout of ``n_steps`` steps of ``num_envs`` games (a
:class:`~forty_thieves_env.envs.torch_games.TorchGames` batch of the run's env), update, and hand
the rollout's boundary to the run's :class:`~agents.training.session.Session` (figures under
SB3's names, evaluation, checkpoints, time limit). Ctrl-C stops at once and saves a checkpoint
first. The models are MaskablePPO ``.zip`` files, so ``forty-thieves evaluate --agent ppo``,
``ship``, ``init_model`` and ``--resume`` treat both trainers' models alike, and a model trained
on a GPU plays on a CPU-only machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.configs.train_config import TORCH_ALGO, parse_schedule
from agents.storage.policyfile import load_policy
from agents.training.networks.policies import save_policy

from ..runs import ResumePoint
from ..session import ZipSaves
from .policy import PolicyTrainer, training_device


def schedule(value: float | str | None) -> Callable[[float], float] | None:
    """A config schedule as a callable of ``progress_remaining`` (None stays None)."""
    if value is None:
        return None
    parsed = parse_schedule(value)
    if callable(parsed):
        return parsed
    return lambda _progress, v=float(parsed): v


def settings_of(config: Any) -> Any:
    """The :class:`~agents.training.torch_ppo.PPOSettings` of a config."""
    from ..torch_ppo import PPOSettings

    learning_rate, clip_range = schedule(config.learning_rate), schedule(config.clip_range)
    ent_coef = schedule(config.ent_coef)
    assert learning_rate is not None and clip_range is not None and ent_coef is not None
    return PPOSettings(
        n_steps=config.n_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        learning_rate=learning_rate,
        clip_range=clip_range,
        clip_range_vf=schedule(config.clip_range_vf),
        ent_coef=ent_coef,
        vf_coef=config.vf_coef,
        max_grad_norm=config.max_grad_norm,
        target_kl=config.target_kl,
        normalize_advantage=config.normalize_advantage,
    )


class TorchPPOTrainer(PolicyTrainer):
    """PPO on a :class:`~forty_thieves_env.envs.torch_games.TorchGames` batch (module docstring)."""

    algo = TORCH_ALGO

    def check_device(self) -> None:
        from forty_thieves_env.envs.torch_games import torch_device

        torch_device(training_device(self.config.device))

    def save(self, policy: Any, path: Path, steps: int) -> None:
        """Write ``policy`` as a MaskablePPO ``.zip`` at ``path`` (:func:`agents.storage.policyfile.save_policy`)."""
        save_policy(path, policy, self.config, num_timesteps=steps, variant=self.env.variant)

    def train(self, run_dir: Path, start: ResumePoint) -> None:
        import torch

        from ..torch_ppo import TorchPPO

        config = self.config
        self.set_threads()
        device = training_device(config.device)
        done = start.steps
        games = self.env.torch_games(config.num_envs, device=device, seed=config.seed + done, num_threads=1)
        if start.stage == "checkpoint":
            assert start.path is not None
            stored = load_policy(start.path, device)
            policy, done = stored.policy, int(stored.num_timesteps)
            self.log(f"resuming {run_dir} from {start.path.name} ({done:,} of {self.total:,} steps) on {device}")
        else:
            policy = self.fresh_policy(device)
            self.start_policy(policy, lambda path: self.save(policy, path, 0), start)
            self.log(f"training {self.algo} on {self.env.env_id} for {self.total:,} steps on {device} -> {run_dir}")
        # torch.distributions re-checks arguments in every call SB3's policy makes (not on this path,
        # but in the imitation before it).
        torch.distributions.Distribution.set_default_validate_args(False)
        games.reset()
        ppo = TorchPPO(policy, games, settings_of(config), seed=config.seed + done)
        steps, total = done, self.total
        saves = ZipSaves(run_dir, lambda path: self.save(policy, path, steps))
        session = self.session(
            run_dir, done, saves, self.validation(policy, games.device), config.eval_freq, config.save_freq
        )
        with session.training(lambda: steps):
            go_on = steps < total
            while go_on:
                t0 = time.monotonic()
                steps += ppo.collect()
                t1 = time.monotonic()
                stats = ppo.update(max(0.0, 1.0 - steps / total))
                t2 = time.monotonic()
                size = ppo.rollout.size
                fps = {"fps": size / max(t2 - t0, 1e-9), "collect_fps": size / max(t1 - t0, 1e-9)}
                go_on = session.rollout_done(steps, ppo.episodes.means(), stats, fps)
                ppo.episodes.clear()
