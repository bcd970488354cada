"""The lookup-table move scorer: its compiled facts, logits in the codec's order, its fast
gradient, the once-masked distribution, and the SB3 wiring."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from scorer_checks import assert_logits_follow_the_columns, played_positions

import forty_thieves_env  # noqa: F401
from agents.training.networks.card_facts import CARD_ROWS, FACT_STARTS, N_DIST
from agents.training.networks.lookup_scorer import LookupScorer, LookupScorerPolicy, row_sum
from agents.training.networks.masked_distribution import OnceMaskedCategoricalDistribution
from agents.training.networks.move_scorer import MoveScorer
from forty_thieves_env.engine.layout import Cfg
from forty_thieves_env.envs.observation import FACE_DOWN, NO_CARD

IDS = {"classic": "FortyThieves-v0", "relaxed": "FortyThieves-Relaxed-v0", "streets": "FortyThieves-Streets-v0"}


def _observations(env_id: str, n: int = 8, moves: int = 40) -> dict[str, torch.Tensor]:
    """``n`` positions after up to ``moves`` random legal moves from deals 1..n, as a batch."""
    return played_positions(env_id, n, moves, seed=1, random_lengths=True)


def _scorer(env_id: str, **kwargs: object) -> LookupScorer:
    env = gym.make(env_id)
    variant = env.unwrapped.variant
    torch.manual_seed(0)
    net = LookupScorer(env.observation_space, max_run=variant.max_run, alternate=variant.build == "alternate", **kwargs)
    for p in net.parameters():  # big random weights: every logit differs
        torch.nn.init.normal_(p, std=0.5)
    return net.eval()


@pytest.mark.parametrize("name", ["classic", "streets", "relaxed"])
def test_facts_match_the_reference(name: str) -> None:
    """The compiled facts of every read slot against the torch implementation of the
    ``move_scorer`` network (distances, fits, builders out) and a direct walk of the column."""
    env_id = IDS[name]
    net = _scorer(env_id, top_cards=4, waste_cards=3)
    ref = MoveScorer(gym.make(env_id).observation_space, alternate=bool(net.cfg[Cfg.ALTERNATE]))
    obs = _observations(env_id)
    col, glob, _ = net.facts(obs)
    tableau, waste, heights = obs["tableau"].long(), obs["waste"].long(), obs["foundations"].float()
    b, c, d = tableau.shape
    lengths = (tableau != NO_CARD).sum(-1)
    tops = torch.stack(
        [
            tableau[i, j, lengths[i, j] - 1] if lengths[i, j] else torch.tensor(NO_CARD)
            for i in range(b)
            for j in range(c)
        ]
    ).view(b, c)
    dist = ref._distances(heights)
    fits, out = ref._facts(tops, heights)
    n_fact = 4 * net.top_cards
    for i in range(b):
        for j in range(c):
            n = int(lengths[i, j])
            cards = [int(tableau[i, j, n - 1 - k]) if k < n else NO_CARD for k in range(net.top_cards)]
            for k, x in enumerate(cards):
                row = col[i, j, 4 * k : 4 * k + 4] - k * CARD_ROWS - torch.as_tensor(FACT_STARTS)
                want_fit = int(fits[i, x]) if x < 52 else 2
                want_out = int(out[i, x]) if x < 52 else 5
                assert row.tolist() == [x, int(dist[i, x]), want_fit, want_out], (i, j, k)
            # run on top, dig card, length and face-down count, from a walk of the column
            run = 0
            if n:
                run = 1
                while run < n:
                    x, under = int(tableau[i, j, n - run]), int(tableau[i, j, n - 1 - run])
                    if x >= 52 or under >= 52 or not _builds(x, under, name == "streets"):
                        break
                    run += 1
            depth_dist = [int(dist[i, int(tableau[i, j, n - 1 - k])]) for k in range(n)]
            best = min(depth_dist, default=N_DIST - 1)
            best_k = depth_dist.index(best) if n else 0
            extra = col[i, j, n_fact:].tolist()
            o = net.top_cards * CARD_ROWS
            assert extra == [
                o + run,
                o + d + 1 + best,
                o + d + 1 + N_DIST + best_k,
                o + d + 1 + N_DIST + d + n,
                o + d + 1 + N_DIST + d + d + 1 + int((tableau[i, j] == FACE_DOWN).sum()),
            ], (i, j)
        # the table: pile heights, stock size, redeals left, waste size, the top waste cards' facts
        t = waste.shape[1]
        counts = obs["counts"][i].long().tolist()
        n_waste = int((waste[i] != NO_CARD).sum())
        piles = 8 * 14
        assert glob[i, :8].tolist() == [p * 14 + int(heights[i, p]) for p in range(8)]
        assert glob[i, 8:11].tolist() == [
            piles + counts[0],
            piles + t + 1 + counts[1],
            piles + t + 1 + net.redeal_rows + n_waste,
        ]
        base = piles + 2 * (t + 1) + net.redeal_rows
        for k in range(net.waste_cards):
            x = int(waste[i, t - 1 - k])
            got = glob[i, 11 + 4 * k : 15 + 4 * k] - base - k * CARD_ROWS - torch.as_tensor(FACT_STARTS)
            want = [x, int(dist[i, x]), int(fits[i, x]) if x < 52 else 2, int(out[i, x]) if x < 52 else 5]
            assert got.tolist() == want, (i, k)


def _builds(card: int, under: int, alternate: bool) -> bool:
    """``card`` sits on ``under`` in order (the build rule written out)."""
    if under % 13 != card % 13 + 1:
        return False
    if alternate:
        return (card // 13 >= 2) != (under // 13 >= 2)
    return card // 13 == under // 13


@pytest.mark.parametrize("name", ["classic", "relaxed"])
def test_logits_follow_the_columns(name: str) -> None:
    """Swapping two columns swaps the logits of the moves that name them (the codec order)."""
    assert_logits_follow_the_columns(_scorer(IDS[name]), name, _observations(IDS[name]))


def test_row_sum_gradient() -> None:
    """The compiled backward of ``row_sum`` gives ``embedding_bag``'s gradient, repeated rows included."""
    torch.manual_seed(0)
    rows = torch.randint(0, 7, (50, 5))
    rows[0] = 3  # one sample naming the same row five times
    table = torch.randn(7, 4, requires_grad=True)
    weight = torch.randn(50, 4)
    (row_sum(rows, table) * weight).sum().backward()
    ours = table.grad.clone()
    table.grad = None
    (torch.nn.functional.embedding_bag(rows, table, mode="sum") * weight).sum().backward()
    torch.testing.assert_close(ours, table.grad)
    torch.testing.assert_close(row_sum(rows, table), table[rows].sum(1))


