"""benchmarks/solver_bench.py (agents.bench.solver): deals solved, a won line replayed, the JSON
it writes and the summary of several such files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.bench.solver import main

# Deal 2 is won (in about 11,000 positions) and deal 5 lost at once: the node budget decides,
# the time budget is only a bound.
BUDGET = ["--deals", "2,5", "--nodes", "200000", "--seconds", "60", "--clock", "cpu"]


def test_solves_writes_and_summarizes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert main([*BUDGET, "--json", str(a)]) == 0
    out = capsys.readouterr().out
    assert "won 1  lost 1  unknown 0  of 2" in out
    rows = json.loads(a.read_text())["results"]
    assert [(r["deal"], r["verdict"]) for r in rows] == [(2, "won"), (5, "lost")]
    assert rows[0]["moves"] > 0
    assert main([*BUDGET, "--json", str(b), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["--summarize", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "4 deals: " in out and "won 2  lost 2  unknown 0  of 4" in out
