"""`SharedState`: what the replicas of one served config share, on one Redis server.

It owns the Redis client (from a URL: ``redis://host:6379/0``, ``rediss://...``,
``unix:///path/redis.sock``) and what uses it: the ``subscriptions/listen`` bus
(`RedisSubscriptionBus`, channel ``<namespace>:events``) and the activation store
(`RedisActivationStore`, keys ``<namespace>:activations:<key>``). Entering it starts the
bus's reader and waits briefly for Redis; an unreachable Redis does not stop it (the
replica serves from its own state, and `SharedState.health` says why). Leaving it stops
the reader and closes every connection.

Needs the ``redis`` extra (``pip install "mcpmount[redis]"``), imported only here and only
when a shared state is opened.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self

import anyio
from mcp.server.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ServerEvent,
    ToolsListChanged,
)

from mcpmount.config import RegistryConfig, redacted_url
from mcpmount.errors import ConfigError
from mcpmount.serve.front import Kind, ListChanged
from mcpmount.serve.replicas._activations import RedisActivationStore
from mcpmount.serve.replicas._bus import RedisSubscriptionBus

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["SharedState", "open_shared_state", "shared_namespace", "tell_of_remote_changes"]

logger = logging.getLogger(__name__)

_RECOVER_EVERY: Final = 1.0
"""Seconds between two attempts to reach Redis again for activations, once it failed."""

_KINDS: Final[dict[type[ServerEvent], Kind]] = {
    ToolsListChanged: "tools",
    PromptsListChanged: "prompts",
    ResourcesListChanged: "resources",
}
"""The list each event says changed (a resource update is the listen streams' alone)."""

_WHAT: Final = "shared state"
"""Where a `ConfigError` of the shared state points: the ``--shared-state`` URL."""


def _client(url: str, timeout: float) -> Redis:
    try:
        redis: Any = importlib.import_module("redis.asyncio")
        backoff: Any = importlib.import_module("redis.backoff")
        retry: Any = importlib.import_module("redis.asyncio.retry")
    except ImportError:
        raise ConfigError(
            _WHAT, ['sharing state needs the redis package: pip install "mcpmount[redis]"']
        ) from None
    try:
        client: Redis = redis.Redis.from_url(
            url,
            socket_connect_timeout=timeout,
            socket_timeout=5.0,
            # One immediate retry: the first command after Redis restarted meets the dead
            # connection; a retry on a new one answers. More would only hold requests.
            retry=retry.Retry(backoff.NoBackoff(), 1),
        )
    except ValueError as exc:
        raise ConfigError(_WHAT, [f"{redacted_url(url)}: {exc}"]) from None
    return client


class SharedState:
    """One Redis connection, and the bus and activation store replicas share through it.

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
        self.url = redacted_url(url)
        """The Redis URL as messages show it (`redacted_url`: no password)."""
        self._timeout = timeout
        self._client = _client(url, timeout)
        self.bus = RedisSubscriptionBus(self._client, f"{namespace}:events", timeout=timeout)
        """The ``subscriptions/listen`` fan-out every replica shares."""
        self.activations = RedisActivationStore(
            self._client, f"{namespace}:activations", timeout=timeout, ttl=ttl
        )
        """The tools searches activated, per session or conversation key."""
        self._stack: AsyncExitStack | None = None

    def health(self) -> str | None:
        """None while Redis serves; else why this replica is degraded (e.g.
        ``"redis unreachable: ..."``)."""
        return self.bus.health() or self.activations.health()

    async def __aenter__(self) -> Self:
        async with AsyncExitStack() as stack:
            stack.push_async_callback(self._close_client)
            tg = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(tg.cancel_scope.cancel)
            await tg.start(self.bus.run)
            tg.start_soon(self._recover_activations)
            with anyio.move_on_after(self._timeout):
                await self.bus.wait_reading()
            if (problem := self.health()) is not None:
                logger.warning("%s: %s; serving from this replica's state", self.url, problem)
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

    async def _close_client(self) -> None:
        with anyio.CancelScope(shield=True), anyio.move_on_after(5.0):
            await self._client.aclose()
            await self._client.connection_pool.disconnect()


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
