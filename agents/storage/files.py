"""The project's files on disk: written whole or not at all, read back checked.

A file the project writes and later reads (a config, a model, a verdict log, results,
a saved game, statistics) must survive a kill, a Ctrl-C, a full disk or a crash at any
moment, and a damaged one must be reported on one line that names it and says what to do,
never as a traceback and never silently replaced by defaults.

* :func:`write_bytes`, :func:`write_text`, :func:`write_json` and :func:`replacing` write a
  temporary file in the target's folder, ``fsync`` it, then ``os.replace`` it over the target
  (and ``fsync`` the folder): a reader sees the old file or the new one, never half of one.
* :class:`LineLog` appends lines to an append-only log (``verdicts.jsonl``, ``command.txt``),
  first repairing a last line cut short by a killed writer (:func:`repair_tail`), so the next
  line never lands glued to a fragment.
* :func:`read_json` reads a JSON file and turns damage into :class:`DamagedFileError`.
* :func:`check_writable` probes an output folder before a command starts its work, so that
  nothing is computed and then lost to a read-only or misnamed folder.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = [
    "DamagedFileError",
    "LineLog",
    "check_writable",
    "read_json",
    "repair_tail",
    "replacing",
    "set_aside",
    "write_bytes",
    "write_json",
    "write_text",
]


class DamagedFileError(ValueError):
    """A file that exists but cannot be used as it is: cut short, not of its kind, or edited
    into nonsense. The message is one line naming the file, what is wrong and what to do.

    Attributes:
        path: The file, when known.
        why: What is wrong with it, without the advice (for a caller that words its own).
    """

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None, why: str = "") -> None:
        super().__init__(message)
        self.path = Path(path) if path is not None else None
        self.why = why


def damaged(path: str | os.PathLike[str], why: str, advice: str) -> DamagedFileError:
    """The :class:`DamagedFileError` ``"<path> is damaged (<why>): <advice>"``, on one line."""
    why = " ".join(str(why).split())  # an error text of several lines (pydantic, torch) on one
    return DamagedFileError(f"{os.fspath(path)} is damaged ({why}): {advice}", path, why)


def _unwritable(path: Path, err: OSError) -> OSError:
    """``err`` re-raised as an OSError whose message names ``path`` (a bare ``[Errno 28] No space
    left on device`` does not say which file was lost)."""
    return OSError(err.errno, f"cannot write {path}: {err.strerror or err}")


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable; some file systems cannot open a folder, which only
    loses durability across a power cut, not atomicity."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """A binary file to write ``path``'s new contents into; on a clean exit it replaces ``path``.

    The temporary file (``.<name>.<random>.tmp`` beside ``path``, made with the usual
    permissions) is flushed and ``fsync``-ed, then renamed over ``path``. On an error, or a
    Ctrl-C, it is removed and ``path`` is left as it was.

    Raises:
        OSError: the folder cannot be written (the message names ``path``).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # 0o666: the umask applies
    except OSError as err:
        raise _unwritable(target, err) from None
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise _unwritable(target, err) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_folder(target.parent)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (:func:`replacing`); return the path."""
    with replacing(path) as f:
        f.write(data)
    return Path(path)


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; return the path."""
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike[str], doc: Any, indent: int | None = 1) -> Path:
    """Write ``doc`` as JSON (and a final newline) to ``path`` atomically; return the path."""
    return write_text(path, json.dumps(doc, indent=indent) + "\n")


