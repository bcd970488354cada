"""The format of a demonstration data set on disk: its arrays, their types, and one chunk file.

A data set is a folder::

    DIR/manifest.json        the settings it was collected with (:mod:`.manifest`)
    DIR/chunks/00000.npz     games 0 .. K-1 of the deal list, whole
    DIR/chunks/00001.npz     games K .. 2K-1
    ...

Each chunk is one compressed ``.npz`` (``numpy.savez_compressed``), written atomically
(:func:`agents.storage.files.write_bytes`), holding whole games only. Its arrays:

Per position (``N`` rows, the games one after another in deal-list order):

================== ================= =========================================================
array              type, shape       meaning
================== ================= =========================================================
``obs_<field>``    int8, (N, ...)    the player's observation, one array per field of
                                     :data:`FIELDS` (``tableau``, ``waste``, ``foundations``,
                                     ``counts``): what the teacher read
``mask``           bool, (N, A)      the legal moves (``A`` = the variant's action count)
``action``         int16, (N,)       the teacher's move
``reward``         float32, (N,)     the env's reward for that move
``step``           int16, (N,)       the position's index in its game (0 first)
``samples``        uint16, (N,)      sampled worlds the teacher consulted (0: none)
``searched``       bool, (N,)        whether the teacher ran a search (a solve) for it
``exact``          bool, (N,)        whether nothing was hidden (decided on the real position)
``vote_n``         uint16, (N,)      moves that got votes at the position (0: no sampled line
                                     won; the position is *decisive* when it is above 0)
================== ================= =========================================================

The votes, sparse (``V`` = ``vote_n.sum()`` rows; position ``i``'s rows follow position
``i-1``'s): ``vote_action`` (int16, the move) and ``vote_count`` (uint16, its votes). Dense
votes would cost ``A`` numbers a position, 1192 for Josephine, while most positions have
none and a decisive one a handful.

Per game (``G`` rows): ``deal`` (int64), ``won`` (bool), ``home`` (int16, cards on the
foundations at the end), ``length`` (int32, its positions), ``cut`` (bool: ended by the idle
cut or the move cap, not by the game), ``seconds`` (float32, the worker's CPU seconds for
the game, the env included). Beside them ``format`` (the :data:`FORMAT` number) and ``index``
(the chunk's number), 0-d.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from agents.storage.files import DamagedFileError, damaged, write_bytes
from forty_thieves_env.envs.observation import O_NAMES, O_STOCK

#: The version of this layout; a folder of another version is refused, not misread.
FORMAT = 1
#: A player's observation fields (the oracle's hidden ones come after them).
FIELDS: tuple[str, ...] = tuple(O_NAMES[:O_STOCK])
#: Per-position arrays (besides ``obs_<field>``): name -> dtype.
POSITION_ARRAYS: dict[str, type] = {
    "mask": np.bool_,
    "action": np.int16,
    "reward": np.float32,
    "step": np.int16,
    "samples": np.uint16,
    "searched": np.bool_,
    "exact": np.bool_,
    "vote_n": np.uint16,
}
#: The sparse votes: name -> dtype (``vote_n.sum()`` rows).
VOTE_ARRAYS: dict[str, type] = {"vote_action": np.int16, "vote_count": np.uint16}
#: Per-game arrays: name -> dtype.
GAME_ARRAYS: dict[str, type] = {
    "deal": np.int64,
    "won": np.bool_,
    "home": np.int16,
    "length": np.int32,
    "cut": np.bool_,
    "seconds": np.float32,
}
#: Arrays that differ from one run to the next (the rest is reproducible from the seed).
TIMINGS = ("seconds",)
CHUNKS = "chunks"


def obs_key(field: str) -> str:
    return f"obs_{field}"


def chunk_path(folder: str | Path, index: int) -> Path:
    """Chunk ``index``'s file in the data set ``folder``."""
    return Path(folder) / CHUNKS / f"{index:05d}.npz"


