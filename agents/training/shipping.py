"""Ship a run's model with the package, by name.

    python -m agents.training.shipping runs/RUN --name NAME [--results results/RUN/results.json]
    forty-thieves ship runs/RUN --name NAME [--results FILE.json] [--force] [--keep-optimizer]

copies the run's best model (else its final one) to ``agents/models/NAME.zip`` and writes
``NAME.json`` (:class:`agents.players.shipped.ModelInfo`) from the run folder: its config,
command lines, env id, variant, observation mode, seed, step count and git commit, with test
results from ``--results`` (an ``evaluate`` ``results.json``: its settings and summary, the
per-deal rows left out; or any JSON object), else from the run's ``final_eval.json`` when
that evaluated the same model. An existing ``NAME`` is only replaced with ``--force``.

The zip's Adam moments (``policy.optimizer.pth``, twice the weights) are emptied, not
removed, since ``MaskablePPO.load`` requires the entry; playing never reads them, and a
training resumed from a shipped zip starts its optimizer afresh (``--keep-optimizer`` keeps
them). Entries are compressed too. The run's model is read whole first
(:func:`agents.storage.modelfile.check_model`: a damaged one is named, on one line), and the shipped
zip is loaded and checked against its metadata (:func:`agents.players.shipped.check_fit`)
before it replaces anything. The three files are each written atomically, into a folder
checked writable before the work starts.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import zipfile
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agents.players.shipped import NAME_PATTERN, ModelInfo, check_fit, info_from_run, models_dir, run_model
from agents.storage.files import check_writable, write_bytes
from agents.storage.modelfile import check_model, open_model

OPTIMIZER_ENTRY = "policy.optimizer.pth"


def shrink_zip(source: Path, dest: Path | io.BytesIO, keep_optimizer: bool = False) -> None:
    """Copy an SB3 zip with its entries compressed and (unless kept) the optimizer state emptied."""
    import torch

    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for entry in zin.infolist():
            data = zin.read(entry.filename)
            if entry.filename == OPTIMIZER_ENTRY and not keep_optimizer:
                state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
                state["state"] = {}  # the moments; param_groups stay, for load_state_dict
                buffer = io.BytesIO()
                torch.save(state, buffer)
                data = buffer.getvalue()
            zout.writestr(entry.filename, data, compress_type=zipfile.ZIP_DEFLATED)


def read_results(path: Path, info: ModelInfo) -> dict[str, Any]:
    """Test results from a JSON file: an evaluation's settings and summary, or the object as it is.

    Raises:
        ValueError: not a JSON object, or an evaluation of another agent or variant.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"--results {path}: {err}") from None
    if not isinstance(data, dict):
        raise ValueError(f"--results {path}: expected a JSON object, got {type(data).__name__}")
    if not ("settings" in data and "summary" in data):
        return {"source": path.name, **data}
    settings = data["settings"]
    if settings.get("agent", "ppo") != "ppo" or settings.get("variant", info.variant) != info.variant:
        raise ValueError(
            f"--results {path}: an evaluation of {settings.get('agent')!r} on {settings.get('variant')!r}, "
            f"not of ppo on {info.variant!r}"
        )
    return {"source": path.name, "settings": settings, "summary": data["summary"]}


def ship_run(
    run_dir: str | os.PathLike[str],
    name: str,
    *,
    results: str | os.PathLike[str] | None = None,
    force: bool = False,
    directory: str | os.PathLike[str] | None = None,
    keep_optimizer: bool = False,
    log: Callable[[str], None] = print,
) -> tuple[Path, Path]:
    """Ship a run folder's model as ``NAME`` (see the module docstring); return the zip and JSON paths.

    Args:
        run_dir: A folder written by ``forty-thieves train``.
        name: The shipped name (letters, digits, ``-`` and ``_``).
        results: A JSON file of test results (default: the run's ``final_eval.json``).
        force: Replace a model of the same name.
        directory: Where to ship (default: :func:`agents.players.shipped.models_dir`).
        keep_optimizer: Keep the optimizer state in the zip.
        log: Where the one-line report goes.

    Raises:
        ValueError: a bad name, not a run folder, a name already shipped (without ``force``),
            or a model that does not fit its own metadata.
    """
    if not NAME_PATTERN.match(name):
        raise ValueError(f"name {name!r}: use letters, digits, - and _ (at most 64, no dot or slash)")
    run_dir = Path(run_dir)
    if not (run_dir / "config.yaml").is_file():
        raise ValueError(f"{run_dir} is not a run folder (no config.yaml)")
    source = run_model(run_dir)
    check_model(source, "restore it from a copy, or --resume the run to write final_model.zip again")
    info = info_from_run(run_dir, source, name)
    changes: dict[str, Any] = {"created": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    if results is not None:
        changes["test_results"] = read_results(Path(results), info)
    info = info.model_copy(update=changes)

    out = models_dir() if directory is None else Path(directory)
    zip_path, json_path = out / f"{name}.zip", out / f"{name}.json"
    for path in (zip_path, json_path):
        if path.exists() and not force:
            raise ValueError(f"{path} exists: --force to replace it, or another --name")
    check_writable(out, "the shipped model")
    shrunk = io.BytesIO()
    shrink_zip(source, shrunk, keep_optimizer)
    model = open_model(io.BytesIO(shrunk.getvalue()), device="cpu")  # old class paths answered
    check_fit(model.observation_space, model.action_space, info, info.game_variant(), f"the model at {source}")
    write_bytes(zip_path, shrunk.getvalue())
    info.write(json_path)
    # The run's resolved config beside it: `forty-thieves train agents/models/NAME.yaml` trains it again.
    write_bytes(out / f"{name}.yaml", (run_dir / "config.yaml").read_bytes())
    sizes = f"{zip_path.stat().st_size / 1024:.0f} KiB, was {source.stat().st_size / 1024:.0f}"
    log(f"shipped {source} as {name!r}: {zip_path} ({sizes}), {json_path} and {name}.yaml (its config)")
    return zip_path, json_path


# ------------------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``forty-thieves ship`` arguments (read by :func:`run_cli`)."""
    parser.add_argument("run", help="run folder written by forty-thieves train (its best model, else its final one)")
    parser.add_argument("--name", required=True, help="the shipped name: --model NAME plays it")
    parser.add_argument("--results", help="test results JSON (e.g. an evaluate results.json; default: final_eval.json)")
    parser.add_argument("--force", action="store_true", help="replace a shipped model of the same name")
    parser.add_argument("--models-dir", help="ship here (default: $FORTY_THIEVES_MODELS, else agents/models)")
    parser.add_argument("--keep-optimizer", action="store_true", help="keep the optimizer state (to train on from it)")


def run_cli(args: Any) -> int:
    """The ``forty-thieves ship`` handler."""
    ship_run(
        args.run,
        args.name,
        results=args.results,
        force=args.force,
        directory=args.models_dir,
        keep_optimizer=args.keep_optimizer,
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agents.training.shipping``: the same as ``forty-thieves ship``."""
    parser = argparse.ArgumentParser(prog="python -m agents.training.shipping", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_cli(args)
    except (ValueError, OSError) as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
