"""A trained maskable policy as a player reads and plays it: its inputs, its logits, its moves.

The one place for what every caller of a MaskablePPO policy (an SB3 maskable actor-critic
``nn.Module``) does with it:

* **What it reads** (:func:`actor_fields`, :data:`FLAT_FIELDS`, :func:`input_fields`,
  :func:`policy_input`): a ``Dict`` policy reads its observation space's fields, or only a
  player's when its extractor says its logits read fewer (an asymmetric critic: the
  ``lookup_scorer`` with ``critic_stock``); a flat policy reads a player's fields
  concatenated in :data:`FLAT_FIELDS` order (the ``flat`` observation).
* **Its raw logits** (:func:`policy_logits`) for one observation or a batch, without masking
  or normalisation; and its logits with its values (:func:`policy_forward`,
  :class:`PolicyInputs`, the encoded inputs of :func:`encoder_of`) for a trainer.
* **Masking** (:data:`MASKED_LOGIT`, :func:`masked_logits`, :func:`masked_log_probs`,
  :func:`masked_entropy`): the masked distribution sb3-contrib's MaskablePPO computes, in torch.
* **Moves.** Greedy (:func:`greedy_actions`): the most likely legal action, the lowest index on
  a tie. Sampled, two ways: :func:`sample_actions`, the inverse-CDF draw with a
  ``torch.Generator`` that the trainer makes on the games' device; and the per-game draw with
  a ``numpy`` generator, temperature included: :func:`sample_move` (one game: the ``ppo``
  agent's ``rng.choice``) and :func:`sampled_actions` (a batch, one generator a row), which
  computes for each row exactly what :func:`sample_move` computes, so a batched game is the
  per-game agent's game move for move.

Who calls it: the per-game ``ppo`` agent (:mod:`agents.players.ppo`), the batched policy
evaluation (:mod:`agents.evaluation.policy_eval`, for ``evaluate --agent ppo`` and a training
run's evaluations), the ``TorchPPO`` trainer (:mod:`agents.training.torch_ppo`) and the
training distribution (:mod:`agents.training.networks.masked_distribution`).

Its only dependencies are torch and stable-baselines3 (and the env layer): it sits below the
trainers, the evaluation and the configs that use it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.preprocessing import preprocess_obs

from forty_thieves_env.envs.observation import O_NAMES, O_STOCK

#: The logit of a masked-out action (sb3-contrib's): its probability is exactly 0, and
#: ``p * log p`` stays 0 where ``-inf`` would give NaN.
MASKED_LOGIT = -1e8

#: A player's fields, in the order a flat observation concatenates them.
FLAT_FIELDS: tuple[str, ...] = tuple(O_NAMES[:O_STOCK])


# ----- what a policy reads -----------------------------------------------------------------
def reads_flat(policy: Any) -> bool:
    """Whether ``policy`` (or a model: anything with an ``observation_space``) reads flat rows, not a ``Dict``."""
    return not hasattr(policy.observation_space, "spaces")


def actor_fields(policy: Any) -> tuple[str, ...] | None:
    """The fields a policy's logits read when they are fewer than its observation space holds, else None.

    A features extractor may say which fields its logits read (``actor_fields``: the
    ``lookup_scorer``'s are a player's); a policy trained on the ``oracle`` observation with
    such an extractor reads the hidden cards only in its value, and plays from these fields.

    Args:
        policy: An SB3 policy, or a model (its ``policy`` is read).
    """
    policy = getattr(policy, "policy", policy)
    fields = getattr(getattr(policy, "features_extractor", None), "actor_fields", None)
    space = policy.observation_space
    if fields is None or not hasattr(space, "spaces") or set(space.spaces) <= set(fields):
        return None
    return tuple(fields)


def input_fields(policy: Any) -> tuple[str, ...]:
    """The observation fields a policy's logits read, in the order it reads them.

    A flat policy's are :data:`FLAT_FIELDS` (concatenated); a ``Dict`` policy's are
    :func:`actor_fields`, else every field of its observation space.
    """
    policy = getattr(policy, "policy", policy)
    if reads_flat(policy):
        return FLAT_FIELDS
    return actor_fields(policy) or tuple(policy.observation_space.spaces)


def policy_input(policy: Any, obs: Any, rows: Any = None) -> Any:
    """What a policy's logits read of a batch of observations (rows ``rows`` only, when given).

    Args:
        policy: An SB3 policy.
        obs: A dict of field arrays or tensors (``(B, ...)``: a vector env's or
            :class:`~forty_thieves_env.envs.torch_games.TorchGames`' ``dict``/``oracle``
            observation), or flat rows ``(B, F)`` (the ``flat`` observation).
        rows: Indices of the rows to take (an index array or tensor), or None for all.

    Returns:
        For a ``Dict`` policy, a dict of the fields it reads; for a flat policy, ``(B, F)``
        rows (a dict observation's player fields concatenated in :data:`FLAT_FIELDS` order,
        which is the ``flat`` observation's layout). Arrays stay arrays, tensors tensors.

    Raises:
        ValueError: the observation lacks a field the policy reads (a policy of the
            ``oracle`` observation given a player's), or is flat where the policy reads fields.
    """

    def take(x: Any) -> Any:
        return x if rows is None else x[rows]

    fields = input_fields(policy)
    if not isinstance(obs, dict):
        if not reads_flat(policy):
            raise ValueError(f"the policy reads the fields {list(fields)}, not flat observation rows")
        return take(obs)
    missing = [k for k in fields if k not in obs]
    if missing:
        raise ValueError(
            f"the policy reads the field(s) {missing} that this observation lacks (it has {sorted(obs)}): "
            "a policy of the 'oracle' observation needs the hidden cards"
        )
    if reads_flat(policy):
        parts = [take(obs[k]) for k in fields]
        if isinstance(parts[0], torch.Tensor):
            return torch.cat([p.reshape(p.shape[0], -1) for p in parts], dim=1)
        return np.concatenate([p.reshape(p.shape[0], -1) for p in parts], axis=1)
    return {k: take(obs[k]) for k in fields}


# ----- logits ------------------------------------------------------------------------------
def policy_logits(policy: Any, obs: Any) -> torch.Tensor:
    """``(B, n) float32``: a maskable policy's raw action logits, on the policy's device, no gradient.

    The actor's layers only (observation preprocessing, the actor's features extractor,
    ``mlp_extractor.forward_actor``, ``action_net``), without masking or normalisation (which
    could round two logits into a tie).

    Args:
        policy: An SB3 maskable actor-critic policy.
        obs: The policy's input (:func:`policy_input`): numpy arrays (one observation, or a
            batch; SB3's ``obs_to_tensor`` adds the batch axis) or tensors of a batch (moved
            to the policy's device).
    """
    with torch.no_grad():
        if isinstance(obs, torch.Tensor):
            obs_t: Any = obs.to(policy.device)
        elif isinstance(obs, dict) and obs and all(isinstance(v, torch.Tensor) for v in obs.values()):
            obs_t = {k: v.to(policy.device) for k, v in obs.items()}
        else:
            obs_t, _ = policy.obs_to_tensor(obs)
        features = policy.pi_features_extractor(
            preprocess_obs(obs_t, policy.observation_space, normalize_images=policy.normalize_images)
        )
        return policy.action_net(policy.mlp_extractor.forward_actor(features))


def encoder_of(policy: Any) -> Callable[[Any], Any] | None:
    """The features extractor's ``encode`` when the policy can be fed encoded inputs, else None.

    A network with ``encode(obs)`` and ``forward_encoded(inputs)`` (the ``lookup_scorer``)
    turns observations into integer inputs that carry no gradient; a rollout that keeps those
    encodes each sample once instead of at every pass of the update.
    """
    fx = getattr(policy, "features_extractor", None)
    if policy.share_features_extractor and hasattr(fx, "encode") and hasattr(fx, "forward_encoded"):
        return fx.encode
    return None


def policy_forward(policy: Any, obs: Any, encoded: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """``(logits (B, n), values (B,))`` of an SB3 actor-critic policy for a batch of observations
    (or, with ``encoded``, of its extractor's :func:`encoder_of` inputs).

    The policy's own layers in the order its ``evaluate_actions`` runs them (observation
    preprocessing, features extractor(s), ``mlp_extractor``, ``action_net``, ``value_net``),
    without its distribution objects. Gradients flow (the trainer's update calls it).
    """
    if encoded:
        latent_pi, latent_vf = policy.mlp_extractor(policy.features_extractor.forward_encoded(obs))
        return policy.action_net(latent_pi), policy.value_net(latent_vf).squeeze(-1)
    features = policy.extract_features(obs)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        pi_features, vf_features = features
        latent_pi = policy.mlp_extractor.forward_actor(pi_features)
        latent_vf = policy.mlp_extractor.forward_critic(vf_features)
    return policy.action_net(latent_pi), policy.value_net(latent_vf).squeeze(-1)


class PolicyInputs:
    """What a policy reads of a batch of the games' observations, and its outputs for them.

    The fields of its observation space (an asymmetric critic's policy reads the oracle's,
    its logits a player's), encoded by its extractor when it has an ``encode``
    (:func:`encoder_of`): the form a ``TorchPPO`` rollout stores and the update reads again.
    """

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        keys = getattr(policy.observation_space, "spaces", None)
        self.obs_keys = tuple(keys) if keys is not None else None
        self.encoder = encoder_of(policy)

    def __call__(self, obs: Any) -> Any:
        """The policy's input for ``obs`` (a dict of field tensors, or flat rows)."""
        if self.obs_keys is not None:
            obs = {k: obs[k] for k in self.obs_keys}
        return self.encoder(obs) if self.encoder is not None else obs

    def forward(self, inputs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits, values)`` for inputs made by this object."""
        return policy_forward(self.policy, inputs, encoded=self.encoder is not None)

    @torch.no_grad()
    def logits(self, obs: Any) -> torch.Tensor:
        """``(B, n)`` action logits for a batch of observations."""
        return self.forward(self(obs))[0]


# ----- the masked distribution ---------------------------------------------------------------
def masked_logits(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """``logits`` with the illegal actions' (``~masks``) set to :data:`MASKED_LOGIT`, as sb3-contrib masks them."""
    return logits.masked_fill(~masks, MASKED_LOGIT)


def masked_log_probs(logits: torch.Tensor, masks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(log_probs, probs)``, both ``(B, n)``, of the policy restricted to the legal actions.

    Illegal logits are set to :data:`MASKED_LOGIT`, as sb3-contrib does. The probabilities come
    from ``softmax``, not from ``exp(log_probs)``: ``exp`` of a masked action's log-probability
    (about ``-1e8``) takes torch's slow path for results that underflow, 15 times the time of a
    normal ``exp`` on the CPU (5.6 ms against 0.4 ms for ``softmax`` over 8,192 x 112), where
    ``softmax`` gives the same exact zeros at full speed.
    """
    masked = masked_logits(logits, masks)
    return torch.log_softmax(masked, dim=-1), torch.softmax(masked, dim=-1)


def masked_entropy(log_probs: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
    """``(B,)`` entropy of a distribution from :func:`masked_log_probs`.

    A masked action's probability is exactly 0 and its log-probability finite (about ``-1e8``),
    so its term ``p * log p`` is exactly 0: no mask is needed (sb3-contrib applies one; the
    sums are equal, a test holds them to it).
    """
    return -(probs * log_probs).sum(-1)


# ----- moves ---------------------------------------------------------------------------------
def greedy_actions(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """``(B,) int64``: each row's most likely legal action, the lowest index on a tie.

    From the raw logits with the illegal ones at ``-inf`` (not normalised: a ``log_softmax``
    can round two different logits into a tie). On any device; ``masks`` is moved to the
    logits' device.
    """
    legal = masks.to(device=logits.device, dtype=torch.bool)
    masked = logits.masked_fill(~legal, float("-inf"))
    return masked.argmax(dim=1)


def sample_actions(probs: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """``(B,)`` actions drawn from ``probs`` by inverse CDF (never one of probability 0).

    A cumulative sum and a binary search: on the CPU tens of times faster than
    ``torch.multinomial`` over the same rows. What the trainer draws, on the games' device.
    """
    cdf = probs.cumsum(-1)  # (B, n)
    u = torch.rand((cdf.shape[0], 1), generator=generator, device=cdf.device, dtype=cdf.dtype) * cdf[:, -1:]
    # right=True: the first action whose cumulative probability exceeds u (never a masked one).
    return torch.searchsorted(cdf, u, right=True).squeeze(-1).clamp_(max=cdf.shape[1] - 1)


def legal_probabilities(legal_logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """float64 ``softmax(logits / temperature)`` over the last axis: the per-game draw's arithmetic.

    The logits are made float64, divided by ``temperature`` (unless it is 1), less their
    maximum, exponentiated and divided by their sum. A row of a ``(k, L)`` array gets exactly
    what the same ``(L,)`` array gets alone (numpy sums each row of a C-contiguous array as it
    sums a vector; a test holds it to that).

    Args:
        legal_logits: ``(L,)`` or ``(k, L)``: the legal actions' logits only.
        temperature: Positive; below 1 the likely moves more often.
    """
    lg = np.asarray(legal_logits).astype(np.float64)
    if temperature != 1.0:
        lg = lg / temperature
    p = np.exp(lg - lg.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


def sample_move(logits: np.ndarray, legal: np.ndarray, rng: np.random.Generator, temperature: float = 1.0) -> int:
    """One game's sampled move: ``rng.choice(legal, p=...)`` over its legal actions (the ``ppo`` agent's draw).

    Args:
        logits: ``(n,)`` the policy's raw logits.
        legal: The legal action numbers, ascending.
        rng: The game's generator (one ``rng.random()`` is drawn).
        temperature: See :func:`legal_probabilities`.
    """
    return int(rng.choice(legal, p=legal_probabilities(np.asarray(logits)[legal], temperature)))


def sampled_actions(
    logits: np.ndarray, masks: np.ndarray, rngs: Sequence[np.random.Generator], temperature: float = 1.0
) -> np.ndarray:
    """``(B,) int64``: one move a row, row ``i`` drawn with ``rngs[i]`` as :func:`sample_move` draws it.

    numpy's ``rng.choice(legal, p=p)`` draws one ``rng.random()`` ``u`` and returns the first
    legal action whose cumulative probability (``cumsum(p)`` divided by its last value) exceeds
    ``u``. Here the rows with the same number of legal actions are gathered into one array of
    their legal logits and go through :func:`legal_probabilities`, the cumulative sum and the
    comparison together: each row's sums are the ones its vector alone would get, so every row
    is its game's :func:`sample_move` exactly (tests hold them to it), not only up to rounding.

    Args:
        logits: ``(B, n)`` raw logits (float32 or float64).
        masks: ``(B, n)`` bool; every row has a legal action.
        rngs: One generator per row (each draws one number).
        temperature: See :func:`legal_probabilities`.
    """
    logits = np.asarray(logits)
    masks = np.asarray(masks, dtype=bool)
    if len(rngs) != len(logits):
        raise ValueError(f"{len(logits)} rows but {len(rngs)} generators")
    u = np.array([rng.random() for rng in rngs], dtype=np.float64)
    counts = masks.sum(axis=1)
    if (counts == 0).any():
        raise ValueError(f"row {int(np.flatnonzero(counts == 0)[0])} has no legal action")
    # The rows in order of their number of legal actions; each row's legal actions, ascending,
    # one after another: the rows with L legal actions are one (k, L) block of these.
    order = np.argsort(counts, kind="stable")
    at, legal = np.nonzero(masks[order])
    values = logits[order[at], legal]
    out = np.empty(len(logits), dtype=np.int64)
    sizes, firsts, ks = np.unique(counts[order], return_index=True, return_counts=True)
    start = 0
    for size, first, k in zip(sizes.tolist(), firsts.tolist(), ks.tolist(), strict=True):
        rows = order[first : first + k]
        block = slice(start, start + k * size)
        start += k * size
        p = legal_probabilities(values[block].reshape(k, size), temperature)
        cdf = np.cumsum(p, axis=1)
        cdf /= cdf[:, -1:]
        index = (cdf <= u[rows, None]).sum(axis=1)  # numpy's searchsorted(u, side="right")
        out[rows] = legal[block].reshape(k, size)[np.arange(k), index]
    return out
