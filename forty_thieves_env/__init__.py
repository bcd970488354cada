"""forty-thieves-env: Forty Thieves (Napoleon at St Helena) and its family for RL research.

Layers, bottom-up: :mod:`.engine` (arrays and numba kernels; neither gymnasium nor torch),
:mod:`.text` (text formats and the :class:`GameState` façade), :mod:`.envs` (Gymnasium and
framework glue). The names below are the public API.
"""

from pathlib import Path as _Path

from . import jitcache as _jitcache

# Compiled kernels cached before an edit of any module of the package compile again: the env
# layer's kernels compile in the engine's, so one digest of every source serves every folder.
_HERE = _Path(__file__).parent
_jitcache.sync(_HERE, _jitcache.package_sources(_HERE))

from .engine.cards import EMPTY, N_CARDS  # noqa: E402
from .engine.deals import shuffled_pack  # noqa: E402
from .engine.variants import PRESETS, Variant, get_variant  # noqa: E402
from .text.errors import ActionSpaceError, IllegalMoveError, PositionError  # noqa: E402
from .text.game import GameState, deal, parse_position  # noqa: E402
from .text.notation import card_text, format_move, parse_card, parse_move  # noqa: E402
from .text.position import format_position  # noqa: E402

__all__ = [
    "EMPTY",
    "N_CARDS",
    "PRESETS",
    "ActionSpaceError",
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
