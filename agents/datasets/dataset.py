"""Reading a data set: a flat view of its positions, an episode view of its games, and the
imitation's :class:`~agents.datasets.demonstrations.Demonstrations`.

::

    from agents.datasets import load_dataset

    ds = load_dataset("data/classic-ss")        # every whole chunk; a damaged one named and skipped
    ds.positions["action"], ds.obs["tableau"]    # flat, (N,) and (N, 10, 16)
    for ep in ds.episodes():                     # one game at a time
        ep.deal, ep.won, ep.action, ep.votes()   # votes: one {move: votes} a position
    demos = ds.to_demonstrations(gamma=0.995)    # what imitation.clone takes

Positions are the games' one after another in deal-list order (chunk by chunk); the tables of
:mod:`.layout` give every array's type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.storage.files import DamagedFileError

from .layout import (
    FIELDS,
    GAME_ARRAYS,
    POSITION_ARRAYS,
    VOTE_ARRAYS,
    chunk_count,
    chunk_path,
    concat_arrays,
    obs_key,
    read_chunk,
)
from .manifest import Manifest, read_manifest


def discounted_returns(rewards: np.ndarray, lengths: np.ndarray, gamma: float) -> np.ndarray:
    """``(N,) float32``: each position's discounted return to the end of its game (no bootstrap
    past a cut game), summed in float32 backwards as the imitation's collection sums it."""
    out = np.empty(len(rewards), np.float32)
    g = np.float32(gamma)
    start = 0
    for n in lengths.tolist():
        acc = np.float32(0.0)
        for t in range(start + n - 1, start - 1, -1):
            acc = np.float32(rewards[t]) + g * acc
            out[t] = acc
        start += n
    return out


@dataclass
class Episode:
    """One game's arrays (the episode view): the per-position arrays of :mod:`.layout` for its
    rows, the observation fields in ``obs``, the sparse votes, and the game's own figures."""

    deal: int
    won: bool
    home: int
    cut: bool
    seconds: float
    obs: dict[str, np.ndarray]
    mask: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    step: np.ndarray
    samples: np.ndarray
    searched: np.ndarray
    exact: np.ndarray
    vote_n: np.ndarray
    vote_action: np.ndarray
    vote_count: np.ndarray

    def __len__(self) -> int:
        return len(self.action)

    @property
    def decisive(self) -> np.ndarray:
        """``(n,) bool``: positions where a sampled line won (the teacher had votes)."""
        return self.vote_n > 0

    def votes(self) -> list[dict[int, int]]:
        """Each position's ``{move: votes}`` (empty where none)."""
        return _vote_dicts(self.vote_n, self.vote_action, self.vote_count)

    def returns(self, gamma: float) -> np.ndarray:
        return discounted_returns(self.reward, np.asarray([len(self)]), gamma)


def _vote_dicts(vote_n: np.ndarray, actions: np.ndarray, counts: np.ndarray) -> list[dict[int, int]]:
    out, i = [], 0
    for n in vote_n.tolist():
        out.append({int(a): int(c) for a, c in zip(actions[i : i + n], counts[i : i + n], strict=True)})
        i += n
    return out


