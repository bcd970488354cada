"""The winnability table: counts, intervals and times from solve folders, agents beside, bad input."""

from __future__ import annotations

import json

import pytest

from agents.cli import main
from agents.evaluation.statistics import wilson_interval
from agents.solving.winnability import format_table, load_rows, table_row


def solve_folder(path, variant, verdicts):
    """A solve output folder with ``verdicts`` ``{deal: (verdict, seconds)}``."""
    path.mkdir(parents=True)
    meta = {
        "variant": variant,
        "budget": {"seconds": 10.0, "clock": "cpu"},
        "command": "forty-thieves solve ...",
        "source": "abc1234",
    }
    (path / "meta.json").write_text(json.dumps(meta))
    lines = [json.dumps({"deal": d, "verdict": v, "moves": [], "seconds": s}) for d, (v, s) in verdicts.items()]
    (path / "verdicts.jsonl").write_text("\n".join(lines) + "\n")
    return path


def results_file(path, agent, won):
    path.mkdir(parents=True)
    rows = [
        {"deal": d, "won": w, "cards_on_foundations": 0, "moves": 1, "seconds": 0.1, "truncated": False}
        for d, w in won.items()
    ]
    (path / "results.json").write_text(json.dumps({"settings": {"agent": agent}, "summary": {}, "results": rows}))
    return path


VERDICTS = {1: ("won", 0.5), 2: ("won", 1.5), 3: ("lost", 4.0), 4: ("unknown", 10.0), 5: ("unknown", 10.1)}


def test_row_counts_intervals_and_times(tmp_path):
    row = table_row(solve_folder(tmp_path / "s", "classic", VERDICTS))
    assert row.counts == {"won": 2, "lost": 1, "unknown": 2}
    assert row.ci95["won"] == pytest.approx(wilson_interval(2, 5))
    assert row.decided == pytest.approx(3 / 5)
    assert (row.median_seconds, row.max_seconds) == (4.0, 10.1)
    assert (row.first_deal, row.last_deal, row.deals) == (1, 5, 5)
    assert row.source == "abc1234"
    # A subset of the deals gives that subset's figures.
    sub = table_row(tmp_path / "s", deals=[1, 3])
    assert sub.counts == {"won": 1, "lost": 1, "unknown": 0} and sub.decided == 1.0


def test_agent_beside_the_solver(tmp_path):
    folder = solve_folder(tmp_path / "s", "classic", VERDICTS)
    agent = results_file(tmp_path / "a", "sampling_solver", {1: True, 2: False, 3: False, 4: True, 5: False, 6: True})
    row = table_row(folder, agent=agent)
    a = row.agent
    assert (a.wins, a.games) == (2, 5)  # deal 6 is not in the table
    assert a.wins_on_solver_won == 1 and a.wins_on_unknown == 1 and a.share_of_solver_wins == 0.5
    text = format_table([row])
    assert "sampling_solver: 2 = 40.0 %" in text and "1/2 (+1 unknown)" in text


def test_bad_input_is_refused(tmp_path):
    folder = solve_folder(tmp_path / "s", "classic", VERDICTS)
    with pytest.raises(ValueError, match="no verdict for 1 of the deals"):
        table_row(folder, deals=[1, 9])
    with pytest.raises(ValueError, match="not a solve folder"):
        table_row(tmp_path)
    won_a_lost_deal = results_file(tmp_path / "a", "heuristic", {d: d == 3 for d in VERDICTS})
    with pytest.raises(ValueError, match=r"won deal 3, which the solver .* proved lost"):
        table_row(folder, agent=won_a_lost_deal)
    short = results_file(tmp_path / "b", "heuristic", {1: True})
    with pytest.raises(ValueError, match="no game on 4 of the deals"):
        table_row(folder, agent=short)


def test_cli(tmp_path, capsys):
    c = solve_folder(tmp_path / "c", "classic", VERDICTS)
    s = solve_folder(tmp_path / "s", "streets", {1: ("won", 0.1), 2: ("won", 0.2)})
    agent = results_file(tmp_path / "a", "heuristic", {1: True, 2: True})
    out = tmp_path / "rows.json"
    args = ["winnability", str(c), str(s), "--deals", "1-2", "--agent", f"streets={agent}", "--json", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "| classic | 1..2 (2) | 2 = 100.0 %" in printed and "heuristic: 2 = 100.0 %" in printed
    rows = json.loads(out.read_text())
    assert [r["variant"] for r in rows] == ["classic", "streets"] and rows[1]["agent"]["wins"] == 2
    # The JSON reads back into the same rows (the notebook plots the committed table from it).
    again = load_rows(out)
    assert format_table(again) in printed and again[1].agent.wins == 2
    # An agent for a preset without a folder, a malformed --agent: errors, exit code 2.
    assert main(["winnability", str(c), "--agent", f"maria={agent}"]) == 2
    assert main(["winnability", str(c), "--agent", "nonsense"]) == 2
    assert "PRESET=RESULTS" in capsys.readouterr().err


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    from agents.solving.winnability import plot_table

    row = table_row(solve_folder(tmp_path / "s", "classic", VERDICTS))
    path = plot_table([row], tmp_path / "t.png")
    assert path.stat().st_size > 1000
