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
"""

from __future__ import annotations

import io
import os
import zipfile
import zlib
from pathlib import Path
from typing import Any

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


def _unloadable(path: Path, err: BaseException, advice: str) -> DamagedFileError:
    """A load that failed after :func:`check_model` passed (a model of another library version,
    say): still one line naming the file and the error."""
    text = " ".join(str(err).split()) or type(err).__name__
    return DamagedFileError(f"{path} cannot be loaded as a model ({type(err).__name__}: {text}): {advice}")


def load_model(path: str | os.PathLike[str], advice: str = MODEL_ADVICE, **kwargs: Any) -> Any:
    """``MaskablePPO.load(path, **kwargs)`` after :func:`check_model`.

    Raises:
        ValueError: no such file.
        DamagedFileError: the file is damaged or does not load (naming it).
    """
    from sb3_contrib import MaskablePPO

    p = Path(path)
    check_model(p, advice)
    try:
        return MaskablePPO.load(str(p), **kwargs)
    except Exception as err:  # whatever SB3 or torch raise on a file that passed the check
        raise _unloadable(p, err, advice) from None


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
        raise _unloadable(p, err, advice) from None


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
        raise _unloadable(p, err, advice) from None
    if not params or "policy" not in params:
        raise damaged(p, "no policy parameters", advice)
    return params
