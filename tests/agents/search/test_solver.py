"""The perfect-information solver: verdicts, replayable lines, budgets and sound pruning."""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import winning_line

from agents.search import beam, moves, prover, pruning, zobrist
from agents.search.heuristics import HEURISTICS, heuristic
from agents.search.solver import BEST_FIRST_WINDOW, LATE_SHARE, PROVER_SHARE, SolveResult, _share_cap, solve
from forty_thieves_env import GameState, Variant, deal, get_variant, parse_position
from forty_thieves_env.engine.layout import Cfg, Slot
from forty_thieves_env.engine.rules import apply_action, legal_mask

STRATEGIES = ["portfolio", "best", "dfs", "prover"]

# One real move (KH off the TH, into an empty column); everything else is a safe move home,
# the last one from the stock through the waste.
EASY = """variant: classic
redeals: 0
stock: KH
waste:
foundations: KC KC KD KD KS KS TH 9H
1: TH KH
2: QH JH
3: QH JH
4:
5:
6:
7:
8:
9:
10:
"""

# Both 4H lie under a KS and both 8S under a KH; no column can ever be emptied and the
# stock is gone, so the hearts and spades never move on. A few moves remain (JS, QS and
# the 9S-TS runs shuffle), so the proof searches more than one position.
DEAD = """variant: {variant}
redeals: 0
stock:
waste:
foundations: KC KC KD KD 7S 7S 3H 3H
1: 4H KS
2: 4H KS
3: 8S KH
4: 8S KH
5: 5H QS JS
6: 5H QS
7: 6H JS TS 9S
8: 6H TS 9S
9: 7H QH JH TH 9H 8H
10: 7H QH JH TH 9H 8H
"""


def replays_to_win(state: GameState, result: SolveResult) -> bool:
    # Every card not yet home goes home by one listed move (safe moves included), unless
    # the variant itself plays safe cards home after each move.
    if not state.variant.auto_play_safe:
        assert sum(m.endswith(">f") for m in result.moves) == 104 - state.cards_on_foundations
    game = state.copy()
    for move in result.moves:
        game.play(move)
    return game.is_won()


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("prune", [True, False])
def test_easy_position_is_won_and_the_line_replays(strategy, prune):
    state = parse_position(EASY)
    before = state.snapshot()
    result = solve(state, strategy=strategy, prune=prune, max_nodes=10_000)
    assert result.verdict == "won"
    assert replays_to_win(state, result)
    assert "s" in result.moves
    assert np.array_equal(state.array, before), "solve must leave its input alone"


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("prune", [True, False])
def test_dead_position_is_lost(strategy, prune):
    state = parse_position(DEAD.format(variant="classic"))
    assert state.legal_actions(), "the dead position still has moves to search"
    result = solve(state, strategy=strategy, prune=prune, max_nodes=100_000)
    assert result.verdict == "lost"
    assert result.moves == [] and result.reason == ""
    # Pruned, blocked suits (both 4H under a KS, both 8S under a KH) proves it at once.
    assert result.states > 1 or (prune and pruning.blocked_suits(state.array, state.cfg))
    assert result.decided_by


def test_dead_position_comes_alive_when_runs_move():
    # The same cards under Josephine's rules: runs move, columns empty, the deal is won.
    state = parse_position(DEAD.format(variant="josephine"))
    result = solve(state, max_nodes=100_000)
    assert result.verdict == "won"
    assert replays_to_win(state, result)


@pytest.mark.parametrize("prune", [True, False])
def test_beam_finds_wins_and_never_claims_a_loss(prune):
    state = parse_position(EASY)
    result = solve(state, strategy="beam", prune=prune, max_nodes=10_000)
    assert result.verdict == "won" and result.decided_by.startswith("beam")
    assert replays_to_win(state, result)
    # The dead position: the beam runs out of positions at every width, which proves nothing.
    dead = parse_position(DEAD.format(variant="classic"))
    result = solve(dead, strategy="beam", prune=prune, max_memory_mb=64, max_seconds=30)
    assert (result.verdict, result.reason, result.moves) == ("unknown", "memory", [])
    # In the portfolio, best-first still proves it lost.
    assert solve(dead, prune=prune, max_memory_mb=64, max_seconds=30).verdict == "lost"