def chunk_count(games: int, chunk: int) -> int:
    return -(-int(games) // int(chunk))


def encode_chunk(arrays: Mapping[str, np.ndarray], index: int) -> bytes:
    """The ``.npz`` bytes of one chunk (``arrays`` typed as the tables above)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, format=np.int32(FORMAT), index=np.int32(index), **arrays)
    return buf.getvalue()


def write_chunk(folder: str | Path, index: int, arrays: Mapping[str, np.ndarray]) -> Path:
    """Write chunk ``index`` whole or not at all; return its path."""
    return write_bytes(chunk_path(folder, index), encode_chunk(arrays, index))


def read_chunk(
    path: str | Path, index: int, n_actions: int, shapes: Mapping[str, tuple[int, ...]], advice: str
) -> dict[str, np.ndarray]:
    """Chunk ``index``'s arrays, checked: every array there, of its type and size.

    Args:
        path: The chunk file.
        index: The chunk's number (it must say the same).
        n_actions: The variant's action count (the mask's width).
        shapes: Observation field -> its shape for one position.
        advice: What the message says is done about a damaged chunk (``"skipped"``).

    Raises:
        DamagedFileError: cut short, not an ``.npz``, a bad CRC, an array missing or of the
            wrong type or size (one line naming the file).
        OSError: the file cannot be read.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}  # reads (and CRC-checks) every member now
    except OSError:
        raise
    except (ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as err:
        raise damaged(p, f"not a whole chunk: {err}", advice) from None
    why = _problem(arrays, index, n_actions, shapes)
    if why:
        raise damaged(p, why, advice)
    return arrays


def _problem(arrays: dict[str, np.ndarray], index: int, n_actions: int, shapes: Mapping[str, tuple[int, ...]]) -> str:
    """What is wrong with a chunk's arrays ('' when nothing)."""
    expected = {obs_key(f): np.int8 for f in FIELDS} | POSITION_ARRAYS | VOTE_ARRAYS | GAME_ARRAYS
    missing = sorted(set(expected) - set(arrays) | {"format", "index"} - set(arrays))
    if missing:
        return f"no {', '.join(missing)}"
    if int(arrays["format"]) != FORMAT:
        return f"format {int(arrays['format'])}, this code reads {FORMAT}"
    if int(arrays["index"]) != index:
        return f"it says it is chunk {int(arrays['index'])}"
    for name, dtype in expected.items():
        if arrays[name].dtype != np.dtype(dtype):
            return f"{name} is {arrays[name].dtype}, not {np.dtype(dtype)}"
    lengths = arrays["length"]
    n = int(lengths.sum()) if lengths.size else 0
    games = len(arrays["deal"])
    if games == 0 or any(len(arrays[k]) != games for k in GAME_ARRAYS) or (lengths < 1).any():
        return "its games' arrays disagree"
    for f in FIELDS:
        if arrays[obs_key(f)].shape != (n, *shapes[f]):
            return f"{obs_key(f)} has shape {arrays[obs_key(f)].shape}, not {(n, *shapes[f])}"
    if arrays["mask"].shape != (n, n_actions):
        return f"mask has shape {arrays['mask'].shape}, not {(n, n_actions)}"
    if any(arrays[k].shape != (n,) for k in POSITION_ARRAYS if k != "mask"):
        return "its positions' arrays disagree"
    v = int(arrays["vote_n"].sum())
    if any(arrays[k].shape != (v,) for k in VOTE_ARRAYS):
        return "its votes disagree with vote_n"
    rows = np.arange(n)
    if not arrays["mask"][rows, arrays["action"].astype(np.int64)].all():
        return "a recorded move is not legal in its position"
    return ""


def concat_arrays(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Chunks' arrays one after another (the 0-d ``format`` and ``index`` left out)."""
    keys = [k for k in parts[0] if k not in ("format", "index")]
    return {k: np.concatenate([p[k] for p in parts]) for k in keys}


__all__ = [
    "CHUNKS",
    "FIELDS",
    "FORMAT",
    "GAME_ARRAYS",
    "POSITION_ARRAYS",
    "TIMINGS",
    "VOTE_ARRAYS",
    "DamagedFileError",
    "chunk_count",
    "chunk_path",
    "concat_arrays",
    "encode_chunk",
    "obs_key",
    "read_chunk",
    "write_chunk",
]
