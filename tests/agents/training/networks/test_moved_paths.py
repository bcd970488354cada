"""Model zips pickle their network classes by module path: the paths from before the networks moved
into agents.training.networks (and the configs into agents.configs) still load (the shipped models' games are pinned in
tests/agents/players/test_shipped_games.py)."""

from __future__ import annotations

import pickle

import pytest

pytest.importorskip("torch")

from agents.configs import train_config
from agents.training.networks import card_embedding, lookup_scorer, move_scorer


@pytest.mark.parametrize(
    ("old", "name", "module"),
    [
        ("agents.training.lookup_scorer", "LookupScorerPolicy", lookup_scorer),
        ("agents.training.move_scorer", "MoveScorerPolicy", move_scorer),
        ("agents.training.networks", "CardEmbeddingExtractor", card_embedding),
        ("agents.training.config", "LinearSchedule", train_config),  # a run's learning-rate schedule
    ],
)
def test_a_class_pickled_under_its_old_path_loads_as_the_moved_class(old: str, name: str, module: object) -> None:
    pickled = f"c{old}\n{name}\n.".encode()  # protocol 0's GLOBAL: what unpickling a zip's class asks
    assert pickle.loads(pickled) is getattr(module, name)


def test_an_old_path_is_the_moved_module_with_its_own_spec() -> None:
    import agents.training.lookup_scorer as old  # type: ignore[import-not-found]

    assert old is lookup_scorer
    assert old.__spec__ is not None and old.__spec__.name == "agents.training.networks.lookup_scorer"


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import agents.training.networks as networks

    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        networks.Nope  # noqa: B018
