"""Tool vectors shared through a real Redis (the registry's ``cache``): a second index gets
them without running the model; a Redis that is down or holds garbage is only a miss."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import anyio.to_thread
import numpy as np
import pytest
import redis
from search_support import make, names

from mcpmount.config import redacted_url
from mcpmount.search import SearchIndex
from mcpmount.semantic import PACKAGED_MODEL, PACKAGED_SHA256
from mcpmount.semantic._vector_store import RedisVectors
from mcpmount.tool import MountedTool
from redis_support import running_redis

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

QUERY = "calculate a total"
"""No word of it is in ``calc__add`` ("Add two integers.")."""

TOOLS: list[MountedTool] = [
    make("calc", "add", "Add two integers."),
    *(make("fs", f"op_{i}", f"File operation number {i} on the {i}th disk.") for i in range(24)),
]
"""More tools than one model run takes (16), so the look-up and the writes span batches."""


@pytest.fixture(autouse=True)
def _no_usage_database(monkeypatch: pytest.MonkeyPatch) -> None:
    # ONNX Runtime keeps a usage database open for the life of the process (under
    # ~/.cache/Microsoft/DeveloperTools) unless this is set when it first loads a model.
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "1")


async def embedded(index: SearchIndex) -> SearchIndex:
    """``index`` with every vector found or computed, in a worker thread as a registry does."""
    while await anyio.to_thread.run_sync(index.embed_pending):
        pass
    return index


@pytest.mark.timeout(180)  # three loads of the model: seconds of CPU on a loaded machine
async def test_a_second_index_gets_every_vector_from_redis_without_the_model(
    tmp_path: Path, int8_graph: Callable[[Path], Path]
) -> None:
    """The first index computes and shares; the second runs the model for none of them and
    keeps what it found in its file, from which a third index reads them with Redis gone."""
    async with running_redis() as server:
        own = int8_graph(tmp_path / "first")  # a file of its own: the second finds none there
        first = SearchIndex(PACKAGED_MODEL, vector_cache=own, shared_vectors=server.url)
        first.add(TOOLS)
        await embedded(first)
        assert first.vectors_computed == len(TOOLS)
        assert names(first, QUERY)[0] == "calc__add"

        second = SearchIndex(
            PACKAGED_MODEL, vector_cache=int8_graph(tmp_path), shared_vectors=server.url
        )
        second.add(TOOLS)
        await embedded(second)
        assert second.vectors_pending == 0
        assert second.vectors_computed == 0
        assert names(second, QUERY, 10) == names(first, QUERY, 10)

        await server.stop()
        third = SearchIndex(PACKAGED_MODEL, vector_cache=tmp_path, shared_vectors=server.url)
        third.add(TOOLS)
        await embedded(third)
        assert third.vectors_computed == 0  # from the file the second index wrote
        assert names(third, QUERY, 10) == names(first, QUERY, 10)


@pytest.mark.timeout(180)
async def test_an_unreachable_redis_is_a_miss_said_once(
    caplog: pytest.LogCaptureFixture, tmp_path: Path, int8_graph: Callable[[Path], Path]
) -> None:
    """With Redis down, vectors are computed here, one warning is logged, search works."""
    async with running_redis() as server:
        await server.stop()
        cache = int8_graph(tmp_path)  # an empty vector file: every vector is asked of Redis
        index = SearchIndex(PACKAGED_MODEL, vector_cache=cache, shared_vectors=server.url)
        index.add(TOOLS)
        with caplog.at_level(logging.WARNING, logger="mcpmount.semantic"):
            # A never-hangs bound (each request is bounded), loose enough for a load of the
            # model: seconds of CPU, far more on a loaded machine.
            with anyio.fail_after(120):
                await embedded(index)
        assert index.vectors_computed == len(TOOLS)
        assert names(index, QUERY)[0] == "calc__add"
        warnings = [r for r in caplog.records if "shared vector store" in r.getMessage()]
        assert len(warnings) == 1
        assert redacted_url(server.url) in warnings[0].getMessage()


async def test_what_redis_holds_is_checked_before_use() -> None:
    """A value of the wrong size, or not a finite unit vector, is a miss; a good one is read
    back as it was written."""
    async with running_redis() as server:
        store = RedisVectors(server.url, PACKAGED_SHA256, 4)
        good = np.array([0.5, 0.5, 0.5, 0.5], np.float32)
        await anyio.to_thread.run_sync(store.put, {1: good})
        with redis.Redis(unix_socket_path=str(server.socket)) as client:
            client.set(f"{store.prefix}{2:016x}", b"short")
            client.set(f"{store.prefix}{3:016x}", np.full(4, 2.0, np.float32).tobytes())
            client.set(f"{store.prefix}{4:016x}", np.full(4, np.nan, np.float32).tobytes())
        found = await anyio.to_thread.run_sync(store.get, [1, 2, 3, 4, 5])
        assert list(found) == [1]
        assert np.array_equal(found[1], good)
