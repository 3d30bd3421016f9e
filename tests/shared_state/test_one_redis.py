"""One Redis client per process, seen from Redis, and Redis stopped and restarted under all
four stores at once.

A real ``mcpmount serve --transport http --shared-state URL`` whose config caches manifests
in the same Redis (``[registry] cache = URL``) and ranks by meaning (``semantic_model``, so
tool vectors are shared there too) uses its four stores on that Redis: the manifest cache
(a lazy server's entry), the tool vectors, the listen bus (a grown tool's list change) and
the activations (a conversation's finds). Redis's own ``CLIENT LIST`` then shows the
process's connections under one client name, ``mcpmount:<pid>:<n>``: one client, one pool.
The Redis is stopped (SIGKILL) and started again, empty, on the same socket: meanwhile
``serve`` is degraded, not down, and calls, searches and a reload work from its own state;
afterwards it is ready again, writes through what it activated meanwhile, and its bus, its
vectors and its manifest cache are in use again, still through one client.
"""

from __future__ import annotations

import json
import signal
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final, cast

import anyio
import anyio.abc
import pytest
import redis.asyncio as redis
from mcp import Client

from mcpmount.semantic import PACKAGED_MODEL
from redis_support import RedisServer, running_redis
from serve.serve_support import BEHAVIOUR, changing, names, served_http, wait_for_tool
from serve_lists.lists_support import client_of, payload
from serve_ops.ops_support import base_of, probe
from support import fixture_server, text_of, write_config

pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("no_leaks"),
    pytest.mark.timeout(240),  # serve with a semantic model, Redis down and up, on a loaded machine
]

TEST_CLIENT: Final = "one-redis-test"
"""The name of the test's own connections, told apart from the served process's."""

PREFIX: Final = "mcpmount:serve"
"""The served config's namespace in Redis (its file is serve.toml)."""

ACTIVATIONS: Final = f"{PREFIX}:activations:conv:c1"


def redis_config(tmp_path: Path, url: str, *extra: str) -> str:
    """A lazy, a deferred and a changing server, and ``extra``, cached in Redis at ``url``."""
    return write_config(
        tmp_path,
        fixture_server("lazy", extra='start = "lazy"'),
        fixture_server("hidden", extra="defer = true"),
        changing("live"),
        *extra,
        registry=f'startup_timeout = 30\ncache = "{url}"\nsemantic_model = "{PACKAGED_MODEL}"',
        name="serve.toml",
    )


@asynccontextmanager
async def own_client(server: RedisServer) -> AsyncGenerator[Any]:
    """The test's own client of ``server`` (typed Any: redis-py's annotations are partly
    unknown)."""
    client = redis.Redis(unix_socket_path=str(server.socket), client_name=TEST_CLIENT)
    try:
        yield client
    finally:
        await client.aclose()


async def served_clients(client: Any) -> list[dict[str, Any]]:
    """``CLIENT LIST``, less the test's own connections: the served process's."""
    listed: list[dict[str, Any]] = await client.client_list()
    return [c for c in listed if c.get("name") != TEST_CLIENT]


async def assert_one_client(client: Any, pid: int) -> str:
    """Every connection the served process holds is of one client (one pool); its name."""
    connections = await served_clients(client)
    shown = [(c.get("name"), c.get("cmd"), c.get("sub")) for c in connections]
    assert {c.get("name") for c in connections} == {f"mcpmount:{pid}:1"}, shown
    # One pub/sub (the bus) and at least one connection for requests.
    assert len(connections) >= 2, shown
    return f"mcpmount:{pid}:1"


async def until(what: str, check: Callable[[], Awaitable[object]]) -> None:
    """Wait until ``await check()`` is true, within `BEHAVIOUR` seconds."""
    try:
        with anyio.fail_after(BEHAVIOUR):
            while not await check():
                await anyio.sleep(0.1)
    except TimeoutError:
        raise AssertionError(f"never: {what}") from None


async def readiness(url: str) -> tuple[int, dict[str, Any]]:
    status, body = await probe(base_of(url), "/readyz")
    return status, cast("dict[str, Any]", body)


async def told_of_a_change(client: Any, mcp_client: Client, tool: str) -> None:
    """The served process publishes the list change growing ``tool`` makes on the bus."""
    pubsub = client.pubsub()
    try:
        await pubsub.subscribe(f"{PREFIX}:events")
        await mcp_client.call_tool("live__grow", {"name": tool})
        with anyio.fail_after(BEHAVIOUR):
            while True:
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if message is not None and json.loads(message["data"])["kind"] == "tools":
                    return
    finally:
        await pubsub.aclose()


