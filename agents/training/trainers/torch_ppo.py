"""``algo: TorchPPO``: the project's PPO (:mod:`agents.training.torch_ppo`) with games, rollouts and
updates on one torch device, driven through a run folder.

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
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.configs.train_config import TORCH_ALGO, parse_schedule
from agents.storage.modelfile import load_model, save_model

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

    def fresh_model(self, device: str) -> Any:
        """A fresh MaskablePPO model of the config's network on ``device``: its policy is what
        TorchPPO trains, and ``save`` writes it as an ordinary MaskablePPO ``.zip``."""
        from ..networks.policies import build_model

        config = self.config
        venv = self.env.sb3_vec_env(1, num_threads=1)  # for its spaces; it never steps
        # The container is an SB3 model, whose ent_coef is a number: it keeps the schedule's start
        # (TorchPPO reads the schedule itself, from the config: settings_of).
        ent_coef = schedule(config.ent_coef)
        assert ent_coef is not None
        shell = config.model_copy(
            update={"device": device, "batch_size": min(config.batch_size, config.n_steps), "ent_coef": ent_coef(1.0)}
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SB3's remark that its one-game buffer is smaller than a minibatch
            model = build_model(shell, venv, config.seed, self.env.variant)
        venv.close()
        model.env = None
        model.n_envs = config.num_envs
        model.batch_size = config.batch_size
        return model

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
            model = load_model(start.path, device=device)
            done = int(model.num_timesteps)
            self.log(f"resuming {run_dir} from {start.path.name} ({done:,} of {self.total:,} steps) on {device}")
        else:
            model = self.fresh_model(device)
            self.start_model(model, start)
            self.log(f"training {self.algo} on {self.env.env_id} for {self.total:,} steps on {device} -> {run_dir}")
        # torch.distributions re-checks arguments in every call SB3's policy makes (not on this path,
        # but in the imitation before it).
        torch.distributions.Distribution.set_default_validate_args(False)
        games.reset()
        ppo = TorchPPO(model.policy, games, settings_of(config), seed=config.seed + done)

        def before_save(steps: int) -> None:
            model.num_timesteps = steps

        saves = ZipSaves(run_dir, lambda path: save_model(model, path), before_save)
        session = self.session(
            run_dir, done, saves, self.validation(model.policy, games.device), config.eval_freq, config.save_freq
        )
        model.set_logger(session.logger)
        steps, total = done, self.total
        interrupted = False
        try:
            if steps < total:
                session.begin()
            go_on = steps < total
            while go_on:
                t0 = time.monotonic()
                steps += ppo.collect()
                t1 = time.monotonic()
                stats = ppo.update(max(0.0, 1.0 - steps / total))
                t2 = time.monotonic()
                model.num_timesteps = steps
                size = ppo.rollout.size
                fps = {"fps": size / max(t2 - t0, 1e-9), "collect_fps": size / max(t1 - t0, 1e-9)}
                go_on = session.rollout_done(steps, ppo.episodes.means(), stats, fps)
                ppo.episodes.clear()
        except KeyboardInterrupt:
            interrupted = True
            self.log("interrupted: saving a checkpoint")
        model.num_timesteps = steps
        session.finish(steps, interrupted)
        if interrupted:
            raise KeyboardInterrupt
