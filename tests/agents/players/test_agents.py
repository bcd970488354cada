"""Agents: legal play in every variant, reproducibility, what they may know, heuristic rules."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from conftest import NEAR_WIN, NEAR_WIN_SCRIPT, position

from agents.hashing import table_insert
from agents.players.base import Agent, agent_names, make_agent
from agents.players.heuristic import HeuristicAgent, choose, visible_hash
from agents.players.lookahead import LookaheadAgent
from agents.players.sampling_solver import SamplingSolverAgent
from agents.players.view import StockRecall, determinize, state_from_oracle
from agents.players.weights import CYCLE, POINTLESS, TWIN, weights_array
from forty_thieves_env import PRESETS, GameState, deal, format_position, get_variant, parse_move, parse_position
from forty_thieves_env.engine.cards import N_CODES, N_RANKS, RANK_LETTERS, SUIT_LETTERS
from forty_thieves_env.envs.env import FortyThievesEnv
from forty_thieves_env.envs.observation import ObservationEncoder

# Small budgets: these tests check behaviour, not strength.
FAST = {
    "random": {},
    "heuristic": {},
    "lookahead": {"samples": 2, "candidates": 3, "rollout_steps": 60},
    "solver": {"max_nodes": 20_000, "max_seconds": 2.0},
    "sampling_solver": {"samples": 2, "nodes_per_solve": 2000, "game_nodes": 100_000},
}


def play(env: FortyThievesEnv, agent: Agent, deal_number: int, seed: int, max_moves: int = 1000) -> tuple[list, dict]:
    """Play one game (the env raises on an illegal action); return the actions and the last info."""
    obs, info = env.reset(options={"deal": deal_number})
    agent.reset(seed=seed)
    actions = []
    for _ in range(max_moves):
        mask = info["action_mask"]
        a = agent.act(obs, mask)
        assert isinstance(a, int)
        assert mask[a], f"{agent.name} chose illegal action {a}"
        actions.append(a)
        obs, _, terminated, truncated, info = env.step(a)
        if terminated or truncated:
            break
    return actions, info


def first_actions(env: FortyThievesEnv, agent: Agent, seed: int, n: int, **reset: object) -> list[int]:
    obs, info = env.reset(**reset)
    agent.reset(seed=seed)
    out = []
    for _ in range(n):
        a = agent.act(obs, info["action_mask"])
        out.append(a)
        obs, _, terminated, _, info = env.step(a)
        if terminated:
            break
    return out


# ------------------------------------------------------------------------ protocol


def test_registry_builds_every_agent():
    assert set(agent_names()) >= set(FAST)
    for name in FAST:  # (other registered agents, e.g. ppo, need a model file)
        agent = make_agent(name, "classic", seed=1, **FAST[name])
        assert isinstance(agent, Agent)
        assert agent.name == name
        assert agent.observation in ("dict", "oracle")
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("nobody", "classic")
    # ppo is in the registry from the start (nothing needs to register it before make_agent("ppo")).
    from agents.players.base import agent_class
    from agents.players.ppo import PPOAgent

    assert agent_class("ppo") is PPOAgent
    with pytest.raises(ValueError, match="unknown heuristic weight"):
        make_agent("heuristic", "classic", weights={"nonsense": 1.0})


@pytest.mark.parametrize("variant", sorted(PRESETS))
@pytest.mark.parametrize("name", ["random", "heuristic", "lookahead", "sampling_solver"])
def test_full_game_legal_moves_only(name, variant):
    env = FortyThievesEnv(variant, illegal_action="raise")
    agent = make_agent(name, variant, **FAST[name])
    actions, info = play(env, agent, deal_number=3, seed=11)
    # A full game: it ended (won, or no legal move left) or ran into the move cap.
    assert info["won"] or not info["action_mask"].any() or len(actions) == 1000
    assert 0 <= info["cards_on_foundations"] <= 104


@pytest.mark.parametrize("variant", ["classic", "rank_and_file", "relaxed"])
def test_solver_agent_full_game_legal_moves_only(variant):
    env = FortyThievesEnv(variant, observation="oracle", illegal_action="raise")
    agent = make_agent("solver", variant, **FAST["solver"])
    actions, info = play(env, agent, deal_number=2, seed=0)
    assert agent.result is not None
    assert info["won"] or not info["action_mask"].any() or len(actions) == 1000


def test_solver_agent_replays_a_won_line():
    # Deal 2 of classic is solved in a few hundred nodes; the agent must win it by replaying.
    env = FortyThievesEnv("classic", observation="oracle", illegal_action="raise")
    agent = make_agent("solver", "classic", max_nodes=200_000, max_seconds=20.0)
    actions, info = play(env, agent, deal_number=2, seed=0)
    assert agent.result.verdict == "won"
    assert info["won"]
    assert len(actions) == len(agent.result.moves)


def test_agents_work_on_gym_make_env():
    env = gym.make("FortyThieves-Josephine-v0")
    agent = make_agent("heuristic", "josephine", seed=0)
    obs, info = env.reset(seed=5)
    agent.reset(seed=5)
    for _ in range(50):
        a = agent.act(obs, info["action_mask"])
        obs, _, terminated, truncated, info = env.step(a)
        assert not info["illegal_action"]
        if terminated or truncated:
            break


# ------------------------------------------------------------------- reproducibility


@pytest.mark.parametrize("variant", ["classic", "rank_and_file"])
def test_heuristic_reproducible_given_seed(variant):
    env = FortyThievesEnv(variant)
    a1, i1 = play(env, HeuristicAgent(variant), 7, seed=3)
    a2, i2 = play(env, HeuristicAgent(variant), 7, seed=3)
    assert a1 == a2
    assert i1["cards_on_foundations"] == i2["cards_on_foundations"]


SEARCH_AGENTS = {  # (class, small-budget options, moves compared)
    "lookahead": (LookaheadAgent, {"samples": 3, "candidates": 3, "rollout_steps": 80}, 60),
    "sampling_solver": (SamplingSolverAgent, {"samples": 3, "nodes_per_solve": 3000, "game_nodes": 300_000}, 50),
}


@pytest.mark.parametrize("name", list(SEARCH_AGENTS))
@pytest.mark.parametrize("variant", ["classic", "rank_and_file"])
def test_search_agents_reproducible_given_seed(name, variant):
    cls, opts, moves = SEARCH_AGENTS[name]
    env = FortyThievesEnv(variant)
    runs = [first_actions(env, cls(variant, **opts), 5, moves, options={"deal": 9}) for _ in range(2)]
    assert runs[0] == runs[1]
    # The same agent object, reset with the same seed, replays the game too.
    agent = cls(variant, **opts)
    first_actions(env, agent, 99, 10, options={"deal": 4})
    assert first_actions(env, agent, 5, moves, options={"deal": 9}) == runs[0]


def test_lookahead_searches_and_differs_from_heuristic():
    # The search must actually run (decisions with several sensible moves) and change play.
    env = FortyThievesEnv("classic")
    look = LookaheadAgent("classic", samples=4, candidates=4, rollout_steps=200)
    a_look = first_actions(env, look, 1, 120, options={"deal": 12})
    assert look.searched > 0
    a_heur = first_actions(env, HeuristicAgent("classic"), 1, 120, options={"deal": 12})
    assert a_look != a_heur


def test_sampling_solver_without_budget_is_the_heuristic():
    # No nodes to spend: every move is the heuristic's (the same seed breaks the same ties).
    env = FortyThievesEnv("classic")
    agent = SamplingSolverAgent("classic", game_nodes=0)
    actions, _ = play(env, agent, deal_number=3, seed=2)
    assert agent.solves == 0
    assert actions == play(env, HeuristicAgent("classic"), deal_number=3, seed=2)[0]


def test_sampling_solver_wins_and_keeps_its_lines():
    # Deal 2 is easy: sampled worlds win, their lines are followed without solving every move.
    env = FortyThievesEnv("classic", illegal_action="raise")
    agent = SamplingSolverAgent("classic", samples=4, nodes_per_solve=5000)
    _, info = play(env, agent, deal_number=2, seed=0)
    assert info["won"]
    assert agent.reused > 0
    assert agent.solves < agent.samples * agent.searched


def test_sampling_solver_solves_a_known_position_once():
    # With the stock spent nothing is hidden: one solve, and its line is a sure win.
    state = position(NEAR_WIN)
    for move in NEAR_WIN_SCRIPT[:3]:
        state.play(move)
    assert state.stock == []
    env = FortyThievesEnv("classic", illegal_action="raise")
    obs, info = env.reset(options={"position": state})
    agent = SamplingSolverAgent("classic", samples=2, nodes_per_solve=1000, seed=0)
    for _ in range(20):
        obs, _, terminated, _, info = env.step(agent.act(obs, info["action_mask"]))
        if terminated:
            break
    assert info["won"]
    assert agent.solves == 1


@pytest.mark.parametrize("variant", ["classic", "rank_and_file"])
def test_sampling_solver_child_mode(variant):
    env = FortyThievesEnv(variant, illegal_action="raise")
    agent = SamplingSolverAgent(
        variant, samples=2, mode="child", candidates=2, nodes_per_solve=2000, game_nodes=200_000
    )
    first_actions(env, agent, 1, 40, options={"deal": 7})
    assert agent.solves > agent.searched  # several candidates per sample


def test_sampling_solver_refuses_bad_options():
    for bad in ({"samples": 0}, {"nodes_per_solve": 0}, {"mode": "leaf"}, {"strategy": "magic"}, {"game_nodes": -1}):
        with pytest.raises(ValueError):
            SamplingSolverAgent("classic", **bad)


# ------------------------------------------------------------- hidden information


def _hidden_slots(state: GameState) -> list[tuple[str, int, int]]:
    """(kind, column, position) of every hidden card: face-down cards, then the stock."""
    slots = [("down", i, t) for i, n in enumerate(state.face_down) for t in range(n)]
    slots += [("stock", -1, t) for t in range(len(state.stock))]
    return slots


def shuffle_hidden(state: GameState, rng: np.random.Generator) -> GameState:
    """The same position with its hidden cards (face-down and stock) shuffled among their places."""
    cols = state.columns
    stock = state.stock
    slots = _hidden_slots(state)
    cards = [cols[i][t] if kind == "down" else stock[t] for kind, i, t in slots]
    perm = rng.permutation(len(cards))
    for (kind, i, t), p in zip(slots, perm, strict=True):
        if kind == "down":
            cols[i][t] = cards[p]
        else:
            stock[t] = cards[p]
    return GameState.from_parts(
        state.variant, cols, stock, state.waste, state.foundations, state.face_down, state.redeals_left
    )


def _midgame(variant: str, deal_number: int, moves: int) -> GameState:
    """A position some heuristic moves into a deal (the stock partly turned)."""
    env = FortyThievesEnv(variant)
    obs, info = env.reset(options={"deal": deal_number})
    agent = HeuristicAgent(variant, seed=0)
    for _ in range(moves):
        obs, _, terminated, _, info = env.step(agent.act(obs, info["action_mask"]))
        assert not terminated
    return env.game


@pytest.mark.parametrize("variant", ["classic", "rank_and_file"])
def test_determinize_never_reads_hidden_cards(variant):
    real = _midgame(variant, 6, 25)
    enc = ObservationEncoder(real.variant)
    obs = enc(real.array)
    twin = shuffle_hidden(real, np.random.default_rng(1))
    assert twin != real  # the hidden cards really moved ...
    assert all(np.array_equal(obs[k], v) for k, v in enc(twin.array).items())  # ... unseen
    for seed in range(5):
        a = determinize(obs, real.variant, np.random.default_rng(seed))
        b = determinize(enc(twin.array), real.variant, np.random.default_rng(seed))
        assert a == b
        # A determinization shows exactly what the player sees, holds every card twice and
        # allows exactly the real moves.
        assert all(np.array_equal(obs[k], v) for k, v in enc(a.array).items())
        counts = np.bincount([c for col in a.columns for c in col] + a.stock + a.waste, minlength=N_CODES)
        for p, h in enumerate(a.foundations):
            counts[(p // 2) * N_RANKS : (p // 2) * N_RANKS + h] += 1
        assert (counts == 2).all()
        assert np.array_equal(a.legal_mask(), real.legal_mask())


def test_determinize_samples_the_unseen_cards():
    real = deal("rank_and_file", 8)
    obs = ObservationEncoder(real.variant)(real.array)
    rng = np.random.default_rng(0)
    tops, downs = set(), set()
    for _ in range(1000):
        d = determinize(obs, real.variant, rng)
        tops.add(d.stock[0])
        downs.add(d.columns[0][0])
    visible = np.bincount([c for col in real.columns for c in col[3:]], minlength=N_CODES)
    unseen = {c for c in range(N_CODES) if visible[c] < 2}
    # Every unseen card turns up both as the next stock card and as a face-down card.
    assert tops == unseen
    assert downs == unseen
    # Without an rng the filling is fixed.
    assert determinize(obs, real.variant) == determinize(obs, real.variant)


@pytest.mark.parametrize("name", ["heuristic", "lookahead", "sampling_solver"])
def test_agents_ignore_hidden_cards(name):
    real = _midgame("rank_and_file", 5, 20)
    twin = shuffle_hidden(real, np.random.default_rng(2))
    assert twin != real
    env = FortyThievesEnv("rank_and_file")
    agent = make_agent(name, "rank_and_file", **FAST[name])
    # Different hidden cards, same view: the same move (the hidden cards may differ after it).
    a = first_actions(env, agent, 4, 1, options={"position": real})
    b = first_actions(env, agent, 4, 1, options={"position": twin})
    assert a == b


@pytest.mark.parametrize(("variant", "deal_number"), [("classic", 5), ("rank_and_file", 5)])
def test_sampling_solver_ignores_hidden_cards_all_game(variant, deal_number):
    # At every move a twin game, the real one with its hidden cards shuffled again, is shown to
    # a second agent with the same seed: it must play the same moves the whole way, searches,
    # kept lines and all (the real game goes on; the twin only ever shows the same view).
    env, twin_env = FortyThievesEnv(variant), FortyThievesEnv(variant)
    opts = {"samples": 3, "nodes_per_solve": 3000, "game_nodes": 400_000}
    agent, twin = SamplingSolverAgent(variant, **opts), SamplingSolverAgent(variant, **opts)
    obs, info = env.reset(options={"deal": deal_number})
    agent.reset(seed=3)
    twin.reset(seed=3)
    rng = np.random.default_rng(0)
    shuffled = 0
    for _ in range(40):
        other = shuffle_hidden(env.game, rng)
        shuffled += other != env.game
        twin_obs, twin_info = twin_env.reset(options={"position": other})
        a = agent.act(obs, info["action_mask"])
        assert twin.act(twin_obs, twin_info["action_mask"]) == a
        obs, _, terminated, _, info = env.step(a)
        if terminated:
            break
    assert shuffled >= 20
    assert agent.searched > 0 and agent.solves > 0


def test_state_from_oracle_is_exact():
    for variant in ("rank_and_file", "relaxed"):
        env = FortyThievesEnv(variant, observation="oracle")
        obs, info = env.reset(options={"deal": 13})
        agent = HeuristicAgent(variant, seed=0)
        for _ in range(30):
            assert state_from_oracle(obs, env.variant) == env.game
            obs, _, terminated, _, info = env.step(agent.act(obs, info["action_mask"]))
            if terminated:
                break
    with pytest.raises(ValueError, match="oracle"):
        state_from_oracle(FortyThievesEnv("classic").reset(options={"deal": 1})[0], get_variant("classic"))


def test_stock_recall_knows_the_redealt_stock():
    env = FortyThievesEnv("relaxed")
    obs, info = env.reset(options={"deal": 21})
    recall = StockRecall()
    recall.update(obs)
    s = env.action_for("s")
    redealt = False
    checks = 0
    for _ in range(2 * 64 + 1):
        if not info["action_mask"][s]:
            break
        redealt |= obs["counts"][0] == 0
        obs, _, _, _, info = env.step(s)
        recall.update(obs)
        known = recall.known_stock(obs)
        if not redealt:
            assert known is None
        else:
            assert known is not None and known.tolist() == env.game.stock
            d = determinize(obs, env.variant, np.random.default_rng(0), known_stock=known)
            assert d.stock == env.game.stock
            checks += 1
    assert redealt and checks > 10


# ------------------------------------------------------------------ heuristic rules


def _layout(columns: list[str], waste_top: str | None = None) -> GameState:
    """A classic position: the 7s..kings in play (both copies), the rest home (foundations all
    at 6); the columns as given (bottom first), every other in-play card in the stock, or in
    the waste under ``waste_top`` (the stock then empty)."""

    def code(text: str) -> int:
        return RANK_LETTERS.index(text[0]) + N_RANKS * SUIT_LETTERS.index(text[1])

    in_play = [s * N_RANKS + r for s in range(4) for r in range(6, N_RANKS) for _ in range(2)]
    cols = [[code(t) for t in c.split()] for c in columns]
    for col in cols:
        for card in col:
            in_play.remove(card)
    v = get_variant("classic")
    cols += [[] for _ in range(v.columns - len(cols))]
    if waste_top is None:
        return GameState.from_parts(v, cols, stock=in_play, foundations=[6] * 8)
    in_play.remove(code(waste_top))
    return GameState.from_parts(v, cols, waste=[*in_play, code(waste_top)], foundations=[6] * 8)


def _choice(state: GameState) -> tuple[str, dict[str, float]]:
    """The heuristic's move and its scores (as move text) in a position."""
    obs = ObservationEncoder(state.variant)(state.array)
    agent = HeuristicAgent(state.variant, seed=0)
    mask = state.legal_mask()
    scores = {format_move_text(state, a): s for a, s in agent.scores(obs, mask).items()}
    return format_move_text(state, agent.act(obs, mask)), scores


