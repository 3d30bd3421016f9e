"""`RedisActivationStore`: the tools a session's or conversation's searches activated, in Redis.

A key (``"conv:<id>"``, ``"http:<session id>"``) holds an ordered, deduplicated list of tool
names, in first-activation order, shared by every replica: a Redis sorted set whose scores
count up (a script adds the new names after the last one, atomically). Each use refreshes
the key's expiry (``ttl``); a key holds at most ``max_names`` names (later ones are not
added: a listed tool never leaves a client's list).

Redis is never in the way of a request. Every key this replica uses is mirrored in memory
(at most ``max_keys``, least recently used dropped first, expiring like Redis's). It is a
thin store on the process's `mcpmount.redis.RedisConnection`: when Redis fails or does not
answer within ``timeout`` seconds, `load` answers from the mirror, `add` writes the mirror
only, the connection's health says why, and Redis is left alone for a while. Once Redis
answers again, the keys added or loaded meanwhile are written through (at the next use,
or `recover`; `health` says how many are left), and a `load` that finds Redis missing
names the mirror holds (a restarted, empty Redis) writes them back: activations only
grow, so the union is right.

Anyone who can write the Redis may have planted a key, so a bad one is the key's problem,
not an outage: a key of another type (Redis answers WRONGTYPE) is replaced, a name that is
not UTF-8 dropped, each with one warning, and at most ``max_names`` names are read. Only
a Redis that fails (connection, timeout, or an error of its own) degrades `health`.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

from mcpmount.redis import Purpose, RedisConnection

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisActivationStore"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_ADD: Final = """
local count = redis.call('ZCARD', KEYS[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local score = 0
if last[2] then score = tonumber(last[2]) + 1 end
for i = 3, #ARGV do
  if count >= tonumber(ARGV[2]) then break end
  if redis.call('ZADD', KEYS[1], 'NX', score, ARGV[i]) == 1 then
    score = score + 1
    count = count + 1
  end
end
if count > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count
"""
"""KEYS[1]: the sorted set; ARGV: expiry (ms), most names, then the names in order."""

_READ: Final = """
local names = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return names
"""
"""KEYS[1]: the sorted set; ARGV: expiry (ms), most names. At most that many are read, so
a set planted with more costs no more than a full one."""

_PURPOSE: Final = Purpose("the shared state", "this replica serves from its own state")


class _Mirror:
    """This replica's copy of the keys it used: LRU-bounded, expiring ``ttl`` after use."""

    def __init__(self, *, ttl: float, max_names: int, max_keys: int) -> None:
        self._ttl = ttl
        self._max_names = max_names
        self._max_keys = max_keys
        self._keys: OrderedDict[str, tuple[list[str], float]] = OrderedDict()

    def get(self, key: str) -> list[str]:
        entry = self._keys.get(key)
        if entry is None or time.monotonic() - entry[1] > self._ttl:
            self._keys.pop(key, None)
            return []
        self._keys[key] = (entry[0], time.monotonic())
        self._keys.move_to_end(key)
        return list(entry[0])

    def merge(self, key: str, names: Sequence[str]) -> list[str]:
        """Add ``names`` after the key's own (new ones only, within the bound); the result."""
        merged = self.get(key)
        seen = set(merged)
        for name in names:
            if len(merged) >= self._max_names:
                break
            if name not in seen:
                seen.add(name)
                merged.append(name)
        self._keys[key] = (merged, time.monotonic())
        self._keys.move_to_end(key)
        while len(self._keys) > self._max_keys:
            self._keys.popitem(last=False)
        return list(merged)


class RedisActivationStore:
    """Activated tool names per key, shared by replicas through Redis (an ``ActivationStore``).

    Args:
        redis: The connection to Redis; its holder keeps it open (`SharedState`).
        prefix: Prepended to every key (``"<prefix>:<key>"``), one per deployment.
        ttl: Seconds a key lives after its last use.
        max_names: The most names one key holds.
        max_keys: The most keys this replica mirrors in memory.
        timeout: Seconds one operation waits for Redis at most.
    """

    def __init__(
        self,
        redis: RedisConnection,
        prefix: str,
        *,
        ttl: float = 24 * 3600.0,
        max_names: int = 1000,
        max_keys: int = 10_000,
        timeout: float = 1.0,
    ) -> None:
        self.prefix = prefix
        self._redis = redis
        self._ttl_ms = int(ttl * 1000)
        self._max_names = max_names
        self._timeout = timeout
        self._mirror = _Mirror(ttl=ttl, max_names=max_names, max_keys=max_keys)
        self._unwritten: set[str] = set()
        self._writing = False

    def health(self) -> str | None:
        """None while Redis answers and holds what this replica activated; else why not."""
        if (problem := self._redis.health()) is not None:
            return problem
        if self._unwritten:
            return f"redis answers again; {len(self._unwritten)} activation keys to write"
        return None

    async def load(self, key: str) -> list[str]:
        """The names activated under ``key``, in first-activation order, on any replica."""
        local = self._mirror.get(key)
        stored = await self._request(partial(self._read, key))
        if stored is None:
            if local:  # Redis may come back empty: write what this replica holds then
                self._unwritten.add(key)
            return local
        known = set(stored)
        missing = [name for name in local if name not in known]
        if missing and await self._request(partial(self._write, key, missing)) is None:
            self._unwritten.add(key)
        return self._mirror.merge(key, stored + missing)

    async def add(self, key: str, names: Sequence[str]) -> None:
        """Activate ``names`` under ``key`` (those already there keep their place)."""
        self._mirror.merge(key, names)
        if await self._request(partial(self._write, key, list(names))) is None:
            self._unwritten.add(key)

    async def recover(self) -> None:
        """Write through what was activated while Redis was away, if it answers now
        (`SharedState` calls it every second, so it is written without a request)."""
        if self._unwritten and self._redis.health() is None:
            await self._write_through()

    async def _read(self, key: str, client: Redis) -> list[str]:
        try:
            # redis-py 8 types a script's call as sync-or-async: its answer here is a list.
            found = cast(
                "list[Any]",
                await client.register_script(_READ)(
                    keys=[self._key(key)], args=[self._ttl_ms, self._max_names]
                ),
            )
        except Exception as exc:
            if not _wrong_type(exc):
                raise
            await self._replace(key, client)
            return []
        names: list[str] = []
        bad: list[bytes] = []
        for member in found:
            try:
                names.append(member.decode() if isinstance(member, bytes) else str(member))
            except UnicodeDecodeError:
                bad.append(member)
        if bad:
            self._skipped(key, f"{len(bad)} of its names are not UTF-8; they are dropped")
            await client.zrem(self._key(key), *bad)
        return names

    async def _write(self, key: str, names: Sequence[str], client: Redis) -> object:
        args: list[Any] = [self._ttl_ms, self._max_names, *names]
        script = client.register_script(_ADD)
        try:
            return await script(keys=[self._key(key)], args=args)
        except Exception as exc:
            if not _wrong_type(exc):
                raise
        await self._replace(key, client)
        return await script(keys=[self._key(key)], args=args)

    async def _replace(self, key: str, client: Redis) -> None:
        """Delete ``key``, which holds something else than a sorted set, to write it anew."""
        self._skipped(key, "it is not a sorted set; it is replaced")
        await client.delete(self._key(key))

    def _skipped(self, key: str, why: str) -> None:
        # A bad entry is the key's, not Redis's: Redis answers, and health stays as it is.
        logger.warning("%s: skipped a bad activation entry %r: %s", self.prefix, key, why)

    def _key(self, key: str) -> str:
        return f"{self.prefix}:{key}"

    async def _request(self, operation: Callable[[Redis], Awaitable[T]]) -> T | None:
        """Run ``operation`` within ``timeout``; None if Redis failed (or is left alone),
        after writing through what is unwritten if it answered."""
        result = await self._redis.request(operation, purpose=_PURPOSE, timeout=self._timeout)
        if result is not None and self._unwritten:
            await self._write_through()
        return result

    async def _write_through(self) -> None:
        """Write the keys changed while Redis was away; those that fail stay for next time."""
        if self._writing:  # another task is at it
            return
        self._writing = True
        try:
            unwritten, self._unwritten = list(self._unwritten), set()
            for done, key in enumerate(unwritten):
                names = self._mirror.get(key)
                if not names:
                    continue
                written = await self._redis.request(
                    partial(self._write, key, names), purpose=_PURPOSE, timeout=self._timeout
                )
                if written is None:
                    self._unwritten.update(unwritten[done:])
                    return
        finally:
            self._writing = False


def _wrong_type(exc: Exception) -> bool:
    """Whether Redis refused an operation for the type of value under its key (WRONGTYPE):
    a bad entry, where any other error is Redis failing (connection, timeout, memory)."""
    from redis.exceptions import ResponseError  # installed: a client made the store

    return type(exc) is ResponseError and str(exc).startswith("WRONGTYPE ")
