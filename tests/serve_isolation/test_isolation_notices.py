"""Changes of a hidden server are told only to the clients that may see it.

The hidden server changes its tool list and updates a resource; the full client is told
(``notifications/tools/list_changed`` and ``notifications/resources/updated`` in a
handshake-era session, the same on a 2026-07-28 ``subscriptions/listen`` stream), the
limited client is not, though it is told the same of its own server.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import anyio
import mcp_types
import pytest
from isolation_probes import listening
from mcp import MCPError

from serve.serve_support import BEHAVIOUR
from serve_isolation.isolation_compare_support import leaks
from serve_isolation.isolation_support import (
    FULL,
    HIDDEN,
    LIMITED,
    MODERN,
    PUB,
    Principal,
    principal,
    serving,
    uri,
)

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


async def _subscribe(who: Principal, namespace: str) -> None:
    """Subscribe ``who`` to ``namespace``'s memo in the handshake era (a refusal is fine)."""
    if who.client.protocol_version == MODERN:
        return  # its listen stream names the URI
    with contextlib.suppress(MCPError):  # refused: a URI the token may not see
        await who.subscribe(uri(namespace))


async def _change(full: Principal, namespace: str) -> None:
    """Grow ``namespace``'s tools and touch its memo; wait until the full client was told."""
    tools = full.told(mcp_types.ToolListChangedNotification)
    updates = full.told(mcp_types.ResourceUpdatedNotification)
    await full.client.call_tool(f"{namespace}__grow", {"name": f"{namespace}_grown"})
    await full.wait_told(mcp_types.ToolListChangedNotification, tools + 1)
    await full.client.call_tool(f"{namespace}__touch", {"uri": "memo://one"})
    await full.wait_told(mcp_types.ResourceUpdatedNotification, updates + 1)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_hidden_servers_changes_are_told_only_to_who_may_see_it(
    tmp_path: Path, mode: str
) -> None:
    """Hidden changes first, then the visible server's: the limited client is told of the
    latter only (one list change, one update), and nothing it received names the hidden
    server; the full client is told of both."""
    async with (
        serving(tmp_path) as url,
        principal(url, FULL, mode=mode) as full,
        principal(url, LIMITED, mode=mode) as limited,
    ):
        with anyio.fail_after(BEHAVIOUR):
            for who in (full, limited):
                await who.client.list_tools()  # a session that listed is told of changes
                await _subscribe(who, PUB)
                await _subscribe(who, HIDDEN)
        async with (
            listening(full, uri(PUB), uri(HIDDEN)),
            listening(limited, uri(PUB), uri(HIDDEN)),
        ):
            with anyio.fail_after(BEHAVIOUR):
                await _change(full, HIDDEN)
                await _change(full, PUB)
                # The last sent: once here, everything sent before is too.
                await limited.wait_told(mcp_types.ResourceUpdatedNotification)
                tools = [t.name for t in (await limited.client.list_tools()).tools]
    received = limited.tee.text()
    assert received.count("notifications/tools/list_changed") == 1
    assert received.count("notifications/resources/updated") == 1
    assert leaks(received, uri(HIDDEN)) == []  # its own refused subscription aside
    assert f"{PUB}__pub_grown" in tools
    assert full.told(mcp_types.ToolListChangedNotification) == 2
    assert full.told(mcp_types.ResourceUpdatedNotification) == 2
