"""The imitation's stages on disk, each saved as it finishes, so that ``--resume`` goes on from the
last finished one instead of playing the teacher's games again.

The imitation (:mod:`.warm_start`, :mod:`.imitation`) runs these stages in order: the teacher's
games, the first fit, then for each DAgger round its games (the student's, labelled by the
teacher) and its fit (the policy refitted on every position so far). A run folder keeps them in
``imitation/``:

=================  ===========================================================================
``stages.json``    the record: the settings the stages were made with, and the finished stages in
                   order (file, size, SHA-256, seconds, the figures ``imitation.json`` reports)
``games_0.npz``    the teacher's games (:class:`~agents.datasets.demonstrations.Demonstrations`, compressed)
``model_0.zip``    the model after the first fit
``games_<r>.npz``  DAgger round ``r``'s games
``model_<r>.zip``  the model refitted after round ``r``
=================  ===========================================================================

Each file is written atomically (:mod:`agents.storage.files`), then the record names it (also
atomically): a kill leaves the stage unrecorded, and it runs again. A stage whose file is missing
or no longer matches its size and SHA-256 (cut short, say) is set aside (``.damaged``), saying so
on one line, and runs again, with every stage after it (each was made from the ones before).
Stages made with other settings (``--resume`` with ``--set imitation.games=...``: the deals drawn
depend on them) are moved aside whole, to ``imitation.replaced``, and the imitation starts again.
``imitation.json`` (written last) and ``imitation_model.zip`` still mark the whole imitation
finished (:func:`.runs.resume_point`); the stage folder stays, as the record of its data.

The data is the data an uninterrupted run would have used: the deals are drawn from the config
(:func:`agents.datasets.demonstrations.training_deals`), the teacher and the student are seeded per deal, and the
student of a DAgger round is always the previous round's model read from its zip.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agents.datasets.demonstrations import FIELDS, Demonstrations
from agents.storage.files import DamagedFileError, damaged, read_json, replacing, set_aside, write_json

#: The folder of the imitation's finished stages, in a run folder.
IMITATION_STAGES = "imitation"

#: The record of the finished stages, in the stage folder.
RECORD = "stages.json"
#: Where a stage folder made with other settings is moved (``imitation.replaced``, ``-2``, ...).
REPLACED = ".replaced"
_TMP = re.compile(r"^\..+\.[0-9a-f]{8}\.tmp$")  # agents.storage.files.replacing's temporary files
_ARRAYS = ("masks", "actions", "returns", "games", "won", "home", "lengths")
#: What a search teacher's data set adds (:class:`Demonstrations`' decisive flags and vote shares).
_OPTIONAL = ("decisive", "soft_rows", "soft_targets")


def stage_names(rounds: int) -> list[str]:
    """The stages of an imitation with ``rounds`` DAgger rounds, in order (``games_0``, ``model_0``, ...)."""
    return [f"{kind}_{r}" for r in range(rounds + 1) for kind in ("games", "model")]


def stage_file(name: str) -> str:
    """Stage ``name``'s file name: ``games_<r>.npz`` or ``model_<r>.zip``."""
    return name + (".npz" if name.startswith("games") else ".zip")


def stage_title(name: str | None) -> str:
    """A stage for the screen: ``games_0`` is "the teacher's games", ``model_2`` "DAgger round 2's fit";
    None (every stage finished) is the writing of ``imitation_model.zip``."""
    if name is None:
        return "the last step (writing imitation_model.zip and imitation.json)"
    kind, r = name.split("_")
    if r == "0":
        return "the teacher's games" if kind == "games" else "the first fit"
    return f"DAgger round {r}'s " + ("games" if kind == "games" else "fit")


def stage_settings(config: Any) -> dict[str, Any]:
    """What the stages depend on: the imitation's settings but ``workers``, the seed, ``gamma`` and
    ``init_model`` (a stage made with other settings is not this run's)."""
    assert config.imitation is not None
    im = config.imitation.model_dump(mode="json")
    im.pop("workers")  # the same games on any number of processes
    settings = {"imitation": im, "seed": config.seed, "gamma": config.gamma, "init_model": config.init_model}
    return json.loads(json.dumps(settings))  # as the record reads back


