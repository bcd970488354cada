"""RLlib PPO with action masks: ``forty-thieves train configs/rllib_ppo.yaml``.

A config whose ``algo`` is ``RLlibPPO`` is trained here instead of by MaskablePPO
(:mod:`.train` hands it over). The file has the layout of the other configs (sections keyed by
env id, ``default`` merged under each, ``--set`` overrides), checked key by key by
:class:`RLlibConfig`. The run:

* the env is :func:`agents.training.rllib_env.make_env` registered with
  ``ray.tune.register_env`` (the flat observation and the mask in RLlib's action-masking
  convention), built in each env runner;
* the network is RLlib's action-masking PPO module (``ActionMaskingTorchRLModule``, from RLlib's
  examples): its MLP reads ``observations`` and the illegal actions' logits get ``-inf`` from
  ``action_mask``, so it samples legal moves only;
* :class:`MaskedActionCount` logs, per iteration, the actions taken that the mask ruled out
  (``masked_actions_taken``, must stay 0) beside the actions checked;
* Ray: a local instance on ``num_cpus`` cores, or the cluster at ``ray_address``
  (:class:`agents.sweeps.ray_pool.RayPool` joins it, with its checks);
* the run folder (``runs/<env>_RLlibPPO_<time>`` or ``--name``) gets ``config.yaml``,
  ``command.txt``, ``versions.json``, ``progress.jsonl`` (one line per iteration: env steps,
  episodes, mean return and length, masked actions, the learner's losses) and ``checkpoint/``
  (``Algorithm.save_to_path`` at the end and every ``checkpoint_freq`` iterations).

It is an entry point and a smoke-tested recipe, not a tuned one: the MLP over the flat
observation is far weaker than the MaskablePPO recipe's lookup scorer (docs/training.md).
"""

from __future__ import annotations

import json
import math
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agents.configs.config_file import dump_config, load_config
from agents.configs.train_config import RLLIB_ALGO as ALGO
from agents.configs.train_config import RLlibConfig


def load_rllib_config(
    path: str | Path, env_id: str | None = None, overrides: Sequence[str] | Mapping[str, Any] = ()
) -> tuple[str, RLlibConfig]:
    """Read ``path``, pick the env's section, merge ``default``, apply overrides, check every key.

    Raises:
        ConfigError: naming the file, the section and the key.
    """
    return load_config(path, env_id, overrides, RLlibConfig)


def build_algo_config(env_id: str, config: RLlibConfig) -> Any:
    """The RLlib ``PPOConfig`` of a run (the env creator registered, the masking module chosen)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from .rllib_env import MaskedActionCount, register

    name = register()
    return (
        PPOConfig()
        .environment(name, env_config={"env_id": env_id, **config.env_kwargs})
        .env_runners(
            num_env_runners=config.num_env_runners,
            num_envs_per_env_runner=config.num_envs_per_env_runner,
        )
        .training(
            train_batch_size_per_learner=config.train_batch_size,
            minibatch_size=config.batch_size,
            num_epochs=config.n_epochs,
            lr=config.learning_rate,
            gamma=config.gamma,
            lambda_=config.gae_lambda,
            clip_param=config.clip_range,
            entropy_coeff=config.ent_coef,
            vf_loss_coeff=config.vf_coef,
            grad_clip=config.max_grad_norm,
        )
        .rl_module(
            rl_module_spec=RLModuleSpec(
                module_class=ActionMaskingTorchRLModule,
                model_config={"fcnet_hiddens": config.fcnet_hiddens, "fcnet_activation": config.fcnet_activation},
            )
        )
        .callbacks(MaskedActionCount)
        .debugging(seed=config.seed)
    )


def iteration_record(result: Mapping[str, Any]) -> dict[str, Any]:
    """The line of ``progress.jsonl`` for one ``Algorithm.train()`` result."""
    runners = result.get("env_runners", {})
    learner = result.get("learners", {}).get("default_policy", {})

    def num(x: Any) -> float | None:
        try:
            x = float(x)
        except (TypeError, ValueError):
            return None
        return None if math.isnan(x) else x

    return {
        "iteration": int(result.get("training_iteration", 0)),
        "env_steps": int(result.get("num_env_steps_sampled_lifetime", 0) or 0),
        "episodes": num(runners.get("num_episodes_lifetime")),
        "episode_return_mean": num(runners.get("episode_return_mean")),
        "episode_len_mean": num(runners.get("episode_len_mean")),
        "masked_actions_taken": int(num(runners.get("masked_actions_taken")) or 0),
        "actions_checked": int(num(runners.get("actions_checked")) or 0),
        "total_loss": num(learner.get("total_loss")),
        "policy_loss": num(learner.get("policy_loss")),
        "vf_loss": num(learner.get("vf_loss")),
        "entropy": num(learner.get("entropy")),
        "seconds": num(result.get("time_total_s")),
    }


def train_rllib(
    env_id: str,
    config: RLlibConfig,
    config_path: str | Path,
    *,
    runs_dir: str | Path = "runs",
    name: str | None = None,
    argv: Sequence[str] | None = None,
    log: Callable[[str], None] = print,
) -> Path:
    """Train RLlib PPO as ``config`` (read from ``config_path`` by
    :func:`~agents.configs.config_file.load_config`) says; return the run folder (see the module docstring)."""
    from agents.sweeps.ray_pool import LOCAL, RayPool

    from .runs import library_versions, new_run_dir, record_command

    with RayPool(config.ray_address or LOCAL, config.num_cpus) as pool:
        run_dir = new_run_dir(Path(runs_dir), env_id, config, name)  # type: ignore[arg-type]
        (run_dir / "config.yaml").write_text(dump_config(env_id, config), encoding="utf-8")
        line = shlex.join(["forty-thieves", *argv]) if argv is not None else f"python: train_rllib({config_path!r})"
        record_command(run_dir, line)
        versions = library_versions()
        from importlib import metadata

        versions["ray"] = metadata.version("ray")
        (run_dir / "versions.json").write_text(json.dumps(versions, indent=1) + "\n", encoding="utf-8")
        log(f"training {ALGO} on {env_id} for {config.iterations} iterations on Ray ({pool.cpus} CPUs) -> {run_dir}")
        algo = build_algo_config(env_id, config).build_algo()
        t0 = time.monotonic()
        try:
            with (run_dir / "progress.jsonl").open("a", encoding="utf-8") as progress:
                for i in range(1, config.iterations + 1):
                    record = iteration_record(algo.train())
                    progress.write(json.dumps(record) + "\n")
                    progress.flush()
                    ret = record["episode_return_mean"]
                    shown = "-" if ret is None else f"{ret:.3f}"
                    steps, masked = record["env_steps"], record["masked_actions_taken"]
                    log(f"iteration {i}: {steps:,} steps, mean return {shown}, masked actions taken {masked}")
                    if config.checkpoint_freq and i % config.checkpoint_freq == 0:
                        algo.save_to_path(str((run_dir / "checkpoint").resolve()))
                    if config.max_minutes is not None and time.monotonic() - t0 > 60 * config.max_minutes:
                        log(f"time limit: stopping after {i} iterations")
                        break
            algo.save_to_path(str((run_dir / "checkpoint").resolve()))
        finally:
            algo.stop()
    return run_dir