def format_move_text(state: GameState, a: int) -> str:
    from forty_thieves_env import format_move

    return format_move(state.variant, a)


KINGS = ["KC", "KC", "KS", "KS", "KH", "KH", "KD", "KD"]


def test_heuristic_plays_the_table_before_the_stock():
    # 8H onto 9H uncovers 9C; the stock must wait.
    move, scores = _choice(_layout(["9C 8H", "9H", *KINGS]))
    assert move == "1>2"
    assert scores["1>2"] > scores["s"]


def test_heuristic_sends_safe_cards_home_first():
    move, scores = _choice(_layout(["9C 7H", "9H", *KINGS[:7], "8H"]))
    assert move == "1>f"
    assert scores["1>f"] > scores["10>2"]


def test_heuristic_frees_by_twins():
    # Both 7H can go home; the one on column 1 uncovers 7S, which can go home next.
    move, scores = _choice(_layout(["7S 7H", "KD 7H", *KINGS[:7], "9H"]))
    assert move == "1>f"
    assert scores["1>f"] > scores["2>f"]


def test_heuristic_values_an_empty_column():
    # 8H alone in column 1 onto 9H empties it; the 8H on 9C (column 2) only uncovers.
    move, scores = _choice(_layout(["8H", "9C 8H", "9H", *KINGS[:7]]))
    assert move == "1>3"
    assert scores["1>3"] > scores["2>3"]


