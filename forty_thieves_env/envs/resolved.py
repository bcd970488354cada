"""An env id and its options, resolved once: what a training run, its evaluations and its model's
metadata all play.

A training config names an env by its id and adds ``gym.make`` keyword arguments
(``env_kwargs``: variant options such as ``redeals=1``, ``observation``, ``reward``,
``illegal_action``). :meth:`ResolvedEnv.resolve` turns the pair into one frozen value at the
door (the command line, :func:`agents.training.train.train`, a model's metadata) and every
consumer is handed that value: each trainer builds its games from :attr:`ResolvedEnv.options`
(the checked :class:`~.options.EnvOptions` every env class accepts), the periodic and the final
evaluation play its rules, and the model's record keeps :meth:`ResolvedEnv.record`. Nothing
after the door looks the id up again.

It is not Gymnasium's ``EnvSpec`` (which describes a registered id); this is an id with the
options of one run, checked. Like the rest of the env layer it imports neither torch nor
stable-baselines3.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..engine.variants import PRESETS, Variant
from .options import EnvOptions
from .registration import ALL_IDS, MAX_EPISODE_STEPS, id_kwargs, is_env_id

#: The variant's rule fields (keyword options of every env), less its name.
VARIANT_OPTIONS = frozenset(f.name for f in dataclasses.fields(Variant)) - {"name"}


def describe_variant(variant: Variant) -> str:
    """``'classic'``, or ``'classic' with redeals=1`` for a preset with changed rules."""
    base = PRESETS.get(variant.name)
    if base is None or base == variant:
        return repr(variant.name)
    changed = [
        f"{field}={getattr(variant, field)!r}"
        for field in sorted(VARIANT_OPTIONS)
        if getattr(variant, field) != getattr(base, field)
    ]
    return f"{variant.name!r} with {', '.join(changed)}"


@dataclass(frozen=True, eq=False)
class ResolvedEnv:
    """A registered env id with a run's options, checked (make one with :meth:`resolve`).

    Attributes:
        env_id: The registered id (``FortyThieves-v0``).
        env_kwargs: The options given on top of the id (``{"redeals": 1, "observation":
            "oracle"}``), read-only; what a config's ``env_kwargs`` holds.
        options: The id's own options (its preset, Easy's ``winnable_only`` ...) with
            ``env_kwargs`` over them, checked: the argument every env class takes.
    """

    env_id: str
    env_kwargs: Mapping[str, Any]
    options: EnvOptions

    @classmethod
    def resolve(cls, env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> ResolvedEnv:
        """Check ``env_id`` and ``env_kwargs`` together, once.

        Raises:
            ValueError: an unknown id (the message lists them), or a bad option (the message
                starts with ``env_kwargs:`` and says which).
            TypeError: an option of the wrong type, or one no env takes (``env_kwargs: ...``).
        """
        if not is_env_id(env_id):
            raise ValueError(f"unknown env id {env_id!r}; env ids are {', '.join(ALL_IDS)}")
        given = dict(env_kwargs or {})
        if "variant" in given:
            preset = id_kwargs(env_id)["variant"]
            raise ValueError(f"env_kwargs: 'variant' is set by the env id ({env_id} plays {preset!r})")
        try:
            options = EnvOptions.make(**{**id_kwargs(env_id), **given})
        except TypeError as err:
            raise TypeError(f"env_kwargs: {err}") from None
        except ValueError as err:
            raise ValueError(f"env_kwargs: {err}") from None
        return cls(env_id, MappingProxyType(given), options)

    # ----- what it plays --------------------------------------------------------------
    @property
    def variant(self) -> Variant:
        """The rules in force: the id's preset with the variant options applied."""
        return self.options.variant

    @property
    def observation(self) -> str:
        """The observation mode: ``"dict"``, ``"flat"`` or ``"oracle"``."""
        return self.options.observation

    def describe(self) -> str:
        """``variant 'classic' (FortyThieves-v0)``, with any changed rule after the name."""
        return f"variant {describe_variant(self.variant)} ({self.env_id})"

    def record(self) -> dict[str, Any]:
        """``{"env_id": ..., "env_kwargs": {...}}``: what a run folder or a model's metadata keeps
        (:meth:`resolve` of it gives this env again)."""
        return {"env_id": self.env_id, "env_kwargs": dict(self.env_kwargs)}

    def derive(self, **changes: Any) -> ResolvedEnv:
        """This env with some options changed (a value of ``None`` removes the option), checked
        again: an evaluation's env from a training run's, say (``deals=None``)."""
        merged = {**self.env_kwargs, **changes}
        return self.resolve(self.env_id, {k: v for k, v in merged.items() if v is not None})

    # ----- the env classes, built from the checked options ---------------------------------
    def make(self) -> Any:
        """A single :class:`~.env.FortyThievesEnv` of these options (no step limit: the
        caller counts moves, as the evaluator does)."""
        from .env import FortyThievesEnv

        return FortyThievesEnv(self.options)

    def torch_games(self, num_envs: int, **kwargs: Any) -> Any:
        """A :class:`~.torch_games.TorchGames` of ``num_envs`` games (imports torch; ``kwargs``:
        ``device``, ``seed``, ``autoreset``, ``num_threads``, ``max_episode_steps``)."""
        from .torch_games import TorchGames

        return TorchGames(num_envs, self.options, **kwargs)

    def sb3_vec_env(self, num_envs: int, seed: int | None = None, **kwargs: Any) -> Any:
        """A stable-baselines3 ``VecEnv`` of ``num_envs`` games with the ids' step limit, seeded
        (game ``i``: ``seed + i``); imports stable-baselines3."""
        from .sb3 import FortyThievesVecEnv

        kwargs.setdefault("max_episode_steps", MAX_EPISODE_STEPS)
        venv = FortyThievesVecEnv(num_envs, self.options, **kwargs)
        if seed is not None:
            venv.seed(seed)
        return venv

    def __eq__(self, other: object) -> bool:
        # The options follow from the id and env_kwargs (resolve is deterministic).
        if not isinstance(other, ResolvedEnv):
            return NotImplemented
        return (self.env_id, dict(self.env_kwargs)) == (other.env_id, dict(other.env_kwargs))

    def __hash__(self) -> int:
        return hash((self.env_id, tuple(sorted(self.env_kwargs.items(), key=lambda kv: kv[0]))))

    def __reduce__(self) -> tuple[Any, tuple[str, dict[str, Any]]]:
        # Resolved again in the process that unpickles it (a worker): the mapping proxy does not pickle.
        return (type(self).resolve, (self.env_id, dict(self.env_kwargs)))

    def __repr__(self) -> str:
        extra = f", {dict(self.env_kwargs)!r}" if self.env_kwargs else ""
        return f"ResolvedEnv({self.env_id!r}{extra})"