def test_distribution_matches_sb3() -> None:
    """Log-probabilities, entropy and modes equal sb3-contrib's; samples follow the masked
    probabilities and never pick a masked action."""
    from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution

    torch.manual_seed(0)
    logits = torch.randn(64, 112) * 3
    masks = torch.rand(64, 112) < 0.1
    masks[:, 7] = True
    stock = MaskableCategoricalDistribution(112).proba_distribution(logits)
    stock.apply_masking(masks)
    ours = OnceMaskedCategoricalDistribution(112).proba_distribution(logits)
    ours.apply_masking(masks)
    actions = torch.multinomial(masks.float(), 1).squeeze(1)
    torch.testing.assert_close(ours.log_prob(actions), stock.log_prob(actions), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ours.entropy(), stock.entropy(), rtol=1e-5, atol=1e-5)
    assert torch.equal(ours.mode(), stock.mode())

    n = 40000
    row = torch.tensor([[0.5, 9.0, -1.0, 1.0, 9.0, 0.0]]).repeat(n, 1)
    mask = torch.tensor([[True, False, True, True, False, True]]).repeat(n, 1)
    dist = OnceMaskedCategoricalDistribution(6).proba_distribution(row)
    dist.apply_masking(mask)
    freq = torch.bincount(dist.sample(), minlength=6).float() / n
    assert freq[1] == 0 and freq[4] == 0
    torch.testing.assert_close(freq, dist.distribution.probs[0], atol=0.01, rtol=0)
    plain = OnceMaskedCategoricalDistribution(6).proba_distribution(row[:2])  # no masks: the plain softmax
    torch.testing.assert_close(plain.distribution.probs, torch.softmax(row[:2], -1))


