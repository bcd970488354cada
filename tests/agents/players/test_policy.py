"""The policy module (agents/players/policy.py): what a policy reads, and its greedy and sampled moves."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")

from agents.players.policy import (  # noqa: E402
    FLAT_FIELDS,
    greedy_actions,
    input_fields,
    legal_probabilities,
    policy_input,
    policy_logits,
    sample_move,
    sampled_actions,
)


def _rows(seed: int, n_rows: int, n: int = 112) -> tuple[np.ndarray, np.ndarray]:
    """Random float32 logits and masks with 1..n legal actions a row (a few with ties)."""
    rng = np.random.default_rng(seed)
    logits = (rng.normal(size=(n_rows, n)) * rng.choice([0.05, 1.0, 4.0, 20.0], size=(n_rows, 1))).astype(np.float32)
    logits[::7, 3] = logits[::7, 5]  # ties
    counts = rng.integers(1, n + 1, size=n_rows)
    counts[: n_rows // 2] = rng.integers(1, 40, size=n_rows // 2)  # the usual: a few legal moves
    masks = np.zeros((n_rows, n), dtype=bool)
    for i, k in enumerate(counts):
        masks[i, rng.choice(n, size=k, replace=False)] = True
    return logits, masks


def _agent_draw(logits: np.ndarray, legal: np.ndarray, rng: np.random.Generator, temperature: float) -> int:
    """The ppo agent's draw as it was written before the policy module (the pinned games' arithmetic)."""
    lg = logits[legal].astype(np.float64)
    if temperature != 1.0:
        lg = lg / temperature
    p = np.exp(lg - lg.max())
    return int(rng.choice(legal, p=p / p.sum()))


@pytest.mark.parametrize("temperature", [1.0, 0.5, 2.0])
def test_sampled_actions_are_the_per_game_draws_exactly(temperature: float) -> None:
    """Every row of the batched draw is the agent's ``rng.choice`` with the same generator state."""
    logits, masks = _rows(1, 3000)
    seeds = np.arange(len(logits)) + 100
    batched = sampled_actions(logits, masks, [np.random.default_rng(s) for s in seeds], temperature)
    single = [
        sample_move(logits[i], np.flatnonzero(masks[i]), np.random.default_rng(s), temperature)
        for i, s in enumerate(seeds)
    ]
    old = [
        _agent_draw(logits[i], np.flatnonzero(masks[i]), np.random.default_rng(s), temperature)
        for i, s in enumerate(seeds)
    ]
    assert single == old
    assert batched.tolist() == single
    assert masks[np.arange(len(batched)), batched].all()


def test_probabilities_are_the_agents_bit_for_bit() -> None:
    """A row of a batch gets the float64 probabilities its vector alone gets (the sums are numpy's per row)."""
    logits, _ = _rows(2, 200)
    for size in (1, 2, 7, 8, 9, 17, 40, 112):
        rows = range(50)
        block = np.stack([logits[i, :size] for i in rows])
        together = legal_probabilities(block, 0.7)
        for j, i in enumerate(rows):
            alone = legal_probabilities(logits[i, :size], 0.7)
            assert together[j].tobytes() == alone.tobytes()


def test_sampled_actions_follow_the_generators() -> None:
    """Each row draws with its own generator only: a row's move does not depend on the others'."""
    logits, masks = _rows(3, 40)
    whole = sampled_actions(logits, masks, [np.random.default_rng(s) for s in range(40)])
    part = sampled_actions(logits[10:20], masks[10:20], [np.random.default_rng(s) for s in range(10, 20)])
    assert part.tolist() == whole[10:20].tolist()
    other = sampled_actions(logits, masks, [np.random.default_rng(s + 1000) for s in range(40)])
    assert other.tolist() != whole.tolist()
    with pytest.raises(ValueError, match="generators"):
        sampled_actions(logits, masks, [np.random.default_rng(0)])
    masks[4] = False
    with pytest.raises(ValueError, match="row 4 has no legal action"):
        sampled_actions(logits, masks, [np.random.default_rng(s) for s in range(40)])


def test_greedy_actions() -> None:
    """The most likely legal action; the lowest index on a tie; an illegal larger logit is ignored."""
    logits = torch.tensor([[0.0, 3.0, 3.0, 9.0], [1.0, 1.0, 1.0, 1.0], [-5.0, -4.0, 2.0, 0.0]])
    masks = torch.tensor([[True, True, True, False], [False, True, True, True], [True, True, False, False]])
    assert greedy_actions(logits, masks).tolist() == [1, 1, 1]
    lg, mk = _rows(4, 500)
    for i, a in enumerate(greedy_actions(torch.from_numpy(lg), torch.from_numpy(mk)).tolist()):
        legal = np.flatnonzero(mk[i])
        assert a == int(legal[np.argmax(lg[i, legal].astype(np.float64))])  # the agent's argmax


def _policy(observation: str):
    from forty_thieves_env.envs.env import FortyThievesEnv

    env = FortyThievesEnv("classic", observation=observation)
    policy = "MultiInputPolicy" if observation != "flat" else "MlpPolicy"
    model = sb3_contrib.MaskablePPO(policy, env, seed=3, policy_kwargs={"net_arch": [16]}, n_steps=64, device="cpu")
    return model.policy


def test_flat_policy_input_is_the_flat_observation() -> None:
    """A flat policy fed a dict observation reads its player fields concatenated: the flat rows."""
    from forty_thieves_env.envs.torch_games import TorchGames

    policy = _policy("flat")
    assert input_fields(policy) == FLAT_FIELDS
    flat = TorchGames(5, "classic", observation="flat", seed=2, num_threads=1)
    oracle = TorchGames(5, "classic", observation="oracle", seed=2, num_threads=1)
    rows = torch.tensor([4, 1, 3])
    from_rows = policy_input(policy, flat.reset()[0], rows)
    from_dict = policy_input(policy, oracle.reset()[0], rows)
    assert torch.equal(from_rows, from_dict)
    as_numpy = policy_input(policy, {k: v.numpy() for k, v in oracle.obs.items()}, rows.numpy())
    assert np.array_equal(as_numpy, from_dict.numpy())
    # The logits of a batch of tensors are those of SB3's own input path (numpy, obs_to_tensor).
    torch.testing.assert_close(policy_logits(policy, from_dict), policy_logits(policy, as_numpy), rtol=0, atol=0)


def test_dict_policy_reads_its_fields() -> None:
    from forty_thieves_env.envs.torch_games import TorchGames

    player, oracle = _policy("dict"), _policy("oracle")
    assert "stock" not in input_fields(player) and "stock" in input_fields(oracle)
    obs = TorchGames(3, "classic", observation="oracle", seed=1, num_threads=1).reset()[0]
    assert set(policy_input(player, obs)) == set(input_fields(player))  # the hidden stock left out
    dict_obs = TorchGames(3, "classic", seed=1, num_threads=1).reset()[0]
    with pytest.raises(ValueError, match=r"\['stock', 'tableau_revealed'\].*hidden cards"):
        policy_input(oracle, dict_obs)
    with pytest.raises(ValueError, match="not flat observation rows"):
        policy_input(player, torch.zeros(3, 10, dtype=torch.int8))
