"""Evaluation protocol: play an agent once on each deal of a fixed split and summarise.

* **Deals** are numbered PySolFC deals, the same numbers in every variant
  (:data:`forty_thieves_env.engine.deals.SPLITS`): ``test`` = 1..1000, ``validation`` =
  1001..2000; training draws from :data:`~forty_thieves_env.engine.deals.TRAIN_RANGE`, which
  shares no number with them. A deal list can also be a range (``1-50``) or numbers
  (``3,17,99``); ``n`` keeps the first ``n``.
* **Each deal is played once** by a fresh game of the agent, seeded from ``(seed, deal)``
  (:func:`agent_seed`), so a deal's result does not depend on which worker plays it or in
  what order: the results are reproducible from ``seed`` (for agents without a time budget).
* **A move cap** (default 1000, the registered envs' ``max_episode_steps``) ends games that
  go on shuffling cards; such a game counts as lost (``truncated`` in its row).
* **Results**: per deal ``deal, won, cards_on_foundations, moves, seconds, truncated,
  cpu_seconds`` (wall and CPU time of the game; CPU empty where not measured per game);
  the summary holds the win rate with its Wilson 95 % interval
  (``scipy.stats.binomtest(...).proportion_ci(method="wilson")``), mean cards on the
  foundations, mean moves, seconds per game (per-game wall time, averaged) and the
  settings. :func:`write_results` writes ``results.json`` (summary and rows) and
  ``results.csv`` (rows), each atomically; the command checks that ``--out`` can be written
  before it plays a game. ``--out`` defaults to a new folder ``runs/evaluate-<agent>-<variant>-<time>``
  (:func:`default_out`); a folder that already holds a ``results.json`` is refused before any game
  (:func:`check_fresh_out`) unless ``--force`` replaces it, so no run silently overwrites another.
* **Parallel**: a process pool over all cores (``workers``); each worker builds its own
  environment and agent. The ``ppo`` agent instead plays every deal side by side in one
  native vector env, one policy forward pass per step for all live games
  (:mod:`.policy_eval`; the same rows, about 40 times as many games a second); ``--opt batched=false`` plays it
  game by game on the pool, ``--opt batch_size=N`` sets the games per chunk (1024) and
  ``--opt threads=N`` its torch threads (1).
* **On Ray** (``ray=``, ``--ray [ADDRESS]``): the same workers in chunks of deals on a local
  Ray instance or a cluster (:mod:`agents.sweeps.ray_pool`), the same rows; ``ppo`` then plays game by game.

Command line: ``forty-thieves evaluate --agent heuristic --variant classic --deals test``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from agents.evaluation.statistics import wilson_interval
from agents.storage.files import check_writable
from agents.sweeps.pool import add_sweep_arguments, deals_meta, parse_deals, run_jobs, worker_count
from forty_thieves_env.envs.registration import MAX_EPISODE_STEPS
from forty_thieves_env.envs.resolved import VARIANT_OPTIONS, ResolvedEnv

from .games import GameResult, agent_seed
from .outputs import check_fresh_out, default_out, write_results


@dataclass
class Evaluation:
    """Everything :func:`evaluate` measured: the settings, the summary and one row per deal."""

    settings: dict[str, Any]
    summary: dict[str, Any]
    results: list[GameResult] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"settings": self.settings, "summary": self.summary, "results": [asdict(r) for r in self.results]}


def play_game(env: Any, agent: Any, deal: int, seed: int, max_moves: int = MAX_EPISODE_STEPS) -> GameResult:
    """Play ``deal`` once with ``agent`` (reset with ``seed``) in an env of the agent's variant."""
    t0, c0 = time.perf_counter(), time.process_time()
    obs, info = env.reset(options={"deal": int(deal)})
    agent.reset(seed=seed)
    moves = 0
    done = False
    while not done and moves < max_moves:
        action = agent.act(obs, info["action_mask"])
        obs, _, terminated, truncated, info = env.step(action)
        if info["illegal_action"]:
            raise RuntimeError(f"{agent.name} played an illegal action {action} on deal {deal} at move {moves}")
        moves += 1
        done = terminated or truncated
    return GameResult(
        deal=int(deal),
        won=bool(info["won"]),
        cards_on_foundations=int(info["cards_on_foundations"]),
        moves=moves,
        seconds=time.perf_counter() - t0,
        truncated=not done,
        cpu_seconds=time.process_time() - c0,
    )


