"""A policy saved as a MaskablePPO model zip, and read back, without a MaskablePPO model.

A ``TorchPPO`` run trains an SB3 policy on its own (:func:`agents.training.networks.policies.build_policy`
builds it from the spaces and the config); its models stay MaskablePPO ``.zip`` files, so
``MaskablePPO.load``, ``forty-thieves evaluate --agent ppo``, ``forty-thieves ship`` and ``init_model``
take them as they take a MaskablePPO run's, and a model trained on a GPU plays on a CPU-only machine.

* :func:`write_policy` writes the zip SB3's ``MaskablePPO.save`` would write: the ``data`` entry
  (the hyperparameters, spaces and step count that ``MaskablePPO.load`` rebuilds the model from;
  :func:`agents.training.networks.policies.save_policy` makes it from a run's config),
  ``policy.pth`` (the weights) and ``policy.optimizer.pth`` (the optimizer state), atomically.
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


def write_policy(path: str | os.PathLike[str], policy: Any, data: dict[str, Any]) -> Path:
    """Write ``policy`` with the model ``data`` ``MaskablePPO.load`` rebuilds its model from as a
    MaskablePPO model zip at ``path``, atomically; return the path.

    The zip holds ``data`` (:func:`agents.training.networks.policies.policy_data` makes it from a
    run's config), ``policy.pth`` (the weights) and ``policy.optimizer.pth`` (the optimizer state).

    Raises:
        ValueError: ``path`` is not a ``.zip``.
        OSError: the file cannot be written (naming it).
    """
    from stable_baselines3.common.save_util import save_to_zip_file

    target = Path(path)
    if target.suffix != ".zip":
        raise ValueError(f"a model file ends in .zip, not {target.name!r}")
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
