"""A run folder's config.yaml (agents/configs/run_file.py): each trainer's config reads back
checked by its own model (an RLlib run's too, which --resume continues)."""

from __future__ import annotations

import pytest
import yaml

from agents.configs.config_file import dump_config
from agents.configs.run_file import CONFIG_END, check_run_config, write_run_config
from agents.configs.train_config import MaskablePPOConfig, RLlibConfig, TrainConfig
from agents.storage.files import DamagedFileError
from agents.training.runs import read_run_config


def test_a_written_config_reads_back_whole(tmp_path) -> None:
    config = MaskablePPOConfig(n_timesteps=1234, env_kwargs={"redeals": 1})
    write_run_config(tmp_path, "FortyThieves-Relaxed-v0", config)
    assert (tmp_path / "config.yaml").read_text().endswith(CONFIG_END + "\n")
    env, back = read_run_config(tmp_path)
    assert env.env_id == "FortyThieves-Relaxed-v0" and back == config
    assert env.variant.redeals == 1  # the env resolved with the run's options


def test_an_rllib_run_config_is_checked_by_its_own_model(tmp_path) -> None:
    # train_rllib writes its section without the end line: the cut check validates it as RLlib's.
    dump = yaml.safe_dump({"FortyThieves-v0": RLlibConfig(iterations=7).model_dump(mode="json")}, sort_keys=False)
    (tmp_path / "config.yaml").write_text(dump)
    assert check_run_config(tmp_path / "config.yaml")["FortyThieves-v0"]["iterations"] == 7
    env, back = read_run_config(tmp_path)  # what --resume reads: RLlib's model, the flat observation
    assert isinstance(back, RLlibConfig) and back.iterations == 7 and env.observation == "flat"
    (tmp_path / "config.yaml").write_text(dump.rsplit("\n", 3)[0] + "\n")  # its last keys cut off
    with pytest.raises(DamagedFileError, match="cut short"):
        check_run_config(tmp_path / "config.yaml")


def test_dump_config_is_what_load_reads(tmp_path) -> None:
    text = dump_config("FortyThieves-v0", TrainConfig(seed=5))
    assert yaml.safe_load(text)["FortyThieves-v0"]["seed"] == 5
