"""agents/storage/files.py and agents/storage/modelfile.py: atomic writes that a kill cannot tear, the repair of
an append-only log's torn tail, checked reads, the output-folder probe, and model zips read
whole before loading. The kills are real: a subprocess writing in a loop gets SIGKILL at a
random moment."""

from __future__ import annotations

import errno
import io
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

from agents.storage import files
from agents.storage.files import (
    DamagedFileError,
    LineLog,
    check_writable,
    read_json,
    repair_tail,
    write_json,
    write_text,
)
from agents.storage.modelfile import check_model, save_model

ROOT = Path(__file__).resolve().parents[3]


def fake_model_bytes(size: int, seed: int) -> bytes:
    """A zip with the entries SB3 needs (``data``, ``policy.pth``), stored uncompressed as SB3 does."""
    payload = random.Random(seed).randbytes(size)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
        z.writestr("data", json.dumps({"num_timesteps": seed}))
        z.writestr("policy.pth", payload)
    return buffer.getvalue()


class FakeModel:
    """What :func:`save_model` needs of a model: SB3's ``save`` into a buffer."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def save(self, buffer: io.BytesIO) -> None:
        buffer.write(self.data)


#: Script lines that make every LineLog append reach the file in two writes, 2 ms apart (a slow
#: disk, or one filling up): a kill then often lands between them, leaving a line cut short.
#: (A kill does not cut a single small write() in practice; a crash or a full disk does.)
SLOW_APPENDS = """
import time
from agents.storage import files

