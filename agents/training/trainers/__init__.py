"""The trainers, by the ``algo`` a config names; :func:`agents.training.train.train` looks one up here.

========================  =====================================================  ==================
``algo``                  trainer                                                 config model
========================  =====================================================  ==================
``MaskablePPO``           sb3-contrib's MaskablePPO (:mod:`.maskable`)            ``MaskablePPOConfig``
``TorchPPO``              PPO with games, rollouts and updates on one torch       ``TorchPPOConfig``
                          device (:mod:`.torch_ppo`)
``RLlibPPO``              RLlib's PPO with action masks (:mod:`.rllib`)           ``RLlibConfig``
========================  =====================================================  ==================

Each is a :class:`~.base.Trainer`: handed the resolved env, its config and the run folder by the
spine, it trains through a :class:`~agents.training.session.Session` (logs, evaluations,
checkpoints, time limit, the end). **Adding an algorithm** is one module here with its
``Trainer`` subclass, one line in :data:`TRAINERS`, and its config model (a
:class:`~agents.configs.train_config.RunConfig` subclass) in
:data:`agents.configs.train_config.CONFIG_MODELS` under the same name. The modules are imported
when a config asks for them, so a run that does not use Ray never imports it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Trainer

#: ``algo`` -> ``"module:class"`` of its trainer.
TRAINERS: dict[str, str] = {
    "MaskablePPO": "agents.training.trainers.maskable:MaskablePPOTrainer",
    "TorchPPO": "agents.training.trainers.torch_ppo:TorchPPOTrainer",
    "RLlibPPO": "agents.training.trainers.rllib:RLlibTrainer",
}


def trainer_class(algo: str) -> type[Trainer]:
    """The trainer of ``algo`` (imported now).

    Raises:
        ValueError: no trainer has that name (the message lists them).
    """
    if algo not in TRAINERS:
        raise ValueError(f"algo: unknown {algo!r}; algos are {', '.join(TRAINERS)}")
    module, name = TRAINERS[algo].split(":")
    return getattr(importlib.import_module(module), name)
