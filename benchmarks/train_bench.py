"""End-to-end training speed of TorchPPO on a device, for the MLP and the default network, beside MaskablePPO.

Each setup is ``configs/ppo.yaml``'s classic section with the setup's overrides (no imitation,
no evaluations, no checkpoints): TorchPPO is timed over ``--rollouts`` rollouts (collect and
update, ``torch.cuda.synchronize`` before the clock stops) after one untimed rollout that
compiles and warms everything up. MaskablePPO (``--sb3``) is timed the same way with its own
game count (``--sb3-envs``: SB3 steps its VecEnv from Python, one call a step, and slows down
long before TorchPPO's batch sizes), on the same device and network. Steps/s are env steps
(games x steps) per wall second.

Usage (the GPU machine; docs/device-training.md)::

    python3 -m benchmarks.train_bench --device cuda --out results/train_bench.json
    python3 -m benchmarks.train_bench --device cpu --games 1024 --steps 64 --batch 8192 --rollouts 3  # 2 cores
    # one trainer a process, e.g. for a whole-process timer that runs the two in turn:
    python3 -m benchmarks.train_bench --device cpu --setups default --games 1024 --steps 64 --batch 8192 \
        --rollouts 4 --trainers sb3 --sb3-envs 1024 --sb3-rollout 65536
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

if not hasattr(np, "row_stack"):  # the GPU machine's numba-cuda imports it; numpy 2.5 dropped it
    np.row_stack = np.vstack

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "ppo.yaml"

#: The networks timed: overrides on top of the classic section.
SETUPS = {
    "mlp": [
        "policy=MlpPolicy",
        "policy_kwargs.features_extractor=mlp",
        "policy_kwargs.net_arch=[256, 256]",
        "env_kwargs.observation=flat",
    ],
    "default": [],  # the lookup_scorer with its asymmetric critic, on the oracle observation
}


def common(args: argparse.Namespace, games: int, steps: int, batch: int) -> list[str]:
    return [
        "imitation=null",
        f"num_envs={games}",
        f"n_steps={steps}",
        f"batch_size={batch}",
        "n_epochs=1",
        "eval_freq=0",
        "save_freq=0",
        f"device={args.device}",
        f"torch_threads={args.threads}",
        "target_kl=null",  # every minibatch steps: the update's full cost is timed
    ]


def time_torch(setup: str, args: argparse.Namespace) -> dict[str, object]:
    """TorchPPO's steps/s for one setup."""
    import torch

    from agents.configs.config_file import load_env_config
    from agents.training.torch_ppo import TorchPPO
    from agents.training.trainers.torch_ppo import TorchPPOTrainer, settings_of

    env, config = load_env_config(
        CONFIG, "FortyThieves-v0", [*SETUPS[setup], *common(args, args.games, args.steps, args.batch)]
    )
    trainer = TorchPPOTrainer(env, config)
    trainer.set_threads()
    t0 = time.perf_counter()
    policy = trainer.fresh_policy(args.device)
    games = env.torch_games(config.num_envs, device=args.device, seed=0, num_threads=None)
    games.reset()
    ppo = TorchPPO(policy, games, settings_of(config), seed=0)
    ppo.collect()
    ppo.update(1.0)
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
    sync()
    warmup = time.perf_counter() - t0
    collect = update = 0.0
    for _ in range(args.rollouts):
        t1 = time.perf_counter()
        ppo.collect()
        sync()
        t2 = time.perf_counter()
        ppo.update(1.0)
        sync()
        collect += t2 - t1
        update += time.perf_counter() - t2
    steps = args.rollouts * ppo.rollout.size
    return {
        "trainer": "TorchPPO",
        "setup": setup,
        "device": args.device,
        "games": config.num_envs,
        "n_steps": config.n_steps,
        "batch_size": config.batch_size,
        "steps": steps,
        "seconds": round(collect + update, 3),
        "steps_per_s": round(steps / (collect + update)),
        "collect_steps_per_s": round(steps / collect),
        "update_samples_per_s": round(steps / update),
        "warmup_s": round(warmup, 1),
        "memory_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2) if args.device.startswith("cuda") else None,
    }


def time_sb3(setup: str, args: argparse.Namespace) -> dict[str, object]:
    """MaskablePPO's steps/s for one setup (its own game count)."""
    from agents.configs.config_file import load_env_config
    from agents.training.trainers.maskable import MaskablePPOTrainer

    games = args.sb3_envs
    steps = max(1, args.sb3_rollout // games)
    overrides = [*SETUPS[setup], *common(args, games, steps, min(args.batch, games * steps))]
    env, config = load_env_config(CONFIG, "FortyThieves-v0", overrides)
    trainer = MaskablePPOTrainer(env, config)
    trainer.set_threads()
    venv = trainer.train_env(0)
    model = trainer.fresh_model(config.device, venv)
    rollout = games * steps
    model.learn(rollout)
    t0 = time.perf_counter()
    model.learn(args.rollouts * rollout, reset_num_timesteps=False)
    seconds = time.perf_counter() - t0
    venv.close()
    return {
        "trainer": "MaskablePPO",
        "setup": setup,
        "device": args.device,
        "games": games,
        "n_steps": steps,
        "steps": args.rollouts * rollout,
        "seconds": round(seconds, 3),
        "steps_per_s": round(args.rollouts * rollout / seconds),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda", help="cuda or cpu (default: cuda)")
    p.add_argument("--setups", default="mlp,default", help="comma-separated: mlp, default")
    p.add_argument("--games", type=int, default=65_536, help="TorchPPO's games (default: 65536)")
    p.add_argument("--steps", type=int, default=32, help="TorchPPO's n_steps (default: 32)")
    p.add_argument("--batch", type=int, default=65_536, help="minibatch size (default: 65536)")
    p.add_argument("--rollouts", type=int, default=3, help="timed rollouts (default: 3)")
    p.add_argument("--threads", type=int, default=2, help="torch threads (default: 2)")
    p.add_argument("--sb3", action="store_true", help="also time MaskablePPO on the same device and networks")
    p.add_argument(
        "--trainers",
        help="comma-separated: torch, sb3 (default: torch, with --sb3 torch,sb3); one trainer a process "
        "lets a whole-process timer alternate the two",
    )
    p.add_argument("--sb3-envs", type=int, default=4096, help="MaskablePPO's games (default: 4096)")
    p.add_argument("--sb3-rollout", type=int, default=131_072, help="MaskablePPO's steps a rollout (default: 131072)")
    p.add_argument("--out", help="write the rows as JSON here")
    args = p.parse_args(argv)
    names = (args.trainers or ("torch,sb3" if args.sb3 else "torch")).split(",")
    timers = {"torch": time_torch, "sb3": time_sb3}
    if unknown := [n for n in names if n not in timers]:
        p.error(f"--trainers: unknown {unknown}; choose from torch, sb3")
    trainers = [timers[n] for n in names]
    rows = []
    for setup in args.setups.split(","):
        for fn in trainers:
            row = fn(setup, args)
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