def test_heuristic_pointless_and_twin_moves():
    # Column 1 (8H alone) into the empty column 10 is pointless; 8H from 9H (column 2) onto
    # the other 9H (column 3) is between twins; the stock beats both.
    state = _layout(["8H", "9C 9H 8H", "9H", *KINGS[:6]])
    move, scores = _choice(state)
    assert scores["1>10"] == POINTLESS
    assert scores["2>3"] == TWIN
    assert move != "1>10" and move != "2>3"


def test_heuristic_avoids_cycles():
    # The best move (8H onto 9H) leads to a position marked as seen: the choice changes.
    state = _layout(["9C 8H", "9H", *KINGS])
    cfg, mask = state.cfg, state.legal_mask()
    w = weights_array()
    scores = np.zeros(len(mask))
    tmp = np.zeros_like(state.array)
    table = np.zeros(1 << 10, dtype=np.uint64)
    best, _ = choose(state.array, cfg, mask, w, table, np.uint64(0), scores, tmp)
    assert format_move_text(state, best) == "1>2"
    after = state.copy()
    after.apply(best)
    table_insert(table, np.uint64(visible_hash(after.array, cfg)))
    again, _ = choose(state.array, cfg, mask, w, table, np.uint64(0), scores, tmp)
    assert format_move_text(state, again) == "s"
    assert scores[best] == CYCLE