def write_demonstrations(path: Path, data: Demonstrations) -> None:
    """Write ``data`` to ``path`` (an ``.npz``, compressed) atomically."""
    arrays = {f"obs.{k}": data.obs[k] for k in FIELDS} | {k: getattr(data, k) for k in _ARRAYS}
    arrays |= {k: v for k in _OPTIONAL if (v := getattr(data, k)) is not None}
    with replacing(path) as f:
        np.savez_compressed(f, **arrays)  # type: ignore[arg-type]


def read_demonstrations(path: Path, advice: str) -> Demonstrations:
    """The :class:`~agents.datasets.demonstrations.Demonstrations` in ``path``, checked.

    Raises:
        DamagedFileError: not an ``.npz`` of demonstrations, or arrays of unequal lengths.
    """
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as err:  # BadZipFile, zlib.error, EOFError, ValueError: a file cut short or another kind
        raise damaged(path, f"not an .npz of arrays: {type(err).__name__}: {err}", advice) from None
    missing = [k for k in (*(f"obs.{f}" for f in FIELDS), *_ARRAYS) if k not in arrays]
    if missing:
        raise damaged(path, f"no {', '.join(missing)}", advice)
    optional = {k: arrays[k] for k in _OPTIONAL if k in arrays}
    data = Demonstrations(obs={k: arrays[f"obs.{k}"] for k in FIELDS}, **{k: arrays[k] for k in _ARRAYS}, **optional)
    rows = {len(data.obs[k]) for k in FIELDS} | {len(data.masks), len(data.returns), int(data.lengths.sum())}
    if rows != {len(data)} or len({len(data.games), len(data.won), len(data.home), len(data.lengths)}) != 1:
        raise damaged(path, "arrays of unequal lengths", advice)
    return data


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _flat(doc: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in doc.items():
        if isinstance(v, dict) and v:
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _not_a_record(doc: dict[str, Any]) -> str:
    """What makes ``doc`` no record of stages ("": nothing)."""
    settings, stages = doc.get("settings"), doc.get("stages")
    if not isinstance(settings, dict) or not isinstance(settings.get("imitation"), dict):
        return "no settings"
    rounds = settings["imitation"].get("dagger_rounds")
    if not isinstance(rounds, int) or not isinstance(stages, list):
        return "no dagger_rounds" if isinstance(stages, list) else "no list of stages"
    kinds = {"name": str, "file": str, "bytes": int, "sha256": str, "seconds": (int, float), "figures": dict}
    for stage in stages:
        if not isinstance(stage, dict) or any(not isinstance(stage.get(k), t) for k, t in kinds.items()):
            return f"not a stage: {json.dumps(stage)[:80]}"
    names = [stage["name"] for stage in stages]
    if names != stage_names(rounds)[: len(names)]:
        return f"stages out of order: {', '.join(names)}"
    wrong = [stage["file"] for stage in stages if stage["file"] != stage_file(stage["name"])]
    return f"a stage's file named {wrong[0]!r}" if wrong else ""


class StageRecord:
    """The finished stages of a run's imitation (``imitation/stages.json``) and their files.

    Attributes:
        folder: The stage folder (``<run>/imitation``).
        settings: What the stages were made with (:func:`stage_settings`).
        stages: The finished stages in order, each ``{"name", "file", "bytes", "sha256",
            "seconds", "figures"}``.
    """

    def __init__(self, folder: Path, settings: dict[str, Any], stages: list[dict[str, Any]]) -> None:
        self.folder, self.settings, self.stages = folder, settings, stages

    # ------------------------------------------------------------------ reading

    @classmethod
    def read(cls, folder: Path, log: Callable[[str], None] = print, mend: bool = True) -> StageRecord | None:
        """The record in ``folder``, cut at its first stage whose file is missing or damaged.

        With ``mend``, that stage's file is set aside (``.damaged``), saying so on one line, the
        record is rewritten without it and the stages after it, and the temporary files of
        writers killed mid-write are removed; a damaged record is set aside (the imitation
        starts again). Without ``mend`` nothing on disk changes and nothing is said.

        Returns:
            None when ``folder`` has no record (or a damaged one).
        """
        path = folder / RECORD
        if not path.is_file():
            return None
        again = "the imitation starts again"
        try:
            doc = read_json(path, again)
            why = _not_a_record(doc)
            if why:
                raise damaged(path, why, again)
        except DamagedFileError as err:
            if mend:
                aside = set_aside(path)
                log(f"{path} is damaged ({err.why}): set aside as {aside.name}; {again}")
            return None
        record = cls(folder, doc["settings"], doc["stages"])
        if mend:
            for tmp in folder.iterdir():
                if _TMP.match(tmp.name):
                    tmp.unlink(missing_ok=True)
        for i, stage in enumerate(record.stages):
            why = record._fault(stage)
            if why is None:
                continue
            record.stages = record.stages[:i]
            if mend:
                file = folder / stage["file"]
                said = f"{file} is {why}"
                if file.exists():
                    said = f"{file} is damaged ({why}): set aside as {set_aside(file).name}"
                last = record.last
                log(f"{said}; the imitation goes on after {stage_title(last)}" if last else f"{said}; {again}")
                record._write()
            break
        return record

    def _fault(self, stage: dict[str, Any]) -> str | None:
        """What is wrong with a finished stage's file (None: nothing)."""
        file = self.folder / str(stage["file"])
        if not file.is_file():
            return "missing"
        size = file.stat().st_size
        if size != stage["bytes"]:
            return f"{size:,} bytes, not the {stage['bytes']:,} written"
        if _sha256(file) != stage["sha256"]:
            return "its SHA-256 is not the one written"
        return None

    @classmethod
    def open(cls, run_dir: Path, settings: dict[str, Any], log: Callable[[str], None] = print) -> StageRecord:
        """The run's record (:meth:`read`, mended), or a new one; stages made with other
        settings are moved aside whole (``imitation.replaced``), saying which, and a new record begun."""
        folder = run_dir / IMITATION_STAGES
        record = cls.read(folder, log)
        if record is not None and record.settings != settings:
            old, new = _flat(record.settings), _flat(settings)
            keys = [k for k in sorted(old | new) if old.get(k) != new.get(k)]
            diff = "; ".join(f"{k} {old.get(k)!r} there, {new.get(k)!r} now" for k in keys)
            aside = folder.with_name(folder.name + REPLACED)
            k = 1
            while aside.exists():
                k += 1
                aside = folder.with_name(f"{folder.name}{REPLACED}-{k}")
            os.replace(folder, aside)
            log(f"{folder} holds stages of other settings ({diff}): moved to {aside.name}; the imitation starts again")
            record = None
        if record is None:
            record = cls(folder, settings, [])
            record._write()
        return record

    # ------------------------------------------------------------------ the stages

    @property
    def rounds(self) -> int:
        """The DAgger rounds of the imitation."""
        return int(self.settings["imitation"]["dagger_rounds"])

    @property
    def last(self) -> str | None:
        """The last finished stage (None: none)."""
        return self.stages[-1]["name"] if self.stages else None

    @property
    def next(self) -> str | None:
        """The stage that runs next (None: every stage finished)."""
        names = stage_names(self.rounds)
        return names[len(self.stages)] if len(self.stages) < len(names) else None

    def finished(self, name: str) -> bool:
        """Whether stage ``name`` finished."""
        return any(s["name"] == name for s in self.stages)

    def path(self, name: str) -> Path:
        """Stage ``name``'s file (``games_<r>.npz``, ``model_<r>.zip``)."""
        return self.folder / stage_file(name)

    def games(self, r: int) -> Demonstrations:
        """Round ``r``'s finished games, read back (0: the teacher's).

        Raises:
            DamagedFileError: the file does not read as demonstrations.
        """
        return read_demonstrations(self.path(f"games_{r}"), f"move it away: {stage_title(f'games_{r}')} run again")

    def add(self, name: str, seconds: float, figures: dict[str, Any]) -> None:
        """Record stage ``name`` as finished (its file is written): its size, SHA-256, seconds, figures."""
        assert name == self.next, (name, self.next)
        file = self.path(name)
        stage = {"name": name, "file": file.name, "bytes": file.stat().st_size, "sha256": _sha256(file)}
        stage |= {"seconds": round(seconds, 1), "figures": figures}
        self.stages.append(stage)
        self._write()

    def rounds_figures(self) -> list[dict[str, Any]]:
        """``imitation.json``'s ``rounds``: per round, its games' figures then its fit's."""
        figures = {s["name"]: s["figures"] for s in self.stages}
        return [figures[f"games_{r}"] | figures[f"model_{r}"] for r in range(self.rounds + 1)]

    @property
    def seconds(self) -> float:
        """The seconds the finished stages took (over every session)."""
        return round(sum(float(s["seconds"]) for s in self.stages), 1)

    def _write(self) -> None:
        write_json(self.folder / RECORD, {"settings": self.settings, "stages": self.stages})
