"""Demonstration data sets: reproducible from the seed, the teacher's own play with its votes, the
loader's views and the imitation's ``Demonstrations``; ``forty-thieves dataset``.

Faults (a kill, a damaged chunk, other settings) are in test_dataset_faults.py beside this file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.cli import main
from agents.datasets import collect, load_dataset
from agents.datasets.dataset import Dataset
from agents.datasets.demonstrations import training_deals
from agents.evaluation.games import agent_seed
from agents.players.base import make_agent
from agents.training import imitation
from forty_thieves_env.envs.env import FortyThievesEnv

#: The heuristic teacher: fast, no votes.
HEURISTIC = {"teacher": "heuristic", "env": "classic", "games": 7, "chunk": 2, "seed": 3}
#: A sampling_solver small enough for a test whose games (seed 4) still have decisive positions.
SOLVER_OPTIONS = {"samples": 4, "nodes_per_solve": 5000, "game_nodes": 400_000}
SOLVER = {"teacher": "sampling_solver", "env": "classic", "games": 3, "chunk": 2, "seed": 4}


def quiet(_: str) -> None:
    pass


def gather(out: Path, workers: int = 1, options: dict | None = None, **settings) -> Dataset:
    collect(out, teacher_options=options, workers=workers, progress=False, log=quiet, **settings)
    return load_dataset(out, log=None)


def arrays_of(ds: Dataset) -> dict[str, np.ndarray]:
    """Every array of a data set but the timings (CPU seconds differ from run to run)."""
    out = {f"obs_{k}": v for k, v in ds.obs.items()} | ds.positions | ds.votes
    return out | {k: v for k, v in ds.games.items() if k != "seconds"}


def assert_same(a: Dataset, b: Dataset) -> None:
    x, y = arrays_of(a), arrays_of(b)
    assert x.keys() == y.keys()
    for k in x:
        assert x[k].dtype == y[k].dtype and np.array_equal(x[k], y[k]), k


@pytest.fixture(scope="module")
def heuristic_set(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return gather(tmp_path_factory.mktemp("h") / "data", **HEURISTIC)


@pytest.fixture(scope="module")
def solver_set(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return gather(tmp_path_factory.mktemp("s") / "data", options=SOLVER_OPTIONS, **SOLVER)


# ------------------------------------------------------------------ reproducible, the teacher's play


def test_two_collections_give_the_same_arrays_whichever_process_plays(heuristic_set: Dataset, tmp_path: Path) -> None:
    again = gather(tmp_path / "pool", workers=2, **HEURISTIC)  # two worker processes, games as they finish
    assert_same(heuristic_set, again)
    other = gather(tmp_path / "seed", **{**HEURISTIC, "seed": 4})
    assert not np.array_equal(other.games["deal"], heuristic_set.games["deal"])  # the seed draws the deals


def test_the_chunks_hold_the_training_deals_of_the_seed_in_order(heuristic_set: Dataset) -> None:
    deals = training_deals(HEURISTIC["games"], HEURISTIC["seed"])
    assert heuristic_set.games["deal"].tolist() == deals.tolist()
    assert heuristic_set.chunks == [0, 1, 2, 3] and heuristic_set.missing == [] and heuristic_set.damaged == []
    sizes = [len(np.load(heuristic_set.folder / "chunks" / f"{k:05d}.npz")["deal"]) for k in range(4)]
    assert sizes == [2, 2, 2, 1]


def test_a_game_is_the_teachers_own_play(solver_set: Dataset) -> None:
    """Each recorded game replays move for move when the teacher plays the deal directly, seeded as the
    evaluator seeds it, and its votes are the ones the teacher reported."""
    env = FortyThievesEnv("classic")
    teacher = make_agent("sampling_solver", "classic", **SOLVER_OPTIONS)
    for ep in solver_set.episodes():
        obs, info = env.reset(options={"deal": ep.deal})
        teacher.reset(seed=agent_seed(SOLVER["seed"], ep.deal))
        for t in range(len(ep)):
            assert all(np.array_equal(obs[f], ep.obs[f][t]) for f in ep.obs)
            assert np.array_equal(info["action_mask"], ep.mask[t])
            move = teacher.act(obs, info["action_mask"])
            assert move == ep.action[t] and teacher.last_votes == ep.votes()[t]
            assert (teacher.last_samples, teacher.last_searched, teacher.last_exact) == (
                ep.samples[t],
                ep.searched[t],
                ep.exact[t],
            )
            obs, reward, _, _, info = env.step(move)
            assert np.float32(reward) == ep.reward[t]
        assert (bool(info["won"]), int(info["cards_on_foundations"])) == (ep.won, ep.home)


def test_the_votes_agree_with_the_moves(solver_set: Dataset) -> None:
    decisive = solver_set.decisive
    assert decisive.sum() >= 10, "too few decisive positions for the check to mean anything"
    assert (~decisive).sum() >= 10
    for i in np.flatnonzero(decisive):
        votes = solver_set.position_votes(int(i))
        n = int(solver_set.positions["samples"][i])
        move = int(solver_set.positions["action"][i])
        assert votes[move] == max(votes.values())  # the most votes; a tie is broken by the heuristic's order
        assert 1 <= sum(votes.values()) <= n  # root mode: a sampled world votes once
        if solver_set.positions["exact"][i]:
            assert votes == {move: 1}
    quiet_rows = solver_set.positions["samples"] == 0
    assert not decisive[quiet_rows].any() and not solver_set.positions["searched"][quiet_rows].any()


def test_a_teacher_that_reports_nothing_has_no_votes(heuristic_set: Dataset) -> None:
    p = heuristic_set.positions
    assert len(heuristic_set.votes["vote_action"]) == 0 and not heuristic_set.decisive.any()
    assert not p["searched"].any() and not p["samples"].any()
    assert (p["step"] == np.concatenate([np.arange(n) for n in heuristic_set.games["length"]])).all()


# -------------------------------------------------------------------------- the loader's views


def test_the_episode_view_is_the_flat_view_cut_by_game(solver_set: Dataset) -> None:
    episodes = list(solver_set.episodes())
    assert [len(e) for e in episodes] == solver_set.games["length"].tolist()
    assert np.array_equal(np.concatenate([e.action for e in episodes]), solver_set.positions["action"])
    assert np.array_equal(np.concatenate([e.obs["tableau"] for e in episodes]), solver_set.obs["tableau"])
    flat_votes = [solver_set.position_votes(i) for i in range(len(solver_set))]
    assert [v for e in episodes for v in e.votes()] == flat_votes
    assert np.array_equal(np.concatenate([e.decisive for e in episodes]), solver_set.decisive)


def test_dense_votes_and_soft_targets(solver_set: Dataset) -> None:
    rows = np.flatnonzero(solver_set.decisive)[::3]
    rows = np.concatenate([rows, [0, len(solver_set) - 1]])
    dense = solver_set.vote_counts(rows)
    assert dense.shape == (len(rows), 112)
    for r, i in enumerate(rows):
        expect = np.zeros(112, np.uint16)
        for move, count in solver_set.position_votes(int(i)).items():
            expect[move] = count
        assert np.array_equal(dense[r], expect)
    soft = solver_set.soft_targets(rows)
    assert np.allclose(soft.sum(1), 1.0)
    moves = solver_set.positions["action"][rows].astype(np.int64)
    assert (soft[np.arange(len(rows)), moves] == soft.max(1)).all()  # the teacher's move leads (or ties)
    assert (soft.max(1) < 1).any() and (soft.max(1) == 1).any()  # shares somewhere, one-hot elsewhere
    assert (soft[~solver_set.positions["mask"][rows]] == 0).all()  # nothing on an illegal move


def test_to_demonstrations_is_what_the_imitation_collects(heuristic_set: Dataset) -> None:
    """The same deals, seeds and idle cut through the imitation's own collection give the same rows,
    and the returns its discounting gives."""
    gamma = 0.99
    deals = training_deals(HEURISTIC["games"], HEURISTIC["seed"])
    want = imitation.collect(
        "FortyThieves-v0", deals, "heuristic", seed=HEURISTIC["seed"], gamma=gamma, workers=1, log=None
    )
    got = heuristic_set.to_demonstrations(gamma)
    assert got.obs.keys() == want.obs.keys()
    for k in want.obs:
        assert np.array_equal(got.obs[k], want.obs[k]) and got.obs[k].dtype == want.obs[k].dtype
    for name in ("masks", "actions", "returns", "games", "won", "home", "lengths"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert not np.array_equal(heuristic_set.to_demonstrations(0.5).returns, got.returns)


# ---------------------------------------------------------------------------------- the command


def test_the_command_collects_and_summarises(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "data"
    args = ["dataset", "collect", "--teacher", "heuristic", "--variant", "classic", "--games", "3"]
    assert main([*args, "--out", str(out), "--chunk", "2", "--workers", "1", "--quiet", "--seed", "3"]) == 0
    said = capsys.readouterr().out
    assert "wrote 2 of 2 chunks" in said and "3 games" in said
    ds = load_dataset(out, log=None)
    assert ds.manifest.settings.teacher == "heuristic" and ds.manifest.settings.env_id == "FortyThieves-v0"
    assert main(["dataset", "info", str(out)]) == 0
    info = capsys.readouterr().out
    won = int(ds.games["won"].sum())
    assert f"games       3/3: won {won} = " in info and "Wilson 95 %" in info
    assert f"positions   {len(ds):,} " in info and "decisive 0 = 0.0%" in info
    assert main([*args, "--out", str(out), "--chunk", "2", "--workers", "1", "--quiet", "--seed", "3"]) == 0
    assert "wrote 0 of 2 chunks" in capsys.readouterr().out  # all there: nothing played again


def test_the_command_takes_teacher_options_and_an_env_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "data"
    args = ["dataset", "collect", "--teacher", "sampling_solver", "--env", "FortyThieves-Relaxed-v0", "--games", "1"]
    opts = ["--teacher-opt", "samples=2", "--teacher-opt", "nodes_per_solve=300"]
    assert main([*args, *opts, "--out", str(out), "--workers", "1", "--quiet"]) == 0
    settings = load_dataset(out, log=None).manifest.settings
    assert settings.teacher_options == {"samples": 2, "nodes_per_solve": 300}
    assert settings.env_id == "FortyThieves-Relaxed-v0"
    capsys.readouterr()
    assert main([*args, "--teacher-opt", "sampels=2", "--out", str(tmp_path / "bad"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "sampels" in err and err.count("\n") == 1 and not (tmp_path / "bad").exists()
