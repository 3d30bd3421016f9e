"""What a server tells about its changes: list changes and resource updates, both eras.

Through 2025-11-25 a server sends ``notifications/*/list_changed`` and
``notifications/resources/updated`` whenever it likes, and they arrive through the
client's message handler (`ChangeFeed.on_message`). On 2026-07-28 they arrive only on a
``subscriptions/listen`` stream whose filter is fixed when it opens (`ChangeFeed.listen`):
the lists whose changes the server advertises, and the resource URIs subscribed to. A
new subscription therefore opens the stream again (`ChangeFeed.resubscribe`); there is no
replay, so a change in that gap is only seen at the next one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
import mcp_types
from anyio.abc import TaskStatus
from mcp import Client, MCPError
from mcp.client.session import IncomingMessage
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

__all__ = ["ChangeFeed"]

logger = logging.getLogger(__name__)


@dataclass(eq=False)
class ChangeFeed:
    """One connection's change notices, turned into two callbacks."""

    server: str
    on_list_changed: Callable[[], None]
    """A tool, prompt or resource list changed (call it for a burst: it is debounced)."""
    on_updated: Callable[[str], None]
    """A resource changed; gets its raw URI."""

    subscriptions: set[str] = field(default_factory=set[str])
    """Raw URIs subscribed to (the 2026-07-28 stream's filter)."""

    _listening: bool = False
    """Whether this is a 2026-07-28 connection, whose notices come from the listen stream
    (they reach the message handler too while it is open: each is handled once)."""
    _scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    _reopen: anyio.Event = field(default_factory=anyio.Event)
    _opened: anyio.Event = field(default_factory=anyio.Event)

    async def listen(
        self, client: Client, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Hold a 2026-07-28 ``subscriptions/listen`` stream open until cancelled.

        Reports started once the first stream was acknowledged (or refused, or had nothing
        to listen to); opens it again with the new filter after each `resubscribe`.
        """
        started = False
        self._listening = True
        while True:
            self._scope = anyio.CancelScope()
            flags = _announced(client)
            if any(flags.values()) or self.subscriptions:
                uris = sorted(self.subscriptions)
                try:
                    async with client.listen(**flags, resource_subscriptions=uris) as stream:
                        self._opened.set()
                        if not started:
                            task_status.started()
                            started = True
                        with self._scope:
                            async for event in stream:
                                self.on_event(event)
                except (MCPError, SubscriptionLost, ListenNotSupportedError, TimeoutError) as exc:
                    logger.info("server %r: no live change notices (%s)", self.server, exc)
                    self._opened.set()
            else:
                self._opened.set()  # nothing to listen to
            if not started:
                task_status.started()
                started = True
            await self._reopen.wait()
            self._reopen = anyio.Event()

    def resubscribe(self) -> anyio.Event:
        """Open the listen stream again, with ``subscriptions`` as they are now.

        Returns an event set once the new stream is acknowledged (or was refused).
        """
        self._opened = anyio.Event()
        self._reopen.set()
        self._scope.cancel()
        return self._opened

    def on_message(self, message: IncomingMessage) -> None:
        """Handle a message of the client's message handler (the handshake era's notices)."""
        match message:
            case (
                mcp_types.ToolListChangedNotification()
                | mcp_types.PromptListChangedNotification()
                | mcp_types.ResourceListChangedNotification()
            ):
                self.on_list_changed()
            case mcp_types.ResourceUpdatedNotification() if not self._listening:
                self.on_updated(message.params.uri)
            case _:
                pass

    def on_event(self, event: ServerEvent) -> None:
        """Handle an event of the listen stream."""
        match event:
            case ToolsListChanged() | PromptsListChanged() | ResourcesListChanged():
                self.on_list_changed()
            case ResourceUpdated():
                self.on_updated(event.uri)


def _announced(client: Client) -> dict[str, bool]:
    """The ``listen`` flags of the lists whose changes the server says it announces."""
    caps = client.server_capabilities
    return {
        "tools_list_changed": caps.tools is not None and bool(caps.tools.list_changed),
        "prompts_list_changed": caps.prompts is not None and bool(caps.prompts.list_changed),
        "resources_list_changed": caps.resources is not None and bool(caps.resources.list_changed),
    }