# ----------------------------------------------------------------------- workers

_WORKER: dict[str, Any] = {}


def _make_player(
    agent: str, variant: Any, agent_kwargs: dict[str, Any], env_options: dict[str, Any] | None = None
) -> tuple[Any, Any]:
    from agents.players.base import make_agent
    from forty_thieves_env.envs.env import FortyThievesEnv

    player = make_agent(agent, variant, **agent_kwargs)
    env = FortyThievesEnv(variant, observation=player.observation, **(env_options or {}))
    return env, player


def _worker_init(
    agent: str,
    variant: Any,
    agent_kwargs: dict[str, Any],
    seed: int,
    max_moves: int,
    registry: dict[str, str],
    env_options: dict[str, Any] | None = None,
) -> None:
    from agents.players.base import register_agent

    for name, target in registry.items():  # agents registered in the parent at run time
        register_agent(name, target)
    env, player = _make_player(agent, variant, agent_kwargs, env_options)
    _WORKER.update(env=env, agent=player, seed=seed, max_moves=max_moves)


def _worker_play(deal: int) -> GameResult:
    w = _WORKER
    return play_game(w["env"], w["agent"], deal, agent_seed(w["seed"], deal), w["max_moves"])


def evaluate(
    agent: str,
    variant: str | ResolvedEnv = "classic",
    deals: str | Sequence[int] = "test",
    n: int | None = None,
    seed: int = 0,
    workers: int | None = None,
    max_moves: int = MAX_EPISODE_STEPS,
    agent_kwargs: dict[str, Any] | None = None,
    progress: bool = True,
    ray: str | None = None,
) -> Evaluation:
    """Play ``agent`` once on each deal and summarise (see the module docstring).

    Args:
        agent: A registered agent name (:func:`agents.players.base.make_agent`).
        variant: A preset name, a registered env id (``FortyThieves-Easy-v0``: its rules and env
            options, :func:`forty_thieves_env.envs.registration.id_variant`), or a resolved env
            (:class:`~forty_thieves_env.envs.resolved.ResolvedEnv`: an id with options, such as a
            training run's ``redeals=1``), played on the deals given.
        deals: See :func:`parse_deals`; ``n`` keeps the first ``n``.
        seed: Base seed; deal ``d`` is played with ``agent_seed(seed, d)``.
        workers: Processes (default: every core); 1 plays in this process.
        max_moves: Move cap per game.
        agent_kwargs: Options for the agent's constructor (``samples=...``).
        progress: Show a tqdm progress bar.
        ray: Play on Ray instead of the process pool: ``"local"`` (a Ray instance on
            ``workers`` cores, default every core), ``"auto"``, ``"ray://HOST:PORT"`` or
            ``"HOST:PORT"`` (a cluster; ``workers`` then caps the tasks in flight). See
            :mod:`agents.sweeps.ray_pool`.
    """
    from forty_thieves_env.engine.variants import get_variant
    from forty_thieves_env.envs.registration import id_variant, is_env_id

    env_kwargs: dict[str, Any] = {}
    if isinstance(variant, ResolvedEnv):
        env_id, rules, env_kwargs = variant.env_id, variant.variant, dict(variant.env_kwargs)
        env_options = {"winnable_only": True} if variant.options.winnable_only else {}
    else:
        env_id = variant if is_env_id(variant) else None
        rules, env_options = id_variant(variant) if env_id else (get_variant(variant), {})
    variant_name = rules.name
    deal_list = parse_deals(deals, n)
    agent_kwargs = dict(agent_kwargs or {})
    if max_moves < 1:
        raise ValueError(f"max_moves must be at least 1, got {max_moves}")
    if agent == "ppo":
        from .policy_eval import batched_options

        batched, batch_size = batched_options(agent_kwargs)
        if batched and ray is None:
            args = (rules, deals, deal_list, seed, max_moves, agent_kwargs, batch_size, progress)
            return _with_env_id(_evaluate_batched(*args), env_id, env_kwargs)
    workers = worker_count(workers, len(deal_list))
    # Build one player here first: a bad agent name or option fails before any worker starts.
    if agent == "ppo":  # the batched path's own options mean nothing to the agent
        player_kwargs = {k: v for k, v in agent_kwargs.items() if k not in ("batched", "batch_size")}
    else:
        player_kwargs = agent_kwargs
    try:
        env, player = _make_player(agent, rules, player_kwargs, env_options)
    except TypeError as err:  # an option the agent's constructor does not take
        raise ValueError(f"agent {agent!r}: {err}") from err

    from agents.players.base import registered_targets

    t0 = time.perf_counter()
    pool = None
    if ray is not None:
        from agents.sweeps.ray_pool import RayPool

        pool = RayPool(ray, workers)
        workers = pool.in_flight
    results: list[GameResult] = []
    bar = _progress(len(deal_list), f"{agent} {variant_name}" + (" (ray)" if pool else ""), progress)
    init = (agent, rules, player_kwargs, seed, max_moves, registered_targets(), env_options)
    local = lambda d: play_game(env, player, d, agent_seed(seed, d), max_moves)  # noqa: E731
    try:
        for r in run_jobs(deal_list, workers, local, _worker_play, _worker_init, init, pool=pool):
            results.append(r)
            _advance(bar, results)
    finally:
        if bar is not None:
            bar.close()
        if pool is not None:
            pool.close()
    wall = time.perf_counter() - t0
    results.sort(key=lambda r: r.deal)
    settings = {
        "agent": agent,
        "variant": variant_name,
        **deals_meta(deals, deal_list),
        "seed": int(seed),
        "workers": workers,
        "max_moves": int(max_moves),
        "agent_options": agent_kwargs,
        **model_record(agent_kwargs),
    }
    if ray is not None:
        settings["ray"] = ray
    return _with_env_id(Evaluation(settings, summarise(results, wall), results), env_id, env_kwargs)


