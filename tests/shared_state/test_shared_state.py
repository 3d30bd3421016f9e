"""Replicas share list-change events and activations through a real Redis, and survive losing it.

Each replica is a `SharedState` on the same Redis (tests/redis_support.py); events are the
SDK's `ServerEvent`s, as the front publishes them. Redis is stopped, started and restarted
under them: a replica keeps serving from its own state, says so, and recovers.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Final

import anyio
import pytest
import redis.asyncio as redis
from mcp.server.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from mcpmount.errors import ConfigError
from mcpmount.redis import redis_connection
from mcpmount.serve import RedisActivationStore, SharedState
from redis_support import RedisServer, running_redis

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

BOUND: Final = 20.0
"""Seconds for what must happen eventually (a reconnection, a delivery) on a loaded machine."""

QUICK: Final = 5.0
"""Seconds an operation may take while Redis is away: its own bound (1 s) and slack."""


class Heard:
    """What one replica's listener was told, in order."""

    def __init__(self, state: SharedState) -> None:
        self.events: list[ServerEvent] = []
        self.unsubscribe = state.bus.subscribe(self.events.append)

    async def wait_for(self, event: ServerEvent) -> None:
        with anyio.fail_after(BOUND):
            while event not in self.events:
                await anyio.sleep(0.02)


@asynccontextmanager
async def replicas(server: RedisServer, count: int) -> AsyncGenerator[list[SharedState]]:
    async with AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(SharedState(server.url, namespace="mcpmount:test"))
            for _ in range(count)
        ]


async def wait_until(check: Callable[[], bool]) -> None:
    with anyio.fail_after(BOUND):
        while not check():
            await anyio.sleep(0.05)


async def test_an_event_reaches_every_replica_s_listeners_exactly_once() -> None:
    async with running_redis() as server, replicas(server, 2) as (a, b):
        assert a.health() is None
        assert b.health() is None
        heard_a, heard_b = Heard(a), Heard(b)
        from_others: list[ServerEvent] = []
        a.bus.subscribe_remote(from_others.append)
        await a.bus.publish(ToolsListChanged())
        await a.bus.publish(ResourceUpdated("file:///notes.md"))
        # Delivered here at once, before Redis is involved.
        assert heard_a.events == [ToolsListChanged(), ResourceUpdated("file:///notes.md")]
        await a.bus.publish(PromptsListChanged())
        await heard_b.wait_for(PromptsListChanged())
        # B answers after it saw A's last event: A's own events came back to A before it.
        await b.bus.publish(ResourcesListChanged())
        await heard_a.wait_for(ResourcesListChanged())
        told = [
            ToolsListChanged(),
            ResourceUpdated("file:///notes.md"),
            PromptsListChanged(),
            ResourcesListChanged(),
        ]
        assert heard_a.events == told
        assert heard_b.events == told
        assert from_others == [ResourcesListChanged()]  # B's alone
        heard_b.unsubscribe()
        heard_b.unsubscribe()  # idempotent
        await a.bus.publish(ToolsListChanged())
        await b.bus.publish(ResourceUpdated("file:///last"))  # after A's, on one channel
        await heard_a.wait_for(ResourceUpdated("file:///last"))
        assert heard_b.events == told


async def test_a_message_that_is_not_an_event_is_skipped() -> None:
    async with running_redis() as server, replicas(server, 1) as (a,):
        heard = Heard(a)
        client: Any = redis.Redis(unix_socket_path=str(server.socket))  # publish: partly unknown
        try:
            for junk in ["not json", "[1]", '{"kind": "tools"}', '{"replica": "x", "kind": "?"}']:
                await client.publish(a.bus.channel, junk)
            await client.publish(a.bus.channel, '{"replica": "x", "kind": "prompts"}')
        finally:
            await client.aclose()
        await heard.wait_for(PromptsListChanged())
        assert heard.events == [PromptsListChanged()]


async def test_activations_are_shared_ordered_and_deduplicated() -> None:
    async with running_redis() as server, replicas(server, 2) as (a, b):
        await a.activations.add("conv:1", ["gh__search", "fs__read"])
        assert await b.activations.load("conv:1") == ["gh__search", "fs__read"]
        await b.activations.add("conv:1", ["fs__read", "fs__write", "fs__write"])
        assert await a.activations.load("conv:1") == ["gh__search", "fs__read", "fs__write"]
        assert await a.activations.load("http:other") == []
        assert a.health() is None
        assert b.health() is None


