"""The small JSON files of ``forty-thieves play`` (the saved game, the statistics).

Each is written atomically (:func:`agents.storage.files.write_json`: a temporary file, fsync, rename),
so a crash never leaves half a file, and carries a version, so a file of another version is
refused rather than misread.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agents.storage import files

__all__ = ["read_json", "write_json"]


def write_json(doc: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``doc`` to ``path`` atomically."""
    return files.write_json(path, doc)


def read_json(path: str | os.PathLike[str], version: int) -> dict[str, Any]:
    """The JSON object in ``path``, which must say it is of ``version``.

    Raises:
        ValueError: not JSON (cut short, say), not an object, or another version.
        OSError: the file cannot be read.
    """
    try:
        doc = json.loads(Path(path).read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    except json.JSONDecodeError as err:
        raise ValueError("empty" if not err.doc.strip() else f"not JSON ({err})") from None
    if not isinstance(doc, dict) or doc.get("version") != version:
        found = doc.get("version") if isinstance(doc, dict) else None
        raise ValueError(f"file version {found!r}, this program reads version {version}")
    return doc
