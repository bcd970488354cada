"""Run the notebooks of ``notebooks/`` with parameters, papermill-style, on nbclient.

Each notebook has one code cell tagged ``parameters`` holding its defaults (those of the
committed run). :func:`execute_notebook` inserts a cell tagged ``injected-parameters`` right
after it with the values given, runs every cell in a fresh kernel with the repository root
as working directory, and returns (or writes) the executed notebook::

    python -m agents.training.notebooks notebooks/compare_agents.ipynb -p N=20 -p FAST=True -o /tmp/out.ipynb
    python -m agents.training.notebooks notebooks/training.ipynb --inplace      # refresh the committed outputs

The tests run both notebooks this way in a fast mode (``FAST=True``, small ``N``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"


def inject_parameters(nb: Any, parameters: Mapping[str, Any]) -> Any:
    """Put a cell assigning ``parameters`` right after the ``parameters`` cell (replacing an old one)."""
    import nbformat

    nb.cells = [c for c in nb.cells if INJECTED_TAG not in c.get("metadata", {}).get("tags", [])]
    if not parameters:
        return nb
    index = next(
        (i for i, c in enumerate(nb.cells) if PARAMETERS_TAG in c.get("metadata", {}).get("tags", [])),
        None,
    )
    if index is None:
        raise ValueError("the notebook has no cell tagged 'parameters'")
    source = "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in parameters.items())
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": [INJECTED_TAG]})
    nb.cells.insert(index + 1, cell)
    return nb


def execute_notebook(
    path: str | Path,
    parameters: Mapping[str, Any] | None = None,
    output: str | Path | None = None,
    timeout: int = 3600,
    cwd: str | Path = ROOT,
) -> Any:
    """Execute a notebook with parameters; write it to ``output`` when given; return it."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(str(path), as_version=4)
    inject_parameters(nb, dict(parameters or {}))
    client = NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}, allow_errors=False
    )
    client.execute()
    if output is not None:
        nbformat.write(nb, str(output))
    return nb


def parse_parameter(text: str) -> tuple[str, Any]:
    """``NAME=value`` with the value read as a Python literal (else kept as a string)."""
    import ast

    name, sep, raw = text.partition("=")
    if not sep or not name.strip().isidentifier():
        raise ValueError(f"a parameter looks like NAME=value, got {text!r}")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    return name.strip(), value


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agents.training.notebooks", description=__doc__.splitlines()[0])
    p.add_argument("notebook")
    p.add_argument("-p", "--parameter", action="append", default=[], metavar="NAME=VALUE")
    out = p.add_mutually_exclusive_group(required=True)
    out.add_argument("-o", "--output", help="write the executed notebook here")
    out.add_argument("--inplace", action="store_true", help="overwrite the notebook with its executed version")
    p.add_argument("--timeout", type=int, default=3600, help="seconds per cell (default: 3600)")
    args = p.parse_args(argv)
    params = dict(parse_parameter(t) for t in args.parameter)
    execute_notebook(args.notebook, params, args.notebook if args.inplace else args.output, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
