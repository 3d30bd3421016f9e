"""Where tool vectors are kept between runs: the `VectorStore` protocol, and a Redis that
many registries share (`RedisVectors`); the file on disk is `mcpmount.semantic._vector_cache`.

A vector is keyed by the xxh3-64 of its tool's text (see `mcpmount.semantic._ranker`) and
by the model (the first 16 hex digits of its SHA-256, and its size), so one store serves
any number of models and servers. Stores are optimizations only: what is read back is
checked (the size, finite and of unit length) and anything else is a miss; a store that
fails is logged and skipped, never an error of search.

In Redis (the registry's ``cache = "redis://..."``) a vector is the ``dims`` little-endian
float32 of one key, ``mcpmount:vectors:<model SHA-256, 16 hex digits>-<dims>:<text key,
16 hex digits>``, expiring `EXPIRE` seconds after its last write, read `_CHUNK` keys to an
``MGET`` and written ``_CHUNK`` to a pipeline. It is a thin store on the process's
`mcpmount.redis.RedisConnection` to that Redis, reached from the worker thread that
computes vectors (an AnyIO one, whose event loop holds the client); every request is
bounded by `_TIMEOUT`, and a Redis that cannot be reached is warned of once and left
alone for a while.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np
import numpy.typing as npt

from mcpmount.redis import Purpose, redis_connection
from mcpmount.semantic._embedding import Vectors

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["EXPIRE", "RedisVectors", "VectorStore", "valid_rows"]


EXPIRE: Final = 30 * 86400
"""Seconds a vector lives in Redis after its last write: the vectors of tools nobody
mounts any more do not pile up."""

_TIMEOUT: Final = 2.0
"""Seconds one request (or connecting) may take before the store counts as unreachable."""

_CHUNK: Final = 1000
"""Keys per ``MGET`` (and vectors per pipeline): about 1.5 MB of 384-dimension vectors."""

_PURPOSE: Final = Purpose("the shared vector store", "vectors are computed here")


class VectorStore(Protocol):
    """Vectors by text key, for one model; any thread, never raises."""

    def get(self, keys: Sequence[int]) -> dict[int, Vectors]:
        """The vectors the store has of ``keys``; a failure is a miss."""
        ...

    def put(self, vectors: Mapping[int, Vectors]) -> None:
        """Keep ``vectors`` (text key -> vector); a failure is logged and skipped."""
        ...


def valid_rows(vectors: Vectors) -> npt.NDArray[np.bool_]:
    """Which rows of ``vectors`` are finite and of unit length (what a store may return)."""
    norms = np.linalg.norm(vectors, axis=1)
    return np.isfinite(norms) & (np.abs(norms - 1.0) < 1e-3)


class RedisVectors:
    """The vectors of one model in the Redis at ``url`` (``redis://``, ``rediss://`` or
    ``unix://``); needs the ``redis`` package (the ``redis`` extra). Used from an AnyIO
    worker thread; from any other, every look-up is a miss.

    Args:
        url: The Redis (the registry's ``cache``); shown as `mcpmount.config.redacted_url`
            does.
        model_sha256: The SHA-256 of the graph that runs (`Embedder.sha256`: for the packaged
            model, its int8 graph's), naming its keys: two graphs' vectors never mix.
        dims: The model's vector size.
    """

    __slots__ = ("_redis", "dims", "prefix")

    def __init__(self, url: str, model_sha256: str, dims: int) -> None:
        self._redis = redis_connection(url)
        self.dims = dims
        self.prefix = f"mcpmount:vectors:{model_sha256[:16]}-{dims}:"

    def __repr__(self) -> str:
        return f"<RedisVectors {self.prefix}*>"

    def _name(self, key: int) -> str:
        return f"{self.prefix}{key:016x}"

    def get(self, keys: Sequence[int]) -> dict[int, Vectors]:
        found = self._redis.from_thread(partial(self._read, keys)) if keys else None
        if not found:
            return {}
        vectors = np.frombuffer(b"".join(v for _, v in found), "<f4").reshape(-1, self.dims)
        good = valid_rows(vectors).tolist()
        rows = vectors.astype(np.float32)
        return {key: rows[i] for i, (key, _) in enumerate(found) if good[i]}

    def put(self, vectors: Mapping[int, Vectors]) -> None:
        if vectors:
            self._redis.from_thread(partial(self._write, list(vectors.items())))

    async def _read(self, keys: Sequence[int]) -> list[tuple[int, bytes]] | None:
        """The values of the right size under ``keys``; None if Redis failed."""
        width = self.dims * 4
        found: list[tuple[int, bytes]] = []
        for start in range(0, len(keys), _CHUNK):
            part = keys[start : start + _CHUNK]
            values = await self._request(partial(_mget, [self._name(key) for key in part]))
            if values is None:
                return None
            found += [
                (key, value)
                for key, value in zip(part, values, strict=True)
                if isinstance(value, bytes) and len(value) == width
            ]
        return found

    async def _write(self, items: list[tuple[int, Vectors]]) -> None:
        for start in range(0, len(items), _CHUNK):
            part = items[start : start + _CHUNK]
            named = {self._name(key): vector.astype("<f4").tobytes() for key, vector in part}
            if await self._request(partial(_set, named)) is None:
                return

    async def _request(
        self, operation: Callable[[Redis], Awaitable[list[Any]]]
    ) -> list[Any] | None:
        return await self._redis.request(operation, purpose=_PURPOSE, timeout=_TIMEOUT)


async def _mget(names: list[str], client: Redis) -> list[Any]:
    return await client.mget(names)


async def _set(named: dict[str, bytes], client: Redis) -> list[Any]:
    pipe = client.pipeline(transaction=False)
    for name, value in named.items():
        pipe.set(name, value, ex=EXPIRE)
    return await pipe.execute()