def read_json(path: str | os.PathLike[str], advice: str, kind: type | None = dict) -> Any:
    """The JSON document in ``path``.

    Args:
        path: The file (it must exist: a missing file is the caller's case to handle).
        advice: What to do about a damaged file, for the message (``"--restart to discard it"``).
        kind: The type the document must have (None: any).

    Raises:
        DamagedFileError: not UTF-8, not JSON (cut short, say) or not of ``kind``.
        OSError: the file cannot be read.
    """
    p = Path(path)
    try:
        doc = json.loads(p.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise damaged(p, "not UTF-8 text", advice) from None
    except json.JSONDecodeError as err:
        why = "empty" if not err.doc.strip() else f"not JSON: {err.msg} at line {err.lineno}, column {err.colno}"
        raise damaged(p, why, advice) from None
    if kind is not None and not isinstance(doc, kind):
        raise damaged(p, f"a JSON {type(doc).__name__}, not a {kind.__name__}", advice)
    return doc


# ----------------------------------------------------------------------- append-only logs


def repair_tail(path: str | os.PathLike[str], keep: Callable[[bytes], bool]) -> str | None:
    """End ``path`` with a newline before lines are appended to it; say what was done.

    A writer killed in the middle of a line leaves a last line without its newline. When
    ``keep(tail)`` says that line is whole (a complete JSON row whose newline alone was
    lost), the newline is added; otherwise the fragment is cut off (its work is redone).

    Returns:
        None when the file was missing, empty or whole; else a sentence for the screen.
    """
    p = Path(path)
    if not p.exists():
        return None
    with p.open("r+b") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return None
        f.seek(max(0, size - 1))
        if f.read(1) == b"\n":
            return None
        # Find the start of the last line: read backwards in blocks (logs can be long).
        start, block = size, 1 << 16
        while start > 0:
            lo = max(0, start - block)
            f.seek(lo)
            chunk = f.read(start - lo)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                start = lo + cut + 1
                break
            start = lo
        f.seek(start)
        tail = f.read()
        if keep(tail):
            f.seek(0, os.SEEK_END)
            f.write(b"\n")
            note = f"{p}: its last line had lost its newline (a killed writer); added it"
        else:
            f.truncate(start)
            note = f"{p}: its last line was cut short (a killed writer); removed those {len(tail)} bytes"
        f.flush()
        os.fsync(f.fileno())
    return note


def is_json_line(line: bytes) -> bool:
    """Whether ``line`` is one whole JSON value (a :func:`repair_tail` test for JSON-lines logs)."""
    try:
        json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    return True


class LineLog:
    """An append-only log of lines, repaired (:func:`repair_tail`) when opened.

    Each :meth:`append` writes whole lines in one ``write`` and ``fsync`` s them, so a kill
    costs at most the line being written, and the next opening repairs that.

    Args:
        path: The log file (created when missing).
        keep: Whether a last line without its newline is whole (see :func:`repair_tail`).
        note: Called with :func:`repair_tail`'s sentence when a repair was made.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        keep: Callable[[bytes], bool] = is_json_line,
        note: Callable[[str], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.keep, self.note = keep, note
        self._file: IO[bytes] | None = None

    def __enter__(self) -> LineLog:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            repaired = repair_tail(self.path, self.keep)
            self._file = self.path.open("ab")
        except OSError as err:
            raise _unwritable(self.path, err) from None
        if repaired and self.note is not None:
            self.note(repaired)
        return self

    def append(self, *lines: str) -> None:
        """Append ``lines`` (each without its newline) and make them durable."""
        assert self._file is not None, "LineLog.append outside its with block"
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        try:
            self._file.write(data)
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as err:
            raise _unwritable(self.path, err) from None

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


# ----------------------------------------------------------------------- output folders


#: The suffix given to a damaged file set aside (kept for a look, never read again).
SET_ASIDE = ".damaged"


def set_aside(path: str | os.PathLike[str]) -> Path:
    """Rename a damaged file to ``<name>.damaged`` (kept for a look, never read again); return the new path."""
    p = Path(path)
    aside = p.with_name(p.name + SET_ASIDE)
    os.replace(p, aside)
    return aside


def check_writable(folder: str | os.PathLike[str], what: str = "the output") -> Path:
    """Prove that files can be made in ``folder``, leaving nothing behind.

    A command calls this before its work, so a read-only, full or misnamed output folder
    stops it at once rather than after the games or deals are played. A folder not there
    yet is probed in its nearest existing parent, where it will be made (a command that
    then fails for another reason leaves no empty folder).

    Raises:
        OSError: ``"cannot write <what> into <folder>: <reason>"``.
    """
    p = Path(folder)
    here = p
    while not here.exists() and here.parent != here:
        here = here.parent
    if not here.is_dir():
        raise OSError(errno.ENOTDIR, f"cannot write {what} into {p}: {here} is not a folder")
    probe = here / f".write-test.{secrets.token_hex(4)}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, b"x")
        finally:
            os.close(fd)
        probe.unlink()
    except OSError as err:
        with contextlib.suppress(OSError):  # the probe may not exist, nor its folder
            probe.unlink(missing_ok=True)
        raise OSError(err.errno, f"cannot write {what} into {p}: {err.strerror or err}") from None
    return p
