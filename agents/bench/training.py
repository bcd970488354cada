"""Training throughput: MaskablePPO frames per second, and the environment's share of the time.

The training rows of ``forty-thieves bench`` (:mod:`agents.bench.command`):

* **MaskablePPO, native VecEnv / DummyVecEnv / trivial env**: one small fixed network and
  settings on three ``VecEnv``: the native :class:`~forty_thieves_env.envs.sb3.FortyThievesSB3VecEnv`,
  SB3's ``DummyVecEnv`` of ``gym.make`` envs, and a trivial ``VecEnv`` with the same spaces
  that does no work. A wrapper times every call into the environment (steps, resets,
  masks); ``env share`` is that time over the wall time of ``learn``.
* **config, native VecEnv / trivial env**: the model and the training ``VecEnv`` exactly as
  ``forty-thieves train CONFIG`` builds them (policy, network, ``num_envs``, ``n_steps``,
  ``batch_size``, ``n_epochs``, torch threads; no evaluations or checkpoints), and the same
  model on a trivial env: end-to-end training speed, and what the policy alone costs.
* **MaskablePPO / TorchPPO, paired**: the two trainers on the config's network, games and
  settings, taking turns in one process (:func:`trainer_rows`): their ratio is the trainer's
  own gain, what the machine's load does falls on both.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from agents.bench.envs import Row, timed
from agents.configs.config_file import load_env_config
from agents.training.trainers.maskable import MaskablePPOTrainer

#: The config the ``config`` rows train with unless told otherwise.
DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "ppo.yaml"


def _timer_wrapper(venv: Any) -> Any:
    """A ``VecEnvWrapper`` adding up the seconds spent in every call into ``venv``."""
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class TimedVecEnv(VecEnvWrapper):
        def __init__(self, venv: Any) -> None:
            super().__init__(venv)
            self.seconds = 0.0

        def reset(self) -> Any:
            t = time.perf_counter()
            out = self.venv.reset()
            self.seconds += time.perf_counter() - t
            return out

        def step_async(self, actions: np.ndarray) -> None:
            t = time.perf_counter()
            self.venv.step_async(actions)
            self.seconds += time.perf_counter() - t

        def step_wait(self) -> Any:
            t = time.perf_counter()
            out = self.venv.step_wait()
            self.seconds += time.perf_counter() - t
            return out

        def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> Any:
            t = time.perf_counter()
            out = self.venv.env_method(method_name, *args, indices=indices, **kwargs)
            self.seconds += time.perf_counter() - t
            return out

    return TimedVecEnv(venv)


def _trivial_vec_env(template: Any) -> Any:
    """A ``VecEnv`` with ``template``'s spaces that does no work at all: every step returns the
    position ``template.reset()`` gave, and every action is legal."""
    from collections import OrderedDict

    from stable_baselines3.common.vec_env import VecEnv

    first = template.reset()

    class TrivialVecEnv(VecEnv):
        render_mode = None

        def __init__(self) -> None:
            super().__init__(template.num_envs, template.observation_space, template.action_space)
            n = self.num_envs
            # A real position, the same every step: all-zero observations would drive the
            # network's gradients to denormal floats, which the CPU computes many times slower
            # (the MLP's trivial row ran 4x slower than its real one).
            self._obs = OrderedDict((k, np.asarray(v).copy()) for k, v in first.items())
            self._masks = np.ones((n, template.action_space.n), dtype=np.bool_)
            self._t = 0

        def reset(self) -> Any:
            return OrderedDict((k, v.copy()) for k, v in self._obs.items())

        def step_async(self, actions: np.ndarray) -> None:
            self._t += 1

        def step_wait(self) -> Any:
            done = self._t % 100 == 0
            dones = np.full(self.num_envs, done)
            infos = [
                {"terminal_observation": {k: v[i] for k, v in self._obs.items()}} if done else {}
                for i in range(self.num_envs)
            ]
            return self.reset(), np.zeros(self.num_envs, np.float32), dones, infos

        def action_masks(self) -> np.ndarray:
            return self._masks.copy()

        def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> Any:
            return self._masks.copy()

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            return [getattr(self, attr_name)] * self.num_envs

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            setattr(self, attr_name, value)

        def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
            return [False] * self.num_envs

        def close(self) -> None:
            pass

    return TrivialVecEnv()


def _time_learn(name: str, model: Any, timer: Any, timesteps: int, threads: str) -> Row:
    """Time ``model.learn(timesteps)`` after one untimed rollout and update (torch and numba
    warm-up); ``timer`` is the model's env, wrapped by :func:`_timer_wrapper`."""
    model.learn(model.n_steps * timer.num_envs)
    timer.seconds = 0.0

    def loop(_deadline: float) -> int:
        model.learn(timesteps, reset_num_timesteps=False)
        return timesteps

    _, wall, cpu = timed(loop, 0.0)
    share = timer.seconds / wall if wall > 0 else 0.0
    return Row(name, timer.num_envs, threads, timesteps, wall, cpu, f"env share {100 * share:.1f} %")


def bench_ppo(name: str, venv: Any, timesteps: int, ppo_kwargs: dict[str, Any], seed: int = 0) -> Row:
    """MaskablePPO ``learn`` with SB3's default network on ``venv``: frames per second and the env's share."""
    from sb3_contrib import MaskablePPO

    timer = _timer_wrapper(venv)
    model = MaskablePPO("MultiInputPolicy", timer, seed=seed, verbose=0, device="cpu", **ppo_kwargs)
    row = _time_learn(name, model, timer, timesteps, "1+torch")
    venv.close()
    return row


