"""Public tool names: ``<namespace>__<tool>``, always valid for model APIs.

Pure and deterministic. A tool's public name is a function of (namespace, raw name,
max length) alone, so it never changes when other tools come and go or with mount order.
Names are never parsed back: the registry routes calls through its name table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import xxhash

__all__ = [
    "MAX_NAMESPACE_LENGTH",
    "MIN_NAME_LENGTH",
    "NAMESPACE_PATTERN",
    "SEPARATOR",
    "assign",
    "namespace_problem",
    "public_name",
]

SEPARATOR = "__"
"""Joins namespace and tool. It cannot occur inside a namespace, so namespaces never clash."""

MAX_NAMESPACE_LENGTH = 32

NAMESPACE_PATTERN = re.compile(r"^[a-z](?:[a-z0-9-]|_(?![_]|$))*$")
"""Lowercase ASCII letters, digits, ``-`` and single ``_``, starting with a letter and not
ending in ``_``: with ``a_`` allowed, ``a_`` + ``__`` + ``b`` would equal ``a`` + ``__`` +
``_b``, and two namespaces could produce the same name."""

_SUFFIX_DIGITS = 8
_SUFFIX_LENGTH = 1 + _SUFFIX_DIGITS  # "_" + 8 hex digits

MIN_NAME_LENGTH = MAX_NAMESPACE_LENGTH + len(SEPARATOR) + 1 + _SUFFIX_LENGTH
"""The smallest ``max_name_length`` that fits the longest namespace, one character and a suffix."""

_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def namespace_problem(namespace: str) -> str | None:
    """Return why ``namespace`` is not a valid namespace, or None if it is."""
    if not namespace:
        return "a namespace cannot be empty"
    if len(namespace) > MAX_NAMESPACE_LENGTH:
        return f"a namespace has at most {MAX_NAMESPACE_LENGTH} characters (got {len(namespace)})"
    if SEPARATOR in namespace:
        return f"a namespace cannot contain {SEPARATOR!r}, the separator of public names"
    if not NAMESPACE_PATTERN.match(namespace):
        return (
            "a namespace is lowercase ASCII letters, digits, '-' and single '_', "
            "starting with a letter and not ending in '_'"
        )
    return None


def _suffix(namespace: str, raw_name: str) -> str:
    # surrogatepass: raw names are untrusted and may hold lone surrogates; hashing must not fail.
    key = f"{namespace}\0{raw_name}".encode("utf-8", "surrogatepass")
    return "_" + xxhash.xxh3_64_hexdigest(key)[:_SUFFIX_DIGITS]


def public_name(namespace: str, raw_name: str, max_length: int = 64) -> str:
    """Return the public name of tool ``raw_name`` of server ``namespace``.

    Characters outside ``[A-Za-z0-9_-]`` become ``_``, and a name longer than
    ``max_length`` is shortened. Whenever either changed the raw name, ``_`` and 8 hex
    digits of ``xxh3_64(namespace + "\\0" + raw_name)`` are appended (within
    ``max_length``), so raw names that sanitize alike still get distinct names.

    Args:
        namespace: A valid namespace (see `namespace_problem`).
        raw_name: The tool's name as the server sent it; any string.
        max_length: The longest name allowed, at least `MIN_NAME_LENGTH`.

    Raises:
        ValueError: If the namespace is invalid or ``max_length`` too small.
    """
    if (problem := namespace_problem(namespace)) is not None:
        raise ValueError(f"invalid namespace {namespace!r}: {problem}")
    if max_length < MIN_NAME_LENGTH:
        raise ValueError(f"max_length must be at least {MIN_NAME_LENGTH}, got {max_length}")
    sanitized = _INVALID.sub("_", raw_name)
    name = f"{namespace}{SEPARATOR}{sanitized}"
    if sanitized == raw_name and raw_name and len(name) <= max_length:
        return name
    return name[: max_length - _SUFFIX_LENGTH] + _suffix(namespace, raw_name)


def assign(namespace: str, raw_names: Iterable[str], max_length: int = 64) -> dict[str, str]:
    """Return ``{public name: raw name}`` for one server's tools.

    Raises:
        ValueError: If two raw names get the same public name (a hash clash, or a raw name
            that equals another's sanitized-and-suffixed form); the message names both.
    """
    assigned: dict[str, str] = {}
    for raw in raw_names:
        name = public_name(namespace, raw, max_length)
        if (other := assigned.get(name)) is not None and other != raw:
            raise ValueError(f"tools {other!r} and {raw!r} both map to the public name {name!r}")
        assigned[name] = raw
    return assigned
