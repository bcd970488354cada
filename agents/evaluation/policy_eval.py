"""Batched evaluation of a MaskablePPO policy: many deals at once in the native vector env.

The per-game ``ppo`` agent (:mod:`agents.players.ppo`) plays one game at a time, a policy
forward pass per move (0.5-3 s a game). Here a chunk of ``batch_size`` deals is dealt to one
:class:`~forty_thieves_env.envs.vector.FortyThievesVectorEnv` and every step runs one
forward pass for all the games still going, so a thousand deals take seconds, not an hour.
:func:`agents.evaluation.evaluate.evaluate` takes this path for ``--agent ppo`` by default
(``--opt batched=false`` keeps the per-game agent).

It gives the per-game path's :class:`~agents.evaluation.evaluate.GameResult` rows:

* **Same games.** Game ``i`` of a chunk is reset to its deal (``options={"deal": [...]}``),
  as :func:`~agents.evaluation.evaluate.play_game` resets its env. The vector env has no
  step limit (``max_episode_steps=None``, like the evaluator's bare env); each game is
  stopped here after ``max_moves`` moves, counted as ``truncated``, or when it terminates
  (won, or no legal move left). The env autoresets a finished game on the next step
  (``AutoresetMode.NEXT_STEP``); that game is no longer *live*: its later observations are
  never read and its row is written once, from the step that ended it.
* **Same moves.** Deterministic: the most likely legal move, the first on a tie, from the
  raw action logits (``policy.action_net``) with illegal actions set to ``-inf``, as the
  agent's ``argmax`` over its legal logits. (``policy.get_distribution(obs,
  action_masks=...)`` computes the same logits but normalises them, a rounding that can
  make a tie where there was none; the three calls it makes are made here directly.)
  Sampled (``deterministic=False``): each game has its own ``numpy`` generator seeded with
  ``agent_seed(seed, deal)``, as the agent is reset per game, and draws its move as the
  agent's ``rng.choice`` does (:func:`sampled_actions`), so a deal's game depends only on
  ``(seed, deal)``: not on the chunk it falls in, nor on the other deals. The rows equal the
  per-game agent's (tests hold them to it) unless a batched matrix product rounds a logit
  differently from the one-row product, or a sum's rounding moves a draw across a boundary:
  both matter only at an exact tie.
* **Seconds.** Games of a chunk share each step's wall time; a game is charged an equal
  share of every step it is live in, so a row's ``seconds`` sum to the evaluation's time
  and the summary's ``seconds_per_game`` is the cost of one game in this path.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from forty_thieves_env.envs.registration import MAX_EPISODE_STEPS

from .games import GameResult, agent_seed

#: Games per chunk: the whole test split in one; past a few hundred games a step costs little more per game.
DEFAULT_BATCH_SIZE = 1024
#: The ``ppo`` agent options this path understands (others go to the per-game agent).
AGENT_OPTIONS = frozenset({"model", "deterministic", "seed", "threads", "device", "temperature"})
#: Options of this path itself (removed before the agent is built).
OWN_OPTIONS = frozenset({"batched", "batch_size"})


class PolicyBatch:
    """A loaded MaskablePPO policy evaluated on a batch of observations.

    Args:
        agent: A :class:`agents.players.ppo.PPOAgent` (it loads the model and checks that it
            fits the variant); only its model is used.
    """

    def __init__(self, agent: Any) -> None:
        from agents.players.ppo import FLAT_FIELDS, actor_fields

        self.model = agent.model
        self.policy = agent.model.policy
        self.policy.set_training_mode(False)
        space = self.model.observation_space
        self.fields: tuple[str, ...] = (
            tuple(FLAT_FIELDS) if not hasattr(space, "spaces") else actor_fields(self.model) or tuple(space.spaces)
        )
        self.flat = not hasattr(space, "spaces")

    def model_input(self, obs: dict[str, np.ndarray], rows: np.ndarray) -> Any:
        """The policy's input for games ``rows`` of a vector env's ``Dict`` observation."""
        if self.flat:  # the agent's flattening, row by row
            return np.concatenate([obs[k][rows].reshape(len(rows), -1) for k in self.fields], axis=1)
        return {k: obs[k][rows] for k in self.fields}

    def logits(self, obs: dict[str, np.ndarray], rows: np.ndarray) -> Any:
        """``(len(rows), n)`` float32 torch tensor: the raw action logits of games ``rows``."""
        from agents.players.ppo import policy_logits

        return policy_logits(self.policy, self.model_input(obs, rows))


def greedy_actions(logits: Any, masks: np.ndarray) -> np.ndarray:
    """The most likely legal action of each row (the lowest index on a tie)."""
    import torch

    legal = torch.from_numpy(masks)
    masked = torch.where(legal, logits, torch.tensor(float("-inf"), dtype=logits.dtype))
    return masked.argmax(dim=1).numpy().astype(np.int64)


def sampled_actions(logits: Any, masks: np.ndarray, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """One action per row drawn from its masked softmax with that row's generator.

    The ``ppo`` agent draws ``rng.choice(legal, p=p / p.sum())`` with ``p`` the exponentials
    of its legal logits (float64, less their maximum); numpy draws one ``rng.random()`` and
    returns the first legal action whose normalised cumulative sum exceeds it. The same is
    computed here for all rows at once: illegal actions get probability 0, which leaves the
    running sums at the legal actions as they were. Only ``p.sum()`` is added in another
    order, so a row can differ from the agent's draw only when the uniform number falls
    within rounding of a boundary: none in 153,600 random draws checked when this was written.
    """
    lg = logits.numpy().astype(np.float64)
    lg[~masks] = -np.inf
    p = np.exp(lg - lg.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    cdf = np.cumsum(p, axis=1)
    cdf /= cdf[:, -1:]
    u = np.array([rng.random() for rng in rngs])
    below = ((cdf <= u[:, None]) & masks).sum(axis=1)  # numpy's searchsorted(u, side="right")
    return np.argmax(np.cumsum(masks, axis=1) > below[:, None], axis=1).astype(np.int64)


def play_chunk(
    env: Any,
    policy: PolicyBatch,
    deals: Sequence[int],
    seed: int,
    deterministic: bool,
    max_moves: int,
    on_result: Callable[[GameResult], None] | None = None,
    temperature: float = 1.0,
) -> list[GameResult]:
    """Play ``deals`` (at most ``env.num_envs``) once each, side by side; one row per deal.

    Args:
        env: A :class:`~forty_thieves_env.envs.vector.FortyThievesVectorEnv` of the variant,
            ``Dict`` observations, no step limit, ``NEXT_STEP`` autoreset.
        policy: The policy.
        deals: The deal numbers (games beyond them replay the first deal, unread).
        seed: Base seed of the sampled moves (deal ``d`` draws with ``agent_seed(seed, d)``).
        deterministic: Most likely legal move (True) or a sampled one.
        max_moves: Move cap per game.
        on_result: Called with each row as its game ends.

    Raises:
        RuntimeError: The policy chose an illegal action, or a live game has no legal move.
    """
    n_games, n = env.num_envs, len(deals)
    if not 1 <= n <= n_games:
        raise ValueError(f"a chunk holds 1..{n_games} deals, got {n}")
    dealt = np.array([*deals, *[deals[0]] * (n_games - n)], dtype=np.int64)
    t0 = time.perf_counter()
    obs, infos = env.reset(seed=0, options={"deal": dealt})
    masks = infos["action_mask"]
    live = np.zeros(n_games, dtype=bool)
    live[:n] = True
    moves = np.zeros(n_games, dtype=np.int64)
    seconds = np.zeros(n_games, dtype=np.float64)
    rngs = [np.random.default_rng(agent_seed(seed, d)) for d in dealt] if not deterministic else []
    actions = np.zeros(n_games, dtype=np.int64)  # finished games get 0, ignored or refused
    results: list[GameResult] = []
    while live.any():
        rows = np.flatnonzero(live)
        if not masks[rows].any(axis=1).all():
            stuck = int(dealt[rows[~masks[rows].any(axis=1)][0]])
            raise RuntimeError(f"deal {stuck} has no legal move but its game did not end")
        logits = policy.logits(obs, rows)
        if deterministic:
            chosen = greedy_actions(logits, masks[rows])
        else:
            if temperature != 1.0:  # in float64, as the agent divides
                logits = logits.double() / temperature
            chosen = sampled_actions(logits, masks[rows], [rngs[i] for i in rows])
        actions[:] = 0
        actions[rows] = chosen
        obs, _, terminated, _, infos = env.step(actions)
        masks = infos["action_mask"]
        illegal = infos["illegal_action"][rows]
        if illegal.any():
            i = rows[np.flatnonzero(illegal)[0]]
            raise RuntimeError(f"ppo played an illegal action {actions[i]} on deal {dealt[i]} at move {moves[i]}")
        moves[rows] += 1
        t1 = time.perf_counter()
        seconds[rows] += (t1 - t0) / len(rows)
        t0 = t1
        ended = rows[terminated[rows] | (moves[rows] >= max_moves)]
        for i in ended:
            r = GameResult(
                deal=int(dealt[i]),
                won=bool(infos["won"][i]),
                cards_on_foundations=int(infos["cards_on_foundations"][i]),
                moves=int(moves[i]),
                seconds=float(seconds[i]),
                truncated=not bool(terminated[i]),
            )
            results.append(r)
            if on_result is not None:
                on_result(r)
        live[ended] = False
    return results


def play_deals(
    agent: Any,
    deals: Sequence[int],
    seed: int = 0,
    max_moves: int = MAX_EPISODE_STEPS,
    batch_size: int = DEFAULT_BATCH_SIZE,
    num_threads: int | None = None,
    on_result: Callable[[GameResult], None] | None = None,
) -> list[GameResult]:
    """Play a ``ppo`` agent's policy once on each deal, ``batch_size`` games at a time.

    Args:
        agent: A :class:`agents.players.ppo.PPOAgent` (its model, variant and
            ``deterministic`` setting are used).
        deals: Deal numbers.
        seed: Base seed (sampled moves of deal ``d`` use ``agent_seed(seed, d)``).
        max_moves: Move cap per game.
        batch_size: Games played side by side.
        num_threads: numba threads of the vector env (``None``: numba's setting).
        on_result: Called with each row as its game ends.

    Returns:
        One :class:`GameResult` per deal, in deal order.
    """
    from forty_thieves_env.envs.vector import FortyThievesVectorEnv

    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if max_moves < 1:
        raise ValueError(f"max_moves must be at least 1, got {max_moves}")
    deals = [int(d) for d in deals]
    policy = PolicyBatch(agent)
    size = min(int(batch_size), len(deals))
    env = FortyThievesVectorEnv(size, agent.variant, max_episode_steps=None, num_threads=num_threads, copy=False)
    results: list[GameResult] = []
    try:
        for start in range(0, len(deals), size):
            chunk = deals[start : start + size]
            results.extend(
                play_chunk(env, policy, chunk, seed, agent.deterministic, max_moves, on_result, agent.temperature)
            )
    finally:
        env.close()
    return sorted(results, key=lambda r: r.deal)


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
