"""Where an evaluation's results go: a fresh default folder, the refusal of one that holds
results, and ``results.json``/``results.csv`` written atomically (see :mod:`.evaluate`)."""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol

from agents.storage.files import write_json, write_text


class Results(Protocol):
    """What :func:`write_results` reads of an evaluation (:class:`.evaluate.Evaluation`)."""

    results: Sequence[Any]  # GameResult rows

    def to_json(self) -> dict[str, Any]: ...

#: The columns of ``results.csv``, one row a deal.
CSV_FIELDS = ("deal", "won", "cards_on_foundations", "moves", "seconds", "truncated", "cpu_seconds")


def default_out(agent: str, variant: str, runs_dir: str | os.PathLike[str] = "runs", now: Any = None) -> Path:
    """A folder for one evaluation that does not exist yet: ``runs_dir/evaluate-<agent>-<variant>-<time>[-k]``."""
    import datetime as _dt

    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    base = Path(runs_dir) / f"evaluate-{agent}-{variant}-{stamp}"
    out, k = base, 1
    while out.exists():
        k += 1
        out = base.with_name(f"{base.name}-{k}")
    return out


def check_fresh_out(out: str | os.PathLike[str], agent: str, variant: str, force: bool = False) -> None:
    """Refuse an ``out`` folder that already holds results (unless ``force``), before any game is played.

    Raises:
        ValueError: naming the results there (the same or another agent and variant) and the ways on.
    """
    old = Path(out) / "results.json"
    if force or not old.exists():
        return
    try:
        import json

        settings = json.loads(old.read_text(encoding="utf-8")).get("settings", {})
        held = f"{settings.get('agent')} on {settings.get('variant')}"
    except (OSError, ValueError, AttributeError):
        held = "results that cannot be read"
    same = " (the same agent and variant)" if held == f"{agent} on {variant}" else ""
    raise ValueError(
        f"{out} already holds {held}{same}: give another --out (or none: a new folder under runs/), "
        "or --force to replace them"
    )


def write_results(evaluation: Results, out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``results.json`` and ``results.csv`` into ``out_dir`` (created), each atomically; return both paths."""
    out = Path(out_dir)
    json_path = out / "results.json"
    csv_path = out / "results.csv"
    write_json(json_path, evaluation.to_json(), indent=2)
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=CSV_FIELDS)
    writer.writeheader()
    for r in evaluation.results:
        row = asdict(r)
        row["seconds"] = f"{r.seconds:.4f}"
        row["cpu_seconds"] = "" if r.cpu_seconds is None else f"{r.cpu_seconds:.4f}"
        row["won"] = int(r.won)
        row["truncated"] = int(r.truncated)
        writer.writerow(row)
    write_text(csv_path, text.getvalue())
    return json_path, csv_path
