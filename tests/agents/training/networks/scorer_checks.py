"""A check both move-scoring networks must pass, and the positions they are tested on
(imported by their test files)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch

from forty_thieves_env.engine.actions import Kind, encode
from forty_thieves_env.engine.variants import get_variant


def played_positions(env_id: str, n: int, moves: int, seed: int, random_lengths: bool) -> dict[str, torch.Tensor]:
    """``n`` positions reached by random legal play from deals 1..n, as a batch.

    Each game plays ``moves`` moves, or with ``random_lengths`` a number drawn from ``[0, moves)``
    (fewer where the game ends first); the moves and lengths come from one generator seeded ``seed``.
    """
    env = gym.make(env_id)
    rng = np.random.default_rng(seed)
    rows = []
    for deal in range(1, n + 1):
        obs, info = env.reset(options={"deal": deal})
        for _ in range(int(rng.integers(0, moves)) if random_lengths else moves):
            obs, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            if term or trunc:
                break
        rows.append(obs)
    return {k: torch.as_tensor(np.stack([r[k] for r in rows])) for k in rows[0]}


def assert_logits_follow_the_columns(net: torch.nn.Module, name: str, obs: dict[str, torch.Tensor]) -> None:
    """Swapping two columns of the table swaps the logits of the moves that name them.

    A scorer shares its weights between columns, so this holds exactly when every logit sits at
    the action number the codec gives its move; a slip in the codec order breaks it.
    """
    variant = get_variant(name)
    swap = [3, 1, 2, 0, 4, 5, 6, 7, 8, 9]  # columns 0 and 3 exchanged
    obs2 = dict(obs, tableau=obs["tableau"][:, swap])
    with torch.no_grad():
        a = net(obs)[:, : net.n_actions]
        b = net(obs2)[:, : net.n_actions]
    c = variant.columns

    def moved(kind: int, src: int = -1, dst: int = -1, k: int = 1) -> int:
        return encode(variant, kind, swap[src] if src >= 0 else -1, swap[dst] if dst >= 0 else -1, k)

    pairs = [(encode(variant, Kind.STOCK), moved(Kind.STOCK)), (1, 1)]
    for j in range(c):
        pairs.append((encode(variant, Kind.WASTE_COLUMN, dst=j), moved(Kind.WASTE_COLUMN, dst=j)))
        pairs.append((encode(variant, Kind.COLUMN_FOUNDATION, src=j), moved(Kind.COLUMN_FOUNDATION, src=j)))
        for i in range(c):
            for k in sorted({1, min(2, variant.max_run), variant.max_run}):
                if i != j:
                    pairs.append((encode(variant, Kind.COLUMN_COLUMN, i, j, k), moved(Kind.COLUMN_COLUMN, i, j, k)))
    old, new = zip(*pairs, strict=True)
    torch.testing.assert_close(a[:, list(old)], b[:, list(new)], rtol=1e-5, atol=1e-5)
    assert len(set(old)) == len(old)
    assert not torch.allclose(a[:, list(old)], a[:, list(new)])  # the swap does change the table
