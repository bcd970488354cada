"""Model zips pickle their network classes by module path. The paths from before the networks moved
into agents.training.networks (and the configs into agents.configs) are answered by the model
loaders (agents.storage.modelfile), not by the import system: a zip that names an old path loads as
the moved class, and the old paths themselves are not importable. (The shipped models' games are
pinned in tests/agents/players/test_shipped_games.py: classic and relaxed name old paths.)"""

from __future__ import annotations

import base64
import importlib
import io
import json
import pickle
import warnings
import zipfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

import torch
from tiny_policy import rewrite_data, run_spaces, same_state, tiny_config

from agents.configs import train_config
from agents.players.shipped import MODELS_DIR
from agents.storage.modelfile import MOVED_MODULES, load_model, moved, open_model, read_data, unpickle
from agents.storage.policyfile import load_policy
from agents.training.networks import card_embedding, lookup_scorer, move_scorer
from agents.training.networks.policies import build_policy, save_policy

#: (old module, name, module now) of every path a model zip may still name.
OLD_PATHS = [
    ("agents.training.lookup_scorer", "LookupScorerPolicy", lookup_scorer),
    ("agents.training.move_scorer", "MoveScorerPolicy", move_scorer),
    ("agents.training.networks", "CardEmbeddingExtractor", card_embedding),
    ("agents.training.config", "LinearSchedule", train_config),  # a run's learning-rate schedule
]


@pytest.mark.parametrize(("old", "name", "module"), OLD_PATHS)
def test_a_class_pickled_under_its_old_path_unpickles_as_the_moved_class(old: str, name: str, module: Any) -> None:
    pickled = f"c{old}\n{name}\n.".encode()  # protocol 0's GLOBAL: what unpickling a zip's class asks
    assert unpickle(pickled) == (getattr(module, name), True)
    assert moved(old, name) == (module.__name__, name)
    with pytest.raises((ImportError, AttributeError)):
        pickle.loads(pickled)  # nothing else answers it


