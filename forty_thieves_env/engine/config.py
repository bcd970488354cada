"""The config array: a variant's options and array offsets as one ``(CFG_LEN,) int64`` array.

Every kernel takes ``(s, cfg, ...)``: the state array and this array, read through the
``CFG_*`` slots of :mod:`.layout`. It is built once per variant and cached (variants are
frozen, hence hashable), and it is read-only.
"""

from __future__ import annotations

import numpy as np

from .actions import n_actions_for
from .layout import (
    CFG_ALTERNATE,
    CFG_AUTO,
    CFG_COLUMNS,
    CFG_DEPTH,
    CFG_FACE_DOWN,
    CFG_LEN,
    CFG_MAX_RUN,
    CFG_N_ACTIONS,
    CFG_OFF_DOWN,
    CFG_OFF_LEN,
    CFG_OFF_STOCK,
    CFG_OFF_TAB,
    CFG_OFF_WASTE,
    CFG_PER_COLUMN,
    CFG_REDEALS,
    CFG_RUN,
    CFG_SIZE,
    CFG_STOCK,
    RUN_CODES,
    offsets,
)
from .variants import Variant


def make_config(variant: Variant) -> np.ndarray:
    """Build the ``(CFG_LEN,) int64`` config array that every kernel takes."""
    c, d, t = variant.columns, variant.max_depth, variant.stock_size
    cfg = np.zeros(CFG_LEN, dtype=np.int64)
    cfg[CFG_COLUMNS] = c
    cfg[CFG_DEPTH] = d
    cfg[CFG_STOCK] = t
    cfg[CFG_ALTERNATE] = variant.build == "alternate"
    cfg[CFG_RUN] = RUN_CODES[variant.run_moves]
    cfg[CFG_AUTO] = variant.auto_play_safe
    cfg[CFG_MAX_RUN] = variant.max_run
    slots = (CFG_OFF_LEN, CFG_OFF_DOWN, CFG_OFF_TAB, CFG_OFF_STOCK, CFG_OFF_WASTE, CFG_SIZE)
    for slot, value in zip(slots, offsets(c, d, t), strict=True):
        cfg[slot] = value
    cfg[CFG_N_ACTIONS] = n_actions_for(c, variant.max_run)
    cfg[CFG_REDEALS] = variant.redeals
    cfg[CFG_PER_COLUMN] = variant.cards_per_column
    cfg[CFG_FACE_DOWN] = variant.face_down
    cfg.flags.writeable = False
    return cfg


_CONFIGS: dict[Variant, np.ndarray] = {}


def config_for(variant: Variant) -> np.ndarray:
    """Cached :func:`make_config`."""
    cfg = _CONFIGS.get(variant)
    if cfg is None:
        cfg = _CONFIGS[variant] = make_config(variant)
    return cfg
