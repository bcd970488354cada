"""The speed benchmark behind ``forty-thieves bench`` (and ``benchmarks/bench_all.py``).

One run measures, for one variant:

* **gym.make**: one ``gym.make`` environment (all its wrappers), a random legal action
  chosen in Python from ``info["action_mask"]`` every step, observation and mask every step.
* **SyncVectorEnv**: ``gym.make_vec(..., vectorization_mode="sync")`` of N single envs.
* **native vector, 1 thread / all cores**: ``gym.make_vec(..., vectorization_mode=
  "vector_entry_point")`` (:class:`~forty_thieves_env.envs.vector.FortyThievesVectorEnv`):
  observations, infos, masks and autoreset every step, ``num_threads=1`` and numba's
  default (every core).

The vector rows choose a random legal action per game with the compiled sampler of
:mod:`forty_thieves_env.envs.batch`, inside the timed loop. Episodes end as in training (won,
stuck, or the ids' 1000-step limit) and autoreset.

* **MaskablePPO** training frames per second, the same network and settings on three
  ``VecEnv``: the native :class:`~forty_thieves_env.envs.sb3.FortyThievesVecEnv`, SB3's
  ``DummyVecEnv`` of ``gym.make`` envs (masks through one ``action_masks()`` call per env),
  and a trivial ``VecEnv`` with the same spaces that does no work. A wrapper times every
  call into the environment (steps, resets, masks); ``env share`` is that time over the
  wall time of ``learn``.

``steps/s`` is wall-clock; ``per CPU-s`` divides by the CPU time the process used (every
thread), which a busy machine disturbs less.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

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


def _timed(loop: Callable[[float], int], seconds: float) -> tuple[int, float, float]:
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
    steps, wall, cpu = _timed(loop, seconds)
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
    steps, wall, cpu = _timed(loop, seconds)
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
    steps, wall, cpu = _timed(loop, seconds)
    threads = str(num_threads) if num_threads is not None else f"all ({numba.get_num_threads()})"
    envs.close()
    return Row("native vector env", num_envs, threads, steps, wall, cpu)


# ---------------------------------------------------------------------------- training


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
    """A ``VecEnv`` with ``template``'s spaces and masks that does no work at all."""
    from collections import OrderedDict

    from stable_baselines3.common.vec_env import VecEnv

    class TrivialVecEnv(VecEnv):
        render_mode = None

        def __init__(self) -> None:
            super().__init__(template.num_envs, template.observation_space, template.action_space)
            n = self.num_envs
            self._obs = OrderedDict((k, np.zeros((n, *s.shape), s.dtype)) for k, s in self.observation_space.items())
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


def bench_ppo(name: str, venv: Any, timesteps: int, ppo_kwargs: dict[str, Any], seed: int = 0) -> Row:
    """MaskablePPO ``learn`` on ``venv``: frames per second and the env's share of the time."""
    from sb3_contrib import MaskablePPO

    timed = _timer_wrapper(venv)
    model = MaskablePPO("MultiInputPolicy", timed, seed=seed, verbose=0, device="cpu", **ppo_kwargs)
    warm = ppo_kwargs["n_steps"] * venv.num_envs
    model.learn(warm)  # torch and numba warm-up, not timed
    timed.seconds = 0.0

    def loop(_deadline: float) -> int:
        model.learn(timesteps, reset_num_timesteps=False)
        return timesteps

    _, wall, cpu = _timed(loop, 0.0)
    share = timed.seconds / wall if wall > 0 else 0.0
    venv.close()
    return Row(name, venv.num_envs, "1+torch", timesteps, wall, cpu, f"env share {100 * share:.1f} %")


# ------------------------------------------------------------------------------- driver


def run_bench(
    env_id: str = "FortyThieves-v0",
    *,
    seconds: float = 4.0,
    num_envs: int = 4096,
    sync_envs: int = 16,
    ppo_envs: int = 16,
    ppo_timesteps: int = 16384,
    ppo_n_steps: int = 128,
    ppo: bool = True,
    seed: int = 0,
    echo: Callable[[str], None] | None = None,
) -> list[Row]:
    """Every measurement of the module docstring; ``echo`` gets each row as it is done."""
    import gymnasium as gym

    import forty_thieves_env  # noqa: F401 (registers the ids)

    rows: list[Row] = []

    def add(row: Row) -> None:
        rows.append(row)
        if echo is not None:
            echo(format_row(row))

    add(bench_single(env_id, seconds, seed))
    add(bench_sync(env_id, sync_envs, seconds, seed))
    add(bench_native(env_id, num_envs, seconds, 1, seed))
    add(bench_native(env_id, num_envs, seconds, None, seed))
    if ppo:
        import torch
        from stable_baselines3.common.vec_env import DummyVecEnv

        from forty_thieves_env.envs.sb3 import make_sb3_vec_env

        torch.set_num_threads(1)  # SB3's advice for small networks on CPU (more threads only contend)
        kwargs = {"n_steps": ppo_n_steps, "batch_size": min(256, ppo_n_steps * ppo_envs), "n_epochs": 4}
        native = make_sb3_vec_env(env_id, n_envs=ppo_envs, seed=seed)
        add(bench_ppo("MaskablePPO, native VecEnv", native, ppo_timesteps, kwargs, seed))
        dummy = DummyVecEnv([lambda: gym.make(env_id) for _ in range(ppo_envs)])
        dummy.seed(seed)
        add(bench_ppo("MaskablePPO, DummyVecEnv", dummy, ppo_timesteps, kwargs, seed))
        trivial = _trivial_vec_env(make_sb3_vec_env(env_id, n_envs=ppo_envs))
        add(bench_ppo("MaskablePPO, trivial env", trivial, ppo_timesteps, kwargs, seed))
    return rows


