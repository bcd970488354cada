"""Positions and a teacher's moves, row-aligned (:class:`Demonstrations`): what the imitation
fits a policy to (:func:`agents.training.imitation.clone`), whether its games were just played by
the teacher (:func:`agents.training.imitation.collect`) or read from a data set
(:meth:`agents.datasets.dataset.Dataset.to_demonstrations`); and the training deals both draw
(:func:`training_deals`).

Beyond the moves, a data set of a search teacher tells which positions were *decisive* (some
sampled line won: the search knew something there) and how its votes split between moves
(*soft targets*): :class:`Demonstrations` carries both when it has them, so the fit can weight the
decisive positions and aim at the vote shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from forty_thieves_env.envs.observation import O_NAMES, O_STOCK

FIELDS = O_NAMES[:O_STOCK]  # a player's observation fields (the oracle's come after)


@dataclass
class Demonstrations:
    """Positions and the teacher's moves, row-aligned.

    Attributes:
        obs: Observation fields, each ``(N, *field shape) int8``.
        masks: ``(N, n_actions) bool`` legal moves.
        actions: ``(N,) int64`` the teacher's move.
        returns: ``(N,) float32`` discounted return from the position on.
        games: ``(G,)`` deals played; ``won``: ``(G,) bool``; ``home``: ``(G,)`` cards home;
            ``lengths``: ``(G,)`` positions of each game (the rows are the games in order).
        decisive: ``(N,) bool``, where a search teacher had a winning line (None: not known).
        soft_rows: ``(K,) int64`` the rows whose teacher split its votes between moves (None: none
            known), and ``soft_targets``: ``(K, n_actions) float32`` their vote shares.
    """

    obs: dict[str, np.ndarray]
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    games: np.ndarray
    won: np.ndarray
    home: np.ndarray
    lengths: np.ndarray
    decisive: np.ndarray | None = None
    soft_rows: np.ndarray | None = None
    soft_targets: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.actions)

    @staticmethod
    def concat(parts: Sequence[Demonstrations]) -> Demonstrations:
        """The parts' rows and games in order (decisive flags and soft targets kept where known)."""
        decisive = soft_rows = soft_targets = None
        if any(p.decisive is not None for p in parts):
            decisive = np.concatenate([np.zeros(len(p), bool) if p.decisive is None else p.decisive for p in parts])
        offsets = np.cumsum([0, *(len(p) for p in parts)])
        soft = [(p, o) for p, o in zip(parts, offsets, strict=False) if p.soft_rows is not None and len(p.soft_rows)]
        if soft:
            soft_rows = np.concatenate([p.soft_rows + o for p, o in soft])  # type: ignore[operator]
            soft_targets = np.concatenate([p.soft_targets for p, _ in soft])  # type: ignore[misc]
        return Demonstrations(
            obs={k: np.concatenate([p.obs[k] for p in parts]) for k in FIELDS},
            masks=np.concatenate([p.masks for p in parts]),
            actions=np.concatenate([p.actions for p in parts]),
            returns=np.concatenate([p.returns for p in parts]),
            games=np.concatenate([p.games for p in parts]),
            won=np.concatenate([p.won for p in parts]),
            home=np.concatenate([p.home for p in parts]),
            lengths=np.concatenate([p.lengths for p in parts]),
            decisive=decisive,
            soft_rows=soft_rows,
            soft_targets=soft_targets,
        )


def training_deals(n: int, seed: int) -> np.ndarray:
    """``n`` distinct deal numbers from the training range, drawn with ``seed``."""
    from forty_thieves_env.engine.deals import TRAIN_RANGE

    rng = np.random.default_rng([seed, 0x1D17A7E])
    lo, hi = TRAIN_RANGE
    deals = np.unique(rng.integers(lo, hi + 1, size=2 * n + 16))
    rng.shuffle(deals)
    return deals[:n]
