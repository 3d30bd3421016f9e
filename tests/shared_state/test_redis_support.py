"""The tests' Redis server is real, answers redis-py, and restarts empty on the same socket."""

from __future__ import annotations

import pytest
import redis.asyncio as redis

from redis_support import running_redis

pytestmark = pytest.mark.usefixtures("no_leaks")


async def test_a_started_redis_answers_and_restarts_empty() -> None:
    async with running_redis() as server:
        client = redis.Redis(unix_socket_path=str(server.socket))
        try:
            await client.set("k", "v")
            assert await client.get("k") == b"v"
            await server.restart()
            # The first command after a restart may meet the dead connection: redis-py
            # reconnects on the retry it is configured with by default.
            assert await client.get("k") is None
        finally:
            await client.aclose()
