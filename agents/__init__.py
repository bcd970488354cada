"""Agents, training, evaluation, benchmarks and the ``forty-thieves`` CLI over :mod:`forty_thieves_env`.

Subpackages, bottom-up: :mod:`agents.storage` (files on disk: JSON, CSV, YAML, model zips),
:mod:`agents.hashing` (shared hash helpers), :mod:`agents.search` (the perfect-information solver),
:mod:`agents.sweeps` (deal lists and the worker pools that run one job per deal),
:mod:`agents.players` (the agent protocol and every player), :mod:`agents.evaluation` (games,
statistics, comparisons), :mod:`agents.solving` (solve sweeps, the winnable sets, the winnability
table), :mod:`agents.training` (configs, the policy networks, MaskablePPO and device training, the
demo, the notebook runner), :mod:`agents.bench` (the speed table of ``forty-thieves bench``),
:mod:`agents.play` (a person's game in the terminal, browser replays of any game) and
:mod:`agents.cli` (the ``forty-thieves`` command).
"""

from pathlib import Path

import forty_thieves_env
from forty_thieves_env import jitcache

# The agents' kernels compile in the engine's rules and in each other's helpers across the
# subpackages: an edit of any source file of either package drops every cached kernel here.
_HERE = Path(__file__).parent
jitcache.sync(_HERE, jitcache.package_sources(_HERE, Path(forty_thieves_env.__file__).parent))
