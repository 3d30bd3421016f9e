"""Principals' logins, encrypted at rest: on disk, or in Redis when replicas share them.

``serve`` with ``credentials = "per_principal"`` keeps a login per principal (client token)
and server. Those tokens act as a person at a third-party service, and a gateway's disk or
Redis is read by more than that person, so every record is sealed with Fernet
(AES-128-CBC with HMAC-SHA256, from ``cryptography``) under the key in
``MCPMOUNT_TOKEN_KEY`` before it is written: a record, its file name and its Redis key hold
neither a token nor the principal's identity in the clear (names are digests). Several
comma-separated keys rotate: the first seals, each opens. A record sealed with a key no
longer held reads as no login (the principal logs in again), never as an error.

`SealedTokens` is a `TokenStore` whose records are sealed: `Login` and the SDK's provider
work on it as on the user's own logins (refresh, its lock, the issuer's keys), one store
per principal. Its records are files in a directory, or Redis values (``serve
--shared-state``) so that a login finished at one replica is used by every other.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import os
import secrets
import tempfile
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

import anyio
from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from mcpmount.auth._store import LOCK_WAIT, Record, TokenStore
from mcpmount.config import TOKEN_KEY_ENV, token_key_problem

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["SealedTokens", "Sealer"]

logger = logging.getLogger(__name__)

_POLL: Final = 0.05
_REDIS_TIMEOUT: Final = 2.0
"""Seconds a Redis request of a sealed record may take (a session's open, a refresh)."""
_PREFIX: Final = "mcpmount:logins:"
_RELEASE: Final = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
)


class Sealer:
    """Seals and opens records with the keys of ``MCPMOUNT_TOKEN_KEY`` (see the module).

    Raises:
        ValueError: ``keys`` holds no Fernet key (the message says what to set).
    """

    def __init__(self, keys: str | None) -> None:
        if (problem := token_key_problem(keys)) is not None or keys is None:
            raise ValueError(problem)
        self._fernet = MultiFernet([Fernet(key.strip().encode()) for key in keys.split(",")])

    @classmethod
    def from_environment(cls) -> Sealer:
        """The sealer of ``MCPMOUNT_TOKEN_KEY``.

        Raises:
            ValueError: It is not set, or holds no key.
        """
        return cls(os.environ.get(TOKEN_KEY_ENV))

    def seal(self, data: dict[str, object]) -> bytes:
        return self._fernet.encrypt(json.dumps(data).encode())

    def open(self, sealed: bytes) -> dict[str, Any]:
        """The record ``sealed`` holds; empty if it cannot be opened with these keys."""
        try:
            data = json.loads(self._fernet.decrypt(sealed))
        except (InvalidToken, ValueError):
            return {}
        return cast("dict[str, Any]", data) if isinstance(data, dict) else {}

    def name(self, *key: str) -> str:
        """The name of the record of ``key``: a digest of it, the same under every key (a
        rotation keeps finding the records). It does not show whose a record is, but one
        who guesses an identity can tell which records are its (never what they hold)."""
        return hashlib.sha256("\n".join(key).encode()).hexdigest()[:40]


class SealedTokens(TokenStore):
    """One principal's logins, sealed (see the module docstring).

    Args:
        principal: Whose logins these are (`Principal.identity`).
        sealer: Seals every record.
        directory: Where the files are (and, with Redis, nothing).
        redis: A Redis client (``serve --shared-state``); None: files.
    """

    def __init__(
        self, principal: str, sealer: Sealer, directory: Path, redis: Redis | None = None
    ) -> None:
        super().__init__(directory)
        self.principal = principal
        self._sealer = sealer
        self._redis = redis

    def _record(self, *key: str) -> Record:
        name = self._sealer.name(self.principal, *key)
        if self._redis is not None:
            return _RedisRecord(self.directory / f"{name}.sealed", self._sealer, self._redis)
        return _SealedRecord(self.directory / f"{name}.sealed", self._sealer)

    def record(self, *key: str) -> Record:
        """A sealed record of this principal's beside its logins (a pending login's)."""
        return self._record(*key)


class _SealedRecord(Record):
    """A record in a file, sealed."""

    def __init__(self, path: Path, sealer: Sealer) -> None:
        super().__init__(path)
        self._sealer = sealer

    def read(self) -> dict[str, Any]:
        try:
            return self._sealer.open(self.path.read_bytes())
        except FileNotFoundError:
            return {}

    def replace(self, data: dict[str, object]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(self._sealer.seal(data))
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


class _RedisRecord(Record):
    """A record as one Redis value, sealed; its lock a Redis key of its own.

    The Redis client is the synchronous one: `Login` reads its records synchronously, and
    it does so when a principal's session opens, logs in or refreshes, not per call.
    """

    def __init__(self, path: Path, sealer: Sealer, redis: Redis) -> None:
        super().__init__(path)
        self._sealer = sealer
        self._redis = redis
        self._key = _PREFIX + path.stem

    def read(self) -> dict[str, Any]:
        sealed = cast("bytes | None", self._redis.get(self._key))
        return self._sealer.open(sealed) if sealed is not None else {}

    def replace(self, data: dict[str, object]) -> None:
        self._redis.set(self._key, self._sealer.seal(data))

    def forget(self) -> bool:
        return bool(self._redis.delete(self._key))

    @contextlib.asynccontextmanager
    async def locked(self) -> AsyncGenerator[None]:
        # Held by one replica at a time; it expires by itself if that replica dies holding it.
        lock, mine = self._key + ":lock", secrets.token_hex(8)
        milliseconds = int(LOCK_WAIT * 1000)
        with anyio.fail_after(LOCK_WAIT):
            for attempt in itertools.count():
                if self._redis.set(lock, mine, nx=True, px=milliseconds):
                    break
                if attempt == 0:
                    logger.info("waiting for another replica's OAuth refresh (%s)", self.path.stem)
                await anyio.sleep(_POLL)
        try:
            yield
        finally:
            self._redis.eval(_RELEASE, 1, lock, mine)  # only its own: it may have expired


def redis_client(url: str) -> Redis:
    """A synchronous Redis client for sealed records, each request bounded."""
    import redis  # the redis extra; serve --shared-state has checked it is there

    return redis.Redis.from_url(  # pyright: ignore[reportUnknownMemberType]
        url, socket_timeout=_REDIS_TIMEOUT, socket_connect_timeout=_REDIS_TIMEOUT
    )
