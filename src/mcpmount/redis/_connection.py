"""`RedisConnection`: a process's one client of one Redis, and `redis_connection` to find it.

Every store on one Redis URL in a process (the cached lists, the tool vectors, the
listen bus, the activations) gets the same `RedisConnection` from `redis_connection`:
one ``redis.asyncio`` client, so one connection pool, one outage state and one warning.
Its connections are named ``mcpmount:<pid>:<n>`` (``CLIENT LIST``), the process's n-th
client, so an operator can tell processes and clients apart.

The client lives while someone holds the connection: whoever owns a registry's store or
``serve``'s shared state holds it (`hold` and `release`, or `held`), and the last to let
go closes it. A request made while nobody holds it opens a client for itself and closes
it after, so nothing is left open by a store that has no owner (an index alone). A
client belongs to the event loop that opened it; a worker thread reaches it through
`from_thread`.

The ``redis`` package (the ``redis`` extra) is imported only when a client is made, or
by `check`, which says how to install it.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import logging
import os
import threading
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio
import anyio.from_thread

from mcpmount.config import redacted_url
from mcpmount.errors import ConfigError
from mcpmount.redis._outage import Outage, Purpose

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import PubSub

__all__ = ["RedisConnection", "redis_connection"]

logger = logging.getLogger("mcpmount.redis")

T = TypeVar("T")

_INSTALL: Final = 'needs the redis package: pip install "mcpmount[redis]"'

_TIMEOUT: Final = 2.0
"""Seconds a request waits for Redis by default before it counts as unanswered."""

_CONNECT_TIMEOUT: Final = 2.0
"""Seconds to connect; the client's own bound, under each request's."""

_READ_TIMEOUT: Final = 5.0
"""Seconds a socket read may take: the client's own bound, under each request's (a
listen bus waits up to this long for a message)."""

_CLOSE_TIMEOUT: Final = 5.0
"""Seconds closing a client may take."""

_SERIALS = itertools.count(1)
"""Numbers the clients this process opens, for their connections' names."""

_CONNECTIONS: dict[str, RedisConnection] = {}
"""The process's connections by URL, kept for its life with their outage state (a client
only while one is held)."""
_CONNECTIONS_LOCK = threading.Lock()


def redis_connection(url: str) -> RedisConnection:
    """Return this process's connection to the Redis at ``url`` (made on first use).

    Never raises: a ``url`` that cannot be used fails its requests (see `check`).
    """
    with _CONNECTIONS_LOCK:  # a vector store may ask from a worker thread
        connection = _CONNECTIONS.get(url)
        if connection is None:
            connection = _CONNECTIONS[url] = RedisConnection(url)
        return connection


def _redis_asyncio() -> Any:
    """The ``redis.asyncio`` module; ImportError without the redis extra."""
    return importlib.import_module("redis.asyncio")


