"""A data set survives faults: a kill at any moment loses no finished chunk and the same command
resumes to the arrays of an uninterrupted run; a damaged chunk is named on one line, skipped by
the loader and collected again by ``collect``; other settings are refused and nothing changes."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.cli import main
from agents.datasets import collect, load_dataset
from agents.datasets.dataset import Dataset
from agents.storage.files import DamagedFileError

sys.path.insert(0, str(Path(__file__).parents[1] / "storage"))
sys.path.insert(0, str(Path(__file__).parent))
from test_datasets import assert_same, quiet
from test_files import kill_while_running

SETTINGS = {"teacher": "heuristic", "env": "classic", "games": 9, "chunk": 2, "seed": 5}


def run(out: Path, log=quiet, **changes) -> object:
    return collect(out, **{**SETTINGS, **changes}, workers=1, progress=False, log=log)


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted collection: 9 games in chunks of 2 (the last of 1)."""
    out = tmp_path_factory.mktemp("whole") / "data"
    run(out)
    return out


def copy_of(whole: Path, tmp_path: Path) -> Path:
    shutil.copytree(whole, tmp_path / "data")
    return tmp_path / "data"


def cut(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


# ------------------------------------------------------------------------------ kills


#: Slows the collection in the killed process: a game takes 0.1 s more, and a chunk is written in
#: two halves 0.1 s apart, so that kills land before, between and inside the chunk writes.
SLOW = """
import time
from agents.datasets import collection, layout
from agents.storage import files

def slow_write(path, data):
    with files.replacing(path) as f:
        f.write(data[: len(data) // 2])
        f.flush()
        time.sleep(0.1)
        f.write(data[len(data) // 2 :])
    return path

def slow_play(*args, _play=collection.play_game):
    time.sleep(0.1)
    return _play(*args)

layout.write_bytes = slow_write
collection.play_game = slow_play
"""


def test_a_kill_at_any_moment_loses_no_finished_chunk_and_resumes(whole: Path, tmp_path: Path) -> None:
    kept_counts = []
    # Killed within 0.05 s of the manifest (before any chunk: a game takes 0.1 s), then five times
    # within 2 s of the first chunk (the other four take about 1.5 s more).
    for seed in range(6):
        out = tmp_path / f"data{seed}"
        script = (
            SLOW
            + f"""
from agents.datasets import collect
collect({str(out)!r}, "heuristic", "classic", 9, chunk=2, seed=5, workers=1, progress=False, log=lambda s: None)
"""
        )
        started = out / ("manifest.json" if seed == 0 else "chunks/00000.npz")
        kill_while_running(script, started, seed, tmp_path, within=0.05 if seed == 0 else 2.0)
        before = {k: v for k, v in files_of(out).items() if k.startswith("chunks/") and k.endswith(".npz")}
        kept_counts.append(len(before))
        assert load_dataset(out, log=None).damaged == []  # a chunk a kill leaves is whole (written aside, renamed in)
        logs: list[str] = []
        done = run(out, log=logs.append)
        assert done.kept == len(before) and done.redone == [] and logs == []
        kept_games = sum(1 if name == "chunks/00004.npz" else 2 for name in before)
        assert done.written == 5 - len(before) and done.games == 9 - kept_games
        after = files_of(out)
        assert all(after[k] == v for k, v in before.items())  # finished chunks kept as they were
        assert not [k for k in after if k.endswith(".tmp")]  # a write the kill cut short is cleared away
        assert_same(load_dataset(out, log=None), load_dataset(whole, log=None))
    assert kept_counts[0] == 0 and sum(1 <= k < 5 for k in kept_counts) >= 2, kept_counts  # kills mid-collection


def test_an_interrupt_after_a_chunk_keeps_it_and_the_rerun_plays_only_the_rest(whole: Path, tmp_path: Path) -> None:
    out = tmp_path / "data"

    def stop(k: int) -> None:
        if k == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        collect(out, **SETTINGS, workers=1, progress=False, log=quiet, after_chunk=stop)
    assert sorted(p.name for p in (out / "chunks").iterdir()) == ["00000.npz", "00001.npz"]
    partial = load_dataset(out, log=None)
    assert partial.chunks == [0, 1] and partial.missing == [2, 3, 4] and partial.n_games == 4
    (out / "chunks" / ".00002.npz.1234abcd.tmp").write_bytes(b"half a chunk")  # what a kill mid-write leaves
    done = run(out)
    assert (done.kept, done.written, done.games) == (2, 3, 5)
    assert not (out / "chunks" / ".00002.npz.1234abcd.tmp").exists()
    assert_same(load_dataset(out, log=None), load_dataset(whole, log=None))


# ------------------------------------------------------------------------------ damage


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        ("cut", "not a whole chunk"),
        ("flip", "not a whole chunk"),
        ("empty", "not a whole chunk"),
        ("other chunk", "it says it is chunk 0"),
    ],
)
def test_a_damaged_chunk_is_named_skipped_and_collected_again(
    whole: Path, tmp_path: Path, damage: str, why: str
) -> None:
    out = copy_of(whole, tmp_path)
    path = out / "chunks" / "00001.npz"
    data = path.read_bytes()
    if damage == "cut":
        cut(path)
    elif damage == "flip":
        path.write_bytes(data[:200] + bytes([data[200] ^ 0x5A]) + data[201:])
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        shutil.copy(out / "chunks" / "00000.npz", path)
    logs: list[str] = []
    ds = load_dataset(out, log=logs.append)
    assert len(logs) == 1 and "\n" not in logs[0], logs
    assert logs[0].startswith(f"{path} is damaged (") and why in logs[0] and logs[0].endswith("): skipped")
    assert ds.chunks == [0, 2, 3, 4] and ds.damaged == logs and ds.n_games == 7
    intact = load_dataset(whole, log=None)
    keep = ~np.isin(intact.games["deal"], intact.games["deal"][2:4])
    assert np.array_equal(ds.games["deal"], intact.games["deal"][keep])
    logs.clear()
    done = run(out, log=logs.append)
    assert done.redone == [1] and done.kept == 4 and done.written == 1
    assert len(logs) == 1 and logs[0].startswith(f"{path} is damaged (") and logs[0].endswith("collecting it again")
    assert_same(load_dataset(out, log=None), intact)


