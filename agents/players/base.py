"""The agent protocol shared by every player, and the registry that builds them by name.

An agent plays one game at a time through the Gymnasium environment's interface::

    agent = make_agent("heuristic", "classic")
    obs, info = env.reset(options={"deal": 7})
    agent.reset(seed=7)
    while not done:
        action = agent.act(obs, info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(action)

* ``reset(seed)`` starts a new game (forgets the last one); the same seed and the same
  observations give the same actions.
* ``act(observation, action_mask) -> int`` returns a legal action of the variant's
  ``Discrete`` space. ``observation`` is the env's default ``Dict`` observation (what a player
  sees); an agent whose ``observation`` attribute is ``"oracle"`` (the perfect-information
  solver) needs the env made with ``observation="oracle"``. Agents are fed *every*
  observation of a game in order, which lets them remember what they saw (a redealt stock).

Agents never touch the environment itself, so one agent class serves the env, a vector of
envs and the evaluator (:mod:`agents.evaluation.evaluate`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

from forty_thieves_env.engine.actions import n_actions
from forty_thieves_env.engine.variants import Variant, get_variant

Observation = Mapping[str, np.ndarray]


@runtime_checkable
class Agent(Protocol):
    """What every agent implements (see the module docstring)."""

    name: str
    #: The env observation mode it reads: ``"dict"`` (a player's view) or ``"oracle"``.
    observation: str

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation: Observation, action_mask: np.ndarray) -> int: ...


class BaseAgent:
    """Common plumbing: the variant, the action count and a seeded ``numpy`` generator."""

    name = "base"
    observation = "dict"

    def __init__(self, variant: str | Variant = "classic", seed: int | None = None) -> None:
        self.variant: Variant = get_variant(variant)
        self.n_actions = n_actions(self.variant)
        self.rng = np.random.default_rng(seed)
        self.seed = seed

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; a ``seed`` re-seeds the agent's generator."""
        if seed is not None:
            self.seed = seed
            self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation, action_mask: np.ndarray) -> int:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(variant={self.variant.name!r}, seed={self.seed!r})"


def legal_actions(action_mask: np.ndarray) -> np.ndarray:
    """The legal action numbers of a mask; ``ValueError`` when there is none."""
    legal = np.flatnonzero(action_mask)
    if legal.size == 0:
        raise ValueError("no legal action: the game is over")
    return legal


# name -> "module:Class" (imported on first use, so the registry costs nothing)
_REGISTRY: dict[str, str] = {
    "random": "agents.players.random:RandomAgent",
    "heuristic": "agents.players.heuristic:HeuristicAgent",
    "lookahead": "agents.players.lookahead:LookaheadAgent",
    "solver": "agents.players.solver:SolverAgent",
    "sampling_solver": "agents.players.sampling_solver:SamplingSolverAgent",
    "guided_solver": "agents.players.guided_solver:GuidedSolverAgent",  # sampling_solver + a policy prior
    "ppo": "agents.players.ppo:PPOAgent",  # a trained MaskablePPO model (model=PATH.zip)
}


def register_agent(name: str, target: str | Callable[..., Agent]) -> None:
    """Add an agent to :func:`make_agent` (a ``"module:Class"`` string or a callable)."""
    _REGISTRY[name] = target  # type: ignore[assignment]


def registered_targets() -> dict[str, str]:
    """The registry's ``"module:Class"`` entries (what a worker process needs to rebuild it)."""
    return {name: target for name, target in _REGISTRY.items() if isinstance(target, str)}


def agent_names() -> list[str]:
    return sorted(_REGISTRY)


def agent_class(name: str) -> Callable[..., Agent]:
    if name not in _REGISTRY:
        raise ValueError(f"unknown agent {name!r}; agents are {', '.join(agent_names())}")
    target: Any = _REGISTRY[name]
    if isinstance(target, str):
        module, _, attr = target.partition(":")
        target = getattr(importlib.import_module(module), attr)
    return target


def make_agent(name: str, variant: str | Variant = "classic", **kwargs: Any) -> Agent:
    """Build a registered agent (``random``, ``heuristic``, ``lookahead``, ``sampling_solver``,
    ``guided_solver``, ``solver``, ``ppo``).

    Keyword arguments go to the agent's constructor (``seed=``, and its own options such as
    ``samples=`` for ``lookahead``).
    """
    return agent_class(name)(variant, **kwargs)
