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
``MGET`` and written in one pipeline. Each call opens one connection and closes it (the
calls are few, each of up to thousands of vectors, in the worker thread that computes
vectors); every request is bounded by `_TIMEOUT`, and a Redis that cannot be reached is
logged once and left alone for `_RETRY_AFTER` seconds.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

from mcpmount.semantic._embedding import Vectors

__all__ = ["EXPIRE", "RedisVectors", "VectorStore", "valid_rows"]

logger = logging.getLogger("mcpmount.semantic")

EXPIRE: Final = 30 * 86400
"""Seconds a vector lives in Redis after its last write: the vectors of tools nobody
mounts any more do not pile up."""

_TIMEOUT: Final = 2.0
"""Seconds one request (or connecting) may take before the store counts as unreachable."""

_RETRY_AFTER: Final = 30.0
"""Seconds an unreachable Redis is left alone before it is asked again."""

_CHUNK: Final = 1000
"""Keys per ``MGET``: about 1.5 MB of 384-dimension vectors."""


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
    ``unix://``); needs the ``redis`` package (the ``redis`` extra).

    Args:
        url: The Redis; never logged (it may hold a password).
        model_sha256: The SHA-256 of the graph that runs (`Embedder.sha256`: for the packaged
            model, its int8 graph's), naming its keys: two graphs' vectors never mix.
        dims: The model's vector size.
        retry_after: Seconds an unreachable Redis is left alone before it is asked again.
    """

    __slots__ = ("_down_until", "_lock", "dims", "prefix", "retry_after", "url")

    def __init__(
        self, url: str, model_sha256: str, dims: int, *, retry_after: float = _RETRY_AFTER
    ) -> None:
        self.url = url
        self.dims = dims
        self.prefix = f"mcpmount:vectors:{model_sha256[:16]}-{dims}:"
        self.retry_after = retry_after
        self._down_until = 0.0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<RedisVectors {self.prefix}*>"

    def _name(self, key: int) -> str:
        return f"{self.prefix}{key:016x}"

    def _client(self) -> Any:
        redis: Any = importlib.import_module("redis")  # the redis extra: only when configured
        return redis.Redis.from_url(
            self.url, socket_timeout=_TIMEOUT, socket_connect_timeout=_TIMEOUT
        )

    def get(self, keys: Sequence[int]) -> dict[int, Vectors]:
        if not keys or time.monotonic() < self._down_until:
            return {}
        width = self.dims * 4
        found: list[tuple[int, bytes]] = []
        try:
            with self._client() as client:
                for start in range(0, len(keys), _CHUNK):
                    part = keys[start : start + _CHUNK]
                    values: list[Any] = client.mget([self._name(key) for key in part])
                    found += [
                        (key, value)
                        for key, value in zip(part, values, strict=True)
                        if isinstance(value, bytes) and len(value) == width
                    ]
        except Exception as exc:  # the redis package's errors, OSError, a bad URL: a miss
            self._unreachable(exc)
            return {}
        if not found:
            return {}
        vectors = np.frombuffer(b"".join(v for _, v in found), "<f4").reshape(-1, self.dims)
        good = valid_rows(vectors).tolist()
        rows = vectors.astype(np.float32)
        return {key: rows[i] for i, (key, _) in enumerate(found) if good[i]}

    def put(self, vectors: Mapping[int, Vectors]) -> None:
        if not vectors or time.monotonic() < self._down_until:
            return
        try:
            with self._client() as client:
                pipe = client.pipeline(transaction=False)
                for key, vector in vectors.items():
                    pipe.set(self._name(key), vector.astype("<f4").tobytes(), ex=EXPIRE)
                pipe.execute()
        except Exception as exc:
            self._unreachable(exc)

    def _unreachable(self, exc: Exception) -> None:
        with self._lock:
            now = time.monotonic()
            said = now < self._down_until  # a concurrent call failed too: say it once
            self._down_until = now + self.retry_after
        if not said:
            logger.warning(
                "the shared vector store (the registry's Redis cache) cannot be used "
                "(%s: %s); vectors are computed here, and it is tried again in %g s",
                type(exc).__name__,
                exc,
                self.retry_after,
            )