def append_in_two(self, *lines):
    data = "".join(line + "\\n" for line in lines).encode()
    for part in (data[: len(data) // 2], data[len(data) // 2 :]):
        self._file.write(part)
        self._file.flush()
        time.sleep(0.002)

files.LineLog.append = append_in_two
"""


def kill_while_running(
    script: str, started: Path, seed: int, cwd: Path, within: float = 0.15, slow_appends: bool = False
) -> None:
    """Run ``script`` in a subprocess (this checkout's packages first on its path; with
    ``slow_appends``, :data:`SLOW_APPENDS`), wait until it made ``started``, then SIGKILL it
    after a random 0 to ``within`` seconds (mid-write, often: its loop does little but write)."""
    code = f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
    code += (SLOW_APPENDS if slow_appends else "") + textwrap.dedent(script)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=cwd)
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert proc.poll() is None, "the writer died before it started"
            assert time.monotonic() < deadline, "the writer did not start"
            time.sleep(0.01)
        time.sleep(random.Random(seed).uniform(0.0, within))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


# ----------------------------------------------------------------------- atomic writes


def test_write_replaces_whole_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "doc.json"
    write_json(path, {"a": 1})
    write_json(path, {"a": 2})
    assert read_json(path, "") == {"a": 2}
    assert sorted(p.name for p in path.parent.iterdir()) == ["doc.json"]
    assert oct(path.stat().st_mode & 0o777) == oct(0o666 & ~_umask())  # the usual permissions, not 0600


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "doc.txt"
    write_text(path, "old\n")

    class Boom(Exception):
        pass

    with pytest.raises(Boom), files.replacing(path) as f:
        f.write(b"half of the new")
        raise Boom
    with pytest.raises(KeyboardInterrupt), files.replacing(path) as f:
        f.write(b"half of the new")
        raise KeyboardInterrupt
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["doc.txt"]


def test_a_full_disk_names_the_file_and_keeps_the_old_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "doc.txt"
    write_text(path, "old\n")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(OSError, match=r"cannot write .*doc.txt: No space left on device"):
        write_text(path, "new\n")
    monkeypatch.undo()
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["doc.txt"]


@pytest.mark.parametrize("seed", range(4))
def test_a_model_save_killed_at_a_random_moment_leaves_a_whole_model(tmp_path: Path, seed: int) -> None:
    """SIGKILL during save_model, over and over: the file is always one whole model, old or new."""
    path = tmp_path / "rl_model_64_steps.zip"
    started = tmp_path / "started"
    script = f"""
        import sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_files import FakeModel, fake_model_bytes
        from agents.storage.modelfile import save_model
        models = [FakeModel(fake_model_bytes(2_000_000, k)) for k in (1, 2)]
        save_model(models[0], {str(path)!r})
        Path({str(started)!r}).touch()
        k = 0
        while True:
            k += 1
            save_model(models[k % 2], {str(path)!r})
    """
    kill_while_running(script, started, seed, tmp_path)
    check_model(path)  # whole: every entry passes its CRC
    with zipfile.ZipFile(path) as z:
        assert json.loads(z.read("data"))["num_timesteps"] in (1, 2)


def test_save_model_writes_the_zip_whole(tmp_path: Path) -> None:
    data = fake_model_bytes(1000, 3)
    path = save_model(FakeModel(data), tmp_path / "m.zip")
    assert path.read_bytes() == data
    with pytest.raises(ValueError, match=r"ends in \.zip"):
        save_model(FakeModel(data), tmp_path / "m")


# ----------------------------------------------------------------------- checked reads


@pytest.mark.parametrize(
    ("text", "why"),
    [("", "empty"), ('{"a": 1', "not JSON"), ("[1, 2]", "a JSON list, not a dict"), (b"\xff\xfe", "not UTF-8")],
)
def test_read_json_names_the_damage_on_one_line(tmp_path: Path, text: str | bytes, why: str) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(DamagedFileError) as err:
        read_json(path, "move it away")
    message = str(err.value)
    assert message.startswith(f"{path} is damaged (") and why in message and message.endswith(": move it away")
    assert "\n" not in message and err.value.path == path


def test_a_model_zip_cut_anywhere_is_refused_before_loading(tmp_path: Path) -> None:
    data = fake_model_bytes(50_000, 7)
    path = tmp_path / "m.zip"
    rng = random.Random(0)
    for cut in [0, 1, len(data) // 2, len(data) - 1, *rng.sample(range(len(data)), 40)]:
        path.write_bytes(data[:cut])
        with pytest.raises(DamagedFileError, match=rf"^{path} is damaged \("):
            check_model(path)
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(flipped))
    with pytest.raises(DamagedFileError, match=r"'policy\.pth' fails its checksum"):
        check_model(path)
    path.write_bytes(data)
    check_model(path)


def test_a_zipped_run_folder_is_told_apart_from_a_model(tmp_path: Path) -> None:
    path = tmp_path / "run.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("run/config.yaml", "FortyThieves-v0: {}\n")
        z.writestr("run/best_model.zip", fake_model_bytes(100, 1))
    with pytest.raises(DamagedFileError, match="a zip of a run folder, not a model: unzip it"):
        check_model(path)
    with pytest.raises(ValueError, match="no such model file"):
        check_model(tmp_path / "nope.zip")


# ----------------------------------------------------------------------- append-only logs


def test_repair_tail_cuts_a_fragment_and_keeps_a_whole_row(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text('{"deal":1}\n{"deal":2,"ver')
    note = repair_tail(path, files.is_json_line)
    assert path.read_text() == '{"deal":1}\n' and "cut short" in (note or "")
    path.write_text('{"deal":1}\n{"deal":2}')  # only the newline was lost: the row stays
    assert "added it" in (repair_tail(path, files.is_json_line) or "")
    assert path.read_text() == '{"deal":1}\n{"deal":2}\n'
    assert repair_tail(path, files.is_json_line) is None  # whole: untouched
    path.write_text('{"deal":1,"verd')  # a first line cut short: nothing is left
    repair_tail(path, files.is_json_line)
    assert path.read_text() == ""
    long = "x" * 200_000  # a last line longer than the block read backwards
    path.write_text('{"deal":1}\n' + long)
    repair_tail(path, files.is_json_line)
    assert path.read_text() == '{"deal":1}\n'


def test_a_line_log_appends_after_a_repair(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.jsonl"
    path.write_text('{"deal":1}\n{"deal":2,"verd')
    notes: list[str] = []
    with LineLog(path, note=notes.append) as log:
        log.append('{"deal":2}', '{"deal":3}')
    assert path.read_text().splitlines() == ['{"deal":1}', '{"deal":2}', '{"deal":3}']
    assert len(notes) == 1 and str(path) in notes[0]


@pytest.mark.parametrize("seed", range(3))
def test_appends_killed_at_a_random_moment_lose_at_most_the_line_being_written(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "log.jsonl"
    started = tmp_path / "started"
    script = f"""
        import json
        from pathlib import Path
        from agents.storage.files import LineLog
        pad = "x" * 200
        with LineLog({str(path)!r}) as log:
            Path({str(started)!r}).touch()
            k = 0
            while True:
                log.append(json.dumps({{"deal": k, "pad": pad}}))
                k += 1
    """
    kill_while_running(script, started, seed, tmp_path, slow_appends=True)
    with LineLog(path) as log:  # the next run repairs, then appends
        log.append(json.dumps({"deal": -1}))
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    deals = [r["deal"] for r in rows]
    assert deals[:-1] == list(range(len(deals) - 1)) and deals[-1] == -1


# ----------------------------------------------------------------------- output folders


def test_check_writable_leaves_nothing_behind(tmp_path: Path) -> None:
    assert check_writable(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert list(tmp_path.iterdir()) == []  # probed in tmp_path, where the folders will be made
    check_writable(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_check_writable_refuses_a_folder_it_cannot_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(OSError, match=rf"cannot write the results into {blocker}/out: {blocker} is not a folder"):
        check_writable(blocker / "out", "the results")
    real_open = os.open

    def read_only(path: str | os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        if ".write-test" in str(path):
            raise OSError(errno.EROFS, "Read-only file system")
        return real_open(path, flags, mode)

    monkeypatch.setattr(files.os, "open", read_only)
    with pytest.raises(OSError, match=r"cannot write the results into .*: Read-only file system"):
        check_writable(tmp_path, "the results")
