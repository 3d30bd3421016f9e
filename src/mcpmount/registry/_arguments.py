"""A call's arguments, checked before they reach any transport.

A transport that meets a value it cannot encode fails inside its writer, and that
failure would tear down the whole connection and every call in flight on it. So the
arguments are walked once, here, and a value JSON cannot carry is the caller's error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mcpmount.errors import ArgumentsError

__all__ = ["check_arguments"]


def check_arguments(server: str, tool: str, arguments: Mapping[str, Any] | None) -> None:
    """Raise ``ArgumentsError`` if ``arguments`` hold a value JSON over UTF-8 cannot carry.

    Iterative, so a deeply nested argument cannot exhaust the stack.
    """
    if arguments is None:
        return
    stack: list[tuple[str, object]] = [("arguments", arguments)]
    while stack:
        where, value = stack.pop()
        match value:
            case str():
                if not value.isascii() and not _encodable(value):
                    raise ArgumentsError(server, tool, where, _SURROGATE)
            case bool() | int() | None:
                pass
            case float():
                if not math.isfinite(value):
                    raise ArgumentsError(server, tool, where, f"is {value}, {_NOT_FINITE}")
            case Mapping():
                mapping: Mapping[object, object] = value  # pyright: ignore[reportUnknownVariableType]
                for key, item in mapping.items():
                    if not isinstance(key, str):
                        problem = "has a key that is not a string; JSON keys are strings"
                        raise ArgumentsError(server, tool, where, problem)
                    if not key.isascii() and not _encodable(key):
                        raise ArgumentsError(server, tool, f"a key of {where}", _SURROGATE)
                    stack.append((f"{where}.{key}" if where != "arguments" else key, item))
            case list() | tuple():
                items: list[object] = list(value)  # pyright: ignore[reportUnknownArgumentType]
                stack.extend((f"{where}[{i}]", item) for i, item in enumerate(items))
            case _:
                pass  # other types: the SDK's serializer decides (and raises a TypeError)


_SURROGATE = "holds a lone surrogate (e.g. \\ud800), which UTF-8 cannot encode"
_NOT_FINITE = "which JSON cannot carry (use null or a string)"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
