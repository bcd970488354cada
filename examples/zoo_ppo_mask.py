"""rl-baselines3-zoo's ``train.py`` with MaskablePPO registered as ``--algo ppo_mask``.

    python examples/zoo_ppo_mask.py --algo ppo_mask --env FortyThieves-Relaxed-v0 \\
      --gym-packages forty_thieves_env --conf-file examples/zoo_hyperparams.yml -f logs --seed 1

rl_zoo3 2.9.2 lists no maskable algorithm; sb3-contrib's MaskablePPO finds the env's
``action_masks()`` by itself (through the zoo's wrappers and its DummyVecEnv), so registering it
is all it takes. Every other flag is the zoo's (``python -m rl_zoo3.train --help``).
"""

from rl_zoo3.utils import ALGOS
from sb3_contrib import MaskablePPO

ALGOS["ppo_mask"] = MaskablePPO

from rl_zoo3.train import train  # noqa: E402  (reads ALGOS when it builds its argument parser)

if __name__ == "__main__":
    train()
