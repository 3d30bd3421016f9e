"""`SharedState`: what the replicas of one served config share, on one Redis server.

It holds the process's connection to that Redis (`mcpmount.redis.redis_connection`, from a
URL: ``redis://host:6379/0``, ``rediss://...``, ``unix:///path/redis.sock``; shared with
the registry's cached lists and tool vectors when ``cache`` names the same URL) and
what uses it: the ``subscriptions/listen`` bus (`RedisSubscriptionBus`, channel
``<namespace>:events``) and the activation store (`RedisActivationStore`, keys
``<namespace>:activations:<key>``). Entering it starts the bus's reader and waits briefly
for Redis; an unreachable Redis does not stop it (the replica serves from its own state,
and `SharedState.health` says why). Leaving it stops the reader and lets go of the
connection, which closes when nothing else holds it.

Needs the ``redis`` extra (``pip install "mcpmount[redis]"``), imported only when a shared
state is made.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Final, Self

import anyio
from mcp.server.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ServerEvent,
    ToolsListChanged,
)

from mcpmount.config import RegistryConfig
from mcpmount.redis import redis_connection
from mcpmount.serve.replicas._activations import RedisActivationStore
from mcpmount.serve.replicas._bus import RedisSubscriptionBus
from mcpmount.serve.sessions import Kind, ListChanged

__all__ = ["SharedState", "open_shared_state", "shared_namespace", "tell_of_remote_changes"]

logger = logging.getLogger(__name__)

_RECOVER_EVERY: Final = 1.0
"""Seconds between two looks for activations to write through, once Redis failed."""

_KINDS: Final[dict[type[ServerEvent], Kind]] = {
    ToolsListChanged: "tools",
    PromptsListChanged: "prompts",
    ResourcesListChanged: "resources",
}
"""The list each event says changed (a resource update is the listen streams' alone)."""

_WHAT: Final = "shared state"
"""Where a `ConfigError` of the shared state points: the ``--shared-state`` URL."""


class SharedState:
    """The bus and activation store replicas share through one Redis.

    Use as an async context manager (or through `open_shared_state`).

    Args:
        url: The Redis URL (``redis://``, ``rediss://`` or ``unix://``).
        namespace: Prepended to every channel and key; one per served config.
        timeout: Seconds a request waits for Redis at most (then it goes on without it).
        ttl: Seconds activations live after their last use.

    Raises:
        ConfigError: The redis package is missing, or ``url`` is not a Redis URL.
    """

    def __init__(
        self,
        url: str,
        *,
        namespace: str = "mcpmount",
        timeout: float = 1.0,
        ttl: float = 24 * 3600.0,
    ) -> None:
        self.redis = redis_connection(url)
        """The process's connection to the Redis, shared with its other stores."""
        self.redis.check(_WHAT)
        self.url = self.redis.shown
        """The Redis URL as messages show it (`mcpmount.config.redacted_url`: no password)."""
        self._timeout = timeout
        self.bus = RedisSubscriptionBus(self.redis, f"{namespace}:events", timeout=timeout)
        """The ``subscriptions/listen`` fan-out every replica shares."""
        self.activations = RedisActivationStore(
            self.redis, f"{namespace}:activations", timeout=timeout, ttl=ttl
        )
        """The tools searches activated, per session or conversation key."""
        self._stack: AsyncExitStack | None = None

    def health(self) -> str | None:
        """None while Redis serves; else why this replica is degraded (e.g.
        ``"redis unreachable: ..."``)."""
        return self.redis.health() or self.bus.health() or self.activations.health()

    async def __aenter__(self) -> Self:
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(self.redis.held())
            tg = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(tg.cancel_scope.cancel)
            await tg.start(self.bus.run)
            tg.start_soon(self._recover_activations)
            with anyio.move_on_after(self._timeout):
                await self.bus.wait_reading()
            self._stack = stack.pop_all()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.__aexit__(exc_type, exc, tb)

    async def _recover_activations(self) -> None:
        while True:
            await anyio.sleep(_RECOVER_EVERY)
            await self.activations.recover()


def shared_namespace(config: RegistryConfig) -> str:
    """The namespace of ``config``'s replicas in Redis: ``mcpmount:<config file stem>``
    (``mcpmount:code`` for a config built in code)."""
    return f"mcpmount:{config.path.stem if config.path is not None else 'code'}"


async def tell_of_remote_changes(
    bus: RedisSubscriptionBus, tell: Callable[[Kind, frozenset[str] | None], Awaitable[None]]
) -> None:
    """Call ``tell`` with each list kind other replicas changed and the servers it changed
    in (None: not said), coalesced; runs until cancelled. ``serve`` tells its handshake-era
    sessions so (listen streams have the bus)."""
    kinds: dict[Kind, set[str] | None] = {}
    dirty = anyio.Event()

    def on_event(event: ServerEvent) -> None:
        kind: Kind | None = next((k for t, k in _KINDS.items() if isinstance(event, t)), None)
        if kind is None:
            return
        servers = event.servers if isinstance(event, ListChanged) else None
        known = kinds.get(kind, set())
        # News of no server in particular (None) is told to every session.
        kinds[kind] = None if servers is None or known is None else known | servers
        dirty.set()

    unsubscribe = bus.subscribe_remote(on_event)
    try:
        while True:
            await dirty.wait()
            dirty = anyio.Event()
            told, kinds = kinds, {}
            for kind in sorted(told):
                servers = told[kind]
                await tell(kind, None if servers is None else frozenset(servers))
    finally:
        unsubscribe()


@contextlib.asynccontextmanager
async def open_shared_state(
    url: str | None, *, namespace: str
) -> AsyncGenerator[SharedState | None]:
    """An entered `SharedState` on ``url``, or None without a URL (one replica alone)."""
    if url is None:
        yield None
        return
    async with SharedState(url, namespace=namespace) as shared:
        yield shared
