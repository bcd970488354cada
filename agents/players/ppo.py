"""The ``ppo`` agent: a trained MaskablePPO policy (a ``.zip`` from ``forty-thieves train``).

``forty-thieves evaluate --agent ppo --model runs/RUN/best_model.zip`` plays it like any other
agent; ``--model NAME`` plays a shipped model (:mod:`agents.players.shipped`). A model that
cannot play the variant asked for is refused: one whose metadata (a shipped model's JSON, or
its run folder's config) names other rules, or whose zip reads other observation or action
spaces. A model trained on the ``flat`` observation is fed the dict observation's fields
flattened; one trained on ``oracle`` sets the agent's ``observation`` to ``"oracle"``, so the
evaluator gives it the hidden cards.

Each move is the policy's most likely legal move (``deterministic=True``, the default: what
``model.predict(obs, action_masks=mask, deterministic=True)`` returns) or one drawn from its
masked distribution with the agent's seeded generator (``deterministic=False``). The
policy network is called directly (no gradient, no per-call mode switch), which is several
times faster per move than ``model.predict``.

A model trained on the ``oracle`` observation whose logits read only a player's fields (an
*asymmetric critic*: the ``lookup_scorer`` with ``critic_stock``, whose value alone reads the
stock) is a fair player: the agent and the batched evaluator hand it only those fields
(:func:`actor_fields`), and its ``observation`` stays ``"dict"``.

A deterministic policy can go round in circles (a card moved back and forth); the
evaluator's move cap ends such a game as a loss, which is what it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from forty_thieves_env.engine.variants import Variant

from .base import BaseAgent, Observation, legal_actions
from .policy import actor_fields, greedy_actions, input_fields, policy_input, policy_logits, sample_move
from .shipped import ModelInfo, check_fit, resolve_model

_MODELS: dict[tuple[str, str], Any] = {}


def load_model(path: str | Path, device: str = "cpu") -> Any:
    """A MaskablePPO model (cached per process: the evaluator's games share it).

    ``path`` is a shipped model's name, a ``.zip`` or a run folder (its best model, else its
    final one): see :func:`agents.players.shipped.resolve_model`.
    """
    return _load_zip(resolve_model(path)[0], device)


#: What to do about a model file that is damaged.
MODEL_ADVICE = "give another model (a run's checkpoints/ hold its earlier ones), or train or ship it again"


def _load_zip(path: Path, device: str) -> Any:
    """The model at ``path``, read whole and checked first (:func:`agents.storage.modelfile.load_model`):
    a damaged file is one line naming it, never a traceback from inside torch."""
    from agents.storage.modelfile import load_model

    key = (str(path.resolve()), device)
    if key not in _MODELS:
        _MODELS[key] = load_model(path, MODEL_ADVICE, device=device)
    return _MODELS[key]


class PPOAgent(BaseAgent):
    """A MaskablePPO policy as an agent.

    Args:
        variant: The variant it plays (must match the one it was trained on).
        model: A shipped model's name, a model ``.zip`` or a run folder (its best model,
            else its final one).
        deterministic: Play the most likely legal move (True) or sample one (False); None:
            as the model's metadata says (:attr:`ModelInfo.deterministic`), else True.
        seed: Seeds the sampling (``deterministic=False``); ``reset(seed)`` re-seeds it per game.
        temperature: Sampled moves are drawn from ``softmax(logits / temperature)``: below 1
            the likely moves more often, towards greedy play without its loops.
        threads: torch threads in this process (1 suits one game at a time).
        device: torch device.
    """

    name = "ppo"

    def __init__(
        self,
        variant: str | Variant = "classic",
        model: str | Path | None = None,
        deterministic: bool | None = None,
        seed: int | None = None,
        threads: int = 1,
        device: str = "cpu",
        temperature: float = 1.0,
    ) -> None:
        super().__init__(variant, seed)
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature > 0:
            raise ValueError(f"temperature must be a positive number, got {temperature!r}")
        self.temperature = float(temperature)
        if model is None:
            raise ValueError("the ppo agent needs a model: --model NAME (a shipped model), RUN/best_model.zip or RUN")
        if threads > 0:
            torch.set_num_threads(int(threads))
        path, info = resolve_model(model)
        self.model = _load_zip(path, device)
        self.model_path = str(model)
        self.info: ModelInfo | None = info
        if deterministic is None:
            deterministic = info.deterministic if info is not None and info.deterministic is not None else True
        self.deterministic = bool(deterministic)
        label = f"model {str(model)!r}" if info is not None and str(model) == info.name else f"the model at {path}"
        mode = check_fit(self.model.observation_space, self.model.action_space, info, self.variant, label)
        if actor_fields(self.model) is not None:  # an asymmetric critic: the logits read a player's fields only
            mode = "dict"
        if mode == "oracle":  # it needs the hidden cards: the evaluator makes its env so
            self.observation = "oracle"
        self._label = label
        self.policy = self.model.policy
        self.policy.set_training_mode(False)
        self._reads = input_fields(self.policy)  # the dict observation's fields its logits read

    def _logits(self, observation: Observation) -> torch.Tensor:
        """``(1, n) float32`` tensor on the model's device: the logits of one observation."""
        try:
            batch = {k: np.asarray(observation[k])[None] for k in self._reads}
        except KeyError as err:
            raise ValueError(
                f"{self._label} reads the {self.observation!r} observation; this one has no {err}: "
                f"make the env with observation={self.observation!r}"
            ) from None
        return policy_logits(self.policy, policy_input(self.policy, batch))

    def logits(self, observation: Observation) -> np.ndarray:
        """``(n,) float32``: the policy's action logits for one observation (before masking)."""
        return self._logits(observation)[0].cpu().numpy()

    def act(self, observation: Observation, action_mask: np.ndarray) -> int:
        """The policy's most likely legal move, or one drawn with the agent's generator
        (:func:`~.policy.greedy_actions`, :func:`~.policy.sample_move`)."""
        legal = legal_actions(action_mask)  # raises when the game is over
        logits = self._logits(observation)
        if self.deterministic:
            mask = torch.from_numpy(np.asarray(action_mask, dtype=bool).reshape(1, -1))
            return int(greedy_actions(logits, mask)[0])
        return sample_move(logits[0].cpu().numpy(), legal, self.rng, self.temperature)

    def __repr__(self) -> str:
        return f"PPOAgent(variant={self.variant.name!r}, model={self.model_path!r}, deterministic={self.deterministic})"