def fixed_rows(env_id: str, num_envs: int, timesteps: int, n_steps: int, seed: int = 0) -> Iterator[Row]:
    """The fixed-network rows: SB3's default network on the native VecEnv, a DummyVecEnv and a trivial env."""
    import gymnasium as gym
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv

    from forty_thieves_env.envs.sb3 import make_sb3_vec_env

    torch.set_num_threads(1)  # SB3's advice for small networks on CPU (more threads only contend)
    kwargs = {"n_steps": n_steps, "batch_size": min(256, n_steps * num_envs), "n_epochs": 4}
    native = make_sb3_vec_env(env_id, num_envs=num_envs, seed=seed)
    yield bench_ppo("MaskablePPO, native VecEnv", native, timesteps, kwargs, seed)
    dummy = DummyVecEnv([lambda: gym.make(env_id) for _ in range(num_envs)])
    dummy.seed(seed)
    yield bench_ppo("MaskablePPO, DummyVecEnv", dummy, timesteps, kwargs, seed)
    trivial = _trivial_vec_env(make_sb3_vec_env(env_id, num_envs=num_envs))
    yield bench_ppo("MaskablePPO, trivial env", trivial, timesteps, kwargs, seed)


def config_rows(env_id: str, timesteps: int, config_path: str | Path | None = None, seed: int = 0) -> Iterator[Row]:
    """The ``config`` rows: ``learn`` as ``forty-thieves train`` runs it, on its env and on a trivial one
    (the trivial env mimics ``Dict`` observations: a ``flat`` config gets its training row only)."""
    from gymnasium import spaces

    env, config = load_env_config(config_path or DEFAULT_CONFIG, env_id)
    trainer = MaskablePPOTrainer(env, config)
    trainer.set_threads()
    venv = trainer.train_env(seed)
    envs = [("config, training VecEnv", venv)]
    if isinstance(venv.observation_space, spaces.Dict):
        envs.append(("config, trivial env", _trivial_vec_env(venv)))
    for name, games in envs:
        timer = _timer_wrapper(games)
        yield _time_learn(name, trainer.fresh_model("cpu", timer), timer, timesteps, "1+torch")
    venv.close()


def trainer_rows(
    env_id: str, timesteps: int, config_path: str | Path | None = None, seed: int = 0, rounds: int = 3
) -> Iterator[Row]:
    """MaskablePPO and TorchPPO on the config's network, games and settings, timed side by side.

    Both train from the same fresh weights (no evaluations or checkpoints), MaskablePPO on the
    native SB3 VecEnv as ``forty-thieves train`` builds it, TorchPPO on its own batch of games.
    After one untimed rollout and update each (warm-up), they take turns, ``rounds`` times
    ``timesteps`` steps each (at least one rollout), so that a machine's drift in speed falls on
    both alike; each row is the sum of its turns. Rows: ``MaskablePPO, paired`` and
    ``TorchPPO, paired``; the note says TorchPPO's share of its time spent collecting.
    """
    import torch

    from agents.training.torch_ppo import TorchPPO
    from agents.training.trainers.policy import training_device
    from agents.training.trainers.torch_ppo import TorchPPOTrainer, settings_of

    env, config = load_env_config(config_path or DEFAULT_CONFIG, env_id, ["imitation=null"])
    maskable = MaskablePPOTrainer(env, config)
    maskable.set_threads()
    torch.distributions.Distribution.set_default_validate_args(False)
    rollout = config.n_steps * config.num_envs
    per_turn = max(1, -(-timesteps // rollout)) * rollout
    # MaskablePPO, as forty-thieves train builds it.
    venv = maskable.train_env(seed)
    sb3 = maskable.fresh_model(config.device, venv)
    sb3.learn(rollout)
    # TorchPPO from the same weights.
    device = training_device(config.device)
    policy = TorchPPOTrainer(env, config).fresh_policy(device)
    policy.load_state_dict(sb3.policy.state_dict())
    games = env.torch_games(config.num_envs, device=device, seed=seed, num_threads=1)
    games.reset()
    ppo = TorchPPO(policy, games, settings_of(config), seed=seed)
    ppo.collect()
    ppo.update(1.0)
    wall = {"MaskablePPO": 0.0, "TorchPPO": 0.0}
    cpu = dict(wall)
    collect = 0.0
    for _ in range(rounds):
        t0, c0 = time.perf_counter(), time.process_time()
        sb3.learn(per_turn, reset_num_timesteps=False)
        wall["MaskablePPO"] += time.perf_counter() - t0
        cpu["MaskablePPO"] += time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(per_turn // rollout):
            t1 = time.perf_counter()
            ppo.collect()
            collect += time.perf_counter() - t1
            ppo.update(1.0)
        if device == "cuda":
            torch.cuda.synchronize()
        wall["TorchPPO"] += time.perf_counter() - t0
        cpu["TorchPPO"] += time.process_time() - c0
    venv.close()
    threads = f"1+{config.torch_threads}"
    steps = rounds * per_turn
    yield Row("MaskablePPO, paired", config.num_envs, threads, steps, wall["MaskablePPO"], cpu["MaskablePPO"], "cpu")
    share = 100 * collect / max(wall["TorchPPO"], 1e-9)
    note = f"{device}, collect {share:.0f} %"
    yield Row("TorchPPO, paired", config.num_envs, threads, steps, wall["TorchPPO"], cpu["TorchPPO"], note)
