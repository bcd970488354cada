"""Batched evaluation of a maskable policy: many deals at once, one forward pass a step for all.

:func:`play_policy` is the one function that plays a trained policy on a list of deals. It
deals a chunk of ``batch_size`` deals to one
:class:`~forty_thieves_env.envs.torch_games.TorchGames` batch (on the CPU or the policy's GPU)
and at every step runs one forward pass for all the games still going, so a thousand deals
take seconds, not the hour of the per-game ``ppo`` agent (:mod:`agents.players.ppo`, a
forward pass per move). Its callers:

* ``forty-thieves evaluate --agent ppo`` (:func:`agents.evaluation.evaluate.evaluate`, through
  :func:`play_deals`): the default path (``--opt batched=false`` keeps the per-game agent);
* a training run's periodic evaluation (the live policy on the first validation deals:
  :func:`eval_figures` gives its mean reward, win rate, mean cards and length) and its final
  evaluation on the test deals.

Each game gives a :class:`PolicyGame`: the per-game path's
:class:`~agents.evaluation.games.GameResult` row and the game's return under the env's reward.

* **Same games.** Game ``i`` of a chunk is dealt ``deals[i]``, as
  :func:`~agents.evaluation.evaluate.play_game` resets its env. The games have no step limit
  (like the evaluator's bare env); each is stopped here after ``max_moves`` moves, counted as
  ``truncated``, or when it terminates (won, or no legal move left). A finished game is reset
  on the next step (``autoreset="next_step"``) and is no longer *live*: its later
  observations are never read and its row is written once, from the step that ended it.
* **Same moves.** The logits are computed for the live games' rows only (a matrix product
  over another number of rows can round differently) by the policy's actor
  (:func:`agents.players.policy.policy_logits`, on the fields it reads:
  :func:`~agents.players.policy.policy_input`). Deterministic: the most likely legal move, the
  first on a tie, from the raw logits (:func:`~agents.players.policy.greedy_actions`), as the
  agent plays. Sampled: each game has its own ``numpy`` generator seeded with
  ``agent_seed(seed, deal)``, as the agent is reset per game, and draws its move exactly as
  the agent's ``rng.choice`` does (:func:`~agents.players.policy.sampled_actions`), so a
  deal's game depends only on ``(seed, deal)``: not on the chunk it falls in, nor on the other
  deals. The rows equal the per-game agent's (tests hold them to it) unless a batched matrix
  product rounds a logit differently from the one-row product, which matters only at an
  exact tie.
* **Same return.** A game's ``reward`` is the env's episode return (the sum of its rewards,
  under the options' reward), which ``gym.make`` with the same options gives the same moves.
* **Seconds.** Games of a chunk share each step's wall time; a game is charged an equal
  share of every step it is live in, so a row's ``seconds`` sum to the evaluation's time
  and the summary's ``seconds_per_game`` is the cost of one game in this path.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from agents.players.policy import (
    greedy_actions,
    input_fields,
    policy_input,
    policy_logits,
    reads_flat,
    sampled_actions,
)
from forty_thieves_env.engine.variants import Variant
from forty_thieves_env.envs.options import EnvOptions
from forty_thieves_env.envs.registration import MAX_EPISODE_STEPS

from .games import GameResult, agent_seed

#: Games per chunk: the whole test split in one; past a few hundred games a step costs little more per game.
DEFAULT_BATCH_SIZE = 1024
#: The ``ppo`` agent options this path understands (others go to the per-game agent).
AGENT_OPTIONS = frozenset({"model", "deterministic", "seed", "threads", "device", "temperature"})
#: Options of this path itself (removed before the agent is built).
OWN_OPTIONS = frozenset({"batched", "batch_size"})


@dataclass
class PolicyGame:
    """One deal played by a policy: its evaluation row and its return under the env's reward.

    Attributes:
        result: The row :func:`agents.evaluation.evaluate.evaluate` writes (``moves`` is the
            episode's length: every step plays a legal move).
        reward: The sum of the env's rewards over the game (the episode return that a
            training run's evaluation averages into ``mean_reward``).
    """

    result: GameResult
    reward: float


def play_policy(
    policy: Any,
    options: EnvOptions | str | Variant,
    deals: Sequence[int],
    *,
    seed: int,
    deterministic: bool,
    temperature: float = 1.0,
    max_moves: int = MAX_EPISODE_STEPS,
    batch_size: int = DEFAULT_BATCH_SIZE,
    num_threads: int | None = 1,
    device: str | torch.device | None = None,
    on_result: Callable[[PolicyGame], None] | None = None,
) -> list[PolicyGame]:
    """Play a maskable policy once on each deal, ``batch_size`` games side by side (module docstring).

    The policy is used as it is (no copy), on its own device, without gradients and in eval
    mode; each module's training mode and torch's thread count are restored on the way out, so
    a trainer can call this with its live policy between rollouts.

    Args:
        policy: An SB3 maskable actor-critic policy (``model.policy``), on any device; or any
            object with ``device``, ``action_space``, ``observation_space``, ``modules()``,
            ``set_training_mode(mode)`` and ``batch_logits(obs, rows) -> (len(rows), n)`` logits
            (RLlib's module: :class:`agents.training.trainers.rllib.ModulePolicy`).
        options: The env the policy plays: its checked options
            (:class:`~forty_thieves_env.envs.options.EnvOptions`: the variant with its options,
            the observation mode, the reward), or a variant (then the default options). Its
            ``deals`` and ``illegal_action`` do not apply: the games are dealt ``deals``, and
            a policy's move is always legal.
        deals: Deal numbers (repeats allowed: each is played once more).
        seed: Base seed of the sampled moves (deal ``d`` draws with ``agent_seed(seed, d)``,
            as the per-game ``ppo`` agent reset with that seed); unused when ``deterministic``.
        deterministic: The most likely legal move (True) or one drawn from the policy.
        temperature: Sampled moves are drawn from ``softmax(logits / temperature)``.
        max_moves: Move cap per game (a game stopped by it is ``truncated``).
        batch_size: Games played side by side.
        num_threads: numba threads of a CPU step, and torch's threads while this runs
            (``None``: numba's default, torch's setting left alone).
        device: Where the games run (``"cpu"``, ``"cuda"``); None: the policy's device. The
            policy reads each step's observations on its own device.
        on_result: Called with each game as it ends.

    Returns:
        One :class:`PolicyGame` per deal, in the order of ``deals``.

    Raises:
        ValueError: a bad argument, or a policy that does not fit the options (other actions,
            or observation fields the games do not give).
        RuntimeError: the policy chose an illegal action, or a game not ended has no legal move.
    """
    from forty_thieves_env.envs.torch_games import torch_device

    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature > 0:
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if max_moves < 1:
        raise ValueError(f"max_moves must be at least 1, got {max_moves}")
    deals = [int(d) for d in deals]
    if not deals:
        return []
    opts = EnvOptions.of(options)
    dev = torch_device(device) if device is not None else policy.device
    size = min(int(batch_size), len(deals))
    games = _games(size, opts, dev, num_threads)
    _check_fit(policy, games)
    modes = [(m, m.training) for m in policy.modules()]
    threads = torch.get_num_threads()
    out: list[PolicyGame] = []
    try:
        policy.set_training_mode(False)
        if num_threads is not None and num_threads != threads:
            torch.set_num_threads(int(num_threads))
        for start in range(0, len(deals), size):
            chunk = deals[start : start + size]
            out.extend(_play_chunk(games, policy, chunk, seed, deterministic, float(temperature), max_moves, on_result))
    finally:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        for module, mode in modes:
            module.training = mode
    return out


def eval_figures(games: Sequence[PolicyGame]) -> dict[str, float]:
    """What a training run's periodic evaluation records of :func:`play_policy`'s games.

    Returns:
        ``mean_reward`` (the mean return: the best model is the one with the highest),
        ``win_rate``, ``mean_cards`` (cards on the foundations at the end), ``mean_length``
        (moves) and ``episodes`` (the number of games), all floats.
    """
    n = len(games)
    if n == 0:
        raise ValueError("no games to summarise")
    return {
        "mean_reward": float(np.mean([g.reward for g in games])),
        "win_rate": float(np.mean([g.result.won for g in games])),
        "mean_cards": float(np.mean([g.result.cards_on_foundations for g in games])),
        "mean_length": float(np.mean([g.result.moves for g in games])),
        "episodes": float(n),
    }


def _games(n: int, opts: EnvOptions, device: torch.device, num_threads: int | None) -> Any:
    """``n`` games of ``opts`` as torch tensors on ``device``: no step limit, ``next_step`` autoreset.

    :class:`~forty_thieves_env.envs.torch_games.TorchGames` takes its options as keywords
    (it calls :meth:`EnvOptions.make`), so ``opts`` is handed over field by field: the
    variant with its options applied, the observation and the reward. ``illegal_action`` is
    ``penalize`` whatever the run's: a finished game is stepped with action 0, unread, which
    must not raise.
    """
    from forty_thieves_env.envs.torch_games import TorchGames

    return TorchGames(
        n,
        opts.variant,
        device=device,
        max_episode_steps=None,
        autoreset="next_step",
        num_threads=num_threads,
        observation=opts.observation,
        reward=opts.reward,
        illegal_action="penalize",
    )


def _check_fit(policy: Any, games: Any) -> None:
    """Refuse a policy whose actions or observation fields are not the games'."""
    n = int(getattr(policy.action_space, "n", -1))
    if n != games.n_actions:
        raise ValueError(
            f"the policy has {policy.action_space} actions, {games.variant.name} has Discrete({games.n_actions}): "
            "it was trained on another variant"
        )
    space = games.observation_space()
    fields = input_fields(policy)
    if games.observation_mode == "flat" and not reads_flat(policy):
        raise ValueError(f"the policy reads the fields {list(fields)}, these games give flat rows")
    if games.observation_mode != "flat":
        missing = [k for k in fields if k not in space.spaces]
        if missing:
            raise ValueError(
                f"the policy reads {missing}, which the {games.observation_mode!r} observation lacks: "
                "a policy of the 'oracle' observation needs options with observation='oracle'"
            )
    want = policy.observation_space
    for k in fields if not reads_flat(policy) else ():
        if tuple(want.spaces[k].shape) != tuple(space.spaces[k].shape):
            raise ValueError(
                f"the policy reads {k!r} of shape {want.spaces[k].shape}, {games.variant.name} gives "
                f"{space.spaces[k].shape}: it was trained on another variant"
            )
    if reads_flat(policy):
        width = sum(int(np.prod(space.spaces[k].shape)) for k in fields) if hasattr(space, "spaces") else space.shape[0]
        if tuple(want.shape) != (width,):
            raise ValueError(f"the policy reads {want.shape} flat rows, {games.variant.name} gives ({width},)")


def _play_chunk(
    games: Any,
    policy: Any,
    deals: Sequence[int],
    seed: int,
    deterministic: bool,
    temperature: float,
    max_moves: int,
    on_result: Callable[[PolicyGame], None] | None,
) -> list[PolicyGame]:
    """Play ``deals`` (at most ``games.num_envs``) once each, side by side; one game per deal, in order.

    Game ``i`` is dealt ``deals[i]``; the games beyond the deals replay the first deal, unread.
    Only the live games' rows go through the policy (a batched product over another number of
    rows can round differently: these are the rows the tests and the pinned games hold).
    """
    n_games, n = games.num_envs, len(deals)
    if not 1 <= n <= n_games:
        raise ValueError(f"a chunk holds 1..{n_games} deals, got {n}")
    dealt = np.array([*deals, *[deals[0]] * (n_games - n)], dtype=np.int64)
    dev = games.device
    t0 = time.perf_counter()
    obs, info = games.reset(seed=0, deal=dealt.tolist())
    live = np.zeros(n_games, dtype=bool)
    live[:n] = True
    moves = np.zeros(n_games, dtype=np.int64)
    seconds = np.zeros(n_games, dtype=np.float64)
    rngs = [np.random.default_rng(agent_seed(seed, int(d))) for d in dealt] if not deterministic else []
    actions = torch.zeros(n_games, dtype=torch.int64, device=dev)  # finished games get 0, unread
    played: dict[int, PolicyGame] = {}
    while live.any():
        rows = np.flatnonzero(live)
        rows_t = torch.from_numpy(rows).to(dev)
        masks = info["action_mask"].index_select(0, rows_t)
        has_move = masks.any(dim=1).cpu().numpy()
        if not has_move.all():
            stuck = int(dealt[rows[np.flatnonzero(~has_move)[0]]])
            raise RuntimeError(f"deal {stuck} has no legal move but its game did not end")
        if hasattr(policy, "batch_logits"):  # not an SB3 policy: it reads the observation itself
            logits = policy.batch_logits(obs, rows_t)
        else:
            logits = policy_logits(policy, policy_input(policy, obs, rows_t))
        if deterministic:
            chosen = greedy_actions(logits, masks).to(dev)
        else:
            drawn = sampled_actions(logits.cpu().numpy(), masks.cpu().numpy(), [rngs[i] for i in rows], temperature)
            chosen = torch.from_numpy(drawn).to(dev)
        actions.zero_()
        actions.index_copy_(0, rows_t, chosen)
        obs, _, terminated, _, info = games.step(actions)
        illegal = info["illegal_action"].index_select(0, rows_t).cpu().numpy()
        if illegal.any():
            i = rows[np.flatnonzero(illegal)[0]]
            raise RuntimeError(f"the policy played an illegal action on deal {dealt[i]} at move {moves[i]}")
        moves[rows] += 1
        t1 = time.perf_counter()
        seconds[rows] += (t1 - t0) / len(rows)
        t0 = t1
        ended_here = terminated.index_select(0, rows_t).cpu().numpy()
        ended = rows[ended_here | (moves[rows] >= max_moves)]
        if len(ended) == 0:
            continue
        ended_t = torch.from_numpy(ended).to(dev)
        won = info["won"].index_select(0, ended_t).cpu().numpy()
        cards = info["cards_on_foundations"].index_select(0, ended_t).cpu().numpy()
        returns = info["episode_return"].index_select(0, ended_t).cpu().numpy()
        done_by_rules = terminated.index_select(0, ended_t).cpu().numpy()
        for j, i in enumerate(ended):
            game = PolicyGame(
                GameResult(
                    deal=int(dealt[i]),
                    won=bool(won[j]),
                    cards_on_foundations=int(cards[j]),
                    moves=int(moves[i]),
                    seconds=float(seconds[i]),
                    truncated=not bool(done_by_rules[j]),
                ),
                reward=float(returns[j]),
            )
            played[int(i)] = game
            if on_result is not None:
                on_result(game)
        live[ended] = False
    return [played[i] for i in range(n)]


def play_deals(
    agent: Any,
    deals: Sequence[int],
    seed: int = 0,
    max_moves: int = MAX_EPISODE_STEPS,
    batch_size: int = DEFAULT_BATCH_SIZE,
    num_threads: int | None = None,
    on_result: Callable[[GameResult], None] | None = None,
) -> list[GameResult]:
    """Play a ``ppo`` agent's policy once on each deal, ``batch_size`` games at a time
    (:func:`play_policy` on the CPU games of the agent's variant and observation).

    Args:
        agent: A :class:`agents.players.ppo.PPOAgent` (its model, variant, ``deterministic``
            and ``temperature`` settings are used).
        deals: Deal numbers.
        seed: Base seed (sampled moves of deal ``d`` use ``agent_seed(seed, d)``).
        max_moves: Move cap per game.
        batch_size: Games played side by side.
        num_threads: numba threads of the games and torch's threads while they play (``None``:
            numba's setting, torch's left alone).
        on_result: Called with each row as its game ends.

    Returns:
        One :class:`GameResult` per deal, in deal order.
    """
    options = EnvOptions.make(agent.variant, observation=agent.observation)
    forward = None if on_result is None else (lambda game: on_result(game.result))
    games = play_policy(
        agent.model.policy,
        options,
        deals,
        seed=seed,
        deterministic=agent.deterministic,
        temperature=agent.temperature,
        max_moves=max_moves,
        batch_size=batch_size,
        num_threads=num_threads,
        device="cpu",
        on_result=forward,
    )
    return sorted((g.result for g in games), key=lambda r: r.deal)


def batched_options(agent_kwargs: dict[str, Any]) -> tuple[bool, int]:
    """Whether the ``ppo`` options allow the batched path, and its batch size.

    ``batched=false`` asks for the per-game agent; any option outside
    :data:`AGENT_OPTIONS` and :data:`OWN_OPTIONS` also goes to it (which takes it, or
    reports it). The ppo agent must be the shipped one (not re-registered).
    """
    from agents.players.base import registered_targets

    batch_size = agent_kwargs.get("batch_size", DEFAULT_BATCH_SIZE)
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    ok = (
        bool(agent_kwargs.get("batched", True))
        and not set(agent_kwargs) - AGENT_OPTIONS - OWN_OPTIONS
        and registered_targets().get("ppo") == "agents.players.ppo:PPOAgent"
    )
    return ok, batch_size
