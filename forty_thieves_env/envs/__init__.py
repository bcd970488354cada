"""The Gymnasium layer: environments, the batch engine under them, observations, rewards.

Reading order, bottom-up: :mod:`.options` (the constructor options, checked once),
:mod:`.rewards`, :mod:`.observation` (the one observation encoder), :mod:`.step` (one
game's step and reset kernels), :mod:`.sampling` (random legal actions, deal draws),
:mod:`.batch_kernels` and :mod:`.batch` (N games in one call), then the environments:
:mod:`.env` (one game), :mod:`.vector` (Gymnasium's vector API), :mod:`.sb3`
(stable-baselines3, imported only on request), with :mod:`.render`, :mod:`.registration`,
:mod:`.winnable` and :mod:`.levels` (the rule pages' Easy, Normal and Hard). Only
:mod:`.env`, :mod:`.vector` and :mod:`.sb3` import gymnasium
(:mod:`.observation` imports it lazily, for the spaces).
"""
