"""Which SB3 policy class and ``policy_kwargs`` a training config's :class:`~agents.training.config.PolicyKwargs` names.

The ``move_scorer`` and ``lookup_scorer`` networks are policy classes of their own (:mod:`.move_scorer`,
:mod:`.lookup_scorer`); ``card_embedding`` is a features extractor under SB3's heads
(:mod:`.card_embedding`); ``mlp`` is SB3's own.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from torch import nn

from forty_thieves_env.engine.variants import Variant, get_variant

from .card_embedding import CardEmbeddingExtractor

#: The networks that score moves themselves (their own policy class; no net_arch).
SCORERS = ("move_scorer", "lookup_scorer")


def variant_of(env_id: str) -> Variant:
    """The variant a registered env id plays."""
    return get_variant(gym.spec(env_id).kwargs.get("variant", "classic"))


def policy_class_for(policy: str, policy_kwargs: object) -> Any:
    """The SB3 policy: the config's name, or the policy class of the ``move_scorer`` and ``lookup_scorer`` networks."""
    from ..config import PolicyKwargs

    assert isinstance(policy_kwargs, PolicyKwargs)
    if policy_kwargs.features_extractor == "move_scorer":
        from .move_scorer import MoveScorerPolicy

        return MoveScorerPolicy
    if policy_kwargs.features_extractor == "lookup_scorer":
        from .lookup_scorer import LookupScorerPolicy

        return LookupScorerPolicy
    return policy


def policy_kwargs_for(policy_kwargs: object, env_id: str | None = None) -> dict[str, object]:
    """SB3 ``policy_kwargs`` from a :class:`agents.training.config.PolicyKwargs` (``env_id``: its build rule)."""
    from ..config import PolicyKwargs

    assert isinstance(policy_kwargs, PolicyKwargs)
    arch = policy_kwargs.net_arch
    out: dict[str, object] = {
        "net_arch": list(arch) if isinstance(arch, list) else {"pi": list(arch.pi), "vf": list(arch.vf)},
        "activation_fn": {"tanh": nn.Tanh, "relu": nn.ReLU}[policy_kwargs.activation_fn],
        "ortho_init": policy_kwargs.ortho_init,
    }
    if policy_kwargs.features_extractor in SCORERS:  # their own layers: net_arch and activation unused
        kwargs = policy_kwargs.features_extractor_kwargs.model_dump()
        if env_id is not None:
            kwargs["alternate"] = variant_of(env_id).build == "alternate"
        return {"features_extractor_kwargs": kwargs}
    if policy_kwargs.features_extractor == "card_embedding":
        out["features_extractor_class"] = CardEmbeddingExtractor
        out["features_extractor_kwargs"] = policy_kwargs.features_extractor_kwargs.model_dump()
    return out
