"""Agents, training, evaluation, benchmarks and the ``forty-thieves`` CLI over :mod:`forty_thieves_env`."""

from pathlib import Path

import forty_thieves_env
from forty_thieves_env import jitcache

# The agents' kernels compile in the engine's rules: an edit of either drops their cache.
_HERE = Path(__file__).parent
jitcache.sync(_HERE, jitcache.package_sources(_HERE, Path(forty_thieves_env.__file__).parent))
