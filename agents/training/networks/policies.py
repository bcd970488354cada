"""Which SB3 policy class and ``policy_kwargs`` a config's :class:`~agents.configs.train_config.PolicyKwargs` names,
the MaskablePPO model a config builds with them (:func:`build_model`), and the policy alone, built from
the spaces without an environment or a model (:func:`build_policy`, the spaces from :func:`spaces_for`).

The ``move_scorer`` and ``lookup_scorer`` networks are policy classes of their own (:mod:`.move_scorer`,
:mod:`.lookup_scorer`); ``card_embedding`` is a features extractor under SB3's heads
(:mod:`.card_embedding`); ``mlp`` is SB3's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch import nn

from agents.configs.train_config import TrainConfig, parse_schedule
from forty_thieves_env.engine.variants import Variant, get_variant
from forty_thieves_env.envs.registration import id_kwargs, id_variant, is_env_id

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


def policy_kwargs_for(policy_kwargs: object, env_id: str | Variant | None = None) -> dict[str, object]:
    """SB3 ``policy_kwargs`` from a :class:`agents.configs.train_config.PolicyKwargs`.

    ``env_id``: the registered id, or the :class:`Variant`, whose build rule the scorers read
    (their ``alternate`` option); None leaves that option out (the scorer's default).
    """
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
        if env_id is not None:
            variant = env_id if isinstance(env_id, Variant) else id_variant(env_id)[0]
            kwargs["alternate"] = variant.build == "alternate"
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


def as_variant(variant: Variant | str) -> Variant:
    """The rules ``variant`` names: a :class:`Variant` as it is, a registered env id's rules, or a preset."""
    if isinstance(variant, Variant):
        return variant
    return id_variant(variant)[0] if is_env_id(variant) else get_variant(variant)


def spaces_for(variant: Variant | str, observation: str = "dict") -> tuple[Any, Any]:
    """The observation and action spaces a policy of ``variant`` reads and acts in.

    Args:
        variant: A :class:`Variant`, a registered env id or a preset name (see :func:`as_variant`).
        observation: The observation mode (``"dict"``, ``"flat"``, ``"oracle"``).

    Returns:
        ``(observation_space, action_space)``: the env's
        :func:`~forty_thieves_env.envs.observation.observation_space` and
        ``Discrete(n_actions(variant))``, as an env of those rules would have them.
    """
    from gymnasium import spaces

    from forty_thieves_env.engine.actions import n_actions
    from forty_thieves_env.envs.observation import observation_space

    rules = as_variant(variant)
    return observation_space(rules, observation), spaces.Discrete(n_actions(rules))


#: Env options that change neither the rules nor the observation (the deals dealt, the episode limit, ...).
_NOT_SPACES = ("deals", "winnable_only", "render_mode", "reward", "illegal_action", "max_episode_steps", "num_threads")


def run_spaces(env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> tuple[Variant, Any, Any]:
    """The rules and spaces of a run: ``env_id`` with the config's ``env_kwargs`` applied as the envs apply them.

    Returns:
        ``(variant, observation_space, action_space)``; ``variant`` is what :func:`build_policy` and
        :func:`~agents.storage.policyfile.save_policy` take for the scorers' build rule.

    Raises:
        ValueError: an unknown env id or option.
    """
    from forty_thieves_env.envs.options import EnvOptions

    kwargs = {**id_kwargs(env_id), **(env_kwargs or {})}
    for key in _NOT_SPACES:
        kwargs.pop(key, None)
    options = EnvOptions.make(**kwargs)
    return (options.variant, *spaces_for(options.variant, options.observation))


def resolve_policy_class(policy: Any) -> Any:
    """A policy class, or MaskablePPO's class for one of its names (``MultiInputPolicy``, ``MlpPolicy``)."""
    if not isinstance(policy, str):
        return policy
    from sb3_contrib import MaskablePPO

    try:
        return MaskablePPO.policy_aliases[policy]
    except KeyError:
        names = ", ".join(MaskablePPO.policy_aliases)
        raise ValueError(f"unknown policy {policy!r}; MaskablePPO knows {names}") from None


def build_policy(
    config: TrainConfig,
    observation_space: Any,
    action_space: Any,
    device: Any = "cpu",
    seed: int | None = None,
    *,
    variant: Variant | str | None = None,
) -> Any:
    """The SB3 policy (network and optimizer) a config names, built from the spaces alone.

    The policy is made as ``MaskablePPO._setup_model`` makes it: torch (and Python's and NumPy's
    generators, and ``action_space``'s sampler) seeded with ``seed`` just before, then
    ``policy_class(observation_space, action_space, lr_schedule, **policy_kwargs)``, moved to
    ``device``. So with the same seed and config its initial weights are those of the model
    :func:`build_model` makes, without an environment, a model or a rollout buffer. The policy is
    in training mode (as SB3 leaves it) and has its optimizer (``policy.optimizer``, made with
    the learning rate at the schedule's start).

    Args:
        config: The run's config (``algo`` MaskablePPO or TorchPPO: the network is the same).
        observation_space: What the policy reads (:func:`spaces_for`, :func:`run_spaces`).
        action_space: ``Discrete(n_actions)`` of the variant.
        device: Where the policy lives (a torch device or its name; ``"auto"``: CUDA if there).
        seed: Seed the generators first, as SB3 does with the run's seed (None: leave them).
        variant: The rules (:class:`Variant`, env id) whose build rule the scorers read (as
            ``env_id`` in :func:`policy_kwargs_for`); None leaves the scorers' default.

    Returns:
        A ``MaskableActorCriticPolicy`` on ``device``.
    """
    import torch
    from stable_baselines3.common.utils import FloatSchedule, get_device, set_random_seed

    # As build_model: the masked logits SB3 builds are valid by construction.
    torch.distributions.Distribution.set_default_validate_args(False)
    target = get_device(device)
    if seed is not None:  # as MaskablePPO.set_random_seed, the action space's sampler included
        set_random_seed(seed, using_cuda=target.type == "cuda")
        action_space.seed(seed)
    policy_class = resolve_policy_class(policy_class_for(config.policy, config.policy_kwargs))
    lr_schedule = FloatSchedule(parse_schedule(config.learning_rate))
    policy = policy_class(
        observation_space, action_space, lr_schedule, **policy_kwargs_for(config.policy_kwargs, variant)
    )
    return policy.to(target)