@pytest.mark.parametrize("name", ["classic", "relaxed"])
def test_policy_masks_trains_and_reloads(name: str, tmp_path) -> None:
    """MaskablePPO builds the policy, plays only legal moves, takes a gradient step, and a saved
    model gives the same logits after loading."""
    from sb3_contrib import MaskablePPO

    env = gym.make(IDS[name])
    model = MaskablePPO(LookupScorerPolicy, env, n_steps=32, batch_size=16, n_epochs=1, seed=0, verbose=0)
    assert isinstance(model.policy.action_net, torch.nn.Identity)
    obs, info = env.reset(options={"deal": 5})
    for _ in range(20):
        action, _ = model.predict(obs, action_masks=info["action_mask"])
        assert info["action_mask"][int(action)]
        obs, _, term, trunc, info = env.step(int(action))
        if term or trunc:
            obs, info = env.reset()
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(64)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True))
    model.save(tmp_path / "m.zip")
    loaded = MaskablePPO.load(tmp_path / "m.zip")
    batch = _observations(IDS[name], n=3)
    with torch.no_grad():
        torch.testing.assert_close(
            loaded.policy.features_extractor(batch), model.policy.features_extractor(batch), rtol=1e-6, atol=1e-6
        )


def test_asymmetric_critic_reads_the_stock_and_the_logits_do_not() -> None:
    """With ``critic_stock`` the value reads the oracle's stock; the logits are the same whatever the
    stock holds, and with the oracle fields left out altogether (as a player's observation)."""
    env = gym.make("FortyThieves-v0", observation="oracle")
    net = LookupScorer(env.observation_space, critic_stock=24)
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.5)
    net.eval()
    oracle = []
    for deal in range(1, 7):
        obs, _ = env.reset(options={"deal": deal})
        oracle.append(obs)
    batch = {k: torch.as_tensor(np.stack([o[k] for o in oracle])) for k in oracle[0]}
    shuffled = dict(batch)
    gen = torch.Generator().manual_seed(0)
    shuffled["stock"] = batch["stock"][:, torch.randperm(batch["stock"].shape[1], generator=gen)]
    shuffled["tableau_revealed"] = torch.zeros_like(batch["tableau_revealed"])
    player = {k: v for k, v in batch.items() if k in LookupScorer.actor_fields}
    assert set(player) == {"tableau", "waste", "foundations", "counts"}
    n = net.n_actions
    with torch.no_grad():
        out, out_shuffled, out_player = net(batch), net(shuffled), net(player)
    torch.testing.assert_close(out[:, :n], out_shuffled[:, :n], rtol=0, atol=0)
    torch.testing.assert_close(out[:, :n], out_player[:, :n], rtol=0, atol=0)
    assert not torch.equal(out[:, n:], out_shuffled[:, n:])  # the critic reads the stock order
    assert not torch.equal(out[:, n:], out_player[:, n:])


