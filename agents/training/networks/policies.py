"""Which SB3 policy class and ``policy_kwargs`` a config's :class:`~agents.configs.train_config.PolicyKwargs` names,
and the MaskablePPO model a config builds with them (:func:`build_model`).

The ``move_scorer`` and ``lookup_scorer`` networks are policy classes of their own (:mod:`.move_scorer`,
:mod:`.lookup_scorer`); ``card_embedding`` is a features extractor under SB3's heads
(:mod:`.card_embedding`); ``mlp`` is SB3's own.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from agents.configs.train_config import TrainConfig, parse_schedule
from forty_thieves_env.engine.variants import Variant
from forty_thieves_env.envs.registration import id_variant

from .card_embedding import CardEmbeddingExtractor

#: The networks that score moves themselves (their own policy class; no net_arch).
SCORERS = ("move_scorer", "lookup_scorer")


def policy_class_for(policy: str, policy_kwargs: object) -> Any:
    """The SB3 policy: the config's name, or the policy class of the ``move_scorer`` and ``lookup_scorer`` networks."""
    from agents.configs.train_config import PolicyKwargs

    assert isinstance(policy_kwargs, PolicyKwargs)
    if policy_kwargs.features_extractor == "move_scorer":
        from .move_scorer import MoveScorerPolicy

        return MoveScorerPolicy
    if policy_kwargs.features_extractor == "lookup_scorer":
        from .lookup_scorer import LookupScorerPolicy

        return LookupScorerPolicy
    return policy


def policy_kwargs_for(policy_kwargs: object, variant: Variant | str | None = None) -> dict[str, object]:
    """SB3 ``policy_kwargs`` from a :class:`agents.configs.train_config.PolicyKwargs` (``variant``, or an
    env id: the scorers' build rule)."""
    from agents.configs.train_config import PolicyKwargs

    assert isinstance(policy_kwargs, PolicyKwargs)
    arch = policy_kwargs.net_arch
    out: dict[str, object] = {
        "net_arch": list(arch) if isinstance(arch, list) else {"pi": list(arch.pi), "vf": list(arch.vf)},
        "activation_fn": {"tanh": nn.Tanh, "relu": nn.ReLU}[policy_kwargs.activation_fn],
        "ortho_init": policy_kwargs.ortho_init,
    }
    if policy_kwargs.features_extractor in SCORERS:  # their own layers: net_arch and activation unused
        kwargs = policy_kwargs.features_extractor_kwargs.model_dump()
        if variant is not None:
            rules = variant if isinstance(variant, Variant) else id_variant(variant)[0]
            kwargs["alternate"] = rules.build == "alternate"
        return {"features_extractor_kwargs": kwargs}
    if policy_kwargs.features_extractor == "card_embedding":
        out["features_extractor_class"] = CardEmbeddingExtractor
        out["features_extractor_kwargs"] = policy_kwargs.features_extractor_kwargs.model_dump()
    return out


#: Config keys passed to MaskablePPO as they are.
_PPO_KEYS = (
    "n_steps",
    "batch_size",
    "n_epochs",
    "gamma",
    "gae_lambda",
    "vf_coef",
    "max_grad_norm",
    "target_kl",
    "normalize_advantage",
    "device",
)


def build_model(config: TrainConfig, venv: Any, seed: int, variant: Variant | str | None = None) -> Any:
    """MaskablePPO as the config says, on ``venv`` (``variant``, or an env id: the build rule for the scorers)."""
    import torch
    from sb3_contrib import MaskablePPO

    # torch.distributions re-checks every batch's logits and samples (a tenth of the training
    # time with a fast network); the masked logits SB3 builds are valid by construction.
    torch.distributions.Distribution.set_default_validate_args(False)

    return MaskablePPO(
        policy_class_for(config.policy, config.policy_kwargs),
        venv,
        learning_rate=parse_schedule(config.learning_rate),
        clip_range=parse_schedule(config.clip_range),
        clip_range_vf=None if config.clip_range_vf is None else parse_schedule(config.clip_range_vf),
        ent_coef=float(parse_schedule(config.ent_coef)),  # a number: cross_checks refuses a schedule here
        policy_kwargs=policy_kwargs_for(config.policy_kwargs, variant),
        seed=seed,
        verbose=0,
        **{key: getattr(config, key) for key in _PPO_KEYS},
    )
