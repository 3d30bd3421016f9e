"""The library's side of per-client sessions: a call says whose it is with a `ClientKey`
as its ``context``; without one it goes over the shared session. Ending a client, and
closing the registry, reap each client's process (the leak checker proves none stays)."""

from __future__ import annotations

import sys

import anyio
import mcp_types
import pytest
from serve_sessions_support import NAME, SERVER

from leaks import record_group
from mcpmount import ClientKey, Registry, StdioServer
from support import alive

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


async def pid(registry: Registry, context: ClientKey | None) -> int:
    result = await registry.call(f"{NAME}__pid", {}, context=context)
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    record_group(int(block.text))  # a process the leak checker must see gone
    return int(block.text)


async def test_each_key_has_its_own_process_reaped_when_it_ends_or_the_registry_closes() -> None:
    spec = StdioServer(
        command=sys.executable, args=[str(SERVER)], protocol="legacy", sessions="per_client"
    )
    async with Registry() as registry:
        await registry.mount(NAME, spec)
        shared = await pid(registry, None)
        alice, bob = ClientKey("alice"), ClientKey("bob")
        first = await pid(registry, alice)
        assert first == await pid(registry, alice)
        second = await pid(registry, bob)
        assert len({shared, first, second}) == 3
        assert await pid(registry, None) == shared  # no key: the shared session
        await registry.end_client("alice")
        with anyio.fail_after(20):
            while alive(first):
                await anyio.sleep(0.05)
        assert alive(second)
        assert await pid(registry, alice) not in (first, second, shared)
    assert not alive(second)