@pytest.mark.parametrize("number", [8, 32])
def test_beam_wins_classic_deals_and_the_lines_replay(number):
    # Deals 8 and 32 take best-first seconds or more (8: not within 10 s); the beam wins
    # them in about a second.
    state = deal("classic", number)
    result = solve(state, strategy="beam", max_nodes=3_000_000, max_seconds=60)
    assert result.verdict == "won"
    assert replays_to_win(state, result)


def test_beam_runs_every_heuristic_at_each_width_and_turns_score():
    """Each width of the beam's schedule runs the four heuristics in turn, and the
    ``+turns`` ones differ from their base by the turned stock cards alone."""
    state = deal("classic", 2)
    z = zobrist.zobrist_for(int(state.cfg[Cfg.DEPTH]), int(state.cfg[Cfg.STOCK]))
    schedule = beam.Beam(state, z, 2**28, True).schedule
    assert len(schedule) >= 2 * len(beam.BEAM_HEURISTICS)
    for k, (width, weights) in enumerate(schedule):
        assert width == 128 * 2 ** (k // len(beam.BEAM_HEURISTICS))
        assert weights == beam.BEAM_HEURISTICS[k % len(beam.BEAM_HEURISTICS)]
        assert weights in HEURISTICS
    s = state.array.copy()
    rng = random.Random(5)
    mask = np.zeros(int(state.cfg[Cfg.N_ACTIONS]), dtype=bool)
    seen_turns = set()
    for _ in range(120):
        for base in ("balanced", "waste"):
            plus = HEURISTICS[base + "+turns"]
            turned = int(state.cfg[Cfg.STOCK]) - int(s[Slot.STOCK_LEN])
            diff = heuristic(s, state.cfg, plus) - heuristic(s, state.cfg, HEURISTICS[base])
            assert diff == plus[7] * turned and plus[7] == 2 * HEURISTICS[base][5] > 0
            assert (plus[:7] == HEURISTICS[base][:7]).all() and HEURISTICS[base][7] == 0
            seen_turns.add(turned)
        legal_mask(s, state.cfg, mask)
        if not mask.any():
            break
        apply_action(s, state.cfg, rng.choice(np.flatnonzero(mask).tolist()))
    assert len(seen_turns) > 5


@pytest.mark.parametrize("number", [2, 7, 10, 13])
def test_classic_deals_are_won_and_replay(number):
    state = deal("classic", number)
    result = solve(state, max_nodes=300_000, max_seconds=60)
    assert result.verdict == "won"
    assert replays_to_win(state, result)


@pytest.mark.parametrize("variant", ["classic", "josephine", "streets", "maria", "limited", "rank_and_file", "relaxed"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_preset_gives_a_valid_result(variant, strategy):
    for number in (1, 2):
        state = deal(variant, number)
        result = solve(state, strategy=strategy, max_nodes=10_000, max_seconds=30)
        assert result.verdict in ("won", "lost", "unknown")
        assert result.nodes > 0 and result.seconds >= 0
        if result.verdict == "won":
            assert replays_to_win(state, result)
        else:
            assert result.moves == []
        if result.verdict == "unknown":
            assert result.reason in ("nodes", "seconds", "memory", "depth")


def random_playout(variant: str | Variant, number: int, seed: int) -> GameState:
    """Random legal moves from a deal until nothing is legal or, once the stock is out, by chance."""
    game = deal(variant, number)
    rng = random.Random(seed)
    while True:
        actions = game.legal_actions()
        if not actions or (len(game.stock) == 0 and game.array[Slot.REDEALS] == 0 and rng.random() < 0.3):
            return game
        game.apply(rng.choice(actions))
        if len(game.stock) == 0 and rng.random() < 0.1:
            return game


# (variant, deal, seed) end positions whose searches finish in well under a second either
# way; won and lost ones among them.
PLAYOUTS = [
    ("classic", 1, 1),
    ("josephine", 1, 0),
    ("josephine", 1, 1),
    ("streets", 2, 0),
    ("limited", 4, 0),
    ("rank_and_file", 5, 1),
    ("maria", 5, 1),
    ("relaxed", 2, 0),
    ("relaxed", 2, 1),
    ("relaxed", 3, 0),
    ("relaxed", 5, 1),
    (get_variant("classic", auto_play_safe=True), 1, 1),
    (get_variant("josephine", auto_play_safe=True), 1, 1),
]


def test_pruning_changes_no_verdict():
    """Safe moves, the symmetries and the stock-turn rule must never turn a won position lost:
    the full search (``prune=False``) and the pruned one agree wherever both finish."""
    verdicts = []
    for variant, number, seed in PLAYOUTS:
        state = random_playout(variant, number, seed)
        for strategy in ("best", "dfs", "prover"):  # the complete searches
            pruned = solve(state, strategy=strategy, max_nodes=100_000)
            full = solve(state, strategy=strategy, prune=False, max_nodes=100_000)
            if "unknown" in (pruned.verdict, full.verdict):
                continue
            assert pruned.verdict == full.verdict, (variant, number, seed, strategy)
            for result in (pruned, full):
                if result.verdict == "won":
                    assert replays_to_win(state, result)
            verdicts.append(pruned.verdict)
    assert verdicts.count("won") >= 2 and verdicts.count("lost") >= 10, verdicts


@pytest.mark.parametrize(("variant", "number"), [("classic", 2), ("classic", 10), ("josephine", 2), ("limited", 7)])
def test_positions_along_a_winning_line_stay_won(variant, number):
    """Every position of a winning line is winnable: pruned or not, the solver must say so."""
    state = deal(variant, number)
    line = solve(state, max_nodes=300_000).moves
    assert line
    for k in (len(line) // 4, len(line) // 2, len(line) - 5):
        game = state.copy()
        for move in line[:k]:
            game.play(move)
        for strategy in STRATEGIES:
            for prune in (True, False):
                result = solve(game, strategy=strategy, prune=prune, max_nodes=300_000)
                if strategy == "prover":  # no move order: it may not reach a win, but never "lost"
                    assert result.verdict != "lost", (k, prune)
                    continue
                assert result.verdict == "won", (k, strategy, prune)
                assert replays_to_win(game, result)


# Both 5C lie under a KC and both 5D under a KD, and a king never goes on a card; the 6C,
# 6D and 8C on the other columns can go home only after a 5 of their suit and only onto a
# 7C, 7D or 9C that lies under a card as stuck as themselves. No column can ever empty,
# whatever the stock brings: blocked suits proves it lost at its root, where a plain
# search must try the stock's cards first.
BLOCKED = """variant: {variant}
redeals: 0
stock: QC 8D JC TD 9D QD TC 8D JD JC
waste:
foundations: 4C 4C 4D 4D KS KS KH KH
1: 5C 5C QD KC
2: 7C TC JD KC
3: 7C QC TD KD
4: 5D 5D 9D KD
5: 6C
6: 6C
7: 7D 6D
8: 7D 6D
9: 9C 8C
10: 9C 8C
"""


def test_blocked_suits_proves_a_hand_made_position_lost_at_its_root():
    state = parse_position(BLOCKED.format(variant="classic"))
    assert state.legal_actions()
    assert pruning.blocked_suits(state.array, state.cfg)
    pruned = solve(state, strategy="best", max_nodes=200_000)
    full = solve(state, strategy="best", prune=False, max_nodes=200_000)
    assert (pruned.verdict, pruned.states) == ("lost", 1)
    assert full.verdict == "lost" and full.states > 100
    assert solve(state, strategy="dfs", max_nodes=200_000).verdict == "lost"


def test_blocked_suits_needs_every_column_filled_and_single_card_moves():
    # Column 10's cards moved to the stock: an empty column frees a king, the rule is silent.
    emptied = parse_position(
        BLOCKED.format(variant="classic").replace("10: 9C 8C", "10:").replace("stock: QC", "stock: 9C 8C QC")
    )
    assert not pruning.blocked_suits(emptied.array, emptied.cfg)
    runs = parse_position(BLOCKED.format(variant="josephine"))
    assert not pruning.blocked_suits(runs.array, runs.cfg)


@pytest.mark.parametrize(("variant", "number"), [("classic", 2), ("classic", 10), ("classic", 13), ("limited", 7)])
def test_blocked_suits_flags_no_position_on_a_winning_line(variant, number):
    """A flagged position is claimed unwinnable: no position of a winning line may be."""
    for game, move in winning_line(variant, number):
        assert not pruning.blocked_suits(game.array, game.cfg), move


def test_blocked_suits_positions_are_never_won_by_the_full_search():
    """Where the rule fires on the end of a random classic play-out, the unpruned search
    (which does not use it) finds no win either."""
    fired = 0
    for number in range(1, 9):
        for seed in range(2):
            state = random_playout("classic", number, seed)
            if not pruning.blocked_suits(state.array, state.cfg):
                continue
            fired += 1
            assert solve(state, strategy="best", prune=False, max_nodes=20_000).verdict != "won", (number, seed)
    assert fired >= 4


def test_stock_turn_rule_applies_only_with_an_empty_waste():
    state = deal("classic", 1)
    mask = state.legal_mask()
    assert mask[0] and mask.sum() > 1
    cut = mask.copy()
    assert moves.stock_only(state.array, cut, True)
    assert cut[0] and cut.sum() == 1
    cut = mask.copy()
    assert not moves.stock_only(state.array, cut, False) and np.array_equal(cut, mask)
    state.play("s")
    cut = state.legal_mask()
    assert not moves.stock_only(state.array, cut, True) and np.array_equal(cut, state.legal_mask())


def test_symmetry_rule_keeps_one_empty_column_and_no_whole_column_move():
    state = parse_position(EASY)
    s, cfg = state.array, state.cfg
    first = moves.first_empty(s, cfg)
    assert first == 3
    # KH of column 1 into each empty column: only the first is kept.
    kept = [j for j in range(3, 10) if moves.keep_move(s, cfg, 4, 0, j, 1, first)]
    assert kept == [3]
    assert all(moves.keep_move(s, cfg, 4, 0, j, 1, first, False) for j in range(3, 10))
    # A column of one card moving into an empty column gives the same position back.
    lone = parse_position(EASY.replace("3: QH JH", "3: QH").replace("4:", "4: JH"))
    first = moves.first_empty(lone.array, lone.cfg)
    assert not moves.keep_move(lone.array, lone.cfg, 4, 3, first, 1, first)
    assert moves.keep_move(lone.array, lone.cfg, 4, 1, first, 1, first)


def test_hash_is_canonical():
    state = deal("classic", 5)
    for move in ("s", "s", "s"):
        state.play(move)
    z = zobrist.make_zobrist(state.variant.max_depth, state.variant.stock_size)
    redeals = int(state.array[Slot.REDEALS])
    base = zobrist.state_hash(state.array, state.cfg, z, redeals)
    columns = state.columns
    rng = random.Random(0)
    for _ in range(5):
        order = columns[:]
        rng.shuffle(order)
        permuted = GameState.from_parts(
            state.variant, order, state.stock, state.waste, state.foundations, redeals_left=redeals
        )
        assert zobrist.state_hash(permuted.array, permuted.cfg, z, redeals) == base
    # Any real change of position changes the hash.
    seen = {base}
    for action in state.legal_actions():
        child = state.copy()
        child.apply(action)
        h = zobrist.state_hash(child.array, child.cfg, z, redeals)
        assert h not in seen
        seen.add(h)


@pytest.mark.parametrize("variant", ["classic", "josephine", "rank_and_file", "relaxed", "maria"])
def test_incremental_child_hash_equals_the_full_hash(variant):
    """``child_hash`` reuses the parent's column and waste hashes: it must agree with
    ``state_hash`` on every child (safe moves played after the move, as the search does),
    along random games that go through redeals, face-down cards and emptied columns."""
    v = get_variant(variant)
    z = zobrist.make_zobrist(v.max_depth, v.stock_size)
    scratch = np.zeros(256, dtype=np.int16)
    col1 = np.zeros(v.columns, dtype=np.uint64)
    col2 = np.zeros(v.columns, dtype=np.uint64)
    wh = np.zeros(2, dtype=np.uint64)
    c1, c2, e1, e2 = (np.zeros(v.columns, dtype=np.uint64) for _ in range(4))
    cw, ew = np.zeros(2, dtype=np.uint64), np.zeros(2, dtype=np.uint64)
    checked = 0
    for number in (1, 2, 3):
        game = deal(v, number)
        root_redeals = int(game.array[Slot.REDEALS])
        rng = random.Random(number)
        for _ in range(300):
            actions = game.legal_actions()
            if not actions:
                break
            s = game.array
            zobrist.hash_parts(s, game.cfg, z, col1, col2, wh)
            for a in actions:
                child = s.copy()
                apply_action(child, game.cfg, a)
                moves.auto_safe(child, game.cfg, scratch, 0)
                full = zobrist.state_hash(child, game.cfg, z, root_redeals)
                assert zobrist.child_hash(child, s, game.cfg, z, root_redeals, col1, col2, wh) == full
                # The prover's version also hands the child its parts, as hash_parts would.
                got = zobrist.child_parts(child, s, game.cfg, z, root_redeals, col1, col2, wh, c1, c2, cw)
                assert got == full
                zobrist.hash_parts(child, game.cfg, z, e1, e2, ew)
                assert (c1 == e1).all() and (c2 == e2).all() and (cw == ew).all()
                checked += 1
            game.apply(rng.choice(actions))
    assert checked > 1000


def test_budgets_give_unknown_with_the_reason():
    state = deal("classic", 1)
    result = solve(state, max_nodes=500)
    assert (result.verdict, result.reason) == ("unknown", "nodes")
    assert 500 <= result.nodes < 500 + 200
    result = solve(state, max_seconds=0.0)
    assert (result.verdict, result.reason) == ("unknown", "seconds")
    for strategy in [*STRATEGIES, "beam"]:
        result = solve(state, strategy=strategy, max_memory_mb=20, max_seconds=30)
        assert (result.verdict, result.reason) == ("unknown", "memory")
    result = solve(state, max_seconds=0.05, clock="cpu")
    assert (result.verdict, result.reason) == ("unknown", "seconds")
    with pytest.raises(ValueError, match="strategy"):
        solve(state, strategy="bfs")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="clock"):
        solve(state, clock="sundial")  # type: ignore[arg-type]


def test_results_are_reproducible_under_a_node_budget():
    state = deal("classic", 3)
    a = solve(state, max_nodes=30_000, max_seconds=float("inf"))
    b = solve(state, max_nodes=30_000, max_seconds=float("inf"))
    assert (a.verdict, a.nodes, a.states) == (b.verdict, b.nodes, b.states)


@pytest.mark.slow
def test_first_classic_deals_replay():
    for number in range(1, 31):
        state = deal("classic", number)
        result = solve(state, max_seconds=3)
        if result.verdict == "won":
            assert replays_to_win(state, result)


def test_variant_without_stock_left_uses_redeal():
    # Relaxed keeps one redeal: with the stock empty, "s" turns the waste over again.
    variant = get_variant("relaxed")
    state = random_playout("relaxed", 2, 1)
    assert variant.redeals == 1
    result = solve(state, max_nodes=100_000)
    assert result.verdict == "won"
    assert replays_to_win(state, result)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_trivial_positions(strategy):
    # Already won: nothing to play.
    won = parse_position(EASY)
    for move in solve(won, max_nodes=10_000).moves:
        won.play(move)
    assert won.is_won()
    result = solve(won, strategy=strategy)
    assert (result.verdict, result.moves) == ("won", [])
    # Only safe moves left: the line is those moves, found without a search.
    only_safe = parse_position(EASY.replace("1: TH KH", "1: KH TH"))
    result = solve(only_safe, strategy=strategy)
    assert result.verdict == "won" and replays_to_win(only_safe, result)
    # No legal move at all: lost at once.
    stuck = parse_position(
        DEAD.format(variant="classic")
        .replace("5: 5H QS JS", "5: 5H QS 9S")
        .replace("6: 5H QS", "6: 5H QS 9S")
        .replace("7: 6H JS TS 9S", "7: 6H TS JS")
        .replace("8: 6H TS 9S", "8: 6H TS JS")
    )
    assert not stuck.legal_actions()
    result = solve(stuck, strategy=strategy)
    assert result.verdict == "lost" and result.states == (4 if strategy == "portfolio" else 1)  # the roots


def test_prover_table_stores_eight_bytes_a_position():
    """``key_insert``: a key is new once, the table holds one word a key, and a full table
    refuses new keys instead of looping."""
    table = np.zeros(8, dtype=np.uint64)
    keys = [(np.uint64(3), np.uint64(10 + 2 * k)) for k in range(8)]  # one home slot: all probe
    assert all(prover.key_insert(table, h1, h2) for h1, h2 in keys)
    assert not any(prover.key_insert(table, h1, h2) for h1, h2 in keys)
    assert np.count_nonzero(table) == 8
    assert not prover.key_insert(table, np.uint64(5), np.uint64(99))  # full
    # A key differing only in its lowest bit is the same key (the bit marks a used slot).
    table = np.zeros(8, dtype=np.uint64)
    assert prover.key_insert(table, np.uint64(1), np.uint64(6))
    assert not prover.key_insert(table, np.uint64(1), np.uint64(7))


def test_prover_exhausts_what_depth_first_exhausts():
    """The prover generates each new position once and enters it at once; on positions both
    searches finish, it reaches the same verdict, and where its own rule (the relaxed game,
    rule 7) does not apply it stores as many positions as the depth-first search (the same
    pruned graph, the same table semantics); where it applies, no more."""
    compared = 0
    for variant, number, seed in PLAYOUTS:
        state = random_playout(variant, number, seed)
        a = solve(state, strategy="prover", max_nodes=200_000)
        b = solve(state, strategy="dfs", max_nodes=200_000)
        if "unknown" in (a.verdict, b.verdict):
            continue
        assert a.verdict == b.verdict, (variant, number, seed)
        if a.verdict == "lost":
            v = state.variant
            relaxed_applies = v.build == "suit" and v.run_moves == "none" and state.array[Slot.REDEALS] == 0
            if relaxed_applies:
                assert a.states <= b.states, (variant, number, seed)
            else:
                assert a.states == b.states, (variant, number, seed)
                compared += 1
    assert compared >= 5


def test_share_caps_follow_the_time_budget():
    """The prover always takes at most its share; each best-first search takes all it is
    given until its window of the budget is over and at most ``LATE_SHARE`` after; the beam
    searches are never capped."""
    assert _share_cap("prover", 0.0, 10.0) == PROVER_SHARE
    assert _share_cap("prover", 9.0, 10.0) == PROVER_SHARE
    for name, window in BEST_FIRST_WINDOW.items():
        assert _share_cap(name, 0.9 * window * 10.0, 10.0) == 1.0
        assert _share_cap(name, 1.1 * window * 10.0, 10.0) == LATE_SHARE
        assert _share_cap(name, 1.1 * window * 60.0, 60.0) == LATE_SHARE
    assert _share_cap("beam/1024/waste", 9.9, 10.0) == 1.0
    # The caps go by the searches' names: the prover's, and the portfolio's best-first
    # searches (``best/<heuristic>``), one window each.
    assert set(BEST_FIRST_WINDOW) == {"best/balanced", "best/waste"}
    assert all(name[len("best/") :] in HEURISTICS for name in BEST_FIRST_WINDOW)
    state = deal("classic", 2)
    z = zobrist.zobrist_for(int(state.cfg[Cfg.DEPTH]), int(state.cfg[Cfg.STOCK]))
    assert prover.Prover(state, z, 2**24, 2000, True, 100).name == "prover"
