"""The SB3 callbacks of a training run: episode stats, the progress bar, the time limit and the
evaluation on fixed validation deals. Importing this module imports stable-baselines3."""

from __future__ import annotations

import json
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
from stable_baselines3.common.callbacks import BaseCallback


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


class DealEvalCallback(MaskableEvalCallback):
    """MaskableEvalCallback on :class:`~agents.training.envs.FixedDeals`: the same validation deals every time.

    Keeps ``eval_state.json`` (every evaluation and the best mean reward) so that a
    resumed run only replaces ``best_model.zip`` with a better model.
    """

    def __init__(self, *args: Any, state_path: Path, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.state_path = state_path
        self.state: dict[str, Any] = {"best_mean_reward": None, "best_timesteps": None, "evaluations": []}
        if state_path.exists():
            self.state = json.loads(state_path.read_text(encoding="utf-8"))
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
            self.state["best_mean_reward"] = float(self.best_mean_reward)
            self.state["best_timesteps"] = int(self.num_timesteps)
            self.state["best_win_rate"] = entry["win_rate"]
        self.state_path.write_text(json.dumps(self.state, indent=1) + "\n", encoding="utf-8")
        return keep_going
