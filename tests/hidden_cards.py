"""Positions met in random play, and the same positions with their hidden cards shuffled: what the
tests of the encoder (tests/envs/test_encoding.py) and of the policy networks
(tests/agents/training/networks/test_hidden_cards.py) hold a player's view to."""

from __future__ import annotations

import numpy as np

from forty_thieves_env import GameState, deal
from forty_thieves_env.engine.layout import Cfg, Slot


def random_states(variant: str, n_states: int, seed: int, stock_bias: float = 0.3) -> list[GameState]:
    """States met in random play from a few deals (turning the stock often, to reach redeals)."""
    rng = np.random.default_rng(seed)
    out: list[GameState] = []
    while len(out) < n_states:
        game = deal(variant, int(rng.integers(1, 10**6)))
        out.append(game.copy())
        for _ in range(150):
            legal = game.legal_actions()
            if not legal:
                break
            a = 0 if legal[0] == 0 and rng.random() < stock_bias else legal[int(rng.integers(len(legal)))]
            game.apply(a)
            if rng.random() < 0.15:
                out.append(game.copy())
    return out[:n_states]



def permute_hidden(game: GameState, rng: np.random.Generator) -> GameState | None:
    """The same position with its hidden cards (stock, face-down cards) shuffled among themselves."""
    s, cfg, v = game.array, game.cfg, game.variant
    slots = [int(cfg[Cfg.OFF_STOCK]) + k for k in range(int(s[Slot.STOCK_LEN]))]
    for i in range(v.columns):
        base = int(cfg[Cfg.OFF_TAB]) + i * v.max_depth
        slots += [base + k for k in range(int(s[cfg[Cfg.OFF_DOWN] + i]))]
    hidden = s[slots].copy()
    if len(set(hidden.tolist())) < 2:
        return None
    other = game.copy()
    perm = hidden
    while np.array_equal(perm, hidden):
        perm = rng.permutation(hidden)
    other.array[slots] = perm
    assert int(other.array[cfg[Cfg.OFF_LEN]]) == int(s[cfg[Cfg.OFF_LEN]])
    return other
