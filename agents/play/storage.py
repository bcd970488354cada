"""The small JSON files of ``forty-thieves play`` (the saved game, the statistics).

Each is written through a temporary file, so a crash never leaves half a file, and carries a
version, so a file of another version is refused rather than misread.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["read_json", "write_json"]


def write_json(doc: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write ``doc`` to ``path`` (through ``path.tmp``, then renamed over it)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out)
    return out


def read_json(path: str | os.PathLike[str], version: int) -> dict[str, Any]:
    """The JSON object in ``path``, which must say it is of ``version``.

    Raises:
        ValueError: not JSON, not an object, or another version.
        OSError: the file cannot be read.
    """
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or doc.get("version") != version:
        found = doc.get("version") if isinstance(doc, dict) else None
        raise ValueError(f"file version {found!r}, this program reads version {version}")
    return doc
