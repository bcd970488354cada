"""A warm start by imitation: a teacher agent's moves, cloned into the policy before PPO.

PPO from a random policy on classic Forty Thieves sees a win about once in a million moves, so
its signal is the foundation reward alone and it plateaus far below the hand-written players.
Starting it from a policy that already plays like a teacher puts it where wins happen:

1. :func:`collect` plays ``games`` training deals with a teacher agent (any registered
   player that reads the ``Dict`` observation: ``heuristic``, ``lookahead``), in worker
   processes, and records every position it met as the env's observation, the legal-move
   mask, the teacher's move and the discounted return that followed (the env's reward).
   With a ``student`` model (DAgger), the student chooses the moves played (the teacher still
   labels every position), so the data covers the positions the student's own mistakes lead
   to; ``beta`` is the share of moves the teacher still plays.
2. :func:`clone` fits the policy to it: cross-entropy of the masked policy on the teacher's
   move (SB3's ``evaluate_actions``) plus ``vf_coef`` times the squared error of the value on
   the return, so PPO starts with a critic that knows the teacher's games too.

The teacher's seed per deal is :func:`agents.evaluation.evaluate.agent_seed` of the run's seed,
and the deals are drawn from the training range with the run's seed: the data set is
reproducible from the config.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from agents.datasets.demonstrations import FIELDS, Demonstrations
from forty_thieves_env.envs.resolved import ResolvedEnv

# ------------------------------------------------------------------------------ playing

_W: dict[str, Any] = {}


def _init(
    env: ResolvedEnv, teacher: str, teacher_kwargs: dict[str, Any], student: str | None, gamma: float, idle_cut: int
) -> None:
    from agents.players.base import make_agent

    game = env.derive(observation="dict").make()  # a player's view: what the teacher and the student read
    variant = game.variant
    _W.update(env=game, teacher=make_agent(teacher, variant, **teacher_kwargs), gamma=gamma, student=None)
    _W["idle_cut"] = idle_cut
    if student is not None:
        import torch

        torch.set_num_threads(1)
        _W["student"] = make_agent("ppo", variant, model=student, deterministic=False)


def _play(job: tuple[list[int], int, float]) -> Demonstrations:
    from agents.evaluation.games import agent_seed
    from forty_thieves_env.envs.registration import MAX_EPISODE_STEPS

    deals, seed, beta = job
    env, teacher, student, gamma = _W["env"], _W["teacher"], _W["student"], _W["gamma"]
    rows: dict[str, list[np.ndarray]] = {k: [] for k in FIELDS}
    masks, actions, returns, won, home, lengths = [], [], [], [], [], []
    for deal in deals:
        obs, info = env.reset(options={"deal": int(deal)})
        teacher.reset(seed=agent_seed(seed, deal))
        rng = np.random.default_rng([seed, int(deal)])
        if student is not None:
            student.reset(seed=agent_seed(seed + 1, deal))
        rewards = []
        idle = 0
        for _ in range(MAX_EPISODE_STEPS):
            mask = info["action_mask"]
            for k in FIELDS:
                rows[k].append(obs[k].copy())
            masks.append(mask.copy())
            label = teacher.act(obs, mask)
            actions.append(label)
            move = label
            if student is not None and rng.random() >= beta:
                move = student.act(obs, mask)
            obs, reward, term, trunc, info = env.step(move)
            rewards.append(reward)
            idle = 0 if (reward > 0 or move == 0) else idle + 1
            if term or trunc or idle >= _W["idle_cut"]:
                break
        g, acc = np.float32(gamma), np.float32(0.0)
        out = np.empty(len(rewards), np.float32)
        for t in range(len(rewards) - 1, -1, -1):
            acc = np.float32(rewards[t]) + g * acc
            out[t] = acc
        returns.append(out)
        lengths.append(len(out))
        won.append(bool(info["won"]))
        home.append(int(info["cards_on_foundations"]))
    return Demonstrations(
        obs={k: np.stack(v) for k, v in rows.items()},
        masks=np.stack(masks),
        actions=np.asarray(actions, np.int64),
        returns=np.concatenate(returns),
        games=np.asarray(deals, np.int64),
        won=np.asarray(won),
        home=np.asarray(home, np.int64),
        lengths=np.asarray(lengths, np.int64),
    )


def collect(
    env: ResolvedEnv | str,
    deals: Sequence[int],
    teacher: str = "heuristic",
    *,
    teacher_kwargs: dict[str, Any] | None = None,
    student: str | None = None,
    beta: float = 0.0,
    seed: int = 0,
    gamma: float = 0.995,
    workers: int = 2,
    chunk: int = 25,
    idle_cut: int = 100,
    log: Callable[[str], None] | None = print,
) -> Demonstrations:
    """The teacher's (or, with ``student``, the student's) games on ``deals``, labelled by the teacher.

    Args:
        env: The run's env (its rules and reward; played with the ``Dict`` observation), or a
            registered env id.
        deals: Deal numbers, one game each.
        teacher: Registered agent name.
        teacher_kwargs: The teacher's constructor options.
        student: A model (path or shipped name) that plays the moves (DAgger), or None.
        beta: With a student, the share of moves the teacher plays instead.
        seed: Seeds the teacher and the student per deal.
        gamma: Discount of the recorded returns.
        workers: Processes.
        idle_cut: End a game after this many moves in a row without a card home or a stock
            turn (the teacher shuffling cards about with the stock spent teaches nothing).
        chunk: Deals per task.
        log: Progress lines (None: quiet).
    """
    jobs = [([int(d) for d in deals[i : i + chunk]], seed, beta) for i in range(0, len(deals), chunk)]
    if isinstance(env, str):
        env = ResolvedEnv.resolve(env)
    args = (env, teacher, dict(teacher_kwargs or {}), student, gamma, idle_cut)
    t0 = time.monotonic()
    parts: list[Demonstrations] = []
    if workers <= 1:  # in this process: put back the torch threads a student's _init sets to 1
        threads = _torch_threads()
        try:
            _init(*args)
            parts = [_play(job) for job in jobs]
        finally:
            if threads:
                import torch

                torch.set_num_threads(threads)
    else:
        with ProcessPoolExecutor(workers, initializer=_init, initargs=args) as pool:
            for i, part in enumerate(pool.map(_play, jobs)):
                parts.append(part)
                if log is not None and (i + 1) % max(1, len(jobs) // 10) == 0:
                    n = sum(len(p.games) for p in parts)
                    log(f"  {teacher}: {n}/{len(deals)} games, {time.monotonic() - t0:.0f} s")
    data = Demonstrations.concat(parts)
    if log is not None:
        who = teacher if student is None else f"student (beta {beta}) labelled by {teacher}"
        log(
            f"collected {len(data):,} positions from {len(data.games)} games of {who}: "
            f"won {data.won.mean():.1%}, {data.home.mean():.1f} cards home, {time.monotonic() - t0:.0f} s"
        )
    return data


def _torch_threads() -> int:
    """torch's thread count when torch is already imported (0 otherwise: nothing to restore)."""
    import sys

    torch = sys.modules.get("torch")
    return int(torch.get_num_threads()) if torch is not None else 0