def test_a_chunk_holding_other_deals_is_collected_again(whole: Path, tmp_path: Path) -> None:
    out = copy_of(whole, tmp_path)
    other = tmp_path / "other"
    run(other, seed=6)
    shutil.copy(other / "chunks" / "00002.npz", out / "chunks" / "00002.npz")  # whole, but not this seed's deals
    logs: list[str] = []
    assert run(out, log=logs.append).redone == [2]
    assert logs == [f"{out / 'chunks' / '00002.npz'} is damaged (it holds other deals): collecting it again"]
    assert_same(load_dataset(out, log=None), load_dataset(whole, log=None))


def test_info_names_a_damaged_chunk_on_one_line(
    whole: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = copy_of(whole, tmp_path)
    cut(out / "chunks" / "00003.npz")
    assert main(["dataset", "info", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "00003.npz is damaged (" in captured.err
    assert "chunks      4/5 (1 damaged, skipped)" in captured.out and "games       7/9" in captured.out


def test_a_damaged_manifest_is_named(whole: Path, tmp_path: Path) -> None:
    out = copy_of(whole, tmp_path)
    cut(out / "manifest.json")
    with pytest.raises(DamagedFileError, match=r"manifest\.json is damaged \("):
        load_dataset(out)
    with pytest.raises(DamagedFileError, match=r"manifest\.json is damaged \("):
        run(out)


# ------------------------------------------------------------------------------ other settings


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"seed": 6}, "seed=5, not 6"),
        ({"games": 10}, "games=9, not 10"),
        ({"chunk": 3}, "chunk=2, not 3"),
        ({"teacher": "lookahead"}, "teacher='heuristic', not 'lookahead'"),
        ({"teacher_options": {"weights": {"home": 2.0}}}, "teacher_options={}, not {'weights': {'home': 2.0}}"),
        ({"env": "relaxed"}, "env_id='FortyThieves-v0', not 'FortyThieves-Relaxed-v0'"),
        ({"idle_cut": 0}, "idle_cut=100, not 0"),
    ],
)
def test_other_settings_are_refused_naming_the_key_and_nothing_changes(
    whole: Path, tmp_path: Path, changes: dict, key: str
) -> None:
    out = copy_of(whole, tmp_path)
    before = files_of(out)
    with pytest.raises(ValueError, match="was collected with") as err:
        run(out, **changes)
    assert str(err.value).startswith(f"{out} was collected with {key}: ") and "\n" not in str(err.value)
    assert files_of(out) == before


def test_the_command_refuses_other_settings_in_one_line(whole: Path, tmp_path: Path, capsys) -> None:
    out = copy_of(whole, tmp_path)
    before = files_of(out)
    args = ["dataset", "collect", "--teacher", "heuristic", "--games", "9", "--chunk", "2", "--seed", "7"]
    assert main([*args, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "was collected with seed=5, not 7" in err
    assert files_of(out) == before


def test_a_folder_of_other_files_or_an_oracle_teacher_is_refused(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"holds files but no manifest\.json"):
        run(tmp_path / "busy")
    with pytest.raises(ValueError, match="reads the hidden cards"):
        run(tmp_path / "oracle", teacher="solver")
    assert not (tmp_path / "oracle").exists()


def test_a_loaded_data_set_with_no_chunk_yet_is_empty(tmp_path: Path) -> None:
    out = tmp_path / "data"

    def stop(k: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        collect(out, **SETTINGS, workers=1, progress=False, log=quiet, after_chunk=stop)
    (out / "chunks" / "00000.npz").unlink()
    ds: Dataset = load_dataset(out, log=None)
    assert len(ds) == 0 and ds.n_games == 0 and ds.missing == [0, 1, 2, 3, 4]
    assert len(ds.to_demonstrations(0.99)) == 0 and ds.summary()["games"] == 0
