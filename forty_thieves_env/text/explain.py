"""Why a move is refused, in words: the messages of ``IllegalMoveError``.

Legality itself is decided by the compiled rules (:func:`forty_thieves_env.engine.rules.is_legal`);
this module only explains a refusal, naming the cards and the rule in the player's terms.
"""

from __future__ import annotations

import numpy as np

from ..engine.actions import Kind, decode
from ..engine.layout import Cfg, Slot
from ..engine.rules import empty_columns, is_legal, run_length, run_limit
from .notation import card_text


def why_illegal(s: np.ndarray, cfg: np.ndarray, action: int) -> str:
    """A human reason why ``action`` is illegal in ``s``, or ``""`` when it is legal.

    Legality itself comes from :func:`is_legal`; this only explains a refusal.
    """
    if is_legal(s, cfg, action):
        return ""
    if not 0 <= action < cfg[Cfg.N_ACTIONS]:
        return f"no action {action} (0..{int(cfg[Cfg.N_ACTIONS]) - 1})"
    kind, i, j, k = (int(x) for x in decode(cfg, action))
    d = int(cfg[Cfg.DEPTH])
    lens = s[cfg[Cfg.OFF_LEN] : cfg[Cfg.OFF_LEN] + cfg[Cfg.COLUMNS]]

    def top(col: int) -> int:
        return int(s[cfg[Cfg.OFF_TAB] + col * d + lens[col] - 1])

    build = "alternate colours" if cfg[Cfg.ALTERNATE] else "suit"
    if kind == Kind.STOCK:
        if s[Slot.REDEALS] > 0:
            return "the stock and the waste are both empty"
        return "the stock is empty and no redeal is left"
    if kind in (Kind.WASTE_FOUNDATION, Kind.WASTE_COLUMN):
        if s[Slot.WASTE_LEN] == 0:
            return "the waste is empty"
        card = int(s[cfg[Cfg.OFF_WASTE] + s[Slot.WASTE_LEN] - 1])
    else:
        if lens[i] == 0:
            return f"column {i + 1} is empty"
        card = int(s[cfg[Cfg.OFF_TAB] + i * d + lens[i] - k]) if k <= lens[i] else top(i)
    if kind in (Kind.WASTE_FOUNDATION, Kind.COLUMN_FOUNDATION):
        return f"{card_text(card)} does not fit on any foundation"
    if kind == Kind.COLUMN_COLUMN:
        r = int(run_length(s, cfg, i))
        if k > r:
            return f"column {i + 1} ends in a run of {r} card(s) in {build}, not {k}"
        lim = int(run_limit(cfg, empty_columns(s, cfg), lens[j] == 0))
        if k > lim:
            return f"at most {lim} card(s) can move at once with the empty columns there are"
    return f"{card_text(card)} does not go on {card_text(top(j))} (columns build down in {build})"
