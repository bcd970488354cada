"""Time the policy networks on one PPO minibatch: the rollout's forward, and the update's forward plus backward.

    .venv/bin/python benchmarks/extractor_bench.py                   # classic, minibatch 8192
    .venv/bin/python benchmarks/extractor_bench.py --batch 1024 --profile lookup_scorer

PPO's rollout runs the policy forward (logits, value, a sampled move) on every step, and its
update runs ``n_epochs`` passes of forward plus backward (log-probability, entropy, value)
over every rollout, so these costs per sample bound the training speed. The observations are
real positions (random play from reset, so the card codes vary as in training); each
network is the whole MaskablePPO policy as ``forty-thieves train`` builds it from
``configs/ppo.yaml`` with ``policy_kwargs.features_extractor`` set to the network's name
(``mlp``: SB3's flatten-and-MLP with the config's default ``net_arch``). ``--profile NAME``
prints torch's table of the operators that take NAME's time.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gymnasium as gym
import torch

import forty_thieves_env  # noqa: F401
from agents.configs.train_config import PolicyKwargs
from agents.training.networks.policies import policy_class_for, policy_kwargs_for

NETWORKS = ("mlp", "card_embedding", "move_scorer", "lookup_scorer")


def observations(env_id: str, batch: int, steps: int, seed: int) -> dict[str, torch.Tensor]:
    """A minibatch of observations after ``steps`` random legal moves in ``batch`` games."""
    envs = gym.make_vec(env_id, num_envs=batch)
    obs, info = envs.reset(seed=seed)
    for _ in range(steps):
        obs, _, _, _, info = envs.step(envs.unwrapped.random_legal_actions())
    out = {k: torch.as_tensor(v).float() for k, v in obs.items()}
    return out, info["action_mask"].copy(), torch.as_tensor(envs.unwrapped.random_legal_actions())


def policy(env_id: str, network: str):
    """The MaskablePPO policy ``forty-thieves train`` builds for ``network`` (its default sizes)."""
    from sb3_contrib import MaskablePPO

    kwargs = PolicyKwargs(features_extractor=network, features_extractor_kwargs=None)
    cls = policy_class_for("MultiInputPolicy", kwargs)
    model = MaskablePPO(cls, gym.make(env_id), policy_kwargs=policy_kwargs_for(kwargs, env_id), n_steps=8, verbose=0)
    return model.policy


def best_ms(fn: Callable[[], None], repeats: int) -> float:
    """The fastest of ``repeats`` calls, in ms (the machine is shared: the best is the cost)."""
    fn()  # warm-up (and numba's first call)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env", default="FortyThieves-v0")
    parser.add_argument(
        "networks", nargs="*", default=list(NETWORKS), help=f"networks to time (default: {' '.join(NETWORKS)})"
    )
    parser.add_argument("--batch", type=int, default=8192, help="minibatch size (configs/ppo.yaml: 8192)")
    parser.add_argument("--steps", type=int, default=40, help="random moves played before the batch is taken")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (configs/ppo.yaml: 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", metavar="NAME", help="print torch's operator table of this network's update")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    torch.distributions.Distribution.set_default_validate_args(False)  # as build_model does
    obs, masks, actions = observations(args.env, args.batch, args.steps, args.seed)
    print(f"{args.env}, minibatch {args.batch}, {args.threads} torch thread(s); ms per call, best of {args.repeats}")
    print(f"{'network':16} {'params':>8} {'rollout':>9} {'update':>9} {'us/sample (rollout + update)':>30}")
    for name in args.networks:
        pol = policy(args.env, name)

        def rollout(pol=pol) -> None:
            with torch.no_grad():
                pol.forward(obs, action_masks=masks)

        def update(pol=pol) -> None:
            pol.zero_grad(set_to_none=True)
            values, log_prob, entropy = pol.evaluate_actions(obs, actions, action_masks=masks)
            (values.sum() + log_prob.sum() + entropy.sum()).backward()

        fwd, both = best_ms(rollout, args.repeats), best_ms(update, args.repeats)
        n_params = sum(p.numel() for p in pol.parameters())
        print(f"{name:16} {n_params:8d} {fwd:9.2f} {both:9.2f} {(fwd + both) * 1e3 / args.batch:30.2f}")
        if args.profile == name:
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU]) as prof:
                for _ in range(3):
                    update()
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