class Dataset:
    """A data set folder's whole chunks, in memory (see the module docstring).

    Attributes:
        folder: The folder.
        manifest: Its :class:`~.manifest.Manifest` (``manifest.settings``: teacher, env, seed, ...).
        obs: Field -> ``(N, ...) int8``.
        positions: ``mask``, ``action``, ``reward``, ``step``, ``samples``, ``searched``,
            ``exact``, ``vote_n``: ``(N, ...)`` each.
        votes: ``vote_action``, ``vote_count`` (``(V,)``) and ``offset`` (``(N + 1,) int64``:
            position ``i``'s votes are rows ``offset[i]:offset[i + 1]``).
        games: ``deal``, ``won``, ``home``, ``length``, ``cut``, ``seconds``: ``(G,)`` each.
        chunks: The chunks read (whole), in order.
        damaged: One line for each chunk skipped as damaged.
        missing: The chunks not collected (yet).
        n_actions: The variant's action count.
    """

    def __init__(self, folder: str | Path, log: Callable[[str], None] | None = print) -> None:
        from forty_thieves_env.envs.resolved import ResolvedEnv

        self.folder = Path(folder)
        self.manifest: Manifest = read_manifest(self.folder, "the data set cannot be read")
        s = self.manifest.settings
        game = ResolvedEnv.resolve(s.env_id, s.env_kwargs).derive(observation="dict").make()
        space = game.observation_space
        shapes = {f: tuple(space[f].shape) for f in FIELDS}
        self.n_actions = int(game.action_space.n)
        self.variant = game.variant
        parts: list[dict[str, np.ndarray]] = []
        self.chunks: list[int] = []
        self.damaged: list[str] = []
        self.missing: list[int] = []
        for k in range(chunk_count(s.games, s.chunk)):
            path = chunk_path(self.folder, k)
            if not path.exists():
                self.missing.append(k)
                continue
            try:
                parts.append(read_chunk(path, k, self.n_actions, shapes, "skipped"))
            except DamagedFileError as err:
                self.damaged.append(str(err))
                if log is not None:
                    log(str(err))
                continue
            self.chunks.append(k)
        if parts:
            arrays = concat_arrays(parts)
        else:
            arrays = {obs_key(f): np.zeros((0, *shapes[f]), np.int8) for f in FIELDS}
            arrays["mask"] = np.zeros((0, self.n_actions), bool)
            arrays |= {
                k: np.zeros(0, t) for k, t in (POSITION_ARRAYS | VOTE_ARRAYS | GAME_ARRAYS).items() if k != "mask"
            }
        self.obs = {f: arrays[obs_key(f)] for f in FIELDS}
        self.positions = {k: arrays[k] for k in POSITION_ARRAYS}
        self.votes = {k: arrays[k] for k in VOTE_ARRAYS}
        self.votes["offset"] = np.concatenate([[0], np.cumsum(arrays["vote_n"], dtype=np.int64)])
        self.games = {k: arrays[k] for k in GAME_ARRAYS}
        self._starts = np.concatenate([[0], np.cumsum(self.games["length"], dtype=np.int64)])

    # ----------------------------------------------------------------- the flat view
    def __len__(self) -> int:
        return len(self.positions["action"])

    @property
    def n_games(self) -> int:
        return len(self.games["deal"])

    @property
    def decisive(self) -> np.ndarray:
        """``(N,) bool``: positions where a sampled line won (the teacher had votes)."""
        return self.positions["vote_n"] > 0

    def game_of_position(self) -> np.ndarray:
        """``(N,) int64``: each position's game (its row in :attr:`games`)."""
        return np.repeat(np.arange(self.n_games), self.games["length"])

    def position_votes(self, i: int) -> dict[int, int]:
        """Position ``i``'s ``{move: votes}`` (empty where none)."""
        a, b = self.votes["offset"][i], self.votes["offset"][i + 1]
        return {
            int(m): int(c) for m, c in zip(self.votes["vote_action"][a:b], self.votes["vote_count"][a:b], strict=True)
        }

    def vote_counts(self, rows: np.ndarray | None = None) -> np.ndarray:
        """``(len(rows), n_actions) uint16``: the votes of ``rows`` (default: every position),
        dense; mind the memory for every position of a variant with many actions."""
        rows = np.arange(len(self)) if rows is None else np.asarray(rows, np.int64)
        out = np.zeros((len(rows), self.n_actions), np.uint16)
        off, n = self.votes["offset"], self.positions["vote_n"][rows].astype(np.int64)
        which = np.repeat(np.arange(len(rows)), n)
        src = np.repeat(off[rows], n) + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
        out[which, self.votes["vote_action"][src].astype(np.int64)] = self.votes["vote_count"][src]
        return out

    def soft_targets(self, rows: np.ndarray | None = None) -> np.ndarray:
        """``(len(rows), n_actions) float32``: a target distribution per position: the vote
        shares where the teacher had votes, else all on the teacher's move."""
        rows = np.arange(len(self)) if rows is None else np.asarray(rows, np.int64)
        counts = self.vote_counts(rows).astype(np.float32)
        total = counts.sum(1, keepdims=True)
        out = np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)
        hard = total[:, 0] == 0
        out[np.flatnonzero(hard), self.positions["action"][rows][hard].astype(np.int64)] = 1.0
        return out

    def returns(self, gamma: float) -> np.ndarray:
        """``(N,) float32`` discounted returns (see :func:`discounted_returns`)."""
        return discounted_returns(self.positions["reward"], self.games["length"], gamma)

    # ---------------------------------------------------------------- the episode view
    def episode(self, g: int) -> Episode:
        """Game ``g`` (a row of :attr:`games`)."""
        a, b = int(self._starts[g]), int(self._starts[g + 1])
        va, vb = int(self.votes["offset"][a]), int(self.votes["offset"][b])
        p = self.positions
        return Episode(
            deal=int(self.games["deal"][g]),
            won=bool(self.games["won"][g]),
            home=int(self.games["home"][g]),
            cut=bool(self.games["cut"][g]),
            seconds=float(self.games["seconds"][g]),
            obs={f: v[a:b] for f, v in self.obs.items()},
            vote_action=self.votes["vote_action"][va:vb],
            vote_count=self.votes["vote_count"][va:vb],
            **{k: p[k][a:b] for k in POSITION_ARRAYS},
        )

    def episodes(self) -> Iterator[Episode]:
        """Every game in order (views into the flat arrays, nothing copied)."""
        for g in range(self.n_games):
            yield self.episode(g)

    # ------------------------------------------------------------------- conversions
    def to_demonstrations(self, gamma: float, games: int | None = None) -> Any:
        """The :class:`agents.datasets.demonstrations.Demonstrations` of the first ``games`` games (all
        when None), for :func:`agents.training.imitation.clone`: returns discounted with ``gamma``,
        actions and game figures widened to int64 as the imitation's collection gives them, the
        decisive flags, and the vote shares of the positions whose votes split between moves.

        Raises:
            ValueError: more games asked for than the data set holds.
        """
        from .demonstrations import Demonstrations

        n_games = self.n_games if games is None else int(games)
        if not 0 <= n_games <= self.n_games or (games is not None and n_games < 1):
            raise ValueError(f"{self.folder} holds {self.n_games} games, not {n_games}")
        n = int(self.games["length"][:n_games].sum())  # its positions come first
        split = np.flatnonzero(self.positions["vote_n"][:n] > 1)  # votes for more than one move
        return Demonstrations(
            obs={f: v[:n] for f, v in self.obs.items()},
            masks=self.positions["mask"][:n],
            actions=self.positions["action"][:n].astype(np.int64),
            returns=self.returns(gamma)[:n],
            games=self.games["deal"][:n_games].astype(np.int64),
            won=self.games["won"][:n_games].copy(),
            home=self.games["home"][:n_games].astype(np.int64),
            lengths=self.games["length"][:n_games].astype(np.int64),
            decisive=self.decisive[:n].copy(),
            soft_rows=split.astype(np.int64),
            soft_targets=self.soft_targets(split),
        )

    def summary(self) -> dict[str, Any]:
        """The figures ``forty-thieves dataset info`` prints (see :func:`.command.format_info`)."""
        s = self.manifest.settings
        size = sum(chunk_path(self.folder, k).stat().st_size for k in self.chunks)
        n, g = len(self), self.n_games
        return {
            "folder": str(self.folder),
            "teacher": s.teacher,
            "teacher_options": s.teacher_options,
            "env_id": s.env_id,
            "env_kwargs": s.env_kwargs,
            "seed": s.seed,
            "chunks": len(self.chunks),
            "chunks_expected": chunk_count(s.games, s.chunk),
            "damaged": len(self.damaged),
            "games": g,
            "games_expected": s.games,
            "positions": n,
            "decisive": int(self.decisive.sum()),
            "searched": int(self.positions["searched"].sum()),
            "won": int(self.games["won"].sum()),
            "mean_home": float(self.games["home"].mean()) if g else 0.0,
            "mean_length": float(self.games["length"].mean()) if g else 0.0,
            "cut": int(self.games["cut"].sum()),
            "seconds_per_game": float(self.games["seconds"].mean()) if g else 0.0,
            "bytes": size,
        }


def load_dataset(folder: str | Path, log: Callable[[str], None] | None = print) -> Dataset:
    """Read the data set ``folder`` (see :class:`Dataset`); a damaged chunk is named on one line
    through ``log`` and skipped.

    Raises:
        FileNotFoundError: ``folder`` is not a data set (no manifest).
        DamagedFileError: its manifest is damaged.
    """
    return Dataset(folder, log)
