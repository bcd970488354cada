"""``forty-thieves solve``: verdict file, summary, replay check, resume, budget mismatch, export."""

from __future__ import annotations

import gzip
import json

import pytest

from agents.cli import main
from agents.solving import sweep as solving
from agents.solving.sweep import ReplayError, replay, solve_deals
from agents.solving.verdicts import Budget, read_verdicts
from forty_thieves_env.text.game import deal

# relaxed deals are mostly won within a few thousand positions; a node budget keeps it quick.
# No heuristic games first (they win nearly every relaxed deal), so that the solver runs.
SMALL = ["--variant", "relaxed", "--nodes", "200000", "--seconds", "20", "--memory", "256", "--workers", "1",
         "--heuristic-tries", "0"]  # fmt: skip


def _solve(tmp_path, *extra: str) -> int:
    return main(["solve", *SMALL, "--out", str(tmp_path / "run"), "--quiet", *extra])


def _rows(tmp_path) -> list[dict]:
    lines = (tmp_path / "run" / "verdicts.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_cli_end_to_end(tmp_path, capsys):
    assert _solve(tmp_path, "--deals", "32000-32002") == 0
    out = capsys.readouterr().out
    assert "won" in out and "Wilson 95 %" in out
    rows = _rows(tmp_path)
    assert sorted(r["deal"] for r in rows) == [32000, 32001, 32002]
    for r in rows:
        assert r["verdict"] in ("won", "lost", "unknown")
        assert set(r) >= {"deal", "verdict", "moves", "nodes", "seconds", "reason", "decided_by"}
        if r["verdict"] == "won":  # the written line replays to a win
            state = deal("relaxed", r["deal"])
            for move in r["moves"]:
                state.play(move)
            assert state.is_won()
        else:
            assert r["moves"] == []
    assert any(r["verdict"] == "won" for r in rows)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    s = summary["summary"]
    assert s["deals"] == 3
    assert sum(s[v]["count"] for v in ("won", "lost", "unknown")) == 3
    for v in ("won", "lost", "unknown"):
        low, high = s[v]["ci95"]
        assert 0 <= low <= s[v]["share"] <= high <= 1
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["variant"] == "relaxed" and meta["budget"]["nodes"] == 200000
    assert "source" in meta  # the git commit the verdicts were made at


def test_resume_solves_only_new_deals(tmp_path):
    assert _solve(tmp_path, "--deals", "32000-32099", "--n", "2") == 0
    first = _rows(tmp_path)
    assert len(first) == 2
    assert _solve(tmp_path, "--deals", "32000-32099", "--n", "4") == 0
    rows = _rows(tmp_path)
    assert len(rows) == 4 and rows[:2] == first  # the old lines are kept, two appended
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["solved_now"] == 2 and summary["summary"]["deals"] == 4
    assert _solve(tmp_path, "--deals", "32000-32099", "--n", "4") == 0  # nothing left to do
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["solved_now"] == 0
    assert len(_rows(tmp_path)) == 4


def test_resume_after_a_torn_line(tmp_path):
    """A run killed mid-write leaves half a line: that deal is solved again."""
    assert _solve(tmp_path, "--deals", "32000-32001") == 0
    path = tmp_path / "run" / "verdicts.jsonl"
    text = path.read_text()
    path.write_text(text[: len(text) - 20])  # cut the last line
    assert set(read_verdicts(path)) == {32000}
    assert _solve(tmp_path, "--deals", "32000-32001") == 0
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["solved_now"] == 1


def test_mismatched_budget_is_refused(tmp_path, capsys):
    assert _solve(tmp_path, "--deals", "32000") == 0
    capsys.readouterr()
    out = str(tmp_path / "run")
    code = main(["solve", "--variant", "relaxed", "--nodes", "999", "--workers", "1", "--deals", "32001", "--out", out])
    assert code == 2
    err = capsys.readouterr().err
    assert "--restart" in err and "999" in err
    assert len(_rows(tmp_path)) == 1  # untouched
    code = main(["solve", *SMALL, "--variant", "classic", "--deals", "32001", "--out", out, "--quiet"])
    assert code == 2  # another variant
    # --restart discards the old verdicts and starts over with the new budget
    assert _solve(tmp_path, "--deals", "32001", "--restart") == 0
    assert [r["deal"] for r in _rows(tmp_path)] == [32001]


def test_bad_won_line_is_an_error(tmp_path, monkeypatch):
    def fake(variant, deal_number, budget):
        return {"deal": deal_number, "verdict": "won", "moves": ["s"], "nodes": 1, "states": 1, "seconds": 0.0,
                "reason": "", "decided_by": "fake"}  # fmt: skip

    monkeypatch.setattr(solving, "solve_deal", fake)
    with pytest.raises(ReplayError, match="not a win"):
        solve_deals("relaxed", "32000", out=tmp_path / "run", budget=Budget(nodes=10), workers=1, progress=False)
    assert read_verdicts(tmp_path / "run" / "verdicts.jsonl") == {}  # nothing written
    with pytest.raises(ReplayError, match="does not play"):
        replay("relaxed", 32000, ["w>f"] * 3)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="strategy"):
        solve_deals("classic", "32000", out=tmp_path / "a", budget=Budget(strategy="nope"), progress=False)
    with pytest.raises(ValueError, match="seconds"):
        solve_deals("classic", "32000", out=tmp_path / "a", budget=Budget(seconds=0), progress=False)
    with pytest.raises(ValueError, match="unknown variant"):
        solve_deals("klondike", "32000", out=tmp_path / "a", progress=False)
    with pytest.raises(ValueError, match="bad deals"):
        solve_deals("classic", "train", out=tmp_path / "a", progress=False)


