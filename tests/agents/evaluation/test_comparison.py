"""``forty-thieves compare`` end to end on small synthetic evaluate results files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.cli import main
from agents.evaluation.comparison import compare, group_files, load_results
from agents.evaluation.evaluate import Evaluation, GameResult, summarise, write_results


def _write(folder: Path, won: set[int], deals=range(1, 21), agent="ppo", label=None, variant="classic", seed=0):
    """An evaluate results folder whose rows win exactly the deals in ``won``."""
    rows = [GameResult(d, d in won, 104 if d in won else 30, 200, 0.01, False) for d in deals]
    settings = {"agent": agent, "variant": variant, "deals": "list", "seed": seed, "max_moves": 1000}
    if label:
        settings["label"] = label
    json_path, _ = write_results(Evaluation(settings, summarise(rows), rows), folder)
    return json_path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {
        "a1": _write(tmp_path / "a1", set(range(1, 11)), label="ppo-emb", seed=1),
        "a2": _write(tmp_path / "a2", set(range(1, 9)), label="ppo-emb", seed=2),
        "a3": _write(tmp_path / "a3", set(range(1, 13)), label="ppo-emb", seed=3),
        "b": _write(tmp_path / "b", {1, 2, 3, 4, 5, 15, 16}, agent="heuristic"),
    }


def test_compare_cli_end_to_end(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    args = [str(files[k]) for k in ("a1", "a2", "a3")] + [str(files["b"].parent), "--json", str(out)]
    assert main(["compare", *args]) == 0
    text = capsys.readouterr().out
    assert "10/20" in text and "7/20" in text and "seed pair 1" in text and "ppo-emb" in text
    report = json.loads(out.read_text())
    assert [g["group"] for g in report["groups"]] == ["ppo-emb", "heuristic"]
    emb, heur = report["groups"]
    assert emb["seeds"] == 3 and emb["deals"] == 20
    assert emb["win_rates"] == pytest.approx([0.5, 0.4, 0.6])
    assert emb["mean"] == pytest.approx(0.5) and emb["iqm"] == pytest.approx(0.5)  # under 4 seeds
    assert emb["mean_ci"][0] < 0.5 < emb["mean_ci"][1]
    assert heur["seeds"] == 1 and heur["win_rates"] == [0.35]
    (test,) = report["mcnemar"]
    (pair,) = test["pairs"]  # the heuristic has one file: a1 against it, a2 and a3 sit out
    # a1 won 6..10 alone, b won 15 and 16 alone: 5 against 2, p = 2 * (1 + 7 + 21) / 128.
    assert (pair["a_only"], pair["b_only"], pair["both"], pair["neither"]) == (5, 2, 5, 8)
    assert pair["pvalue"] == pytest.approx(58 / 128)
    assert test["left_out"] == [str(files["a2"]), str(files["a3"])]
    f = {row["path"]: row for row in report["files"]}[str(files["b"])]
    assert (f["wins"], f["deals"]) == (7, 20) and f["wilson_95"][0] < 0.35 < f["wilson_95"][1]
    # Same files, same seed: the same report.
    assert main(["compare", *args[:-1], str(tmp_path / "again.json")]) == 0
    assert json.loads((tmp_path / "again.json").read_text()) == report


def test_named_groups_pool_the_seed_pairs(files: dict[str, Path], tmp_path: Path) -> None:
    c1 = _write(tmp_path / "c1", {1, 2, 3})
    c2 = _write(tmp_path / "c2", {1, 2, 19, 20})
    groups = group_files([], [f"A={files['a1']},{files['a2']}", f"C={c1},{c2}"])
    report = compare(groups, n_boot=200, seed=5)
    (test,) = report["mcnemar"]
    assert [(p["a_only"], p["b_only"]) for p in test["pairs"]] == [(7, 0), (6, 2)]
    pooled = test["pooled"]
    assert (pooled["pairs"], pooled["games"], pooled["a_only"], pooled["b_only"]) == (2, 40, 13, 2)
    from scipy.stats import binomtest

    assert pooled["pvalue"] == pytest.approx(binomtest(13, 15).pvalue)
    assert test["left_out"] == []


def test_groups_may_share_only_some_deals(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", {1, 2, 3}, deals=range(1, 11))
    b = _write(tmp_path / "b", {5, 6}, deals=range(5, 21), agent="random")
    report = compare(group_files([a, b]), n_boot=100)
    (pair,) = report["mcnemar"][0]["pairs"]
    assert pair["shared_deals"] == 6 and (pair["a_only"], pair["b_only"]) == (0, 2)
    assert [g["deals"] for g in report["groups"]] == [10, 16]


def test_refusals_name_the_files(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    relaxed = _write(tmp_path / "r", {1}, variant="relaxed", agent="random")
    far = _write(tmp_path / "far", {101}, deals=range(101, 121), agent="random")
    short = _write(tmp_path / "short", {1}, deals=range(1, 11), label="ppo-emb")
    cases = [
        ([str(files["a1"]), str(relaxed)], ["different variants", str(relaxed), "relaxed"]),
        ([str(files["a1"]), str(far)], ["share no deal", str(files["a1"]), str(far)]),
        ([str(files["a1"]), str(short)], ["'ppo-emb'", "different deals", str(short), "10 deals"]),
        ([str(files["a1"]), str(files["a1"])], ["given twice", str(files["a1"])]),
        ([str(tmp_path / "missing.json")], ["no such results file"]),
        (["--group", "nameless"], ["NAME=a.json,b.json"]),
    ]
    for args, words in cases:
        assert main(["compare", *args]) == 2, args
        err = capsys.readouterr().err
        for w in words:
            assert w in err, (args, w, err)
    (tmp_path / "summary.json").write_text(json.dumps({"settings": {}, "summary": {}}))
    with pytest.raises(ValueError, match="no per-deal rows"):
        load_results(tmp_path / "summary.json")
    capped = tmp_path / "capped"
    _write(capped, {1})
    data = json.loads((capped / "results.json").read_text())
    data["settings"]["max_moves"] = 300
    (capped / "results.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="move caps"):
        compare(group_files([files["a1"], capped / "results.json"]))


def test_evaluate_label_is_stored(tmp_path: Path) -> None:
    out = tmp_path / "h"
    args = ["evaluate", "--agent", "random", "--deals", "1-2", "--max-moves", "20", "--workers", "1", "--quiet"]
    assert main([*args, "--label", "mine", "--out", str(out)]) == 0
    assert load_results(out).label == "mine"


def _options(path: Path, **settings) -> Path:
    """Set ``settings`` (``agent_options``, ``model_sha256``, ``label``) in a written results file."""
    data = json.loads(path.read_text())
    data["settings"].update(settings)
    path.write_text(json.dumps(data))
    return path


def test_default_groups_are_one_agent_with_one_model(tmp_path: Path) -> None:
    a = _options(_write(tmp_path / "g1", {1}), agent_options={"model": "runs/a"})
    b = _options(_write(tmp_path / "g2", {2}), agent_options={"model": "runs/b"})
    a_again = _options(_write(tmp_path / "g3", {1, 3}, seed=1), agent_options={"model": "./runs/a/", "threads": 1})
    sampled = _options(
        _write(tmp_path / "s", {1, 2}), agent_options={"model": "runs/a", "deterministic": False, "threads": 1}
    )
    groups = group_files([a, sampled, b, a_again])
    assert {k: [r.path for r in v] for k, v in groups.items()} == {
        "ppo model=runs/a": [a, a_again],  # one model, another eval seed: threads do not change play
        "ppo model=runs/a deterministic=False": [sampled],
        "ppo model=runs/b": [b],
    }
    assert groups.notes == []


def test_two_models_are_two_groups_with_mcnemar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: the shipped classic model and a fresh run, both as agent ppo."""
    shipped = _options(_write(tmp_path / "ppo", set(range(1, 9))), agent_options={"model": "classic"})
    tiny = _options(_write(tmp_path / "tiny", {1, 2}), agent_options={"model": "runs/tiny"})
    assert main(["compare", str(tmp_path / "ppo"), str(tmp_path / "tiny"), "--json", str(tmp_path / "c.json")]) == 0
    text = capsys.readouterr().out
    report = json.loads((tmp_path / "c.json").read_text())
    groups = [(g["group"], g["seeds"]) for g in report["groups"]]
    assert groups == [("ppo model=classic", 1), ("ppo model=runs/tiny", 1)]
    ((pair,),) = [t["pairs"] for t in report["mcnemar"]]
    assert (pair["a_only"], pair["b_only"], pair["both"], pair["neither"]) == (6, 0, 2, 12)
    assert pair["pvalue"] == pytest.approx(2 / 64)
    assert "McNemar" in text and "seed pair 1" in text and "0.0312" in text
    # --group still joins them, as one recipe's seeds would be: then nothing to pair.
    joined = compare(group_files([], [f"both={shipped},{tiny}"]), n_boot=50)
    assert [g["seeds"] for g in joined["groups"]] == [2] and joined["mcnemar"] == []