def test_a_class_at_its_own_path_is_not_moved() -> None:
    assert unpickle(pickle.dumps(lookup_scorer.LookupScorerPolicy)) == (lookup_scorer.LookupScorerPolicy, False)
    assert moved("agents.training.networks", "Other") == ("agents.training.networks", "Other")


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_an_old_module_path_is_not_importable(old: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_the_networks_package_has_no_extractor_of_its_own() -> None:
    import agents.training.networks as networks

    assert not hasattr(networks, "CardEmbeddingExtractor")
    with pytest.raises(ImportError):
        from agents.training.networks import CardEmbeddingExtractor  # noqa: F401


def old_pickle(obj: Any, new: str, old: str) -> str:
    """``obj`` pickled (protocol 0: globals as text lines) with the global ``new`` (``module\\nname``)
    named ``old`` instead, base64 as in a zip's ``data``."""
    blob = pickle.dumps(obj, protocol=0)
    assert f"c{new}\n".encode() in blob, f"{obj!r} does not pickle {new!r}"
    return base64.b64encode(blob.replace(f"c{new}\n".encode(), f"c{old}\n".encode())).decode()


def with_old_paths(source: Path, dest: Path, keys: tuple[str, ...], new: str, old: str) -> Path:
    """A copy of the model zip ``source`` whose ``data`` entries ``keys`` name ``old`` where they named ``new``."""
    data = read_data(source)
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(dest, "w") as zout:
        for entry in zin.namelist():
            content = zin.read(entry)
            if entry == "data":
                doc = json.loads(content)
                for key in keys:
                    doc[key][":serialized:"] = old_pickle(data[key], new, old)
                content = json.dumps(doc).encode()
            zout.writestr(entry, content)
    return dest


#: (network, learning rate, the data entries rewritten, the path now, the old path)
ZIPS = [
    ("lookup_scorer", 3e-4, ("policy_class",), "agents.training.networks.lookup_scorer\nLookupScorerPolicy",
     "agents.training.lookup_scorer\nLookupScorerPolicy"),
    ("move_scorer", 3e-4, ("policy_class",), "agents.training.networks.move_scorer\nMoveScorerPolicy",
     "agents.training.move_scorer\nMoveScorerPolicy"),
    ("card_embedding", 3e-4, ("policy_kwargs",), "agents.training.networks.card_embedding\nCardEmbeddingExtractor",
     "agents.training.networks\nCardEmbeddingExtractor"),
    ("lookup_scorer", "lin_1e-3", ("learning_rate", "lr_schedule"), "agents.configs.train_config\nLinearSchedule",
     "agents.training.config\nLinearSchedule"),
]  # fmt: skip


@pytest.mark.parametrize(("network", "lr", "keys", "new", "old"), ZIPS, ids=lambda v: str(v).split("\n")[-1])
def test_a_zip_naming_an_old_path_loads_as_the_moved_class(
    network: str, lr: Any, keys: tuple[str, ...], new: str, old: str, tmp_path: Path
) -> None:
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    config = tiny_config(network, learning_rate=lr)
    variant, obs_space, action_space = run_spaces("FortyThieves-v0")
    policy = build_policy(config, obs_space, action_space, seed=1, variant=variant)
    saved = save_policy(tmp_path / "now.zip", policy, config, num_timesteps=64, variant=variant)
    zip_path = with_old_paths(saved, tmp_path / "old.zip", keys, new, old)
    with zipfile.ZipFile(zip_path) as archive:
        doc = json.loads(archive.read("data"))
    for key in keys:  # the rewritten entries name the old path, and only it
        blob = base64.b64decode(doc[key][":serialized:"])
        assert old.encode() in blob and new.encode() not in blob

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3 warns about an entry it cannot unpickle (the extractor)
        with pytest.raises(Exception):  # noqa: B017  (SB3 alone: an import error, or a network that does not fit)
            MaskablePPO.load(zip_path, device="cpu")

    module, name = moved(*old.split("\n"))
    cls = getattr(importlib.import_module(module), name)
    data = read_data(zip_path)
    model = load_model(zip_path, device="cpu")
    stored = load_policy(zip_path)
    for loaded in (model.policy, stored.policy):
        assert type(loaded) is type(policy)
        assert same_state(loaded.state_dict(), policy.state_dict())
    if keys == ("policy_class",):
        assert data["policy_class"] is cls is type(model.policy)
    elif keys == ("policy_kwargs",):
        assert data["policy_kwargs"]["features_extractor_class"] is cls
        assert isinstance(model.policy.features_extractor, cls) and isinstance(stored.policy.features_extractor, cls)
    else:
        assert isinstance(data["learning_rate"], cls) and isinstance(model.learning_rate, cls)
        assert model.lr_schedule(0.5) == pytest.approx(5e-4)
        assert stored.policy.optimizer.param_groups[0]["lr"] == pytest.approx(1e-3)
    again = open_model(io.BytesIO(zip_path.read_bytes()), device="cpu")  # a zip's bytes (what shipping loads)
    assert type(again.policy) is type(policy)


@pytest.mark.parametrize(
    ("name", "old"), [("classic", "agents.training.lookup_scorer"), ("relaxed", "agents.training.move_scorer")]
)
def test_the_shipped_models_that_name_old_paths_load_through_the_loader_alone(name: str, old: str) -> None:
    """classic and relaxed were shipped before the networks moved; only the loader's answer loads them."""
    from sb3_contrib import MaskablePPO

    path = MODELS_DIR / f"{name}.zip"
    with zipfile.ZipFile(path) as archive:
        blob = base64.b64decode(json.loads(archive.read("data"))["policy_class"][":serialized:"])
    assert old.encode() in blob
    with pytest.raises(ModuleNotFoundError, match=old):
        MaskablePPO.load(path, device="cpu")
    assert type(load_model(path, device="cpu").policy).__module__ == MOVED_MODULES[old]


def test_an_entry_that_does_not_unpickle_is_left_out_with_a_warning(tmp_path: Path) -> None:
    """As SB3's own reader: a name that is nowhere (an AttributeError) costs that entry, with a warning."""
    config = tiny_config("lookup_scorer")
    variant, obs_space, action_space = run_spaces("FortyThieves-v0")
    policy = build_policy(config, obs_space, action_space, seed=1, variant=variant)
    saved = save_policy(tmp_path / "now.zip", policy, config, num_timesteps=0, variant=variant)
    nowhere = base64.b64encode(b"cagents.training.networks\nNope\n.").decode()
    edit = lambda doc: doc["clip_range"].update({":serialized:": nowhere})  # noqa: E731
    broken = rewrite_data(saved, tmp_path / "broken.zip", edit)
    with pytest.warns(UserWarning, match="could not unpickle the model's 'clip_range'"):
        data = read_data(broken)
    assert "clip_range" not in data and data["policy_class"] is lookup_scorer.LookupScorerPolicy
    with pytest.warns(UserWarning, match="clip_range"):
        assert load_policy(broken).num_timesteps == 0
