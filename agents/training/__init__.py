"""MaskablePPO training: configs (:mod:`agents.configs`), the envs (:mod:`.envs`), callbacks
(:mod:`.callbacks`), run folders (:mod:`.runs`), the policy networks (:mod:`.networks`), the
imitation warm start (:mod:`.imitation`), the trainer and ``forty-thieves train`` (:mod:`.train`),
the device-resident trainer (:mod:`.torch_ppo`, :mod:`.torch_run`), shipping a run
(:mod:`.shipping`), the demo (:mod:`.demo`) and the notebook runner (:mod:`.notebooks`).
torch and stable-baselines3 are imported only here, in the policy module :mod:`agents.players.policy`
(with the ``ppo`` agent that uses it) and in the batched policy evaluation
:mod:`agents.evaluation.policy_eval`.

A model zip pickles its policy class by module path: the shipped models and every run saved before
the networks moved into :mod:`.networks` name ``agents.training.lookup_scorer`` or
``agents.training.move_scorer``, and a run with a learning-rate schedule pickles its
``LinearSchedule`` as ``agents.training.config`` (now :mod:`agents.configs.train_config`).
:data:`MOVED` answers those paths with the modules as they stand.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

#: Old module path -> where that module now lives.
MOVED = {
    "agents.training.lookup_scorer": "agents.training.networks.lookup_scorer",
    "agents.training.move_scorer": "agents.training.networks.move_scorer",
    "agents.training.config": "agents.configs.train_config",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old path of :data:`MOVED` as the module it moved to (torch is loaded only then)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(name, self) if name in MOVED else None

    def __init__(self) -> None:
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(MOVED[spec.name])
        self._specs[module.__name__] = module.__spec__  # importlib puts the old path's spec over it next
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the module was imported under its own path): give it back its own spec."""
        module.__spec__ = self._specs.pop(module.__name__, module.__spec__)


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModules())