def reload(process: anyio.abc.Process, tmp_path: Path, url: str, *extra: str) -> None:
    """Write the config with ``extra`` servers, and tell the served process to reload it."""
    redis_config(tmp_path, url, *extra)
    process.send_signal(signal.SIGHUP)


async def test_one_client_serves_all_four_stores_through_a_stopped_and_restarted_redis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, int8_graph: Callable[[Path], Path]
) -> None:
    """Seen from Redis, the served process holds one client, before and after; meanwhile
    it is degraded, not down, and serves from its own state."""
    # The served process's vector cache on disk: its own, empty, so vectors go to Redis
    # (beside the model's int8 graph, kept there so that the model only loads).
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    int8_graph(tmp_path / "cache" / "mcpmount" / "vectors")
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "1")
    async with running_redis() as server, own_client(server) as client:
        config = redis_config(tmp_path, server.url)
        flags = ("--shared-state", server.url)
        async with (
            served_http(config, tmp_path, *flags) as (url, process),
            client_of(url, conversation="c1") as mcp_client,
        ):
            await wait_for_tool(mcp_client, "live__grow")
            await wait_for_tool(mcp_client, "lazy__echo")

            async def search(query: str) -> list[str]:
                found = payload(await mcp_client.call_tool("tool_search", {"query": query}))
                return [tool["name"] for tool in found["tools"]]

            async def keys(pattern: str) -> list[bytes]:
                return await client.keys(pattern)

            async def activated() -> set[bytes]:
                return set(await client.zrange(ACTIVATIONS, 0, -1))

            # All four stores in use: the lazy server's entry, the tools' vectors, a
            # conversation's find, a list change on the bus.
            await until("a manifest entry", lambda: keys("mcpmount:manifest:*"))
            await until("the tool vectors", lambda: keys("mcpmount:vectors:*"))
            assert await search("select:hidden__add") == ["hidden__add"]
            assert await activated() == {b"hidden__add"}
            await told_of_a_change(client, mcp_client, "first")
            assert (await readiness(url)) == (200, {"status": "ready"})
            name = await assert_one_client(client, process.pid)

            await server.stop()

            async def degraded() -> bool:
                status, body = await readiness(url)
                assert status == 200, body
                return body["status"] == "degraded"

            await until("degraded", degraded)
            _, body = await readiness(url)
            assert str(body["degraded"]["redis"]).startswith("redis unreachable"), body
            with anyio.fail_after(BEHAVIOUR):  # nothing waits for the Redis that is gone
                assert text_of(await mcp_client.call_tool("lazy__echo", {"text": "hi"})) == "hi"
                assert await search("select:hidden__echo") == ["hidden__echo"]
                assert "hidden__add" in await search("add two integers")
                listed = names(await mcp_client.list_tools())
                assert {"hidden__add", "hidden__echo"} <= set(listed)
                await mcp_client.call_tool("live__grow", {"name": "during"})
            await wait_for_tool(mcp_client, "live__during")
            # A server added meanwhile mounts from its live lists (no cache to ask).
            late = fixture_server("late", extra='start = "lazy"')
            reload(process, tmp_path, server.url, late)
            await wait_for_tool(mcp_client, "late__echo")

            await server.start()  # empty, on the same socket
            await until("ready again", lambda: _ready(url))
            # What the conversation found meanwhile is written through, with what it had.
            await until(
                "activations written through",
                lambda: _holds(activated(), {b"hidden__add", b"hidden__echo"}),
            )
            await told_of_a_change(client, mcp_client, "after")
            await until("vectors shared again", lambda: keys("mcpmount:vectors:*"))
            reload(
                process, tmp_path, server.url, late, fixture_server("later", extra='start = "lazy"')
            )
            await until("a manifest entry again", lambda: keys("mcpmount:manifest:*"))
            assert await assert_one_client(client, process.pid) == name
    log = "".join((tmp_path / "serve.log").read_text().split())
    assert log.count("cannotbeused") == 1, log  # one warning for the outage, all stores
    assert "Traceback" not in log


async def _ready(url: str) -> bool:
    return await readiness(url) == (200, {"status": "ready"})


async def _holds(value: Any, expected: set[bytes]) -> bool:
    return expected <= await value
