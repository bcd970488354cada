"""Masked PPO on a PufferLib vector env of Forty Thieves.

    python examples/pufferlib_ppo.py --seed 1                          # Serial backend, 200k steps
    python examples/pufferlib_ppo.py --backend Multiprocessing --num-workers 2
    python examples/pufferlib_ppo.py --bench                           # steps/s of random legal play

PufferLib (``pip install "forty-thieves-env[puffer]"``: pufferlib-core) runs each game as a
``pufferlib.emulation.GymnasiumPufferEnv``, which flattens the observation into one ``int8`` row of
its own buffer, and ``pufferlib.vector.make`` steps the games (``Serial`` in this process,
``Multiprocessing`` in worker processes sharing that buffer). Its policies see that buffer and
never the infos, so the env is made with ``mask_in_observation=True``: the action mask is the
``"action_mask"`` field of the Dict observation, and so a slice of every row.
:class:`MaskedPolicy` follows PufferLib's policy convention (``forward_eval(observations, state)``
returns ``(logits, values)``), gets the fields back with ``pufferlib.pytorch.nativize_tensor``
and sets the logits of illegal moves to -1e8; ``pufferlib.pytorch.sample_logits``, the sampler of
PufferLib's own trainer, then never picks one. The rollout stores the rows, mask included, so
the update scores each action against the moves that were legal when it was taken.

The trainer is a short CleanRL-style PPO loop (examples/cleanrl_ppo.py is the long one), not
PufferLib's PuffeRL: ``pufferlib.pufferl`` needs the compiled extension ``pufferlib._C``, which
pufferlib-core builds against CUDA torch (it links libtorch_cuda.so and libcudart.so.12) and
which does not load with a CPU build of torch. The policy is written so that PuffeRL could
drive it as it is (it calls ``forward_eval``, ``forward`` and ``sample_logits``, and stores the
observation rows).

PufferLib's vector envs reset a finished game on the step after the one that ended it: that
step's action is ignored (its reward is 0), so the loop leaves such steps out of the loss, and a
game's last real step ends its advantage sum.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
import warnings
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import pufferlib
import pufferlib.emulation
import pufferlib.pytorch
import pufferlib.vector
import torch
from torch import nn

import forty_thieves_env  # noqa: F401  (registers the FortyThieves-* ids)

# pufferlib.pytorch.nativize_tensor calls torch._check_is_size, which torch 2.13 flags for removal.
warnings.filterwarnings("ignore", message="_check_is_size", category=FutureWarning)


@dataclass
class Args:
    seed: int = 1  # seeds numpy, torch and the deals drawn
    threads: int = 1  # torch threads
    env_id: str = "FortyThieves-Relaxed-v0"
    total_timesteps: int = 200_000  # env steps, all games together
    backend: str = "Serial"  # pufferlib.vector's Serial (this process) or Multiprocessing
    num_envs: int = 16  # games
    num_workers: int = 2  # Multiprocessing: worker processes (num_envs divisible by it)
    num_steps: int = 128  # steps per game per rollout
    hidden: int = 256
    learning_rate: float = 5e-4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 2
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    bench: bool = False  # measure steps/s of random legal play instead of training
    bench_seconds: float = 5.0  # per measurement


def parse_args(argv: list[str] | None = None) -> Args:
    """One ``--flag`` per :class:`Args` field (``--bench`` alone sets it)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        flag = f"--{f.name.replace('_', '-')}"
        if f.type == "bool":
            parser.add_argument(flag, action="store_true")
        else:
            parser.add_argument(flag, type={"int": int, "float": float}.get(f.type, str), default=f.default)
    return Args(**vars(parser.parse_args(argv)))


class EpisodeInfo(gym.Wrapper):
    """PufferLib's convention for infos: none on most steps (the vector envs pass on only
    non-empty ones; Multiprocessing pickles them from its workers), the game's figures when it
    ends. The mask travels in the observation; ``illegal_action`` is kept whenever it is set."""

    def reset(self, **kwargs):
        obs, _ = self.env.reset(**kwargs)
        return obs, {}

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        out = {"illegal_action": 1} if info["illegal_action"] else {}
        if terminated or truncated:
            out.update(won=int(info["won"]), cards_on_foundations=int(info["cards_on_foundations"]))
        return obs, reward, terminated, truncated, out


def make_game(env_id: str) -> gym.Env:
    """One game, the mask in its observation. An illegal move would be refused, penalised and
    counted (``illegal`` in the printout), not raised: an exception in a Multiprocessing worker
    ends that worker and leaves the main process waiting for it for ever."""
    return EpisodeInfo(gym.make(env_id, mask_in_observation=True))


def make_env(env_id: str, buf=None, seed: int = 0) -> pufferlib.emulation.GymnasiumPufferEnv:
    """PufferLib's env creator: the game, its Dict observation flattened into a row of ``buf``."""
    return pufferlib.emulation.GymnasiumPufferEnv(env=make_game(env_id), buf=buf, seed=seed)


