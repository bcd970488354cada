"""``algo: RLlibPPO``: RLlib's PPO with action masks (``forty-thieves train configs/rllib_ppo.yaml``).

The config file has the layout of the other configs (sections keyed by env id, ``default``
merged under each, ``--set`` overrides), checked key by key by
:class:`~agents.configs.train_config.RLlibConfig`; the spine resolves its env with the flat
observation (:meth:`RLlibConfig.env_options`) and hands it here. The run:

* the env is :func:`agents.training.rllib_env.make_env` registered with
  ``ray.tune.register_env`` (the flat observation and the mask in RLlib's action-masking
  convention), built in each env runner from the run's env id and options;
* the network is RLlib's action-masking PPO module (``ActionMaskingTorchRLModule``, from RLlib's
  examples): its MLP reads ``observations`` and the illegal actions' logits get ``-inf`` from
  ``action_mask``, so it samples legal moves only;
* :class:`~agents.training.rllib_env.MaskedActionCount` logs, per iteration, the actions taken that
  the mask ruled out (``masked_actions_taken``, must stay 0) beside the actions checked;
* Ray: a local instance on ``num_cpus`` cores, or the cluster at ``ray_address``
  (:class:`agents.sweeps.ray_pool.RayPool` joins it, with its checks);
* the run folder (``runs/<env>_RLlibPPO_<time>`` or ``--name``) is the spine's, with its record
  (``config.yaml``, ``command.txt``, ``versions.json`` with Ray's version), and through the
  :class:`~agents.training.session.Session` the logs, the time limit, Ctrl-C, ``train_info.json``
  and, with ``eval_freq`` (in iterations), the periodic evaluation on the validation deals
  (``eval_state.json``, as every trainer writes it; the best in ``best_checkpoint/``); here
  also ``progress.jsonl`` (one line per iteration: env steps, episodes, mean return and length,
  masked actions, the learner's losses) and ``checkpoint/`` (``Algorithm.save_to_path`` every
  ``checkpoint_freq`` iterations and at the end; ``--resume`` continues from it).

It is an entry point and a smoke-tested recipe, not a tuned one: the MLP over the flat
observation is far weaker than the MaskablePPO recipe's lookup scorer (docs/training.md).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agents.configs.train_config import RLLIB_ALGO, RLlibConfig
from forty_thieves_env.envs.resolved import ResolvedEnv

from ..runs import ResumePoint
from .base import Trainer

CHECKPOINT = "checkpoint"
BEST_CHECKPOINT = "best_checkpoint"
PROGRESS = "progress.jsonl"


def build_algo_config(env: ResolvedEnv, config: RLlibConfig) -> Any:
    """The RLlib ``PPOConfig`` of a run (the env creator registered, the masking module chosen)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from ..rllib_env import MaskedActionCount, register

    name = register()
    return (
        PPOConfig()
        .environment(name, env_config={"env_id": env.env_id, **env.env_kwargs})
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


def save_dir(algo: Any, folder: Path) -> None:
    """``algo.save_to_path`` into ``folder``, whole or not at all: written beside it, then renamed
    over it (a kill leaves the previous checkpoint)."""
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    algo.save_to_path(str(tmp.resolve()))
    old = folder.with_name(folder.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        os.replace(folder, old)
    os.replace(tmp, folder)
    shutil.rmtree(old, ignore_errors=True)


class RLlibSaves:
    """The :class:`~agents.training.session.Saves` of an RLlib run: ``checkpoint/`` (the newest; the
    final model too) and ``best_checkpoint/``."""

    def __init__(self, run_dir: Path, algo: Any) -> None:
        self.run_dir, self.algo = run_dir, algo

    def checkpoint(self, steps: int) -> None:
        save_dir(self.algo, self.run_dir / CHECKPOINT)

    def final(self) -> None:
        pass  # the checkpoint just saved is the final one

    def best(self) -> None:
        save_dir(self.algo, self.run_dir / BEST_CHECKPOINT)


class ModulePolicy:
    """RLlib's trained module as a policy :func:`agents.evaluation.policy_eval.play_policy` can play:
    the flat observation rows scaled as :class:`~agents.training.rllib_env.ActionMaskObservation`
    scales them, every action unmasked here (the evaluation masks the logits itself)."""

    def __init__(self, algo: Any, env: ResolvedEnv) -> None:
        import torch

        from forty_thieves_env.envs.observation import observation_space

        self.module = algo.get_module()
        self.observation_space = observation_space(env.variant, "flat")
        self.action_space = self.module.action_space
        self.device = torch.device("cpu")
        high = torch.as_tensor(self.observation_space.high, dtype=torch.float32)
        self.scale = 1.0 / high.clamp(min=1.0)

    def modules(self) -> list[Any]:
        return list(self.module.modules())

    def set_training_mode(self, mode: bool) -> None:
        self.module.train(mode)

    def batch_logits(self, obs: Any, rows: Any) -> Any:
        """``(len(rows), n)`` logits of the games ``rows`` (flat observation rows)."""
        import torch

        x = obs.index_select(0, rows).float() * self.scale
        batch = {"obs": {"observations": x, "action_mask": torch.ones(x.shape[0], int(self.action_space.n))}}
        with torch.no_grad():
            return self.module.forward_inference(batch)["action_dist_inputs"]


class RLlibTrainer(Trainer):
    """RLlib's PPO (module docstring)."""

    algo = RLLIB_ALGO
    unit = "iteration"
    plays_final_evaluation = False  # its model is an RLlib checkpoint, not a ppo agent's zip
    config: RLlibConfig

    @property
    def total(self) -> int:
        return int(self.config.iterations)

    def check(self) -> None:
        """Refuse a Ray address that is malformed or does not answer, before the run folder is made
        (what :class:`~agents.sweeps.ray_pool.RayPool` checks when it joins, without joining)."""
        from agents.sweeps.ray_pool import LOCAL, check_address, import_ray

        import_ray()
        check_address(self.config.ray_address or LOCAL)

    def versions(self) -> Mapping[str, str | None]:
        from importlib import metadata

        return {"ray": metadata.version("ray")}

    def resume_point(self, run_dir: Path, log: Callable[[str], None] = print, mend: bool = True) -> ResumePoint:
        folder = run_dir / CHECKPOINT
        if not folder.is_dir():
            return ResumePoint(run_dir, "start")
        return ResumePoint(run_dir, "checkpoint", folder, done=_iterations(run_dir))

    def train(self, run_dir: Path, start: ResumePoint) -> None:
        from agents.sweeps.ray_pool import LOCAL, RayPool

        config, env = self.config, self.env
        with RayPool(config.ray_address or LOCAL, config.num_cpus) as pool:
            algo = build_algo_config(env, config).build_algo()
            done = 0
            if start.stage == "checkpoint":
                assert start.path is not None
                algo.restore_from_path(str(start.path.resolve()))
                done = start.steps
                self.log(f"resuming {run_dir} from {CHECKPOINT}/ ({done} of {self.total} iterations)")
            else:
                self.log(f"training {self.algo} on {env.env_id} for {self.total} iterations on Ray ({pool.cpus} CPUs)")
            session = self.session(
                run_dir,
                done,
                RLlibSaves(run_dir, algo),
                self._validation(algo),
                config.eval_freq,
                config.checkpoint_freq,
            )
            i = done
            try:
                with session.training(lambda: i), (run_dir / PROGRESS).open("a", encoding="utf-8") as progress:
                    go_on = i < self.total
                    while go_on:
                        record = iteration_record(algo.train())
                        i += 1
                        record["iteration"] = i
                        progress.write(json.dumps(record) + "\n")
                        progress.flush()
                        ret = record["episode_return_mean"]
                        shown = "-" if ret is None else f"{ret:.3f}"
                        steps, masked = record["env_steps"], record["masked_actions_taken"]
                        self.log(f"iteration {i}: {steps:,} steps, mean return {shown}, masked actions taken {masked}")
                        stats = {k: v for k in ("policy_loss", "vf_loss", "entropy") if (v := record[k]) is not None}
                        go_on = session.rollout_done(i, None, stats)
            finally:
                algo.stop()

    def _validation(self, algo: Any) -> Callable[[], Mapping[str, float]] | None:
        """The periodic evaluation of RLlib's module on the validation deals, greedy (None when
        ``eval_freq`` is 0)."""
        if self.config.eval_freq <= 0:
            return None
        from .policy import validation

        config = self.config
        return validation(ModulePolicy(algo, self.env), self.env, config.n_eval_episodes, True, config.seed)


def _iterations(run_dir: Path) -> int:
    """The iterations a run folder's ``progress.jsonl`` records (its last whole line's)."""
    path = run_dir / PROGRESS
    if not path.is_file():
        return 0
    last = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            last = int(json.loads(line)["iteration"])
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by a kill
    return last
