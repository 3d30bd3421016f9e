"""Change propagation: every downstream client is told when the served lists change.

`Registry.subscribe` marks a list dirty (tools, prompts or resources, as
`RegistryChange.kind` says); one task (`Changes.propagate`) then tells every client, in
both protocol eras: ``notifications/<kind>/list_changed`` to every handshake-era session
that sent a request, and ``ToolsListChanged`` (``PromptsListChanged``,
``ResourcesListChanged``) on the ``subscriptions/listen`` bus for 2026-07-28 clients.

- Nothing is told before the front answers its first lists (``answering``, see
  `mcpmount.serve.front._startup`): every list answered after that holds the change. A
  handshake-era session is told only once it has listed the tools (`Sessions.listed`).
- Bursts coalesce into one notice per list: a change is told once no other came for
  `QUIET` seconds, and at most `MAX_DELAY` seconds after the first (three servers mounting
  one after the other, an upstream server adding tools one by one).

A session whose search activated new tools is told the same way, alone (`Changes.tell_one`).

A change is news of its servers: a client is told only if its principal may see one of
them (`mcpmount.serve.access`). Handshake-era sessions are chosen by `Sessions.listeners`;
on the listen bus the event is a `ListChanged` naming its servers, which `VisibleEvents`
lets through to the streams that may see one of them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Final, Literal

import anyio
from mcp.server import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    SubscriptionBus,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcpmount.registry import Registry, RegistryChange
from mcpmount.serve.sessions._sessions import Sessions

__all__ = [
    "EVENTS",
    "Changes",
    "Kind",
    "ListChanged",
    "PromptsChanged",
    "ResourcesChanged",
    "ToolsChanged",
]

logger = logging.getLogger(__name__)

_NOTIFY_TIMEOUT: Final = 2.0
"""How long one session gets to take a list_changed before it is dropped."""

QUIET: Final = 0.5
"""Seconds without a further change after which a burst of changes is told."""

MAX_DELAY: Final = 2.0
"""The longest a change waits to be told while changes keep coming."""

Kind = Literal["tools", "prompts", "resources"]


@dataclass(frozen=True)
class ToolsChanged(ToolsListChanged):
    """The tools list changed, in these servers."""

    servers: frozenset[str] = frozenset()


@dataclass(frozen=True)
class PromptsChanged(PromptsListChanged):
    """The prompts list changed, in these servers."""

    servers: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ResourcesChanged(ResourcesListChanged):
    """The resources list changed, in these servers."""

    servers: frozenset[str] = frozenset()


ListChanged = ToolsChanged | PromptsChanged | ResourcesChanged
"""A list change on the bus, naming the servers whose list it was."""

EVENTS: Final[dict[Kind, type[ListChanged]]] = {
    "tools": ToolsChanged,
    "prompts": PromptsChanged,
    "resources": ResourcesChanged,
}


class Changes:
    """Tells downstream clients that a list changed.

    Args:
        registry: The served registry, whose changes are announced.
        sessions: The front's sessions: the handshake-era ones are told directly.
        bus: The 2026-07-28 ``subscriptions/listen`` fan-out.
        answering: Set once the front answers lists; changes before it are not told
            (None: from the start).
    """

    def __init__(
        self,
        registry: Registry,
        sessions: Sessions,
        bus: SubscriptionBus,
        *,
        answering: anyio.Event | None = None,
    ) -> None:
        self._registry = registry
        self._sessions = sessions
        self._bus = bus
        self._answering = answering
        self._dirty = anyio.Event()
        self._kinds: dict[Kind, set[str]] = {}
        """Each list kind changed since the last notice, and the servers it changed in."""
        self._last_change = 0.0

    def _on_change(self, change: RegistryChange) -> None:
        if self._answering is not None and not self._answering.is_set():
            return  # no list was answered yet: each one answered from now on holds it
        self._kinds.setdefault(change.kind, set()).add(change.server)
        self._last_change = anyio.current_time()
        self._dirty.set()

    async def propagate(self) -> None:
        """Tell every client each time the registry changes; runs until cancelled."""
        unsubscribe = self._registry.subscribe(self._on_change)
        try:
            while True:
                await self._dirty.wait()
                await self._settle()
                self._dirty = anyio.Event()
                kinds, self._kinds = self._kinds, {}
                for kind in sorted(kinds):
                    await self._tell_all(kind, frozenset(kinds[kind]))
        finally:
            unsubscribe()

    async def _settle(self) -> None:
        """Wait until no change came for `QUIET` seconds, or `MAX_DELAY` passed."""
        latest = anyio.current_time() + MAX_DELAY
        while (now := anyio.current_time()) < latest:
            quiet_at = self._last_change + QUIET
            if now >= quiet_at:
                return
            await anyio.sleep(min(quiet_at, latest) - now)

    async def _tell_all(self, kind: Kind, servers: frozenset[str]) -> None:
        await self._bus.publish(EVENTS[kind](servers))
        await self.tell_sessions(kind, servers)

    async def tell_sessions(self, kind: Kind, servers: frozenset[str] | None) -> None:
        """Tell the handshake-era sessions (only) that may see one of ``servers`` (None: of
        no server in particular: every one) that the ``kind`` list changed."""
        async with anyio.create_task_group() as tg:
            for key, session in self._sessions.listeners(servers):
                tg.start_soon(self._notify, key, session, kind)

    async def tell_one(self, ctx: ServerRequestContext[Any, Any], servers: frozenset[str]) -> None:
        """Tell the calling session (only) that its list grew by tools of ``servers``."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # Only a pipe keeps a view at this era, and a pipe has one peer.
            await self._bus.publish(ToolsChanged(servers))
        else:
            await self._notify(Sessions.key(ctx) or "", ctx.session, "tools")

    async def _notify(self, key: str, session: ServerSession, kind: Kind) -> None:
        try:
            with anyio.fail_after(_NOTIFY_TIMEOUT):
                if kind == "tools":
                    await session.send_tool_list_changed()
                elif kind == "prompts":
                    await session.send_prompt_list_changed()
                else:
                    await session.send_resource_list_changed()
        except Exception as exc:  # a gone session: forget it, never fail the others
            logger.debug("dropped session %r: list_changed failed: %r", key, exc)
            self._sessions.drop(key, session)
