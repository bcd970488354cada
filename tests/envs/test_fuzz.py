"""A long random-play fuzz of the vector environment over every preset and option combination.

Random play (mostly legal actions, with refused and out-of-range ones mixed in) runs through
:class:`~forty_thieves_env.envs.vector.FortyThievesVectorEnv` for every preset with each
``run_moves`` (none, supermove, free), redeals (0 and 1), ``auto_play_safe`` (off, on), the
three observation modes and both autoreset modes. Every few hundred steps every game is
checked from the outside, through its position text:

* all 104 cards are in the game, each exactly twice (counted in plain Python);
* the mask is the reference engine's legal moves (:mod:`reference`, written from the rule
  pages, never calling the kernels);
* the observation is what the position text says (decoded through ``GameState``'s
  properties, as :func:`test_encoding.reference` does), and a player's observation holds no
  face-down card and no stock.

``test_fuzz_quick`` is the version of about a minute in ``make test``;
``test_fuzz_ten_million_steps`` (slow) is the long one, run with ``make test-slow`` and
reported in the closing note of issue 17.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np
import pytest
from reference import RefGame, reference_observation

from forty_thieves_env import PRESETS, format_move, parse_position
from forty_thieves_env.engine.cards import N_CARDS, N_CODES
from forty_thieves_env.envs.observation import FACE_DOWN
from forty_thieves_env.envs.vector import FortyThievesVectorEnv

OBSERVATIONS = ("dict", "flat", "oracle")
AUTORESETS = ("NextStep", "SameStep")


def combinations() -> list[dict]:
    """Every preset with every run-move rule, redeals 0/1 and auto-play off/on; the observation
    and autoreset modes cycle through them so that each meets every preset."""
    out = []
    modes = itertools.cycle(itertools.product(OBSERVATIONS, AUTORESETS))
    for name in PRESETS:
        for run_moves, redeals, auto in itertools.product(("none", "supermove", "free"), (0, 1), (False, True)):
            observation, autoreset = next(modes)
            out.append(
                {
                    "variant": name,
                    "run_moves": run_moves,
                    "redeals": redeals,
                    "auto_play_safe": auto,
                    "observation": observation,
                    "autoreset_mode": autoreset,
                }
            )
    return out


@dataclass
class Tally:
    """What a fuzz run did and found."""

    steps: int = 0  # game steps (games x vector steps)
    checks: int = 0  # games checked from the outside
    refused: int = 0  # actions the env refused (illegal or out of range)
    episodes: int = 0  # episodes ended (terminated or truncated)
    violations: list[str] = field(default_factory=list)


def expected_observation(text: str, mode: str) -> np.ndarray | dict[str, np.ndarray]:
    """The observation a position's text calls for, built from ``GameState``'s properties."""
    ref = reference_observation(parse_position(text))
    fields = ("tableau", "waste", "foundations", "counts") + (("stock", "tableau_revealed") if mode == "oracle" else ())
    obs = {k: ref[k] for k in fields}
    if mode == "flat":
        return np.concatenate([a.ravel() for a in obs.values()])
    return obs


def check_game(venv: FortyThievesVectorEnv, i: int, obs, mask: np.ndarray) -> list[str]:
    """The problems of game ``i`` (its observation ``obs`` and mask row ``mask``), from the outside."""
    problems = []
    text = venv.position_text(i)
    game = parse_position(text)  # itself refuses a third copy or a missing card
    counts = np.zeros(N_CODES, dtype=np.int64)
    for col in game.columns:
        np.add.at(counts, col, 1)
    np.add.at(counts, game.stock, 1)
    np.add.at(counts, game.waste, 1)
    for p, h in enumerate(game.foundations):
        counts[(p // 2) * 13 : (p // 2) * 13 + h] += 1
    if counts.sum() != N_CARDS or (counts != 2).any():
        problems.append(f"card counts {counts.tolist()}")
    ref = RefGame.from_state(game).legal_moves()
    got = {format_move(game.variant, int(a)) for a in np.flatnonzero(mask)}
    if got != ref:
        problems.append(f"mask {sorted(got ^ ref)} differs from the reference")
    want = expected_observation(text, venv.observation_mode)
    if isinstance(want, dict):
        for key, value in want.items():
            if not np.array_equal(obs[key], value):
                problems.append(f"observation field {key}")
        if venv.observation_mode != "oracle" and set(obs) != set(want):
            problems.append(f"observation keys {sorted(obs)}")
    elif not np.array_equal(obs, want):
        problems.append("flat observation")
    if venv.observation_mode != "oracle":  # a player's view: every face-down card hidden
        c, d = game.variant.columns, game.variant.max_depth
        tableau = obs["tableau"] if isinstance(obs, dict) else obs[: c * d]
        if int((tableau == FACE_DOWN).sum()) != sum(game.face_down):
            problems.append("a face-down card shows in the observation")
    return [f"{text.splitlines()[0]} game {i}: {p}" for p in problems]


def fuzz(total_steps: int, n_games: int = 16, check_every: int = 200, seed: int = 0) -> Tally:
    """Random play over :func:`combinations`, ``total_steps`` game steps split evenly among them."""
    tally = Tally()
    combos = combinations()
    per_combo = max(1, total_steps // (len(combos) * n_games))
    rng = np.random.default_rng(seed)
    for k, combo in enumerate(combos):
        venv = FortyThievesVectorEnv(n_games, max_episode_steps=300, **combo)
        obs, infos = venv.reset(seed=seed + 1000 * k)
        n = venv.n_actions
        for step in range(per_combo):
            actions = venv.random_legal_actions(rng)
            wild = rng.random(n_games) < 0.02  # refused actions (in the action space: others raise)
            actions[wild] = rng.integers(0, n, size=int(wild.sum()))
            obs, _, terminated, truncated, infos = venv.step(actions)
            tally.steps += n_games
            tally.refused += int(infos["illegal_action"].sum())
            tally.episodes += int((terminated | truncated).sum())
            if step % check_every == check_every - 1 or step == per_combo - 1:
                masks = venv.action_masks()
                if not np.array_equal(masks, infos["action_mask"]):
                    tally.violations.append(f"{combo}: infos['action_mask'] differs from action_masks()")
                for i in range(n_games):
                    one = {key: v[i] for key, v in obs.items()} if isinstance(obs, dict) else obs[i]
                    tally.violations += check_game(venv, i, one, masks[i])
                    tally.checks += 1
        venv.close()
    return tally


def test_fuzz_quick() -> None:
    start = time.perf_counter()
    tally = fuzz(total_steps=1_000_000, n_games=16, check_every=150, seed=1)
    elapsed = time.perf_counter() - start
    print(f"fuzz: {tally.steps} steps, {tally.checks} checks, {tally.refused} refused, {elapsed:.0f} s")
    assert tally.violations == [], tally.violations[:5]
    assert tally.steps >= 990_000 and tally.checks > 1000 and tally.refused > 0 and tally.episodes > 0


@pytest.mark.slow
def test_fuzz_ten_million_steps() -> None:
    start = time.perf_counter()
    tally = fuzz(total_steps=10_100_000, n_games=32, check_every=300, seed=2)
    elapsed = time.perf_counter() - start
    print(
        f"fuzz: {tally.steps} steps over {len(combinations())} combinations of 7 presets, {tally.checks} games "
        f"checked, {tally.refused} refused actions, {tally.episodes} episodes, {len(tally.violations)} violations, "
        f"{elapsed:.0f} s"
    )
    assert tally.violations == [], tally.violations[:5]
    assert tally.steps >= 10_000_000


def test_the_checks_catch_a_wrong_mask_observation_or_pack() -> None:
    venv = FortyThievesVectorEnv(2, "rank_and_file", observation="dict")
    obs, infos = venv.reset(seed=0)
    one = {key: v[0].copy() for key, v in obs.items()}
    mask = infos["action_mask"][0].copy()
    assert check_game(venv, 0, one, mask) == []
    wrong_mask = mask.copy()
    wrong_mask[np.flatnonzero(~mask)[0]] = True
    assert any("mask" in p for p in check_game(venv, 0, one, wrong_mask))
    peeked = {key: v.copy() for key, v in one.items()}
    peeked["tableau"][0, 0] = 5  # a face-down card shown
    found = check_game(venv, 0, peeked, mask)
    assert any("tableau" in p for p in found) and any("face-down" in p for p in found)
    venv._batch.states[0, 0] -= 1  # the stock one card short: a card goes missing
    with pytest.raises(ValueError, match="missing"):
        check_game(venv, 0, one, mask)
