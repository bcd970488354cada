"""The environment rows of ``forty-thieves bench`` (:mod:`agents.bench.command`) and the table's row type.

One run measures, for one variant:

* **gym.make**: one ``gym.make`` environment (all its wrappers), a random legal action
  chosen in Python from ``info["action_mask"]`` every step, observation and mask every step.
* **SyncVectorEnv**: ``gym.make_vec(..., vectorization_mode="sync")`` of N single envs.
* **native vector, 1 thread / all cores**: ``gym.make_vec(..., vectorization_mode=
  "vector_entry_point")`` (:class:`~forty_thieves_env.envs.vector.FortyThievesVectorEnv`):
  observations, infos, masks and autoreset every step, ``num_threads=1`` and numba's
  default (every core).
* **CudaGames (GPU)**, where numba-cuda finds a GPU: the batch engine on the device, random
  legal actions written by a sampler kernel between steps (:func:`bench_device`).

The vector rows choose a random legal action per game with the compiled sampler of
:mod:`forty_thieves_env.envs.batch`, inside the timed loop. Episodes end as in training (won,
stuck, or the ids' 1000-step limit) and autoreset.

The training rows (MaskablePPO frames per second) are in :mod:`agents.bench.training`;
:mod:`agents.bench.command` runs both and prints the table.

``steps/s`` is wall-clock; ``per CPU-s`` divides by the CPU time the process used (every
thread), which a busy machine disturbs less.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass
class Row:
    """One line of the table."""

    name: str
    envs: int
    threads: str
    steps: int
    wall_s: float
    cpu_s: float
    note: str = ""

    @property
    def rate(self) -> float:
        return self.steps / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def cpu_rate(self) -> float:
        return self.steps / self.cpu_s if self.cpu_s > 0 else 0.0


def timed(loop: Callable[[float], int], seconds: float) -> tuple[int, float, float]:
    """Run ``loop(deadline)`` (it returns the steps it took); return steps, wall s, CPU s."""
    t0, c0 = time.perf_counter(), time.process_time()
    steps = loop(t0 + seconds)
    return steps, time.perf_counter() - t0, time.process_time() - c0


# ------------------------------------------------------------------------ env throughput


def bench_single(env_id: str, seconds: float, seed: int = 0) -> Row:
    """One ``gym.make`` env, a random legal action from ``info["action_mask"]`` each step."""
    import gymnasium as gym

    env = gym.make(env_id)
    rng = np.random.default_rng(seed)
    state = {"info": env.reset(seed=seed)[1]}

    def loop(deadline: float) -> int:
        info, steps = state["info"], 0
        while True:
            u = rng.random(1000)
            for k in range(1000):
                legal = np.flatnonzero(info["action_mask"])
                _, _, terminated, truncated, info = env.step(legal[int(u[k] * len(legal))])
                if terminated or truncated:
                    info = env.reset()[1]
            steps += 1000
            if time.perf_counter() > deadline:
                state["info"] = info
                return steps

    loop(time.perf_counter() + min(0.3, seconds))  # warm-up: caches loaded, first episodes
    steps, wall, cpu = timed(loop, seconds)
    env.close()
    return Row("gym.make (one env)", 1, "1", steps, wall, cpu)


def bench_sync(env_id: str, num_envs: int, seconds: float, seed: int = 0) -> Row:
    """Gymnasium's ``SyncVectorEnv`` of ``num_envs`` single envs."""
    import gymnasium as gym

    from forty_thieves_env.envs.sampling import sample_legal

    envs = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync")
    rng = np.random.default_rng(seed)
    actions = np.zeros(num_envs, dtype=np.int64)
    state = {"infos": envs.reset(seed=seed)[1]}

    def loop(deadline: float) -> int:
        infos, steps = state["infos"], 0
        while time.perf_counter() < deadline:
            for _ in range(20):
                sample_legal(infos["action_mask"], rng.random(num_envs), actions)
                infos = envs.step(actions)[4]
            steps += 20 * num_envs
        state["infos"] = infos
        return steps

    loop(time.perf_counter() + min(0.3, seconds))
    steps, wall, cpu = timed(loop, seconds)
    envs.close()
    return Row("SyncVectorEnv", num_envs, "1", steps, wall, cpu)


def bench_native(env_id: str, num_envs: int, seconds: float, num_threads: int | None, seed: int = 0) -> Row:
    """The native vector env (``gym.make_vec``), random legal actions from its masks."""
    import gymnasium as gym
    import numba

    envs = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", num_threads=num_threads)
    rng = np.random.default_rng(seed)
    envs.reset(seed=seed)

    def loop(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            envs.step(envs.random_legal_actions(rng))
            steps += num_envs
        return steps

    loop(time.perf_counter() + min(0.3, seconds))
    steps, wall, cpu = timed(loop, seconds)
    threads = str(num_threads) if num_threads is not None else f"all ({numba.get_num_threads()})"
    envs.close()
    return Row("native vector env", num_envs, threads, steps, wall, cpu)


def gpu_available() -> bool:
    """Whether numba-cuda is installed and finds a GPU (the device rows run only then)."""
    import importlib.util

    if importlib.util.find_spec("numba_cuda") is None:
        return False
    from numba import cuda

    return bool(cuda.is_available())


def bench_device(env_id: str, num_envs: int, seconds: float, seed: int = 0) -> Row:
    """The batch engine on the GPU (:class:`~forty_thieves_env.envs.cuda_games.CudaGames`):
    observations, masks, rewards and autoreset every step, the actions from outside the step
    (written by the sampler kernel into a device array, as a policy's would be)."""
    from numba import cuda

    from forty_thieves_env.envs.cuda_games import CudaGames
    from forty_thieves_env.envs.registration import MAX_EPISODE_STEPS, id_kwargs

    kwargs = id_kwargs(env_id)
    variant = kwargs.pop("variant")
    games = CudaGames(num_envs, variant, autoreset="same_step", max_episode_steps=MAX_EPISODE_STEPS, **kwargs)
    games.reset(seed=seed)
    actions = cuda.device_array(num_envs, dtype=np.int64)
    state = {"t": 0}

    def loop(deadline: float) -> int:
        steps = 0
        while time.perf_counter() < deadline:
            for _ in range(50):
                games.sample_legal(seed + state["t"], actions)
                games.step(actions)
                state["t"] += 1
            games.synchronize()
            steps += 50 * num_envs
        return steps

    loop(time.perf_counter() + min(2.0, seconds))  # compiles (or loads) the kernels
    steps, wall, cpu = timed(loop, seconds)
    return Row("CudaGames (GPU)", num_envs, "gpu", steps, wall, cpu, "sampler kernel + step kernel")


HEADER = (
    f"| {'measurement':<28} | {'envs':>5} | {'threads':<7} | {'steps':>9} | {'steps/s':>10} | {'per CPU-s':>10} | note"
)


def format_row(row: Row) -> str:
    return (
        f"| {row.name:<28} | {row.envs:>5} | {row.threads:<7} | {row.steps:>9,} | {row.rate:>10,.0f} |"
        f" {row.cpu_rate:>10,.0f} | {row.note}"
    )