async def test_a_key_expires_after_its_last_use_and_holds_a_bounded_list() -> None:
    async with running_redis() as server:
        client = redis.Redis(unix_socket_path=str(server.socket))
        try:
            store = RedisActivationStore(redis_connection(server.url), "t", ttl=60.0, max_names=3)
            await store.add("conv:1", ["a", "b"])
            await client.pexpire("t:conv:1", 1000)
            assert await store.load("conv:1") == ["a", "b"]
            assert 59_000 < await client.pttl("t:conv:1") <= 60_000  # refreshed by the use
            await store.add("conv:1", ["c", "d", "e"])
            assert await store.load("conv:1") == ["a", "b", "c"]
            assert await client.zcard("t:conv:1") == 3
        finally:
            await client.aclose()


async def test_a_replica_that_loses_redis_serves_from_its_own_state_then_recovers() -> None:
    async with running_redis() as server, replicas(server, 2) as (a, b):
        heard_a, heard_b = Heard(a), Heard(b)
        await a.activations.add("conv:1", ["gh__search"])
        assert await b.activations.load("conv:1") == ["gh__search"]

        await server.stop()
        with anyio.fail_after(QUICK):
            await a.bus.publish(ToolsListChanged())
        assert heard_a.events == [ToolsListChanged()]
        with anyio.fail_after(QUICK):
            await a.activations.add("conv:1", ["fs__read"])
            assert await a.activations.load("conv:1") == ["gh__search", "fs__read"]
            assert await b.activations.load("conv:1") == ["gh__search"]
        await wait_until(lambda: a.health() is not None and b.health() is not None)
        assert str(a.health()).startswith("redis unreachable")
        with anyio.fail_after(QUICK):  # a degraded replica still answers at once
            await a.bus.publish(PromptsListChanged())
            assert await a.activations.load("conv:1") == ["gh__search", "fs__read"]

        await server.start()  # empty, as a recovered Redis would be
        await wait_until(lambda: a.health() is None and b.health() is None)
        # A wrote through what it activated while Redis was away; B merges its own copy.
        assert await b.activations.load("conv:1") == ["gh__search", "fs__read"]
        # Every list may have changed unseen: each replica's listeners are told so.
        await heard_b.wait_for(ToolsListChanged())
        # A's events sent while Redis was away reach B once it is back (coalesced).
        await heard_b.wait_for(PromptsListChanged())
        await a.bus.publish(ResourceUpdated("file:///after"))
        await heard_b.wait_for(ResourceUpdated("file:///after"))


async def test_a_restarted_redis_is_survived_and_refilled() -> None:
    async with running_redis() as server, replicas(server, 2) as (a, b):
        heard_b = Heard(b)
        await a.activations.add("conv:1", ["gh__search", "fs__read"])
        await server.restart()
        with anyio.fail_after(QUICK):
            await a.bus.publish(ToolsListChanged())
            assert await a.activations.load("conv:1") == ["gh__search", "fs__read"]
        with anyio.fail_after(BOUND):
            uri = 0
            while not any(isinstance(event, ResourceUpdated) for event in heard_b.events):
                uri += 1
                await a.bus.publish(ResourceUpdated(f"file:///{uri}"))
                await anyio.sleep(0.1)
        await wait_until(lambda: a.health() is None and b.health() is None)
        async with replicas(server, 1) as (c,):
            # C never saw the key: A's load wrote its copy back into the empty Redis.
            assert await c.activations.load("conv:1") == ["gh__search", "fs__read"]


async def test_nothing_hangs_when_redis_is_down_from_the_start() -> None:
    async with running_redis() as server:
        await server.stop()
        with anyio.fail_after(QUICK):
            async with replicas(server, 1) as (a,):
                assert str(a.health()).startswith("redis")
                heard = Heard(a)
                await a.bus.publish(ToolsListChanged())
                await a.activations.add("conv:1", ["gh__search"])
                assert await a.activations.load("conv:1") == ["gh__search"]
                assert heard.events == [ToolsListChanged()]


def test_a_missing_redis_package_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)
    with pytest.raises(ConfigError, match=r'pip install "mcpmount\[redis\]"'):
        SharedState("redis://localhost:6379/0")


def test_a_bad_url_is_a_config_error_without_its_password() -> None:
    with pytest.raises(ConfigError, match="redis") as caught:
        SharedState("http://user:s3cret@localhost:6379/0")
    assert "s3cret" not in str(caught.value)
