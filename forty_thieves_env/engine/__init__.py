"""The engine: the game as flat arrays and numba kernels; imports neither gymnasium nor torch, nor any text.

Reading order, bottom-up (each module imports only those above it in this list):

* :mod:`.cards` — card codes (``suit * 13 + rank``), the pack.
* :mod:`.variants` — :class:`~.variants.Variant` (frozen dataclass) and its presets.
* :mod:`.bits` — 8-byte words, popcount, pointers: the bit tricks the kernels share.
* :mod:`.layout` — the state and config arrays, every slot a named constant: the contract
  between the packages.
* :mod:`.actions` — the action codec, the only place that does action-number arithmetic.
* :mod:`.config` — a variant's config array.
* :mod:`.rules` — legal moves, applying a move, auto-play, win and stuck.
* :mod:`.incremental` — the legal mask brought up to date after a move.
* :mod:`.deals` — PySolFC's numbered deals, the evaluation splits, laying a pack out.
* :mod:`.pcg64` — numpy's ``PCG64`` generator ported to numba, for resets inside kernels.
"""
