"""What the model and the host read from a registry: the manifest, lookups, search, status
and pins. `Registry` inherits these methods; they never change the tables."""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

import mcp_types

from mcpmount.catalog import CONTENT_KINDS, Catalog, Library, Pins
from mcpmount.errors import ServerError
from mcpmount.registry._observers import Observers
from mcpmount.registry._status import CallStats, ServerStatus, status_row
from mcpmount.search import SearchResult, ToolSearchCall
from mcpmount.tool import MountedTool
from mcpmount.upstream import Supervisor

__all__ = ["ReadingMethods"]


class ReadingMethods:
    """The read-only half of `Registry` (its state lives in the registry)."""

    _catalog: Catalog
    _library: Library
    _servers: dict[str, Supervisor]
    _stats: dict[str, CallStats]
    _failures: dict[str, ServerError]
    observers: Observers

    def lock(self, previous: Pins | None = None) -> Pins:
        """Return the pins of every mounted tool, prompt and resource (for ``mcpmount lock``).

        Args:
            previous: The pins of the lock file being replaced: an optional server that
                failed to mount keeps the pins it had there, so a server that is down for a
                moment is not unpinned.
        """
        servers = self._catalog.pins_of()
        if previous is not None:
            for server in self._failures:
                if server in previous.servers:
                    servers[server] = dict(previous.servers[server])
        return Pins(servers, content=self._content_pins(previous))

    def tools(self) -> list[mcp_types.Tool]:
        """Return the manifest: visible tools, plus ``tool_search`` if any tool is deferred."""
        return self._catalog.manifest()

    def mounted_tools(self) -> list[MountedTool]:
        """Return every mounted tool, deferred ones included, sorted by name."""
        return self._catalog.all()

    def get(self, name: str) -> MountedTool:
        """Return the mounted tool called ``name``.

        Raises:
            UnknownToolError: No tool has that name.
        """
        return self._catalog.get(name)

    def search(self, query: str, limit: int = 5) -> SearchResult:
        """Rank every mounted tool (deferred ones included) for ``query``."""
        return self._catalog.search(query, limit)

    def tool_search(
        self, arguments: Mapping[str, Any] | None, *, servers: Container[str] | None = None
    ) -> ToolSearchCall:
        """Run the ``tool_search`` meta-tool with the model's arguments; never raises.

        The same as ``call("tool_search", arguments)``, with what it found kept typed.
        ``servers``: search only their tools, as if no other were mounted (what a client
        limited to some namespaces may find); None: every tool.
        """
        return self.observers.searching(
            lambda: self._catalog.tool_search(arguments, servers=servers)
        )

    async def run_tool_search(
        self, arguments: Mapping[str, Any] | None, *, servers: Container[str] | None = None
    ) -> ToolSearchCall:
        """`tool_search` off the event loop's back: with a semantic model, a new query's
        vector is computed in a worker thread (`call` and the served registry use this)."""
        return await self.observers.searching_async(
            lambda: self._catalog.run_tool_search(arguments, servers=servers)
        )

    @property
    def failures(self) -> dict[str, ServerError]:
        """Optional servers that failed to mount, with their errors."""
        return dict(self._failures)

    def status(self) -> list[ServerStatus]:
        """Return one row per mounted server, sorted by namespace."""
        return [
            status_row(supervisor, self._catalog.of(server), self._stats.get(server))
            for server, supervisor in sorted(self._servers.items())
        ]

    def _content_pins(self, previous: Pins | None) -> dict[str, dict[str, dict[str, str]]]:
        """The lock file's prompt and resource sections; a failed server keeps its old pins."""
        sections = self._library.pins_of()
        old = previous.content if previous is not None else None
        for kind in CONTENT_KINDS:
            empty: Mapping[str, Mapping[str, str]] = {}
            pinned = old.get(kind, empty) if old is not None else empty
            for server in self._failures:
                if server in pinned:
                    sections[kind][server] = dict(pinned[server])
        return sections
