"""``forty-thieves bench``: env steps/s (on the GPU too, where there is one) and training steps/s in one table.

The env rows are :mod:`agents.bench.envs`'s, the training rows
:mod:`agents.bench.training`'s; ``benchmarks/bench_all.py`` runs the same command.
``steps/s`` is wall-clock; ``per CPU-s`` divides by the CPU time the process used (every
thread), which a busy machine disturbs less.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence

from agents.bench.envs import (
    HEADER,
    Row,
    bench_device,
    bench_native,
    bench_single,
    bench_sync,
    format_row,
    gpu_available,
)


def run_bench(
    env_id: str = "FortyThieves-v0",
    *,
    seconds: float = 4.0,
    num_envs: int = 4096,
    device_envs: int = 65_536,
    sync_envs: int = 16,
    ppo_envs: int = 16,
    ppo_timesteps: int = 16384,
    ppo_n_steps: int = 128,
    config: str | None = None,
    config_timesteps: int = 16384,
    ppo: bool = True,
    trainers: bool = True,
    trainer_rounds: int = 3,
    seed: int = 0,
    echo: Callable[[str], None] | None = None,
) -> list[Row]:
    """The env rows (:mod:`agents.bench.envs`), then with ``ppo`` the training rows
    (:mod:`agents.bench.training`; with ``trainers`` MaskablePPO and TorchPPO paired on the
    config, ``trainer_rounds`` turns each); ``echo`` gets each row as it is done."""
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
    if gpu_available():
        add(bench_device(env_id, device_envs, seconds, seed))
    if ppo:
        from agents.bench.training import config_rows, fixed_rows, trainer_rows

        for row in fixed_rows(env_id, ppo_envs, ppo_timesteps, ppo_n_steps, seed):
            add(row)
        for row in config_rows(env_id, config_timesteps, config, seed):
            add(row)
        if trainers:
            for row in trainer_rows(env_id, config_timesteps, config, seed, rounds=trainer_rounds):
                add(row)
    return rows


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
    ppo = {r.name: r for r in rows if r.name.startswith(("MaskablePPO", "config"))}
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
    cfg, cfg_trivial = ppo.get("config, training VecEnv"), ppo.get("config, trivial env")
    if cfg and cfg_trivial:
        lines.append(
            f"config training fps: {cfg.rate:,.0f}, on a trivial env {cfg_trivial.rate:,.0f}"
            f" (training/trivial {cfg.rate / cfg_trivial.rate:.2f})"
        )
        verdict = "met" if cfg.rate >= 30_000 else "NOT met"
        lines.append(f"target config training >= 30,000 steps/s: {cfg.rate:,.0f} ({verdict})")
    device = next((r for r in rows if r.name == "CudaGames (GPU)"), None)
    if device is not None:
        lines.append(
            f"GPU batch engine: {device.rate:,.0f} steps/s with {device.envs:,} games"
            " (targets: >= 200,000,000 on classic, >= 30,000,000 on every preset)"
        )
    sb3, ours = ppo.get("MaskablePPO, paired"), next((r for r in rows if r.name == "TorchPPO, paired"), None)
    if sb3 and ours:
        ratio = ours.rate / sb3.rate
        lines.append(
            f"TorchPPO / MaskablePPO on the config's network and games: {ratio:.2f}x"
            f" ({ours.rate:,.0f} vs {sb3.rate:,.0f} steps/s, taking turns; target >= 2x on 2 cores,"
            f" {'met' if ratio >= 2 else 'NOT met'})"
        )
    return lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves bench`` arguments (read by :func:`run_cli`)."""
    parser.add_argument("--env", default="FortyThieves-v0", help="env id (default: FortyThieves-v0)")
    parser.add_argument("--seconds", type=float, default=4.0, help="timed seconds per env row (default: 4)")
    parser.add_argument("--num-envs", type=int, default=4096, help="games in the native vector env (default: 4096)")
    parser.add_argument(
        "--device-envs", type=int, default=65_536, help="games on the GPU, where one is (default: 65536)"
    )
    parser.add_argument("--sync-envs", type=int, default=16, help="envs in the SyncVectorEnv (default: 16)")
    parser.add_argument("--ppo-envs", type=int, default=16, help="envs for MaskablePPO (default: 16)")
    parser.add_argument(
        "--ppo-timesteps", type=int, default=16384, help="timed MaskablePPO steps per row (default: 16384)"
    )
    parser.add_argument("--ppo-n-steps", type=int, default=128, help="MaskablePPO n_steps (default: 128)")
    parser.add_argument(
        "--config", default=None, help="training config of the 'config' rows (default: configs/ppo.yaml)"
    )
    parser.add_argument(
        "--config-timesteps", type=int, default=16384, help="timed steps per 'config' row (default: 16384)"
    )
    parser.add_argument("--no-ppo", action="store_true", help="skip the MaskablePPO, config and trainer rows")
    parser.add_argument("--no-trainers", action="store_true", help="skip the paired MaskablePPO/TorchPPO rows")
    parser.add_argument("--trainer-rounds", type=int, default=3, help="turns each paired trainer takes (default: 3)")
    parser.add_argument("--seed", type=int, default=0, help="seed of deals and actions (default: 0)")


def run_cli(args: argparse.Namespace) -> int:
    """``forty-thieves bench``: print the table (rows as they finish), then ratios and targets."""
    from agents.extras import require_extra

    if not args.no_ppo:  # the training rows need torch and SB3: say so before minutes of env rows
        require_extra("train", "bench", alternative="forty-thieves bench --no-ppo")
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
        f" OMP_WAIT_POLICY={policy}; MaskablePPO rows with 1 torch thread, config rows with the config's torch_threads"
    )
    print(HEADER)
    print("|" + "|".join("-" * n for n in (30, 7, 9, 11, 12, 12)) + "|------")
    rows = run_bench(
        args.env,
        seconds=args.seconds,
        num_envs=args.num_envs,
        device_envs=args.device_envs,
        sync_envs=args.sync_envs,
        ppo_envs=args.ppo_envs,
        ppo_timesteps=args.ppo_timesteps,
        ppo_n_steps=args.ppo_n_steps,
        config=args.config,
        config_timesteps=args.config_timesteps,
        ppo=not args.no_ppo,
        trainers=not args.no_trainers,
        trainer_rounds=args.trainer_rounds,
        seed=args.seed,
        echo=lambda line: print(line, flush=True),
    )
    print()
    for line in summary(rows):
        print(line)
    print(f"load average {os.getloadavg()[0]:.1f} at the end; {time.perf_counter() - start:.0f} s in all")
    return 0
