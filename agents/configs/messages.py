"""Config errors in a user's words: pydantic's errors turned into one message per config key.

A pydantic error names a location such as ``("policy_kwargs", "net_arch", "list[int]", 0)``;
:func:`format_errors` turns it into ``policy_kwargs.net_arch: expected a list of integers or a
mapping (got 'x')``, and an unknown key into ``lerning_rate: unknown key; did you mean
learning_rate?``. The models themselves live in :mod:`agents.configs.train_config`.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError


def _split_loc(
    loc: Sequence[str | int], model: type[BaseModel] | None
) -> tuple[list[str | int], list[str | int], str | None]:
    """``(key path, path to the union, union branch tag)`` of a pydantic error location.

    Pydantic puts the member's name (``list[int]``, ``NetArch``, ``float``) into the location
    of an error inside a union; it is not a key of the config.
    """
    path: list[str | int] = []
    union_at: list[str | int] = []
    tag: str | None = None
    for part in loc:
        if isinstance(part, str) and part.startswith("function-"):
            continue
        if model is not None and isinstance(part, str) and part in model.model_fields:
            path.append(part)
            ann = model.model_fields[part].annotation
            model = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else _union_models(ann)
        elif isinstance(part, str) and tag is None and _is_tag(part):
            union_at, tag = list(path), part
            model = MODELS.get(part)
        else:
            path.append(part)
            model = None
    return path, union_at, tag


#: Union members met so far by name (the config module adds its own models at import).
MODELS: dict[str, type[BaseModel]] = {}


def _union_models(ann: Any) -> type[BaseModel] | None:
    """A union annotation's model member (its fields are looked up after the tag)."""
    for arg in getattr(ann, "__args__", ()):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            MODELS[arg.__name__] = arg
    return None


_TAG_NAMES = {"float": "a number", "int": "an integer", "str": "a string", "list[int]": "a list of integers"}


def _is_tag(part: str) -> bool:
    return part in MODELS or part in ("float", "int", "str", "bool", "none") or part.startswith(("list[", "dict["))


def _fits(tag: str, value: Any) -> bool:
    if tag.startswith("list["):
        return isinstance(value, list)
    if tag in MODELS or tag.startswith("dict["):
        return isinstance(value, Mapping)
    if tag in ("float", "int"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if tag == "str":
        return isinstance(value, str)
    return False


def _lookup(data: Any, path: Sequence[str | int]) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _known_keys(path: Sequence[str | int], tag: str | None, top: type[BaseModel]) -> list[str]:
    model: type[BaseModel] | None = MODELS.get(tag) if tag else None
    if model is None:
        model = top
        for part in path:
            if not isinstance(part, str) or part not in model.model_fields:
                return []
            ann = model.model_fields[part].annotation
            if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
                return []
            model = ann
    return list(model.model_fields)


def format_errors(err: ValidationError, where: str, data: Any, model: type[BaseModel]) -> str:
    """One message per key of ``model``: the dotted key, then what is wrong with it."""
    messages: dict[str, str] = {}
    unions: dict[str, tuple[Any, list[str]]] = {}
    for e in err.errors():
        path, union_at, tag = _split_loc(e["loc"], model)
        key = ".".join(str(p) for p in path) or "(config)"
        if tag is not None:
            value = _lookup(data, union_at)
            ukey = ".".join(str(p) for p in union_at)
            unions.setdefault(ukey, (value, []))[1].append(tag)
            if not _fits(tag, value):
                continue
        if e["type"] == "extra_forbidden":
            known = _known_keys(path[:-1] if tag is None else path[len(union_at) : -1], tag, model)
            close = difflib.get_close_matches(str(path[-1]), known, n=1)
            hint = f"; did you mean {close[0]}?" if close else (f"; keys are {', '.join(known)}" if known else "")
            messages.setdefault(key, f"{key}: unknown key{hint}")
        else:
            msg = e["msg"].removeprefix("Value error, ")
            got = f" (got {e['input']!r})" if "input" in e and not isinstance(e["input"], Mapping) else ""
            messages.setdefault(key, f"{key}: {msg}{got}")
    for ukey, (value, tags) in unions.items():
        if not any(k == ukey or k.startswith(ukey + ".") for k in messages):
            names = " or ".join(dict.fromkeys(_TAG_NAMES.get(t, "a mapping" if t in MODELS else t) for t in tags))
            messages[ukey] = f"{ukey}: expected {names} (got {value!r})"
    return f"{where}: " + "; ".join(messages.values())