# ------------------------------------------------------------------------------ cloning


def clone(
    policy: Any,
    data: Demonstrations,
    *,
    epochs: int = 4,
    batch_size: int = 1024,
    learning_rate: float = 1e-3,
    vf_coef: float = 0.5,
    max_grad_norm: float = 1.0,
    holdout: float = 0.05,
    seed: int = 0,
    targets: str = "move",
    decisive_weight: float = 1.0,
    log: Callable[[str], None] | None = print,
) -> dict[str, float]:
    """Fit an SB3 maskable policy to ``data`` (see the module docstring); return the last epoch's figures.

    ``holdout`` of the *games* is kept out of training to report the accuracy on unseen deals
    (the share of positions where the most likely legal move is the teacher's), and on the
    decisive ones alone when ``data`` marks them (``holdout_decisive_accuracy``).

    With ``targets="votes"`` the positions whose search teacher split its votes between moves
    (``data.soft_rows``) are fitted to the vote shares (cross-entropy with the shares) instead of
    the move played; ``decisive_weight`` weighs the loss of the decisive positions
    (``data.decisive``) against the others' 1. Without either, the fit is the plain cross-entropy
    on the teacher's move (SB3's ``evaluate_actions``).
    """
    import torch

    from agents.players.policy import masked_log_probs, policy_forward

    rng = np.random.default_rng(seed)
    game_of_row = np.repeat(np.arange(len(data.games)), data.lengths)
    held_games = rng.random(len(data.games)) < holdout
    held = held_games[game_of_row]
    train_idx, test_idx = np.flatnonzero(~held), np.flatnonzero(held)
    dev = policy.device
    obs_t = {k: torch.as_tensor(v, device=dev) for k, v in data.obs.items()}
    masks_t = torch.as_tensor(data.masks, device=dev)
    actions_t = torch.as_tensor(data.actions, device=dev)
    returns_t = torch.as_tensor(data.returns, device=dev)
    # What the search knew: per-row loss weights and, where its votes split, the shares.
    soft = targets == "votes" and data.soft_rows is not None and len(data.soft_rows) > 0
    weighted = decisive_weight != 1.0 and data.decisive is not None
    weights_t = soft_t = soft_index_t = None
    if weighted:
        assert data.decisive is not None
        weights_t = torch.as_tensor(np.where(data.decisive, decisive_weight, 1.0).astype(np.float32), device=dev)
    if soft:
        assert data.soft_rows is not None and data.soft_targets is not None
        index = np.full(len(data), -1, np.int64)
        index[data.soft_rows] = np.arange(len(data.soft_rows))
        soft_index_t = torch.as_tensor(index, device=dev)
        soft_t = torch.as_tensor(data.soft_targets, device=dev)
    opt = torch.optim.Adam(policy.parameters(), lr=learning_rate, eps=1e-5)
    stats: dict[str, float] = {}
    for epoch in range(epochs):
        policy.set_training_mode(True)
        order = rng.permutation(train_idx)
        lr = learning_rate * 0.5 * (1 + math.cos(math.pi * epoch / max(1, epochs)))  # cosine decay per epoch
        for group in opt.param_groups:
            group["lr"] = lr
        t0, tot, n = time.monotonic(), {"nll": 0.0, "vf": 0.0}, 0
        for start in range(0, len(order), batch_size):
            idx = torch.as_tensor(order[start : start + batch_size], device=dev)
            obs = {k: v.index_select(0, idx) for k, v in obs_t.items()}
            masks, actions = masks_t.index_select(0, idx), actions_t.index_select(0, idx)
            if soft or weighted:
                logits, values = policy_forward(policy, obs)
                log_probs, _ = masked_log_probs(logits, masks)  # (B, n)
                per_row = -log_probs.gather(1, actions.unsqueeze(1)).squeeze(1)
                if soft_t is not None and soft_index_t is not None:
                    k = soft_index_t.index_select(0, idx)
                    split = k >= 0
                    if bool(split.any()):
                        shares = soft_t.index_select(0, k[split])
                        per_row = per_row.clone()
                        per_row[split] = -(shares * log_probs[split]).sum(1)
                if weights_t is not None:
                    w = weights_t.index_select(0, idx)
                    nll = (w * per_row).sum() / w.sum().clamp(min=1e-8)
                else:
                    nll = per_row.mean()
            else:
                values, log_prob, _ = policy.evaluate_actions(obs, actions, action_masks=masks)
                nll = -log_prob.mean()
            vf = torch.nn.functional.mse_loss(values.flatten(), returns_t.index_select(0, idx))
            loss = nll + vf_coef * vf
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
            opt.step()
            tot["nll"] += float(nll.detach()) * len(idx)
            tot["vf"] += float(vf.detach()) * len(idx)
            n += len(idx)
        stats = {"epoch": epoch + 1, "nll": tot["nll"] / max(n, 1), "value_mse": tot["vf"] / max(n, 1)}
        stats["train_accuracy"] = _accuracy(policy, obs_t, masks_t, actions_t, order[:20000])
        if len(test_idx):
            stats["holdout_accuracy"] = _accuracy(policy, obs_t, masks_t, actions_t, test_idx)
            if data.decisive is not None:
                decisive_idx = test_idx[data.decisive[test_idx]]
                if len(decisive_idx):
                    stats["holdout_decisive_accuracy"] = _accuracy(policy, obs_t, masks_t, actions_t, decisive_idx)
        if log is not None:
            figures = ", ".join(f"{k} {v:.4f}" for k, v in stats.items() if k != "epoch")
            log(f"  clone epoch {epoch + 1}/{epochs}: {figures} ({time.monotonic() - t0:.0f} s)")
    policy.set_training_mode(False)
    return stats


def _accuracy(policy: Any, obs_t: dict[str, Any], masks_t: Any, actions_t: Any, idx: np.ndarray) -> float:
    import torch

    hits = 0
    with torch.no_grad():
        for start in range(0, len(idx), 4096):
            i = torch.as_tensor(idx[start : start + 4096], device=masks_t.device)
            obs = {k: v.index_select(0, i) for k, v in obs_t.items()}
            dist = policy.get_distribution(obs, action_masks=masks_t.index_select(0, i))
            hits += int((dist.distribution.probs.argmax(1) == actions_t.index_select(0, i)).sum())
    return hits / max(len(idx), 1)
