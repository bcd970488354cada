"""Time the policy's feature extractors on one PPO minibatch: forward, and forward plus backward.

    .venv/bin/python benchmarks/extractor_bench.py                   # classic, minibatch 256
    .venv/bin/python benchmarks/extractor_bench.py --batch 1024 --profile

PPO's update runs ``n_epochs`` passes of forward plus backward over every rollout, so the
extractor's cost per sample bounds the training speed. The observations are real positions
(random play from reset, so the card codes vary as in training), the extractors are those of
``configs/ppo.yaml`` (the card embedding with the config's sizes) and SB3's flatten-and-MLP
(``policy_kwargs.features_extractor=mlp``: ``CombinedExtractor`` plus one 128-unit layer,
a stand-in for the first layer of its MLP head). ``--profile`` prints torch's table of
the operators that take the time.
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
from stable_baselines3.common.torch_layers import CombinedExtractor

import forty_thieves_env  # noqa: F401
from agents.training.networks import CardEmbeddingExtractor


def observations(env_id: str, batch: int, steps: int, seed: int) -> dict[str, torch.Tensor]:
    """A minibatch of observations after ``steps`` random legal moves in ``batch`` games."""
    envs = gym.make_vec(env_id, num_envs=batch)
    obs, _ = envs.reset(seed=seed)
    for _ in range(steps):
        obs, *_ = envs.step(envs.unwrapped.random_legal_actions())
    return {k: torch.as_tensor(v).float() for k, v in obs.items()}


def per_call_ms(fn: Callable[[], None], repeats: int) -> float:
    fn()  # warm-up
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats * 1e3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--env", default="FortyThieves-v0")
    parser.add_argument("--batch", type=int, default=256, help="minibatch size (configs/ppo.yaml: 256)")
    parser.add_argument("--steps", type=int, default=40, help="random moves played before the batch is taken")
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (configs/ppo.yaml: 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true", help="print torch's operator table for the embedding")
    args = parser.parse_args(argv)

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    space = gym.make(args.env).observation_space
    batch = observations(args.env, args.batch, args.steps, args.seed)
    embedding = CardEmbeddingExtractor(space, embed_dim=8, column_dim=32, waste_cards=8, features_dim=128)
    combined = CombinedExtractor(space)
    flat_head = torch.nn.Sequential(torch.nn.Linear(combined.features_dim, 128), torch.nn.ReLU())
    models: dict[str, tuple[Callable[[], torch.Tensor], list[torch.nn.Parameter]]] = {
        "card_embedding": (lambda: embedding(batch), list(embedding.parameters())),
        "mlp": (lambda: flat_head(combined(batch)), [*combined.parameters(), *flat_head.parameters()]),
    }
    print(f"{args.env}, minibatch {args.batch}, {args.threads} torch thread(s); ms per call")
    print(f"{'extractor':16} {'forward':>9} {'fwd+bwd':>9} {'us/sample':>10}")
    for name, (call, params) in models.items():

        def step(call: Callable[[], torch.Tensor] = call, params: list = params) -> None:
            for p in params:
                p.grad = None
            call().sum().backward()

        with torch.no_grad():
            fwd = per_call_ms(lambda call=call: call(), args.repeats)
        both = per_call_ms(step, args.repeats)
        print(f"{name:16} {fwd:9.3f} {both:9.3f} {both * 1e3 / args.batch:10.2f}")
        if args.profile and name == "card_embedding":
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU]) as prof:
                for _ in range(10):
                    step()
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
