"""Collecting a teacher's games into a data set folder, in chunks that each finish whole.

:func:`collect` plays ``games`` training deals (:func:`agents.datasets.demonstrations.training_deals`
of the seed) with a registered agent, the *teacher*, on the player's ``Dict`` observation, each
game's teacher seeded with :func:`agents.evaluation.games.agent_seed` of the seed and the deal:
a game depends on ``(settings, deal)`` only, whichever worker plays it. Every position is
recorded with what the teacher's move was made from when the teacher says
(``last_votes``, ``last_samples``, ``last_searched``, ``last_exact``, as
:class:`~agents.players.sampling_solver.SamplingSolverAgent` keeps them); an agent that says
nothing is recorded with no votes.

Games are played one a job by worker processes (:func:`agents.sweeps.pool.run_jobs`) in the
deal list's order; chunk ``k`` (games ``kK .. kK+K-1``) is written, atomically, as soon as its
last game is in. A kill loses only the games of the chunks not yet written; the same command
resumes: it checks the manifest's settings (:mod:`.manifest`), keeps every chunk that reads back
whole with its deals, collects again a damaged one (named on one line), and plays the rest.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.storage.files import DamagedFileError, check_writable
from forty_thieves_env.envs.resolved import ResolvedEnv

from .layout import (
    CHUNKS,
    FIELDS,
    GAME_ARRAYS,
    POSITION_ARRAYS,
    VOTE_ARRAYS,
    chunk_count,
    chunk_path,
    obs_key,
    read_chunk,
    write_chunk,
)
from .manifest import Settings, deals_digest, open_folder


def resolve_env(env: str | ResolvedEnv) -> ResolvedEnv:
    """An env id or a preset name (``classic`` -> ``FortyThieves-v0``), resolved."""
    from forty_thieves_env.engine.variants import PRESETS
    from forty_thieves_env.envs.registration import ENV_IDS, is_env_id

    if isinstance(env, ResolvedEnv):
        return env
    if not is_env_id(env) and env in PRESETS:
        env = next(i for i, preset in ENV_IDS.items() if preset == env)
    return ResolvedEnv.resolve(env)


def git_commit() -> str | None:
    """The checkout's commit (None outside a git checkout)."""
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


# ------------------------------------------------------------------------------ one game

_W: dict[str, Any] = {}


def _init(
    env: ResolvedEnv, teacher: str, options: dict[str, Any], settings: Settings, registry: dict[str, str]
) -> None:
    from agents.players.base import make_agent, register_agent

    for name, target in registry.items():  # agents registered in the parent at run time
        register_agent(name, target)
    game = env.derive(observation="dict").make()
    _W.update(env=game, teacher=make_agent(teacher, game.variant, **options), settings=settings)


def _play(deal: int) -> dict[str, np.ndarray]:
    w = _W
    return play_game(w["env"], w["teacher"], int(deal), w["settings"])


def play_game(env: Any, teacher: Any, deal: int, settings: Settings) -> dict[str, np.ndarray]:
    """One game of ``teacher`` on ``deal``: its per-position, vote and per-game arrays (one game's rows)."""
    from agents.evaluation.games import agent_seed

    c0 = time.process_time()
    obs, info = env.reset(options={"deal": deal})
    teacher.reset(seed=agent_seed(settings.seed, deal))
    rows: dict[str, list[Any]] = {k: [] for k in (*map(obs_key, FIELDS), *POSITION_ARRAYS, *VOTE_ARRAYS)}
    idle, done = 0, False
    for t in range(settings.max_moves):
        mask = info["action_mask"]
        for f in FIELDS:
            rows[obs_key(f)].append(obs[f].copy())
        rows["mask"].append(mask.copy())
        move = int(teacher.act(obs, mask))
        votes = getattr(teacher, "last_votes", None) or {}
        rows["action"].append(move)
        rows["step"].append(t)
        rows["samples"].append(int(getattr(teacher, "last_samples", 0)))
        rows["searched"].append(bool(getattr(teacher, "last_searched", False)))
        rows["exact"].append(bool(getattr(teacher, "last_exact", False)))
        rows["vote_n"].append(len(votes))
        for a in sorted(votes):
            rows["vote_action"].append(int(a))
            rows["vote_count"].append(int(votes[a]))
        obs, reward, terminated, truncated, info = env.step(move)
        if info["illegal_action"]:
            raise RuntimeError(f"{teacher.name} played an illegal move {move} on deal {deal} at move {t}")
        rows["reward"].append(float(reward))
        idle = 0 if (reward > 0 or move == 0) else idle + 1
        done = bool(terminated or truncated)
        if done or (settings.idle_cut and idle >= settings.idle_cut):
            break
    n = len(rows["action"])
    dtypes = {obs_key(f): np.int8 for f in FIELDS} | POSITION_ARRAYS | VOTE_ARRAYS
    out = {k: np.asarray(v, dtype=dtypes[k]) if v else np.zeros(0, dtypes[k]) for k, v in rows.items()}
    game = {
        "deal": deal,
        "won": bool(info["won"]),
        "home": int(info["cards_on_foundations"]),
        "length": n,
        "cut": not done,
        "seconds": time.process_time() - c0,
    }
    out.update({k: np.asarray([v], dtype=GAME_ARRAYS[k]) for k, v in game.items()})
    return out


