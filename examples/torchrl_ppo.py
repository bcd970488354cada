"""Masked PPO with TorchRL's own parts on Forty Thieves (docs/recipes.md, "TorchRL").

    python examples/torchrl_ppo.py --frames 200000

``GymWrapper`` of the native vector env (``SAME_STEP`` autoreset, the flat observation), the
env's ``info["action_mask"]`` read into the tensordict, a ``ProbabilisticActor`` whose
``MaskedOneHotCategorical`` takes that mask (illegal moves get probability 0), a
``Collector``, ``GAE`` and ``ClipPPOLoss``. The env is made with
``illegal_action="raise"``, so one illegal move would stop the run; each batch's illegal moves
are counted from the tensordict too (printed, 0).
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import torch
from gymnasium.vector import AutoresetMode
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.data import Binary, Categorical
from torchrl.envs import GymWrapper
from torchrl.envs.libs.gym import default_info_dict_reader
from torchrl.modules import MaskedOneHotCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import forty_thieves_env  # noqa: F401  (registers the FortyThieves-* ids)


def make_env(env_id: str, num_envs: int) -> GymWrapper:
    venv = gym.make_vec(env_id, num_envs=num_envs, autoreset_mode=AutoresetMode.SAME_STEP, observation="flat")
    env = GymWrapper(venv)
    n = venv.single_action_space.n
    spec = {
        "action_mask": Binary(n=n, shape=(num_envs, n), dtype=torch.bool),
        "illegal_action": Categorical(n=2, shape=(num_envs,), dtype=torch.bool),
    }
    env.set_info_dict_reader(default_info_dict_reader(list(spec), spec=spec))
    return env


def mlp(n_in: int, n_out: int, hidden: int) -> nn.Module:
    # card codes 0..53, heights and counts as int8: scaled to about 0..1
    return nn.Sequential(
        nn.Flatten(-1), _Scale(), nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
        nn.Linear(hidden, n_out),
    )  # fmt: skip


class _Scale(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.float() / 53.0


def main(argv: list[str] | None = None) -> dict[str, float]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env-id", default="FortyThieves-Relaxed-v0")
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--steps", type=int, default=64, help="steps per env per batch")
    p.add_argument("--frames", type=int, default=200_000, help="env steps in all")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--minibatch", type=int, default=1024)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    torch.manual_seed(args.seed)

    env = make_env(args.env_id, args.num_envs)
    env.set_seed(args.seed)
    n_obs = env.observation_spec["observation"].shape[-1]
    n_act = env.action_spec.shape[-1]
    logits = TensorDictModule(mlp(n_obs, n_act, args.hidden), in_keys=["observation"], out_keys=["logits"])
    actor = ProbabilisticActor(
        logits,
        in_keys={"logits": "logits", "mask": "action_mask"},
        distribution_class=MaskedOneHotCategorical,
        spec=env.action_spec,
        return_log_prob=True,
    )
    critic = ValueOperator(mlp(n_obs, 1, args.hidden), in_keys=["observation"])
    advantage = GAE(gamma=0.995, lmbda=0.95, value_network=critic, average_gae=True)
    loss_module = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01)
    optim = torch.optim.Adam(loss_module.parameters(), lr=args.lr)
    collector = Collector(
        env, actor, frames_per_batch=args.num_envs * args.steps, total_frames=args.frames, device="cpu",
        auto_register_policy_transforms=False,  # the actor keeps no state between steps
    )  # fmt: skip

    illegal = episodes = wins = frames = 0
    for i, data in enumerate(collector):
        frames += data.numel()
        illegal += int((~(data["action_mask"] & data["action"].bool()).any(-1)).sum())
        illegal += int(data["next", "illegal_action"].sum())  # the env refused a move
        done = data["next", "done"].squeeze(-1)
        episodes += int(done.sum())
        wins += int((data["next", "reward"].squeeze(-1) >= 1.0)[done].sum())  # the win bonus is 1
        with torch.no_grad():
            advantage(data)
        flat = data.reshape(-1)
        for _ in range(args.epochs):
            for idx in torch.randperm(flat.numel()).split(args.minibatch):
                losses = loss_module(flat[idx])
                loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(loss_module.parameters(), 0.5)
                optim.step()
        collector.update_policy_weights_()
        print(f"batch {i + 1}: {frames:,} frames, {episodes} games ended, {wins} won, illegal moves {illegal}")
    collector.shutdown()
    return {"illegal": illegal, "episodes": episodes, "wins": wins}


if __name__ == "__main__":
    main()
