"""Model zips (stable-baselines3's MaskablePPO format): saved whole, checked before they are loaded.

SB3 stores a model's entries uncompressed, and the ``policy.pth`` entry is itself a zip
(torch's format), so a model file cut short can still open as a zip: Python finds the
inner archive's directory at its end and the load then fails deep inside torch
(``AssertionError: No data found in the saved file``). :func:`check_model` therefore reads
the whole file before anything loads it: the entries SB3 needs must be there and every
entry must pass its CRC. :func:`load_model`, :func:`load_parameters` and
:func:`read_parameters` load through that check and turn any failure into a
:class:`~agents.storage.files.DamagedFileError` naming the file; :func:`save_model` writes a model
atomically (:func:`agents.storage.files.write_bytes`), so a kill during a save leaves the previous
file, never half of a new one.

A zip's ``data`` entry pickles some objects (the policy class, ``policy_kwargs`` with a features
extractor class, a learning-rate schedule) by module path. The shipped models and runs saved before
the networks moved into :mod:`agents.training.networks` (and the configs into :mod:`agents.configs`)
name paths that are gone: :data:`MOVED_MODULES` and :data:`MOVED_NAMES` say where those live now, and
every reader of ``data`` here (:func:`read_data`, :func:`open_model`, so :func:`load_model` and
:mod:`agents.storage.policyfile`) unpickles through :func:`unpickle`, which answers them; nothing
is installed into the import system. (:func:`load_parameters` and :func:`read_parameters` read
the tensors only, never ``data``.)
"""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any

from agents.storage.files import DamagedFileError, damaged, write_bytes

#: The entries without which ``MaskablePPO.load`` cannot make a model.
REQUIRED_ENTRIES = ("data", "policy.pth")
#: What to do about a damaged model, unless the caller knows better.
MODEL_ADVICE = "use a copy, or another model (a run's checkpoints/ folder holds earlier ones)"
#: Names that only a run folder holds: a zip with them is a zipped run folder, not a model.
_RUN_FOLDER_NAMES = ("config.yaml", "best_model.zip", "final_model.zip", "command.txt")


def save_model(model: Any, path: str | os.PathLike[str]) -> Path:
    """Write ``model`` (anything with SB3's ``save``) to ``path`` (a ``.zip``) atomically; return it.

    SB3 saves into a buffer here, then the bytes replace ``path`` whole: SB3's own
    ``save(path)`` writes the file in place, where a kill leaves it cut short.
    """
    target = Path(path)
    if target.suffix != ".zip":
        raise ValueError(f"a model file ends in .zip, not {target.name!r}")
    buffer = io.BytesIO()
    model.save(buffer)
    return write_bytes(target, buffer.getvalue())


