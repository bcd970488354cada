"""Masked PPO on Forty Thieves in one file, in the style of CleanRL's ``ppo.py``.

    python examples/cleanrl_ppo.py --seed 1          # 400k steps, then the test deals
    tensorboard --logdir runs

It uses nothing of this project but the environment: ``gym.make_vec("FortyThieves-Relaxed-v0")``,
the native vector env (every game stepped in one compiled call), whose infos carry each game's
``action_mask``. The policy sets the logits of illegal moves to a large negative number before
the softmax, so it never picks one; the env is made with ``illegal_action="raise"``, so a single
illegal move would stop the run, and ``charts/illegal_actions`` counts them anyway (0).

Before training and after, the policy plays the test deals 1..``--eval-deals`` once each
(``reset(options={"deal": [...]})``, a sampled move, the 1000-move cap of the registered ids),
prints its win rate and writes the games as ``forty-thieves evaluate`` does (``results.json`` in
the run folder, which ``forty-thieves compare`` reads): the before/after figures of
docs/recipes.md come from this script.

Differences from CleanRL's ppo.py, each for this game: the action mask; encoders that embed
card codes (a card code is a category, not a number) with one small network shared by the
columns, one encoder for the actor and one for the critic as CleanRL keeps them apart (sharing
one, the same run won 31 test deals instead of 88); an actor that scores each move from its
source and destination; ``gamma`` 0.995 (a game lasts 100-300 moves and the win bonus comes
last); autoreset in the same step, so a rollout never holds the ignored step of Gymnasium's
next-step autoreset.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import time
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.utils.tensorboard import SummaryWriter

import forty_thieves_env  # noqa: F401  (registers the FortyThieves-* ids)


@dataclass
class Args:
    exp_name: str = "cleanrl_ppo"  # the run folder is runs/{env_id}__{exp_name}__{seed}__{time}
    seed: int = 1  # seeds random, numpy, torch and the deals drawn
    torch_deterministic: bool = True  # torch.backends.cudnn.deterministic
    threads: int = 1  # torch and numba threads (on a busy 2-core machine 1 ran 5x faster than 2)
    env_id: str = "FortyThieves-Relaxed-v0"  # Relaxed: runs move as a unit, one redeal; learnt in minutes
    total_timesteps: int = 400_000  # env steps, all games together
    max_minutes: float = 0.0  # stop training after this many minutes (0: no limit)
    learning_rate: float = 5e-4
    num_envs: int = 128  # games stepped together
    num_steps: int = 64  # steps per game per rollout
    anneal_lr: bool = True  # decay the learning rate linearly to 0
    gamma: float = 0.995  # a game lasts 100-300 moves and the win bonus comes last
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 2
    norm_adv: bool = True
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float = 0.0  # stop an update's epochs past this approximate KL (0: never)
    eval_deals: int = 200  # play test deals 1..N before and after training (0: skip)
    runs_dir: str = "runs"  # where the run folder (TensorBoard events, agent.pt, results.json) goes
    # filled in at run time
    batch_size: int = 0
    minibatch_size: int = 0
    num_iterations: int = 0


def parse_args(argv: list[str] | None = None) -> Args:
    """``--total-timesteps 500000 --anneal-lr false``: one flag per :class:`Args` field."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        if f.name in ("batch_size", "minibatch_size", "num_iterations"):
            continue
        kind = {"bool": lambda s: s.lower() in ("1", "true", "yes"), "int": int, "float": float}.get(f.type, str)
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=kind, default=f.default)
    args = Args(**vars(parser.parse_args(argv)))
    args.batch_size = args.num_envs * args.num_steps
    args.minibatch_size = args.batch_size // args.num_minibatches
    args.num_iterations = max(1, args.total_timesteps // args.batch_size)
    return args


def make_env(args: Args, num_envs: int) -> gym.vector.VectorEnv:
    return gym.make_vec(
        args.env_id,
        num_envs=num_envs,
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,  # a finished game is dealt anew in the same step
        illegal_action="raise",  # an illegal move is a bug here: stop at once
        num_threads=args.threads,
    )


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


def move_table(n_actions: int, n_cols: int) -> torch.Tensor:
    """``(3, n_actions)``: each action's source, destination and cards moved - 1, in the order
    docs/environment.md numbers them. Sources: 0 the stock, 1 the waste, 2 + i column i;
    destinations: 0 a foundation, 1 + j column j, n_cols + 1 none (turning the stock)."""
    c = n_cols
    k_max = (n_actions - 2 - 2 * c) // (c * (c - 1))  # 1 without run moves, 13 with
    moves = [(0, c + 1, 0), (1, 0, 0)] + [(1, 1 + j, 0) for j in range(c)] + [(2 + i, 0, 0) for i in range(c)]
    moves += [(2 + i, 1 + j, k) for i in range(c) for j in range(c) if j != i for k in range(k_max)]
    assert len(moves) == n_actions
    return torch.tensor(moves).T


class Encoder(nn.Module):
    """Card embeddings -> a vector per column (one small network shared by the columns), the
    waste, the foundations and the stock -> a trunk over all of them.

    The observation (forty_thieves_env/envs/observation.py): ``tableau`` (C, D) and ``waste`` (T,)
    hold card codes 0..51, 52 face down, 53 no card; ``foundations`` (8,) pile heights 0..13;
    ``counts`` (2,) cards in the stock and redeals left.
    """

    N_CODES, EMBED, PART, WASTE_TOP, HIDDEN = 54, 16, 64, 4, 256

    def __init__(self, space: gym.spaces.Dict):
        super().__init__()
        self.n_cols, depth = space["tableau"].shape
        e, h = self.EMBED, self.PART
        self.embed = nn.Embedding(self.N_CODES, e)
        self.column = nn.Sequential(layer_init(nn.Linear(depth * e, h)), nn.ReLU())
        self.waste = nn.Sequential(layer_init(nn.Linear((self.WASTE_TOP + 1) * e, h)), nn.ReLU())
        self.foundations = nn.Sequential(layer_init(nn.Linear(8 * (e + 1), h)), nn.ReLU())
        self.stock = nn.Sequential(layer_init(nn.Linear(2, h)), nn.ReLU())
        counts_high = torch.as_tensor(space["counts"].high, dtype=torch.float32)
        self.register_buffer("counts_scale", 1.0 / counts_high.clamp(min=1))
        self.register_buffer("pile_suit", torch.arange(8) // 2 * 13)  # pile p holds suit p // 2
        self.trunk = nn.Sequential(
            layer_init(nn.Linear((self.n_cols + 3) * h, self.HIDDEN)), nn.ReLU(),
            layer_init(nn.Linear(self.HIDDEN, self.HIDDEN)), nn.ReLU(),
        )  # fmt: skip

    def forward(self, obs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, ...]:
        """(columns (n, C, h), waste, foundations, stock (n, h) each, trunk output (n, HIDDEN))."""
        n = obs["tableau"].shape[0]
        columns = self.column(self.embed(obs["tableau"].long()).reshape(n, self.n_cols, -1))
        waste = self.embed(obs["waste"].long())  # (n, T, e); the playable card is the last
        top, buried = waste[:, -self.WASTE_TOP :].reshape(n, -1), waste[:, : -self.WASTE_TOP].mean(1)
        waste = self.waste(torch.cat([top, buried], dim=1))
        heights = obs["foundations"].long()
        next_code = torch.where(heights < 13, self.pile_suit + heights, 53)  # the card each pile needs (53: none)
        foundations = self.foundations(torch.cat([self.embed(next_code).reshape(n, -1), heights / 13.0], dim=1))
        stock = self.stock(obs["counts"].float() * self.counts_scale)
        hidden = self.trunk(torch.cat([columns.reshape(n, -1), waste, foundations, stock], dim=1))
        return columns, waste, foundations, stock, hidden


class Agent(nn.Module):
    """An actor and a critic, each with its own :class:`Encoder` (as CleanRL's separate
    networks). The actor scores each move from its source and destination vectors (a dot
    product, plus a term for the cards moved), so what it learns of one move carries over to
    the moves alike."""

    SCORE = 32

    def __init__(self, envs: gym.vector.VectorEnv):
        super().__init__()
        space = envs.single_observation_space
        self.actor_body, self.critic_body = Encoder(space), Encoder(space)
        h, hidden = Encoder.PART, Encoder.HIDDEN
        self.critic = layer_init(nn.Linear(hidden, 1), std=1.0)
        # the actor: source and destination vectors, a vector per number of cards moved
        self.register_buffer("moves", move_table(envs.single_action_space.n, self.actor_body.n_cols))
        self.source = layer_init(nn.Linear(h, self.SCORE), std=0.1)
        self.destination = layer_init(nn.Linear(h, self.SCORE), std=0.1)
        self.context = layer_init(nn.Linear(hidden, self.SCORE), std=0.1)
        self.nowhere = nn.Parameter(torch.zeros(1, 1, h))  # the destination of turning the stock
        self.cards_moved = nn.Parameter(torch.zeros(int(self.moves[2].max()) + 1, self.SCORE))

    def get_value(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.critic(self.critic_body(obs)[-1])

    def scores(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Every move's logit, legal or not: ``(n, n_actions)``."""
        columns, waste, foundations, stock, hidden = self.actor_body(obs)
        n = columns.shape[0]
        sources = self.source(torch.cat([stock[:, None], waste[:, None], columns], dim=1))  # (n, C + 2, s)
        sources = sources + self.context(hidden)[:, None]
        targets = torch.cat([foundations[:, None], columns, self.nowhere.expand(n, 1, -1)], dim=1)
        targets = self.destination(targets)  # (n, C + 2, s)
        pair = torch.einsum("nas,nbs->nab", sources, targets)  # every source against every destination
        size = torch.einsum("ks,nbs->nkb", self.cards_moved, targets)  # cards moved against the destination
        src, dst, k = self.moves
        return pair[:, src, dst] + size[:, k, dst]

    def get_action_and_value(self, obs, mask, action=None):
        logits = self.scores(obs).masked_fill(~mask, -1e8)  # illegal moves: probability 0
        probs = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.get_value(obs)


def to_torch(obs: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(v) for k, v in obs.items()}


@torch.no_grad()
def evaluate(agent: Agent, args: Args, n: int, model: str) -> dict:
    """Test deals 1..n, one game each, a sampled move, as ``forty-thieves evaluate`` writes them:
    ``{"settings": ..., "results": [one row per deal]}``, which ``forty-thieves compare`` reads;
    ``model`` names the weights (compare keeps files of different models in different groups).

    Its own random stream (seeded by ``--seed``): the same network gives the same games, and
    the training's stream is left as it was."""
    with torch.random.fork_rng():
        torch.manual_seed(args.seed)
        envs = make_env(args, n)
        obs, info = envs.reset(seed=args.seed, options={"deal": list(range(1, n + 1))})
        done = np.zeros(n, dtype=bool)
        rows = [{} for _ in range(n)]
        while not done.all():
            mask = torch.from_numpy(info["action_mask"])
            action, _, _, _ = agent.get_action_and_value(to_torch(obs), mask)
            obs, _, terminated, truncated, info = envs.step(action.numpy())
            ended = (terminated | truncated) & ~done  # a game's first episode (autoreset deals on)
            for i in np.flatnonzero(ended):
                final = info["final_info"]
                rows[i] = {"deal": int(i) + 1, "won": bool(final["won"][i]), "moves": int(final["moves"][i]),
                           "cards_on_foundations": int(final["cards_on_foundations"][i]),
                           "truncated": bool(truncated[i])}  # fmt: skip
            done |= ended
        game = envs.unwrapped  # the native vector env: its rules and move cap
        settings = {"agent": "cleanrl_ppo", "variant": game.variant.name, "env_id": args.env_id, "deals": f"1-{n}",
                    "seed": args.seed, "max_moves": game.max_episode_steps,
                    "agent_options": {"model": model}}  # fmt: skip
        envs.close()
    return {"settings": settings, "results": rows}


def report(results: dict, when: str) -> float:
    rows = results["results"]
    won = sum(r["won"] for r in rows)
    cards = np.mean([r["cards_on_foundations"] for r in rows])
    print(f"{when}: won {won}/{len(rows)} test deals, {cards:.1f} cards home on average")
    return won / len(rows)


def main(argv: list[str] | None = None) -> Path:
    args = parse_args(argv)
    run_name = f"{args.env_id}__{args.exp_name}__{args.seed}__{int(time.time())}"
    run_dir = Path(args.runs_dir) / run_name
    writer = SummaryWriter(str(run_dir))
    writer.add_text(
        "hyperparameters",
        "|param|value|\n|-|-|\n" + "\n".join(f"|{key}|{value}|" for key, value in vars(args).items()),
    )

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_num_threads(args.threads)

    envs = make_env(args, args.num_envs)
    agent = Agent(envs)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    if args.eval_deals:
        before = evaluate(agent, args, args.eval_deals, model=f"{run_dir} (untrained)")
        writer.add_scalar("eval/win_rate", report(before, "before training"), 0)
        (run_dir / "results_before.json").write_text(json.dumps(before))

    # Rollout storage (observations field by field, as the env gives them: int8).
    space = envs.single_observation_space
    obs_buf = {k: torch.zeros((args.num_steps, args.num_envs, *s.shape), dtype=torch.int8) for k, s in space.items()}
    masks = torch.zeros((args.num_steps, args.num_envs, envs.single_action_space.n), dtype=torch.bool)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs = torch.zeros((args.num_steps, args.num_envs))
    rewards = torch.zeros((args.num_steps, args.num_envs))
    dones = torch.zeros((args.num_steps, args.num_envs))
    values = torch.zeros((args.num_steps, args.num_envs))

    global_step, illegal, episodes, wins = 0, 0, 0, 0
    start_time = time.time()
    next_obs, info = envs.reset(seed=args.seed)  # training deals: the env draws them (never test deals)
    next_obs, next_mask = to_torch(next_obs), torch.from_numpy(info["action_mask"])
    next_done = torch.zeros(args.num_envs)

    for iteration in range(1, args.num_iterations + 1):
        if args.max_minutes and time.time() - start_time > 60 * args.max_minutes:
            break
        if args.anneal_lr:
            frac = 1.0 - (iteration - 1.0) / args.num_iterations
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate

        for step in range(args.num_steps):
            global_step += args.num_envs
            for k in obs_buf:
                obs_buf[k][step] = next_obs[k]
            masks[step] = next_mask
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob
            illegal += int((~next_mask.gather(1, action[:, None])).sum())  # 0: the mask holds

            next_obs, reward, terminations, truncations, info = envs.step(action.numpy())
            illegal += int(info["illegal_action"].sum())
            done = np.logical_or(terminations, truncations)
            rewards[step] = torch.as_tensor(reward, dtype=torch.float32)
            if done.any():  # same-step autoreset: the ended episodes' infos are in final_info
                final = info["final_info"]
                episodes += int(done.sum())
                wins += int(final["won"][done].sum())
                writer.add_scalar("charts/cards_home", float(final["cards_on_foundations"][done].mean()), global_step)
                writer.add_scalar("charts/episodic_length", float(final["moves"][done].mean()), global_step)
            next_obs, next_mask = to_torch(next_obs), torch.from_numpy(info["action_mask"])
            next_done = torch.as_tensor(done, dtype=torch.float32)

        # GAE (a truncated game is treated as ended, as in CleanRL)
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(args.num_steps)):
                if t == args.num_steps - 1:
                    nextnonterminal = 1.0 - next_done
                    nextvalues = next_value
                else:
                    nextnonterminal = 1.0 - dones[t + 1]
                    nextvalues = values[t + 1]
                delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
                advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
            returns = advantages + values

        # flatten the batch
        b_obs = {k: v.reshape(args.batch_size, *v.shape[2:]) for k, v in obs_buf.items()}
        b_masks = masks.reshape(args.batch_size, -1)
        b_logprobs = logprobs.reshape(-1)
        b_actions = actions.reshape(-1)
        b_advantages = advantages.reshape(-1)
        b_returns = returns.reshape(-1)
        b_values = values.reshape(-1)

        # Optimizing the policy and value network
        b_inds = np.arange(args.batch_size)
        clipfracs = []
        for _epoch in range(args.update_epochs):
            np.random.shuffle(b_inds)
            for start in range(0, args.batch_size, args.minibatch_size):
                mb_inds = torch.from_numpy(b_inds[start : start + args.minibatch_size])
                mb_obs = {k: v[mb_inds] for k, v in b_obs.items()}
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    mb_obs, b_masks[mb_inds], b_actions[mb_inds]
                )
                logratio = newlogprob - b_logprobs[mb_inds]
                ratio = logratio.exp()

                with torch.no_grad():
                    # calculate approx_kl http://joschu.net/blog/kl-approx.html
                    old_approx_kl = (-logratio).mean()
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]

                mb_advantages = b_advantages[mb_inds]
                if args.norm_adv:
                    mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

                # Policy loss
                pg_loss1 = -mb_advantages * ratio
                pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                pg_loss = torch.max(pg_loss1, pg_loss2).mean()

                # Value loss
                newvalue = newvalue.view(-1)
                if args.clip_vloss:
                    v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                    v_clipped = b_values[mb_inds] + torch.clamp(
                        newvalue - b_values[mb_inds], -args.clip_coef, args.clip_coef
                    )
                    v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
                    v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
                else:
                    v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2).mean()

                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef

                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

            if args.target_kl and approx_kl > args.target_kl:
                break

        y_pred, y_true = b_values.numpy(), b_returns.numpy()
        var_y = np.var(y_true)
        explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y

        sps = int(global_step / (time.time() - start_time))
        writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
        writer.add_scalar("charts/win_rate", wins / max(episodes, 1), global_step)
        writer.add_scalar("charts/illegal_actions", illegal, global_step)
        writer.add_scalar("losses/value_loss", v_loss.item(), global_step)
        writer.add_scalar("losses/policy_loss", pg_loss.item(), global_step)
        writer.add_scalar("losses/entropy", entropy_loss.item(), global_step)
        writer.add_scalar("losses/old_approx_kl", old_approx_kl.item(), global_step)
        writer.add_scalar("losses/approx_kl", approx_kl.item(), global_step)
        writer.add_scalar("losses/clipfrac", np.mean(clipfracs), global_step)
        writer.add_scalar("losses/explained_variance", explained_var, global_step)
        writer.add_scalar("charts/SPS", sps, global_step)
        print(
            f"step {global_step:>9,}  SPS {sps:>5}  episodes {episodes:>6}  "
            f"training win rate {100 * wins / max(episodes, 1):5.1f} %  illegal {illegal}"
        )
        episodes, wins = 0, 0

    envs.close()
    minutes = (time.time() - start_time) / 60
    print(f"trained {global_step:,} steps in {minutes:.1f} min; illegal actions: {illegal}")
    torch.save(agent.state_dict(), run_dir / "agent.pt")
    if args.eval_deals:
        after = evaluate(agent, args, args.eval_deals, model=str(run_dir / "agent.pt"))
        writer.add_scalar("eval/win_rate", report(after, "after training"), global_step)
        (run_dir / "results.json").write_text(json.dumps(after))  # forty-thieves compare RUN_DIR ...
    writer.close()
    return run_dir


if __name__ == "__main__":
    main()
