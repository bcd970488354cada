"""Demonstration data sets: a teacher's games with what each move was made from.

``forty-thieves dataset collect`` plays a teacher (any registered agent that reads the ``Dict``
observation; the ``sampling_solver`` records its votes) on training deals and writes every
position, its legal moves, the teacher's move and its votes into a folder of chunk files that
each finish whole (:mod:`.collection`, :mod:`.layout`, :mod:`.manifest`); ``dataset info``
summarises one, and :func:`load_dataset` reads it back (:mod:`.dataset`), as flat arrays, as
episodes, or as the imitation's ``Demonstrations``. See docs/datasets.md.
"""

from __future__ import annotations

from .collection import Collected, collect
from .dataset import Dataset, Episode, discounted_returns, load_dataset
from .manifest import Settings, read_manifest

__all__ = [
    "Collected",
    "Dataset",
    "Episode",
    "Settings",
    "collect",
    "discounted_returns",
    "load_dataset",
    "read_manifest",
]
