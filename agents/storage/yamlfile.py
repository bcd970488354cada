"""Reading a YAML file, with a syntax error told on one line: the file, line and column.

PyYAML's own message spans several lines, quotes the text with a caret under it and names
the source ``"<unicode string>"``; :func:`load_yaml` keeps what matters (``path:line:column:
what is wrong``), so that a config error reads like a compiler's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class YAMLFileError(ValueError):
    """A YAML file that cannot be read or parsed; the message is one line naming the file."""


def yaml_error_line(path: str | Path, err: yaml.YAMLError) -> str:
    """``path:line:column: not valid YAML: problem (context from line L)`` for a PyYAML error (1-based)."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    context = getattr(err, "context", None)
    context_mark = getattr(err, "context_mark", None)
    note = ""
    if context:
        note = f" ({context}" + (f" from line {context_mark.line + 1})" if context_mark is not None else ")")
    return f"{where}: not valid YAML: {problem}{note}"


def load_yaml(path: str | Path) -> Any:
    """The contents of the YAML file ``path`` (``yaml.safe_load``).

    Raises:
        YAMLFileError: the file is missing or unreadable, or not valid YAML (one line naming
            the file, line and column).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise YAMLFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise YAMLFileError(f"{path}: cannot be read: {err}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise YAMLFileError(yaml_error_line(path, err)) from None
