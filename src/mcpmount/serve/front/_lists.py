"""What ``tools/list`` shows each caller, and what its ``tool_search`` adds to it.

Three kinds of caller, by what the transport says (`Sessions.conversation`):

============================  ==========================================================
a session (stdio, stateful    the manifest plus what its searches found; told with
handshake-era HTTP)           ``list_changed`` when a search grows it (`Changes.tell_one`)
a conversation (sessionless,  the manifest plus what its searches found, from its next
``Mcp-Conversation-Id``)      ``tools/list`` on
no key (2026-07-28 over HTTP, the manifest: nothing a search found leaks into another
``--stateless``)              caller's list
============================  ==========================================================

``call_tool`` is listed only beside ``tool_search`` (when the registry defers tools): to
every caller, since a one-shot client with a session never lists again, or (``[serve]
call_tool = "sessionless"``) only to callers without a session, whose list cannot be told
to grow. The ``tool_search`` result of a caller that sees it says to call what it found
through ``call_tool`` (`mcpmount.serve.front._call_tool`). Found names are kept in an
`ActivationStore` (`mcpmount.serve.front._activations`); a store that fails is logged, and
the caller sees the manifest meanwhile.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types
from mcp import MCPError
from mcp.server import ServerRequestContext

from mcpmount.registry import Registry
from mcpmount.search import TOOL_SEARCH_NAME
from mcpmount.serve.access import Door, Principal, principal_of
from mcpmount.serve.front._activations import ActivationStore
from mcpmount.serve.front._call_tool import (
    CallToolOffer,
    call_tool_definition,
    search_result_via_call_tool,
    tool_search_via_call_tool,
)
from mcpmount.serve.sessions import BadConversationError, Sessions

__all__ = ["Caller", "ToolLists"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a tools request comes from, as far as lists are concerned."""

    principal: Principal
    """Who it is, and what it may see: its searches find only that."""
    key: str | None
    """Where its activations are kept; None: it has none (its list is the manifest)."""
    session: bool
    """Whether it has a session, which is told when its list changes."""


class ToolLists:
    """Each caller's tools list and searches.

    Args:
        registry: The served registry.
        sessions: The front's sessions.
        store: Where each conversation's activations are kept.
        call_tool: Who sees ``call_tool`` beside ``tool_search``.
        door: What each caller may find (a policy's say); None: its namespaces' tools.
    """

    def __init__(
        self,
        registry: Registry,
        sessions: Sessions,
        store: ActivationStore,
        *,
        call_tool: CallToolOffer = "every",
        door: Door | None = None,
    ) -> None:
        self.door = door
        self._registry = registry
        self._sessions = sessions
        self.store = store
        self._call_tool = call_tool

    def _offers_call_tool(self, caller: Caller) -> bool:
        return self._call_tool == "every" or not caller.session

    def caller(self, ctx: ServerRequestContext[Any, Any]) -> Caller:
        """Return who ``ctx`` comes from.

        Raises:
            MCPError: Invalid params: its conversation header is malformed.
        """
        try:
            key = self._sessions.conversation(ctx)
        except BadConversationError as exc:
            raise MCPError(mcp_types.INVALID_PARAMS, str(exc)) from None
        return Caller(principal_of(ctx), key, session=Sessions.key(ctx) is not None)

    async def tools(self, ctx: ServerRequestContext[Any, Any]) -> list[mcp_types.Tool]:
        """Return the tools list of ``ctx``'s caller (see the module docstring).

        Raises:
            MCPError: Invalid params: its conversation header is malformed.
        """
        caller = self.caller(ctx)
        self._sessions.listed(ctx)  # before the list is built: a later change is told
        view = self._registry.view()
        if caller.key is not None:
            view.activated = await self._load(caller.key)
        tools = view.tools()
        return _with_call_tool(tools) if self._offers_call_tool(caller) else tools

    async def search(self, caller: Caller, arguments: Mapping[str, Any] | None) -> Search:
        """Run ``tool_search`` for ``caller`` over the tools it may see: what it found joins
        its list, if it has a key."""
        principal = caller.principal
        tools = self.door.searched(principal) if self.door is not None else None
        outcome = self._registry.tool_search(arguments, servers=principal.namespaces, tools=tools)
        new: frozenset[str] = frozenset()
        if caller.key is not None and outcome.names and outcome.activates:
            before = set(await self._load(caller.key))
            new = frozenset(name for name in outcome.names if name not in before)
            if new:
                await self._add(caller.key, outcome.names)
        result = outcome.result
        if self._offers_call_tool(caller) and outcome.activates:
            conversation = not caller.session and caller.key is not None
            result = search_result_via_call_tool(result, conversation=conversation)
        hits = outcome.found.hits if outcome.found is not None else ()
        servers = frozenset(hit.tool.server for hit in hits if hit.tool.name in new)
        return Search(result, servers)

    async def _load(self, key: str) -> list[str]:
        try:
            return list(await self.store.load(key))
        except Exception as exc:  # the store's trouble must not fail a list
            logger.warning("activations of %r: the store failed, listing without: %r", key, exc)
            return []

    async def _add(self, key: str, names: Sequence[str]) -> None:
        try:
            await self.store.add(key, names)
        except Exception as exc:  # the search still answers; the tools stay callable
            logger.warning(
                "activations of %r: the store failed to keep %d: %r", key, len(names), exc
            )


@dataclass(frozen=True, slots=True)
class Search:
    """One ``tool_search`` through the front."""

    result: mcp_types.CallToolResult
    """What the model sees."""
    servers: frozenset[str]
    """The servers of the tools the caller's list grew by (a session is then told)."""

    @property
    def grew(self) -> bool:
        """Whether the caller's list grew."""
        return bool(self.servers)


def _with_call_tool(tools: list[mcp_types.Tool]) -> list[mcp_types.Tool]:
    """``tools`` with ``call_tool`` after ``tool_search``, if it is there."""
    for i, tool in enumerate(tools):
        if tool.name == TOOL_SEARCH_NAME:
            return [
                *tools[:i],
                tool_search_via_call_tool(tool),
                call_tool_definition(),
                *tools[i + 1 :],
            ]
    return tools