class RedisConnection:
    """The connection to the Redis at ``url`` (``redis://``, ``rediss://`` or ``unix://``).

    Use `redis_connection` to get the process's one; this makes a separate one.

    Args:
        url: The Redis; messages show it as `redacted_url` does (`shown`).
    """

    __slots__ = ("_client", "_holders", "_outage", "_url", "shown")

    def __init__(self, url: str) -> None:
        self._url = url
        self.shown = redacted_url(url)
        """The URL fit for messages: no password."""
        self._outage = Outage(self.shown)
        self._client: Redis | None = None
        self._holders = 0

    def __repr__(self) -> str:
        return f"<RedisConnection {self.shown} holders={self._holders}>"

    def check(self, where: str) -> None:
        """Raise now if no request can ever succeed.

        Args:
            where: What the URL configures, named by the error (``"shared state"``).

        Raises:
            ConfigError: The redis package is missing, or the URL is not a Redis URL.
        """
        try:
            _redis_asyncio()
            connection: Any = importlib.import_module("redis.asyncio.connection")
        except ImportError:
            raise ConfigError(where, [_INSTALL]) from None
        try:
            connection.parse_url(self._url)
        except ValueError as exc:
            raise ConfigError(where, [f"{self.shown}: {exc}"]) from None

    def health(self) -> str | None:
        """None while Redis answers (or was not asked yet); else why it does not
        (``"redis unreachable: ..."``)."""
        return self._outage.problem

    # -- lifetime -----------------------------------------------------------------------------

    def hold(self) -> None:
        """Keep the client open until a matching `release` (it opens on first use)."""
        self._holders += 1

    async def release(self) -> None:
        """Let go of a `hold`; the last holder to let go closes the client."""
        self._holders -= 1
        if self._holders == 0 and self._client is not None:
            client, self._client = self._client, None
            # Closing must finish even under cancellation, or the sockets would leak.
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_TIMEOUT):
                await client.aclose(close_connection_pool=True)

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncGenerator[RedisConnection]:
        """Hold the connection for the block."""
        self.hold()
        try:
            yield self
        finally:
            await self.release()

    def _opened(self) -> Redis:
        if self._holders == 0:
            raise RuntimeError(f"{self!r} is used while nobody holds it")
        client = self._client
        if client is None:
            redis = _redis_asyncio()
            retry: Any = importlib.import_module("redis.asyncio.retry")
            backoff: Any = importlib.import_module("redis.backoff")
            client = self._client = redis.Redis.from_url(
                self._url,
                client_name=f"mcpmount:{os.getpid()}:{next(_SERIALS)}",
                socket_connect_timeout=_CONNECT_TIMEOUT,
                socket_timeout=_READ_TIMEOUT,
                # One immediate retry: the first command after Redis restarted meets a dead
                # connection of the pool; a retry on a new one answers. More would only
                # hold the request.
                retry=retry.Retry(backoff.NoBackoff(), 1),
            )
        return client

    # -- requests -----------------------------------------------------------------------------

    async def request(
        self,
        operation: Callable[[Redis], Awaitable[T]],
        *,
        purpose: Purpose,
        timeout: float = _TIMEOUT,
    ) -> T | None:
        """Run ``operation`` on the client within ``timeout`` seconds; never raises.

        Returns:
            What it returned; None if Redis failed (the operation raised, or did not finish
            in time: an outage, warned of once) or is left alone after it failed. Where
            None is a result too (a ``GET`` of no key), it must mean the same as a failure.
        """
        if self._outage.leave_alone():
            return None
        started = time.monotonic()
        why = f"no answer within {timeout:g} s"
        async with self.held():
            with anyio.move_on_after(timeout):
                try:
                    result = await operation(self._opened())
                except Exception as exc:  # the Redis boundary: a failure is an outage
                    why = _why(exc)
                else:
                    self._outage.answered()
                    return result
        self._outage.failed(purpose, why, started=started)
        return None

    def from_thread(self, operation: Callable[[], Awaitable[T]]) -> T | None:
        """Run ``operation`` (which makes requests) on the event loop, from one of its AnyIO
        worker threads, holding the connection meanwhile; blocks until it is done.

        Returns:
            What it returned; None if there is no event loop to run it on (not a worker
            thread, or the loop has finished).
        """

        async def holding() -> T:
            async with self.held():
                return await operation()

        try:
            return anyio.from_thread.run(holding)
        except RuntimeError as exc:
            logger.debug("%s: not used from this thread: %s", self.shown, exc)
            return None

    # -- what a request cannot do -------------------------------------------------------------

    def pubsub(self) -> PubSub:
        """A pub/sub on a connection of its own, from the client; hold the connection
        while it is open, and report what becomes of it (`failed`, `answered`)."""
        client: Any = self._opened()  # redis-py's annotations are partly unknown to pyright
        return client.pubsub()

    def failed(self, purpose: Purpose, exc: BaseException) -> None:
        """Count a failure outside `request` (a pub/sub that lost its connection)."""
        self._outage.failed(purpose, _why(exc), started=time.monotonic())

    def answered(self) -> None:
        """Count an answer outside `request` (a pub/sub that subscribed)."""
        self._outage.answered()


def _why(exc: BaseException) -> str:
    """How ``exc`` reads in a message: ``ConnectionError: Error 111 connecting to ...``."""
    return f"{type(exc).__name__}: {str(exc).rstrip('.')}"
