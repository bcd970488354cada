"""The cost of a demonstration data set's format: our ``.npz`` chunks against Minari's.

Reads a data set folder (``forty-thieves dataset collect``), then for each format writes the same
games and reads them back as one flat array per field, timing both and measuring the bytes on
disk:

* ``npz compressed``: the chunks as ``collect`` writes them (``numpy.savez_compressed``);
* ``npz stored``: the same arrays with ``numpy.savez`` (no compression);
* ``minari hdf5`` / ``minari arrow``: :func:`minari.create_dataset_from_buffers`, the player's
  ``Dict`` observation as Minari's observation space (``T + 1`` rows an episode, the last one
  repeated: we do not keep the final observation), the mask, the dense votes and the flags in
  ``infos``; read back with ``minari.load_dataset`` and one pass over its episodes.

Minari is not a dependency of the project; to run this::

    pip install --target /tmp/mlib --no-deps minari==0.5.4 typer shellingham annotated-doc h5py pyarrow
    PYTHONPATH=/tmp/mlib:. .venv/bin/python benchmarks/dataset_formats.py DATA_DIR
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from agents.datasets import load_dataset
from agents.datasets.layout import FIELDS, GAME_ARRAYS, POSITION_ARRAYS, VOTE_ARRAYS, chunk_path, obs_key


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def chunk_arrays(ds, k: int) -> dict[str, np.ndarray]:
    with np.load(chunk_path(ds.folder, k)) as z:
        return {name: z[name] for name in z.files}


def bench_npz(ds, out: Path, compressed: bool) -> dict[str, float]:
    save = np.savez_compressed if compressed else np.savez
    chunks = [chunk_arrays(ds, k) for k in ds.chunks]
    out.mkdir(parents=True)
    t0 = time.perf_counter()
    for k, arrays in zip(ds.chunks, chunks, strict=True):
        buf = io.BytesIO()
        save(buf, **arrays)
        (out / f"{k:05d}.npz").write_bytes(buf.getvalue())
    write = time.perf_counter() - t0
    t0 = time.perf_counter()
    parts = []
    for k in ds.chunks:
        with np.load(out / f"{k:05d}.npz") as z:
            parts.append({name: z[name] for name in z.files})
    flat = {name: np.concatenate([p[name] for p in parts]) for name in parts[0] if parts[0][name].ndim}
    read = time.perf_counter() - t0
    assert len(flat["action"]) == len(ds)
    return {"write_s": write, "read_s": read, "bytes": folder_bytes(out)}


def minari_buffers(ds) -> list:
    from minari.data_collector import EpisodeBuffer

    buffers = []
    for g, ep in enumerate(ds.episodes()):
        n = len(ep)
        last = lambda a: np.concatenate([a, a[-1:]])  # noqa: E731  (T + 1 rows, the last repeated)
        dense = np.zeros((n, ds.n_actions), np.uint16)
        i = 0
        for row, k in enumerate(ep.vote_n.tolist()):
            dense[row, ep.vote_action[i : i + k].astype(np.int64)] = ep.vote_count[i : i + k]
            i += k
        # 1-D infos as (T + 1, 1): Minari 0.5.4's arrow storage writes a 1-D numpy info that it
        # cannot read back (an empty "shape" in its field metadata).
        infos = {
            "action_mask": last(ep.mask),
            "votes": last(dense),
            "samples": last(ep.samples)[:, None],
            "searched": last(ep.searched)[:, None],
            "exact": last(ep.exact)[:, None],
        }
        buffers.append(
            EpisodeBuffer(
                id=g,
                seed=int(ep.deal),
                observations={f: last(ep.obs[f]) for f in FIELDS},
                actions=ep.action.astype(np.int64),
                rewards=ep.reward.astype(np.float64),
                terminations=np.r_[np.zeros(n - 1, bool), [ep.won]],
                truncations=np.r_[np.zeros(n - 1, bool), [not ep.won]],
                infos=infos,
            )
        )
    return buffers


def bench_minari(ds, root: Path, data_format: str) -> dict[str, float]:
    os.environ["MINARI_DATASETS_PATH"] = str(root)
    import minari

    from forty_thieves_env.envs.resolved import ResolvedEnv

    env = ResolvedEnv.resolve(ds.manifest.settings.env_id).derive(observation="dict").make()
    dataset_id = f"forty-thieves/bench-{data_format}-v0"
    t0 = time.perf_counter()
    buffers = minari_buffers(ds)
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    minari.create_dataset_from_buffers(
        dataset_id,
        buffers,
        observation_space=env.observation_space,
        action_space=env.action_space,
        algorithm_name=ds.manifest.settings.teacher,
        data_format=data_format,
    )
    write = time.perf_counter() - t0
    t0 = time.perf_counter()
    loaded = minari.load_dataset(dataset_id)
    parts = {f: [] for f in FIELDS} | {"action": [], "mask": [], "votes": []}
    for ep in loaded.iterate_episodes():
        for f in FIELDS:
            parts[f].append(ep.observations[f][:-1])
        parts["action"].append(ep.actions)
        parts["mask"].append(ep.infos["action_mask"][:-1])
        parts["votes"].append(ep.infos["votes"][:-1])
    flat = {k: np.concatenate(v) for k, v in parts.items()}
    read = time.perf_counter() - t0
    assert len(flat["action"]) == len(ds)
    assert np.array_equal(flat["action"], ds.positions["action"]) and np.array_equal(flat["mask"], ds.positions["mask"])
    return {"build_s": build, "write_s": write, "read_s": read, "bytes": folder_bytes(root)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a data set folder")
    parser.add_argument("--formats", default="npz,minari-hdf5,minari-arrow")
    args = parser.parse_args()
    t0 = time.perf_counter()
    ds = load_dataset(args.folder)
    load = time.perf_counter() - t0
    n = len(ds)
    print(f"{args.folder}: {ds.n_games} games, {n:,} positions; load_dataset (flat view, checked) {load:.2f} s")
    keys = [obs_key(f) for f in FIELDS] + [*POSITION_ARRAYS, *VOTE_ARRAYS, *GAME_ARRAYS]
    raw = sum(chunk_arrays(ds, k)[key].nbytes for k in ds.chunks for key in keys)
    print(f"  raw arrays in memory: {raw / 1e6:.2f} MB ({raw / n * 1000 / 1e6:.3f} MB per 1000 positions)")
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for fmt in args.formats.split(","):
            where = Path(tmp) / fmt
            if fmt == "npz":
                rows.append(("npz compressed", bench_npz(ds, where / "c", True)))
                rows.append(("npz stored", bench_npz(ds, where / "s", False)))
            else:
                rows.append((fmt.replace("-", " "), bench_minari(ds, where, fmt.split("-")[1])))
            shutil.rmtree(where, ignore_errors=True)
    print(f"  {'format':<16} {'write s':>8} {'read s':>8} {'MB':>8} {'MB/1000 pos':>12}")
    for name, r in rows:
        write = r["write_s"] + r.get("build_s", 0.0)
        mb = r["bytes"] / 1e6
        print(f"  {name:<16} {write:>8.2f} {r['read_s']:>8.2f} {mb:>8.2f} {mb / n * 1000:>12.3f}")


if __name__ == "__main__":
    main()
