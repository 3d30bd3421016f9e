"""The tools' names, sorted, for a query that is a tool's name or the start of one.

`NameKeys` holds each tool's lowercased public and raw name with its doc id, and records
changes until the index settles, so a search pays only for what changed.
"""

from __future__ import annotations

from bisect import bisect_left, insort

from mcpmount.tool import MountedTool

__all__ = ["NameKeys"]

_FEW_KEYS = 64
"""Up to this many changed keys go in place; more, in one pass and one sort."""


class NameKeys:
    """Sorted (lowercased public or raw name, doc id) keys, for exact and prefix lookups.

    Not thread-safe: the index that owns it changes it from one task.
    """

    __slots__ = ("_added", "_keys", "_removed")

    def __init__(self) -> None:
        self._keys: list[tuple[str, int]] = []
        self._added: list[tuple[str, int]] = []
        self._removed: list[tuple[str, int]] = []
        """Changes to `_keys` not applied yet."""

    def add(self, tool: MountedTool, doc_id: int) -> None:
        """Record ``tool``'s names under ``doc_id``; `settle` applies it."""
        self._added += ((tool.name.lower(), doc_id), (tool.raw_name.lower(), doc_id))

    def remove(self, tool: MountedTool, doc_id: int) -> None:
        """Record that ``tool``'s names under ``doc_id`` are gone; `settle` applies it."""
        self._removed += ((tool.name.lower(), doc_id), (tool.raw_name.lower(), doc_id))

    def settle(self) -> None:
        """Apply the recorded changes."""
        # Doc ids are never reused, so a key added and removed since the last settle is in
        # both lists and nowhere else. A few changes go in place (each O(log n) to find);
        # many, in one pass and one sort.
        gone = set(self._removed)
        fresh = [k for k in self._added if k not in gone]
        stale = gone.difference(self._added)
        self._added, self._removed = [], []
        keys = self._keys
        if len(stale) > _FEW_KEYS:
            keys = [k for k in keys if k not in stale]
        else:
            for key in stale:
                del keys[bisect_left(keys, key)]
        if len(fresh) > _FEW_KEYS:
            keys += fresh
            keys.sort()
        else:
            for key in fresh:
                insort(keys, key)
        self._keys = keys

    def matches(self, key: str, *, prefix: bool) -> list[int]:
        """The doc ids whose name is ``key`` (lowercased), or starts with it if ``prefix``;
        each once, in name order. Settle first."""
        keys = self._keys
        found: dict[int, None] = {}
        at = bisect_left(keys, (key, -1))
        while at < len(keys):
            name, doc_id = keys[at]
            if name != key and not (prefix and name.startswith(key)):
                break
            found[doc_id] = None
            at += 1
        return list(found)