def check_model(path: str | os.PathLike[str], advice: str = MODEL_ADVICE) -> None:
    """Refuse a model zip that is cut short, damaged or not a model, before anything loads it.

    Raises:
        ValueError: no such file.
        DamagedFileError: not a zip, a zip of a run folder, an entry SB3 needs is missing,
            or an entry fails its CRC (one line naming the file, then ``advice``).
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such model file")
    try:
        archive = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, EOFError, OSError) as err:
        why = "empty" if p.stat().st_size == 0 else f"not a zip file: {err}"
        raise damaged(p, why, advice) from None
    with archive:
        names = archive.namelist()
        missing = [name for name in REQUIRED_ENTRIES if name not in names]
        if missing:
            if any(name.rsplit("/", 1)[-1] in _RUN_FOLDER_NAMES for name in names):
                raise DamagedFileError(
                    f"{p} is a zip of a run folder, not a model: unzip it and give the folder "
                    "(its best model is played) or a .zip inside it"
                )
            raise damaged(p, f"no {missing[0]!r} entry: cut short, or not a model saved by forty-thieves train", advice)
        try:
            bad = archive.testzip()
        except (zipfile.BadZipFile, EOFError, OSError, zlib.error, ValueError) as err:
            raise damaged(p, f"its entries cannot be read: {err}", advice) from None
        if bad is not None:
            raise damaged(p, f"entry {bad!r} fails its checksum", advice)


def unloadable(path: Path, err: BaseException, advice: str) -> DamagedFileError:
    """A load that failed after :func:`check_model` passed (a model of another library version,
    say): still one line naming the file and the error."""
    text = " ".join(str(err).split()) or type(err).__name__
    return DamagedFileError(f"{path} cannot be loaded as a model ({type(err).__name__}: {text}): {advice}")


# ----------------------------------------------------------------------- moved class paths

#: Modules that model zips name in their pickles and that have moved: old path -> path now.
MOVED_MODULES = {
    "agents.training.lookup_scorer": "agents.training.networks.lookup_scorer",
    "agents.training.move_scorer": "agents.training.networks.move_scorer",
    "agents.training.config": "agents.configs.train_config",  # a learning-rate LinearSchedule
}
#: Names that left a module that still exists: ``(old module, name)`` -> module now. A
#: ``card_embedding`` run pickled its extractor when :mod:`agents.training.networks` was one module.
MOVED_NAMES = {
    ("agents.training.networks", "CardEmbeddingExtractor"): "agents.training.networks.card_embedding",
}


def moved(module: str, name: str) -> tuple[str, str]:
    """Where the pickled global ``module.name`` lives now (itself when it has not moved)."""
    return MOVED_NAMES.get((module, name), MOVED_MODULES.get(module, module)), name


class _MovingUnpickler(pickle.Unpickler):
    """An unpickler that finds each global where :func:`moved` says it is, and notes whether it had to."""

    def __init__(self, file: IO[bytes]) -> None:
        super().__init__(file)
        self.moved = False

    def find_class(self, module: str, name: str) -> Any:
        new = moved(module, name)
        self.moved = self.moved or new != (module, name)
        return super().find_class(*new)


def unpickle(blob: bytes) -> tuple[Any, bool]:
    """The object a (cloud)pickle holds, its moved class paths answered; and whether any was moved."""
    unpickler = _MovingUnpickler(io.BytesIO(blob))
    return unpickler.load(), unpickler.moved


def _serialized(item: Any) -> bytes | None:
    """The pickle of a ``data`` entry SB3 serialized (``{":serialized:": base64, ...}``), else None."""
    if isinstance(item, dict) and ":serialized:" in item:
        return base64.b64decode(item[":serialized:"].encode())
    return None


def _data_text(source: str | os.PathLike[str] | IO[bytes]) -> str:
    """The ``data`` entry of a model zip (a path or an open binary file), as text."""
    with zipfile.ZipFile(source) as archive:
        return archive.read("data").decode()


def read_data(source: str | os.PathLike[str] | IO[bytes]) -> dict[str, Any]:
    """A model zip's ``data`` (what SB3's ``load_from_zip_file`` returns), unpickled through :func:`unpickle`.

    As in SB3's ``json_to_data``, an object that fails with a ``RuntimeError``, ``TypeError`` or
    ``AttributeError`` (a lambda of another Python, say) is left out with a warning; anything
    else (a module that is nowhere) is raised. No check here: :func:`check_model` first.
    """
    out: dict[str, Any] = {}
    for key, item in json.loads(_data_text(source)).items():
        blob = _serialized(item)
        if blob is None:
            out[key] = item
            continue
        try:
            out[key] = unpickle(blob)[0]
        except (RuntimeError, TypeError, AttributeError) as err:
            warnings.warn(f"could not unpickle the model's {key!r}, left out: {err}", stacklevel=2)
    return out


def moved_objects(source: str | os.PathLike[str] | IO[bytes]) -> dict[str, Any]:
    """The ``data`` entries of a model zip that pickle a moved class path, unpickled (SB3's
    ``custom_objects``: ``MaskablePPO.load`` takes them as they are and unpickles the rest itself).

    An entry that does not unpickle here is left to SB3, which says what is wrong with it.
    """
    out: dict[str, Any] = {}
    for key, item in json.loads(_data_text(source)).items():
        blob = _serialized(item)
        if blob is None:
            continue
        try:
            obj, was_moved = unpickle(blob)
        except Exception:  # SB3 unpickles it again, and warns or raises as it does
            continue
        if was_moved:
            out[key] = obj
    return out


def open_model(source: str | os.PathLike[str] | IO[bytes], **kwargs: Any) -> Any:
    """``MaskablePPO.load(source, **kwargs)`` with the moved class paths answered (:func:`moved_objects`).

    No check and no message naming the file: :func:`load_model` does both. ``source`` is a path
    or a seekable binary file (an ``io.BytesIO`` of a zip's bytes).
    """
    from sb3_contrib import MaskablePPO

    if not isinstance(source, (str, os.PathLike)):
        source.seek(0)
        objects = moved_objects(source)
        source.seek(0)
    else:
        source = os.fspath(source)
        objects = moved_objects(source)
    custom = {**objects, **(kwargs.pop("custom_objects", None) or {})}
    return MaskablePPO.load(source, custom_objects=custom or None, **kwargs)


# ----------------------------------------------------------------------- loading


def load_model(path: str | os.PathLike[str], advice: str = MODEL_ADVICE, **kwargs: Any) -> Any:
    """``MaskablePPO.load(path, **kwargs)`` after :func:`check_model`, old class paths answered (:func:`open_model`).

    Raises:
        ValueError: no such file.
        DamagedFileError: the file is damaged or does not load (naming it).
    """
    p = Path(path)
    check_model(p, advice)
    try:
        return open_model(p, **kwargs)
    except Exception as err:  # whatever SB3 or torch raise on a file that passed the check
        raise unloadable(p, err, advice) from None


def load_parameters(model: Any, path: str | os.PathLike[str], advice: str = MODEL_ADVICE, device: str = "auto") -> None:
    """``model.set_parameters(path)`` (the policy's weights and its optimizer state) after :func:`check_model`.

    Raises:
        DamagedFileError: the file is damaged, or its parameters do not fit ``model``.
    """
    p = Path(path)
    check_model(p, advice)
    try:
        model.set_parameters(str(p), exact_match=True, device=device)
    except Exception as err:  # a damaged entry or parameters of another network
        raise unloadable(p, err, advice) from None


def read_parameters(path: str | os.PathLike[str], advice: str = MODEL_ADVICE) -> dict[str, Any]:
    """The parameter dicts of a model zip (``{"policy": state_dict, ...}``) on the CPU, checked.

    Raises:
        DamagedFileError: the file is damaged or its parameters do not load.
    """
    from stable_baselines3.common.save_util import load_from_zip_file

    p = Path(path)
    check_model(p, advice)
    try:
        _, params, _ = load_from_zip_file(str(p), device="cpu", load_data=False)
    except Exception as err:  # as in load_model
        raise unloadable(p, err, advice) from None
    if not params or "policy" not in params:
        raise damaged(p, "no policy parameters", advice)
    return params
