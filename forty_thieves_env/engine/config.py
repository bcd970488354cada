"""The config array: a variant's options and array offsets as one ``(CFG_LEN,) int64`` array.

Every kernel takes ``(s, cfg, ...)``: the state array and this array, read through the
:class:`~.layout.Cfg` slots. It is built once per variant and cached (variants are
frozen, hence hashable), and it is read-only.
"""

from __future__ import annotations

import numpy as np

from .actions import n_actions_for
from .layout import CFG_LEN, RUN_CODES, Cfg, offsets
from .variants import Variant


def make_config(variant: Variant) -> np.ndarray:
    """Build the ``(CFG_LEN,) int64`` config array that every kernel takes."""
    c, d, t = variant.columns, variant.max_depth, variant.stock_size
    cfg = np.zeros(CFG_LEN, dtype=np.int64)
    cfg[Cfg.COLUMNS] = c
    cfg[Cfg.DEPTH] = d
    cfg[Cfg.STOCK] = t
    cfg[Cfg.ALTERNATE] = variant.build == "alternate"
    cfg[Cfg.RUN] = RUN_CODES[variant.run_moves]
    cfg[Cfg.AUTO] = variant.auto_play_safe
    cfg[Cfg.MAX_RUN] = variant.max_run
    slots = (Cfg.OFF_LEN, Cfg.OFF_DOWN, Cfg.OFF_TAB, Cfg.OFF_STOCK, Cfg.OFF_WASTE, Cfg.SIZE)
    for slot, value in zip(slots, offsets(c, d, t), strict=True):
        cfg[slot] = value
    cfg[Cfg.N_ACTIONS] = n_actions_for(c, variant.max_run)
    cfg[Cfg.REDEALS] = variant.redeals
    cfg[Cfg.PER_COLUMN] = variant.cards_per_column
    cfg[Cfg.FACE_DOWN] = variant.face_down
    cfg.flags.writeable = False
    return cfg


_CONFIGS: dict[Variant, np.ndarray] = {}


def config_for(variant: Variant) -> np.ndarray:
    """Cached :func:`make_config`."""
    cfg = _CONFIGS.get(variant)
    if cfg is None:
        cfg = _CONFIGS[variant] = make_config(variant)
    return cfg
