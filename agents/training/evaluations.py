"""A run's periodic evaluations: ``eval_state.json`` (its one writer), ``evaluations.npz`` and ``best_model.zip``.

Every trainer's periodic evaluation goes through :class:`Evaluations`, so every run folder keeps
the same record whatever trained it. Each entry holds:

=================  ==============================================================================
``timesteps``      the steps (RLlib: env steps) trained when it was made
``mean_reward``    the mean episode return on the validation deals (what chooses the best model)
``win_rate``       the share of those deals won
``mean_cards``     the mean cards on the foundations at the end
``mean_length``    the mean moves a game
``episodes``       the deals played (the first ``n_eval_episodes`` validation deals, 1001..)
``seconds``        the evaluation's wall time
``start``          true for the evaluation of the model a run starts from (fresh, imitated or
                   ``init_model``'s): recorded for the curve, never kept as the best model
=================  ==============================================================================

and the file's top level the best so far (``best_mean_reward``, ``best_timesteps``,
``best_win_rate``). ``best_model.zip`` is the best model among the models this run trained:
the start is not one of them, so a run shorter than ``eval_freq`` has no best model and its
final model is the one played. ``evaluations.npz`` repeats the record in SB3's
``EvalCallback`` format (``timesteps``, ``results``, ``successes``).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agents.storage.files import damaged, read_json, write_bytes, write_json

#: What to do about a damaged ``eval_state.json``.
EVAL_STATE_ADVICE = "move it away to resume (the record of evaluations, and of which model is best, then starts afresh)"
EVAL_STATE = "eval_state.json"
BEST_MODEL = "best_model.zip"
#: The figures of an evaluation (the keys of an ``eval_state.json`` entry, less ``seconds`` and ``start``).
FIGURES = ("timesteps", "mean_reward", "win_rate", "mean_cards", "mean_length", "episodes")


class Evaluations:
    """A run folder's evaluation record (module docstring), read back checked when it exists.

    Raises:
        DamagedFileError: a damaged ``eval_state.json`` (before any training).
    """

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.path = run_dir / EVAL_STATE
        self.state: dict[str, Any] = {"best_mean_reward": None, "best_timesteps": None, "evaluations": []}
        if self.path.exists():
            self.state = read_json(self.path, EVAL_STATE_ADVICE)
            if not isinstance(self.state.get("evaluations"), list):
                raise damaged(self.path, "no list of evaluations", EVAL_STATE_ADVICE)

    def add(
        self,
        steps: int,
        result: dict[str, float],
        seconds: float,
        save_best: Callable[[], Any],
        start: bool = False,
    ) -> bool:
        """Record an evaluation; call ``save_best()`` when it is the best trained model so far.

        Args:
            steps: Steps trained.
            result: ``mean_reward``, ``win_rate``, ``mean_cards``, ``mean_length``, ``episodes``.
            seconds: The evaluation's wall time.
            save_best: Writes the model as the best (``best_model.zip``, atomically).
            start: The model the run starts from (recorded, never the best).

        Returns:
            Whether it became the best model.
        """
        entry = {"timesteps": int(steps), **{k: float(result[k]) for k in FIGURES[1:]}}
        entry["episodes"] = int(result["episodes"])
        entry["seconds"] = round(seconds, 2)
        if start:
            entry["start"] = True
        self.state["evaluations"].append(entry)
        best = self.state.get("best_mean_reward")
        better = not start and (best is None or entry["mean_reward"] > best)
        if better:
            save_best()
            self.state.update(
                best_mean_reward=entry["mean_reward"], best_timesteps=int(steps), best_win_rate=entry["win_rate"]
            )
        write_json(self.path, self.state)
        self._write_npz()
        return better

    def _write_npz(self) -> None:
        evals = self.state["evaluations"]
        buffer = io.BytesIO()
        np.savez(
            buffer,
            timesteps=np.array([e["timesteps"] for e in evals]),
            results=np.array([[e["mean_reward"]] for e in evals]),
            successes=np.array([[e["win_rate"]] for e in evals]),
        )
        write_bytes(self.run_dir / "evaluations.npz", buffer.getvalue())
