"""A policy saved as a MaskablePPO model zip, and read back, without a MaskablePPO model.

A ``TorchPPO`` run trains an SB3 policy on its own (:func:`agents.training.networks.policies.build_policy`
builds it from the spaces and the config); its models stay MaskablePPO ``.zip`` files, so
``MaskablePPO.load``, ``forty-thieves evaluate --agent ppo``, ``forty-thieves ship`` and ``init_model``
take them as they take a MaskablePPO run's, and a model trained on a GPU plays on a CPU-only machine.

* :func:`save_policy` writes the zip SB3's ``MaskablePPO.save`` would write for a model of that
  policy and config: the ``data`` entry (the hyperparameters, spaces and step count that
  ``MaskablePPO.load`` rebuilds the model from), ``policy.pth`` (the weights) and
  ``policy.optimizer.pth`` (the optimizer state), atomically.
* :func:`load_policy` reads a zip back as the policy, its optimizer state and what ``data`` says
  (:class:`StoredPolicy`), after :func:`~agents.storage.modelfile.check_model`, without making a
  model (no rollout buffer, no reseeding of the generators), the moved class paths answered
  (:func:`~agents.storage.modelfile.read_data`).
"""

from __future__ import annotations

import dataclasses
import io
import os
from pathlib import Path
from typing import Any

from agents.storage.files import DamagedFileError, damaged, write_bytes
from agents.storage.modelfile import MODEL_ADVICE, check_model, read_data, unloadable

#: The ``data`` entries without which no policy can be rebuilt.
POLICY_DATA = ("policy_class", "observation_space", "action_space")
#: MaskablePPO's learning rate when ``data`` has none (a schedule that did not unpickle): the
#: optimizer's own rate comes back with its state anyway.
DEFAULT_LEARNING_RATE = 3e-4


@dataclasses.dataclass(frozen=True)
class StoredPolicy:
    """A policy read from a model zip (:func:`load_policy`).

    Attributes:
        policy: The SB3 policy on the device asked for, its weights and optimizer state loaded.
        observation_space: What it reads (the zip's).
        action_space: What it acts in (``Discrete(n_actions)``).
        num_timesteps: The steps it was trained for when saved.
        data: The zip's whole ``data``, unpickled (hyperparameters, ``policy_kwargs``, ``seed``, ...).
    """

    policy: Any
    observation_space: Any
    action_space: Any
    num_timesteps: int
    data: dict[str, Any]


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

    from agents.configs.train_config import parse_schedule

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
    from stable_baselines3.common.save_util import save_to_zip_file

    from agents.training.networks.policies import policy_class_for, policy_kwargs_for, resolve_policy_class

    target = Path(path)
    if target.suffix != ".zip":
        raise ValueError(f"a model file ends in .zip, not {target.name!r}")
    if policy_kwargs is None:
        expected = resolve_policy_class(policy_class_for(config.policy, config.policy_kwargs))
        if type(policy) is not expected:
            raise ValueError(f"the config names {expected.__name__}, the policy is a {type(policy).__name__}")
        policy_kwargs = policy_kwargs_for(config.policy_kwargs, variant)
    data = policy_data(policy, config, num_timesteps=num_timesteps, policy_kwargs=policy_kwargs, n_envs=n_envs)
    params = {"policy": policy.state_dict(), "policy.optimizer": policy.optimizer.state_dict()}
    buffer = io.BytesIO()
    save_to_zip_file(buffer, data=data, params=params, pytorch_variables={})
    return write_bytes(target, buffer.getvalue())


def load_policy(path: str | os.PathLike[str], device: Any = "cpu", advice: str = MODEL_ADVICE) -> StoredPolicy:
    """The policy of a MaskablePPO model zip, rebuilt on ``device`` without a MaskablePPO model.

    As ``MaskablePPO.load`` rebuilds it: ``data["policy_class"](observation_space, action_space,
    lr_schedule, **policy_kwargs)``, then the weights and the optimizer state. The policy is in
    training mode (as SB3 leaves it); torch's generators are not reseeded (``MaskablePPO.load``
    reseeds them with the zip's seed). Old class paths are answered (:func:`~.modelfile.read_data`).

    Args:
        path: A model zip (a run's checkpoint, ``best_model.zip``, a shipped model).
        device: Where the policy lives (``"auto"``: CUDA if there).
        advice: What the message of a damaged file says to do.

    Returns:
        A :class:`StoredPolicy`.

    Raises:
        ValueError: no such file.
        DamagedFileError: the file is damaged or does not load as a policy (one line naming it).
    """
    from stable_baselines3.common.save_util import load_from_zip_file
    from stable_baselines3.common.utils import FloatSchedule, get_device
    from stable_baselines3.common.vec_env.patch_gym import _convert_space

    p = Path(path)
    check_model(p, advice)
    target = get_device(device)
    try:
        data = read_data(p)
        missing = [key for key in POLICY_DATA if key not in data]
        if missing:
            raise damaged(p, f"its data has no {missing[0]!r}", advice)
        _, params, _ = load_from_zip_file(str(p), device=target, load_data=False)
        obs_space, action_space = (_convert_space(data[key]) for key in ("observation_space", "action_space"))
        kwargs = dict(data.get("policy_kwargs") or {})
        kwargs.pop("device", None)  # as SB3's load: the device is ours
        arch = kwargs.get("net_arch")
        if arch and isinstance(arch, list) and isinstance(arch[0], dict):
            kwargs["net_arch"] = arch[0]  # as SB3's load: a model of SB3 < 1.8 wrote [dict(pi=..., vf=...)]
        lr_schedule = FloatSchedule(data.get("learning_rate", DEFAULT_LEARNING_RATE))
        policy = data["policy_class"](obs_space, action_space, lr_schedule, **kwargs).to(target)
        policy.load_state_dict(params["policy"])
        if "policy.optimizer" in params:
            policy.optimizer.load_state_dict(params["policy.optimizer"])
    except DamagedFileError:
        raise
    except Exception as err:  # whatever SB3, torch or the policy raise on a file that passed the check
        raise unloadable(p, err, advice) from None
    return StoredPolicy(policy, obs_space, action_space, int(data.get("num_timesteps", 0)), data)
