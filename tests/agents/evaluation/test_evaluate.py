"""Evaluation protocol: deal lists, Wilson intervals, determinism, the CLI end to end."""

from __future__ import annotations

import csv
import json
import math

import pytest

from agents.cli import main
from agents.evaluation.evaluate import (
    agent_seed,
    evaluate,
    parse_option,
    summarise,
    write_results,
)
from agents.evaluation.statistics import wilson_interval
from agents.sweeps.pool import parse_deals


def test_parse_deals():
    assert parse_deals("test") == list(range(1, 1001))
    assert parse_deals("validation", n=3) == [1001, 1002, 1003]
    assert parse_deals("1-3,7") == [1, 2, 3, 7]
    assert parse_deals(" 5 ") == [5]
    assert parse_deals([9, 4]) == [9, 4]
    for bad in ("training", "3-1", "a-b", "1,,x", "0", "1,1"):
        with pytest.raises(ValueError):
            parse_deals(bad)
    with pytest.raises(ValueError):
        parse_deals("test", n=0)


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_wilson_interval_known_values():
    # 5 wins in 10: the textbook Wilson interval 0.2366..0.7634.
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.236593, abs=1e-6)
    assert high == pytest.approx(0.763407, abs=1e-6)
    for k, n in ((0, 20), (3, 1000), (97, 100), (250, 1000)):
        assert wilson_interval(k, n) == pytest.approx(_wilson(k, n), abs=1e-9)
    assert wilson_interval(0, 20)[0] == 0.0
    assert wilson_interval(0, 0) == (0.0, 1.0)  # no games: no information


def test_agent_seed_depends_on_seed_and_deal():
    assert agent_seed(0, 5) == agent_seed(0, 5)
    assert len({agent_seed(s, d) for s in range(3) for d in range(1, 50)}) == 3 * 49
    assert 0 <= agent_seed(123, 10**20) < 2**63


def test_parse_option():
    assert parse_option("samples=4") == ("samples", 4)
    assert parse_option("max-seconds=0.5") == ("max_seconds", 0.5)
    assert parse_option("avoid_cycles=false") == ("avoid_cycles", False)
    assert parse_option("max_seconds=none") == ("max_seconds", None)
    assert parse_option("name=abc") == ("name", "abc")
    with pytest.raises(ValueError):
        parse_option("samples")


def _outcomes(ev):
    return [(r.deal, r.won, r.cards_on_foundations, r.moves, r.truncated) for r in ev.results]


def test_evaluate_is_deterministic_and_summarises():
    a = evaluate("heuristic", "classic", "1-4", seed=3, workers=1, progress=False)
    b = evaluate("heuristic", "classic", [4, 3, 2, 1], seed=3, workers=1, progress=False)
    assert _outcomes(a) == _outcomes(b)  # order of play does not matter
    assert [r.deal for r in a.results] == [1, 2, 3, 4]
    s = a.summary
    assert s["games"] == 4
    assert s["wins"] == sum(r.won for r in a.results)
    assert s["mean_cards_on_foundations"] == pytest.approx(sum(r.cards_on_foundations for r in a.results) / 4)
    assert s["win_rate_ci95"] == pytest.approx(list(wilson_interval(s["wins"], 4)))
    # Each game's CPU time is measured; the summary's mean and maximum come from those rows.
    cpu = [r.cpu_seconds for r in a.results]
    assert all(c is not None and c > 0 for c in cpu)
    assert s["cpu_seconds_per_game"] == pytest.approx(sum(cpu) / 4)
    assert s["max_cpu_seconds"] == max(cpu)
    # Random play depends on the seed.
    r1 = evaluate("random", "classic", "1-3", seed=1, workers=1, progress=False)
    r2 = evaluate("random", "classic", "1-3", seed=2, workers=1, progress=False)
    assert _outcomes(r1) != _outcomes(r2)


def test_evaluate_pool_matches_serial():
    serial = evaluate("random", "streets", "10-13", seed=5, workers=1, progress=False)
    pooled = evaluate("random", "streets", "10-13", seed=5, workers=2, progress=False)
    assert _outcomes(serial) == _outcomes(pooled)
    assert pooled.settings["workers"] == 2


def test_evaluate_move_cap_counts_as_truncated():
    ev = evaluate("heuristic", "classic", "1-2", max_moves=5, workers=1, progress=False)
    assert all(r.moves == 5 and r.truncated and not r.won for r in ev.results)
    assert ev.summary["truncated"] == 2


def test_summarise_counts_wins():
    from agents.evaluation.evaluate import GameResult

    rows = [GameResult(d, d % 2 == 0, 50 + d, 100, 0.1, False) for d in range(1, 11)]
    s = summarise(rows)
    assert s["wins"] == 5 and s["win_rate"] == 0.5
    assert s["mean_cards_on_foundations"] == pytest.approx(55.5)
    assert "max_cpu_seconds" not in s  # rows without a CPU time (batched play) give none


