"""MaskablePPO training: configs (:mod:`.config`), the envs (:mod:`.envs`), callbacks
(:mod:`.callbacks`), run folders (:mod:`.runs`), the policy network (:mod:`.networks`), the
trainer and ``forty-thieves train`` (:mod:`.train`), the demo (:mod:`.demo`) and the
notebook runner (:mod:`.notebooks`). torch and stable-baselines3 are imported only here and
in :mod:`agents.players.ppo`."""
