"""``algo: MaskablePPO``: sb3-contrib's MaskablePPO on the native batched vector env.

The games are the project's SB3 ``VecEnv`` (:meth:`~forty_thieves_env.envs.resolved.ResolvedEnv.sb3_vec_env`:
``num_envs`` games stepped in one compiled call), or SB3's ``DummyVecEnv``/``SubprocVecEnv`` of
single envs with ``vec_env: dummy|subproc``. SB3's ``learn`` is the loop; a callback
(:class:`SessionCallback`) hands each rollout's boundary to the run's
:class:`~agents.training.session.Session` (figures, evaluation, checkpoints, time limit). The
model file is MaskablePPO's own ``.zip``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from agents.configs.train_config import MASKABLE_ALGO, ConfigError
from agents.storage.modelfile import load_model, save_model

from ..runs import ResumePoint
from ..session import Session, ZipSaves
from .policy import PolicyTrainer


class SessionCallback(BaseCallback):
    """SB3's loop reporting to a :class:`~agents.training.session.Session`: at the start of each
    rollout (the update before it done) and at the end of training, the episodes that ended
    since the last report; it stops ``learn`` when the session says so."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.sums = np.zeros(5)  # episodes, won, cards, length, return
        self.reported = -1
        self.stop = False

    def _on_rollout_start(self) -> None:
        if self.reported >= 0:  # not before the first rollout: the session began there
            self._report()

    def _on_step(self) -> bool:
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=False):
            if done:
                episode = info.get("episode") or {}
                won = float(info.get("won", info.get("is_success", False)))
                self.sums += (1.0, won, info.get("cards_on_foundations", 0), episode.get("l", 0), episode.get("r", 0))
        if self.reported < 0:
            self.reported = 0
        return not self.stop

    def _on_training_end(self) -> None:
        if self.num_timesteps > self.reported:
            self._report()

    def _report(self) -> None:
        n = self.sums[0]
        episodes = {"episodes": n}
        if n:
            episodes.update(zip(("won", "cards", "length", "return"), (self.sums[1:] / n).tolist(), strict=True))
        self.sums[:] = 0
        self.reported = self.num_timesteps
        if not self.session.rollout_done(self.num_timesteps, episodes, dump=False):
            self.stop = True


class MaskablePPOTrainer(PolicyTrainer):
    """sb3-contrib's MaskablePPO (module docstring)."""

    algo = MASKABLE_ALGO

    def fresh_model(self, device: str, venv: Any = None) -> Any:
        from ..networks.policies import build_model

        own = venv is None
        venv = venv if venv is not None else self.env.sb3_vec_env(1, num_threads=1)
        config = self.config.model_copy(update={"device": device})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SB3's remark on a one-game buffer smaller than a minibatch
            model = build_model(config, venv, config.seed, self.env.variant)
        if own:
            venv.close()
            model.env = None
        return model

    def train_env(self, seed: int) -> Any:
        """The training VecEnv: native (``vec_env: auto|native``), else SB3's of single envs."""
        config = self.config
        if config.vec_env in ("auto", "native"):
            try:
                return self.env.sb3_vec_env(config.num_envs, seed=seed, num_threads=1)
            except ImportError:
                if config.vec_env == "native":
                    raise ConfigError("vec_env: native, but forty_thieves_env.envs.sb3 is not available") from None
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

        env = self.env

        def make() -> Any:
            from gymnasium.wrappers import TimeLimit

            from forty_thieves_env.envs.registration import MAX_EPISODE_STEPS

            return TimeLimit(env.make(), MAX_EPISODE_STEPS)

        cls = SubprocVecEnv if config.vec_env == "subproc" else DummyVecEnv
        venv = cls([make] * config.num_envs)
        venv.seed(seed)
        return VecMonitor(venv)

    def train(self, run_dir: Path, start: ResumePoint) -> None:
        config = self.config
        self.set_threads()
        venv = self.train_env(config.seed + start.steps)
        if start.stage == "checkpoint":
            assert start.path is not None
            model = load_model(start.path, env=venv, device=config.device)
            self.log(f"resuming {run_dir} from {start.path.name} ({model.num_timesteps:,} of {self.total:,} steps)")
        else:
            model = self.fresh_model(config.device, venv)
            self.start_policy(model.policy, lambda path: save_model(model, path), start)
            self.log(f"training {self.algo} on {self.env.env_id} for {self.total:,} steps -> {run_dir}")
        session = self.session(
            run_dir,
            int(model.num_timesteps),
            ZipSaves(run_dir, lambda path: save_model(model, path)),
            self.validation(model.policy, model.device),
            config.eval_freq,
            config.save_freq,
        )
        model.set_logger(session.logger)
        with session.training(lambda: int(model.num_timesteps)):
            if model.num_timesteps < self.total:
                model.learn(
                    total_timesteps=self.total - model.num_timesteps,
                    callback=SessionCallback(session),
                    reset_num_timesteps=start.stage != "checkpoint",
                    progress_bar=False,
                )
        venv.close()
