"""What a config file needs of its environment: `needed_variables`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import cast

from mcpmount.configfile._expand import is_plain, references
from mcpmount.configfile._read import read_config

__all__ = ["needed_variables"]


def needed_variables(path: str | os.PathLike[str]) -> dict[str, bool]:
    """Return the environment variables a config file refers to, in file order.

    Each maps to whether every reference to it gives a default (``${VAR:-default}``), so
    the config loads without it. Variables known to hold no secret and set in every
    session (``HOME``, ``PATH``, ``USER``, ...) are left out. A host file's
    ``${input:id}`` needs ``MCPMOUNT_INPUT_<ID>``. Nothing is expanded or validated.

    Raises:
        ConfigError: If the file is missing or is not TOML or JSON.
    """
    document, is_json = read_config(path, [])
    needed: dict[str, bool] = {}
    for text in _strings(document):
        for name, has_default in references(text, host_file=is_json):
            if not is_plain(name):
                needed[name] = needed.get(name, True) and has_default
    return needed


def _strings(node: object) -> Iterator[str]:
    """Yield every string value under ``node``, depth first."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in cast("dict[str, object]", node).values():
            yield from _strings(value)
    elif isinstance(node, list):
        for item in cast("list[object]", node):
            yield from _strings(item)
