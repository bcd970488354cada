"""What a trainer is: the interface the spine (:func:`agents.training.train.train`) drives.

The spine reads the config, resolves the env once, makes or reopens the run folder and writes its
record (:mod:`agents.training.runs`); then it hands the trainer that env, the config and the
folder. A trainer implements :meth:`Trainer.train` (collect, update, report each rollout to its
:class:`~agents.training.session.Session`) and may refuse what it cannot train before anything is
written (:meth:`Trainer.check`) and say where ``--resume`` continues (:meth:`Trainer.resume_point`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from agents.configs.train_config import RunConfig
from forty_thieves_env.envs.resolved import ResolvedEnv

from ..runs import ResumePoint, resume_point
from ..session import Saves, Session


class Trainer(ABC):
    """One algorithm's training (module docstring).

    Args:
        env: The run's env, resolved once (its rules, observation and reward).
        config: The run's config (the model :data:`~agents.configs.train_config.CONFIG_MODELS`
            gives its ``algo``).
        progress: Show a progress bar.
        verbose: Print the log table after each rollout.
        log: Where messages go.
    """

    #: The ``algo`` it trains (its key in :data:`agents.training.trainers.TRAINERS`).
    algo: ClassVar[str]
    #: What its ``total`` counts.
    unit: ClassVar[str] = "step"
    #: Whether the spine plays its model on the test deals at the end (``final_eval_episodes``).
    plays_final_evaluation: ClassVar[bool] = True

    def __init__(
        self,
        env: ResolvedEnv,
        config: RunConfig,
        *,
        progress: bool = True,
        verbose: bool = False,
        log: Callable[[str], None] = print,
    ) -> None:
        self.env, self.config = env, config
        self.progress, self.verbose, self.log = progress, verbose, log

    @property
    def total(self) -> int:
        """What the run trains in all (steps; RLlib: iterations)."""
        return int(getattr(self.config, "n_timesteps"))  # noqa: B009 (a PPO config's key)

    def check(self) -> None:
        """Refuse what cannot train (a device this machine lacks, a start model of another
        network), before the run folder is made. Raises ``ValueError`` naming the fix."""
        return None

    def versions(self) -> Mapping[str, str | None]:
        """Library versions for ``versions.json`` beyond the common ones (Ray's, say)."""
        return {}

    def resume_point(self, run_dir: Path, log: Callable[[str], None] = print, mend: bool = True) -> ResumePoint:
        """Where ``--resume`` continues ``run_dir`` (:func:`agents.training.runs.resume_point`)."""
        return resume_point(run_dir, False, log, mend)

    def session(
        self,
        run_dir: Path,
        done: int,
        saves: Saves,
        evaluate: Callable[[], Mapping[str, float]] | None,
        eval_freq: int,
        save_freq: int,
    ) -> Session:
        """A :class:`~agents.training.session.Session` of this trainer's run from ``done`` on."""
        return Session(
            run_dir,
            total=self.total,
            done=done,
            eval_freq=eval_freq,
            save_freq=save_freq,
            max_minutes=self.config.max_minutes,
            saves=saves,
            evaluate=evaluate,
            progress=self.progress,
            verbose=self.verbose,
            log=self.log,
            unit=self.unit,
        )

    @abstractmethod
    def train(self, run_dir: Path, start: ResumePoint) -> Any:
        """Train from ``start`` (a checkpoint, a finished stage or the start) until the total, the
        time limit or Ctrl-C; end with :meth:`Session.finish`. Ctrl-C saves, then raises
        ``KeyboardInterrupt`` again."""
