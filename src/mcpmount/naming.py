"""Public tool names: ``<namespace>__<tool>``, always valid for model APIs.

A server mounted with ``prefix = false`` keeps its own names: a name that already fits is
published as it is, and one that does not gets the same treatment without the namespace
(sanitized, shortened, and the same hash suffix, still keyed on the namespace).

Pure and deterministic. A tool's public name is a function of (namespace, raw name,
max length) alone, so it never changes when other tools come and go or with mount order.
Names are never parsed back: the registry routes calls through its name table.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

import xxhash

__all__ = [
    "MAX_NAMESPACE_LENGTH",
    "MIN_NAME_LENGTH",
    "NAMESPACE_PATTERN",
    "SEPARATOR",
    "TOOL_NAME_PATTERN",
    "assign",
    "namespace_problem",
    "public_name",
    "sanitize",
]

SEPARATOR = "__"
"""Joins namespace and tool. It cannot occur inside a namespace, so namespaces never clash."""

MAX_NAMESPACE_LENGTH = 32

NAMESPACE_PATTERN = re.compile(r"^[a-z](?:[a-z0-9-]|_(?![_]|$))*$")
"""Lowercase ASCII letters, digits, ``-`` and single ``_``, starting with a letter and not
ending in ``_``: with ``a_`` allowed, ``a_`` + ``__`` + ``b`` would equal ``a`` + ``__`` +
``_b``, and two namespaces could produce the same name."""

TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
"""The MCP tool name grammar (SEP-986). Model APIs are stricter (no ``.``), so a valid raw
name may still be sanitized into its public name."""

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


def sanitize(raw_name: str) -> str:
    """Return ``raw_name`` in the characters model APIs accept, ``[A-Za-z0-9_-]``.

    Surrounding whitespace is trimmed, letters with accents or compatibility forms become
    their ASCII base (``café`` -> ``cafe``, the ligature ``ﬁ`` -> ``fi``), combining
    marks are dropped and every other character becomes ``_``. Many raw names sanitize
    alike; `public_name` tells them apart with its suffix.
    """
    decomposed = unicodedata.normalize("NFKD", raw_name.strip())
    kept = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _INVALID.sub("_", kept)


def public_name(namespace: str, raw_name: str, max_length: int = 64, *, prefix: bool = True) -> str:
    """Return the public name of tool ``raw_name`` of server ``namespace``.

    The raw name is sanitized (see `sanitize`), and a name longer than ``max_length`` is
    shortened. Whenever either changed the raw name, ``_`` and 8 hex digits of
    ``xxh3_64(namespace + "\\0" + raw_name)`` are appended (within ``max_length``), so raw
    names that sanitize alike still get distinct names.

    Args:
        namespace: A valid namespace (see `namespace_problem`).
        raw_name: The tool's name as the server sent it (or as an override renames it);
            any string.
        max_length: The longest name allowed, at least `MIN_NAME_LENGTH`.
        prefix: Whether the name starts with ``<namespace>__``; without it a raw name
            that fits is its own public name.

    Raises:
        ValueError: If the namespace is invalid or ``max_length`` too small.
    """
    if (problem := namespace_problem(namespace)) is not None:
        raise ValueError(f"invalid namespace {namespace!r}: {problem}")
    if max_length < MIN_NAME_LENGTH:
        raise ValueError(f"max_length must be at least {MIN_NAME_LENGTH}, got {max_length}")
    sanitized = sanitize(raw_name)
    name = f"{namespace}{SEPARATOR}{sanitized}" if prefix else sanitized
    if sanitized == raw_name and raw_name and len(name) <= max_length:
        return name
    return name[: max_length - _SUFFIX_LENGTH] + _suffix(namespace, raw_name)


def assign(
    namespace: str,
    raw_names: Iterable[str],
    max_length: int = 64,
    renames: Mapping[str, str] | None = None,
    *,
    prefix: bool = True,
) -> dict[str, str]:
    """Return ``{public name: raw name}`` for one server's tools.

    Args:
        namespace: A valid namespace.
        raw_names: The server's tool names.
        max_length: The longest name allowed.
        renames: Raw name -> the name its public name is built from instead (a per-tool
            override); a raw name not in it is built from itself.
        prefix: Whether names start with ``<namespace>__`` (see `public_name`).

    Raises:
        ValueError: If two raw names get the same public name (a hash clash, a raw name
            that equals another's sanitized-and-suffixed form, or a rename onto another
            tool's name); the message names both.
    """
    renames = renames or {}

    def called(raw: str) -> str:
        base = renames.get(raw, raw)
        return repr(raw) if base == raw else f"{raw!r} (renamed {base!r})"

    assigned: dict[str, str] = {}
    for raw in raw_names:
        name = public_name(namespace, renames.get(raw, raw), max_length, prefix=prefix)
        if (other := assigned.get(name)) is not None and other != raw:
            raise ValueError(
                f"tools {called(other)} and {called(raw)} both map to the public name {name!r}"
            )
        assigned[name] = raw
    return assigned
