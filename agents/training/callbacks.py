"""The SB3 callbacks of a training run: episode stats, the progress bar, the time limit, the
checkpoints and the evaluation on fixed validation deals. Importing this module imports
stable-baselines3. The models and the evaluation record are written atomically
(:mod:`agents.storage.files`): SB3's own callbacks save in place, where a kill leaves a file cut short."""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
from stable_baselines3.common.callbacks import BaseCallback

from agents.storage.files import damaged, read_json, write_json
from agents.storage.modelfile import save_model

from .runs import EVAL_STATE_ADVICE, checkpoint_path


class EpisodeStats(BaseCallback):
    """Win rate and cards home of the last 100 training episodes (``rollout/win_rate``)."""

    def __init__(self, window: int = 100) -> None:
        super().__init__()
        self.won: deque[float] = deque(maxlen=window)
        self.cards: deque[float] = deque(maxlen=window)

    def _on_step(self) -> bool:
        for done, info in zip(self.locals["dones"], self.locals["infos"], strict=False):
            if done and ("won" in info or "is_success" in info):
                self.won.append(float(info.get("won", info.get("is_success", False))))
                self.cards.append(float(info.get("cards_on_foundations", 0)))
        return True

    def _on_rollout_end(self) -> None:
        if self.won:
            self.logger.record("rollout/win_rate", float(np.mean(self.won)))
            self.logger.record("rollout/cards_on_foundations", float(np.mean(self.cards)))


class Progress(BaseCallback):
    """A tqdm bar over the run's total steps, with the recent training win rate."""

    def __init__(self, total: int, stats: EpisodeStats, enabled: bool = True) -> None:
        super().__init__()
        self.total, self.stats, self.enabled = total, stats, enabled
        self.bar: Any = None

    def _on_training_start(self) -> None:
        if self.enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, initial=self.num_timesteps, unit="step", smoothing=0.1)

    def _on_step(self) -> bool:
        if self.bar is not None:
            self.bar.update(self.num_timesteps - self.bar.n)
            if self.n_calls % 50 == 0 and self.stats.won:
                self.bar.set_postfix(win=f"{100 * np.mean(self.stats.won):.1f}%", refresh=False)
        return True

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()


class StopAfter(BaseCallback):
    """Stops training after ``seconds`` of wall-clock time."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.start = time.monotonic()
        self.stopped = False

    def _on_training_start(self) -> None:
        self.start = time.monotonic()

    def _on_step(self) -> bool:
        if time.monotonic() - self.start > self.seconds:
            self.stopped = True
            return False
        return True


class Checkpoints(BaseCallback):
    """``checkpoints/rl_model_<steps>_steps.zip`` every ``save_freq`` calls (SB3's
    ``CheckpointCallback``'s files, saved atomically)."""

    def __init__(self, save_freq: int, run_dir: Path) -> None:
        super().__init__()
        self.save_freq, self.run_dir = save_freq, run_dir

    def _on_step(self) -> bool:
        if self.n_calls % self.save_freq == 0:
            save_model(self.model, checkpoint_path(self.run_dir, self.num_timesteps))
        return True


class DealEvalCallback(MaskableEvalCallback):
    """MaskableEvalCallback on :class:`~agents.training.envs.FixedDeals`: the same validation deals every time.

    Keeps ``eval_state.json`` (every evaluation and the best mean reward) so that a
    resumed run only replaces ``best_model.zip`` (``best_model_path``) with a better model.

    Raises:
        DamagedFileError: a damaged ``eval_state.json`` (before any training).
    """

    def __init__(self, *args: Any, state_path: Path, best_model_path: Path | None = None, **kwargs: Any) -> None:
        super().__init__(*args, best_model_save_path=None, **kwargs)  # saved here, atomically
        self.best_model_path = best_model_path
        self.state_path = state_path
        self.state: dict[str, Any] = {"best_mean_reward": None, "best_timesteps": None, "evaluations": []}
        if state_path.exists():
            self.state = read_json(state_path, EVAL_STATE_ADVICE)
            if not isinstance(self.state.get("evaluations"), list):
                raise damaged(state_path, "no list of evaluations", EVAL_STATE_ADVICE)
            if self.state.get("best_mean_reward") is not None:
                self.best_mean_reward = float(self.state["best_mean_reward"])

    def _on_step(self) -> bool:
        if not (self.eval_freq > 0 and self.n_calls % self.eval_freq == 0):
            return True
        self.eval_env.env_method("rewind")
        best_before = self.best_mean_reward
        t0 = time.monotonic()
        keep_going = super()._on_step()
        entry = {
            "timesteps": int(self.num_timesteps),
            "mean_reward": float(self.last_mean_reward),
            "win_rate": float(np.mean(self._is_success_buffer)) if self._is_success_buffer else None,
            "episodes": int(self.n_eval_episodes),
            "seconds": round(time.monotonic() - t0, 2),
        }
        self.state["evaluations"].append(entry)
        if self.best_mean_reward > best_before:
            if self.best_model_path is not None:
                save_model(self.model, self.best_model_path)
            self.state["best_mean_reward"] = float(self.best_mean_reward)
            self.state["best_timesteps"] = int(self.num_timesteps)
            self.state["best_win_rate"] = entry["win_rate"]
        write_json(self.state_path, self.state)
        return keep_going
