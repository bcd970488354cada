"""One training session in a run folder: what every trainer's loop does between its own steps.

A trainer (:mod:`agents.training.trainers`) collects experience and updates its network; the
:class:`Session` does the rest, the same way for every trainer, at the boundaries the trainer
reports (:meth:`Session.rollout_done`, after each rollout or iteration):

* the figures of the episodes that ended (``rollout/win_rate``, ``rollout/cards_on_foundations``,
  ``rollout/ep_len_mean``, ``rollout/ep_rew_mean``) and the trainer's own (``train/*``), to CSV
  (``logs/progress-<session>.csv``) and TensorBoard, and a progress bar with the recent win rate;
* the periodic evaluation every ``eval_freq`` steps on the first validation deals, recorded by
  :class:`~.evaluations.Evaluations` (``eval_state.json``, ``best_model.zip``); the model a run
  starts from is evaluated too when it starts (the curve's first point), never kept as the best;
* a checkpoint every ``save_freq`` steps (``checkpoints/``, :func:`~.runs.checkpoint_path`);
* the time limit (``max_minutes``): the loop stops after the rollout that passes it.

:meth:`Session.training` wraps the trainer's loop, and :meth:`Session.finish` ends it however it
stopped: a checkpoint and ``final_model.zip`` (Ctrl-C included), then a line in
``train_info.json`` with the steps, the seconds and why it stopped (``done``, ``time limit``,
``interrupted``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from .evaluations import BEST_MODEL, Evaluations
from .runs import FINAL_MODEL, checkpoint_path, make_logger, update_train_info

#: How a trainer's update figures are named in the logs (SB3's names).
TRAIN_NAMES = {
    "pg": "policy_gradient_loss",
    "value": "value_loss",
    "entropy": "entropy_loss",
    "kl": "approx_kl",
    "clip": "clip_fraction",
    "loss": "loss",
}


class Saves(Protocol):
    """How a trainer writes its model (each write atomic)."""

    def checkpoint(self, steps: int) -> None:
        """A checkpoint after ``steps`` steps (``--resume`` continues from the newest)."""

    def final(self) -> None:
        """The model when training stopped (``final_model.zip``)."""

    def best(self) -> None:
        """The model, as the best so far (``best_model.zip``)."""


class ZipSaves:
    """:class:`Saves` of a trainer whose model is an SB3 ``.zip``: ``checkpoints/rl_model_<steps>_steps.zip``,
    ``final_model.zip``, ``best_model.zip``, each written by ``save(path)``."""

    def __init__(self, run_dir: Path, save: Callable[[Path], Any], before: Callable[[int], Any] | None = None) -> None:
        self.run_dir, self.save, self.before = run_dir, save, before

    def checkpoint(self, steps: int) -> None:
        if self.before is not None:
            self.before(steps)  # the model's own step count, say
        self.save(checkpoint_path(self.run_dir, steps))

    def final(self) -> None:
        self.save(self.run_dir / FINAL_MODEL)

    def best(self) -> None:
        self.save(self.run_dir / BEST_MODEL)


def next_multiple(steps: int, every: int) -> int | None:
    """The first multiple of ``every`` after ``steps`` (None when ``every`` is 0: never)."""
    return None if every <= 0 else (steps // every + 1) * every


class Session:
    """The services of one training session (module docstring).

    Args:
        run_dir: The run folder.
        total: Steps (RLlib: iterations) the run trains in all.
        done: Steps already trained when this session starts (0 for a fresh run).
        eval_freq: Steps between periodic evaluations (0: none).
        save_freq: Steps between checkpoints (0: only at the end).
        max_minutes: The time limit of this session (None: none).
        saves: Writes the trainer's model: checkpoints, the best and the final model.
        evaluate: Plays the live model on the validation deals; returns ``mean_reward``,
            ``win_rate``, ``mean_cards``, ``mean_length``, ``episodes`` (None: no evaluation).
        progress: Show a progress bar.
        verbose: Print the log table after each rollout.
        log: Where messages go.
        unit: What ``total`` counts, for the bar and the messages.

    Raises:
        DamagedFileError: a damaged ``eval_state.json`` (before anything trains).
    """

    def __init__(
        self,
        run_dir: Path,
        *,
        total: int,
        done: int,
        eval_freq: int,
        save_freq: int,
        max_minutes: float | None,
        saves: Saves,
        evaluate: Callable[[], Mapping[str, float]] | None,
        progress: bool = True,
        verbose: bool = False,
        log: Callable[[str], None] = print,
        unit: str = "step",
    ) -> None:
        self.run_dir, self.total, self.done = run_dir, int(total), int(done)
        self.saves, self.evaluate, self.log, self.verbose, self.unit = saves, evaluate, log, verbose, unit
        self.save_freq = save_freq
        self.evaluations = Evaluations(run_dir)
        self.logger = make_logger(run_dir, verbose)
        self.eval_freq = eval_freq if evaluate is not None else 0
        self.next_eval = next_multiple(done, self.eval_freq)
        self.next_save = next_multiple(done, save_freq)
        self.deadline = None if max_minutes is None else time.monotonic() + 60.0 * max_minutes
        self.started = time.monotonic()
        self.steps = self.done
        self.stopped: str | None = None
        self.bar: Any = None
        self.quiet = not progress
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, initial=self.done, unit=unit, smoothing=0.1)

    # ----- the loop's boundaries ------------------------------------------------------------
    def begin(self) -> None:
        """Before the first rollout: evaluate the model the run starts from (a fresh run only)."""
        if self.done == 0 and self.eval_freq > 0:
            self._evaluate(0, start=True)
            self.logger.record("time/total_timesteps", 0)  # so the start's row says where it is
            self.logger.dump(0)

    def rollout_done(
        self,
        steps: int,
        episodes: Mapping[str, float] | None = None,
        stats: Mapping[str, float] | None = None,
        fps: Mapping[str, float] | None = None,
        dump: bool = True,
    ) -> bool:
        """Record a rollout (or iteration) that ended at ``steps``; evaluate and checkpoint when
        due. Returns whether the trainer goes on (False: the total or the time limit is reached).

        Args:
            steps: Steps trained so far.
            episodes: Means over the episodes that ended in it (``episodes``, ``won``, ``cards``,
                ``length``, ``return``), or None.
            stats: The update's figures (logged under ``train/``; :data:`TRAIN_NAMES`).
            fps: ``time/`` figures (``fps``, ``collect_fps``).
            dump: Write the log row now (a trainer whose library dumps its own rows passes False).
        """
        self.steps = steps = int(steps)
        record = self.logger.record
        if episodes and episodes.get("episodes"):
            record("rollout/win_rate", episodes["won"])
            record("rollout/success_rate", episodes["won"])
            record("rollout/cards_on_foundations", episodes["cards"])
            if "length" in episodes:
                record("rollout/ep_len_mean", episodes["length"])
                record("rollout/ep_rew_mean", episodes["return"])
            if self.bar is not None:
                self.bar.set_postfix(win=f"{100 * episodes['won']:.1f}%", refresh=False)
        if episodes is not None:
            record("rollout/episodes", int(episodes.get("episodes", 0)))
        for key, value in (stats or {}).items():
            record(f"train/{TRAIN_NAMES.get(key, key)}", value)
        for key, value in (fps or {}).items():
            record(f"time/{key}", int(value))
        record("time/total_timesteps", steps)
        if self.bar is not None:
            self.bar.update(steps - self.bar.n)
        if self.next_eval is not None and steps >= self.next_eval:
            self._evaluate(steps)
            self.next_eval = next_multiple(steps, self.eval_freq)
        if dump:
            self.logger.dump(steps)
        if self.next_save is not None and steps >= self.next_save:
            self.saves.checkpoint(steps)
            self.next_save = next_multiple(steps, self.save_freq)
        if steps >= self.total:
            return False
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.stopped = "time limit"
            return False
        return True

    def _evaluate(self, steps: int, start: bool = False) -> None:
        assert self.evaluate is not None
        t0 = time.monotonic()
        result = self.evaluate()
        better = self.evaluations.add(steps, dict(result), time.monotonic() - t0, self.saves.best, start=start)
        self.logger.record("eval/mean_reward", result["mean_reward"])
        self.logger.record("eval/success_rate", result["win_rate"])
        self.logger.record("eval/mean_cards", result["mean_cards"])
        if self.quiet or self.verbose:
            best = " (best)" if better else (" (the start)" if start else "")
            win, reward = 100 * result["win_rate"], result["mean_reward"]
            self.log(f"eval at {steps:,}: win {win:.1f} %, mean reward {reward:.3f}{best}")

    @contextmanager
    def training(self, steps: Callable[[], int]) -> Iterator[Session]:
        """The trainer's loop runs inside: the start model is evaluated first (when there is
        training to do), Ctrl-C stops it, and :meth:`finish` always ends it at ``steps()`` (the
        trainer's count: a checkpoint, the final model, ``train_info.json``); an interrupted
        session raises ``KeyboardInterrupt`` again once all is saved."""
        interrupted = False
        try:
            if self.done < self.total:
                self.begin()
            yield self
        except KeyboardInterrupt:
            interrupted = True
            self.log("interrupted: saving a checkpoint")
        self.finish(steps(), interrupted)
        if interrupted:
            raise KeyboardInterrupt

    # ----- the end ------------------------------------------------------------------------------
    def finish(self, steps: int, interrupted: bool = False) -> str:
        """Save a checkpoint and ``final_model.zip``, add the session to ``train_info.json``;
        return why it stopped (``done``, ``time limit`` or ``interrupted``)."""
        steps = int(steps)
        if self.bar is not None:
            self.bar.close()
        seconds = time.monotonic() - self.started
        why = "interrupted" if interrupted else (self.stopped or "done")
        if self.total == 0:
            self.log("n_timesteps is 0: the final model is the one the run starts from (the imitation's, say)")
        elif steps == self.done and why == "done":
            self.log(f"{self.run_dir} has already trained {steps:,} {self.unit}s (of {self.total:,})")
        self.saves.checkpoint(steps)
        self.saves.final()
        self.logger.close()
        rate = (steps - self.done) / max(seconds, 1e-9)
        self.log(f"{why}: {steps:,} {self.unit}s, {seconds:.0f} s this session ({rate:.0f} {self.unit}s/s)")
        update_train_info(self.run_dir, steps, seconds, why, self.log)
        return why
