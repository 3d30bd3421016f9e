"""One conversation's view of a registry: the manifest plus what its searches found."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import mcp_types
from mcp.shared.dispatcher import ProgressFnT

from mcpmount.errors import UnknownToolError
from mcpmount.search import TOOL_SEARCH_NAME, ToolSearchCall
from mcpmount.tool import MountedTool

__all__ = ["View", "Viewed"]


class Viewed(Protocol):
    """What a view, and an adapter on one, read and call of a `Registry`: its manifest,
    lookups, search and calls.

    `Registry` is its only implementation. It stays a protocol because it is the only
    way to break a real circle: ``_registry.py`` imports this module (`Registry.view`
    makes a `View`), so this module cannot import ``_registry.py``.
    """

    def tools(self) -> list[mcp_types.Tool]: ...

    def mounted_tools(self) -> list[MountedTool]: ...

    def get(self, name: str) -> MountedTool: ...

    def definition(self, name: str) -> mcp_types.Tool: ...

    def tool_search(self, arguments: Mapping[str, Any] | None) -> ToolSearchCall: ...

    async def run_tool_search(self, arguments: Mapping[str, Any] | None) -> ToolSearchCall: ...

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressFnT | None = None,
        context: object | None = None,
    ) -> mcp_types.CallToolResult: ...


class View:
    """One conversation's view of a registry: its manifest grows with what it searched.

    A deferred tool that a ``tool_search`` of this view returned appears in this view's
    ``tools()`` from then on, so activation survives across turns. Every tool stays
    callable by name: search controls discovery, not access.
    """

    def __init__(self, registry: Viewed) -> None:
        self.registry = registry
        self.activated: list[str] = []

    def tools(self) -> list[mcp_types.Tool]:
        """Return the registry's manifest plus the tools this view's searches found."""
        manifest = self.registry.tools()
        shown = {tool.name for tool in manifest}
        for name in self.activated:
            if name in shown:
                continue
            try:
                manifest.append(self.registry.definition(name))
            except UnknownToolError:  # its server went away; it may come back
                continue
            shown.add(name)
        return manifest

    def tool_search(self, arguments: Mapping[str, Any] | None) -> ToolSearchCall:
        """Run ``tool_search`` like ``Registry.tool_search``, and activate what it found."""
        return self._activate(self.registry.tool_search(arguments))

    async def run_tool_search(self, arguments: Mapping[str, Any] | None) -> ToolSearchCall:
        """Like `tool_search`, a new query's vector computed in a worker thread (see
        ``Registry.run_tool_search``)."""
        return self._activate(await self.registry.run_tool_search(arguments))

    def _activate(self, outcome: ToolSearchCall) -> ToolSearchCall:
        if outcome.activates:
            self.activated += [n for n in outcome.names if n not in self.activated]
        return outcome

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressFnT | None = None,
        context: object | None = None,
    ) -> mcp_types.CallToolResult:
        """Call like ``Registry.call``; a ``tool_search`` also activates what it found."""
        if name == TOOL_SEARCH_NAME:
            return (await self.run_tool_search(arguments)).result
        return await self.registry.call(
            name, arguments, timeout=timeout, progress=progress, context=context
        )
