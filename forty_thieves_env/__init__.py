"""forty-thieves-env: Forty Thieves (Napoleon at St Helena) and its family for RL research.

The rules engine (:mod:`.rules` over :mod:`.state`) imports neither gymnasium nor torch.
"""

from pathlib import Path as _Path

from . import jitcache as _jitcache

# Compiled kernels cached before an edit of any module of the package compile again (the
# env layer's kernels compile in the engine's: one digest of both, checked for each folder).
_HERE = _Path(__file__).parent
_SOURCES = _jitcache.package_sources(_HERE, _HERE / "envs")
for _folder in (_HERE, _HERE / "envs"):
    _jitcache.sync(_folder, _SOURCES)

from .cards import EMPTY, N_CARDS  # noqa: E402
from .deals import deal, shuffled_pack  # noqa: E402
from .notation import PositionError, card_text, format_move, format_position, parse_card, parse_move, parse_position  # noqa: E402
from .state import GameState, IllegalMoveError  # noqa: E402
from .variants import PRESETS, Variant, get_variant  # noqa: E402

__all__ = [
    "EMPTY",
    "N_CARDS",
    "PRESETS",
    "GameState",
    "IllegalMoveError",
    "PositionError",
    "Variant",
    "card_text",
    "deal",
    "format_move",
    "format_position",
    "get_variant",
    "parse_card",
    "parse_move",
    "parse_position",
    "shuffled_pack",
]
__version__ = "0.1.0"

# The Gymnasium environment and its ids, when gymnasium is installed (the engine does not need it).
try:
    import gymnasium as _gymnasium  # noqa: F401
except ImportError:  # pragma: no cover
    pass
else:
    from .envs.env import FortyThievesEnv
    from .envs.registration import ENV_IDS, register_envs

    register_envs()
    __all__ += ["ENV_IDS", "FortyThievesEnv", "register_envs"]
