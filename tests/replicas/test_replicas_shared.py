"""Three replicas behind HAProxy sharing Redis (``--shared-state``): what one conversation's
search found is honoured by every replica, in both eras, and survives a Redis restart.

A request without a session names its conversation with ``Mcp-Conversation-Id``; its
``tool_search`` goes to whichever replica HAProxy picks, and the tools it found must then
be in that conversation's ``tools/list`` on every replica (asked directly), and in no other
conversation's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import anyio
import pytest

from redis_support import running_redis
from replicas.replica_support import Cluster, replicated
from serve.serve_support import STARTUP, names, write_config
from serve_lists.lists_support import client_of, payload
from support import fixture_server

pytestmark = pytest.mark.usefixtures("no_leaks")

MODES: Final = pytest.mark.parametrize("mode", ["auto", "legacy"])


async def listed(url: str, mode: str, conversation: str) -> list[str]:
    async with client_of(url, mode=mode, conversation=conversation) as client:
        return names(await client.list_tools())


async def found_everywhere(cluster: Cluster, mode: str, conversation: str, tool: str) -> None:
    """Wait until ``tool`` is in ``conversation``'s list on every replica (bounded)."""
    with anyio.fail_after(STARTUP):
        for replica in cluster.replicas:
            while tool not in await listed(replica.url, mode, conversation):
                await anyio.sleep(0.2)


async def search(url: str, mode: str, conversation: str, query: str) -> list[str]:
    async with client_of(url, mode=mode, conversation=conversation) as client:
        found = payload(await client.call_tool("tool_search", {"query": query}))
        return [tool["name"] for tool in found["tools"]]


@MODES
async def test_a_search_through_the_balancer_is_honoured_by_every_replica(
    tmp_path: Path, mode: str
) -> None:
    config = write_config(
        tmp_path, fixture_server("hidden", extra="defer = true"), fixture_server("shown")
    )
    async with (
        running_redis() as redis,
        replicated(config, tmp_path, shared_state=redis.url) as cluster,
    ):
        await found_everywhere(cluster, mode, "warmup", "shown__echo")
        for replica in cluster.replicas:
            assert "hidden__add" not in await listed(replica.url, mode, "conv-a")
        assert await search(cluster.url, mode, "conv-a", "select:hidden__add") == ["hidden__add"]
        await found_everywhere(cluster, mode, "conv-a", "hidden__add")
        for replica in cluster.replicas:  # another conversation found nothing
            assert "hidden__add" not in await listed(replica.url, mode, "conv-b")

        await redis.restart()  # empty: every replica still knows what conv-a found
        assert await search(cluster.url, mode, "conv-c", "select:hidden__echo") == ["hidden__echo"]
        await found_everywhere(cluster, mode, "conv-c", "hidden__echo")
        await found_everywhere(cluster, mode, "conv-a", "hidden__add")
