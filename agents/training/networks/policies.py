"""Which SB3 policy class and ``policy_kwargs`` a config's :class:`~agents.configs.train_config.PolicyKwargs` names,
the MaskablePPO model a config builds with them (:func:`build_model`), and the policy alone, built from
the spaces without an environment or a model (:func:`build_policy`, the spaces from :func:`spaces_for`).

The ``move_scorer`` and ``lookup_scorer`` networks are policy classes of their own (:mod:`.move_scorer`,
:mod:`.lookup_scorer`); ``card_embedding`` and ``card_attention`` are features extractors under SB3's
heads (:mod:`.card_embedding`, :mod:`.card_attention`); ``mlp`` is SB3's own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from torch import nn

from agents.configs.train_config import TrainConfig, parse_schedule
from forty_thieves_env.engine.variants import Variant, get_variant
from forty_thieves_env.envs.registration import id_variant, is_env_id

from .card_attention import CardAttentionExtractor
from .card_embedding import CardEmbeddingExtractor

#: The networks that score moves themselves (their own policy class; no net_arch).
SCORERS = ("move_scorer", "lookup_scorer")
#: The features extractors under SB3's heads, by the name a config gives them.
EXTRACTORS = {"card_embedding": CardEmbeddingExtractor, "card_attention": CardAttentionExtractor}


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
    if policy_kwargs.features_extractor in EXTRACTORS:
        out["features_extractor_class"] = EXTRACTORS[policy_kwargs.features_extractor]
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
        observation_space: What the policy reads (:func:`spaces_for`).
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


# ------------------------------------------------------------------ the model file


def policy_data(
    policy: Any,
    config: Any,
    *,
    num_timesteps: int,
    policy_kwargs: dict[str, Any],
    n_envs: int | None = None,
) -> dict[str, Any]:
    """The ``data`` of a MaskablePPO model of ``policy`` and ``config``, as ``MaskablePPO.save`` writes it.

    The attributes a fresh ``MaskablePPO(policy_class, env, **config)`` saves (every key SB3's
    ``BaseAlgorithm.load`` puts back before ``_setup_model``), with the step count set: the
    schedules as SB3 keeps them (``learning_rate`` as given, ``lr_schedule`` and ``clip_range``
    wrapped in ``FloatSchedule``), ``ent_coef`` a number (a schedule's value at the start: an SB3
    model takes no entropy schedule), the rollout buffer class MaskablePPO picks for the
    observation space.
    """
    from gymnasium import spaces
    from sb3_contrib.common.maskable.buffers import MaskableDictRolloutBuffer, MaskableRolloutBuffer
    from stable_baselines3.common.utils import FloatSchedule

    def schedule(value: Any) -> Any:
        return FloatSchedule(parse_schedule(value))

    obs_space, action_space = policy.observation_space, policy.action_space
    learning_rate = parse_schedule(config.learning_rate)
    ent_coef = parse_schedule(config.ent_coef)
    return {
        "policy_class": type(policy),
        "verbose": 0,
        "policy_kwargs": policy_kwargs,
        "num_timesteps": int(num_timesteps),
        "_total_timesteps": 0,
        "_num_timesteps_at_start": 0,
        "seed": config.seed,
        "action_noise": None,
        "start_time": 0.0,
        "learning_rate": learning_rate,
        "tensorboard_log": None,
        "_last_obs": None,
        "_last_episode_starts": None,
        "_last_original_obs": None,
        "_episode_num": 0,
        "use_sde": False,
        "sde_sample_freq": -1,
        "_current_progress_remaining": 1.0,
        "_stats_window_size": 100,
        "ep_info_buffer": None,
        "ep_success_buffer": None,
        "_n_updates": 0,
        "observation_space": obs_space,
        "action_space": action_space,
        "n_envs": config.num_envs if n_envs is None else int(n_envs),
        "n_steps": config.n_steps,
        "gamma": config.gamma,
        "gae_lambda": config.gae_lambda,
        "ent_coef": float(ent_coef(1.0)) if callable(ent_coef) else float(ent_coef),
        "vf_coef": config.vf_coef,
        "max_grad_norm": config.max_grad_norm,
        "rollout_buffer_class": (
            MaskableDictRolloutBuffer if isinstance(obs_space, spaces.Dict) else MaskableRolloutBuffer
        ),
        "rollout_buffer_kwargs": {},
        "batch_size": config.batch_size,
        "n_epochs": config.n_epochs,
        "clip_range": schedule(config.clip_range),
        "clip_range_vf": None if config.clip_range_vf is None else schedule(config.clip_range_vf),
        "normalize_advantage": config.normalize_advantage,
        "target_kl": config.target_kl,
        "lr_schedule": FloatSchedule(learning_rate),
    }


def save_policy(
    path: str | os.PathLike[str],
    policy: Any,
    config: Any,
    *,
    num_timesteps: int,
    variant: Any = None,
    policy_kwargs: dict[str, Any] | None = None,
    n_envs: int | None = None,
) -> Path:
    """Write ``policy`` as a MaskablePPO model zip at ``path``, atomically; return the path.

    ``MaskablePPO.load(path)`` then makes the model a MaskablePPO run of ``config`` would have
    saved after ``num_timesteps`` steps, with these weights and this optimizer state (on the CPU
    or the GPU, wherever it is loaded); :func:`load_policy` gives the policy back alone.

    Args:
        path: The ``.zip`` to write (its folder is made).
        policy: An SB3 ``MaskableActorCriticPolicy`` with its ``optimizer``, on any device.
        config: The run's :class:`~agents.configs.train_config.TrainConfig` (``algo`` MaskablePPO or TorchPPO).
        num_timesteps: The steps trained so far (``model.num_timesteps`` once loaded).
        variant: The rules whose build rule the scorers read (as :func:`build_policy` was given it).
        policy_kwargs: The SB3 ``policy_kwargs`` the policy was built with; None: the config's
            (:func:`~agents.training.networks.policies.policy_kwargs_for` with ``variant``).
        n_envs: The games per rollout recorded (None: the config's ``num_envs``; SB3 calls it n_envs).

    Raises:
        ValueError: ``path`` is not a ``.zip``, or the policy is not of the class the config names.
        OSError: the file cannot be written (naming it).
    """
    from agents.storage.policyfile import write_policy

    if policy_kwargs is None:
        expected = resolve_policy_class(policy_class_for(config.policy, config.policy_kwargs))
        if type(policy) is not expected:
            raise ValueError(f"the config names {expected.__name__}, the policy is a {type(policy).__name__}")
        policy_kwargs = policy_kwargs_for(config.policy_kwargs, variant)
    data = policy_data(policy, config, num_timesteps=num_timesteps, policy_kwargs=policy_kwargs, n_envs=n_envs)
    return write_policy(path, policy, data)
