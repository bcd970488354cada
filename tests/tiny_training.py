"""The ``--set`` overrides that make ``configs/ppo.yaml`` train in seconds on one core.

Shared by the training tests (``train``, ``TorchPPO``, the faults), which each build their own
list from these pieces, in the order they always applied them: an override applies over the ones
before it (``imitation=null`` then ``imitation.games=2`` leaves only the listed imitation keys).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The shipped recipe the tests shrink.
PPO_YAML = Path(__file__).resolve().parent.parent / "configs" / "ppo.yaml"
#: What every finished run folder holds (a warm start adds ``imitation_model.zip``).
RUN_FILES = (
    "config.yaml",
    "command.txt",
    "versions.json",
    "best_model.zip",
    "final_model.zip",
    "eval_state.json",
    "evaluations.npz",
    "final_eval.json",
    "final_eval/results.csv",
    "train_info.json",
)
#: 2 games x 32 steps per rollout, one minibatch, one epoch (MaskablePPO).
ROLLOUT = ["num_envs=2", "n_steps=32", "batch_size=32", "n_epochs=1"]
#: The network's size (``policy_kwargs.features_extractor_kwargs``) without a stock critic.
SMALL_NET = "{hidden: 8, rank: 2, value_dim: 8}"
#: The imitation warm start on two deals, one epoch, no DAgger round, one worker.
IMITATION = ["imitation.games=2", "imitation.epochs=1", "imitation.dagger_rounds=0", "imitation.workers=1"]
#: The device trainer with 4 games x 16 steps per rollout.
TORCH = ["algo=TorchPPO", "num_envs=4", "n_steps=16"]


def network(sizes: str = SMALL_NET) -> str:
    """The override that sets the network's sizes (a YAML mapping)."""
    return f"policy_kwargs.features_extractor_kwargs={sizes}"


def schedule(every: int, eval_episodes: int, final_episodes: int) -> list[str]:
    """Evaluate and save a checkpoint every ``every`` steps (evaluations of ``eval_episodes``
    games), ``final_episodes`` games at the end; one torch thread."""
    return [
        f"eval_freq={every}",
        f"n_eval_episodes={eval_episodes}",
        f"save_freq={every}",
        f"final_eval_episodes={final_episodes}",
        "torch_threads=1",
    ]


def train_quietly(
    overrides: list[str], runs_dir: Path, name: str, total_timesteps: int, seed: int, **options: Any
) -> Path:
    """Train ``configs/ppo.yaml`` with ``overrides`` on one torch thread, with no progress bar and no
    log; ``options`` go to :func:`agents.training.train.train` as they are. Returns the run folder."""
    import torch

    from agents.training.train import train

    torch.set_num_threads(1)
    return train(
        PPO_YAML,
        overrides=overrides,
        total_timesteps=total_timesteps,
        seed=seed,
        runs_dir=runs_dir,
        name=name,
        progress=False,
        log=lambda _: None,
        **options,
    )
