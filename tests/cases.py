"""The variants that the cross-checks (properties, incremental updates) run over: every preset and the
option combinations that take other code paths (supermove, auto-play, redeals)."""

from __future__ import annotations

from forty_thieves_env import PRESETS, GameState, Variant, format_position, get_variant

VARIANTS: list[Variant] = [
    *PRESETS.values(),
    *(get_variant(n, run_moves="supermove") for n in ("classic", "streets", "maria", "limited", "rank_and_file")),
    *(get_variant(n, auto_play_safe=True) for n in PRESETS),
    get_variant("streets", run_moves="supermove", auto_play_safe=True),
    get_variant("classic", redeals=2),
]


def variant_id(v: Variant) -> str:
    return format_position(GameState(v)).splitlines()[0].removeprefix("variant: ").replace(" ", ",")