# ------------------------------------------------------------------------------ the folder


@dataclass
class Collected:
    """What :func:`collect` did: the folder, chunks kept, collected again and written now,
    games and positions written now, the wall seconds."""

    folder: Path
    chunks: int
    kept: int
    redone: list[int]
    written: int
    games: int
    positions: int
    seconds: float


def finished_chunks(
    folder: Path, deals: np.ndarray, settings: Settings, n_actions: int, shapes: dict[str, tuple[int, ...]],
    log: Callable[[str], None],
) -> tuple[set[int], list[int]]:  # fmt: skip
    """The chunks of ``folder`` that read back whole with their deals, and those to collect again."""
    done: set[int] = set()
    redo: list[int] = []
    for tmp in (folder / CHUNKS).glob(".*.tmp") if (folder / CHUNKS).is_dir() else ():
        tmp.unlink(missing_ok=True)  # a write a kill cut short (its chunk was never renamed in)
    for k in range(chunk_count(settings.games, settings.chunk)):
        path = chunk_path(folder, k)
        if not path.exists():
            continue
        want = deals[k * settings.chunk : (k + 1) * settings.chunk]
        try:
            arrays = read_chunk(path, k, n_actions, shapes, "collecting it again")
            if not np.array_equal(arrays["deal"], want):
                raise DamagedFileError(f"{path} is damaged (it holds other deals): collecting it again", path)
        except DamagedFileError as err:
            log(str(err))
            redo.append(k)
            continue
        done.add(k)
    return done, redo