def make_vecenv(args: Args):
    kwargs = {"num_workers": args.num_workers} if args.backend == "Multiprocessing" else {}
    backend = getattr(pufferlib.vector, args.backend)
    return pufferlib.vector.make(
        make_env, env_kwargs={"env_id": args.env_id}, num_envs=args.num_envs, backend=backend, seed=args.seed, **kwargs
    )


def close(vecenv) -> None:
    """Close the vector env; Multiprocessing terminates its workers, and here they are reaped too."""
    vecenv.close()
    for process in getattr(vecenv, "processes", ()):
        process.join(timeout=10)


def layer_init(layer: nn.Linear, std: float = np.sqrt(2)) -> nn.Linear:
    return pufferlib.pytorch.layer_init(layer, std)


class MaskedPolicy(nn.Module):
    """Card embeddings of the tableau and the waste, the foundations and the stock counts, an
    MLP, an actor head over every move and a critic head; the actor's logits are -1e8 wherever
    the row's ``action_mask`` is 0."""

    N_CODES, EMBED = 54, 8

    def __init__(self, vecenv, hidden: int = 256):
        super().__init__()
        # Where each field of the Dict observation lies in a row: {"action_mask": (torch.int8, (n,), 0, n), ...}
        self.fields = pufferlib.pytorch.nativize_dtype(vecenv.emulated)
        space = vecenv.driver_env.env.observation_space  # the game's own Dict space
        n_cards = int(np.prod(space["tableau"].shape)) + space["waste"].shape[0]
        self.embed = nn.Embedding(self.N_CODES, self.EMBED)
        self.register_buffer("counts_scale", 1.0 / torch.as_tensor(space["counts"].high, dtype=torch.float32).clamp(1))
        self.encoder = nn.Sequential(
            layer_init(nn.Linear(n_cards * self.EMBED + 8 + 2, hidden)), nn.ReLU(),
            layer_init(nn.Linear(hidden, hidden)), nn.ReLU(),
        )  # fmt: skip
        self.actor = layer_init(nn.Linear(hidden, vecenv.single_action_space.n), std=0.01)
        self.critic = layer_init(nn.Linear(hidden, 1), std=1.0)

    def unflatten(self, observations: torch.Tensor) -> dict[str, torch.Tensor]:
        """The fields of a batch of rows, as views (``int8``)."""
        return pufferlib.pytorch.nativize_tensor(observations, self.fields)

    def forward_eval(self, observations: torch.Tensor, state=None) -> tuple[torch.Tensor, torch.Tensor]:
        obs = self.unflatten(observations)
        n = observations.shape[0]
        cards = torch.cat([obs["tableau"].reshape(n, -1), obs["waste"]], dim=1).long()
        features = [self.embed(cards).reshape(n, -1), obs["foundations"] / 13.0, obs["counts"] * self.counts_scale]
        hidden = self.encoder(torch.cat(features, dim=1))
        return self.mask_logits(self.actor(hidden), obs["action_mask"]), self.critic(hidden)

    @staticmethod
    def mask_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Illegal moves (``mask`` 0) get -1e8: probability 0 after the softmax."""
        return logits.masked_fill(mask == 0, -1e8)

    def forward(self, observations: torch.Tensor, state=None) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_eval(observations, state)


def train(args: Args) -> dict:
    """PPO; returns the run's counts (``illegal`` actions outside their mask, ``updates``, ...)."""
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    vecenv = make_vecenv(args)
    policy = MaskedPolicy(vecenv, args.hidden)
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.learning_rate, eps=1e-5)
    mask_field = policy.fields["action_mask"]  # (dtype, shape, offset, size) of the mask in a row
    mask_slice = slice(mask_field[2], mask_field[2] + mask_field[3])

    n, steps = args.num_envs, args.num_steps
    batch = n * steps
    rows = torch.zeros((steps, n, vecenv.single_observation_space.shape[0]), dtype=torch.int8)
    actions = torch.zeros((steps, n), dtype=torch.long)
    logprobs, rewards, values = (torch.zeros((steps, n)) for _ in range(3))
    ended = torch.zeros((steps, n))  # the step ended the game (won, stuck or truncated)
    real = torch.zeros((steps, n), dtype=torch.bool)  # the step was played (not the reset after an end)

    counts = {"steps": 0, "illegal": 0, "updates": 0, "episodes": 0, "wins": 0}
    obs, _ = vecenv.reset(seed=args.seed)
    next_rows, next_real = torch.from_numpy(obs.copy()), torch.ones(n, dtype=torch.bool)
    start = time.time()
    for _iteration in range(max(1, args.total_timesteps // batch)):
        for step in range(steps):
            rows[step], real[step] = next_rows, next_real
            with torch.no_grad():
                logits, value = policy.forward_eval(next_rows)
                action, logprob, _ = pufferlib.pytorch.sample_logits(logits)
            actions[step], logprobs[step], values[step] = action.long(), logprob, value.flatten()
            legal = next_rows[:, mask_slice].gather(1, action.long()[:, None]).squeeze(1) == 1
            counts["illegal"] += int((~legal & next_real).sum())  # 0: the mask holds
            counts["steps"] += int(next_real.sum())

            obs, reward, terminal, truncation, infos = vecenv.step(action.numpy())
            done = np.logical_or(terminal, truncation)
            rewards[step] = torch.from_numpy(reward.copy())
            ended[step] = torch.from_numpy(done.astype(np.float32))
            for info in infos:
                counts["illegal"] += info.get("illegal_action", 0)
                if "won" in info:
                    counts["episodes"] += 1
                    counts["wins"] += info["won"]
            next_rows, next_real = torch.from_numpy(obs.copy()), torch.from_numpy(~done)

        with torch.no_grad():  # GAE; a game's last step has no next value
            next_value = policy.forward_eval(next_rows)[1].flatten()
            advantages = torch.zeros((steps, n))
            last = torch.zeros(n)
            for t in reversed(range(steps)):
                following = next_value if t == steps - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * following * (1 - ended[t]) - values[t]
                advantages[t] = last = delta + args.gamma * args.gae_lambda * (1 - ended[t]) * last
            returns = advantages + values

        b_rows, b_actions = rows.reshape(batch, -1), actions.reshape(-1)
        b_logprobs, b_advantages, b_returns = logprobs.reshape(-1), advantages.reshape(-1), returns.reshape(-1)
        b_inds = np.flatnonzero(real.reshape(-1).numpy())  # the steps played
        for _epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for mb in np.array_split(b_inds, args.num_minibatches):  # sizes differ by 1 at most
                mb = torch.from_numpy(mb)
                logits, newvalue = policy(b_rows[mb])
                _, newlogprob, entropy = pufferlib.pytorch.sample_logits(logits, action=b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                adv = b_advantages[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((newvalue.flatten() - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(policy.parameters(), args.max_grad_norm)
                optimizer.step()
                counts["updates"] += 1
        counts["loss"] = loss.item()
        sps = int(counts["steps"] / (time.time() - start))
        print(
            f"step {counts['steps']:>8,}  SPS {sps:>5}  games ended {counts['episodes']:>5}  "
            f"won {counts['wins']:>4}  illegal {counts['illegal']}  loss {counts['loss']:.3f}"
        )
    close(vecenv)
    return counts


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal move per row of 0/1 masks (``(N, n)``)."""
    return np.argmax(rng.random(masks.shape) * masks, axis=1).astype(np.int32)


def bench(args: Args) -> dict[str, float]:
    """Game steps per second of random legal play, the move read from the mask in the
    observation: one game (``gym.make``), the PufferLib vector env, and, for reference, the
    project's native vector env (``gym.make_vec``, its mask from the infos)."""
    rng = np.random.default_rng(args.seed)

    def timed(step, games: int) -> float:
        for _ in range(200):  # warm-up
            step()
        calls, begin = 0, time.perf_counter()
        while time.perf_counter() - begin < args.bench_seconds:
            for _ in range(100):
                step()
            calls += 100
        return games * calls / (time.perf_counter() - begin)

    results = {}
    game = gym.make(args.env_id, mask_in_observation=True)
    state = {"obs": game.reset(seed=args.seed)[0]}

    def step_game() -> None:
        action = random_legal(state["obs"]["action_mask"][None], rng)[0]
        obs, _, terminated, truncated, _ = game.step(action)
        state["obs"] = game.reset()[0] if terminated or truncated else obs

    results["gym.make, 1 game"] = timed(step_game, 1)
    game.close()

    vecenv = make_vecenv(args)
    field = pufferlib.pytorch.nativize_dtype(vecenv.emulated)["action_mask"]
    mask_slice = slice(field[2], field[2] + field[3])
    state["rows"] = vecenv.reset(seed=args.seed)[0]

    def step_puffer() -> None:
        state["rows"] = vecenv.step(random_legal(state["rows"][:, mask_slice], rng))[0]

    workers = f" ({args.num_workers} workers)" if args.backend == "Multiprocessing" else ""
    label = f"pufferlib {args.backend}{workers}"
    results[f"{label}, {args.num_envs} games"] = timed(step_puffer, args.num_envs)
    close(vecenv)

    envs = gym.make_vec(args.env_id, num_envs=args.num_envs, num_threads=1)
    state["mask"] = envs.reset(seed=args.seed)[1]["action_mask"]

    def step_native() -> None:
        state["mask"] = envs.step(random_legal(state["mask"], rng))[4]["action_mask"]

    results[f"gym.make_vec, {args.num_envs} games"] = timed(step_native, args.num_envs)
    envs.close()
    for name, sps in results.items():
        print(f"{name:>40}: {sps:>9,.0f} steps/s")
    return results


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    return bench(args) if args.bench else train(args)


if __name__ == "__main__":
    main()
