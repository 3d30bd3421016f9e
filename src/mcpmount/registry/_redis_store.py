"""Cached manifests in Redis (``cache = "redis://..."``): one store for many replicas.

Replicas of ``mcpmount serve``, and every machine that reaches the same Redis, then start
from the manifests any one of them listed. An entry is the same bytes `FileStore` keeps,
under ``mcpmount:manifest:<spec key>``, expiring a while after its last write (the
registry's ``manifest_ttl``, at least a day) so that the keys of specs nobody uses any
more do not pile up. What is read back is checked like a file entry (`decode_entry`,
the tool checks, the lock file's pins): Redis is shared, so it is not trusted.

A cache must never stop a server from mounting: each request is bounded (`_TIMEOUT`), and
a Redis that cannot be reached is a miss, logged once, and not asked again for
`_RETRY_AFTER` seconds, so thirty servers do not each wait for it.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Final, Protocol, cast

from mcpmount.config import redacted_url

if TYPE_CHECKING:
    import redis.asyncio

__all__ = ["RedisStore"]

logger = logging.getLogger(__name__)

_TIMEOUT: Final = 2.0
"""Seconds one request (or connecting) may take before the cache counts as unreachable."""

_RETRY_AFTER: Final = 30.0
"""Seconds an unreachable Redis is left alone before it is asked again."""

_MIN_EXPIRY: Final = 86400
"""Entries live at least this long in Redis (seconds), whatever ``manifest_ttl`` says."""


class RedisStore:
    """Manifest entries in the Redis at ``url`` (``redis://``, ``rediss://`` or ``unix://``).

    Args:
        url: The Redis to use; it is logged as `redacted_url` shows it.
        expire: Seconds an entry lives after its last write (at least a day).
        prefix: Put before each spec key.
        retry_after: Seconds an unreachable Redis is left alone before it is asked again.
    """

    def __init__(
        self,
        url: str,
        *,
        expire: float,
        prefix: str = "mcpmount:manifest:",
        retry_after: float = _RETRY_AFTER,
    ) -> None:
        self.url = url
        self.retry_after = retry_after
        self.expire = max(int(expire), _MIN_EXPIRY)
        self.prefix = prefix
        self._client: redis.asyncio.Redis | None = None
        self._down_until = 0.0

    def __repr__(self) -> str:
        return f"RedisStore({redacted_url(self.url)!r})"

    def _redis(self) -> redis.asyncio.Redis:
        if self._client is None:
            import redis.asyncio  # the redis extra; checked when the config was loaded

            from_url = cast("_FromUrl", redis.asyncio.Redis.from_url)  # pyright: ignore[reportUnknownMemberType]
            self._client = from_url(
                self.url, socket_timeout=_TIMEOUT, socket_connect_timeout=_TIMEOUT
            )
        return self._client

    async def get(self, key: str) -> bytes | None:
        if time.monotonic() < self._down_until:
            return None
        try:
            data = await self._redis().get(self.prefix + key)
        except Exception as exc:  # the redis package's errors, OSError, a bad URL: a miss
            self._unreachable(exc)
            return None
        return data if isinstance(data, bytes) else None

    async def put(self, key: str, data: bytes) -> None:
        if time.monotonic() < self._down_until:
            return
        try:
            await self._redis().set(self.prefix + key, data, ex=self.expire)
        except Exception as exc:
            self._unreachable(exc)

    async def aclose(self) -> None:
        """Close the connections; the store can be used again afterwards."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def _unreachable(self, exc: Exception) -> None:
        now = time.monotonic()
        said = now < self._down_until  # concurrent requests failed together: say it once
        self._down_until = now + self.retry_after
        if said:
            return
        logger.warning(
            "the manifest cache at %s cannot be used (%s: %s); servers mount from their "
            "live lists, and it is tried again in %g s",
            redacted_url(self.url),
            type(exc).__name__,
            exc,
            self.retry_after,
        )


class _FromUrl(Protocol):
    def __call__(
        self, url: str, *, socket_timeout: float, socket_connect_timeout: float
    ) -> redis.asyncio.Redis: ...