def collect(
    out: str | Path,
    teacher: str,
    env: str | ResolvedEnv = "classic",
    games: int = 100,
    *,
    teacher_options: dict[str, Any] | None = None,
    seed: int = 0,
    workers: int | None = None,
    chunk: int = 25,
    idle_cut: int = 100,
    max_moves: int | None = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
    after_chunk: Callable[[int], None] | None = None,
) -> Collected:
    """Collect (or resume collecting) ``games`` teacher games into the data set ``out``.

    Args:
        out: The data set folder (new, empty, or one this command started: then it resumes).
        teacher: A registered agent that reads the ``Dict`` observation.
        env: A preset name, an env id, or a resolved env (its rules and reward).
        games: Games (training deals drawn with ``seed``).
        teacher_options: The teacher's constructor options (``samples=...``).
        seed: Draws the deals and seeds the teacher per deal.
        workers: Processes (default: every core, at most one a game); 1 plays here.
        chunk: Games per chunk file (what a kill can lose).
        idle_cut: End a game after this many moves without a reward or a stock turn (0: never).
        max_moves: Moves at most per game (default: the env ids' step limit, 1000).
        progress: A tqdm bar (games, positions/s, ETA).
        log: One-line notes (a damaged chunk collected again, the folder).
        after_chunk: Called with each chunk's number once it is written (tests interrupt here).

    Raises:
        ValueError: bad settings, a teacher that needs the hidden cards, or a folder collected
            with other settings (one line; nothing changed).
        OSError: the folder cannot be written (before any game is played).
    """
    from agents.players.base import agent_class, registered_targets
    from agents.sweeps.pool import run_jobs, worker_count
    from forty_thieves_env.envs.registration import MAX_EPISODE_STEPS

    from .demonstrations import training_deals

    resolved = resolve_env(env)
    options = dict(teacher_options or {})
    options.pop("seed", None)  # seeded per deal
    max_moves = MAX_EPISODE_STEPS if max_moves is None else int(max_moves)
    if games < 1 or chunk < 1 or idle_cut < 0 or max_moves < 1:
        raise ValueError("games, chunk and max_moves must be at least 1, idle_cut at least 0")
    cls = agent_class(teacher)
    if getattr(cls, "observation", "dict") != "dict":
        raise ValueError(
            f"teacher {teacher!r} reads the hidden cards; a demonstration's teacher must read the Dict observation"
        )
    deals = training_deals(games, seed)
    if len(deals) < games:
        raise ValueError(f"the training range has only {len(deals)} deals for seed {seed}")
    settings = Settings(
        teacher, options, resolved.env_id, dict(resolved.env_kwargs), int(seed), int(games), int(chunk),
        int(idle_cut), max_moves, deals_digest(deals),
    )  # fmt: skip
    folder = Path(out)
    game_env = resolved.derive(observation="dict").make()
    try:
        teacher_agent = cls(game_env.variant, **options)  # a bad option fails here, before any folder is made
    except TypeError as err:
        raise ValueError(f"teacher {teacher!r}: {err}") from err
    check_writable(folder, "the data set")
    open_folder(folder, settings, git_commit(), log)
    obs, info = game_env.reset(options={"deal": int(deals[0])})
    shapes = {f: tuple(obs[f].shape) for f in FIELDS}
    n_actions = int(info["action_mask"].shape[0])
    done, redo = finished_chunks(folder, deals, settings, n_actions, shapes, log)
    n_chunks = chunk_count(games, chunk)
    todo_chunks = [k for k in range(n_chunks) if k not in done]
    todo = [int(d) for k in todo_chunks for d in deals[k * chunk : (k + 1) * chunk]]
    workers = worker_count(workers, len(todo))
    pending: dict[int, dict[int, dict[str, np.ndarray]]] = {k: {} for k in todo_chunks}
    chunk_of = {int(d): i // chunk for i, d in enumerate(deals)}
    t0 = time.perf_counter()
    stats = {"games": 0, "positions": 0, "won": 0, "written": 0}
    bar = _bar(progress, games, games - len(todo), f"{teacher} {resolved.variant.name}")
    local = lambda d: play_game(game_env, teacher_agent, d, settings)  # noqa: E731
    init = (resolved, teacher, options, settings, registered_targets())
    try:
        for game in run_jobs(todo, workers, local, _play, _init, init, stop_on_sigterm=True):
            d = int(game["deal"][0])
            k = chunk_of[d]
            pending[k][d] = game
            stats["games"] += 1
            stats["positions"] += int(game["length"][0])
            stats["won"] += int(game["won"][0])
            if bar is not None:
                rate = stats["positions"] / max(time.perf_counter() - t0, 1e-9)
                bar.set_postfix(
                    {"positions": stats["positions"], "pos/s": f"{rate:.0f}", "won": stats["won"]}, refresh=False
                )
                bar.update(1)
            want = deals[k * chunk : (k + 1) * chunk]
            if len(pending[k]) == len(want):
                part = pending.pop(k)
                write_chunk(folder, k, _join([part[int(x)] for x in want]))
                stats["written"] += 1
                if after_chunk is not None:
                    after_chunk(k)
    finally:
        if bar is not None:
            bar.close()
    return Collected(
        folder, n_chunks, len(done), redo, stats["written"], stats["games"], stats["positions"],
        time.perf_counter() - t0,
    )  # fmt: skip


def _join(games: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([g[k] for g in games]) for k in games[0]}


def _bar(progress: bool, total: int, initial: int, desc: str) -> Any:
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit="game", smoothing=0.05, file=sys.stderr)
