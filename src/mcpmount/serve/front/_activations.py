"""Where the front keeps what each conversation's ``tool_search`` found (its activations).

A found deferred tool joins the tools list of the conversation that searched for it, from
its next ``tools/list`` on. The front keys a conversation by what the transport says (see
`mcpmount.serve.front._lists`): ``"http:<Mcp-Session-Id>"`` for a stateful HTTP session,
``"conv:<Mcp-Conversation-Id>"`` for a sessionless request that names its conversation,
``"pipe:<random>"`` for a stdio peer. The store only keeps names; which of them are still
mounted is the registry's to say at listing time.

`ActivationStore` is the seam: `InMemoryActivations` (the default) keeps one process's
conversations; a store shared by several replicas (Redis) lets a search on one be honoured
by the next.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Final, Protocol

__all__ = ["MAX_CONVERSATIONS", "ActivationStore", "InMemoryActivations"]

MAX_CONVERSATIONS: Final = 1000
"""How many conversations the in-memory store remembers, the least recently used first out."""


class ActivationStore(Protocol):
    """The tools each conversation's searches activated, by conversation key.

    Keys are strings the front builds (``"conv:<id>"``, ``"http:<session id>"``, ...). An
    implementation may forget a key (bounded memory, expiry): the conversation then sees
    the registry's manifest again, and every tool stays callable by name.
    """

    async def load(self, key: str) -> list[str]:
        """Return the names activated under ``key``, in the order they were first added
        (empty for an unknown key)."""
        ...

    async def add(self, key: str, names: Sequence[str]) -> None:
        """Append the ``names`` not already activated under ``key``, in order; idempotent."""
        ...


class InMemoryActivations:
    """An `ActivationStore` in this process's memory, bounded, least recently used first out.

    Args:
        max_keys: How many conversations to remember at most.
    """

    def __init__(self, max_keys: int = MAX_CONVERSATIONS) -> None:
        if max_keys < 1:
            raise ValueError(f"max_keys must be at least 1, not {max_keys!r}")
        self._max_keys = max_keys
        self._names: OrderedDict[str, list[str]] = OrderedDict()

    def __repr__(self) -> str:
        return f"<InMemoryActivations {len(self._names)}/{self._max_keys} conversations>"

    async def load(self, key: str) -> list[str]:
        names = self._names.get(key)
        if names is None:
            return []
        self._names.move_to_end(key)
        return list(names)

    async def add(self, key: str, names: Sequence[str]) -> None:
        if isinstance(names, str):  # a lone name would become its letters
            raise TypeError("names must be a sequence of tool names, not one string")
        kept = self._names.get(key)
        if kept is None:
            if not names:
                return
            kept = self._names[key] = []
        self._names.move_to_end(key)
        kept += [name for name in dict.fromkeys(names) if name not in kept]
        while len(self._names) > self._max_keys:
            self._names.popitem(last=False)
