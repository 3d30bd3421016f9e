"""Served sessions: each keeps what its search found, and every one is told of list changes.

Handshake-era sessions (stdio, stateful HTTP) get ``notifications/tools/list_changed``;
2026-07-28 clients get ``ToolsListChanged`` on their ``subscriptions/listen`` stream;
``--stateless`` HTTP has no session at all and still routes every call.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import pytest
from mcp import Client
from mcp.shared.subscriptions import ToolsListChanged

from serve.serve_support import (
    BEHAVIOUR,
    changing,
    connected,
    names,
    served_http,
    served_stdio,
    wait_for_tool,
    write_config,
)
from support import fixture_server, text_of

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]


class TestStdio:
    async def test_an_upstream_list_change_is_announced_downstream_legacy_era(
        self, tmp_path: Path
    ) -> None:
        """An upstream adds a tool: serve re-lists it and sends list_changed downstream."""
        config = write_config(tmp_path, changing("live"))
        changed = anyio.Event()
        notices: list[object] = []

        def on_message(message: object) -> None:
            if isinstance(message, mcp_types.ToolListChangedNotification):
                notices.append(message)
                changed.set()

        async with served_stdio(config, tmp_path, on_message=on_message) as client:
            await wait_for_tool(client, "live__grow")
            with anyio.fail_after(BEHAVIOUR):
                assert client.protocol_version == "2025-11-25"
                assert "live__extra" not in names(await client.list_tools())
                await client.call_tool("live__grow", {"name": "extra"})
                while "live__extra" not in names(await client.list_tools()):
                    await changed.wait()
                    changed = anyio.Event()
                result = await client.call_tool("live__extra", {"x": 4})
                assert text_of(result) == "extra:4"
        assert notices

    async def test_an_upstream_list_change_is_announced_on_the_listen_stream_2026_era(
        self, tmp_path: Path
    ) -> None:
        """In the 2026-07-28 era the change arrives through subscriptions/listen."""
        config = write_config(tmp_path, changing("live"))
        async with served_stdio(config, tmp_path, mode="2026-07-28") as client:
            await wait_for_tool(client, "live__grow")
            with anyio.fail_after(BEHAVIOUR):
                assert client.protocol_version == "2026-07-28"
                async with client.listen(tools_list_changed=True) as events:
                    assert "live__extra" not in names(await client.list_tools())
                    await client.call_tool("live__grow", {"name": "extra"})
                    async for event in events:
                        assert isinstance(event, ToolsListChanged)
                        if "live__extra" in names(await client.list_tools()):
                            break


class TestHttp:
    async def test_a_legacy_http_session_is_told_about_changes_and_keeps_its_finds(
        self, tmp_path: Path
    ) -> None:
        """Handshake era over HTTP: list_changed on the session; search results join its list."""
        config = write_config(
            tmp_path, fixture_server("one", extra="defer = true"), changing("live")
        )
        changed = anyio.Event()

        async def on_message(message: object) -> None:
            if isinstance(message, mcp_types.ToolListChangedNotification):
                changed.set()

        async with (
            served_http(config, tmp_path) as (url, _),
            connected(Client(url, mode="legacy", message_handler=on_message)) as client,
        ):
            await wait_for_tool(client, "live__grow")
            with anyio.fail_after(BEHAVIOUR):
                await client.call_tool("live__grow", {"name": "extra"})
                while "live__extra" not in names(await client.list_tools()):
                    await changed.wait()
                    changed = anyio.Event()
                await client.call_tool("tool_search", {"query": "select:one__add"})
                assert "one__add" in names(await client.list_tools())

    async def test_stateless_mode_serves_without_sessions(self, tmp_path: Path) -> None:
        """--stateless: every request stands alone, calls still route (load-balancer mode)."""
        config = write_config(tmp_path, fixture_server("one"))
        async with (
            served_http(config, tmp_path, "--stateless") as (url, _),
            connected(Client(url)) as c,
        ):
            await wait_for_tool(c, "one__add")
            with anyio.fail_after(BEHAVIOUR):
                added = await c.call_tool("one__add", {"a": 1, "b": 1})
            assert added.structured_content == {"result": 2}
