"""`Counters`: where the calls of each window are counted, in memory or in a shared Redis.

In Redis, counting is the ``limits`` library's, through its asyncio API (its strategies
and storage are coroutines, so a check never blocks the event loop). In this process's
memory it is `MemoryWindows`': exact moving windows, whatever the strategy, since a
timestamp per call costs nothing there and the strictest count is never looser than the
rule. (The library's asyncio memory storage expires its entries in a task that hops to a
worker thread after every hit: 0.25 ms of CPU a call through ``serve``, measured with
tests/bench/gateway_overhead.py, where this costs a few microseconds.) Alone, a process
counts in its own memory. With ``serve
--shared-state``, the counters are keys of that Redis (``<namespace>:limits/...``),
which every replica of the config counts in, so a limit holds across them; the storage
has a connection pool of its own on the same URL, closed on leaving.

Redis failing does not stop calls, nor let them all through: each request to it goes
through the process's `RedisConnection` (bounded in time; an outage is warned of once,
backed off from, and shown by ``/readyz``), and while it does not answer each replica
counts in its own memory, so a limit still holds per replica.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, Self

from limits import RateLimitItem
from limits.aio.storage import RedisStorage
from limits.aio.strategies import (
    FixedWindowRateLimiter,
    MovingWindowRateLimiter,
    RateLimiter,
    SlidingWindowCounterRateLimiter,
)

from mcpmount.redis import Purpose, redis_connection

if TYPE_CHECKING:
    from redis.asyncio import ConnectionPool

    from mcpmount.redis import RedisConnection

__all__ = ["Counters", "MemoryWindows", "Spent", "Strategy"]

Strategy = Literal["moving-window", "fixed-window", "sliding-window-counter"]

_STRATEGIES: Final[dict[Strategy, type[RateLimiter]]] = {
    "moving-window": MovingWindowRateLimiter,
    "fixed-window": FixedWindowRateLimiter,
    "sliding-window-counter": SlidingWindowCounterRateLimiter,
}

_PURPOSE: Final = Purpose("the shared rate limits", "each replica counts its own calls")

_TIMEOUT: Final = 1.0
"""Seconds a count waits for Redis before the replica counts in its own memory."""

_SCHEMES: Final = {"redis://": "async+redis://", "rediss://": "async+rediss://"}
_SCHEMES_UNIX: Final = "async+redis+unix://"


@dataclass(frozen=True, slots=True)
class Spent:
    """A window with no call left: when the next one may be made."""

    retry_after: int
    """Whole seconds until the window has room again (at least 1)."""


class Counters:
    """The windows of every rate limit, counted in memory or in the Redis at ``url``.

    Use as an async context manager: leaving closes the Redis pool.

    Args:
        url: The ``--shared-state`` Redis URL; None: this process's memory alone.
        namespace: Prepended to every Redis key (one per served config).
    """

    def __init__(self, url: str | None = None, *, namespace: str = "mcpmount") -> None:
        self._memory = MemoryWindows()
        self._shared: dict[Strategy, RateLimiter] = {}
        self._url = url
        self._prefix = f"{namespace}:limits"
        self._connection: RedisConnection | None = None
        self._pool: ConnectionPool | None = None
        self._storage: RedisStorage | None = None

    @property
    def shared(self) -> bool:
        """Whether the counts go to a Redis the replicas share."""
        return self._url is not None

    async def __aenter__(self) -> Self:
        if self._url is not None:
            from redis.asyncio import ConnectionPool  # the redis extra: --shared-state has it

            self._connection = redis_connection(self._url)
            self._connection.hold()
            self._pool = ConnectionPool.from_url(  # pyright: ignore[reportUnknownMemberType]
                self._url, socket_connect_timeout=_TIMEOUT, socket_timeout=_TIMEOUT
            )
            self._storage = RedisStorage(
                _limits_uri(self._url),
                implementation="redispy",
                key_prefix=self._prefix,
                connection_pool=self._pool,  # pyright: ignore[reportArgumentType]
            )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        pool, self._pool = self._pool, None
        connection, self._connection = self._connection, None
        self._storage = None
        self._shared.clear()
        if pool is not None:
            await pool.aclose()
        if connection is not None:
            await connection.release()

    async def hit(self, strategy: Strategy, item: RateLimitItem, *key: str) -> Spent | None:
        """Count one call against ``item`` for ``key``; None if it fits in the window, else
        when to retry (the call is then not counted)."""
        key = (strategy, *key)  # each strategy keeps its own kind of Redis key
        if self._connection is not None and self._storage is not None:
            limiter = self._limiter(self._shared, strategy, self._storage)

            async def shared(_: Any) -> Spent | Literal[True]:
                return await _hit(limiter, item, key) or True

            counted = await self._connection.request(shared, purpose=_PURPOSE, timeout=_TIMEOUT)
            if counted is not None:
                return None if counted is True else counted
        return self._memory.hit(item, key)

    @staticmethod
    def _limiter(
        made: dict[Strategy, RateLimiter],
        strategy: Strategy,
        storage: RedisStorage,
    ) -> RateLimiter:
        limiter = made.get(strategy)
        if limiter is None:
            limiter = made[strategy] = _STRATEGIES[strategy](storage)
        return limiter


class MemoryWindows:
    """Moving windows in this process's memory: the times of each key's calls in its last
    window. A key whose window has emptied is dropped by a sweep every `SWEEP` hits, so
    the table holds only keys called within their window."""

    SWEEP: Final = 1024

    def __init__(self) -> None:
        self._calls: dict[tuple[str, ...], tuple[float, deque[float]]] = {}
        self._hits = 0

    def hit(self, item: RateLimitItem, key: tuple[str, ...]) -> Spent | None:
        """Count one call against ``item`` for ``key``; None if it fits in the window, else
        when to retry (the call is then not counted)."""
        now = time.monotonic()
        window = float(item.get_expiry())
        held = self._calls.get(key)
        calls = held[1] if held is not None else deque[float]()
        self._calls[key] = (window, calls)
        while calls and calls[0] <= now - window:
            calls.popleft()
        spent = None
        if len(calls) >= item.amount:
            # The call fits once all but amount - 1 of the calls in the window have left it.
            oldest = calls[len(calls) - item.amount]
            spent = Spent(max(1, math.ceil(oldest + window - now)))
        else:
            calls.append(now)
        self._hits += 1
        if self._hits % self.SWEEP == 0:
            self._sweep(now)  # after the count: this key is not empty now
        return spent

    def _sweep(self, now: float) -> None:
        for key, (window, calls) in list(self._calls.items()):
            if not calls or calls[-1] <= now - window:
                del self._calls[key]


async def _hit(limiter: RateLimiter, item: RateLimitItem, key: tuple[str, ...]) -> Spent | None:
    if await limiter.hit(item, *key):
        return None
    stats = await limiter.get_window_stats(item, *key)
    return Spent(max(1, math.ceil(stats.reset_time - time.time())))


def _limits_uri(url: str) -> str:
    """``url`` as the ``limits`` library names a Redis (its pool is made from ``url``)."""
    for scheme, theirs in _SCHEMES.items():
        if url.startswith(scheme):
            return theirs + url.removeprefix(scheme)
    return _SCHEMES_UNIX + url.removeprefix("unix://")