def test_model_digest_decides(tmp_path: Path) -> None:
    """evaluate's ``model_sha256``: a folder and its zip are one model; a model retrained in place is another."""
    folder = _options(_write(tmp_path / "f", {1}), agent_options={"model": "runs/a"}, model_sha256="ab" * 32)
    zipped = _options(
        _write(tmp_path / "z", {1, 2}), agent_options={"model": "runs/a/best_model.zip"}, model_sha256="ab" * 32
    )
    retrained = _options(_write(tmp_path / "r", {3}), agent_options={"model": "runs/a"}, model_sha256="cd" * 32)
    groups = group_files([folder, zipped, retrained])
    assert {k: [r.path for r in v] for k, v in groups.items()} == {
        "ppo model=runs/a sha256 abababababab": [folder, zipped],
        "ppo model=runs/a sha256 cdcdcdcdcdcd": [retrained],
    }
    assert len(groups.notes) == 1 and "3 files named 'ppo model=runs/a'" in groups.notes[0]


def test_a_label_does_not_join_different_models(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = _options(_write(tmp_path / "one", {1}), label="mine", agent_options={"model": "runs/a"})
    two = _options(_write(tmp_path / "two", {2}), label="mine", agent_options={"model": "runs/b"})
    same = _options(_write(tmp_path / "same", {1, 2}, seed=3), label="mine", agent_options={"model": "runs/a"})
    groups = group_files([one, two, same])
    assert {k: [r.path for r in v] for k, v in groups.items()} == {
        "mine (ppo model=runs/a)": [one, same],
        "mine (ppo model=runs/b)": [two],
    }
    assert main(["compare", str(one), str(two), str(same)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("note: 3 files named 'mine' played different models or options: 2 groups")
    # A label shared by files of one model is one group, named by the label.
    assert list(group_files([one, same])) == ["mine"]
    # A plain file's group may not take a --group's name silently.
    with pytest.raises(ValueError, match=r"'mine'.*--group names too"):
        group_files([same], [f"mine={two}"])
