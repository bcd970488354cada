"""The notebooks run end to end in their fast mode (FAST=True, a handful of deals), as CI does."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from agents.training.notebooks import execute_notebook, inject_parameters, parse_parameter

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOKS = ROOT / "notebooks"


def outputs(nb: nbformat.NotebookNode) -> tuple[str, int]:
    """All text the notebook printed, and how many pictures it drew."""
    text, images = [], 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                raise AssertionError(f"{out['ename']}: {out['evalue']}")
            text.append(out.get("text", ""))
            data = out.get("data", {})
            text.append(data.get("text/plain", ""))
            images += "image/png" in data
    return "".join(text), images


def test_compare_agents_fast(tmp_path: Path) -> None:
    nb = execute_notebook(
        NOTEBOOKS / "compare_agents.ipynb",
        {"FAST": True, "N": 3, "WORKERS": 1, "SOLVER_N": 2, "VARIANTS": ["classic", "relaxed"], "PPO_MODELS": {}},
        tmp_path / "out.ipynb",
        timeout=300,
    )
    text, images = outputs(nb)
    assert "[FAST mode]" in text and "N = 3 test deals" in text
    for variant in ("classic", "relaxed"):
        for agent in ("random", "heuristic"):
            assert f"{variant:9} {agent:10} won" in text
    assert "lookahead" not in text.split("[FAST mode]")[1]  # left out in fast mode
    assert f"{'classic':9} {'solver':10} won" in text and "solver not available" not in text
    assert images == 3  # the winnability table, win rates, cards home
    assert "| classic | 1..200 (200) |" in text  # the shipped table, printed above its plot


def test_training_fast(tmp_path: Path) -> None:
    nb = execute_notebook(
        NOTEBOOKS / "training.ipynb", {"FAST": True, "FRAMES": 4}, tmp_path / "out.ipynb", timeout=300
    )
    text, images = outputs(nb)
    assert "run fast: 256 steps" in text
    assert "final evaluation of best_model.zip on test deals 1..2" in text
    assert "deal 1: " in text and "moves:" in text
    assert images == 2  # curves, replay


@pytest.mark.parametrize("name", ["compare_agents.ipynb", "training.ipynb"])
def test_committed_notebooks_have_parameters_and_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    assert sum("parameters" in t for t in tags) == 1
    text, images = outputs(nb)
    assert images >= 2, "commit the notebook with the outputs of a real run"
    assert "[FAST mode]" not in text and "run fast" not in text


def test_parameter_injection() -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("N = 1", metadata={"tags": ["parameters"]}), nbformat.v4.new_code_cell("")]
    inject_parameters(nb, {"N": 5, "NAMES": ["a"]})
    inject_parameters(nb, {"N": 6})  # replaces the injected cell
    assert [c.source for c in nb.cells] == ["N = 1", "# Parameters\nN = 6\n", ""]
    assert parse_parameter("N=20") == ("N", 20) and parse_parameter("RUN=runs/x") == ("RUN", "runs/x")
    with pytest.raises(ValueError):
        parse_parameter("no equals")