def test_export_winnable(tmp_path):
    assert _solve(tmp_path, "--deals", "32000-32002", "--export-winnable", str(tmp_path / "set.json.gz")) == 0
    doc = json.loads(gzip.decompress((tmp_path / "set.json.gz").read_bytes()))
    meta = doc["meta"]
    rows = {r["deal"]: r for r in _rows(tmp_path)}
    won = sorted(d for d, r in rows.items() if r["verdict"] == "won")
    assert sorted(int(d) for d in doc["certificates"]) == won
    assert meta["variant"] == "relaxed" and meta["budget"]["nodes"] == 200000
    assert "solver_source" in meta
    assert meta["deals_searched"] == {"spec": "32000-32002", "count": 3, "first": 32000, "last": 32002}
    assert sum(meta["counts"].values()) == 3 and meta["counts"]["won"] == len(won)
    for d, line in doc["certificates"].items():
        replay("relaxed", int(d), line.split())
    # test and validation deals never go into a set
    with pytest.raises(ValueError, match="training deals"):
        solving.export_winnable(tmp_path / "run", "1-3", path=tmp_path / "x.json.gz")
    with pytest.raises(ValueError, match="no verdict"):
        solving.export_winnable(tmp_path / "run", "32000-32005", path=tmp_path / "x.json.gz")


def test_heuristic_games_come_first(tmp_path):
    """Rank and File deal 7: the heuristic wins it with seed 0; ten positions of search do not."""
    first = solving.solve_deal("rank_and_file", 7, Budget(nodes=10, seconds=30))
    assert first["verdict"] == "won" and first["decided_by"] == "heuristic/seed 0"
    assert first["nodes"] == len(first["moves"]) > 0
    replay("rank_and_file", 7, first["moves"])
    searched = solving.solve_deal("rank_and_file", 7, Budget(nodes=10, seconds=30, heuristic_tries=0))
    assert searched["verdict"] == "unknown" and not searched["decided_by"].startswith("heuristic")
    # only the portfolio plays them first
    prover = solving.solve_deal("rank_and_file", 7, Budget(nodes=10, seconds=30, strategy="prover"))
    assert prover["verdict"] == "unknown"
    # through the command line, with the default tries, the row is written and replays
    out = str(tmp_path / "rf")
    code = main(["solve", "--variant", "rank_and_file", "--deals", "7", "--nodes", "10", "--memory", "64",
                 "--workers", "1", "--out", out, "--quiet"])  # fmt: skip
    assert code == 0
    (row,) = read_verdicts(tmp_path / "rf" / "verdicts.jsonl").values()
    assert row["verdict"] == "won" and row["decided_by"].startswith("heuristic/")
    assert json.loads((tmp_path / "rf" / "meta.json").read_text())["budget"]["heuristic_tries"] == 32
    with pytest.raises(ValueError, match="heuristic tries"):
        Budget(heuristic_tries=-1).check()


def test_folders_from_before_the_heuristic_games_resume_without_them(tmp_path):
    assert _solve(tmp_path, "--deals", "32000") == 0
    meta_path = tmp_path / "run" / "meta.json"
    meta = json.loads(meta_path.read_text())
    del meta["budget"]["heuristic_tries"]  # as written before the option existed
    meta_path.write_text(json.dumps(meta))
    assert _solve(tmp_path, "--deals", "32000-32001") == 0  # SMALL has --heuristic-tries 0
    assert len(_rows(tmp_path)) == 2
    with pytest.raises(ValueError, match="--restart"):
        budget = Budget(nodes=200000, seconds=20, memory_mb=256)  # 32 tries: another budget
        solve_deals("relaxed", "32000-32002", out=tmp_path / "run", budget=budget, workers=1, progress=False)


def test_default_workers_by_job_size():
    from agents.solving.sweep import POOL_START_SECONDS, default_workers

    assert default_workers(3, 10.0, cpus=2) == 2  # a budget-long deal saved in parallel pays for the pool
    assert default_workers(3, 0.2, cpus=2) == 1  # at most 0.2 s saved: the pool's start costs more
    assert default_workers(1, 10.0, cpus=8) == 1  # never more processes than deals
    assert default_workers(100, 10.0, cpus=8) == 8
    assert default_workers(2, POOL_START_SECONDS / 2, cpus=2) == 1
    assert default_workers(4, POOL_START_SECONDS, cpus=2) == 2
