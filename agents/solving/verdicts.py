"""A solve sweep's folder: the solver budget its verdicts were made with (:class:`Budget`), its
``meta.json`` (checked on resume, :func:`open_folder`) and its ``verdicts.jsonl`` (:func:`read_verdicts`).

The files and what resuming asks of them are described in :mod:`.sweep`.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.storage.files import damaged, read_json, write_json

VERDICTS = ("won", "lost", "unknown")
META_FILE = "meta.json"
VERDICTS_FILE = "verdicts.jsonl"
SUMMARY_FILE = "summary.json"
#: Budget keys that must match between runs into one folder.
BUDGET_KEYS = ("seconds", "nodes", "memory_mb", "strategy", "clock", "heuristic_tries")
DEFAULT_NODES = 50_000_000

@dataclass(frozen=True)
class Budget:
    """The solver settings of a run (all of them must match to resume)."""

    seconds: float = 10.0
    nodes: int = DEFAULT_NODES
    memory_mb: float = 2048.0
    strategy: str = "portfolio"
    clock: str = "wall"
    #: Games the heuristic plays from the deal (tie-breaking seeds 0, 1, ...) before the
    #: portfolio searches; a won game is the deal's certificate. Portfolio only.
    heuristic_tries: int = 32

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in BUDGET_KEYS}

    def check(self) -> Budget:
        from agents.search.solver import STRATEGIES

        if not self.seconds > 0:
            raise ValueError(f"seconds must be positive, got {self.seconds}")
        if self.nodes < 1:
            raise ValueError(f"nodes must be at least 1, got {self.nodes}")
        if not self.memory_mb >= 32:
            raise ValueError(f"memory must be at least 32 MB, got {self.memory_mb}")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r} ({', '.join(STRATEGIES)})")
        if self.clock not in ("wall", "cpu"):
            raise ValueError(f"unknown clock {self.clock!r} (wall or cpu)")
        if self.heuristic_tries < 0:
            raise ValueError(f"heuristic tries must be 0 or more, got {self.heuristic_tries}")
        return self


#: The start of every verdict row as :func:`solve_deals` writes it.
_ROW_START = '{"deal":'
META_ADVICE = "it records the variant and budget of the verdicts: restore it, or --restart to discard them"


def _row(text: str) -> dict[str, Any] | None:
    """A verdict row parsed from ``text``, or None when it is not one."""
    try:
        row = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not (isinstance(row, dict) and isinstance(row.get("deal"), int) and row.get("verdict") in VERDICTS):
        return None
    return row


def read_verdicts(path: str | os.PathLike[str]) -> dict[int, dict[str, Any]]:
    """The rows of a ``verdicts.jsonl`` by deal.

    A last line cut short by a killed run is skipped (that deal is solved again). A line
    that holds a fragment with a whole row glued after it (an older version appended to a
    torn line without a newline) yields that row.

    Raises:
        DamagedFileError: any other line that is not a verdict row (naming the file, the
            line and what to do).
    """
    rows: dict[int, dict[str, Any]] = {}
    p = Path(path)
    if not p.exists():
        return rows
    try:
        lines = p.read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise damaged(p, "not UTF-8 text", "restore it from a copy, or --restart to solve every deal again") from None
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        row = _row(line)
        if row is None and line.rfind(_ROW_START) > 0:  # a fragment, then a whole row
            row = _row(line[line.rfind(_ROW_START) :])
        if row is None:
            if i == len(lines) - 1:  # cut off mid-write: that deal is solved again
                continue
            raise damaged(
                p,
                f"line {i + 1} is not a verdict row: {line[:60]!r}",
                "delete that line (its deal is solved again) and run the command again",
            )
        rows[row["deal"]] = row
    return rows


def open_folder(out: Path, variant: str, budget: Budget, restart: bool, command: str) -> dict[int, dict[str, Any]]:
    """Check or write ``meta.json``; return the verdicts already there (none after ``restart``)."""
    out.mkdir(parents=True, exist_ok=True)
    meta_path, verdicts_path = out / META_FILE, out / VERDICTS_FILE
    want = {"variant": variant, "budget": budget.to_json()}
    if meta_path.exists() and not restart:
        have = read_json(meta_path, META_ADVICE)
        # Folders from before the heuristic's games were added resume with none.
        old = {"variant": have.get("variant"), "budget": {"heuristic_tries": 0, **(have.get("budget") or {})}}
        if old != want:
            raise ValueError(
                f"{out} holds verdicts for {json.dumps(old)}, not {json.dumps(want)}; "
                "use the same --variant and budget to resume, another --out, or --restart to discard them"
            )
        return read_verdicts(verdicts_path)
    if restart:
        for name in (VERDICTS_FILE, SUMMARY_FILE):
            (out / name).unlink(missing_ok=True)
    elif verdicts_path.exists():
        raise ValueError(f"{verdicts_path} exists without {META_FILE}; use --restart to discard it")
    meta = {**want, "created": now(), "command": command, "source": source_version()}
    write_json(meta_path, meta, indent=2)
    return {}


def source_version() -> str:
    """The git commit of this checkout (``+dirty`` when the solver's files have local changes), or ``""``."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return ""
        files = ["agents/search", "agents/hashing.py", "agents/players/heuristic.py", "agents/players/weights.py"]
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", *files], cwd=root, timeout=10).returncode
    except (OSError, subprocess.SubprocessError):
        return ""
    return head.stdout.strip() + ("+dirty" if dirty else "")


def now() -> str:
    """The time now in UTC, to the second (ISO 8601)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
