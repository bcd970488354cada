"""Argument checks shared by every layer: one rule per kind of argument, one wording.

Every public entry point of the package checks its arguments with these helpers, so that a
bad value is refused the same way everywhere, before anything changes, with a message that
names the argument, the value given and what is accepted::

    redeals must be an integer 0..100, got 1.5 (float)

The rules:

* an **integer** is a Python ``int`` or a numpy integer (``np.int64(3)``), never a ``bool``
  (``True`` is an ``int`` to Python, but passing it where a number is meant is a mistake)
  nor a float, even a whole one (``12.0``): nothing is truncated or rounded;
* a **flag** is ``True`` or ``False`` (or a numpy bool), never a truthy value such as
  ``"no"`` or ``1``;
* a **choice** is one of a fixed tuple of strings;
* **text** is a ``str`` (not ``bytes``, not ``None``).

A wrong type raises ``TypeError``; a value of the right type outside its range raises
``ValueError``. Both are checked before anything is changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _shown(value: Any) -> str:
    """``value`` as a message shows it: its repr (shortened) and, unless obvious, its type."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    if type(value) in (int, str):
        return text
    return f"{text} ({type(value).__name__})"


def is_integer(value: Any) -> bool:
    """Whether ``value`` is an integer in the sense of this module (``int`` or numpy integer, no bool)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_int(value: Any, name: str, low: int | None = None, high: int | None = None) -> int:
    """``value`` as a Python ``int``, checked to be an integer in ``low..high`` (either end open if ``None``).

    Args:
        value: What the caller gave.
        name: The argument's name, as the message shows it.
        low: Smallest accepted value, or ``None``.
        high: Largest accepted value, or ``None``.

    Raises:
        TypeError: not an integer (a bool or a float included).
        ValueError: outside ``low..high``.
    """
    if low is None and high is None:
        accepted = "an integer"
    elif high is None:
        accepted = f"an integer >= {low}"
    elif low is None:
        accepted = f"an integer <= {high}"
    else:
        accepted = f"an integer {low}..{high}"
    if not is_integer(value):
        raise TypeError(f"{name} must be {accepted}, got {_shown(value)}")
    number = int(value)
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValueError(f"{name} must be {accepted}, got {_shown(value)}")
    return number


def check_flag(value: Any, name: str) -> bool:
    """``value`` as a ``bool``, checked to be ``True`` or ``False`` (a numpy bool too).

    Raises:
        TypeError: anything else (``"no"``, ``1``, ``None``).
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {_shown(value)}")
    return bool(value)


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """``value`` (a ``str``), checked to be one of ``choices``.

    Raises:
        TypeError: not a string.
        ValueError: a string that is not one of ``choices``.
    """
    accepted = ", ".join(repr(c) for c in choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {accepted}, got {_shown(value)}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {accepted}, got {value!r}")
    return str(value)


def check_text(value: Any, name: str) -> str:
    """``value``, checked to be text (``str``).

    Raises:
        TypeError: not a ``str`` (``bytes`` and ``None`` included).
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be text (str), got {_shown(value)}")
    return value


def check_action(value: Any, name: str = "action") -> int:
    """An action number as a Python ``int``: a Python or numpy integer, or a 0-d integer array
    (what a policy's ``predict`` returns for one observation); never a float or a bool.

    The value is not range-checked here: each caller refuses an integer outside its action space.

    Raises:
        TypeError: not an integer (``12.5``, ``12.0``, ``True``, ``"3"``, a 1-element list).
    """
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        return int(value)
    if not is_integer(value):
        raise TypeError(f"{name} must be an integer action number, got {_shown(value)}")
    return int(value)


def check_actions(values: Any, n: int, name: str = "actions") -> np.ndarray:
    """A batch's actions as an ``(n,) int64`` array, one integer per game (the given array
    itself when it already is one: callers copy it into their own).

    Integers beyond ``int64`` become ``-1``, an action outside every action space, which the
    environments refuse as they refuse any other.

    Raises:
        TypeError: not integers (a float or bool array, or a list holding a float).
        ValueError: not exactly ``n`` of them (a scalar is not broadcast to every game).
    """
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        arr = values
    else:
        if not isinstance(values, np.ndarray) and not hasattr(values, "__len__"):
            raise ValueError(f"{name} must be a sequence of {n} integer actions (one per game), got {_shown(values)}")
        items = values.tolist() if isinstance(values, np.ndarray) and values.dtype == object else values
        if isinstance(values, np.ndarray) and values.dtype != object:
            raise TypeError(f"{name} must be integer action numbers, got an array of dtype {values.dtype}")
        if isinstance(items, (str, bytes)):
            raise TypeError(f"{name} must be a sequence of {n} integer actions, got {_shown(values)}")
        out = []
        for k, v in enumerate(items):
            a = check_action(v, f"{name}[{k}]")
            out.append(a if -(2**63) <= a < 2**63 else -1)
        arr = np.array(out, dtype=np.int64)
    if arr.shape != (n,):
        raise ValueError(f"{name} must be {n} integer actions (one per game), got shape {arr.shape}")
    if arr.dtype == np.uint64:
        return np.where(arr > np.iinfo(np.int64).max, -1, arr).astype(np.int64)
    return arr if arr.dtype == np.int64 else arr.astype(np.int64)
