"""Resource subscriptions through the front, in both protocol eras.

A downstream client subscribes to a registry URI: with ``resources/subscribe`` in the
handshake era, or by naming it in a ``subscriptions/listen`` stream in the 2026-07-28
era. The registry subscribes upstream once per URI, however many clients want it, and
unsubscribes when the last one lets go (``resources/unsubscribe``, a listen stream that
ends). Each update the server sends reaches the clients subscribed to its URI:
``notifications/resources/updated`` to handshake-era sessions, ``ResourceUpdated`` on
the listen bus (which delivers it only to streams that named the URI).

A listen stream's events pass `VisibleEvents`: a stream opened by a principal limited to
some namespaces gets no list change of servers it may not see, and no update of their
resources (`mcpmount.serve.access`).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Final

import anyio
import mcp_types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, ServerEvent, SubscriptionBus

from mcpmount.errors import RegistryError, UnknownResourceError
from mcpmount.registry import Registry
from mcpmount.serve.access import EVERYONE, Door, Principal, principal_of, raise_for
from mcpmount.serve.sessions._changes import PromptsChanged, ResourcesChanged, ToolsChanged
from mcpmount.serve.sessions._sessions import Sessions

__all__ = ["Subscriptions", "VisibleEvents"]

logger = logging.getLogger(__name__)

_NOTIFY_TIMEOUT: Final = 2.0
"""How long one session gets to take an update before it is dropped."""

_BACKLOG: Final = 1000
"""Updates waiting to be sent; past it the oldest are dropped (each says only "read again")."""

_listening: ContextVar[Principal] = ContextVar("mcpmount_listening", default=EVERYONE)
"""The principal of the listen stream being opened (the SDK's handler subscribes to the bus
within the request's own task, before its first wait)."""


class VisibleEvents:
    """A view of a `SubscriptionBus` for listen streams: a listener subscribed while a limited
    principal's stream opens gets only the events that principal may see.

    Args:
        bus: The bus events are published on.
        door: What a principal may see.
    """

    def __init__(self, bus: SubscriptionBus, door: Door) -> None:
        self._bus = bus
        self._door = door

    async def publish(self, event: ServerEvent) -> None:
        await self._bus.publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        principal = _listening.get()
        if not self._door.limits(principal):
            return self._bus.subscribe(listener)

        def deliver(event: ServerEvent) -> None:
            if self._visible(principal, event):
                listener(event)

        return self._bus.subscribe(deliver)

    def _visible(self, principal: Principal, event: ServerEvent) -> bool:
        if isinstance(event, ResourceUpdated):
            return self._door.sees(principal, "resource", event.uri)
        if isinstance(event, ToolsChanged | PromptsChanged | ResourcesChanged):
            return principal.sees_any(event.servers)
        return True  # "every list changed" (a resynchronization): news of no server


class Subscriptions:
    """Who wants which resource's updates, and their delivery.

    Args:
        registry: The served registry; it subscribes upstream.
        bus: The 2026-07-28 listen fan-out.
        door: What each listen stream's principal may see.
    """

    def __init__(self, registry: Registry, bus: SubscriptionBus, door: Door) -> None:
        self._registry = registry
        self._bus = bus
        self._listen = ListenHandler(VisibleEvents(bus, door))
        self._wanted: Counter[str] = Counter()
        self._sessions: dict[str, dict[str, ServerSession]] = {}
        """URI -> session key -> session (handshake era)."""
        self._updates: MemoryObjectSendStream[str] | None = None
        """While `deliver` runs: where the registry's update listener puts each URI."""

    def close_streams(self) -> None:
        """End every open listen stream gracefully (before a shutdown)."""
        self._listen.close()

    # -- handlers -----------------------------------------------------------------------------

    async def subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.SubscribeRequestParams
    ) -> mcp_types.EmptyResult:
        key = Sessions.key(ctx)
        if key is None:
            error = RegistryError("resource updates need a session (stateless HTTP has none)")
            raise_for(error, ctx.protocol_version)
        sessions = self._sessions.setdefault(params.uri, {})
        if key not in sessions:
            await self._acquire(params.uri, ctx.protocol_version)
        sessions[key] = ctx.session
        return mcp_types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.UnsubscribeRequestParams
    ) -> mcp_types.EmptyResult:
        key = Sessions.key(ctx)
        sessions = self._sessions.get(params.uri, {})
        if key is not None and sessions.pop(key, None) is not None:
            if not sessions:
                del self._sessions[params.uri]
            await self._release(params.uri)
        return mcp_types.EmptyResult()

    async def listen(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: mcp_types.SubscriptionsListenRequestParams,
    ) -> mcp_types.SubscriptionsListenResult:
        """Serve one 2026-era listen stream, subscribed upstream to the URIs it names."""
        uris = list(dict.fromkeys(params.notifications.resource_subscriptions or ()))
        held: list[str] = []
        principal = _listening.set(principal_of(ctx))
        try:
            for uri in uris:
                try:
                    await self._acquire(uri, ctx.protocol_version)
                except Exception as exc:  # the stream still serves the rest
                    logger.warning("listen: cannot subscribe to %r: %s", uri, exc)
                else:
                    held.append(uri)
            return await self._listen(ctx, params)
        finally:
            _listening.reset(principal)
            with anyio.CancelScope(shield=True):
                for uri in held:
                    await self._release(uri)

    async def _acquire(self, uri: str, protocol_version: str | None) -> None:
        if not self._wanted[uri]:
            try:
                await self._registry.subscribe_resource(uri)
            except UnknownResourceError as exc:
                # As a plain server does, take a subscription to a URI that no mounted server
                # owns: it is harmless, and the protocol has no answer that says "no update
                # will ever come", so the log says it.
                logger.info("subscribed to %r; no update can come for it: %s", uri, exc.reason)
            except RegistryError as exc:
                raise_for(exc, protocol_version)
        self._wanted[uri] += 1

    async def _release(self, uri: str) -> None:
        self._wanted[uri] -= 1
        if self._wanted[uri] > 0:
            return
        del self._wanted[uri]
        try:
            await self._registry.unsubscribe_resource(uri)
        except Exception as exc:  # the server may be gone: nothing is left to stop
            logger.info("unsubscribing from %r failed: %s", uri, exc)

    # -- delivery -----------------------------------------------------------------------------

    def _on_update(self, uri: str) -> None:
        if self._updates is None:
            return  # nobody delivers: nobody is told
        try:
            self._updates.send_nowait(uri)
        except anyio.WouldBlock:
            logger.warning("resource updates back up; dropped the update of %r", uri)

    async def deliver(self) -> None:
        """Send every update to its subscribers; runs until cancelled."""
        send, receive = anyio.create_memory_object_stream[str](_BACKLOG)
        with send, receive:
            self._updates = send
            unsubscribe = self._registry.subscribe_updates(self._on_update)
            try:
                async for uri in receive:
                    await self._bus.publish(ResourceUpdated(uri))
                    async with anyio.create_task_group() as tg:
                        for key, session in list(self._sessions.get(uri, {}).items()):
                            tg.start_soon(self._notify, uri, key, session)
            finally:
                unsubscribe()
                self._updates = None

    async def _notify(self, uri: str, key: str, session: ServerSession) -> None:
        try:
            with anyio.fail_after(_NOTIFY_TIMEOUT):
                await session.send_resource_updated(uri)
        except Exception as exc:  # a gone session: forget its subscription
            logger.debug("dropped session %r from %r: the update failed: %r", key, uri, exc)
            sessions = self._sessions.get(uri, {})
            if sessions.get(key) is session:
                del sessions[key]
                if not sessions:
                    del self._sessions[uri]
                await self._release(uri)
