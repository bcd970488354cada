"""The CLI's deal range (1..10**20) and the environments' (1..2**63-1) name each other."""

from __future__ import annotations

import pytest

from agents import cli


def test_the_two_deal_ranges_name_each_other(capsys):
    import gymnasium as gym

    import forty_thieves_env  # noqa: F401 (registers the ids)

    assert cli.main(["deal", str(2**63)]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("variant: classic") and "beyond the environments' range 1..2**63-1" in out.err
    assert cli.main(["deal", "5"]) == 0 and capsys.readouterr().err == ""
    env = gym.make("FortyThieves-v0")
    with pytest.raises(ValueError, match=r"up to 10\*\*20 .* `forty-thieves deal`"):
        env.reset(options={"deal": 2**63})
    with pytest.raises(ValueError, match=r"forty_thieves_env.deal\(\)"):
        gym.make("FortyThieves-v0", deals=[1, 2**63])
