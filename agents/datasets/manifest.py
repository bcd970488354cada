"""A data set's ``manifest.json``: the settings it was collected with, checked on every resume.

The manifest is written (atomically) before the first chunk, so a folder that holds chunks always
says how they were made. ``forty-thieves dataset collect`` on a folder that has one resumes only
with the same :class:`Settings`; the first key that differs is named in one line and nothing is
touched. The git commits of the code that wrote chunks are listed (a resume by newer code adds
its commit), for the record only.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.storage.files import damaged, read_json, write_json

from .layout import FORMAT

MANIFEST = "manifest.json"


def deals_digest(deals: Sequence[int]) -> str:
    """The first 16 hex digits of the SHA-256 of the deal list (a resume checks the same deals)."""
    return hashlib.sha256(json.dumps([int(d) for d in deals]).encode()).hexdigest()[:16]


def _plain(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples as lists): what a manifest compares."""
    return json.loads(json.dumps(value))


@dataclass(frozen=True)
class Settings:
    """What makes a data set: the same settings give the same arrays (the timings aside).

    Attributes:
        teacher: The registered agent that played and labelled the games.
        teacher_options: Its constructor options (``seed`` excepted: it is seeded per deal).
        env_id: The env played (its rules and reward), with the player's ``Dict`` observation.
        env_kwargs: Options on top of the id (a variant option such as ``redeals=1``).
        seed: Draws the deals (:func:`agents.datasets.demonstrations.training_deals`) and seeds the
            teacher per deal (:func:`agents.evaluation.games.agent_seed`).
        games: Games (deals) in the data set.
        chunk: Games per chunk file.
        idle_cut: A game ends after this many moves in a row without a reward or a stock
            turn (0: never), as the imitation's collection does.
        max_moves: Moves at most per game.
        deals: :func:`deals_digest` of the deal list.
        format: The layout version (:data:`.layout.FORMAT`).
    """

    teacher: str
    teacher_options: dict[str, Any]
    env_id: str
    env_kwargs: dict[str, Any]
    seed: int
    games: int
    chunk: int
    idle_cut: int
    max_moves: int
    deals: str
    format: int = FORMAT

    def to_json(self) -> dict[str, Any]:
        return _plain(asdict(self))

    @classmethod
    def from_json(cls, doc: dict[str, Any], path: Path) -> Settings:
        try:
            return cls(**doc)
        except TypeError as err:
            raise damaged(path, f"settings: {err}", "collect into another --out") from None


@dataclass
class Manifest:
    """The settings, and the record of who collected (``created``, ``git_commits``)."""

    settings: Settings
    created: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    git_commits: list[str | None] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"settings": self.settings.to_json(), "created": self.created, "git_commits": self.git_commits}

    def save(self, folder: Path) -> None:
        write_json(folder / MANIFEST, self.to_json(), indent=1)


def read_manifest(folder: str | Path, advice: str = "collect into another --out") -> Manifest:
    """The manifest of the data set ``folder``.

    Raises:
        FileNotFoundError: ``folder`` holds no manifest (not a data set).
        DamagedFileError: the manifest is not one (cut short, or keys missing).
    """
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{folder} is not a data set: it has no {MANIFEST}")
    doc = read_json(path, advice)
    if not isinstance(doc.get("settings"), dict):
        raise damaged(path, "no settings", advice)
    settings = doc["settings"]
    if settings.get("format") != FORMAT:
        raise damaged(path, f"format {settings.get('format')!r}, this code reads {FORMAT}", advice)
    return Manifest(Settings.from_json(settings, path), str(doc.get("created", "")), list(doc.get("git_commits") or []))


def open_folder(folder: Path, settings: Settings, commit: str | None, log: Callable[[str], None]) -> Manifest:
    """The manifest of ``folder`` for a collection with ``settings``: written when the folder is
    new, checked when it exists (a resume).

    Raises:
        ValueError: the folder was collected with other settings (the first key that differs,
            on one line; nothing is changed).
        DamagedFileError: its manifest is damaged.
    """
    if (folder / MANIFEST).exists():
        manifest = read_manifest(folder)
        old, new = manifest.settings.to_json(), settings.to_json()
        for key in new:
            if old.get(key) != new[key]:
                raise ValueError(
                    f"{folder} was collected with {key}={old.get(key)!r}, not {new[key]!r}: "
                    "run the same command to resume it, or collect into another --out (nothing was changed)"
                )
        if commit not in manifest.git_commits:
            manifest.git_commits.append(commit)
            manifest.save(folder)
        return manifest
    if folder.exists() and any(folder.iterdir()):
        raise ValueError(f"{folder} holds files but no {MANIFEST}: collect into a new or empty --out")
    manifest = Manifest(settings, git_commits=[commit])
    manifest.save(folder)
    log(f"collecting into {folder}")
    return manifest
