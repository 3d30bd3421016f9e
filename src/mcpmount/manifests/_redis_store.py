"""Cached manifests in Redis (``cache = "redis://..."``): one store for many replicas.

Replicas of ``mcpmount serve``, and every machine that reaches the same Redis, then start
from the manifests any one of them listed. An entry is the same bytes `FileStore` keeps,
under ``mcpmount:manifest:<spec key>``, expiring a while after its last write (the
registry's ``manifest_ttl``, at least a day) so that the keys of specs nobody uses any
more do not pile up. What is read back is checked like a file entry (`decode_entry`,
the tool checks, the lock file's pins): Redis is shared, so it is not trusted.

A cache must never stop a server from mounting: it is a thin store on the process's
`RedisConnection`, which bounds each request (`_TIMEOUT`), and while that Redis does not
answer, every read is a miss and every write is skipped (one warning for the process, and
Redis left alone for a while, so thirty servers do not each wait for it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from mcpmount.redis import Purpose

__all__ = ["RedisStore"]

_TIMEOUT: Final = 2.0
"""Seconds one request (or connecting) may take before the cache counts as unreachable."""

_MIN_EXPIRY: Final = 86400
"""Entries live at least this long in Redis (seconds), whatever ``manifest_ttl`` says."""


class RedisStore:
    """Manifest entries in the Redis at ``url`` (``redis://``, ``rediss://`` or ``unix://``).

    It holds the process's connection to that Redis from its first request until `aclose`.
    It is shared: lists their server marked ``private`` are not put in it.

    Args:
        url: The Redis to use; it is logged as `mcpmount.config.redacted_url` shows it.
        expire: Seconds an entry lives after its last write (at least a day).
        prefix: Put before each spec key.
    """

    shared = True

    def __init__(self, url: str, *, expire: float, prefix: str = "mcpmount:manifest:") -> None:
        # mcpmount.redis loads with the first store: a registry without one never needs it.
        from mcpmount.redis import Purpose, redis_connection

        self._purpose: Purpose = Purpose(
            "the manifest cache", "servers mount from their live lists"
        )
        self.redis = redis_connection(url)
        """The process's connection to the Redis, shared with its other stores."""
        self.expire = max(int(expire), _MIN_EXPIRY)
        self.prefix = prefix
        self._held = False

    def __repr__(self) -> str:
        return f"RedisStore({self.redis.shown!r})"

    def _hold(self) -> None:
        if not self._held:
            self._held = True
            self.redis.hold()

    async def get(self, key: str) -> bytes | None:
        self._hold()
        data = await self.redis.request(
            lambda client: client.get(self.prefix + key), purpose=self._purpose, timeout=_TIMEOUT
        )
        return data if isinstance(data, bytes) else None

    async def put(self, key: str, data: bytes) -> None:
        self._hold()
        await self.redis.request(
            lambda client: client.set(self.prefix + key, data, ex=self.expire),
            purpose=self._purpose,
            timeout=_TIMEOUT,
        )

    async def aclose(self) -> None:
        """Let go of the connection (its client closes if nothing else holds it); the store
        can be used again afterwards."""
        if self._held:
            self._held = False
            await self.redis.release()