HEADER = (
    f"| {'measurement':<28} | {'envs':>5} | {'threads':<7} | {'steps':>9} | {'steps/s':>10} | {'per CPU-s':>10} | note"
)


def format_row(row: Row) -> str:
    return (
        f"| {row.name:<28} | {row.envs:>5} | {row.threads:<7} | {row.steps:>9,} | {row.rate:>10,.0f} |"
        f" {row.cpu_rate:>10,.0f} | {row.note}"
    )


def summary(rows: Sequence[Row]) -> list[str]:
    """Ratios between rows of one run, and the targets."""
    single = next(r for r in rows if r.name.startswith("gym.make"))
    native = [r for r in rows if r.name == "native vector env"]
    lines = []
    best = max(native, key=lambda r: r.rate) if native else None
    if best is not None:
        lines.append(f"native vector env / one gym.make env: {best.rate / single.rate:,.0f}x")
        sync = next((r for r in rows if r.name == "SyncVectorEnv"), None)
        if sync is not None:
            lines.append(f"native vector env / SyncVectorEnv:     {best.rate / sync.rate:,.0f}x")
        lines.append(
            f"target native >= 2,000,000 steps/s: {best.rate:,.0f} ({'met' if best.rate >= 2e6 else 'NOT met'})"
        )
    lines.append(
        f"target one env >= 50,000 steps/s:    {single.rate:,.0f} ({'met' if single.rate >= 5e4 else 'NOT met'})"
    )
    ppo = {r.name: r for r in rows if r.name.startswith("MaskablePPO")}
    nat, triv = ppo.get("MaskablePPO, native VecEnv"), ppo.get("MaskablePPO, trivial env")
    dummy = ppo.get("MaskablePPO, DummyVecEnv")
    if nat and triv:
        share = float(nat.note.split()[2]) / 100
        lines.append(
            f"MaskablePPO fps: native {nat.rate:,.0f}, trivial env {triv.rate:,.0f} (native/trivial"
            f" {nat.rate / triv.rate:.2f})" + (f", DummyVecEnv {dummy.rate:,.0f}" if dummy else "")
        )
        verdict = "met" if share <= 0.25 else "NOT met"
        lines.append(f"target env share of MaskablePPO time <= 25 %: {100 * share:.1f} % ({verdict})")
    return lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves bench`` arguments (read by :func:`run_cli`)."""
    parser.add_argument("--env", default="FortyThieves-v0", help="env id (default: FortyThieves-v0)")
    parser.add_argument("--seconds", type=float, default=4.0, help="timed seconds per env row (default: 4)")
    parser.add_argument("--num-envs", type=int, default=4096, help="games in the native vector env (default: 4096)")
    parser.add_argument("--sync-envs", type=int, default=16, help="envs in the SyncVectorEnv (default: 16)")
    parser.add_argument("--ppo-envs", type=int, default=16, help="envs for MaskablePPO (default: 16)")
    parser.add_argument(
        "--ppo-timesteps", type=int, default=16384, help="timed MaskablePPO steps per row (default: 16384)"
    )
    parser.add_argument("--ppo-n-steps", type=int, default=128, help="MaskablePPO n_steps (default: 128)")
    parser.add_argument("--no-ppo", action="store_true", help="skip the MaskablePPO rows")
    parser.add_argument("--seed", type=int, default=0, help="seed of deals and actions (default: 0)")


def run_cli(args: argparse.Namespace) -> int:
    """``forty-thieves bench``: print the table (rows as they finish), then ratios and targets."""
    # numba's parallel kernel runs on OpenMP threads. Left to its default, a worker spins for
    # a while after each step before it sleeps, so the next step finds it awake; with
    # OMP_WAIT_POLICY=PASSIVE it sleeps at once, and on this VM waking a sleeping vCPU costs
    # a good part of a step (1.35-1.63M steps/s here against 1.52-1.91M by default,
    # interleaved runs). Spinning loses when other jobs want the cores. The bench takes what the
    # user has set (read by OpenMP when it loads, i.e. before the first parallel step).
    start = time.perf_counter()
    policy = os.environ.get("OMP_WAIT_POLICY") or "unset (OpenMP's default: spin, then sleep)"
    print(
        f"forty-thieves bench: {args.env}; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start;"
        f" OMP_WAIT_POLICY={policy}; MaskablePPO with 1 torch thread"
    )
    print(HEADER)
    print("|" + "|".join("-" * n for n in (30, 7, 9, 11, 12, 12)) + "|------")
    rows = run_bench(
        args.env,
        seconds=args.seconds,
        num_envs=args.num_envs,
        sync_envs=args.sync_envs,
        ppo_envs=args.ppo_envs,
        ppo_timesteps=args.ppo_timesteps,
        ppo_n_steps=args.ppo_n_steps,
        ppo=not args.no_ppo,
        seed=args.seed,
        echo=lambda line: print(line, flush=True),
    )
    print()
    for line in summary(rows):
        print(line)
    print(f"load average {os.getloadavg()[0]:.1f} at the end; {time.perf_counter() - start:.0f} s in all")
    return 0