def test_stock_rows_distance_from_home() -> None:
    """A stock card's distance row is its rank less its suit's higher foundation (0 when it can go home)."""
    env = gym.make("FortyThieves-v0", observation="oracle")
    net = LookupScorer(env.observation_space, critic_stock=3)
    found = torch.zeros(1, 8, dtype=torch.int8)
    found[0, 2] = 2  # spades (suit 1): the 2 is home on one pile
    stock = torch.full((1, 64), NO_CARD, dtype=torch.int8)
    stock[0, 0] = 13 + 2  # the 3 of spades: goes home now
    stock[0, 1] = 13 + 6  # the 7 of spades: 4 cards to go
    rows = net.stock_rows({"stock": stock, "foundations": found})
    k = 3
    assert rows[0, :k].tolist() == [15, 19 + (NO_CARD + 1), NO_CARD + 2 * (NO_CARD + 1)]
    base = k * (NO_CARD + 1)
    assert (rows[0, k:] - net.dist_offsets).tolist() == [0, 4, 13]  # 13: no card there
    assert base == int(net.dist_offsets[0])


def test_critic_stock_needs_the_oracle_observation() -> None:
    env = gym.make("FortyThieves-v0")
    with pytest.raises(ValueError, match="oracle"):
        LookupScorer(env.observation_space, critic_stock=8)


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("FortyThieves-v0", {}),
        ("FortyThieves-v0", {"top_cards": 5, "waste_cards": 4}),
        ("FortyThieves-Streets-v0", {}),
        ("FortyThieves-Relaxed-v0", {"waste_cards": 1}),
        ("FortyThieves-RankAndFile-v0", {"top_cards": 2}),
        ("FortyThieves-Josephine-v0", {}),
    ],
)
def test_facts_in_torch_are_the_compiled_facts(env_id: str, kwargs: dict) -> None:
    """The pure-torch facts (what a GPU computes) give the compiled kernel's rows exactly, on
    positions from the deal to deep into games (empty columns, long runs, face-down cards)."""
    net = _scorer(env_id, **kwargs)
    obs = {**_observations(env_id, n=24, moves=200), **_observations(env_id, n=8, moves=5)}
    for batch in (obs, _observations(env_id, n=24, moves=200)):
        for a, b in zip(net.facts(batch, in_torch=False), net.facts(batch, in_torch=True), strict=True):
            assert a.shape == b.shape and a.dtype == b.dtype == torch.int64
            assert torch.equal(a, b)


def test_the_network_without_its_numpy_pieces_gives_the_same_outputs_and_gradients() -> None:
    """Facts in torch and torch's own embedding_bag gradient (the GPU path) against the compiled
    facts and the compiled gradient (the CPU path): outputs and every gradient within float tolerance."""
    env_id = "FortyThieves-Relaxed-v0"
    net = _scorer(env_id)
    obs = _observations(env_id, n=16, moves=120)
    grads = []
    for in_torch in (False, True):
        net.zero_grad()
        facts = net.facts(obs, in_torch=in_torch)
        inputs = dict(zip(("col", "glob", "slot"), facts, strict=True))
        if in_torch:
            import agents.training.networks.lookup_scorer as ls

            plain = lambda rows, table: torch.nn.functional.embedding_bag(rows, table, mode="sum")  # noqa: E731
            old, ls.row_sum = ls.row_sum, plain
            try:
                out = net.forward_encoded(inputs)
            finally:
                ls.row_sum = old
        else:
            out = net.forward_encoded(inputs)
        (out * torch.linspace(-1, 1, out.shape[1])).sum().backward()
        grads.append((out.detach(), {k: p.grad.clone() for k, p in net.named_parameters() if p.grad is not None}))
    (out_a, g_a), (out_b, g_b) = grads
    torch.testing.assert_close(out_a, out_b)
    assert set(g_a) == set(g_b) and g_a
    for k in g_a:  # sums over many samples in another order: float32 rounding relative to the largest entry
        scale = float(g_a[k].abs().max())
        tol = 1e-3 * max(scale, 1.0)
        torch.testing.assert_close(g_a[k], g_b[k], rtol=1e-4, atol=tol, msg=lambda m, k=k: f"{k}: {m}")
