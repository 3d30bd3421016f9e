"""Python identifiers for tool names, namespaces and argument names, unique where it counts.

Names come from untrusted servers. An identifier made here is plain ASCII
(``[A-Za-z][A-Za-z0-9_]*``), never a keyword, never starts with ``_`` (so no dunder, no name
mangling inside a class body, nothing pydoc hides), and never equals a name the generated
module needs (``reserved``). Two names that read alike get a stable suffix from a hash of
the name, so the suffix does not depend on the order the names came in.
"""

from __future__ import annotations

import hashlib
import keyword
import re
import unicodedata
from collections.abc import Collection, Iterable
from typing import Final

__all__ = ["SEPARATOR", "identifier", "unique_identifiers"]

SEPARATOR: Final = "__"
"""Between namespace and tool in a public name (as in `mcpmount.naming`)."""

_INVALID = re.compile(r"[^A-Za-z0-9_]")
_MAX_CHARS: Final = 60
"""Longer identifiers are cut (then told apart by the suffix): they are for reading."""


def identifier(text: str, fallback: str, reserved: Collection[str] = ()) -> str:
    """``text`` made an identifier, before uniqueness: ``read-file`` -> ``read_file``,
    ``from`` -> ``from_``, ``2fa`` -> ``<fallback>_2fa``; ``fallback`` when nothing is left."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    name = _INVALID.sub("_", kept).lstrip("_")[:_MAX_CHARS].rstrip("_") or fallback
    if name[0].isdigit():
        name = f"{fallback}_{name}"
    if keyword.iskeyword(name) or name in reserved:
        name += "_"
    return name


def unique_identifiers(
    texts: Iterable[str], fallback: str, reserved: Collection[str] = ()
) -> dict[str, str]:
    """Map each distinct text to an identifier, no two alike.

    A text whose identifier is itself keeps it; the others whose identifiers clash each get
    ``_`` and 6 hex digits of the text's SHA-256. Deterministic: the result for a text
    depends only on the texts that clash with it, never on their order.
    """
    wanted = {text: identifier(text, fallback, reserved) for text in dict.fromkeys(texts)}
    by_name: dict[str, list[str]] = {}
    for text, name in wanted.items():
        by_name.setdefault(name, []).append(text)
    chosen: dict[str, str] = {}
    for name, owners in by_name.items():
        for text in owners:
            keeps = len(owners) == 1 or text == name
            chosen[text] = name if keeps else f"{name}_{_digest(text)[:6]}"
    # A suffixed name may still equal another text's identifier (or two digests clash):
    # lengthen the suffix of the later texts, in sorted order, until all are distinct.
    taken: set[str] = set()
    for text in sorted(chosen, key=lambda t: (chosen[t] != wanted[t], t)):
        name = chosen[text]
        width = 6
        while name in taken or name in reserved:
            width += 2
            digest = _digest(text)[:width] if width <= 64 else f"{_digest(text)}_{width}"
            name = f"{wanted[text]}_{digest}"
        taken.add(name)
        chosen[text] = name
    return chosen


def _digest(text: str) -> str:
    # surrogatepass: untrusted names may hold lone surrogates; hashing must not fail.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