def model_record(agent_kwargs: dict[str, Any]) -> dict[str, str]:
    """The file a ``model`` option named and its SHA-256 (``forty-thieves compare`` groups by
    the digest: one model however its path was written, a model retrained in place another);
    nothing without a ``model``. Called after the agent loaded it, so it resolves."""
    if agent_kwargs.get("model") is None:
        return {}
    import hashlib

    from agents.players.shipped import resolve_model

    path = resolve_model(agent_kwargs["model"])[0]
    return {"model_file": str(path), "model_sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def _with_env_id(evaluation: Evaluation, env_id: str | None, env_kwargs: dict[str, Any]) -> Evaluation:
    """Record the env id (and options) an evaluation was asked by, where it was (its rules are the variant's)."""
    if env_id is not None:
        evaluation.settings["env_id"] = env_id
    if env_kwargs:
        evaluation.settings["env_kwargs"] = env_kwargs
    return evaluation


def _evaluate_batched(
    variant: Any,
    deals: str | Sequence[int],
    deal_list: list[int],
    seed: int,
    max_moves: int,
    agent_kwargs: dict[str, Any],
    batch_size: int,
    progress: bool,
) -> Evaluation:
    """:func:`evaluate` of the ``ppo`` agent in one process, all games side by side
    (:mod:`.policy_eval`), on the agent's ``threads`` (default 1) for torch and the env.

    One thread is the fast setting on a shared machine: on the 2-core VM beside a training
    job, two torch threads made a 200-deal evaluation 7 times slower (threads waiting on
    each other), and these networks are small. ``workers`` does not apply here.
    """
    import torch

    from agents.players.base import make_agent

    from .policy_eval import play_deals

    threads = int(agent_kwargs.get("threads", 1))
    player_kwargs = {k: v for k, v in agent_kwargs.items() if k not in ("batched", "batch_size", "threads")}
    before = torch.get_num_threads()
    try:
        player = make_agent("ppo", variant, **player_kwargs, threads=0)  # threads=0: leave torch's setting
    except TypeError as err:
        raise ValueError(f"agent 'ppo': {err}") from err
    t0 = time.perf_counter()
    results: list[GameResult] = []
    bar = _progress(len(deal_list), f"ppo {player.variant.name} (batched)", progress)

    def done(r: GameResult) -> None:
        results.append(r)
        _advance(bar, results)

    try:
        if threads > 0:
            torch.set_num_threads(threads)
        play_deals(player, deal_list, seed, max_moves, batch_size, num_threads=max(threads, 1), on_result=done)
    finally:
        torch.set_num_threads(before)
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    results.sort(key=lambda r: r.deal)
    settings = {
        "agent": "ppo",
        "variant": player.variant.name,
        **deals_meta(deals, deal_list),
        "seed": int(seed),
        "workers": 1,
        "max_moves": int(max_moves),
        "agent_options": agent_kwargs,
        **model_record(agent_kwargs),
        "batched": True,
        "batch_size": min(batch_size, len(deal_list)),
    }
    return Evaluation(settings, summarise(results, wall), results)


def summarise(results: Sequence[GameResult], wall_seconds: float | None = None) -> dict[str, Any]:
    """Win rate with Wilson 95 % interval, means of cards home, moves and seconds per game
    (and, when every game measured it, the mean and the largest CPU time of a game)."""
    n = len(results)
    wins = sum(r.won for r in results)
    low, high = wilson_interval(wins, n)
    summary = {
        "games": n,
        "wins": wins,
        "win_rate": wins / n,
        "win_rate_ci95": [low, high],
        "mean_cards_on_foundations": float(np.mean([r.cards_on_foundations for r in results])),
        "mean_moves": float(np.mean([r.moves for r in results])),
        "truncated": sum(r.truncated for r in results),
        "seconds_per_game": float(np.mean([r.seconds for r in results])),
    }
    cpu = [r.cpu_seconds for r in results if r.cpu_seconds is not None]
    if cpu and len(cpu) == n:
        summary["cpu_seconds_per_game"] = float(np.mean(cpu))
        summary["max_cpu_seconds"] = float(np.max(cpu))  # the slowest game, for a time limit a game
    if wall_seconds is not None:
        summary["wall_seconds"] = float(wall_seconds)
    return summary


def _progress(total: int, desc: str, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="game", smoothing=0.05)


def _advance(bar: Any, results: list[GameResult]) -> None:
    if bar is None:
        return
    wins = sum(r.won for r in results)
    bar.set_postfix(win=f"{wins}/{len(results)}", refresh=False)
    bar.update(1)


# ------------------------------------------------------------------- command line


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value`` -> ``(key, value)``, the value an int, float, bool, ``None`` or a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise ValueError(f"agent option must look like key=value, got {text!r}")
    low = raw.strip().lower()
    value: Any
    if low in ("true", "false"):
        value = low == "true"
    elif low == "none":
        value = None
    else:
        try:
            value = int(raw)
        except ValueError:
            try:
                value = float(raw)
            except ValueError:
                value = raw
    return key.strip().replace("-", "_"), value


def agent_options(args: Any) -> dict[str, Any]:
    """Agent constructor options from the evaluate command's flags."""
    opts: dict[str, Any] = {}
    for name in ("samples", "candidates", "rollout_steps", "max_seconds", "max_nodes"):
        value = getattr(args, name, None)
        if value is not None:
            opts[name] = value
    for text in getattr(args, "opt", None) or ():
        key, value = parse_option(text)
        opts[key] = value
    return opts


def format_summary(evaluation: Evaluation) -> str:
    s, cfg = evaluation.summary, evaluation.settings
    low, high = s["win_rate_ci95"]
    return (
        f"{cfg['agent']} on {cfg.get('env_id', cfg['variant'])}, {s['games']} deals "
        f"({cfg['deals']}: {cfg['first_deal']}..{cfg['last_deal']}), "
        f"seed {cfg['seed']}: won {s['wins']} = {100 * s['win_rate']:.1f} % "
        f"(Wilson 95 % {100 * low:.1f}-{100 * high:.1f} %), "
        f"{s['mean_cards_on_foundations']:.1f} cards home on average, {s['mean_moves']:.0f} moves, "
        f"{s['seconds_per_game']:.3f} s per game"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves evaluate`` arguments (read by :func:`run_cli`)."""
    from agents.players.base import agent_names

    parser.add_argument("--agent", default="heuristic", help=f"{', '.join(agent_names())} (default: heuristic)")
    parser.add_argument(
        "--variant", help="preset name (default: a --model's own rules, variant options included; else classic)"
    )
    parser.add_argument("--env", help="a registered env id (FortyThieves-Easy-v0, ...): its rules, not --variant's")
    parser.add_argument("--deals", default="test", help="test (1..1000), validation (1001..2000), 1-50 or 3,17,99")
    parser.add_argument("--n", type=int, help="play only the first N deals")
    parser.add_argument("--seed", type=int, default=0, help="base seed; deal d gets a seed from (seed, d) (default: 0)")
    add_sweep_arguments(
        parser,
        "play",
        out=None,
        out_help="folder for results.json and results.csv (default: a new runs/evaluate-<agent>-<variant>-<time>)",
        workers_help="processes (default: every core; ppo plays batched in one)",
    )
    parser.add_argument("--force", action="store_true", help="replace the results already in --out")
    parser.add_argument("--max-moves", type=int, default=1000, help="move cap per game (default: 1000)")
    parser.add_argument("--samples", type=int, help="lookahead, sampling_solver, guided_solver: samples per move")
    parser.add_argument(
        "--candidates", type=int, help="lookahead, sampling_solver mode=child: moves searched per decision"
    )
    parser.add_argument("--rollout-steps", type=int, help="lookahead: longest rollout")
    parser.add_argument("--max-seconds", type=float, help="lookahead: seconds per move; solver: seconds per deal")
    parser.add_argument("--max-nodes", type=int, help="solver: node budget per deal")
    parser.add_argument(
        "--opt",
        action="append",
        metavar="KEY=VALUE",
        help="any other agent option (repeatable), e.g. sampling_solver: nodes_per_solve=N, game_nodes=N, mode=child",
    )
    parser.add_argument("--label", help="a name for these results (forty-thieves compare groups files by it)")
    parser.add_argument(
        "--model",
        dest="opt",
        action="append",
        type="model={}".format,
        help="ppo, guided_solver: a shipped model's name, a model .zip or a run folder",
    )


def game_of(args: Any, agent_kwargs: dict[str, Any]) -> str | ResolvedEnv:
    """What ``evaluate`` plays: ``--env`` or ``--variant`` when given, else the rules a ``--model``
    was trained on (its metadata: env id and variant options), else classic."""
    if args.env or args.variant:
        return args.env or args.variant
    model = agent_kwargs.get("model")
    if model is not None:
        from agents.players.shipped import resolve_model

        info = resolve_model(model)[1]
        if info is not None:
            rules = {k: v for k, v in info.env_kwargs.items() if k in VARIANT_OPTIONS}
            return ResolvedEnv.resolve(info.env_id, rules)
    return "classic"


def run_cli(args: Any) -> int:
    """The ``forty-thieves evaluate`` handler (arguments from :func:`add_arguments`)."""
    from forty_thieves_env.engine.variants import get_variant

    agent_kwargs = agent_options(args)
    game = game_of(args, agent_kwargs)
    # What the folder's name and check call the game.
    variant = game.env_id if isinstance(game, ResolvedEnv) else (args.env or get_variant(game).name)
    if args.out is None:
        args.out = str(default_out(args.agent, variant))
    check_fresh_out(args.out, args.agent, variant, args.force)  # before the games: none is played to be lost
    check_writable(args.out, "the results")
    evaluation = evaluate(
        args.agent,
        game,
        args.deals,
        n=args.n,
        seed=args.seed,
        workers=args.workers,
        max_moves=args.max_moves,
        agent_kwargs=agent_kwargs,
        progress=not args.quiet,
        ray=args.ray,
    )
    if args.label:
        evaluation.settings["label"] = args.label
    json_path, csv_path = write_results(evaluation, args.out)
    print(format_summary(evaluation))
    print(f"wrote {json_path} and {csv_path}")
    return 0
