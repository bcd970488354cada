"""The step kernel's incremental mask and observation against fresh ones.

:func:`forty_thieves_env.envs.step.step_one` recomputes only the mask entries and observation
slots that a move can change (:func:`~forty_thieves_env.engine.incremental.refresh_legal_mask`,
:func:`~forty_thieves_env.envs.observation.refresh_obs`). After every step of long random games, in
every variant the property tests use (every preset, supermove, auto-play, redeals), both
must equal what :func:`~forty_thieves_env.engine.rules.legal_mask` and the observation encoder
give for the new position from scratch, and a game must end exactly when nothing is legal.
"""

from __future__ import annotations

import numpy as np
import pytest
from cases import VARIANTS, variant_id

from forty_thieves_env import GameState, deal
from forty_thieves_env.engine.layout import Cfg
from forty_thieves_env.engine.rules import legal_mask
from forty_thieves_env.envs.observation import ObservationEncoder, encode_obs, flat_place, observation_layout
from forty_thieves_env.envs.rewards import make_reward
from forty_thieves_env.envs.step import G_LEGAL, G_LEN, P_LEN, P_ORACLE, ST_TERMINATED, step_one


@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_step_keeps_mask_and_observation_equal_to_fresh_ones(variant) -> None:
    rng = np.random.default_rng(7)
    spec = make_reward("foundation").spec()
    params = np.zeros(P_LEN, dtype=np.int64)
    params[P_ORACLE] = 1  # the oracle row holds every field of the other modes too
    encoder = ObservationEncoder(variant, "oracle")
    place = flat_place(observation_layout(variant, "oracle"))
    steps = 0
    for number in range(1, 7):
        game = deal(variant, number)
        s, cfg = game.array, game.cfg
        mask = np.zeros(cfg[Cfg.N_ACTIONS], dtype=np.bool_)
        fresh = mask.copy()
        obs = np.zeros_like(encoder.buffer)
        encode_obs(s, cfg, obs, place, True)
        g = np.zeros(G_LEN, dtype=np.int64)
        g[G_LEGAL] = legal_mask(s, cfg, mask)
        for _ in range(400):
            legal = np.flatnonzero(mask)
            # Mostly legal moves, preferring column moves (they change the most); some refused ones.
            if rng.random() < 0.1:
                action = int(rng.integers(-1, len(mask) + 1))
            else:
                column = legal[legal > 1 + variant.columns]
                pool = column if len(column) and rng.random() < 0.6 else legal
                action = int(pool[rng.integers(len(pool))])
            _, status, _, _ = step_one(s, cfg, mask, obs, place, spec, action, params, g)
            steps += 1
            n = legal_mask(s, cfg, fresh)
            np.testing.assert_array_equal(mask, fresh, err_msg=f"deal {number}, after action {action}")
            assert g[G_LEGAL] == n, f"deal {number}, after action {action}: kept count {g[G_LEGAL]}, {n} legal"

            encoder.encode(s)
            np.testing.assert_array_equal(obs, encoder.buffer, err_msg=f"deal {number}, after action {action}")
            if status & ST_TERMINATED:
                assert n == 0 or GameState(variant, s).is_won()
                break
            assert n > 0
    assert steps > 300