def _unforced_repeats(start: GameState, avoid: bool, moves: int = 400) -> int:
    """Moves back into a position seen before, made while some legal move led somewhere new."""
    env = FortyThievesEnv("classic")
    obs, info = env.reset(options={"position": start})
    agent = HeuristicAgent("classic", seed=0, avoid_cycles=avoid)
    seen = {env.position_text()}
    unforced = 0
    for _ in range(moves):
        mask = info["action_mask"]
        a = agent.act(obs, mask)
        game = env.game
        after = {}
        for b in np.flatnonzero(mask):
            g = game.copy()
            g.apply(b)
            after[b] = format_position(g)
        if after[a] in seen and not all(text in seen for text in after.values()):
            unforced += 1
        seen.add(after[a])
        obs, _, terminated, _, info = env.step(a)
        if terminated:
            break
    return unforced


@pytest.mark.parametrize("deal_number", [18, 21, 22])
def test_heuristic_does_not_shuttle(deal_number):
    # It moves back into a position it has seen only when every legal move does.
    assert _unforced_repeats(deal("classic", deal_number), avoid=True) == 0


def test_heuristic_shuttles_without_its_memory():
    # The check above can fail: without the memory the agent does go round in circles.
    assert sum(_unforced_repeats(deal("classic", d), avoid=False) for d in (18, 21, 22)) > 0


def test_position_helper_is_consistent():
    state = _layout(["9C 8H", "9H", *KINGS])
    assert parse_position(format_position(state)) == state
    assert parse_move(state.variant, "1>2") in state.legal_actions()