def test_evaluate_cli_end_to_end(tmp_path, capsys):
    out = tmp_path / "run"
    args = "evaluate --agent heuristic --variant classic --deals 1-3 --seed 7 --workers 1 --quiet --out"
    rc = main([*args.split(), str(out)])
    assert rc == 0
    assert "heuristic on classic, 3 deals" in capsys.readouterr().out
    data = json.loads((out / "results.json").read_text())
    assert data["settings"]["agent"] == "heuristic" and data["settings"]["seed"] == 7
    assert data["summary"]["games"] == 3
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [int(r["deal"]) for r in rows] == [1, 2, 3]
    for row, res in zip(rows, data["results"], strict=True):
        assert float(row["cpu_seconds"]) == pytest.approx(res["cpu_seconds"], abs=1e-4)
        assert int(row["won"]) == res["won"]
        assert int(row["cards_on_foundations"]) == res["cards_on_foundations"]
        assert int(row["moves"]) == res["moves"]
    wins = sum(int(r["won"]) for r in rows)
    assert data["summary"]["wins"] == wins
    low, high = data["summary"]["win_rate_ci95"]
    assert low <= wins / 3 <= high
    # The same command gives the same games.
    out2 = tmp_path / "again"
    main(["evaluate", "--deals", "1-3", "--seed", "7", "--workers", "1", "--out", str(out2), "--quiet"])
    again = json.loads((out2 / "results.json").read_text())
    strip = [{k: v for k, v in r.items() if k not in ("seconds", "cpu_seconds")} for r in data["results"]]
    assert strip == [{k: v for k, v in r.items() if k not in ("seconds", "cpu_seconds")} for r in again["results"]]


def test_evaluate_cli_lookahead_options(tmp_path):
    out = tmp_path / "look"
    args = "evaluate --agent lookahead --deals 2 --samples 2 --candidates 2 --rollout-steps 30 --max-moves 40"
    rc = main([*args.split(), "--workers", "1", "--quiet", "--out", str(out)])
    assert rc == 0
    data = json.loads((out / "results.json").read_text())
    assert data["settings"]["agent_options"] == {"samples": 2, "candidates": 2, "rollout_steps": 30}
    assert data["results"][0]["moves"] <= 40


def test_evaluate_cli_sampling_solver(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    assert "sampling_solver" in capsys.readouterr().out
    out = tmp_path / "ss"
    args = "evaluate --agent sampling_solver --deals 2 --samples 2 --opt nodes_per_solve=2000 --max-moves 40"
    assert main([*args.split(), "--workers", "1", "--quiet", "--out", str(out)]) == 0
    data = json.loads((out / "results.json").read_text())
    assert data["settings"]["agent_options"] == {"samples": 2, "nodes_per_solve": 2000}
    assert data["results"][0]["moves"] <= 40


def test_evaluate_cli_errors(tmp_path, capsys):
    assert main(["evaluate", "--agent", "nobody", "--deals", "1", "--out", str(tmp_path)]) == 2
    assert "unknown agent" in capsys.readouterr().err
    assert main(["evaluate", "--deals", "validation-ish", "--out", str(tmp_path)]) == 2
    assert main(["evaluate", "--agent", "lookahead", "--opt", "bogus=1", "--deals", "1", "--out", str(tmp_path)]) == 2


def test_write_results_roundtrip(tmp_path):
    ev = evaluate("random", "maria", "1-2", workers=1, progress=False)
    json_path, csv_path = write_results(ev, tmp_path / "x")
    assert json.loads(json_path.read_text())["summary"] == ev.summary
    assert len(csv_path.read_text().splitlines()) == 3


def test_evaluate_by_env_id_plays_the_ids_rules(tmp_path, capsys):
    """A level id is its rules: Easy (one redeal, runs within the cap) wins deals classic loses."""
    easy = evaluate("heuristic", "FortyThieves-Easy-v0", "1-4", workers=1, progress=False)
    classic = evaluate("heuristic", "classic", "1-4", workers=1, progress=False)
    assert easy.settings["env_id"] == "FortyThieves-Easy-v0"
    assert "env_id" not in classic.settings
    assert easy.summary["wins"] > classic.summary["wins"]
    # A preset's id plays exactly its preset.
    by_id = evaluate("heuristic", "FortyThieves-v0", "1-4", workers=1, progress=False)
    assert [r.moves for r in by_id.results] == [r.moves for r in classic.results]
    out = tmp_path / "easy"
    args = ["evaluate", "--env", "FortyThieves-Easy-v0", "--deals", "1-2", "--workers", "1", "--quiet"]
    rc = main([*args, "--out", str(out)])
    assert rc == 0
    assert "heuristic on FortyThieves-Easy-v0, 2 deals" in capsys.readouterr().out
    assert json.loads((out / "results.json").read_text())["settings"]["env_id"] == "FortyThieves-Easy-v0"
