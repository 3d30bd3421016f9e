"""Logging through `mcpmount serve`, both directions, both eras, stdio and HTTP.

Downstream: a handshake-era client sets its level with ``logging/setLevel``; a 2026-07-28
client opts in on each request. Either way serve asks its servers for that level, and an
upstream server's messages reach the client as ``notifications/message`` whose logger is
the server's namespace, at or above the level the client wants.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
import pytest

from serve.relay_support import EVERY_WAY, Host, served
from serve.serve_support import BEHAVIOUR, asking, wait_for_tool, write_config

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

AT_LEAST_WARNING = ["warning", "error", "critical", "alert", "emergency"]


@pytest.mark.parametrize(("transport", "mode", "version"), EVERY_WAY)
async def test_upstream_messages_reach_the_client_at_its_level(
    tmp_path: Path, transport: str, mode: str, version: str
) -> None:
    """The client wants warning and up: exactly those arrive, logged as the namespace."""
    host = Host()
    options = host.callbacks()
    config = write_config(tmp_path, asking("ask"))
    if mode == "auto":
        options["log_level"] = "warning"  # the 2026-07-28 opt-in, on every request
    async with served(config, tmp_path, transport, mode, **options) as client:
        await wait_for_tool(client, "ask__log")
        assert client.protocol_version == version
        with anyio.fail_after(BEHAVIOUR):
            if mode == "legacy":
                # Not Client.set_logging_level: it warns of the 2026-07-28 deprecation.
                level = mcp_types.SetLevelRequestParams(level="warning")
                request = mcp_types.SetLevelRequest(params=level)
                await client.session.send_request(request, mcp_types.EmptyResult)
            await client.call_tool("ask__log", {"text": "hello"})
            while len(host.logs) < len(AT_LEAST_WARNING):
                await anyio.sleep(0.05)
            await anyio.sleep(0.2)  # nothing more comes
    assert [entry.level for entry in host.logs] == AT_LEAST_WARNING
    assert {entry.logger for entry in host.logs} == {"ask"}
    assert host.logs[0].data == "warning: hello"
    assert host.logs[-1].data == {"text": "hello", "level": "emergency"}


async def test_without_a_level_a_2026_client_gets_no_messages(tmp_path: Path) -> None:
    """No opt-in, no setLevel: nothing is asked of the server and nothing arrives."""
    config = write_config(tmp_path, asking("ask"))
    host = Host()
    async with served(config, tmp_path, "stdio", "auto", **host.callbacks()) as client:
        await wait_for_tool(client, "ask__log")
        with anyio.fail_after(BEHAVIOUR):
            await client.call_tool("ask__log", {"text": "hello"})
            await anyio.sleep(0.5)
    assert host.logs == []
